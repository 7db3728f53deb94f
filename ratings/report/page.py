"""Render a :class:`~ratings.report.content.Report` as one self-contained HTML page.

The page is made from Jinja2 templates (package data in ``ratings/report/templates``) with
autoescaping on, so every name from the data (models, judges, scopes, files) is text, never
markup. Styles, the small sorting and scope-switching script and the charts (inline SVG) are
in the file itself: it loads nothing from the network, and reads in full with scripts off (every
board shown one after the other) and in print. Jinja2 and matplotlib are imported when a page
is rendered, not with the package.
"""

from __future__ import annotations

import math
import os
from functools import cache

import numpy as np
import pandas as pd

from ratings.core.schema import COMBINED_SCOPE
from ratings.report.content import REFERENCES, Board, Report, from_results

__all__ = ["notebook_html", "render", "to_html", "write_report"]


def _number(value, digits: int = 1) -> str:
    """A number for a table cell: fixed decimals, a dash for a missing value, signs for
    infinities."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return "–"
    if math.isnan(x):
        return "–"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:,.{digits}f}".replace("-", "−")


def _count(value) -> str:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return "–"
    return "–" if math.isnan(x) else f"{int(x):,}"


def _sort_key(value) -> str:
    """A cell's ``data-sort`` value: the number itself (missing last), or the text."""
    if isinstance(value, str):
        return value
    try:
        x = float(value)
    except (TypeError, ValueError):
        return ""
    return "" if math.isnan(x) else repr(x)


def _rank_range(lo, hi) -> str:
    if pd.isna(lo) or pd.isna(hi):
        return "–"
    return f"{int(lo)}" if int(lo) == int(hi) else f"{int(lo)}–{int(hi)}"


@cache
def _environment():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ratings.report", "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
        lstrip_blocks=True,
    )  # fmt: skip
    env.filters.update(num=_number, count=_count, sortkey=_sort_key, pvalue=_p_value)
    env.globals.update(rank_range=_rank_range, isna=pd.isna, COMBINED=COMBINED_SCOPE)
    return env


def _charts(board: Board) -> dict[str, str]:
    """The board's SVG charts (bands; the heatmap when its pairs are known)."""
    from ratings.report.charts import bands_svg, heatmap_svg

    names = board.table["model"].astype(str).tolist()
    pct = f"{board.level:.0%}"
    top = ", ".join(f"{m} {e:.0f}" for m, e in zip(names[:3], board.table["elo"][:3],
                                                      strict=False))  # fmt: skip
    out = {"bands": bands_svg(board.table, anchor=board.anchor, highlight=board.tied[1:],
                              label=f"{board.title}: Elo of {len(names)} models with {pct} "
                                    f"intervals, best first ({top}, ...); the numbers are in "
                                    "the table above.")}  # fmt: skip
    if board.pairs is not None and len(board.pairs):
        out["heatmap"] = heatmap_svg(
            names, board.pairs, level=board.level,
            label=f"{board.title}: predicted probability that each row model beats each "
                  f"column model, {len(names)} x {len(names)}; significant pairs marked. "
                  "The pairwise table holds every value.")  # fmt: skip
    return out


def _strongest_pairs(pairs: pd.DataFrame | None, table: pd.DataFrame,
                     n: int = 12) -> pd.DataFrame | None:
    """The ``n`` most clearly separated pairs, spread over the models, in Elo order.

    Pairs are taken by their standardized difference ``|elo_diff| / se`` (the p-values of the
    clearest pairs all round to 0), each model in at most one pair while others remain (then
    two, ...), so that a board where one model beats all others does not list only its pairs;
    shown best model first.
    """
    if pairs is None or not len(pairs):
        return None
    if "se" in pairs and "elo_diff" in pairs:
        with np.errstate(divide="ignore", invalid="ignore"):
            strength = (pairs["elo_diff"].abs() / pairs["se"]).fillna(0.0)
    else:
        key = "p_adjusted" if "p_adjusted" in pairs else "p_win"
        strength = -pairs[key].astype(float)
    order = strength.sort_values(ascending=False, kind="stable").index
    a, b = pairs["model_a"].astype(str), pairs["model_b"].astype(str)
    chosen: list[object] = []
    uses: dict[str, int] = {}
    cap = 1
    while len(chosen) < min(n, len(pairs)):
        for k in order:
            if len(chosen) == n:
                break
            if k in chosen or uses.get(a[k], 0) >= cap or uses.get(b[k], 0) >= cap:
                continue
            chosen.append(k)
            uses[a[k]], uses[b[k]] = uses.get(a[k], 0) + 1, uses.get(b[k], 0) + 1
        cap += 1
    elo = pd.Series(table["elo"].to_numpy(dtype=float), index=table["model"].astype(str))
    shown = pairs.loc[chosen]
    rank = pd.DataFrame({"a": -shown["model_a"].astype(str).map(elo),
                         "b": -shown["model_b"].astype(str).map(elo)}, index=shown.index)
    return shown.loc[rank.sort_values(["a", "b"], kind="stable").index]


def _p_value(value) -> str:
    """A p-value for a table cell: four decimals, ``< 1e-4`` below that (never 0.0000)."""
    text = _number(value, 4)
    return "< 1e-4" if text != "–" and float(value) < 1e-4 else text


def render(report: Report, *, charts: bool = True) -> str:
    """The page's HTML.

    Parameters
    ----------
    report : Report
    charts : bool, default=True
        Draw the charts (bands and heatmaps).

    Returns
    -------
    str
    """
    boards = [{"board": b, "charts": _charts(b) if charts else {},
               "pairs_shown": _strongest_pairs(b.pairs, b.table)}
              for b in report.boards]  # fmt: skip
    drift_chart = None
    if charts and report.drift is not None and len(report.drift):
        from ratings.report.charts import drift_svg

        drift_chart = drift_svg(report.drift, label="Each model's Elo on the earlier board "
                                "(grey) and on this one (colour) with their intervals; the "
                                "numbers are in the drift table.")  # fmt: skip
    return _environment().get_template("report.html.j2").render(
        report=report, boards=boards, references=REFERENCES, drift_chart=drift_chart)


def write_report(report: Report, path: str | os.PathLike[str], *,
                 inputs=(), charts: bool = True) -> None:  # fmt: skip
    """Render ``report`` and write it to ``path`` atomically (:func:`ratings.io.write_atomic`).

    Parameters
    ----------
    report : Report
    path : path
        The HTML file; never one of ``inputs``.
    inputs : iterable of path
        Files the report was made from.
    charts : bool, default=True
    """
    from ratings.io import write_atomic

    write_atomic(render(report, charts=charts), path, inputs=inputs)


def to_html(result, path: str | os.PathLike[str] | None = None, *,
            title: str | None = None, charts: bool = True) -> str:  # fmt: skip
    """The page of one fit or headline: the table with rank intervals, interval bands and the
    pairwise heatmap as inline SVG, the judges and the method (also
    :meth:`ratings.Ratings.to_html`).

    Parameters
    ----------
    result : Ratings
    path : path, optional
        Also write the page there (atomically).
    title : str, optional
    charts : bool, default=True

    Returns
    -------
    str
        The HTML.
    """
    report = from_results(result, title=title)
    html = render(report, charts=charts)
    if path is not None:
        from ratings.io import write_atomic

        write_atomic(html, path)
    return html


def notebook_html(result, max_rows: int = 30) -> str:
    """A compact table of a fit for notebooks (``Ratings._repr_html_``): rank, rank interval,
    model, Elo, interval, verdicts; the best ``max_rows`` models."""
    table = result.to_frame()
    board = Board(name=result.scope or "", table=table, level=result.level,
                  anchor=result.anchor, anchor_rating=float(result.offset),
                  tied=result.tied_with_leader())  # fmt: skip
    return _environment().get_template("notebook.html.j2").render(
        board=board, rows=table.head(max_rows), more=max(0, len(table) - max_rows),
        result=result)  # fmt: skip
