"""The page's charts as inline SVG: interval bands and the pairwise win-probability heatmap.

Figures are drawn with matplotlib outside pyplot (no backend, nothing to close) and saved as
SVG with text kept as ``<text>`` (no embedded or fetched fonts); the XML prolog and the
metadata block are dropped so the markup sits inside the HTML page, and the ``<svg>`` element
gets ``role="img"`` and an ``aria-label`` (its text alternative). matplotlib is imported only
when a chart is drawn.
"""

from __future__ import annotations

import io
import re
from html import escape

import numpy as np
import pandas as pd

__all__ = ["bands_svg", "drift_svg", "heatmap_svg", "inline_svg"]

#: Models beyond which the heatmap's cells carry no numbers (only the significance marks).
ANNOTATE_UP_TO = 16
#: The heatmap's widest figure in inches: the page's column (1,110 px) at 96 px per inch.
HEATMAP_WIDTH = 11.5


def inline_svg(fig, label: str) -> str:
    """A matplotlib figure as an ``<svg>`` element for an HTML page.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    label : str
        The chart's text alternative (escaped here).

    Returns
    -------
    str
        The ``<svg>`` element, scaled to its container's width.
    """
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "ratings-report"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, count=1, flags=re.S)
    head_end = text.index(">")
    head = re.sub(r'\sheight="[^"]*"', "", text[:head_end])  # width stays: its natural size
    head += f' role="img" aria-label="{escape(label, quote=True)}" class="chart"'
    return head + text[head_end:]


def bands_svg(table: pd.DataFrame, *, anchor: str | None, highlight: list[str],
              label: str) -> str:  # fmt: skip
    """Every model's Elo with its interval band (:func:`ratings.plot.plot_ratings`), as SVG.

    Parameters
    ----------
    table : pandas.DataFrame
        Shaped like :meth:`ratings.Ratings.to_frame`.
    anchor : str or None
        The anchor (drawn as a diamond).
    highlight : list of str
        Models drawn in the second colour (the models tied with the leader).
    label : str
        Text alternative.
    """
    from matplotlib.figure import Figure

    from ratings.plot.bands import plot_ratings
    from ratings.plot.figures import rows_size

    fig = Figure(figsize=rows_size(len(table), table["model"].astype(str), title=False),
                 layout="constrained")  # fmt: skip
    ax = plot_ratings(table, fig.add_subplot(), highlight=highlight or None,
                      anchor=anchor if anchor in set(table["model"]) else None)  # fmt: skip
    legend = ax.get_legend()
    for text in [] if legend is None else legend.get_texts():
        if text.get_text() == "highlighted":
            text.set_text("tied with the leader")
    return inline_svg(fig, label)


def drift_svg(table: pd.DataFrame, *, label: str) -> str:
    """Old against new Elo with their interval bands (:func:`ratings.plot.drift.plot_drift`),
    as SVG; ``table`` is :attr:`ratings.stability.drift.Drift.table`."""
    from ratings.plot.drift import plot_drift
    from ratings.plot.figures import bare_axes

    ax = plot_drift(table, new_axes=bare_axes)
    return inline_svg(ax.figure, label)


def heatmap_svg(order: list[str], pairs: pd.DataFrame, *, level: float, label: str) -> str:
    """P(row beats column) for every pair, with a mark where the difference is significant.

    Parameters
    ----------
    order : list of str
        Models, best first (rows and columns).
    pairs : pandas.DataFrame
        Shaped like :meth:`ratings.Ratings.pairwise` (``model_a, model_b, p_win``, and
        ``p_adjusted`` for the marks).
    level : float
        A pair is marked when its adjusted p-value is below ``1 - level``.
    label : str
        Text alternative.
    """
    from matplotlib.figure import Figure

    m = len(order)
    pos = {name: k for k, name in enumerate(order)}
    prob = np.full((m, m), np.nan)
    sig = np.zeros((m, m), dtype=bool)
    a = pairs["model_a"].astype(str).map(pos)
    b = pairs["model_b"].astype(str).map(pos)
    keep = a.notna() & b.notna()
    i, j = a[keep].astype(int).to_numpy(), b[keep].astype(int).to_numpy()
    p = pairs.loc[keep, "p_win"].to_numpy(dtype=float)
    prob[i, j], prob[j, i] = p, 1.0 - p
    if "p_adjusted" in pairs:
        s = pairs.loc[keep, "p_adjusted"].to_numpy(dtype=float) < 1.0 - level
        sig[i, j] = sig[j, i] = s
    # At most HEATMAP_WIDTH inches wide, so that the page shows it unscaled; the labels fill
    # three quarters of a cell (points: the matrix's side less the labels', over m).
    side = float(np.clip(2.5 + 0.28 * m, 5.0, HEATMAP_WIDTH - 2.0))
    font = float(np.clip(0.75 * 72.0 * (side - 1.7) / m, 6.5, 9.0))
    fig = Figure(figsize=(side + 2.0, side), layout="constrained")
    ax = fig.add_subplot()
    image = ax.imshow(prob, cmap="cividis", vmin=0.0, vmax=1.0, interpolation="nearest")
    fig.colorbar(image, ax=ax, shrink=0.6, label="P(row beats column)")
    ax.set_xticks(range(m), order, rotation=90, fontsize=font)
    ax.set_yticks(range(m), order, fontsize=font)
    if m <= ANNOTATE_UP_TO:
        for r, c in zip(*np.nonzero(np.isfinite(prob)), strict=True):
            dark = prob[r, c] < 0.55  # cividis is dark at low values
            ax.text(c, r, f"{prob[r, c]:.2f}" + ("*" if sig[r, c] else ""), ha="center",
                    va="center", fontsize=7, color="white" if dark else "black")  # fmt: skip
    else:
        r, c = np.nonzero(sig)
        ax.scatter(c, r, marker="o", s=6, facecolors="white", edgecolors="black",
                   linewidths=0.4)  # fmt: skip
    ax.set_xlabel(f"* / dot: significant at {level:.0%} (multiplicity-adjusted)")
    return inline_svg(fig, label)
