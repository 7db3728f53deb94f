"""The CR2 working rows of a tie model's fit (Davidson, Rao-Kupper): the strengths and the tie
parameter, read by the design's one interval path (:func:`ratings.models.covariates._cr2`, with
covariate columns or without, :func:`~ratings.models.covariates.pair_built`).

A verdict of a tie model has three outcomes, so its information in (d, phi) (d = s_i - s_j,
phi the tie parameter's unbounded scale) has rank two: the working model of
:mod:`ratings.inference` gives each aggregated row two working rows, the columns of a
factor L of the row's expected information I = L L^T,

    x_1 = sqrt(I_dd) (e_i - e_j) + I_dphi / sqrt(I_dd) e_phi,
    x_2 = sqrt(I_phiphi - I_dphi^2 / I_dd) e_phi,

with the tie parameter as the last parameter (``M``, after the covariates on a design with
covariates: the place of Crowd-BT's one judge quality, so the working rows, the exact and series
paths and the sparse path of many small clusters serve it unchanged). The CR2 adjustment
depends on the rows only through each cluster's information H_g = sum x x^T and its summed
score (see :mod:`ratings.inference`), so the choice of factor does not matter, and the second
rows of a cluster, all along e_phi, are summed into one; the working residuals of a row solve
X_r^T e_r = (score_d, score_phi).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ratings.inference.working import WorkingRows

__all__ = ["tie_working"]


def tie_working(rows, info, scores=None, *, x: NDArray[np.float64] | None = None,
                style=None) -> tuple[WorkingRows, NDArray[np.float64] | None]:  # fmt: skip
    """Working rows of a tie model's fit, in cluster order: each of ``rows``' rows (``ii``,
    ``jj``, ``cluster`` in cluster order) as its first factor column, then one row per cluster
    on the tie parameter alone (the second columns, e_phi times b_2, summed over the cluster:
    b = sqrt(sum b_2^2), which leaves the cluster's information and score as they are).

    ``info``: each row's expected information (I_dd, I_dphi, I_phiphi); ``scores``: its summed
    scores (on d, on phi) for the working residuals (returned, else None); ``x``: the rows'
    covariate block, the design with covariates' (``style``: its kernels).
    """
    idd, idp, ipp = info
    m, r, g = rows.n_models, rows.ii.size, rows.n_clusters
    with np.errstate(divide="ignore", invalid="ignore"):  # the factor's columns (a1, b1), (0, b2)
        a1 = np.sqrt(np.maximum(idd, 0.0))
        b1 = np.where(a1 > 0.0, idp / a1, 0.0)
    b2sq = np.maximum(ipp - b1 * b1, 0.0)
    cluster = np.asarray(rows.cluster, dtype=np.int64)
    b_tie = np.sqrt(np.bincount(cluster, b2sq, g))
    place = np.arange(r) + cluster  # each earlier cluster's extra row shifts a row by one
    tie_at = np.searchsorted(cluster, np.arange(g), side="right") + np.arange(g)
    n = r + g
    ii, jj = np.zeros(n, np.int64), np.ones(n, np.int64)  # a = 0 at (0, 1): the pair is unread
    ii[place], jj[place] = rows.ii, rows.jj
    a, b = np.zeros(n), np.zeros(n)
    a[place], b[place], b[tie_at] = a1, b1, b_tie
    p = 0 if x is None else x.shape[1]
    if x is not None:
        x, given = np.zeros((n, p)), x
        x[place] = given
    working = WorkingRows(ii=ii, jj=jj, judge=np.zeros(n, np.int64), a=a, b=b, n_clusters=g,
                          cluster=np.repeat(np.arange(g), np.bincount(cluster, minlength=g) + 1),
                          n_params=m + p + 1, n_models=m, x=x, style=style)  # fmt: skip
    if scores is None:
        return working, None
    sd, sp = scores
    b2 = np.sqrt(b2sq)
    with np.errstate(divide="ignore", invalid="ignore"):
        e1 = np.where(a1 > 0.0, sd / a1, 0.0)
        e2 = np.where(b2 > 0.0, (sp - b1 * e1) / b2, 0.0)
        e_tie = np.where(b_tie > 0.0, np.bincount(cluster, b2 * e2, g) / b_tie, 0.0)
    residual = np.zeros(n)
    residual[place], residual[tie_at] = e1, e_tie
    return working, residual
