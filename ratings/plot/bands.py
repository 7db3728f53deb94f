"""Matplotlib plots: rating bands, scope overlays, win matrices, judge quality and convergence
(the judge-audit plot, :func:`plot_audit`, lives in :mod:`ratings.plot.audit`).

This module is not imported by :mod:`ratings`; ``import ratings.plot.bands`` loads matplotlib only
when plots are wanted. Every ``plot_*`` function follows seaborn's contract: it takes
``ax=None`` (a new figure, sized for its content, when ``None``), draws into that Axes and
returns it. Nothing here calls ``plt.show()``, changes rcParams or selects a backend.

>>> import ratings
>>> from ratings.plot.bands import plot_ratings, save_figure
>>> r = ratings.fit("verdicts.csv", anchor="GPT-5.5 (medium)=1000")   # doctest: +SKIP
>>> ax = plot_ratings(r, highlight=["Claude Opus 5"], top=20)          # doctest: +SKIP
>>> save_figure(ax, "bands.png")                                       # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import FigureBase
from matplotlib.font_manager import FontProperties
from scipy.special import expit

from ratings.core.deprecation import deprecated_names
from ratings.core.errors import InvalidVerdictsError
from ratings.io.readers import read_file
from ratings.io.writers import same_file, write_atomic
from ratings.plot.audit import draw_audit, plot_audit
from ratings.plot.diagnostics import plot_convergence, plot_judges
from ratings.plot.figures import (
    ANCHOR_COLOR,
    BASE_COLOR,
    COMBINED_COLOR,
    HIGHLIGHT_COLOR,
    MARGIN,
    MIN_LABEL_SIZE,
    ROW_HEIGHT,
    AxesFactory,
    RatingsTable,
    as_names,
    bare_axes,
    check_dpi,
    check_names,
    check_top,
    column,
    elo_label,
    figure_options,
    fit_tick_labels,
    label_rows,
    label_width,
    legend_above,
    legend_proxy,
    make_axes,
    parse_size,
    pyplot_axes,
    ratings_table,
    require_columns,
    root_figure,
    rows_size,
    set_title,
    shorten,
    thin,
)
from ratings.plot.style import draw_style
from ratings.result import Ratings

__all__ = [
    "SAVE_FORMATS",
    "plot_audit",
    "plot_convergence",
    "plot_judges",
    "plot_ratings",
    "plot_scopes",
    "plot_style",
    "plot_table",
    "plot_win_matrix",
    "read_ratings_table",
    "save_figure",
]

#: File extensions :func:`save_figure` writes.
SAVE_FORMATS = (".png", ".svg", ".pdf")


# ----------------------------------------------------------------------------------------------
# Ratings
# ----------------------------------------------------------------------------------------------


def plot_ratings(
    result_or_frame: Ratings | pd.DataFrame,
    ax: Axes | None = None,
    *,
    level: float | None = None,
    highlight: str | Iterable[str] | None = None,
    top: int | None = None,
    anchor: str | None = None,
    title: str | None = None,
    ranks: bool = True,
    size: tuple[float, float] | None = None,
    dpi: float | None = None,
) -> Axes:
    """Draw every model's Elo as a point with its interval band, best at the top.

    Parameters
    ----------
    result_or_frame : Ratings or pandas.DataFrame
        A fit, or a table shaped like :meth:`Ratings.to_frame` (``model, elo, lower, upper``
        and, for the anchor and the level, ``se``), e.g. a CSV written by ``ratings fit --out``.
    ax : matplotlib.axes.Axes, optional
        Axes to draw into. By default a new figure whose height grows with the number of models
        (0.22 in per model), so that tick labels never overlap.
    level : float, optional
        Confidence level of the bands; default the fit's level (for a table, the level implied by
        ``(upper - elo) / se``). A table's normal intervals are recomputed at another level; its
        bootstrap intervals cannot be.
    highlight : str or iterable of str, optional
        Models drawn (and tick-labelled) in a second colour.
    top : int, optional
        Draw only the ``top`` best models; a note summarises the rest.
    anchor : str, optional
        Model to mark as the anchor (diamond, "(anchor)" in the legend). Default: the fit's
        anchor; for a table, the single row with ``se == 0`` and ``lower == upper``.
    title : str, optional
        Wrapped to the width of the Axes (never clipped).
    ranks : bool, default=True
        Label each row on the right with its simultaneous rank interval (``rank_lower`` to
        ``rank_upper`` of :meth:`Ratings.to_frame`; "-" for a model without one), when the fit
        or table has them at the level drawn.
    size : (float, float) or str, optional
        The new figure's width and height in inches (or ``"W,H"``) instead of the size fitted to
        the rows; labels then shrink, and only every k-th row is labelled where they would
        overlap. Only without ``ax``.
    dpi : float, optional
        The new figure's resolution (dots per inch), used by :func:`save_figure`; default
        matplotlib's (100). Only without ``ax``.

    Returns
    -------
    matplotlib.axes.Axes

    Notes
    -----
    The bands are one :class:`~matplotlib.collections.LineCollection` (``gid="ratings-bands"``),
    one segment per model from top to bottom; the points are a scatter
    (``gid="ratings-points"``) without the anchor, which is a separate diamond marker
    (``gid="ratings-anchor"``); the rank intervals are the tick labels of a secondary y axis on
    the right (``gid="ratings-ranks"``). The legend (anchor, highlighted) sits above the Axes,
    outside the bands (``gid="legend-above"``), and the title above the legend.
    """
    return _plot_ratings(result_or_frame, ax, level=level, highlight=highlight, top=top,
                         anchor=anchor, title=title, new_axes=pyplot_axes,
                         ranks=ranks, size=size, dpi=dpi)  # fmt: skip


def _open_edges(elo, lower, upper) -> tuple[float, float] | None:
    """The frame's x limits when some interval is open (infinite), else ``None``."""
    if np.isfinite(lower).all() and np.isfinite(upper).all():
        return None
    finite = np.concatenate([elo, lower[np.isfinite(lower)], upper[np.isfinite(upper)]])
    pad = 0.15 * max(float(np.ptp(finite)), 1.0)
    return float(finite.min() - pad), float(finite.max() + pad)


def _plot_ratings(obj, ax, *, level, highlight, top, anchor, title,
                  new_axes: AxesFactory, ranks: bool = True, size=None, dpi=None,
                  order: list[str] | None = None, fit_labels: bool = True) -> Axes:  # fmt: skip
    size, dpi = figure_options(ax, size, dpi)
    table = ratings_table(obj, level=level, anchor=anchor)
    frame = table.frame
    if "scope" in frame.columns and frame["scope"].nunique() > 1:
        raise ValueError(f"The table holds {frame['scope'].nunique()} scopes; draw it with "
                         "`plot_scopes`.")  # fmt: skip
    if order is not None:  # another plot's model order (side-by-side panels)
        frame = frame.set_index("model").loc[order].reset_index()
    marked = check_names(as_names(highlight), frame["model"], "highlight")
    top = check_top(top)
    shown = frame if top is None or top >= len(frame) else frame.iloc[:top]
    rest = frame.iloc[len(shown):]
    n = len(shown)
    n_rows = n + (1 if len(rest) else 0)
    legend = bool(marked) or (table.anchor is not None and table.anchor in set(shown["model"]))
    if ax is None:
        ax = make_axes(new_axes, rows_size(n_rows, shown["model"], title is not None, legend),
                       size, dpi)  # fmt: skip
        stride = 1 if size is None else fit_tick_labels(ax, n_rows + 1.0)
    else:
        stride = fit_tick_labels(ax, n_rows + 1.0) if fit_labels else 1

    y = np.arange(n, dtype=np.float64)[::-1]  # best model at the top
    models = shown["model"].to_numpy()
    is_marked = np.isin(models, marked)
    colors = np.where(is_marked, HIGHLIGHT_COLOR, BASE_COLOR)
    elo = column(shown, "elo")
    lower, upper = column(shown, "lower"), column(shown, "upper")
    edges = _open_edges(elo, lower, upper)
    if edges is not None:  # open intervals (Crowd-BT, spread not identified): to the frame's edge
        lower = np.where(np.isfinite(lower), lower, edges[0])
        upper = np.where(np.isfinite(upper), upper, edges[1])
    # points per row: thinner bands and smaller markers where the rows are tight
    pitch = 72.0 * root_figure(ax).get_figheight() * ax.get_position().height / (n_rows + 1.0)
    ax.hlines(y, lower, upper, colors=list(colors), linewidth=min(2.0, 0.45 * pitch),
              alpha=0.6, gid="ratings-bands")  # fmt: skip
    is_anchor = models == table.anchor
    ax.scatter(elo[~is_anchor], y[~is_anchor], c=list(colors[~is_anchor]),
               s=min(16.0, (0.7 * pitch) ** 2), zorder=3, gid="ratings-points")  # fmt: skip
    handles = []
    if is_anchor.any():
        (h,) = ax.plot(elo[is_anchor], y[is_anchor], linestyle="none", marker="D",
                       markersize=min(7.0, 1.1 * pitch),
                       color=ANCHOR_COLOR, zorder=4, gid="ratings-anchor",
                       label=f"{table.anchor} (anchor)")  # fmt: skip
        handles.append(h)
    if is_marked.any():
        handles.append(legend_proxy(HIGHLIGHT_COLOR, "o", "highlighted", markersize=4))

    label_rows(ax, y, models, marked, stride,
               _rest_note(rest, table.anchor, marked) if len(rest) else None)  # fmt: skip
    if ranks and {"rank_lower", "rank_upper"} <= set(shown.columns):
        keep = [bool(t.get_text()) for t in ax.get_yticklabels()]
        _rank_labels(ax, y, shown, keep, table.level)
    ax.set_xlabel(elo_label(table.level) + ("" if edges is None else
                  "; open intervals run off the frame"))  # fmt: skip
    if edges is not None:
        ax.set_xlim(*edges)
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    legend_above(ax, handles)
    set_title(ax, title)
    return ax


def _rank_labels(ax: Axes, y, shown: pd.DataFrame, keep: list[bool],
                 level: float | None) -> None:  # fmt: skip
    """Each row's rank interval as a tick label of a secondary y axis on the right."""
    lo = pd.to_numeric(shown["rank_lower"], errors="coerce").to_numpy(dtype=float)
    hi = pd.to_numeric(shown["rank_upper"], errors="coerce").to_numpy(dtype=float)
    if np.isnan(lo).all():
        return
    text = ["-" if np.isnan(a) or np.isnan(b) else f"{a:.0f}" if a == b else f"{a:.0f}\u2013{b:.0f}"
            for a, b in zip(lo, hi, strict=True)]  # fmt: skip
    side = ax.secondary_yaxis("right")
    side.set_gid("ratings-ranks")
    side.set_yticks(y, labels=[t if k else "" for t, k in zip(text, keep, strict=True)])
    size = min(ax.yaxis.get_major_ticks()[0].label1.get_fontsize(),
               FontProperties(size="small").get_size_in_points())  # fmt: skip
    side.tick_params(length=0, labelsize=size)
    what = "rank" if level is None else f"rank ({100 * level:.4g}% simultaneous)"
    side.set_ylabel(what, fontsize="small")


def _rest_note(rest: pd.DataFrame, anchor: str | None, marked: list[str]) -> str:
    k = len(rest)
    note = (f"+ {k} more model{'s' if k > 1 else ''} not shown "
            f"(Elo {rest['elo'].min():.0f} to {rest['elo'].max():.0f})")  # fmt: skip
    if anchor is not None and anchor in set(rest["model"]):
        note += f"; anchor {anchor} at {rest.set_index('model').loc[anchor, 'elo']:.0f}"
    hidden = [m for m in marked if m in set(rest["model"])]
    if hidden:
        note += f"; highlighted: {', '.join(hidden[:5])}{', ...' if len(hidden) > 5 else ''}"
    return note


# ----------------------------------------------------------------------------------------------
# Style control
# ----------------------------------------------------------------------------------------------


def plot_style(
    controlled: Ratings | pd.DataFrame,
    raw: Ratings | pd.DataFrame,
    axes: tuple[Axes, Axes] | None = None,
    *,
    level: float | None = None,
    highlight: str | Iterable[str] | None = None,
    top: int | None = None,
    title: str | None = None,
    size: tuple[float, float] | None = None,
    dpi: float | None = None,
) -> np.ndarray:
    """Raw and style-controlled Elo bands side by side, the models in the same rows.

    >>> controlled = ratings.fit("verdicts.csv", style=["tokens", "headers"])  # doctest: +SKIP
    >>> raw = ratings.fit("verdicts.csv")                                       # doctest: +SKIP
    >>> save_figure(plot_style(controlled, raw)[0], "style.png")                 # doctest: +SKIP

    Parameters
    ----------
    controlled : Ratings or pandas.DataFrame
        The fit with ``style=[...]`` (or its ``to_frame()`` table, e.g. ``ratings fit --style
        ... --out``). It orders the rows, best first.
    raw : Ratings or pandas.DataFrame
        The plain fit of the same verdicts (``ratings.fit`` without ``style``), on the same
        anchor. It must rate the same models.
    axes : pair of matplotlib Axes, optional
        Left (raw) and right (controlled) Axes to draw into. By default a new figure with two
        panels sharing both axes.
    level : float, optional
        Confidence level of the bands (see :func:`ratings.plot.bands.plot_ratings`).
    highlight : str or iterable of str, optional
        Models drawn in a second colour in both panels.
    top : int, optional
        Draw only the ``top`` best models (by the controlled Elo); a note counts the rest.
    title : str, optional
        Above both panels, wrapped to the figure's width.
    size, dpi : optional
        The new figure's size in inches (``(W, H)`` or ``"W,H"``) and resolution.

    Returns
    -------
    numpy.ndarray of two matplotlib.axes.Axes
        ``[raw, controlled]``. The right panel labels each row on the right with its rank
        change (raw rank minus controlled rank: ``+3`` moved up three places under control;
        ``gid="style-rank-change"``). The legend (anchor, highlighted) is below the panels.
    """
    return draw_style(controlled, raw, axes, level=level, highlight=highlight, top=top,
                      title=title, size=size, dpi=dpi, new_figure=pyplot_axes,
                      draw_bands=_plot_ratings)  # fmt: skip


# ----------------------------------------------------------------------------------------------
# Scopes
# ----------------------------------------------------------------------------------------------


def plot_scopes(
    results: Mapping[str, Ratings | pd.DataFrame] | pd.DataFrame,
    ax: Axes | None = None,
    *,
    combined: Ratings | pd.DataFrame | None = None,
    level: float | None = None,
    highlight: str | Iterable[str] | None = None,
    top: int | None = None,
    title: str | None = None,
    size: tuple[float, float] | None = None,
    dpi: float | None = None,
) -> Axes:
    """Overlay the ratings of several scopes: dodged points and intervals, one colour per scope.

    Parameters
    ----------
    results : mapping of scope to Ratings or DataFrame, or DataFrame
        One fit (or ``to_frame()`` table) per scope, or one table with a ``scope`` column.
        Scopes are drawn in the given order (for a table, order of first appearance). The
        positions are only comparable when every scope is on the same scale (the same anchor).
    ax : matplotlib.axes.Axes, optional
        By default a new figure whose height grows with the number of models.
    combined : Ratings or DataFrame, optional
        A headline fit drawn in black above the scopes; it also orders the models.
    level : float, optional
        Confidence level of the intervals (see :func:`plot_ratings`).
    highlight : str or iterable of str, optional
        Models whose tick labels are drawn bold in a second colour.
    top : int, optional
        Draw only the first ``top`` models of the ordering; a note counts the rest.
    title : str, optional
        Wrapped to the width of the Axes.
    size, dpi : optional
        The new figure's size in inches and resolution (see :func:`plot_ratings`).

    Returns
    -------
    matplotlib.axes.Axes

    Notes
    -----
    Models are ordered by the combined Elo when ``combined`` is given (models it lacks follow),
    otherwise by their mean Elo over the scopes that rated them. The legend, above the Axes,
    has one entry per scope, plus ``"combined"``.
    """
    return _plot_scopes(results, ax, combined=combined, level=level, highlight=highlight,
                        top=top, title=title, new_axes=pyplot_axes, size=size,
                        dpi=dpi)  # fmt: skip


def _split_scopes(results, level) -> dict[str, RatingsTable]:
    if isinstance(results, pd.DataFrame):
        require_columns(results, ["scope"], "the table (plot_scopes needs a `scope` column)")
        parts = {str(s): results[results["scope"] == s] for s in pd.unique(results["scope"])}
    elif isinstance(results, Mapping):
        parts = {str(k): v for k, v in results.items()}
    else:
        raise TypeError(
            "`results` must be a mapping of scope to Ratings/DataFrame, or a DataFrame with a "
            f"`scope` column; got {type(results).__name__}."
        )
    if not parts:
        raise ValueError("`results` holds no scopes.")
    return {k: ratings_table(v, level=level) for k, v in parts.items()}


def _plot_scopes(results, ax, *, combined, level, highlight, top, title,
                 new_axes: AxesFactory, size=None, dpi=None) -> Axes:  # fmt: skip
    size, dpi = figure_options(ax, size, dpi)
    tables = _split_scopes(results, level)
    series: list[tuple[str, RatingsTable, object, str]] = []
    if combined is not None:
        series.append(("combined", ratings_table(combined, level=level), COMBINED_COLOR, "s"))
    palette = (mpl.colormaps["tab20"].colors if len(tables) > 10
               else [f"C{i}" for i in range(10)])  # fmt: skip
    for i, (scope, t) in enumerate(tables.items()):
        series.append((scope, t, palette[i % len(palette)], "o"))

    elo = pd.concat([t.frame.set_index("model")["elo"] for _, t, _, _ in series], axis=1,
                    ignore_index=True)  # fmt: skip
    per_scope = elo.iloc[:, 1:] if combined is not None else elo
    order = pd.DataFrame({
        "key": elo.iloc[:, 0] if combined is not None else per_scope.mean(axis=1),
        "mean": per_scope.mean(axis=1),
        "model": elo.index,
    }).reset_index(drop=True)  # fmt: skip
    order = order.sort_values(["key", "mean", "model"], ascending=[False, False, True],
                              na_position="last", kind="stable")  # fmt: skip
    top = check_top(top)
    models = order["model"].tolist()
    shown, rest = (models, []) if top is None else (models[:top], models[top:])
    marked = check_names(as_names(highlight), models, "highlight")

    n, k = len(shown), len(series)
    n_rows = n + (1 if rest else 0)
    if ax is None:
        per_row = max(ROW_HEIGHT, 0.11 * k)
        width, _ = rows_size(n_rows, shown, title is not None)
        ax = make_axes(new_axes, (width, per_row * n_rows + MARGIN + 0.3
                                  + (0.3 if title is not None else 0.0)), size, dpi)
        stride = 1 if size is None else fit_tick_labels(ax, n_rows + 1.0)
    else:
        stride = fit_tick_labels(ax, n_rows + 1.0)
    ypos = pd.Series(np.arange(n, dtype=np.float64)[::-1], index=shown)
    offsets = (np.arange(k)[::-1] - (k - 1) / 2.0) * (0.7 / k)
    # points per series row: thinner bands and smaller markers where rows are tight
    pitch = 72.0 * root_figure(ax).get_figheight() * ax.get_position().height / (n_rows + 1.0)
    pitch *= 0.7 / k
    lw, ms = min(1.6, 0.7 * pitch), min(4.0, 1.1 * pitch)
    handles = []
    for (name, t, color, marker), off in zip(series, offsets, strict=True):
        f = t.frame[t.frame["model"].isin(shown)]
        y = ypos.reindex(f["model"]).to_numpy() + off
        ax.hlines(y, column(f, "lower"), column(f, "upper"), colors=color, linewidth=lw,
                  alpha=0.7, gid=f"scope-bands:{name}")  # fmt: skip
        ax.plot(column(f, "elo"), y, linestyle="none", marker=marker,
                markersize=1.25 * ms if marker == "s" else ms, color=color, zorder=3,
                gid=f"scope-points:{name}")  # fmt: skip
        handles.append(legend_proxy(color, marker, name, markersize=5))

    note = f"+ {len(rest)} more model{'s' if len(rest) > 1 else ''} not shown" if rest else None
    label_rows(ax, ypos.to_numpy(), shown, marked, stride, note)
    levels = {t.level for _, t, _, _ in series}
    ax.set_xlabel(elo_label(levels.pop() if len(levels) == 1 else None))
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    legend_above(ax, handles)
    set_title(ax, title)
    return ax


# ----------------------------------------------------------------------------------------------
# Win matrix
# ----------------------------------------------------------------------------------------------


def plot_win_matrix(
    result: Ratings | pd.DataFrame,
    ax: Axes | None = None,
    *,
    models: Iterable[str] | None = None,
    annotate: bool | None = None,
    title: str | None = None,
    size: tuple[float, float] | None = None,
    dpi: float | None = None,
) -> Axes:
    """Heatmap of predicted win probabilities, P(row beats column) = sigma(s_row - s_col).

    Parameters
    ----------
    result : Ratings or pandas.DataFrame
        A fit, or a ``to_frame()``-shaped table (its Elo differences are divided by
        400 / ln 10).
    ax : matplotlib.axes.Axes, optional
        By default a new square-ish figure sized for the number of models.
    models : iterable of str, optional
        Models to include (default all); rows and columns are sorted by Elo, best first.
    annotate : bool, optional
        Write the probability in each cell; default when there are at most 15 models and
        the cells are large enough for the text.
    title : str, optional
        Wrapped to the width of the Axes.
    size, dpi : optional
        The new figure's size in inches and resolution (see :func:`plot_ratings`).

    Returns
    -------
    matplotlib.axes.Axes
        The image is ``ax.images[0]`` (values in ``get_array()``); a colourbar is added.
    """
    size, dpi = figure_options(ax, size, dpi)
    table = ratings_table(result)
    frame = table.frame
    if models is not None:
        keep = check_names(as_names(models), frame["model"], "models")
        frame = frame[frame["model"].isin(keep)]
    names = frame["model"].tolist()
    n = len(names)
    if n == 0:
        raise ValueError("`models` selects no models.")
    annotate_given = annotate is not None
    annotate = n <= 15 if annotate is None else bool(annotate)
    if ax is None:
        side = 0.3 * n + 1.5 + label_width(names)
        ax = make_axes(pyplot_axes, (side + 1.2, side + (0.3 if title is not None else 0.0)),
                       size, dpi)  # fmt: skip
        stride, cell = 1, None
        if size is not None:
            stride, cell = _matrix_labels(ax, names)
    else:
        stride, cell = _matrix_labels(ax, names)
    e = frame["elo"].to_numpy(dtype=np.float64)
    p = expit((e[:, None] - e[None, :]) / table.scale)
    im = ax.imshow(p, cmap="RdBu", vmin=0.0, vmax=1.0, interpolation="nearest")
    ticks = np.arange(n)
    ax.set_xticks(ticks, labels=thin(shorten(names), stride), rotation=45 if n <= 15 else 90,
                  ha="right" if n <= 15 else "center",
                  rotation_mode="anchor" if n <= 15 else "default")  # fmt: skip
    ax.set_yticks(ticks, labels=thin(shorten(names), stride))
    ax.set_xlabel("column (opponent)")
    ax.set_ylabel("row")
    fig = root_figure(ax)
    fig.colorbar(im, ax=ax, label="P(row beats column)")
    text_size: float | str = "x-small"
    if annotate and cell is not None:  # a given size: the cells' size after layout
        fig.draw_without_rendering()
        cell = 72.0 * ax.get_window_extent().height / fig.dpi / n
        text_size = min(7.0, cell / 2.8)
        annotate = annotate_given or text_size >= 4.0  # unreadable: left out unless asked
    if annotate:
        for i in range(n):
            for j in range(n):
                ax.text(j, i, f"{p[i, j]:.2f}", ha="center", va="center", fontsize=text_size,
                        color="white" if abs(p[i, j] - 0.5) > 0.3 else "black")  # fmt: skip
    set_title(ax, title)
    return ax


def _matrix_labels(ax: Axes, names: list[str]) -> tuple[int, float]:
    """Tick labels of a win matrix in a given figure size: a font size at which rows do not
    overlap and the longest name takes at most a quarter of the shorter side (never below
    MIN_LABEL_SIZE; then every k-th label only); return the stride and the cell size in points."""
    fig = root_figure(ax)
    box = ax.get_position()
    short = min(fig.get_figwidth() * box.width, fig.get_figheight() * box.height)
    side = min(fig.get_figwidth(), fig.get_figheight())
    cell = 72.0 * short / max(len(names), 1)  # points per row (the image is square)
    longest = max((len(s) for s in shorten(names)), default=1)
    size = min(FontProperties(size=mpl.rcParams["ytick.labelsize"]).get_size_in_points(),
               cell / 1.3, 0.25 * side / (0.0075 * longest))  # fmt: skip
    size = max(size, MIN_LABEL_SIZE)
    ax.tick_params(axis="both", labelsize=size)
    return max(1, int(np.ceil(1.3 * size / cell))), cell


# ----------------------------------------------------------------------------------------------
# Files
# ----------------------------------------------------------------------------------------------


def _check_format(path) -> str:
    ext = Path(os.fspath(path)).suffix.lower()
    if ext not in SAVE_FORMATS:
        raise ValueError(
            f"Cannot save a figure to {os.fspath(path)!r}: the extension must be one of "
            f"{', '.join(SAVE_FORMATS)}; got {ext or 'none'!r}."
        )
    return ext


def save_figure(fig_or_ax: FigureBase | Axes, path: str | os.PathLike[str], **savefig) -> None:
    """Save a figure as PNG, SVG or PDF (by extension), atomically.

    Parameters
    ----------
    fig_or_ax : matplotlib Figure, SubFigure or Axes
        The whole (root) figure is saved.
    path : path
        Ends in ``.png``, ``.svg`` or ``.pdf`` (any case). Its directory must exist.
    **savefig
        Passed to :meth:`matplotlib.figure.Figure.savefig` (e.g. ``dpi=200``).

    Raises
    ------
    ValueError
        Another extension.
    FileNotFoundError
        The directory does not exist.

    Notes
    -----
    Written by :func:`ratings.io.write_atomic`: a temporary file in the same directory, which
    then replaces ``path``; on any error the temporary file is removed and an existing ``path``
    is untouched.
    """
    ext = _check_format(path)
    fig = root_figure(fig_or_ax)
    write_atomic(lambda tmp: fig.savefig(tmp, format=ext[1:], **savefig), path)


#: Columns of the saved tables that hold names (text even when they look like numbers).
_NAME_COLUMNS = ("model", "scope", "model_a", "model_b", "judge", "family", "anchor")


def read_ratings_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A saved table (ratings, pairs, audit; CSV, TSV or a ratings JSON): names as text (a
    model called ``007`` stays ``007``), every other column as numbers where all its values
    are numbers."""
    path = Path(os.fspath(path))
    if not path.exists():
        raise FileNotFoundError(f"Ratings table {os.fspath(path)!r} not found (looked for "
                                f"{str(path.absolute())!r}).")  # fmt: skip
    if path.suffix.lower() == ".json":  # `ratings fit --out r.json`: metadata + records
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InvalidVerdictsError(f"{os.fspath(path)!r} is not valid JSON: {exc}.") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("ratings"), list):
            raise ValueError(f"{os.fspath(path)!r} is not a ratings JSON (no 'ratings' list).")
        frame = pd.DataFrame(doc["ratings"])
    else:
        frame = read_file(os.fspath(path), "csv")  # every field as text, escapes undone
    for c in frame.columns:
        if c in _NAME_COLUMNS:
            frame[c] = frame[c].astype(str)
            continue
        values = pd.to_numeric(frame[c], errors="coerce")
        if values.notna().sum() == frame[c].replace("", np.nan).notna().sum():
            frame[c] = values
    return frame


def plot_table(
    ratings_csv: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    top: int | None = None,
    highlight: str | Iterable[str] | None = None,
    title: str | None = None,
    size: tuple[float, float] | str | None = None,
    dpi: float | None = None,
    raw: str | os.PathLike[str] | None = None,
    style_table: str | os.PathLike[str] | None = None,
) -> None:
    """Plot a saved table to an image (what ``ratings plot TABLE -o FILE`` runs).

    Parameters
    ----------
    ratings_csv : path
        A table written by ``ratings fit --out r.csv`` (``.json`` and ``.tsv`` are read too).
        With a ``scope`` column holding several scopes, the scopes are overlaid
        (:func:`plot_scopes`); with ``raw``, the raw and style-controlled bands are drawn side by
        side (:func:`plot_style`); otherwise the bands are drawn (:func:`plot_ratings`). A judge
        audit table (``ratings audit --out audit.csv``) draws the audit, and a style
        coefficients table (``ratings fit --style-out``) its coefficients (:func:`plot_audit`).
    out : path
        ``.png``, ``.svg`` or ``.pdf``; written atomically, never over an input.
    top, highlight, title
        As in :func:`plot_ratings`.
    size : (float, float) or str, optional
        Figure size in inches (``--size W,H``); default fitted to the rows.
    dpi : float, optional
        Resolution of a PNG (``--dpi``); default 100.
    raw : path, optional
        ``--raw``: the plain fit's table, for a style-controlled ``ratings_csv``.
    style_table : path, optional
        ``--style-table``: a style coefficients table (``ratings fit --style-out``) drawn
        below an audit's judges.

    Raises
    ------
    ValueError
        ``out`` is an input file, has an unsupported extension, or a table lacks columns.
    """
    _check_format(out)
    size, dpi = parse_size(size), check_dpi(dpi)
    src, dst = Path(os.fspath(ratings_csv)), Path(os.fspath(out))
    inputs = [(src, "RATINGS"), *((Path(os.fspath(p)), flag) for p, flag in
                                  ((raw, "--raw"), (style_table, "--style-table"))
                                  if p is not None)]
    for path, flag in inputs:
        if same_file(path, dst):
            raise ValueError(f"Refusing to write {os.fspath(out)!r}: it is the input file "
                             f"({flag}). Choose another path.")  # fmt: skip
    frame = read_ratings_table(src)
    coefs = None if style_table is None else read_ratings_table(style_table)
    kw = dict(title=title, size=size, dpi=dpi)
    is_audit = "judge" in frame.columns and "position_bias" in frame.columns
    is_coefs = {"feature", "coef"} <= set(frame.columns)
    if (is_audit or is_coefs) and (raw is not None or top is not None or highlight):
        what = "a judge audit" if is_audit else "a style coefficients"
        raise ValueError(f"`--raw`, `--top` and `--highlight` are for ratings tables; "
                         f"{os.fspath(src)!r} is {what} table.")  # fmt: skip
    if coefs is not None and not is_audit:
        raise ValueError("`--style-table` draws style coefficients below a judge audit "
                         "(`ratings audit --out audit.csv`); plot the coefficients table "
                         "alone with `ratings plot COEFS.csv`.")  # fmt: skip
    if is_audit:
        ax = draw_audit(frame, None, unit="elo", style=coefs, new_axes=bare_axes, **kw)
    elif is_coefs:
        ax = draw_audit(None, None, unit="elo", style=frame, new_axes=bare_axes, **kw)
    elif raw is not None:
        ax = draw_style(frame, read_ratings_table(raw), None, level=None, highlight=highlight,
                        top=top, new_figure=bare_axes, draw_bands=_plot_ratings,
                        **kw)[0]  # fmt: skip
    elif "scope" in frame.columns and frame["scope"].nunique() > 1:
        ax = _plot_scopes(frame, None, combined=None, level=None, highlight=highlight, top=top,
                          new_axes=bare_axes, **kw)  # fmt: skip
    else:
        ax = _plot_ratings(frame, None, level=None, highlight=highlight, top=top, anchor=None,
                           new_axes=bare_axes, **kw)  # fmt: skip
    save_figure(ax, dst)


__getattr__ = deprecated_names(__name__, {
    "plot_cli": ("ratings.plot.plot_table", lambda: plot_table)})
