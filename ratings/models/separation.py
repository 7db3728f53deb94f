"""Penalised fits of boards without a maximum-likelihood estimate: which ratings exist only
because of the penalty, and their open intervals.

When the win graph is not strongly connected (a model never lost, never won, or a group never
lost to the rest), the likelihood keeps rising as some ratings run off to +-infinity. A ridge
penalty (``penalty > 0``) makes every estimate finite, but the finite value of a model outside
the anchor's strongly connected group is set by the penalty, not by the data, and its Wald
interval is meaningless (a model that never lost printed Elo 2066 [2034, 2097] for a true 1351).

Such a model is *flagged*: its interval is open on the side the data leave unbounded (+inf for
a group that beat the reference group, -inf for one it beat; both sides for a group never
compared with it), and it is left out of rank intervals. The other side is bounded by the
record against the reference group itself: for a group above, the smallest shift s of its
ratings (members keep their fitted differences) at which winning every one of its verdicts
against the reference group still has probability >= (1 - level) / 2 under Bradley-Terry,
opponents at their fitted ratings (an exact one-sided tail bound, like Clopper-Pearson's for an
all-success record; the opponents' own uncertainty is not added). The reference group is the
anchor's strongly connected group, or the largest one when the ratings are centred (on a tie,
the one holding the first model in the board's order).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.errors import PenaltyOnlyWarning
from ratings.data.comparisons import Comparisons
from ratings.models.existence import win_components

__all__ = ["flag_unbounded", "open_bounds", "warn_unbounded"]


def flag_unbounded(rows: Comparisons, strength: NDArray[np.float64], ref: int | None,
                   level: float) -> pd.DataFrame | None:  # fmt: skip
    """The models whose rating exists only because of the penalty (``None`` if there are none).

    Parameters
    ----------
    rows : Comparisons
        The fit's rows (one per judge and pair).
    strength : ndarray
        The penalised estimate.
    ref : int or None
        The anchor's index (``None``: centred ratings; the largest group is the reference).
    level : float
        Confidence level of the bounded side.

    Returns
    -------
    pandas.DataFrame or None
        Indexed by model: ``direction`` (+1, -1 or 0), ``bound`` (strength of the bounded side,
        NaN when both sides are open) and ``reason``.
    """
    _, labels, reach = win_components(rows)
    if reach.shape[0] == 1:
        return None
    if ref is None:  # the largest group; on a tie, the one holding the first model
        sizes = np.bincount(labels)
        ref = int(np.flatnonzero(sizes[labels] == sizes.max())[0])
    base = labels[ref]
    flagged = labels != base
    up = reach[labels, base] & flagged  # a path from the group to the reference: above it
    down = reach[base, labels] & flagged
    direction = np.where(up, 1, np.where(down, -1, 0))
    bound = np.full(rows.n_models, np.nan)
    alpha = (1.0 - level) / 2.0
    for comp in np.unique(labels[flagged]):
        members = labels == comp
        sign = int(direction[members][0])
        if sign == 0:
            continue
        # verdicts between the group and the reference group, seen from the group's side
        a_in, b_in = members[rows.ii], members[rows.jj]
        a_ref, b_ref = labels[rows.ii] == base, labels[rows.jj] == base
        sel = (a_in & b_ref) | (b_in & a_ref)
        if not sel.any():
            continue
        d = strength[rows.ii[sel]] - strength[rows.jj[sel]]
        d = np.where(a_in[sel], d, -d)  # group member minus opponent
        n = (rows.wi + rows.wj + rows.tt)[sel]
        shift = _tail_shift(sign * d, n, alpha)  # in the direction of the record
        bound[members] = strength[members] - sign * shift
    reason = np.where(direction == 1, "never lost to the reference group",
                      np.where(direction == -1, "never beat the reference group",
                               "never compared with the reference group"))  # fmt: skip
    idx = np.flatnonzero(flagged)
    return pd.DataFrame({"direction": direction[idx], "bound": bound[idx],
                         "reason": reason[idx]}, index=rows.models[idx])  # fmt: skip


def _tail_shift(d: NDArray[np.float64], n: NDArray[np.float64], alpha: float) -> float:
    """The shift s >= 0 with prod sigma(d - s)^n = alpha: lowering the group by s makes its
    perfect record an alpha-tail event (bisection on the log-probability, decreasing in s)."""
    from ratings.kernels.fit_ref import log_expit

    def logp(s: float) -> float:
        return float(n @ log_expit(d - s))

    target = np.log(alpha)
    if logp(0.0) <= target:
        return 0.0
    lo, hi = 0.0, 1.0
    while logp(hi) > target:
        hi *= 2.0
    for _ in range(100):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if logp(mid) > target else (lo, mid)
    return (lo + hi) / 2.0


def open_bounds(unbounded: pd.DataFrame, models: pd.Index, offset: float, scale: float,
                lower: NDArray[np.float64], upper: NDArray[np.float64]):
    """Elo intervals with the flagged models' open sides: (lower, upper) copies.

    ``unbounded`` is :func:`flag_unbounded`'s table; ``offset + scale * s`` is a model's Elo.
    """
    lower, upper = np.array(lower, dtype=np.float64), np.array(upper, dtype=np.float64)
    idx = models.get_indexer(unbounded.index)
    bound = offset + scale * unbounded["bound"].to_numpy()
    sign = unbounded["direction"].to_numpy()
    lower[idx] = np.where(sign == 1, np.where(np.isnan(bound), -np.inf, bound), -np.inf)
    upper[idx] = np.where(sign == -1, np.where(np.isnan(bound), np.inf, bound), np.inf)
    return lower, upper


def warn_unbounded(u: pd.DataFrame, stacklevel: int = 3, what: str = "the penalty") -> None:
    """Say which ratings exist only because of the penalty (``what``: which one)."""
    names = [str(n) for n in u.index[:5]]
    warnings.warn(
        f"{len(u)} model(s) have a rating only because of {what} ({names}"
        f"{' and more' if len(u) > 5 else ''}: {u['reason'].iloc[0]}, ...). Their intervals are "
        "open on the unbounded side and they are left out of rank intervals; add verdicts that "
        "connect them to rate them.",
        PenaltyOnlyWarning,
        stacklevel=stacklevel,
    )
