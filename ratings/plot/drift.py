"""The drift chart: each model's old and new Elo with their interval bands, one row per model
(:func:`plot_drift`, drawn from :attr:`ratings.stability.drift.Drift.table`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from ratings.plot.figures import (
    BASE_COLOR,
    HIGHLIGHT_COLOR,
    AxesFactory,
    fit_tick_labels,
    label_rows,
    legend_above,
    legend_proxy,
    make_axes,
    pyplot_axes,
    rows_size,
    set_title,
)

__all__ = ["OLD_COLOR", "plot_drift"]

OLD_COLOR = "0.55"  # the old board in grey, the new one in the base colour


def plot_drift(table: pd.DataFrame, ax: Axes | None = None, *, title: str | None = None,
               notes: list[str] | None = None, highlight_z: float = 2.0,
               size=None, dpi=None, new_axes: AxesFactory = pyplot_axes) -> Axes:  # fmt: skip
    """Draw old against new: per model (new board's order, then models gone) the old Elo and
    interval in grey just above the new ones in colour; models with ``|z| > highlight_z`` or
    new on the board in the highlight colour.

    Parameters
    ----------
    table : DataFrame
        :attr:`ratings.stability.drift.Drift.table`.
    ax : Axes, optional
        Axes to draw into (default a new figure sized to the rows).
    title : str, optional
    notes : list of str, optional
        Not drawn; accepted so that ``Drift.plot`` can pass them.
    highlight_z : float, default=2.0
    size, dpi
        As for :func:`ratings.plot.bands.plot_ratings`.
    new_axes : callable, default pyplot's
        Makes the new figure's Axes (``ratings.plot.figures.bare_axes``: outside pyplot).

    Returns
    -------
    matplotlib.axes.Axes

    Notes
    -----
    Old bands ``gid="drift-old"``, new bands ``gid="drift-new"``, arrows of the moves
    ``gid="drift-moves"``.
    """
    n = len(table)
    labels = [_label(r) for r in table.itertuples()]
    if ax is None:
        ax = make_axes(new_axes, rows_size(n + 1, labels, title is not None, True), size, dpi)
    stride = fit_tick_labels(ax, n + 1.0)
    y = np.arange(n, dtype=np.float64)[::-1]
    off = 0.18
    old, new = table["elo_old"].to_numpy(float), table["elo_new"].to_numpy(float)
    z = table["z"].to_numpy(float)
    marked = (table["status"] == "new").to_numpy() | (np.abs(np.nan_to_num(z)) > highlight_z)
    color = np.where(marked, HIGHLIGHT_COLOR, BASE_COLOR)
    has_old, has_new = np.isfinite(old), np.isfinite(new)
    lo_o, hi_o = table["lower_old"].to_numpy(float), table["upper_old"].to_numpy(float)
    lo_n, hi_n = table["lower_new"].to_numpy(float), table["upper_new"].to_numpy(float)
    bo = has_old & np.isfinite(lo_o) & np.isfinite(hi_o)
    bn = has_new & np.isfinite(lo_n) & np.isfinite(hi_n)
    ax.hlines(y[bo] + off, lo_o[bo], hi_o[bo], colors=OLD_COLOR, linewidth=2.0, alpha=0.7,
              gid="drift-old")
    ax.hlines(y[bn] - off, lo_n[bn], hi_n[bn], colors=list(color[bn]), linewidth=2.0,
              alpha=0.7, gid="drift-new")
    ax.scatter(old[has_old], y[has_old] + off, c=OLD_COLOR, s=12, zorder=3)
    ax.scatter(new[has_new], y[has_new] - off, c=list(color[has_new]), s=14, zorder=3)
    both = has_old & has_new
    for yy, a, b in zip(y[both], old[both], new[both], strict=True):
        if abs(b - a) > 0:
            ax.annotate("", xy=(b, yy - off), xytext=(a, yy + off), gid="drift-moves",
                        arrowprops={"arrowstyle": "->", "color": "0.3", "lw": 0.7})
    label_rows(ax, y, labels, [lb for lb, m in zip(labels, marked, strict=True) if m], stride,
               None)
    ax.set_xlabel("Elo (grey: old board; colour: new board; bands: published intervals)")
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    handles = [legend_proxy(OLD_COLOR, "o", "old board", markersize=4),
               legend_proxy(BASE_COLOR, "o", "new board", markersize=4),
               legend_proxy(HIGHLIGHT_COLOR, "o", f"new model or |z| > {highlight_z:g}",
                            markersize=4)]
    legend_above(ax, handles)
    set_title(ax, title)
    return ax


def _label(row) -> str:
    tag = {"new": " (new)", "gone": " (gone)"}.get(row.status, "")
    if row.status == "kept" and pd.notna(row.rank_change) and row.rank_change != 0:
        tag = f" ({int(row.rank_change):+d})"
    return f"{row.model}{tag}"
