"""What every plot of :mod:`ratings.plot.bands` shares: reading a ratings table (a fit or a saved
``to_frame()`` table) into a :class:`RatingsTable`, checking plot arguments, and sizing figures
and tick labels so that labels never overlap.

Internal to the plotting modules; imports matplotlib (never imported by :mod:`ratings`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure, FigureBase
from matplotlib.font_manager import FontProperties
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.transforms import blended_transform_factory
from scipy.special import ndtr

from ratings.core import schema
from ratings.core.errors import close_matches, option
from ratings.core.schema import ELO_SCALE
from ratings.core.tdist import critical_value
from ratings.result import Ratings, check_level

__all__ = [
    "ANCHOR_COLOR",
    "BASE_COLOR",
    "COMBINED_COLOR",
    "HIGHLIGHT_COLOR",
    "LABEL_CHARS",
    "MARGIN",
    "MIN_LABEL_SIZE",
    "ROW_HEIGHT",
    "AxesFactory",
    "RatingsTable",
    "as_names",
    "bare_axes",
    "check_dpi",
    "check_names",
    "check_top",
    "column",
    "elo_label",
    "figure_options",
    "fit_tick_labels",
    "infer_level",
    "label_rows",
    "label_width",
    "labelled",
    "legend_above",
    "legend_proxy",
    "make_axes",
    "parse_size",
    "pct",
    "pyplot_axes",
    "ratings_table",
    "require_columns",
    "root_figure",
    "rows_size",
    "set_title",
    "shorten",
    "thin",
    "wrap_text",
]

ROW_HEIGHT = 0.22  # inches per model row: 10 pt tick labels need about 0.19 in
MARGIN = 1.3  # inches for the x tick labels, the x label and padding
BASE_COLOR = "C0"
HIGHLIGHT_COLOR = "C3"
ANCHOR_COLOR = "black"
COMBINED_COLOR = "black"

AxesFactory = Callable[..., Axes]  # (figsize, dpi=None) -> a new figure's Axes
MAX_DPI = 1200.0  # a 10 in figure at 1200 dpi is 12,000 pixels wide


# ----------------------------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------------------------


@dataclass
class RatingsTable:
    """A ratings table ready to draw (``model`` as str) with its level and anchor."""

    frame: pd.DataFrame
    level: float | None
    anchor: str | None
    scale: float = ELO_SCALE


def pct(level: float) -> str:
    """A level as a percentage: ``"95%"``."""
    return f"{100 * level:.4g}%"


def elo_label(level: float | None) -> str:
    """The Elo axis label, with the interval's level when known."""
    return "Elo (interval)" if level is None else f"Elo ({pct(level)} CI)"


def infer_level(est, se, lower, upper) -> float | None:
    """The level of intervals ``est -+ z se`` (None unless every interval has that form)."""
    est, se, lower, upper = (np.asarray(v, dtype=np.float64) for v in (est, se, lower, upper))
    ok = np.isfinite(se) & (se > 0)
    if not ok.any():
        return None
    z = np.concatenate([(upper[ok] - est[ok]) / se[ok], (est[ok] - lower[ok]) / se[ok]])
    if not (np.all(np.isfinite(z)) and z[0] > 0 and np.allclose(z, z[0], rtol=1e-6, atol=0)):
        return None
    return float(round(2.0 * ndtr(z[0]) - 1.0, 6))


def column_value(frame: pd.DataFrame, column: str) -> float | None:
    """The single finite value of a per-table column such as ``level`` or ``df``, if any."""
    if column not in frame.columns:
        return None
    values = pd.to_numeric(frame[column], errors="coerce").dropna().unique()
    return float(values[0]) if len(values) == 1 else None


def require_columns(frame: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    """Raise naming the ``columns`` missing from ``frame`` (``what`` names the table)."""
    schema.require_columns(frame, columns, what, error=ValueError)


def ratings_table(obj, *, level: float | None = None, anchor: str | None = None) -> RatingsTable:
    """Normalise a :class:`Ratings` or a ``to_frame()``-shaped DataFrame."""
    if level is not None:
        level = check_level(level)
    if isinstance(obj, Ratings):
        frame = obj.to_frame(level)
        found_level = obj.level if level is None else level
        found_anchor, scale = obj.anchor, obj.scale
    elif isinstance(obj, pd.DataFrame):
        require_columns(obj, ["model", "elo", "lower", "upper"], "the ratings table")
        frame = obj.copy()
        scale = ELO_SCALE
        has_se = "se" in frame.columns
        df = None  # degrees of freedom per row (NaN: a normal quantile, or no interval)
        if "df" in frame.columns and pd.to_numeric(frame["df"], errors="coerce").notna().any():
            df = pd.to_numeric(frame["df"], errors="coerce").fillna(np.inf).to_numpy()
        inferred = column_value(frame, "level")
        if inferred is None and has_se and df is None:
            inferred = infer_level(frame["elo"], frame["se"], frame["lower"], frame["upper"])
        found_level = inferred
        if level is not None and (inferred is None or abs(inferred - level) > 1e-4):
            if inferred is None:
                raise ValueError(
                    f"Cannot redraw this table at {option('level', level)}: its intervals are not "
                    "elo -+ z * se (e.g. bootstrap percentiles). Pass the Ratings, or refit "
                    "with `ratings.fit(..., level=...)`."
                )
            z = critical_value(level, df)
            frame["lower"] = frame["elo"] - z * frame["se"]
            frame["upper"] = frame["elo"] + z * frame["se"]
            found_level = level
            # rank intervals belong to the table's own level: not redrawn
            frame = frame.drop(columns=["rank_lower", "rank_upper"], errors="ignore")
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
        check_names([anchor], frame["model"], "anchor")
        found_anchor = str(anchor)
    frame = frame.sort_values(["elo", "model"], ascending=[False, True], kind="stable")
    return RatingsTable(frame.reset_index(drop=True), found_level, found_anchor, scale)


def column(frame: pd.DataFrame, name: str) -> np.ndarray:
    """A column as float64."""
    return frame[name].to_numpy(dtype=np.float64)


def check_names(names: Iterable[str], models: Iterable[str], what: str) -> list[str]:
    """``names`` as str, if all are ``models`` (else a ValueError naming the argument ``what``)."""
    known = [str(m) for m in models]
    names = [str(n) for n in names]
    unknown = [n for n in names if n not in set(known)]
    if unknown:
        raise ValueError(
            f"{option(what)} names model(s) not in the ratings: {unknown[:5]}. "
            f"{close_matches(unknown[0], known)}"
        )
    return names


def as_names(highlight) -> list[str]:
    """None, one name or several names as a list of str."""
    if highlight is None:
        return []
    if isinstance(highlight, str):
        return [highlight]
    return [str(h) for h in highlight]


def check_top(top) -> int | None:
    """``top`` (None or a positive integer) as an int."""
    if top is None:
        return None
    if isinstance(top, bool) or not isinstance(top, int | np.integer) or top < 1:
        raise ValueError(f"{option('top')} must be a positive integer or None; got {top!r}.")
    return int(top)


# ----------------------------------------------------------------------------------------------
# Figures
# ----------------------------------------------------------------------------------------------


def pyplot_axes(figsize: tuple[float, float], dpi: float | None = None) -> Axes:
    """A new pyplot figure of ``figsize`` inches (constrained layout) and its Axes."""
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize, dpi=dpi, layout="constrained")
    return ax


def bare_axes(figsize: tuple[float, float], dpi: float | None = None) -> Axes:
    """A figure outside pyplot (no backend, nothing to close): for
    :func:`ratings.plot.bands.plot_table`."""
    return Figure(figsize=figsize, dpi=dpi, layout="constrained").add_subplot()


def parse_size(size) -> tuple[float, float] | None:
    """A figure size in inches: ``(width, height)`` or the text ``"W,H"`` (``--size``)."""
    if size is None:
        return None
    parts = size.split(",") if isinstance(size, str) else size
    try:
        width, height = (float(v) for v in parts)
    except (TypeError, ValueError):
        raise ValueError(f"{option('size')} must be two numbers W,H in inches (e.g. 10,6); got "
                         f"{size!r}.") from None  # fmt: skip
    if not (np.isfinite(width) and np.isfinite(height) and 0.5 <= min(width, height)
            and max(width, height) <= 200.0):  # fmt: skip
        raise ValueError(f"{option('size')} must be between 0.5 and 200 inches per side; got "
                         f"{width:g},{height:g}.")  # fmt: skip
    return width, height


def check_dpi(dpi) -> float | None:
    """``dpi`` (None or a number in [10, MAX_DPI]) as a float."""
    if dpi is None:
        return None
    if isinstance(dpi, bool) or not isinstance(dpi, int | float | np.integer | np.floating) or not (
            10.0 <= float(dpi) <= MAX_DPI):  # fmt: skip
        raise ValueError(f"{option('dpi')} must be a number from 10 to {MAX_DPI:g}; got {dpi!r}.")
    return float(dpi)


def figure_options(ax: Axes | None, size, dpi) -> tuple[tuple[float, float] | None, float | None]:
    """Check ``size`` and ``dpi``, which only apply to a figure the plot makes (``ax=None``)."""
    size, dpi = parse_size(size), check_dpi(dpi)
    if ax is not None and (size is not None or dpi is not None):
        raise ValueError("`size` and `dpi` are for the figure a plot makes; with `ax`, size the "
                         "caller's figure instead (and pass `dpi` to `save_figure`).")  # fmt: skip
    return size, dpi


def make_axes(factory: AxesFactory, default: tuple[float, float],
             size: tuple[float, float] | None, dpi: float | None) -> Axes:  # fmt: skip
    """A new figure's Axes, of the plot's ``default`` size unless the caller chose ``size``."""
    return factory(default if size is None else size, dpi)


LABEL_CHARS = 48  # longer model names are shortened in tick labels (head ... tail)


def shorten(names: Iterable[str], limit: int = LABEL_CHARS) -> list[str]:
    """Tick labels for ``names``: a name longer than ``limit`` characters keeps its start and
    its end around an ellipsis; the limit grows until no two labels read the same."""
    names = [str(s) for s in names]
    longest = max((len(s) for s in names), default=0)
    while limit < longest:
        tail = limit // 3
        short = [s if len(s) <= limit else f"{s[:limit - tail - 1]}\u2026{s[-tail:]}"
                 for s in names]  # fmt: skip
        if len(set(short)) == len(set(names)):
            return short
        limit += 4
    return names


def label_width(labels: Iterable[str]) -> float:
    """Rough width in inches of the longest (shortened) tick label at 10 pt."""
    return 0.075 * max((len(s) for s in shorten(labels)), default=0)


def rows_size(n_rows: float, labels: Iterable[str], title: bool,
              legend: bool = False) -> tuple[float, float]:  # fmt: skip
    """A figure size for ``n_rows`` rows of tick labels ``labels`` (and room for a title and a
    legend above the Axes)."""
    width = float(np.clip(4.8 + label_width(labels), 6.0, 12.0))
    return width, ROW_HEIGHT * n_rows + MARGIN + (0.3 if title else 0.0) + (0.3 if legend else 0.0)


MIN_LABEL_SIZE = 5.0  # points: below this, label every k-th row instead


def fit_tick_labels(ax: Axes, n_rows: float, axis: str = "y") -> int:
    """Fit the tick labels of a caller's Axes to its rows; return the label stride.

    The labels shrink (down to ``MIN_LABEL_SIZE``) when rows are closer than 1.3 label heights;
    when even that is too large, only every ``stride``-th row is labelled. The Axes size is
    read before layout, so the estimate errs on the small side.
    """
    fig = root_figure(ax)
    bbox = ax.get_position()
    inches = fig.get_figheight() * bbox.height if axis == "y" else fig.get_figwidth() * bbox.width
    per_row = 72.0 * inches / max(n_rows, 1.0)  # points per row
    size = FontProperties(size=mpl.rcParams[f"{axis}tick.labelsize"]).get_size_in_points()
    if 1.3 * size <= per_row:
        return 1
    ax.tick_params(axis=axis, labelsize=max(per_row / 1.3, MIN_LABEL_SIZE))
    return max(1, int(np.ceil(1.3 * MIN_LABEL_SIZE / per_row)))


def label_rows(ax: Axes, y, names: Iterable[str], marked: Iterable[str], stride: int,
               note: str | None) -> None:  # fmt: skip
    """Tick-label the rows at ``y`` with ``names`` (every ``stride``-th), the ``marked`` ones
    bold in the highlight colour; fit the y limits, with room below for ``note`` (the models not
    shown), drawn there when given (``gid="ratings-note"``)."""
    names, marked = list(names), set(marked)
    keep = labelled(names, marked, stride)
    ax.set_yticks(y, labels=[t if k else "" for t, k in zip(shorten(names), keep, strict=True)])
    for label, name in zip(ax.get_yticklabels(), names, strict=True):
        if name in marked:
            label.set_color(HIGHLIGHT_COLOR)
            label.set_fontweight("bold")
    ax.set_ylim(-0.6 - (1.0 if note else 0.0), len(names) - 0.4)
    if note:
        ax.text(0.01, -1.0, note, transform=blended_transform_factory(ax.transAxes, ax.transData),
                ha="left", va="center", fontsize="small", color="0.3", gid="ratings-note")


def labelled(names: list[str], marked: Iterable[str], stride: int) -> np.ndarray:
    """Which rows get a label: every ``stride``-th, and every ``marked`` one (whose neighbours
    within the stride then go unlabelled)."""
    keep = np.zeros(len(names), dtype=bool)
    keep[::stride] = True
    if stride > 1:
        for i in np.flatnonzero(np.isin(names, list(marked))):
            keep[max(0, i - stride + 1):i + stride] = False
        keep[np.isin(names, list(marked))] = True
    return keep


def thin(labels: Iterable[str], stride: int) -> list[str]:
    """Every ``stride``-th label, the others blank."""
    return [str(t) if i % stride == 0 else "" for i, t in enumerate(labels)]


def root_figure(fig_or_ax) -> Figure:
    """The root Figure of a Figure, SubFigure or Axes."""
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


def _layout(fig: Figure) -> None:
    """Run the figure's layout (constrained layout places the Axes) without drawing pixels."""
    fig.draw_without_rendering()


def _text_width(fig: Figure, text: str, size) -> float:
    """Width in display pixels of ``text`` at font ``size``."""
    t = fig.text(0.0, 0.0, text, fontsize=size)
    try:
        return t.get_window_extent().width
    finally:
        t.remove()


def wrap_text(fig: Figure, text: str, width: float, size) -> str:
    """``text`` broken at spaces into lines no wider than ``width`` pixels at font ``size``
    (existing line breaks kept; a word longer than a line gets a line of its own)."""
    lines: list[str] = []
    for paragraph in str(text).split("\n"):
        line = ""
        for word in paragraph.split(" "):
            trial = word if not line else f"{line} {word}"
            if line and _text_width(fig, trial, size) > width:
                lines.append(line)
                line = word
            else:
                line = trial
        lines.append(line)
    return "\n".join(lines)


def _fit_font(fig: Figure, text: str, width: float, size: float) -> float:
    """The largest size down to 6 pt at which every line of ``text`` is within ``width``."""
    widest = max(_text_width(fig, line, size) for line in text.split("\n"))
    return size if widest <= width else max(6.0, size * width / widest)


def legend_above(ax: Axes, handles: list, *, title: str | None = None) -> Legend | None:
    """The legend of ``handles`` above the Axes, outside the data area, left-aligned, in as many
    columns as fit the Axes' width (``gid="legend-above"``); ``None`` without handles."""
    if not handles:
        return None
    fig = root_figure(ax)
    kw = dict(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.0), borderaxespad=0.3,
              fontsize="small", frameon=False, title=title, title_fontsize="small",
              alignment="left", handlelength=1.6, columnspacing=1.2)  # fmt: skip
    _layout(fig)
    room = ax.get_window_extent().width
    for ncols in range(len(handles), 0, -1):
        legend = ax.legend(ncols=ncols, **kw)
        if ncols == 1 or legend.get_window_extent().width <= room:
            break
    legend.set_gid("legend-above")
    return legend


def set_title(ax: Axes, title: str | None) -> None:
    """The Axes' title, wrapped to the width of the Axes and its tick labels (never wider than
    the figure), above a legend placed by :func:`legend_above`."""
    if title is None:
        return
    fig = root_figure(ax)
    _layout(fig)
    box, deco = ax.get_window_extent(), ax.get_tightbbox()
    centre = 0.5 * (box.x0 + box.x1)  # the title is centred on the Axes; it may run over the
    room = max(box.width, 2.0 * min(centre - deco.x0, deco.x1 - centre))  # tick labels
    size = FontProperties(size=mpl.rcParams["axes.titlesize"]).get_size_in_points()
    text = wrap_text(fig, str(title), room, size)
    size = _fit_font(fig, text, room, size)
    legend = ax.get_legend()
    pad = mpl.rcParams["axes.titlepad"]
    if legend is not None and legend.get_gid() == "legend-above":
        pad += legend.get_window_extent().height * 72.0 / fig.dpi + 3.0
    ax.set_title(text, pad=pad, fontsize=size)


def legend_proxy(color, marker: str, label: str, **kw) -> Line2D:
    """A legend entry without data."""
    return Line2D([], [], color=color, marker=marker, linestyle="-", label=label, **kw)


