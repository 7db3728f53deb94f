"""CR2 pieces of a tie model's fit (Davidson, Rao-Kupper): the strengths and the tie parameter.

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

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from ratings.core.linalg import block
from ratings.inference.cluster import ClusterInference
from ratings.inference.small import working_inference
from ratings.inference.working import WorkingRows

__all__ = ["row_terms_by_pair", "tie_cluster_scores", "tie_inference", "tie_working"]

RowTerms = Callable[..., tuple]


def row_terms_by_pair(theta: NDArray[np.float64], phi: float, data,
                      row_terms: RowTerms) -> tuple:  # fmt: skip
    """Each row's summed scores and expected information on (d, phi): the model's terms depend
    on the pair only, so they are computed once per pair of models met (one verdict of each
    outcome) and combined with the rows' counts."""
    m = data.n_models
    key = data.ii * m + data.jj
    pairs = np.flatnonzero(np.bincount(key, minlength=m * m))
    pi, pj = pairs // m, pairs % m
    one, zero = np.ones(pairs.size), np.zeros(pairs.size)
    outcome = [row_terms(theta, phi, pi, pj, *w, False)
               for w in ((one, zero, zero), (zero, one, zero), (zero, zero, one))]
    at = np.empty(m * m, dtype=np.int64)
    at[pairs] = np.arange(pairs.size)
    at = at[key]
    counts = (data.wi, data.wj, data.tt)
    sd = sum(w * o[1][at] for w, o in zip(counts, outcome, strict=True))
    sp = sum(w * o[2][at] for w, o in zip(counts, outcome, strict=True))
    n = data.wi + data.wj + data.tt
    info = [n * outcome[0][c][at] for c in (3, 4, 5)]  # one verdict's, whatever its outcome
    return sd, sp, *info


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


def tie_cluster_scores(theta: NDArray[np.float64], phi: float, data, row_terms: RowTerms,
                       k, terms: tuple | None = None) -> NDArray[np.float64]:  # fmt: skip
    """Each cluster's summed score on the strengths and the tie parameter, (G x (M + 1))."""
    m, g = data.n_models, data.n_clusters
    sd, sp, *_ = row_terms_by_pair(theta, phi, data, row_terms) if terms is None else terms
    if k.__name__.endswith("_ref"):  # the twin's scatter-add is slow: count by cell instead
        base = np.asarray(data.cluster, dtype=np.int64) * (m + 1)
        size = g * (m + 1)
        out = np.bincount(base + data.ii, sd, size) - np.bincount(base + data.jj, sd, size)
        out += np.bincount(base + m, sp, size)
        return out.reshape(g, m + 1)
    return k.cluster_scores(g, m + 1, data.ii, data.jj, np.zeros(data.ii.size, np.int64),
                            data.cluster, sd, sp, m)  # fmt: skip


def tie_inference(theta: NDArray[np.float64], phi: float, data, *, ref: int,
                  row_terms: RowTerms, bread: NDArray[np.float64],
                  small: bool | None = None) -> ClusterInference:  # fmt: skip
    """CR2 pieces of a clustered tie-model fit over the M strengths and the tie parameter
    (parameter M). ``bread``: the inverse information over all M + 1 parameters (zero at
    ``ref``); ``row_terms``: the family's row kernel;
    ``small``: the sparse path or the dense one, by default by the clusters' sizes."""
    free = np.delete(np.arange(data.n_models + 1), ref)
    sd, sp, *info = row_terms_by_pair(theta, phi, data, row_terms)
    rows, residual = tie_working(data, info, (sd, sp))
    return working_inference(rows, residual, free, block(bread, free), data, small)
