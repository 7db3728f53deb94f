"""One self-contained HTML page of a leaderboard: boards with intervals and rank intervals,
charts as inline SVG, judges, the audit and the method (``ratings report``,
:func:`to_html`, which :meth:`ratings.Ratings.to_html` runs).

:mod:`~ratings.report.content` gathers what the page shows, from fits or from saved tables;
:mod:`~ratings.report.charts` draws the charts; :mod:`~ratings.report.page` renders the
templates (Jinja2, imported only when a page is rendered).
"""

from ratings.report.content import Board, Report, from_results, from_tables
from ratings.report.page import notebook_html, render, to_html, write_report
from ratings.result import register_html

__all__ = ["Board", "Report", "from_results", "from_tables", "notebook_html", "render", "to_html",
           "write_report"]

register_html(page=to_html, notebook=notebook_html)  # Ratings.to_html and notebooks use them
