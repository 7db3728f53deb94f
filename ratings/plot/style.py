"""Style-control plots: raw and style-controlled bands side by side (the body of
:func:`ratings.plot.bands.plot_style`), and the style coefficients with their intervals (drawn
alone or below the judge audit by :func:`ratings.plot.audit.plot_audit`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.font_manager import FontProperties

from ratings.plot.figures import (
    AxesFactory,
    check_top,
    figure_options,
    label_width,
    ratings_table,
    require_columns,
    root_figure,
    rows_size,
    set_title,
    wrap_text,
)
from ratings.result import Ratings

__all__ = ["STYLE_COLOR", "draw_coefficients", "draw_style", "style_coefficients"]

STYLE_COLOR = "C2"


def style_coefficients(style) -> pd.DataFrame:
    """The coefficients table of a style fit (``Ratings.style``), or such a table itself (a
    ``--style-out`` file): ``feature, coef, lower, upper`` in log-odds."""
    table = style.style if isinstance(style, Ratings) else style
    if isinstance(style, Ratings) and table is None:
        raise ValueError("This fit has no style coefficients; fit with `style=[...]`.")
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"`style` must be a Ratings fitted with style or its `style` table; got "
                        f"{type(style).__name__}.")  # fmt: skip
    require_columns(table, ["feature", "coef", "lower", "upper"], "the style coefficients table")
    return table


def draw_coefficients(ax: Axes, table: pd.DataFrame, y, *, scale: float,
                      label: str = "style coefficient (per RMS of x)"):  # fmt: skip
    """Each style coefficient at the rows ``y`` as a diamond with its interval bar (filled when
    the interval excludes 0); return the legend handle. ``gid``: ``style-bands``,
    ``style-points``."""
    coef = table["coef"].to_numpy(dtype=np.float64) * scale
    lower = table["lower"].to_numpy(dtype=np.float64) * scale
    upper = table["upper"].to_numpy(dtype=np.float64) * scale
    y = np.asarray(y, dtype=np.float64)
    flagged = (lower > 0) | (upper < 0)
    ax.hlines(y, lower, upper, colors=STYLE_COLOR, linewidth=2.0, alpha=0.7, gid="style-bands")
    (h,) = ax.plot(coef, y, linestyle="none", marker="D", color=STYLE_COLOR, zorder=3,
                   label=label, gid="style-points")  # fmt: skip
    for k in np.flatnonzero(~flagged):  # hollow: the interval includes 0
        ax.plot(coef[k], y[k], linestyle="none", marker="D", markerfacecolor="white",
                color=STYLE_COLOR, zorder=4)  # fmt: skip
    return h


def _features(controlled) -> list[str]:
    if isinstance(controlled, Ratings) and controlled.style is not None:
        return [str(f) for f in controlled.style["feature"]]
    return []


def draw_style(controlled, raw, axes, *, level, highlight, top, title, size, dpi,
               new_figure: AxesFactory, draw_bands: Callable[..., Axes]) -> np.ndarray:  # fmt: skip
    """The body of :func:`ratings.plot.bands.plot_style`; ``draw_bands`` draws one panel."""
    if axes is not None and len(axes) != 2:
        raise ValueError(f"`axes` must be two Axes (raw, controlled); got {len(axes)}.")
    size, dpi = figure_options(None if axes is None else axes[0], size, dpi)
    ct = ratings_table(controlled, level=level)
    rt = ratings_table(raw, level=level)
    a, b = set(ct.frame["model"]), set(rt.frame["model"])
    if a != b:
        only_c, only_r = sorted(a - b)[:5], sorted(b - a)[:5]
        raise ValueError(
            "The controlled and raw fits must rate the same models (fit the same verdicts with "
            f"and without style); only in the controlled fit: {only_c}; only in the raw: "
            f"{only_r}."
        )
    order = ct.frame["model"].tolist()
    n = len(order) if check_top(top) is None else min(top, len(order))
    n_rows = n + (1 if n < len(order) else 0)
    if axes is None:
        width, height = rows_size(n_rows, order[:n], title is not None)
        width = float(np.clip(2 * 4.2 + label_width(order[:n]) + 1.0, 9.0, 16.0))
        default = (width, height + 0.6)  # panel titles, the legend below
        left = new_figure(default if size is None else size, dpi)
        fig = root_figure(left)
        fig.delaxes(left)
        left, right = fig.subplots(1, 2, sharex=True)
        fitted = size is not None
    else:
        left, right = axes
        fig, fitted = root_figure(left), True
    for ax, obj in ((left, raw), (right, controlled)):
        draw_bands(obj, ax, level=level, highlight=highlight, top=top, anchor=None,
                      title=None, new_axes=new_figure, ranks=False, order=order,
                      fit_labels=fitted)  # fmt: skip
    handles = []
    for ax in (left, right):
        legend = ax.get_legend()
        if legend is not None:
            if not handles:
                handles = list(legend.legend_handles)
            legend.remove()
    right.tick_params(axis="y", labelleft=False)
    keep = [bool(t.get_text()) for t in left.get_yticklabels()]
    fontsize = min(left.get_yticklabels()[0].get_fontsize(),
                   FontProperties(size="small").get_size_in_points())  # fmt: skip
    _rank_change(right, ct, rt, order[:n], keep, fontsize)
    features = _features(controlled)
    set_title(left, "raw")
    set_title(right, "style-controlled" + (f" ({', '.join(features)})" if features else ""))
    if handles:
        fig.legend(handles=handles, loc="outside lower center", ncols=len(handles),
                   fontsize="small", frameon=False)  # fmt: skip
    if title is not None:
        fig.draw_without_rendering()
        room = 0.95 * fig.bbox.width
        fig.suptitle(wrap_text(fig, str(title), room, "large"), fontsize="large")
    return np.array([left, right], dtype=object)


def _rank_change(ax: Axes, ct, rt, shown: list[str], keep: list[bool],
                 fontsize: float) -> None:  # fmt: skip
    """Each row's rank change (raw minus controlled) on the right of the controlled panel."""
    if "rank_change" in ct.frame.columns:
        change = pd.to_numeric(ct.frame.set_index("model")["rank_change"], errors="coerce")
    else:  # ranks by Elo in each fit (ties share the better rank)
        c = ct.frame.set_index("model")["elo"].rank(ascending=False, method="min")
        r = rt.frame.set_index("model")["elo"].rank(ascending=False, method="min")
        change = r.reindex(c.index) - c
    change = change.reindex(shown)
    text = ["" if pd.isna(v) or not k else "0" if v == 0 else f"{v:+.0f}"
            for v, k in zip(change, keep, strict=True)]  # fmt: skip
    y = np.arange(len(shown), dtype=np.float64)[::-1]
    side = ax.secondary_yaxis("right")
    side.set_gid("style-rank-change")
    side.set_yticks(y, labels=text)
    side.tick_params(length=0, labelsize=fontsize)
    for label, v in zip(side.get_yticklabels(), change, strict=True):
        if pd.notna(v) and v != 0:
            label.set_color("C2" if v > 0 else "C3")
    side.set_ylabel("rank change (raw \u2212 controlled)", fontsize="small")

