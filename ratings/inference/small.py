"""CR2 and Satterthwaite degrees of freedom from sparse rows, for boards of many small clusters
(an arena: one verdict per prompt). See :mod:`ratings.inference`.

A cluster of R_g rows has the leverage block H_gg = X_g B X_g^T (R_g x R_g, B the bread); each
row's design vector has two or three nonzeros, so every entry is a handful of entries of B. With
F_g = (I - H_gg)^(-1/2) and e_g the rows' working residuals (score = X_g^T e_g):

* the CR2 influence is B X_g^T F_g e_g, and the covariance B (sum_g w_g w_g^T) B with
  w_g = X_g^T F_g e_g, summed row pair by row pair into one P x P matrix;
* for a contrast c, u_g = X_g B c, p_g = F_g u_g: omega_g = |u_g|^2, d_g = |p_g|^2,
  |y_g|^2 = p_g^T H_gg p_g, and the cross term ||Y^T Y||_F^2 = tr(A B A B) with
  A = sum_g (X_g^T p_g)(X_g^T p_g)^T (P x P): the exact degrees of freedom with no G x P or
  G x G matrix (:func:`ratings.inference.satterthwaite.satterthwaite`'s formula).

One-row clusters of one design (a pair met once on each of many prompts) have the same
blocks and shares: those are computed once per design and the meat summed per design first
(:attr:`~ratings.inference.working.WorkingRows.merged`), so an arena's work follows the pairs
that met, not its prompts.

The per-cluster sums take one pass over the rows per contrast (numba); the cross term costs
P^3 per contrast, so it is computed while the contrasts' total stays within
:data:`ratings.inference.cluster.EXACT_BUDGET`; beyond it the one-direction approximation of
the large-board path (from the same omega_g).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property, partial

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.linalg import block, embed, inverse_pd
from ratings.core.threads import CONCURRENT_ROWS, row_blocks, run, workers
from ratings.inference import cluster
from ratings.inference.cluster import (
    ClusterInference,
    check_cluster_memory,
    check_clusters,
    cluster_inference,
    dense_path,
)
from ratings.inference.satterthwaite import DEGENERATE, pair_contrasts
from ratings.inference.working import (
    CELLS_PER_VERDICT,
    WorkingRows,
    bt_rows,
    crowd_rows,
    kernels,
)

__all__ = ["MAX_BLOCK_CELLS", "SmallBlocks", "SmallClusterInference", "bt_inference",
           "crowd_inference", "small_cluster_inference", "use_small_path"]

#: Most cells of the clusters' leverage blocks (sum of R_g^2) held by the sparse path.
MAX_BLOCK_CELLS = 50_000_000


#: Terms of the dense path's binomial series counted in its cost (it stops once the terms are
#: below 1e-10 of the influences; a few tens on boards where it runs).
SERIES_COST_TERMS = 20


def use_small_path(sizes: NDArray[np.int64], n_free: int) -> bool:
    """Whether clusters of ``sizes`` rows take the sparse path: its blocks' decompositions
    (sum R_g^3) cost less than the dense path's, exact (sum R_g P min(R_g, P) + G P^2
    min(G, P)) or, past :data:`ratings.inference.cluster.EXACT_BUDGET`, the series
    (:data:`SERIES_COST_TERMS` passes of R P + G P^2), and their cells stay within
    :data:`MAX_BLOCK_CELLS`."""
    s = sizes.astype(np.float64)
    p, g = float(n_free), float(sizes.size)
    dense = float(np.sum(s * p * np.minimum(s, p))) + g * p * p * min(g, p)
    if dense > cluster.EXACT_BUDGET:
        dense = min(dense, SERIES_COST_TERMS * (float(s.sum()) * p + g * p * p))
    return float(np.sum(s * s)) <= MAX_BLOCK_CELLS and float(np.sum(s**3)) <= dense


@dataclass(frozen=True, eq=False)
class SmallBlocks:
    """Per-cluster leverage blocks ``h`` and CR2 blocks ``f`` (flattened, row-major)."""

    starts: NDArray[np.int64]
    h: NDArray[np.float64]
    f: NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class SmallClusterInference(ClusterInference):
    """:class:`ClusterInference` from sparse rows: the covariance is held as ``meat`` (P x P,
    over the free coordinates) instead of G x P influences (see the module notes)."""

    meat: NDArray[np.float64] | None = None
    blocks: SmallBlocks | None = None
    residual: NDArray[np.float64] | None = None  # each row's CR2-adjusted working residual

    @property
    def exact(self) -> bool:
        return self._exact_for(self.n_models)

    def _exact_for(self, n_contrasts: int) -> bool:
        p = self.free.size
        return n_contrasts * (self.rows.ii.size + 2.0 * p**3) <= cluster.EXACT_BUDGET

    @property
    def n_clusters(self) -> int:
        return self.rows.n_clusters

    def scaled(self, factor: float) -> SmallClusterInference:
        return replace(self, meat=self.meat * factor**2, residual=self.residual * factor)

    def _cr2_variance(self, c: NDArray[np.float64]) -> NDArray[np.float64]:
        v = c @ self.bread
        return np.einsum("cp,pq,cq->c", v, self.meat, v)

    def covariance(self) -> NDArray[np.float64]:
        out = embed(self.bread @ self.meat @ self.bread, self.free, self.n_params)
        if self.extra is not None:
            out += self.extra.T @ self.extra
        return out

    def influence(self) -> NDArray[np.float64] | None:
        """CR2-adjusted influences (G x n_params), built on request; None past
        :data:`ratings.core.memory.MAX_INFLUENCE_CELLS` (the covariance does not need them)."""
        from ratings.core.memory import MAX_INFLUENCE_CELLS

        rows = self.rows
        if rows.n_clusters * rows.n_params > MAX_INFLUENCE_CELLS:
            return None
        w = np.zeros((rows.n_clusters, rows.n_params))
        np.add.at(w, (rows.cluster, rows.ii), rows.a * self.residual)
        np.add.at(w, (rows.cluster, rows.jj), -rows.a * self.residual)
        if rows.b.size:
            np.add.at(w, (rows.cluster, rows.n_models + rows.judge), rows.b * self.residual)
        out = np.zeros_like(w)
        out[:, self.free] = w[:, self.free] @ self.bread
        return out

    def contrasted_influence(self, contrasts) -> NDArray[np.float64]:
        """As :meth:`ClusterInference.contrasted_influence`, from the rows: cluster g's
        influence on c is sum_r e*_r x_r^T B c (e*: the CR2-adjusted residuals), no G x P."""
        v = self._directions(self._free_contrasts(contrasts))
        rows, c = self.rows, v.shape[1]
        per_row = rows.design(v, slice(None)) * self.residual[:, None]
        out = np.zeros((rows.n_clusters, c))
        for col in range(c):
            out[:, col] = np.bincount(rows.cluster, per_row[:, col], rows.n_clusters)
        return out

    def _directions(self, c: NDArray[np.float64]) -> NDArray[np.float64]:
        """B c for contrasts ``c`` (rows, over ``free``), as columns over all parameters."""
        v = np.zeros((self.n_params, c.shape[0]))
        v[self.free] = self.bread @ c.T
        return v

    def omega(self, contrasts) -> NDArray[np.float64]:
        return self.rows.quadratic(self._directions(self._free_contrasts(contrasts))).T

    def factors(self, contrasts) -> tuple:
        """``(omega, d, Y)`` as :meth:`ClusterInference.factors` (dense: small boards)."""
        c = self._free_contrasts(contrasts)
        v = self._directions(c)
        k, rows = kernels(self.rows.ii.size), self.rows
        g = rows.n_clusters
        omega, d = np.zeros((c.shape[0], g)), np.zeros((c.shape[0], g))
        y = np.zeros((c.shape[0], g, self.free.size))
        lf = np.zeros((self.n_params, self.free.size))
        lf[self.free] = self.chol
        for col in range(c.shape[0]):
            u = rows.design(v[:, [col]], slice(None))[:, 0]
            p = k.small_apply(self.blocks.starts, self.blocks.f, u)
            omega[col] = np.bincount(rows.cluster, u * u, g)
            d[col] = np.bincount(rows.cluster, p * p, g)
            x = rows.design(lf, slice(None)) * p[:, None]  # rows of L^T x_r p_r
            np.add.at(y[col], rows.cluster, x)
        return omega, d, y

    def df(self, contrasts) -> NDArray[np.float64]:
        c = np.atleast_2d(np.asarray(contrasts, dtype=np.float64))
        cf = self._free_contrasts(c)
        out = self._exact_df(cf) if self._exact_for(c.shape[0]) else self._approx_df(cf)
        out = self._welch(out, self._all_params(c))
        out[self.undefined(c)] = np.nan
        return out

    def _exact_df(self, c: NDArray[np.float64]) -> NDArray[np.float64]:
        rows, blk = self.rows, self.blocks
        k = kernels(rows.ii.size * max(c.shape[0], 1))
        v = self._directions(c)
        sums = k.small_terms(blk.starts, rows.ii, rows.jj, rows.judge, rows.a, rows.b,
                             rows.n_models, blk.h, blk.f, v)  # fmt: skip
        bread = embed(self.bread, self.free, self.n_params)
        cross = np.empty(c.shape[0])
        for col in range(c.shape[0]):
            u = rows.design(v[:, [col]], slice(None))[:, 0]
            p = k.small_apply(blk.starts, blk.f, u)
            ab = k.small_meat(blk.starts, rows.ii, rows.jj, rows.judge, rows.a, rows.b,
                              rows.n_models, rows.n_params, p) @ bread  # fmt: skip
            cross[col] = np.einsum("ij,ji->", ab, ab)
        tr = sums[:, 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(tr > 0, tr * tr / (sums[:, 1] - 2.0 * sums[:, 2] + cross), np.nan)

    def _approx_df(self, c: NDArray[np.float64]) -> NDArray[np.float64]:
        """The one-direction approximation (as :func:`satterthwaite` without ``y``), streamed:
        tr = sum_g omega_g = v^T H v from the information, then one pass for the shares over
        the clusters merged by design (:attr:`~ratings.inference.working.WorkingRows.merged`:
        alike clusters have alike shares)."""
        groups, weight, _ = self.rows.merged
        v = self._directions(c)
        vf = v[self.free]
        tr = np.sum(vf * (self.information @ vf), axis=0)
        cells = groups.ii.size * max(c.shape[0], 1)
        k = kernels(cells // CELLS_PER_VERDICT)
        starts = groups.starts

        def part(lo: int, hi: int) -> NDArray[np.float64]:  # the sums add over clusters
            return k.small_shares(starts[lo:hi + 1], groups.ii, groups.jj, groups.judge,
                                  groups.a, groups.b, groups.n_models, v, tr, DEGENERATE,
                                  weight[lo:hi])  # fmt: skip

        split = workers() if cells >= CONCURRENT_ROWS * CELLS_PER_VERDICT else 1
        sums = sum(run([partial(part, lo, hi) for lo, hi in row_blocks(starts.size - 1, split)]))
        with np.errstate(divide="ignore", invalid="ignore"):
            denom = sums[:, 0] + sums[:, 1] ** 2 - sums[:, 2]
            return np.where(tr > 0, 1.0 / denom, np.nan)

    @cached_property
    def information(self) -> NDArray[np.float64]:
        """sum_g H_g over the free coordinates (from the merged rows: the same sum)."""
        groups, weight, _ = self.rows.merged
        return groups.information(weight[groups.cluster])[np.ix_(self.free, self.free)]

    def pair_df(self) -> NDArray[np.float64]:
        """As :meth:`ClusterInference.pair_df`: exact within the budget, else each pair's
        omega summed from the models' (their cross term left out)."""
        m = self.n_models
        jj, kk = np.triu_indices(m, 1)
        if self._exact_for(jj.size):
            out = np.full((m, m), np.nan)
            out[jj, kk] = out[kk, jj] = self.df(pair_contrasts(m, jj, kk))
            return out
        from ratings.inference.pairdf import streamed_pairs_df
        from ratings.inference.satterthwaite import reference_contrasts

        c = self._free_contrasts(reference_contrasts(m, None))
        out = streamed_pairs_df(self.rows, self._directions(c))
        np.fill_diagonal(out, np.nan)
        return self._pairs_undefined_and_extra(jj, kk, out)


def small_cluster_inference(rows: WorkingRows, residual: NDArray[np.float64],
                            free: NDArray[np.int64], bread: NDArray[np.float64],
                            clusters: pd.Index | None = None) -> SmallClusterInference:
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
    if groups.n_clusters < rows.n_clusters:  # alike clusters, alike blocks: each design's once
        h, f, deg = k.small_blocks(groups.starts, groups.ii, groups.jj, groups.judge, groups.a,
                                   groups.b, rows.n_models, full, DEGENERATE)  # fmt: skip
        h, f, deg = _spread(h, f, deg, np.diff(groups.starts), group_of, np.diff(starts))
    else:
        h, f, deg = k.small_blocks(starts, rows.ii, rows.jj, rows.judge, rows.a, rows.b,
                                   rows.n_models, full, DEGENERATE)  # fmt: skip
    blocks = SmallBlocks(starts, h, f)
    adjusted = k.small_apply(starts, f, residual)
    if groups.n_clusters < rows.n_clusters:  # a design's clusters add (sum e*^2) x x^T
        meat = k.small_meat(groups.starts, groups.ii, groups.jj, groups.judge, groups.a,
                            groups.b, rows.n_models, rows.n_params,
                            _group_residual(adjusted, starts, group_of, groups))  # fmt: skip
    else:
        meat = k.small_meat(starts, rows.ii, rows.jj, rows.judge, rows.a, rows.b, rows.n_models,
                            rows.n_params, adjusted)  # fmt: skip
    meat = meat[np.ix_(free, free)]
    chol = np.linalg.cholesky(bread) if deg.any() else None
    degenerate = _degenerate(rows, blocks, np.flatnonzero(deg), free, chol)
    return SmallClusterInference(rows.n_params, rows.n_models, free, bread, None, clusters, None,
                                 None, degenerate, rows, chol, meat=meat, blocks=blocks,
                                 residual=adjusted)  # fmt: skip


def _spread(h, f, deg, group_sizes, group_of, sizes) -> tuple:
    """The blocks of :func:`ratings.kernels.inference.small_blocks` computed per group, given to
    every cluster of each group (``group_of``: each cluster's; ``sizes``: their rows)."""
    if np.all(sizes == 1):
        return h[group_of], f[group_of], deg[group_of]
    cells = sizes.astype(np.int64) ** 2
    group_off = np.concatenate([[0], np.cumsum(group_sizes.astype(np.int64) ** 2)])
    off = np.concatenate([[0], np.cumsum(cells)])
    at = np.repeat(group_off[group_of] - off[:-1], cells) + np.arange(off[-1])
    return h[at], f[at], deg[group_of]


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


def _degenerate(rows, blocks, clusters, free, chol) -> NDArray[np.float64]:
    """Whitened directions L^T X_g^T v of leverage 1 (v an eigenvector of H_gg at 1)."""
    out = []
    if clusters.size:
        lf = np.zeros((rows.n_params, free.size))
        lf[free] = chol
        off = np.concatenate([[0], np.cumsum(np.diff(blocks.starts) ** 2)])
    for g in clusters:
        lo, hi = blocks.starts[g], blocks.starts[g + 1]
        n = hi - lo
        lam, vec = np.linalg.eigh(blocks.h[off[g]:off[g] + n * n].reshape(n, n))
        z = rows.design(lf, slice(lo, hi))  # rows of L^T x_r
        for t in np.flatnonzero(lam >= 1.0 - DEGENERATE):
            q = vec[:, t] @ z
            out.append(q / np.linalg.norm(q))
    return np.vstack(out) if out else np.zeros((0, free.size))


def bt_inference(theta: NDArray[np.float64], data, *, ref: int, penalty: float = 0.0, k,
                 bread: NDArray[np.float64] | None = None, small: bool | None = None,
                 free: NDArray[np.int64] | None = None) -> ClusterInference:  # fmt: skip
    """CR2 pieces of a clustered Bradley-Terry fit (``k``: the kernel module for the scores;
    ``bread``: the fit's inverse Hessian (M x M, zero at ``ref``), if already computed;
    ``free``: the estimated models, default all but ``ref``; the others are fixed offsets,
    as when new models are placed against a frozen board).

    ``small``: the sparse path of :mod:`ratings.inference.small` (True), the dense one (False);
    default by the clusters' sizes (:func:`ratings.inference.small.use_small_path`)."""
    m = data.n_models
    check_clusters(data)
    free = np.delete(np.arange(m), ref) if free is None else np.asarray(free, dtype=np.int64)
    rows = bt_rows(theta, data)
    if bread is None:
        info = bt_rows(theta, data.collapsed()).information()  # summed over clusters
        if penalty:
            info = info + penalty * (np.eye(m) - 1.0 / m)
        bread_free = inverse_pd(block(info, free))
    else:  # the Hessian's inverse: the information's (and the penalty's)
        bread_free = block(bread, free)
    sizes = np.diff(rows.starts)
    if small is None:
        small = use_small_path(sizes, free.size)
    check_cluster_memory(data, sizes, m, "small" if small else dense_path(sizes, free.size))
    if small:
        score = k.bt_scores(theta, rows.ii, rows.jj, data.wi, data.wj, data.tt)
        with np.errstate(divide="ignore", invalid="ignore"):
            residual = np.where(rows.a > 0, score / rows.a, 0.0)
        return small_cluster_inference(rows, residual, free, bread_free, data.clusters)

    def row_scores(rows, wi, wj, tt):
        return k.bt_scores(theta, rows.ii, rows.jj, wi, wj, tt), None

    score = data.cluster_score_matrix(m, row_scores, k)
    return cluster_inference(rows, score, free, clusters=data.clusters, bread=bread_free)


def crowd_inference(fit, data, *, k, prior_information: bool = True,
                    small: bool | None = None) -> ClusterInference | None:
    """CR2 pieces of a clustered Crowd-BT fit (:class:`ratings.models.crowd.likelihood.CrowdFit`).

    The likelihood of the decisive verdicts (ties are not part of it), the judges whose eta is
    fixed or on a bound treated as known, and the bread M = (I + P)^-1 with I the Fisher
    information of the working model and P the curvature of the negative log-prior at the
    estimate: the sandwich of a penalised estimate (as for ridge-penalised logistic regression,
    le Cessie & van Houwelingen 1992), which is what the posterior mode's sampling variance is
    to first order. ``prior_information=False`` counts only the strengths' prior
    (:attr:`ratings.models.crowd.likelihood.CrowdFit.bread_penalty`): what the verdicts alone say
    about eta, used
    for the judges' intervals and the test of whether they can be told from coin flips.
    ``None`` when that matrix is not positive definite: the verdicts cannot tell judge quality
    from the spread of the ratings (the caller leaves the intervals open). A two-step term for
    reused etas is added with :meth:`ClusterInference.with_extra`.

    ``small``: the sparse path (True) or the dense one (False), by default by the clusters'
    sizes, as in :func:`bt_inference`.
    """
    m, nj = data.n_models, len(data.judges)
    check_clusters(data)
    free_eta = fit.estimated & ~fit.boundary
    rows = crowd_rows(fit.theta, fit.eta, free_eta, data)
    info = crowd_rows(fit.theta, fit.eta, free_eta, data.collapsed()).information()
    pen = fit.prior_hessian if prior_information else fit.bread_penalty
    if pen is not None:
        info = info + pen
    sizes = np.diff(rows.starts)
    if small is None:
        small = use_small_path(sizes, fit.free.size)
    check_cluster_memory(data, sizes, m + nj,
                         "small" if small else dense_path(sizes, fit.free.size))  # fmt: skip
    try:
        bread = inverse_pd(block(info, fit.free))
    except np.linalg.LinAlgError:
        return None
    if small:  # each row's score is e_r x_r: e_r from its strengths' part, or its eta's
        _, gd, ge, *_ = k.crowd_row_terms(fit.theta, fit.eta, data.ii, data.jj, data.judge,
                                          data.wi, data.wj, data.tt, False)  # fmt: skip
        with np.errstate(divide="ignore", invalid="ignore"):
            residual = np.where(rows.a != 0, gd / rows.a,
                                np.where(rows.b != 0, ge / rows.b, 0.0))  # fmt: skip
        return small_cluster_inference(rows, residual, fit.free, bread, data.clusters)

    def row_scores(rows, wi, wj, tt):
        _, gd, ge, *_ = k.crowd_row_terms(fit.theta, fit.eta, rows.ii, rows.jj, rows.judge,
                                          wi, wj, tt, False)  # fmt: skip
        return gd, ge

    score = data.cluster_score_matrix(m + nj, row_scores, k)
    return cluster_inference(rows, score, fit.free, clusters=data.clusters, bread=bread)
