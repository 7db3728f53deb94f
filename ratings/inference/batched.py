"""Exact Satterthwaite degrees of freedom of many contrasts at once, from sparse rows
(:mod:`ratings.inference.small`).

The df of a contrast c depends on the clusters' designs only (not on their residuals): with
v = B c, u_g = X_g v, p_g = F_g u_g and the whitened y_g = L^T X_g^T p_g (B = L L^T),

    df = (sum_g omega_g)^2 / (sum_g d_g^2 - 2 sum_g d_g |y_g|^2 + ||sum_g y_g y_g^T||_F^2)

with omega_g = |u_g|^2 and d_g = |p_g|^2 (|y_g|^2 = p_g^T H_gg p_g). Everything but the last
term is linear in c before squaring, so it is formed once for the P unit contrasts of the free
coordinates (a basis, :class:`Basis`: per design the Gram matrices of its rows' ``u`` and ``p`` and
its ``y``, each P x P) and any set of contrasts is a matrix product with it. Clusters of one design
(the same rows, the same weights: a baseline met by every model once on every prompt) have the
same terms: they are formed once per distinct design and weighted by their number
(:func:`distinct_designs`). The cross term is one batched Gram product per contrast, in the
smaller of the designs' and the coordinates' dimension.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from ratings.inference.satterthwaite import satterthwaite
from ratings.inference.working import WorkingRows, lifted

__all__ = ["Basis", "basis", "batched_df", "block_apply", "dense_basis", "distinct_designs",
           "exact_cost", "pair_forms", "pairs_df", "terms"]

#: Cells of the (contrasts x designs x coordinates) arrays held per batch.
BATCH_CELLS = 4_000_000
#: Designs of at least this many rows get their basis products one design at a time (a 30-model
#: board of 200 tasks of 29 rows: 4 ms against 9 ms gathered by size); smaller ones by size.
BASIS_LOOP_ROWS = 16


def distinct_designs(rows: WorkingRows, merged) -> tuple[WorkingRows, NDArray[np.float64],
                                                         NDArray[np.int64]]:  # fmt: skip
    """The clusters' distinct designs: ``merged`` (:attr:`WorkingRows.merged`: one-row clusters
    of one design already merged) with its larger clusters of identical rows (keys and
    weights, in order) merged too. Returns the designs' rows, their weights (clusters per
    design) and each cluster's design.

    Candidates are clusters of one size and one hash of their rows (a pass over the rows); a
    candidate is merged only if its rows equal its first candidate's (a hash collision leaves
    the clusters apart, which is never wrong)."""
    groups, weight, group_of = merged
    starts = groups.starts
    sizes = np.diff(starts)
    multi = np.flatnonzero(sizes > 1)
    if multi.size < 2:
        return groups, weight, group_of
    first = _first_alike(groups, starts, sizes, multi)
    keep = first == np.arange(groups.n_clusters)
    if keep.all():
        return groups, weight, group_of
    new = np.cumsum(keep) - 1  # the kept groups renumbered
    of_group = new[first]
    w = np.bincount(of_group, weight, int(keep.sum()))
    rows_kept = np.repeat(keep, sizes)
    designs = WorkingRows(
        ii=groups.ii[rows_kept], jj=groups.jj[rows_kept], judge=groups.judge[rows_kept],
        cluster=np.repeat(np.arange(w.size), sizes[keep]), a=groups.a[rows_kept],
        b=groups.b[rows_kept] if groups.b.size else groups.b, n_clusters=w.size,
        n_params=groups.n_params, n_models=groups.n_models)  # fmt: skip
    return designs, w, of_group[group_of]


def _row_keys(groups: WorkingRows) -> list[NDArray[np.uint64]]:
    """Each row's keys and weights as 64-bit words (a weight's bits: equal weights, equal words)."""
    cols = [groups.ii.astype(np.uint64), groups.jj.astype(np.uint64),
            groups.judge.astype(np.uint64), np.ascontiguousarray(groups.a).view(np.uint64)]
    if groups.b.size:
        cols.append(np.ascontiguousarray(groups.b).view(np.uint64))
    return cols


def _first_alike(groups, starts, sizes, multi) -> NDArray[np.int64]:
    """For every group, the first group of the same size whose rows are identical (itself if
    none): larger clusters compared by a hash of their rows, then row by row."""
    cols = _row_keys(groups)
    mix = np.zeros(groups.ii.size, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for k, col in enumerate(cols):  # a multiply-xorshift mix of each word, then summed
            x = col * np.uint64(0x9E3779B97F4A7C15 + 2 * k)
            mix ^= x ^ (x >> np.uint64(29))
        pos = np.arange(groups.ii.size, dtype=np.uint64) - np.repeat(
            starts[:-1], sizes).astype(np.uint64)
        mix *= (pos + np.uint64(1)) * np.uint64(0xBF58476D1CE4E5B9)
        mix ^= mix >> np.uint64(31)
    digest = np.add.reduceat(mix, starts[multi])  # wraps mod 2^64
    first = np.arange(groups.n_clusters)
    order = np.lexsort((multi, digest, sizes[multi]))
    d, n = digest[order], sizes[multi][order]
    head = np.ones(order.size, dtype=bool)
    head[1:] = (d[1:] != d[:-1]) | (n[1:] != n[:-1])
    if head.all():
        return first
    rep = multi[order[np.flatnonzero(head)[np.cumsum(head) - 1]]]  # each candidate's first
    cand = multi[order[~head]]
    rep = rep[~head]
    for m in np.unique(sizes[cand]):  # confirm row by row, one size at a time
        sel = sizes[cand] == m
        c, r = cand[sel], rep[sel]
        at_c = starts[c][:, None] + np.arange(m)
        at_r = starts[r][:, None] + np.arange(m)
        same = np.ones(c.size, dtype=bool)
        for col in cols:
            same &= (col[at_c] == col[at_r]).all(axis=1)
        first[c[same]] = r[same]
    return first


#: Distinct designs of several rows up to which :func:`block_apply` takes one product per design.
LOOP_DESIGNS = 64


def block_apply(starts: NDArray[np.int64], f: NDArray[np.float64], u: NDArray[np.float64],
                design_of: NDArray[np.int64],
                block_starts: NDArray[np.int64]) -> NDArray[np.float64]:  # fmt: skip
    """F_g u_g for every cluster g (rows ``starts``) and column of ``u`` (N x K), F_g the block
    of its design ``design_of[g]`` in ``f``, the designs' blocks flattened row-major one after
    another (``block_starts`` their rows; :func:`ratings.kernels.inference.small_blocks`):
    one-row clusters by a gather, larger ones one product per design while there are few of
    them (a design's clusters side by side), else with every cluster's block gathered, one
    batched product per size."""
    sizes = np.diff(starts)
    doff = np.concatenate([[0], np.cumsum(np.diff(block_starts) ** 2)])
    out = np.empty_like(u)
    lone = sizes == 1
    heads = starts[:-1][lone]
    out[heads] = f[doff[design_of[lone]]][:, None] * u[heads]
    multi = np.flatnonzero(~lone)
    of = design_of[multi]
    kinds = np.unique(of)
    if kinds.size <= LOOP_DESIGNS:
        for d in kinds:
            cl = multi[of == d]
            n = int(sizes[cl[0]])
            at = starts[cl][:, None] + np.arange(n)
            out[at] = f[doff[d]:doff[d] + n * n].reshape(n, n) @ u[at]
        return out
    for n in np.unique(sizes[multi]):
        cl = multi[sizes[multi] == n]
        at = starts[cl][:, None] + np.arange(n)
        fb = f[doff[design_of[cl]][:, None] + np.arange(n * n)].reshape(-1, n, n)
        out[at] = fb @ u[at]
    return out


@dataclass(frozen=True, eq=False)
class Basis:
    """The terms of the P unit contrasts of the free coordinates over the distinct designs,
    as quadratic and linear forms: ``q`` (G x 3P x P) stacks per design g the Gram matrices
    U_g^T U_g and P_g^T P_g of its rows' u and p (so omega_g = c^T U_g^T U_g c and
    d_g = c^T P_g^T P_g c) and y_g (whitened coordinate by contrast, y_g(c) = y_g c); with
    the designs' ``weight``."""

    q: NDArray[np.float64]
    weight: NDArray[np.float64]

    @cached_property
    def unit_y(self) -> NDArray[np.float64]:
        """Each design's y of each unit contrast, G x (P + 1) x P (row k: y_g(e_k); the last
        row zero): a pair's y is the difference of two rows."""
        g, p = self.q.shape[0], self.q.shape[2]
        out = np.zeros((g, p + 1, p))
        out[:, :p] = self.q[:, 2 * p:].transpose(0, 2, 1)
        return out

    @cached_property
    def padded_forms(self) -> NDArray[np.float64]:
        """The quadratic forms of omega and d ((P + 1) x (P + 1) x 2 x G, zero in the last row
        and column): a pair's terms are three of their entries, each a contiguous row of both
        forms over the designs."""
        g, p = self.q.shape[0], self.q.shape[2]
        out = np.zeros((p + 1, p + 1, 2, g))
        out[:p, :p] = self.q[:, :2 * p].reshape(g, 2, p, p).transpose(2, 3, 1, 0)
        return out


def basis(designs: WorkingRows, weight: NDArray[np.float64], f: NDArray[np.float64],
          free: NDArray[np.int64], bread: NDArray[np.float64],
          chol: NDArray[np.float64]) -> Basis:  # fmt: skip
    """:class:`Basis` of ``designs`` (their CR2 blocks ``f``) for the bread ``bread`` = L L^T
    (``chol``: L) over ``free``."""
    n_params, p = designs.n_params, free.size
    u = designs.design(lifted(bread, free, n_params), slice(None))  # rows x_r^T B (N x P)
    z = designs.design(lifted(chol, free, n_params), slice(None))  # rows L^T x_r (N x P)
    starts = designs.starts
    size = np.diff(starts)
    off = np.concatenate([[0], np.cumsum(size * size)])
    q = np.empty((size.size, 3 * p, p))  # per design [u; p; z]^T [u; p; p], p = F u
    for g in np.flatnonzero(size >= BASIS_LOOP_ROWS):  # large designs: products of their own
        r, n = slice(starts[g], starts[g + 1]), size[g]
        pg = f[off[g]:off[g + 1]].reshape(n, n) @ u[r]
        np.matmul(u[r].T, u[r], out=q[g, :p])
        np.matmul(pg.T, pg, out=q[g, p:2 * p])
        np.matmul(z[r].T, pg, out=q[g, 2 * p:])
    for n in np.unique(size[size < BASIS_LOOP_ROWS]):  # small ones: batched by size
        cl = np.flatnonzero(size == n)
        rows = starts[cl][:, None] + np.arange(n)
        ug = u[rows]
        pg = f[off[cl][:, None] + np.arange(n * n)].reshape(-1, n, n) @ ug
        q[cl, :p] = ug.transpose(0, 2, 1) @ ug
        q[cl, p:2 * p] = pg.transpose(0, 2, 1) @ pg
        q[cl, 2 * p:] = z[rows].transpose(0, 2, 1) @ pg
    return Basis(q, weight)


def dense_basis(eig_q: tuple, eig_lam: tuple, chol: NDArray[np.float64],
                degenerate: float) -> Basis:  # fmt: skip
    """:class:`Basis` of the dense path's clusters, from the eigenpairs (Q_g, lambda_g) of
    their whitened S_g = L^T H_g L (:class:`ratings.inference.cluster.ClusterInference`):
    with W_g = L Q_g, omega_g = c^T W_g diag(lambda) W_g^T c, d_g likewise with
    lambda / (1 - lambda), y_g = Q_g diag(lambda / sqrt(1 - lambda)) W_g^T c (leverages
    capped at 1 - ``degenerate``)."""
    p = chol.shape[0]
    q = np.zeros((len(eig_q), 3 * p, p))
    for g, (qg, lam) in enumerate(zip(eig_q, eig_lam, strict=True)):
        if not lam.size:
            continue
        lam = np.minimum(lam, 1.0 - degenerate)
        w = chol @ qg
        q[g, :p] = (w * lam) @ w.T
        q[g, p:2 * p] = (w * (lam / (1.0 - lam))) @ w.T
        q[g, 2 * p:] = (qg * (lam / np.sqrt(1.0 - lam))) @ w.T
    return Basis(q, np.ones(len(eig_q)))


def terms(b: Basis, c: NDArray[np.float64]) -> tuple:
    """``(omega, d, y)`` of contrasts ``c`` (C x P, over the free coordinates) per design:
    omega, d (C x G) and y (C x G x P), from one product of the basis with ``c``."""
    g, p = b.q.shape[0], c.shape[1]
    sides = _unit_differences(c)
    if sides is not None:  # e_j - e_k (a pair, either side possibly the reference): entries
        j, k = sides  # of the quadratic forms and rows of y, no product
        omega, d = pair_forms(b, j, k)
        y = b.unit_y[:, j] - b.unit_y[:, k]
        return omega.T, d.T, y.transpose(1, 0, 2)
    z = (b.q.reshape(g * 3 * p, p) @ c.T).T.reshape(c.shape[0], g, 3, p)
    omega = np.einsum("cgp,cp->cg", z[:, :, 0], c)
    d = np.einsum("cgp,cp->cg", z[:, :, 1], c)
    return omega, d, z[:, :, 2]


def pair_forms(b: Basis, j: NDArray[np.int64], k: NDArray[np.int64]) -> NDArray[np.float64]:
    """omega and d (each G x C) of the contrasts e_j - e_k (``j``, ``k``: free coordinates,
    P for none): entries of the basis' quadratic forms."""
    forms = b.padded_forms
    return (forms[j, j] + forms[k, k] - 2.0 * forms[j, k]).transpose(1, 2, 0)


def _unit_differences(c: NDArray[np.float64]) -> tuple | None:
    """For contrasts that are each e_j - e_k, e_j or -e_k (a pair of models over the free
    coordinates), the coordinates of their +1 and -1 (P: none), else None."""
    plus, minus = c == 1.0, c == -1.0
    if not np.all(plus | minus | (c == 0.0)):
        return None
    n_plus, n_minus = plus.sum(axis=1), minus.sum(axis=1)
    if np.any(n_plus > 1) or np.any(n_minus > 1):
        return None
    p = c.shape[1]
    return (np.where(n_plus > 0, plus.argmax(axis=1), p),
            np.where(n_minus > 0, minus.argmax(axis=1), p))


def batched_df(b: Basis, c: NDArray[np.float64]) -> NDArray[np.float64]:
    """Exact Satterthwaite df of contrasts ``c`` (rows over the free coordinates), a batch of
    contrasts at a time (see the module notes); NaN where the contrast has no variance."""
    g, p = b.q.shape[0], b.q.shape[2]
    sides = _unit_differences(c) if g >= p and (p + 1) ** 2 * p * p <= MAX_PAIR_BLOCKS else None
    if sides is not None:  # pairs of models (every pair: the rank intervals)
        return pairs_df(b, *sides)
    out = np.empty(c.shape[0])
    step = max(1, BATCH_CELLS // max(3 * g * p, 1))
    weight = None if np.all(b.weight == 1.0) else b.weight
    for lo in range(0, c.shape[0], step):
        out[lo:lo + step] = satterthwaite(*terms(b, c[lo:lo + step]), weight)
    return out


#: Most cells ((P + 1)^2 P^2) of the unit contrasts' cross products that :func:`pairs_df` holds.
MAX_PAIR_BLOCKS = 4_000_000
#: Cells of the pairs' Gram matrices :func:`pairs_df` forms per batch (cache-sized: the
#: 30-model board's 435 pairs in one batch took 5 ms, in batches of this size 2 ms).
PAIR_GRAM_CELLS = 65_536


def pairs_df(b: Basis, j: NDArray[np.int64], k: NDArray[np.int64]) -> NDArray[np.float64]:
    """:func:`batched_df` of the contrasts e_j - e_k (``j``, ``k``: free coordinates, P for
    none), from products of the unit contrasts' terms instead of one Gram product per pair.

    With A_j the designs' y of e_j (G x P, zero for P), a pair's y is A_j - A_k: its weighted
    Gram is D_jj + D_kk - D_jk - D_kj, with D_jk = A_j^T W A_k the blocks of one product of
    the G x (P + 1) P matrix [A_0 ... A_P] with itself (as many flops as the pairs' Gram
    products when G >= P, in one BLAS call, and no pairs x G x P array); each design's
    |y_g|^2 from its (P + 1) x (P + 1) products y_g(e_j) . y_g(e_k)."""
    g, p = b.q.shape[0], b.q.shape[2]
    omega, d = pair_forms(b, j, k)  # G x C
    a = b.unit_y
    r = a @ a.transpose(0, 2, 1)
    yy = r[:, j, j] + r[:, k, k] - 2.0 * r[:, j, k]
    w = a if np.all(b.weight == 1.0) else a * np.sqrt(b.weight)[:, None, None]
    w = w.reshape(g, (p + 1) * p)
    blocks = (w.T @ w).reshape(p + 1, p, p + 1, p)  # [j, :, k, :] = D_jk
    cross = np.empty(j.size)
    step = max(1, PAIR_GRAM_CELLS // max(p * p, 1))
    for lo in range(0, j.size, step):
        jb, kb = j[lo:lo + step], k[lo:lo + step]
        gram = blocks[jb, :, jb, :] + blocks[kb, :, kb, :]
        gram -= blocks[jb, :, kb, :]
        gram -= blocks[kb, :, jb, :]
        cross[lo:lo + step] = np.einsum("cij,cij->c", gram, gram)
    tr = b.weight @ omega
    denom = b.weight @ (d * d) - 2.0 * b.weight @ (d * yy) + cross
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(tr > 0, tr * tr / denom, np.nan)


def exact_cost(n_rows: int, n_designs: int, n_free: int, n_contrasts: int) -> float:
    """Flops (roughly) of :func:`batched_df` for ``n_contrasts`` contrasts, the basis included:
    the basis 6 N P^2, then per contrast 3 G P^2 for the forms and the Gram 2 G P min(G, P)."""
    n, g, p = float(n_rows), float(n_designs), float(n_free)
    per = 3.0 * g * p * p + 2.0 * g * p * min(g, p)
    return 6.0 * n * p * p + n_contrasts * per

