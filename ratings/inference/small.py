"""CR2 and Satterthwaite degrees of freedom from sparse rows, for boards of many small clusters
(an arena: one verdict per prompt). See :mod:`ratings.inference`.

A cluster of R_g rows has the leverage block H_gg = X_g B X_g^T (R_g x R_g, B the bread); each
row's design vector has two or three nonzeros, so every entry is a handful of entries of B. With
F_g = (I - H_gg)^(-1/2) and e_g the rows' working residuals (score = X_g^T e_g):

* the CR2 influence is B X_g^T F_g e_g, and the covariance B (sum_g w_g w_g^T) B with
  w_g = X_g^T F_g e_g, summed row pair by row pair into one P x P matrix;
* for a contrast c, u_g = X_g B c, p_g = F_g u_g: omega_g = |u_g|^2, d_g = |p_g|^2 and
  |y_g|^2 = p_g^T H_gg p_g, the terms of the Satterthwaite df
  (:mod:`ratings.inference.batched`).

One-row clusters of one design (a pair met once on each of many prompts) have the same
blocks and shares: those are computed once per design and the meat summed per design first
(:attr:`~ratings.inference.working.WorkingRows.merged`), so an arena's work follows the pairs
that met, not its prompts.

The result is a :class:`~ratings.inference.cluster.ClusterInference` of shape ``"sparse"``:
its degrees of freedom come from the basis of the clusters' distinct designs
(:mod:`ratings.inference.batched`) while its ``df_plan`` allows, else from the one-direction
approximation of the large-board path (from the same omega_g), over the merged designs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.linalg import block, embed
from ratings.inference.batched import block_apply, distinct_designs
from ratings.inference.cluster import (
    ClusterInference,
    Designs,
    check_clusters,
    cluster_inference,
    cr2_plan,
    decomposed,
    loaded_kernel,
    readonly,
    use_small_path,
)
from ratings.inference.covariance import PendingBread, gram, ready
from ratings.inference.satterthwaite import DEGENERATE
from ratings.inference.working import (
    CELLS_PER_VERDICT,
    WorkingRows,
    bt_rows,
    bt_rows_and_scores,
    bt_working,
    kernels,
)

__all__ = [
    "bt_inference",
    "cluster_scores",
    "small_cluster_inference",
    "summed_scores",
    "working_inference",
]

#: The meat as W^T W (G P^2 flops in BLAS) while within this many times the kernel's
#: outer-product cells (:func:`_meat`).
DENSE_MEAT_RATIO = 8.0
#: Most cells of the clusters' scores W (G x P) formed for the meat.
MAX_SCORE_CELLS = 20_000_000


def small_cluster_inference(rows: WorkingRows, residual: NDArray[np.float64],
                            free: NDArray[np.int64], bread: NDArray[np.float64],
                            clusters: pd.Index | None = None) -> ClusterInference:
    """CR2 pieces of a clustered fit from sparse rows.

    Parameters
    ----------
    rows : WorkingRows
        Per-cluster rows of the working model at the estimate.
    residual : ndarray, shape (N,)
        Each row's working residual e_r (its summed score is ``e_r x_r``).
    free : ndarray of int
        Coordinates with a covariance.
    bread : ndarray, shape (P, P)
        The inverse of the (penalised) information over ``free``.
    """
    sizes = np.diff(rows.starts).astype(np.float64)  # the blocks' work grows as R_g^2
    k = kernels(rows.ii.size + int(np.sum(sizes * sizes)) // CELLS_PER_VERDICT)
    full = embed(bread, free, rows.n_params)
    starts = rows.starts
    groups, _, group_of = rows.merged
    designs, weight, design_of = distinct_designs(rows, rows.merged)
    _, f, deg = k.small_blocks(designs.starts, designs.ii, designs.jj, designs.judge, designs.a,
                               designs.b, rows.n_models, full, DEGENERATE)  # fmt: skip
    blocks = Designs(designs, weight, design_of, f)
    adjusted = block_apply(starts, f, residual[:, None], design_of, designs.starts)[:, 0]
    # a design's one-row clusters add (sum e*^2) x x^T: the meat over the groups' rows
    meat = _meat(groups, _group_residual(adjusted, starts, group_of, groups), k)[np.ix_(free, free)]
    chol = np.linalg.cholesky(bread) if deg.any() else None
    degenerate = decomposed(designs, free, chol, np.flatnonzero(deg))[3]
    return ClusterInference(rows.n_params, rows.n_models, free, bread, rows, clusters, degenerate,
                            meat=meat, residual=adjusted, designs=blocks, factor=chol)  # fmt: skip


def _meat(rows: WorkingRows, e: NDArray[np.float64], k) -> NDArray[np.float64]:
    """sum_g w_g w_g^T with w_g = X_g^T e_g (n_params x n_params): as W^T W from the clusters'
    G x n_params scores (a product BLAS runs at several flops a nanosecond) while its G P^2
    stays within :data:`DENSE_MEAT_RATIO` times the kernel's sum_g (R_g E)^2 outer-product
    cells (E: 2 or 3 nonzeros a row), else :func:`ratings.kernels.inference.small_meat`."""
    g, q = rows.n_clusters, rows.n_params
    sizes = np.diff(rows.starts).astype(np.float64)
    nonzeros = 3.0 if rows.b.size else 2.0
    cells = float(np.sum(sizes * sizes)) * nonzeros * nonzeros
    if float(g) * q * q > DENSE_MEAT_RATIO * cells or g * q > MAX_SCORE_CELLS:
        return k.small_meat(rows.starts, rows.ii, rows.jj, rows.judge, rows.a, rows.b,
                            rows.n_models, q, e)  # fmt: skip
    return gram(cluster_scores(rows, e))


def _group_residual(adjusted, starts, group_of, groups) -> NDArray[np.float64]:
    """Residuals of the groups' rows whose meat is the clusters': a merged design's
    sqrt(sum e*^2) over its clusters, then the larger clusters' own rows."""
    sizes = np.diff(starts)
    lone = sizes == 1
    n_single = groups.n_clusters - int(np.count_nonzero(~lone))
    summed = np.bincount(group_of[lone], adjusted[starts[:-1][lone]] ** 2, minlength=n_single)
    if not n_single < groups.n_clusters:
        return np.sqrt(summed)
    return np.concatenate([np.sqrt(summed), adjusted[np.repeat(~lone, sizes)]])


def checked_path(data, sizes: NDArray[np.int64], n_params: int, n_free: int,
                 small: bool | None = None) -> bool:  # fmt: skip
    """Whether clusters of ``sizes`` rows take the sparse path (``small``, or as
    :func:`cr2_plan` picks), after checking there are two clusters at least and that the
    path's work stays within the memory limit (:func:`ratings.core.memory.check_memory`,
    naming the ways out)."""
    from ratings.core.memory import check_memory, cluster_memory, cluster_ways

    check_clusters(data.n_clusters, data.cluster_name)
    if small is None:
        small = use_small_path(sizes, n_free)
    path = "small" if small else cr2_plan(sizes, n_free, sparse=False)[0]
    check_memory(cluster_memory(sizes, n_params, path),
                 f"the clustered interval by `{data.cluster_name}` ({sizes.size:,} clusters, "
                 f"{n_params:,} parameters)", ways=cluster_ways())  # fmt: skip
    return small


def working_inference(rows: WorkingRows, residual: NDArray[np.float64], free: NDArray[np.int64],
                      bread: NDArray[np.float64], data,
                      small: bool | None = None) -> ClusterInference:  # fmt: skip
    """CR2 pieces of a clustered fit over ``data`` (its clusters) from its working ``rows``
    and their residuals (row r's summed score is ``residual[r] x_r``), ``bread`` the inverse
    (penalised) information over ``free``: on the sparse path (``small`` True), the dense one
    (False), or by default the one :func:`cr2_plan` picks, after checking the work against the
    memory limit (:func:`checked_path`)."""
    if checked_path(data, np.diff(rows.starts), rows.n_params, free.size, small):
        return small_cluster_inference(rows, residual, free, bread, data.clusters)
    return cluster_inference(rows, cluster_scores(rows, residual), free, clusters=data.clusters,
                             bread=bread)  # fmt: skip


def cluster_scores(rows: WorkingRows, e: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each cluster's summed score X_g^T e_g (G x n_params) from the rows' residuals ``e``
    (:func:`summed_scores` of ``a e`` and ``b e``)."""
    return summed_scores(rows, rows.a * e, rows.b * e if rows.b.size else None)


def summed_scores(rows: WorkingRows, x: NDArray[np.float64],
                  eta: NDArray[np.float64] | None = None) -> NDArray[np.float64]:  # fmt: skip
    """Each cluster's summed score (G x n_params) from each row's score ``x`` on
    d = theta_ii - theta_jj (and ``eta`` on its judge's parameter, with a judge column): the
    compiled pass of :func:`ratings.kernels.fit.cluster_scores` where the engine picks numba
    for this many rows, else ``bincount`` passes (by the rows' :attr:`~ratings.inference.
    working.WorkingRows.blocks` without a judge column)."""
    from ratings.kernels.engine import kernels as fit_kernels
    from ratings.kernels.engine import resolve

    g, q = rows.n_clusters, rows.n_params
    if resolve("auto", x.size) == "numba":
        k = fit_kernels("numba")
        return k.cluster_scores(g, q, rows.ii, rows.jj, rows.judge, rows.cluster, x,
                                np.zeros(0) if eta is None else eta, rows.n_models)  # fmt: skip
    if eta is None:
        from ratings.kernels.inference_ref import scores_by_blocks

        return scores_by_blocks(rows.ii, rows.jj, rows.cluster, x, g, q, rows.blocks)
    at = rows.cluster * q
    w = np.bincount(at + rows.ii, x, g * q) - np.bincount(at + rows.jj, x, g * q)
    w += np.bincount(at + rows.n_models + rows.judge, eta, g * q)
    return w.reshape(g, q)


def bt_inference(theta: NDArray[np.float64], data, *, ref: int, k,
                 bread: NDArray[np.float64] | PendingBread,
                 free: NDArray[np.int64] | None = None,
                 df_ahead: bool = False) -> ClusterInference:  # fmt: skip
    """CR2 pieces of a clustered Bradley-Terry fit (``k``: the kernel module for the scores;
    ``bread``: the fit's inverse Hessian, M x M, zero at ``ref`` and at the fixed models, or
    still being computed (:func:`~ratings.inference.covariance.start_bread`: waited for after
    the passes over the rows); ``free``: the estimated models, default all but ``ref``; the
    others are fixed offsets, as when new models are placed against a frozen board;
    ``df_ahead``: see :func:`~ratings.inference.cluster.cluster_inference`)."""
    from ratings.kernels import fit_ref

    free = np.delete(np.arange(data.n_models), ref) if free is None else np.asarray(free)
    sizes = np.diff(np.searchsorted(data.cluster, np.arange(data.n_clusters + 1)))
    small = checked_path(data, sizes, data.n_models, free.size)  # rows sorted by cluster
    fused = None if small else loaded_kernel("bt_cluster_scores", data.ii.size)
    if fused is not None:  # the rows' weights and the clusters' scores in one compiled pass
        a, summed = fused(*readonly(theta, data.ii, data.jj, data.wi, data.wj, data.tt,
                                    data.cluster), data.n_clusters)  # fmt: skip
        rows = bt_working(data, a)
    else:
        if k is fit_ref:  # the twin's scores from the rows' pass
            rows, score = bt_rows_and_scores(theta, data)
        else:
            rows = bt_rows(theta, data)
            score = k.bt_scores(theta, rows.ii, rows.jj, data.wi, data.wj, data.tt)
        if small:  # the bread is waited for after the passes over the rows
            residual = bt_residual(rows, score)
            return small_cluster_inference(rows, residual, free, block(ready(bread), free),
                                           data.clusters)  # fmt: skip
        # the dense path needs the clusters' summed scores only: the rows' go before its passes
        score[~(rows.a > 0)] = 0.0  # (the rows' own array, as np.where(rows.a > 0, score, 0.0))
        summed = summed_scores(rows, score)
        del score
    return cluster_inference(rows, summed, free, clusters=data.clusters,
                             bread=block(ready(bread), free), df_ahead=df_ahead)


def bt_residual(rows: WorkingRows, score: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each row's working residual score / a (0 where a = 0: such a row adds nothing; its
    score is zero unless p q underflows)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rows.a > 0, score / rows.a, 0.0)
