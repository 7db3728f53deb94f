"""Diagnostic plots: judge quality (Crowd-BT eta) and interval convergence over a campaign.

Part of :mod:`ratings.plot.bands`, which re-exports both functions; the same contract holds
(``ax=None``
draws a new figure, the Axes is returned, nothing is shown or saved).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from ratings.plot.figures import (
    BASE_COLOR,
    column,
    figure_options,
    infer_level,
    legend_above,
    make_axes,
    pct,
    pyplot_axes,
    require_columns,
    rows_size,
    set_title,
)
from ratings.result import Ratings

__all__ = ["plot_convergence", "plot_judges"]


def plot_judges(
    judges: pd.DataFrame | Ratings,
    ax: Axes | None = None,
    *,
    title: str | None = None,
    size: tuple[float, float] | None = None,
    dpi: float | None = None,
) -> Axes:
    """Draw each judge's quality eta (probability of reporting the true order) with its interval.

    Parameters
    ----------
    judges : pandas.DataFrame or Ratings
        Columns ``eta`` and, optionally, ``lower``/``upper``, ``se`` and ``n``, with ``judge``
        as a column or as the index; or a Crowd-BT fit (its ``judges`` table).
    ax : matplotlib.axes.Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        Judges are sorted by eta, best at the top; vertical reference lines mark 0.5
        (uninformative: a coin flip) and 1.0 (always the true order), named in the legend
        above the Axes.
    """
    size, dpi = figure_options(ax, size, dpi)
    if isinstance(judges, Ratings):
        if judges.judges is None:
            raise ValueError("This fit has no judge qualities (a Bradley-Terry fit); plot a "
                             "Crowd-BT fit or a judges table.")  # fmt: skip
        judges = judges.judges
    if not isinstance(judges, pd.DataFrame):
        raise TypeError(f"`judges` must be a DataFrame or Ratings; got {type(judges).__name__}.")
    frame = judges if "judge" in judges.columns else judges.rename_axis("judge").reset_index()
    require_columns(frame, ["judge", "eta"], "the judges table")
    has_ci = "lower" in frame.columns and "upper" in frame.columns
    frame = frame.sort_values(["eta", "judge"], ascending=[False, True], kind="stable")
    n = len(frame)
    if ax is None:
        ax = make_axes(pyplot_axes, rows_size(max(n, 3), frame["judge"].astype(str),
                                              title is not None, legend=True), size, dpi)
    y = np.arange(n, dtype=np.float64)[::-1]
    eta = frame["eta"].to_numpy(dtype=np.float64)
    lo = hi = eta
    if has_ci:
        lo, hi = column(frame, "lower"), column(frame, "upper")
        ax.hlines(y, lo, hi, colors=BASE_COLOR, linewidth=2.0, alpha=0.6, gid="judge-bands")
    ax.plot(eta, y, linestyle="none", marker="o", color=BASE_COLOR, zorder=3, gid="judge-points")
    h1 = ax.axvline(0.5, color="0.4", linestyle="--", linewidth=1.0,
                    label="uninformative (η = 0.5)", gid="judge-ref-0.5")  # fmt: skip
    h2 = ax.axvline(1.0, color="0.4", linestyle=":", linewidth=1.0,
                    label="always right (η = 1)", gid="judge-ref-1.0")  # fmt: skip
    labels = frame["judge"].astype(str).tolist()
    if "n" in frame.columns:
        labels = [f"{j} (n={int(c):,})" if pd.notna(c) else j
                  for j, c in zip(labels, frame["n"], strict=True)]  # fmt: skip
    ax.set_yticks(y, labels=labels)
    ax.set_ylim(-0.6, n - 0.4)
    finite = np.concatenate([lo, hi, eta])
    finite = finite[np.isfinite(finite)]
    ax.set_xlim(min(0.45, finite.min(initial=0.5) - 0.02),
                max(1.05, finite.max(initial=1.0) + 0.02))  # fmt: skip
    level = (infer_level(eta, frame["se"], lo, hi) if has_ci and "se" in frame.columns
             else None)  # fmt: skip
    what = "interval" if level is None else f"{pct(level)} CI"
    ax.set_xlabel(f"judge quality η ({what})" if has_ci else "judge quality η")
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    legend_above(ax, [h1, h2])
    set_title(ax, title)
    return ax


_AXIS_LABELS = {
    "n_verdicts": "verdicts collected",
    "n_matches": "matches collected",
    "mean_halfwidth": "mean CI half-width (Elo)",
    "max_halfwidth": "largest CI half-width (Elo)",
}


def plot_convergence(
    history: pd.DataFrame,
    ax: Axes | None = None,
    *,
    x: str = "n_verdicts",
    y: str = "mean_halfwidth",
    hue: str | None = None,
    target: float | None = None,
    title: str | None = None,
    size: tuple[float, float] | None = None,
    dpi: float | None = None,
) -> Axes:
    """Draw interval half-width against verdicts collected, one line per ``hue`` group.

    Parameters
    ----------
    history : pandas.DataFrame
        One row per checkpoint, with columns ``x``, ``y`` and, if given, ``hue``. Several rows at
        one ``x`` in a group (replicate runs) are drawn as their mean with a band from their
        minimum to their maximum.
    ax : matplotlib.axes.Axes, optional
    x, y : str
        Columns for the axes (default ``"n_verdicts"`` and ``"mean_halfwidth"``).
    hue : str, optional
        Column splitting the lines, e.g. the sampling strategy (``"active"``, ``"uniform"``);
        groups keep their order of first appearance.
    target : float, optional
        A horizontal dashed line at this half-width.
    title : str, optional
        Wrapped to the width of the Axes.
    size, dpi : optional
        The new figure's size in inches (``(W, H)`` or ``"W,H"``) and resolution; only
        without ``ax``.

    Returns
    -------
    matplotlib.axes.Axes
        One :class:`~matplotlib.lines.Line2D` per group (``gid="convergence:<group>"``), plus the
        target line (``gid="convergence-target"``); the legend sits above the Axes.
    """
    size, dpi = figure_options(ax, size, dpi)
    if not isinstance(history, pd.DataFrame):
        raise TypeError(f"`history` must be a DataFrame; got {type(history).__name__}.")
    require_columns(history, [c for c in (x, y, hue) if c is not None], "`history`")
    if target is not None and not np.isfinite(target):
        raise ValueError(f"`target` must be a finite number or None; got {target!r}.")
    if ax is None:
        ax = make_axes(pyplot_axes, (6.4, 4.5 + (0.3 if title is not None else 0.0)), size, dpi)
    data = history.dropna(subset=[x, y])
    groups = [(None, data)] if hue is None else list(data.groupby(hue, sort=False))
    for i, (key, g) in enumerate(groups):
        stats = g.groupby(x, sort=True)[y].agg(["mean", "min", "max", "count"])
        xs = stats.index.to_numpy(dtype=np.float64)
        color = f"C{i % 10}"
        if (stats["count"] > 1).any():
            ax.fill_between(xs, stats["min"].to_numpy(dtype=np.float64),
                            stats["max"].to_numpy(dtype=np.float64), color=color, alpha=0.2,
                            linewidth=0)  # fmt: skip
        name = _AXIS_LABELS.get(y, y) if key is None else str(key)
        ax.plot(xs, stats["mean"].to_numpy(dtype=np.float64), color=color,
                marker="o" if len(xs) <= 30 else None, markersize=3, label=name,
                gid=f"convergence:{name}")  # fmt: skip
    if target is not None:
        ax.axhline(float(target), color="0.3", linestyle="--", linewidth=1.0,
                   label=f"target ({float(target):g})", gid="convergence-target")  # fmt: skip
    ax.set_xlabel(_AXIS_LABELS.get(x, x))
    ax.set_ylabel(_AXIS_LABELS.get(y, y))
    ax.set_ylim(bottom=0.0)
    ax.grid(alpha=0.3)
    if hue is not None or target is not None:
        handles, _ = ax.get_legend_handles_labels()
        legend_above(ax, handles, title=hue)
    set_title(ax, title)
    return ax


