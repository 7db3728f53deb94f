"""The design without covariates: d_r = s_i - s_j on the collapsed counts (one row per judge and
model pair), the fast path every family takes when a fit has no covariate columns.

:func:`pair_objective` is the negative log-likelihood, gradient and Hessian over (strengths,
the family's own parameters) from a family's row terms (:mod:`ratings.models.families`):
the strengths' part a graph Laplacian of the rows' information and a scatter of their scores;
a family with parameters of its own (one per slot: Crowd-BT's eta per judge) adds their scores
per slot and the joint (M + K)-square block (both by :func:`pair_block`, which also places
:func:`pair_meat`'s per-verdict meat, the sandwich's without clusters). Designs with covariates
(style features, judge effects) are :mod:`ratings.models.covariates`'.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ratings.data.comparisons import Comparisons
from ratings.models.families import Family

__all__ = ["pair_block", "pair_meat", "pair_objective"]


def pair_objective(family: Family, k, theta: NDArray[np.float64], extra: NDArray[np.float64],
                   rows: Comparisons, n_slots: int = 0,
                   slot: NDArray[np.int64] | None = None) -> tuple:  # fmt: skip
    """(nll, gradient, Hessian) of ``family`` on ``rows`` at the strengths ``theta`` and the
    family's parameters ``extra`` (``n_slots`` of them, row r's ``extra[slot[r]]``; the rows'
    judges by default), over (theta, extra); kernels ``k``."""
    slot = rows.judge if slot is None else slot
    t = family.row_terms(k, theta, extra, rows.ii, rows.jj, slot, rows.wi, rows.wj, rows.tt,
                         False)  # fmt: skip
    grad = k.scatter_diff(rows.n_models, rows.ii, rows.jj, t.score_d)
    if n_slots:
        grad = np.concatenate([grad, np.bincount(slot, t.score_x, n_slots)])
    return t.nll, -grad, pair_block(k, rows, n_slots, slot, t.info_dd, t.info_dx, t.info_xx)


def pair_meat(family: Family, k, theta: NDArray[np.float64], extra: NDArray[np.float64],
              rows: Comparisons, n_slots: int = 0,
              slot: NDArray[np.int64] | None = None) -> NDArray[np.float64]:  # fmt: skip
    """The sum over verdicts of the score's outer product over (theta, extra), the parameters
    and slots of :func:`pair_objective`."""
    slot = rows.judge if slot is None else slot
    t = family.row_terms(k, theta, extra, rows.ii, rows.jj, slot, rows.wi, rows.wj, rows.tt,
                         True)  # fmt: skip
    return pair_block(k, rows, n_slots, slot, t.meat_dd, t.meat_dx, t.meat_xx)


def pair_block(k, rows: Comparisons, n_slots: int, slot: NDArray[np.int64], wdd, wdx,
               wxx) -> NDArray[np.float64]:  # fmt: skip
    """The rows' weights on (d, their slot's parameter) summed over (theta, extra): the
    Laplacian of ``wdd``, or with slots the joint (M + K)-square block."""
    if not n_slots:
        return k.laplacian(rows.n_models, rows.ii, rows.jj, wdd)
    return k.crowd_assemble(rows.n_models, n_slots, rows.ii, rows.jj, slot, wdd, wdx, wxx)
