"""CR2 pieces of a tie model's fit (Davidson, Rao-Kupper): the strengths and the tie parameter.

A verdict of a tie model has three outcomes, so its information in (d, phi) (d = s_i - s_j,
phi the tie parameter's unbounded scale) has rank two: the working model of
:mod:`ratings.inference` gives each aggregated row two working rows, the columns of a
factor L of the row's expected information I = L L^T,

    x_1 = sqrt(I_dd) (e_i - e_j) + I_dphi / sqrt(I_dd) e_phi,
    x_2 = sqrt(I_phiphi - I_dphi^2 / I_dd) e_phi,

with the tie parameter as parameter ``M`` (the place of Crowd-BT's one judge quality, so the
working rows, the exact and series paths and the sparse path of many small clusters serve it
unchanged). The CR2 adjustment depends on the rows only through each cluster's information
H_g = sum x x^T and its summed score (see :mod:`ratings.inference`), so the choice of factor
does not matter; the working residuals of a row solve X_r^T e_r = (score_d, score_phi).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from ratings.core.linalg import block
from ratings.inference.cluster import (
    ClusterInference,
    check_cluster_memory,
    check_clusters,
    cluster_inference,
    dense_path,
)
from ratings.inference.small import small_cluster_inference, use_small_path
from ratings.inference.working import WorkingRows

__all__ = ["tie_cluster_scores", "tie_inference", "tie_rows"]

RowTerms = Callable[..., tuple]


def _factor(idd, idp, ipp) -> tuple:
    """Columns (a_1, b_1), (0, b_2) of the factor of each row's information."""
    with np.errstate(divide="ignore", invalid="ignore"):
        a1 = np.sqrt(np.maximum(idd, 0.0))
        b1 = np.where(a1 > 0.0, idp / a1, 0.0)
        b2 = np.sqrt(np.maximum(ipp - b1 * b1, 0.0))
    return a1, b1, b2


def tie_rows(theta: NDArray[np.float64], phi: float, data, row_terms: RowTerms,
             ) -> tuple[WorkingRows, NDArray[np.float64]]:  # fmt: skip
    """Working rows of a tie model's fit (two per aggregated row, in cluster order) and their
    working residuals."""
    m, r = data.n_models, data.ii.size
    _, sd, sp, idd, idp, ipp, *_ = row_terms(theta, phi, data.ii, data.jj, data.wi, data.wj,
                                             data.tt, False)  # fmt: skip
    a1, b1, b2 = _factor(idd, idp, ipp)
    with np.errstate(divide="ignore", invalid="ignore"):
        e1 = np.where(a1 > 0.0, sd / a1, 0.0)
        e2 = np.where(b2 > 0.0, (sp - b1 * e1) / b2, 0.0)

    def twice(x):
        return np.repeat(x, 2)

    a = np.empty(2 * r)
    a[0::2], a[1::2] = a1, 0.0
    b = np.empty(2 * r)
    b[0::2], b[1::2] = b1, b2
    residual = np.empty(2 * r)
    residual[0::2], residual[1::2] = e1, e2
    rows = WorkingRows(ii=twice(data.ii), jj=twice(data.jj), judge=np.zeros(2 * r, np.int64),
                       cluster=twice(data.cluster), a=a, b=b, n_clusters=data.n_clusters,
                       n_params=m + 1, n_models=m)  # fmt: skip
    return rows, residual


def tie_cluster_scores(theta: NDArray[np.float64], phi: float, data, row_terms: RowTerms,
                       k) -> NDArray[np.float64]:  # fmt: skip
    """Each cluster's summed score on the strengths and the tie parameter, (G x (M + 1))."""
    m = data.n_models
    _, sd, sp, *_ = row_terms(theta, phi, data.ii, data.jj, data.wi, data.wj, data.tt, False)
    return k.cluster_scores(data.n_clusters, m + 1, data.ii, data.jj,
                            np.zeros(data.ii.size, np.int64), data.cluster, sd, sp, m)


def tie_inference(theta: NDArray[np.float64], phi: float, data, *, ref: int,
                  row_terms: RowTerms, k, bread: NDArray[np.float64],
                  small: bool | None = None) -> ClusterInference:  # fmt: skip
    """CR2 pieces of a clustered tie-model fit over the M strengths and the tie parameter
    (parameter M). ``bread``: the inverse information over all M + 1 parameters (zero at
    ``ref``); ``row_terms``: the family's row kernel; ``k``: the kernel module;
    ``small``: the sparse path or the dense one, by default by the clusters' sizes."""
    check_clusters(data)
    m = data.n_models
    free = np.delete(np.arange(m + 1), ref)
    rows, residual = tie_rows(theta, phi, data, row_terms)
    sizes = np.diff(rows.starts)
    if small is None:
        small = use_small_path(sizes, free.size)
    check_cluster_memory(data, sizes, m + 1, "small" if small else dense_path(sizes, free.size))
    bread_free = block(bread, free)
    if small:
        return small_cluster_inference(rows, residual, free, bread_free, data.clusters)
    score = tie_cluster_scores(theta, phi, data, row_terms, k)
    return cluster_inference(rows, score, free, clusters=data.clusters, bread=bread_free)
