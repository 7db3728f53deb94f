"""The judge-audit plot: each judge's position bias and self-preference with intervals, and
the style coefficients of a style-controlled fit below them.

Re-exported by :mod:`ratings.plot.bands` (``from ratings.plot.bands import plot_audit``); it
follows the same
contract: ``ax=None`` makes a figure sized for its rows, the Axes is returned, nothing is shown.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from ratings.core.schema import ELO_SCALE
from ratings.plot.figures import (
    AxesFactory,
    figure_options,
    legend_above,
    make_axes,
    pyplot_axes,
    require_columns,
    rows_size,
    set_title,
)
from ratings.plot.style import draw_coefficients, style_coefficients

__all__ = ["draw_audit", "plot_audit"]

_EFFECTS = (  # (label, estimate, lower, upper, flagged column, colour, marker, offset)
    ("position bias (slot A)", "position_bias", "position_lower", "position_upper",
     "position_flagged", "C0", "o", 0.17),
    ("self-preference (own family)", "self_preference", "self_lower", "self_upper",
     "self_flagged", "C3", "s", -0.17),
)  # fmt: skip


def plot_audit(audit, ax: Axes | None = None, *, unit: str = "elo", title: str | None = None,
               style=None, size: tuple[float, float] | None = None,
               dpi: float | None = None) -> Axes:  # fmt: skip
    """Draw each judge's position bias and self-preference with their intervals.

    Parameters
    ----------
    audit : ratings.Audit or pandas.DataFrame or None
        The result of :func:`ratings.audit.judge_audit`, or its ``judges`` table (columns ``judge``,
        ``position_bias``, ``position_lower``, ``position_upper``, ``self_preference``,
        ``self_lower``, ``self_upper``; optionally ``position_flagged`` / ``self_flagged``).
        ``None`` draws only the ``style`` coefficients.
    ax : matplotlib.axes.Axes, optional
    unit : {"elo", "log-odds"}, default="elo"
        Elo points (400 / ln 10 per unit of log-odds) or log-odds.
    title : str, optional
        Wrapped to the width of the Axes.
    style : Ratings or pandas.DataFrame, optional
        A fit with ``style=[...]`` (its ``style`` table is drawn) or that table (``feature,
        coef, lower, upper`` in log-odds, e.g. a ``--style-out`` file): one row per feature
        below the judges, its coefficient per root-mean-square of the feature with its
        interval, on the same scale as the judge effects (a shift of the log-odds).
    size, dpi : optional
        The new figure's size in inches (``(W, H)`` or ``"W,H"``) and resolution; only
        without ``ax``.

    Returns
    -------
    matplotlib.axes.Axes
        One row per judge, best-estimated effects as points with horizontal interval bars; a
        filled marker is a flagged effect (interval excluding 0), a hollow one is not; effects
        that could not be estimated are written as "n/a" at 0. A dashed line marks 0 (no bias).
        Style coefficients are green diamonds (``gid="style-points"``) below a separating line.
        The legend sits above the Axes.
    """
    return draw_audit(audit, ax, unit=unit, title=title, style=style, size=size, dpi=dpi,
                       new_axes=pyplot_axes)  # fmt: skip


def draw_audit(audit, ax, *, unit, title, style, size, dpi, new_axes: AxesFactory) -> Axes:
    """The body of :func:`plot_audit`, drawing a new figure with ``new_axes``."""
    size, dpi = figure_options(ax, size, dpi)
    if audit is None and style is None:
        raise ValueError("Nothing to draw: pass an audit, a style fit (`style=`), or both.")
    table = None if audit is None else getattr(audit, "judges", audit)
    if table is not None:
        if not isinstance(table, pd.DataFrame):
            raise TypeError(f"`audit` must be an Audit or its judges DataFrame; got "
                            f"{type(audit).__name__}.")  # fmt: skip
        require_columns(table, ["judge"] + [c for e in _EFFECTS for c in e[1:4]],
                        "the audit's judges table")  # fmt: skip
    coefs = None if style is None else style_coefficients(style)
    if unit not in ("elo", "log-odds"):
        raise ValueError(f"`unit` must be 'elo' or 'log-odds'; got {unit!r}.")
    scale = ELO_SCALE if unit == "elo" else 1.0
    n = 0 if table is None else len(table)
    k = 0 if coefs is None else len(coefs)
    labels = [] if table is None else [str(j) for j in table["judge"]]
    if table is not None and "n" in table.columns:
        labels = [f"{j} (n={int(c):,})" for j, c in zip(labels, table["n"], strict=True)]
    labels += [] if coefs is None else [f"style: {f}" for f in coefs["feature"]]
    if ax is None:  # two effects per judge: 2.5 label rows each; one row per coefficient
        ax = make_axes(new_axes, rows_size(2.5 * max(n, 2 if k == 0 else 0) + 1.5 * k, labels,
                                           title is not None, legend=True), size, dpi)
    gap = 1.0 if n and k else 0.0  # the separating line between judges and coefficients
    y = np.arange(n, dtype=np.float64)[::-1] + k + gap
    handles = []
    if table is not None:
        handles += _draw_effects(ax, table, y, scale)
    yc = np.arange(k, dtype=np.float64)[::-1]
    if coefs is not None:
        handles.append(draw_coefficients(ax, coefs, yc, scale=scale))
        if n:
            ax.axhline(k - 0.5 + gap / 2, color="0.6", linewidth=0.8, gid="audit-style-rule")
    ax.axvline(0.0, color="0.4", linestyle="--", linewidth=1.0, gid="audit-zero")
    ax.set_yticks(np.r_[y, yc], labels=labels)
    ax.set_ylim(-0.6, n + k + gap - 0.4)
    ax.set_xlabel("effect in Elo points" if unit == "elo" else "effect in log-odds")
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    legend_above(ax, handles, title="filled: interval excludes 0")
    set_title(ax, title)
    return ax


def _draw_effects(ax: Axes, table: pd.DataFrame, y, scale: float) -> list:
    """Each judge's position bias and self-preference at rows ``y``; the legend handles."""
    handles = []
    for label, est, lo, hi, flag, colour, marker, off in _EFFECTS:
        e = table[est].to_numpy(dtype=np.float64) * scale
        lower = table[lo].to_numpy(dtype=np.float64) * scale
        upper = table[hi].to_numpy(dtype=np.float64) * scale
        flagged = (_as_bool(table[flag]) if flag in table.columns
                   else (lower > 0) | (upper < 0))  # fmt: skip
        ok = np.isfinite(e)
        ax.hlines(y[ok] + off, lower[ok], upper[ok], colors=colour, linewidth=2.0, alpha=0.7,
                  gid=f"audit-bands-{est}")  # fmt: skip
        h = ax.plot(e[ok & flagged], y[ok & flagged] + off, linestyle="none", marker=marker,
                    color=colour, label=label, zorder=3, gid=f"audit-flagged-{est}")[0]
        ax.plot(e[ok & ~flagged], y[ok & ~flagged] + off, linestyle="none", marker=marker,
                markerfacecolor="white", color=colour, zorder=3, gid=f"audit-points-{est}")
        handles.append(h)
        for yy in y[~ok] + off:
            ax.text(0.0, yy, " n/a", color=colour, va="center", ha="left", fontsize="small",
                    gid=f"audit-na-{est}")  # fmt: skip
    return handles


def _as_bool(values: pd.Series) -> np.ndarray:
    """A flag column as booleans, also when read back from a CSV as text ("True"/"False")."""
    if values.dtype == object or pd.api.types.is_string_dtype(values.dtype):
        return values.astype(str).str.strip().str.lower().isin(["true", "1", "yes"]).to_numpy()
    return values.fillna(False).to_numpy(dtype=bool)
