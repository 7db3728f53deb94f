"""The judge-audit plot: each judge's position bias and self-preference with intervals.

Re-exported by :mod:`ratings.plot.bands` (``from ratings.plot.bands import plot_audit``); it
follows the same
contract: ``ax=None`` makes a figure sized for its rows, the Axes is returned, nothing is shown.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from ratings.core.schema import ELO_SCALE
from ratings.plot.figures import pyplot_axes, require_columns, rows_size

__all__ = ["plot_audit"]

_EFFECTS = (  # (label, estimate, lower, upper, flagged column, colour, marker, offset)
    ("position bias (slot A)", "position_bias", "position_lower", "position_upper",
     "position_flagged", "C0", "o", 0.17),
    ("self-preference (own family)", "self_preference", "self_lower", "self_upper",
     "self_flagged", "C3", "s", -0.17),
)  # fmt: skip


def plot_audit(audit, ax: Axes | None = None, *, unit: str = "elo",
               title: str | None = None) -> Axes:  # fmt: skip
    """Draw each judge's position bias and self-preference with their intervals.

    Parameters
    ----------
    audit : ratings.Audit or pandas.DataFrame
        The result of :func:`ratings.audit.report`, or its ``judges`` table (columns ``judge``,
        ``position_bias``, ``position_lower``, ``position_upper``, ``self_preference``,
        ``self_lower``, ``self_upper``; optionally ``position_flagged`` / ``self_flagged``).
    ax : matplotlib.axes.Axes, optional
    unit : {"elo", "log-odds"}, default="elo"
        Elo points (400 / ln 10 per unit of log-odds) or log-odds.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        One row per judge, best-estimated effects as points with horizontal interval bars; a
        filled marker is a flagged effect (interval excluding 0), a hollow one is not; effects
        that could not be estimated are written as "n/a" at 0. A dashed line marks 0 (no bias).
    """
    table = getattr(audit, "judges", audit)
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"`audit` must be an Audit or its judges DataFrame; got "
                        f"{type(audit).__name__}.")  # fmt: skip
    require_columns(table, ["judge"] + [c for e in _EFFECTS for c in e[1:4]],
                    "the audit's judges table")  # fmt: skip
    if unit not in ("elo", "log-odds"):
        raise ValueError(f"`unit` must be 'elo' or 'log-odds'; got {unit!r}.")
    scale = ELO_SCALE if unit == "elo" else 1.0
    n = len(table)
    if ax is None:  # two effects per judge: 2.5 label rows each, room for the legend
        ax = pyplot_axes(rows_size(2.5 * max(n, 2), [f"{j} (n=100,000)" for j in table["judge"]],
                                   title is not None))
    y = np.arange(n, dtype=np.float64)[::-1]
    handles = []
    for label, est, lo, hi, flag, colour, marker, off in _EFFECTS:
        e = table[est].to_numpy(dtype=np.float64) * scale
        lower = table[lo].to_numpy(dtype=np.float64) * scale
        upper = table[hi].to_numpy(dtype=np.float64) * scale
        flagged = (table[flag].to_numpy(dtype=bool) if flag in table.columns
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
    ax.axvline(0.0, color="0.4", linestyle="--", linewidth=1.0, gid="audit-zero")
    labels = [str(j) for j in table["judge"]]
    if "n" in table.columns:
        labels = [f"{j} (n={int(c):,})" for j, c in zip(labels, table["n"], strict=True)]
    ax.set_yticks(y, labels=labels)
    ax.set_ylim(-0.6, n - 0.4)
    ax.set_xlabel("effect in Elo points" if unit == "elo" else "effect in log-odds")
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(handles=handles, loc="best", fontsize="small",
              title="filled: interval excludes 0", title_fontsize="small")  # fmt: skip
    if title is not None:
        ax.set_title(title)
    return ax
