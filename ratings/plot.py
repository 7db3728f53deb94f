"""Matplotlib plots: rating bands, scope overlays, win matrices, judge quality and convergence.

This module is not imported by :mod:`ratings`; ``import ratings.plot`` loads matplotlib only
when plots are wanted. Every ``plot_*`` function follows seaborn's contract: it takes
``ax=None`` (a new figure, sized for its content, when ``None``), draws into that Axes and
returns it. Nothing here calls ``plt.show()``, changes rcParams or selects a backend.

>>> import ratings
>>> from ratings.plot import plot_ratings, save_figure
>>> r = ratings.fit("verdicts.csv", anchor="GPT-5.5 (medium)=1000")   # doctest: +SKIP
>>> ax = plot_ratings(r, highlight=["Claude Opus 5"], top=20)          # doctest: +SKIP
>>> save_figure(ax, "bands.png")                                       # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure, FigureBase
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D
from matplotlib.transforms import blended_transform_factory
from scipy.special import expit, ndtr

from ratings._tdist import critical_value
from ratings.errors import close_matches
from ratings.io.writers import same_file, write_atomic
from ratings.result import ELO_SCALE, Ratings, check_level

__all__ = [
    "SAVE_FORMATS",
    "plot_cli",
    "plot_convergence",
    "plot_judges",
    "plot_ratings",
    "plot_scopes",
    "plot_win_matrix",
    "save_figure",
]

#: File extensions :func:`save_figure` writes.
SAVE_FORMATS = (".png", ".svg", ".pdf")

ROW_HEIGHT = 0.22  # inches per model row: 10 pt tick labels need about 0.19 in
MARGIN = 1.3  # inches for the x tick labels, the x label and padding
BASE_COLOR = "C0"
HIGHLIGHT_COLOR = "C3"
ANCHOR_COLOR = "black"
COMBINED_COLOR = "black"

_AxesFactory = Callable[[tuple[float, float]], Axes]


# ----------------------------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------------------------


@dataclass
class _Table:
    """A ratings table ready to draw (``model`` as str) with its level and anchor."""

    frame: pd.DataFrame
    level: float | None
    anchor: str | None
    scale: float = ELO_SCALE


def _pct(level: float) -> str:
    return f"{100 * level:.4g}%"


def _elo_label(level: float | None) -> str:
    return "Elo (interval)" if level is None else f"Elo ({_pct(level)} CI)"


def _infer_level(est, se, lower, upper) -> float | None:
    """The level of intervals ``est -+ z se`` (None unless every interval has that form)."""
    est, se, lower, upper = (np.asarray(v, dtype=np.float64) for v in (est, se, lower, upper))
    ok = np.isfinite(se) & (se > 0)
    if not ok.any():
        return None
    z = np.concatenate([(upper[ok] - est[ok]) / se[ok], (est[ok] - lower[ok]) / se[ok]])
    if not (np.all(np.isfinite(z)) and z[0] > 0 and np.allclose(z, z[0], rtol=1e-6, atol=0)):
        return None
    return float(round(2.0 * ndtr(z[0]) - 1.0, 6))


def _column_value(frame: pd.DataFrame, column: str) -> float | None:
    """The single finite value of a per-table column such as ``level`` or ``df``, if any."""
    if column not in frame.columns:
        return None
    values = pd.to_numeric(frame[column], errors="coerce").dropna().unique()
    return float(values[0]) if len(values) == 1 else None


def _require(frame: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(
            f"Column(s) {missing} not found in {what}. Available columns: "
            f"{frame.columns.tolist()}."
        )


def _table(obj, *, level: float | None = None, anchor: str | None = None) -> _Table:
    """Normalise a :class:`Ratings` or a ``to_frame()``-shaped DataFrame."""
    if level is not None:
        level = check_level(level)
    if isinstance(obj, Ratings):
        frame = obj.to_frame(level)
        found_level = obj.level if level is None else level
        found_anchor, scale = obj.anchor, obj.scale
    elif isinstance(obj, pd.DataFrame):
        _require(obj, ["model", "elo", "lower", "upper"], "the ratings table")
        frame = obj.copy()
        scale = ELO_SCALE
        has_se = "se" in frame.columns
        df = _column_value(frame, "df")
        inferred = _column_value(frame, "level")
        if inferred is None and has_se and df is None:
            inferred = _infer_level(frame["elo"], frame["se"], frame["lower"], frame["upper"])
        found_level = inferred
        if level is not None and (inferred is None or abs(inferred - level) > 1e-4):
            if inferred is None:
                raise ValueError(
                    f"Cannot redraw this table at `level={level!r}`: its intervals are not "
                    "elo -+ z * se (e.g. bootstrap percentiles). Pass the Ratings, or refit "
                    "with `ratings.fit(..., level=...)`."
                )
            z = critical_value(level, df)
            frame["lower"] = frame["elo"] - z * frame["se"]
            frame["upper"] = frame["elo"] + z * frame["se"]
            found_level = level
        found_anchor = None
        if has_se:
            fixed = frame[(frame["se"] == 0) & (frame["lower"] == frame["upper"])]
            if len(fixed) == 1:
                found_anchor = str(fixed["model"].iloc[0])
    else:
        raise TypeError(
            "Expected a ratings.Ratings or a DataFrame shaped like `Ratings.to_frame()`; got "
            f"{type(obj).__name__}."
        )
    frame["model"] = frame["model"].astype(str)
    if frame["model"].duplicated().any():
        dup = frame.loc[frame["model"].duplicated(), "model"].unique()[:5].tolist()
        hint = " Use plot_scopes for a table with several scopes." if "scope" in frame else ""
        raise ValueError(f"Model(s) {dup} appear more than once in the ratings table.{hint}")
    if anchor is not None:
        _check_names([anchor], frame["model"], "anchor")
        found_anchor = str(anchor)
    frame = frame.sort_values(["elo", "model"], ascending=[False, True], kind="stable")
    return _Table(frame.reset_index(drop=True), found_level, found_anchor, scale)


def _col(frame: pd.DataFrame, name: str) -> np.ndarray:
    return frame[name].to_numpy(dtype=np.float64)


def _check_names(names: Iterable[str], models: Iterable[str], what: str) -> list[str]:
    known = [str(m) for m in models]
    names = [str(n) for n in names]
    unknown = [n for n in names if n not in set(known)]
    if unknown:
        raise ValueError(
            f"`{what}` names model(s) not in the ratings: {unknown[:5]}. "
            f"{close_matches(unknown[0], known)}"
        )
    return names


def _as_names(highlight) -> list[str]:
    if highlight is None:
        return []
    if isinstance(highlight, str):
        return [highlight]
    return [str(h) for h in highlight]


def _check_top(top) -> int | None:
    if top is None:
        return None
    if isinstance(top, bool) or not isinstance(top, int | np.integer) or top < 1:
        raise ValueError(f"`top` must be a positive integer or None; got {top!r}.")
    return int(top)


# ----------------------------------------------------------------------------------------------
# Figures
# ----------------------------------------------------------------------------------------------


def _pyplot_axes(figsize: tuple[float, float]) -> Axes:
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def _bare_axes(figsize: tuple[float, float]) -> Axes:
    """A figure outside pyplot (no backend, nothing to close): for :func:`plot_cli`."""
    return Figure(figsize=figsize, layout="constrained").add_subplot()


def _label_width(labels: Iterable[str]) -> float:
    """Rough width in inches of the longest tick label at 10 pt."""
    return 0.075 * max((len(s) for s in labels), default=0)


def _rows_size(n_rows: float, labels: Iterable[str], title: bool) -> tuple[float, float]:
    width = float(np.clip(4.8 + _label_width(labels), 6.0, 12.0))
    return width, ROW_HEIGHT * n_rows + MARGIN + (0.3 if title else 0.0)


MIN_LABEL_SIZE = 5.0  # points: below this, label every k-th row instead


def _fit_tick_labels(ax: Axes, n_rows: float, axis: str = "y") -> int:
    """Fit the tick labels of a caller's Axes to its rows; return the label stride.

    The labels shrink (down to ``MIN_LABEL_SIZE``) when rows are closer than 1.3 label heights;
    when even that is too large, only every ``stride``-th row is labelled. The Axes size is
    read before layout, so the estimate errs on the small side.
    """
    fig = _root_figure(ax)
    bbox = ax.get_position()
    inches = fig.get_figheight() * bbox.height if axis == "y" else fig.get_figwidth() * bbox.width
    per_row = 72.0 * inches / max(n_rows, 1.0)  # points per row
    size = FontProperties(size=mpl.rcParams[f"{axis}tick.labelsize"]).get_size_in_points()
    if 1.3 * size <= per_row:
        return 1
    ax.tick_params(axis=axis, labelsize=max(per_row / 1.3, MIN_LABEL_SIZE))
    return max(1, int(np.ceil(1.3 * MIN_LABEL_SIZE / per_row)))


def _thin(labels: Iterable[str], stride: int) -> list[str]:
    return [str(t) if i % stride == 0 else "" for i, t in enumerate(labels)]


def _root_figure(fig_or_ax) -> Figure:
    if isinstance(fig_or_ax, Axes):
        fig = fig_or_ax.figure
    elif isinstance(fig_or_ax, FigureBase):
        fig = fig_or_ax
    else:
        raise TypeError(
            f"Expected a matplotlib Figure or Axes; got {type(fig_or_ax).__name__}."
        )
    while not isinstance(fig, Figure):  # a SubFigure: walk up to the root
        fig = fig.figure
    return fig


def _legend_proxy(color, marker: str, label: str, **kw) -> Line2D:
    return Line2D([], [], color=color, marker=marker, linestyle="-", label=label, **kw)


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

    Returns
    -------
    matplotlib.axes.Axes

    Notes
    -----
    The bands are one :class:`~matplotlib.collections.LineCollection` (``gid="ratings-bands"``),
    one segment per model from top to bottom; the points are a scatter
    (``gid="ratings-points"``) without the anchor, which is a separate diamond marker
    (``gid="ratings-anchor"``).
    """
    return _plot_ratings(result_or_frame, ax, level=level, highlight=highlight, top=top,
                         anchor=anchor, title=title, new_axes=_pyplot_axes)  # fmt: skip


def _plot_ratings(obj, ax, *, level, highlight, top, anchor, title,
                  new_axes: _AxesFactory) -> Axes:
    table = _table(obj, level=level, anchor=anchor)
    frame = table.frame
    if "scope" in frame.columns and frame["scope"].nunique() > 1:
        raise ValueError(f"The table holds {frame['scope'].nunique()} scopes; draw it with "
                         "`plot_scopes`.")  # fmt: skip
    marked = _check_names(_as_names(highlight), frame["model"], "highlight")
    top = _check_top(top)
    shown = frame if top is None or top >= len(frame) else frame.iloc[:top]
    rest = frame.iloc[len(shown):]
    n = len(shown)
    n_rows = n + (1 if len(rest) else 0)
    if ax is None:
        ax = new_axes(_rows_size(n_rows, shown["model"], title is not None))
        stride = 1
    else:
        stride = _fit_tick_labels(ax, n_rows + 1.0)

    y = np.arange(n, dtype=np.float64)[::-1]  # best model at the top
    models = shown["model"].to_numpy()
    is_marked = np.isin(models, marked)
    colors = np.where(is_marked, HIGHLIGHT_COLOR, BASE_COLOR)
    elo = _col(shown, "elo")
    ax.hlines(y, _col(shown, "lower"), _col(shown, "upper"), colors=list(colors), linewidth=2.0,
              alpha=0.6, gid="ratings-bands")  # fmt: skip
    is_anchor = models == table.anchor
    ax.scatter(elo[~is_anchor], y[~is_anchor], c=list(colors[~is_anchor]), s=16, zorder=3,
               gid="ratings-points")  # fmt: skip
    handles = []
    if is_anchor.any():
        (h,) = ax.plot(elo[is_anchor], y[is_anchor], linestyle="none", marker="D", markersize=7,
                       color=ANCHOR_COLOR, zorder=4, gid="ratings-anchor",
                       label=f"{table.anchor} (anchor)")  # fmt: skip
        handles.append(h)
    if is_marked.any():
        handles.append(_legend_proxy(HIGHLIGHT_COLOR, "o", "highlighted", markersize=4))

    ax.set_yticks(y, labels=_thin(models, stride))
    for label, on in zip(ax.get_yticklabels(), is_marked, strict=True):
        if on:
            label.set_color(HIGHLIGHT_COLOR)
            label.set_fontweight("bold")
    ax.set_ylim(-0.6 - (1.0 if len(rest) else 0.0), n - 0.4)
    if len(rest):
        ax.text(0.01, -1.0, _rest_note(rest, table.anchor, marked),
                transform=blended_transform_factory(ax.transAxes, ax.transData),
                ha="left", va="center", fontsize="small", color="0.3",
                gid="ratings-note")  # fmt: skip
    ax.set_xlabel(_elo_label(table.level))
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    if title is not None:
        ax.set_title(title)
    if handles:
        ax.legend(handles=handles, loc="upper left", fontsize="small")
    return ax


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

    Returns
    -------
    matplotlib.axes.Axes

    Notes
    -----
    Models are ordered by the combined Elo when ``combined`` is given (models it lacks follow),
    otherwise by their mean Elo over the scopes that rated them. The legend has one entry per
    scope, plus ``"combined"``.
    """
    return _plot_scopes(results, ax, combined=combined, level=level, highlight=highlight,
                        top=top, title=title, new_axes=_pyplot_axes)  # fmt: skip


def _split_scopes(results, level) -> dict[str, _Table]:
    if isinstance(results, pd.DataFrame):
        _require(results, ["scope"], "the table (plot_scopes needs a `scope` column)")
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
    return {k: _table(v, level=level) for k, v in parts.items()}


def _plot_scopes(results, ax, *, combined, level, highlight, top, title,
                 new_axes: _AxesFactory) -> Axes:
    tables = _split_scopes(results, level)
    series: list[tuple[str, _Table, object, str]] = []
    if combined is not None:
        series.append(("combined", _table(combined, level=level), COMBINED_COLOR, "s"))
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
    top = _check_top(top)
    models = order["model"].tolist()
    shown, rest = (models, []) if top is None else (models[:top], models[top:])
    marked = _check_names(_as_names(highlight), models, "highlight")

    n, k = len(shown), len(series)
    n_rows = n + (1 if rest else 0)
    if ax is None:
        per_row = max(ROW_HEIGHT, 0.11 * k)
        width, _ = _rows_size(n_rows, shown, title is not None)
        ax = new_axes((width, per_row * n_rows + MARGIN + (0.3 if title is not None else 0.0)))
        stride = 1
    else:
        stride = _fit_tick_labels(ax, n_rows + 1.0)
    ypos = pd.Series(np.arange(n, dtype=np.float64)[::-1], index=shown)
    offsets = (np.arange(k)[::-1] - (k - 1) / 2.0) * (0.7 / k)
    handles = []
    for (name, t, color, marker), off in zip(series, offsets, strict=True):
        f = t.frame[t.frame["model"].isin(shown)]
        y = ypos.reindex(f["model"]).to_numpy() + off
        ax.hlines(y, _col(f, "lower"), _col(f, "upper"), colors=color, linewidth=1.6, alpha=0.7,
                  gid=f"scope-bands:{name}")  # fmt: skip
        ax.plot(_col(f, "elo"), y, linestyle="none", marker=marker,
                markersize=5 if marker == "s" else 4, color=color, zorder=3,
                gid=f"scope-points:{name}")  # fmt: skip
        handles.append(_legend_proxy(color, marker, name, markersize=5))

    ax.set_yticks(ypos.to_numpy(), labels=_thin(shown, stride))
    for label, model in zip(ax.get_yticklabels(), shown, strict=True):
        if model in marked:
            label.set_color(HIGHLIGHT_COLOR)
            label.set_fontweight("bold")
    ax.set_ylim(-0.6 - (1.0 if rest else 0.0), n - 0.4)
    if rest:
        ax.text(0.01, -1.0, f"+ {len(rest)} more model{'s' if len(rest) > 1 else ''} not shown",
                transform=blended_transform_factory(ax.transAxes, ax.transData), ha="left",
                va="center", fontsize="small", color="0.3", gid="ratings-note")  # fmt: skip
    levels = {t.level for _, t, _, _ in series}
    ax.set_xlabel(_elo_label(levels.pop() if len(levels) == 1 else None))
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(handles=handles, loc="upper left", fontsize="small")
    if title is not None:
        ax.set_title(title)
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
        Write the probability in each cell; default when there are at most 15 models.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        The image is ``ax.images[0]`` (values in ``get_array()``); a colourbar is added.
    """
    table = _table(result)
    frame = table.frame
    if models is not None:
        keep = _check_names(_as_names(models), frame["model"], "models")
        frame = frame[frame["model"].isin(keep)]
    names = frame["model"].tolist()
    n = len(names)
    if n == 0:
        raise ValueError("`models` selects no models.")
    annotate = n <= 15 if annotate is None else bool(annotate)
    if ax is None:
        side = 0.3 * n + 1.5 + _label_width(names)
        ax = _pyplot_axes((side + 1.2, side + (0.3 if title is not None else 0.0)))
        ystride = xstride = 1
    else:
        ystride = _fit_tick_labels(ax, n + 1.0)
        xstride = _fit_tick_labels(ax, n + 1.0, axis="x")
    e = frame["elo"].to_numpy(dtype=np.float64)
    p = expit((e[:, None] - e[None, :]) / table.scale)
    im = ax.imshow(p, cmap="RdBu", vmin=0.0, vmax=1.0, interpolation="nearest")
    ticks = np.arange(n)
    ax.set_xticks(ticks, labels=_thin(names, xstride), rotation=45 if n <= 15 else 90,
                  ha="right" if n <= 15 else "center",
                  rotation_mode="anchor" if n <= 15 else "default")  # fmt: skip
    ax.set_yticks(ticks, labels=_thin(names, ystride))
    ax.set_xlabel("column (opponent)")
    ax.set_ylabel("row")
    if annotate:
        for i in range(n):
            for j in range(n):
                ax.text(j, i, f"{p[i, j]:.2f}", ha="center", va="center", fontsize="x-small",
                        color="white" if abs(p[i, j] - 0.5) > 0.3 else "black")  # fmt: skip
    _root_figure(ax).colorbar(im, ax=ax, label="P(row beats column)")
    if title is not None:
        ax.set_title(title)
    return ax


# ----------------------------------------------------------------------------------------------
# Judges and convergence
# ----------------------------------------------------------------------------------------------


def plot_judges(
    judges: pd.DataFrame | Ratings, ax: Axes | None = None, *, title: str | None = None
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
        (uninformative: a coin flip) and 1.0 (always the true order).
    """
    if isinstance(judges, Ratings):
        if judges.judges is None:
            raise ValueError("This fit has no judge qualities (a Bradley-Terry fit); plot a "
                             "Crowd-BT fit or a judges table.")  # fmt: skip
        judges = judges.judges
    if not isinstance(judges, pd.DataFrame):
        raise TypeError(f"`judges` must be a DataFrame or Ratings; got {type(judges).__name__}.")
    frame = judges if "judge" in judges.columns else judges.rename_axis("judge").reset_index()
    _require(frame, ["judge", "eta"], "the judges table")
    has_ci = "lower" in frame.columns and "upper" in frame.columns
    frame = frame.sort_values(["eta", "judge"], ascending=[False, True], kind="stable")
    n = len(frame)
    if ax is None:
        ax = _pyplot_axes(_rows_size(max(n, 3), frame["judge"].astype(str), title is not None))
    y = np.arange(n, dtype=np.float64)[::-1]
    eta = frame["eta"].to_numpy(dtype=np.float64)
    lo = hi = eta
    if has_ci:
        lo, hi = _col(frame, "lower"), _col(frame, "upper")
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
    level = (_infer_level(eta, frame["se"], lo, hi) if has_ci and "se" in frame.columns
             else None)  # fmt: skip
    what = "interval" if level is None else f"{_pct(level)} CI"
    ax.set_xlabel(f"judge quality η ({what})" if has_ci else "judge quality η")
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(handles=[h1, h2], loc="upper left", fontsize="small")
    if title is not None:
        ax.set_title(title)
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

    Returns
    -------
    matplotlib.axes.Axes
        One :class:`~matplotlib.lines.Line2D` per group (``gid="convergence:<group>"``), plus the
        target line (``gid="convergence-target"``).
    """
    if not isinstance(history, pd.DataFrame):
        raise TypeError(f"`history` must be a DataFrame; got {type(history).__name__}.")
    _require(history, [c for c in (x, y, hue) if c is not None], "`history`")
    if target is not None and not np.isfinite(target):
        raise ValueError(f"`target` must be a finite number or None; got {target!r}.")
    if ax is None:
        ax = _pyplot_axes((6.4, 4.2 + (0.3 if title is not None else 0.0)))
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
        ax.legend(title=hue, fontsize="small")
    if title is not None:
        ax.set_title(title)
    return ax


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
    fig = _root_figure(fig_or_ax)
    write_atomic(lambda tmp: fig.savefig(tmp, format=ext[1:], **savefig), path)


def _read_table(path: Path) -> pd.DataFrame:
    if path.suffix.lower() == ".json":  # `ratings fit --out r.json`: metadata + records
        doc = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(doc, dict) or "ratings" not in doc:
            raise ValueError(f"{os.fspath(path)!r} is not a ratings JSON (no 'ratings' key).")
        return pd.DataFrame(doc["ratings"])
    return pd.read_csv(path, sep="\t" if path.suffix.lower() == ".tsv" else ",")


def plot_cli(
    ratings_csv: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    top: int | None = None,
    highlight: str | Iterable[str] | None = None,
    title: str | None = None,
) -> None:
    """Plot a saved ratings table to an image: the body of ``ratings plot RATINGS.csv -o FILE``.

    Parameters
    ----------
    ratings_csv : path
        A table written by ``ratings fit --out r.csv`` (``.json`` and ``.tsv`` are read too).
        With a ``scope`` column holding several scopes, the scopes are overlaid
        (:func:`plot_scopes`); otherwise the bands are drawn (:func:`plot_ratings`).
    out : path
        ``.png``, ``.svg`` or ``.pdf``; written atomically, never over the input.
    top, highlight, title
        As in :func:`plot_ratings`.

    Raises
    ------
    ValueError
        ``out`` is the input file, has an unsupported extension, or the table lacks columns.
    """
    _check_format(out)
    src, dst = Path(os.fspath(ratings_csv)), Path(os.fspath(out))
    if same_file(src, dst):
        raise ValueError(f"Refusing to write {os.fspath(out)!r}: it is the input file. Choose "
                         "another path.")  # fmt: skip
    frame = _read_table(src)
    if "scope" in frame.columns and frame["scope"].nunique() > 1:
        ax = _plot_scopes(frame, None, combined=None, level=None, highlight=highlight, top=top,
                          title=title, new_axes=_bare_axes)  # fmt: skip
    else:
        ax = _plot_ratings(frame, None, level=None, highlight=highlight, top=top, anchor=None,
                           title=title, new_axes=_bare_axes)  # fmt: skip
    save_figure(ax, dst)
