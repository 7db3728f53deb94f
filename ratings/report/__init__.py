"""One self-contained HTML page of a leaderboard: boards with intervals and rank intervals,
charts as inline SVG, judges, the audit and the method (``ratings report``,
:meth:`ratings.Ratings.to_html`).

:mod:`~ratings.report.content` gathers what the page shows, from fits or from saved tables;
:mod:`~ratings.report.charts` draws the charts; :mod:`~ratings.report.page` renders the
templates (Jinja2, imported only when a page is rendered).
"""

from ratings.report.content import Board, Report, from_results, from_tables
from ratings.report.page import notebook_html, ratings_html, render, write_report

__all__ = ["Board", "Report", "from_results", "from_tables", "notebook_html", "ratings_html",
           "render", "write_report"]
