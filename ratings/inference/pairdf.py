"""Every pair's one-direction degrees of freedom streamed over the clusters, in memory of the
models' size (:mod:`ratings.inference`).

Past the exact budget, the df of s_j - s_k is the one-direction approximation with omega_jk,g
taken as u_jg + u_kg (u_jg: cluster g's share of rating j's variance about the mean). Its
sums need, per model, sum_g u_jg, sum_g u_jg^2 and max_g u_jg, and per pair sum_g u_jg u_kg: an
M x M Gram matrix. Those add up
over the clusters, so the clusters are taken a block at a time and the G x M matrix of ``u`` is
never held (at 1,000 models and a million one-verdict tasks it would be 8 GB).

Clusters of one row with the same design (pair, judge and weight: a pair met once on each of
many prompts) have the same ``u``; they enter once, weighted by their number
(:attr:`~ratings.inference.working.WorkingRows.merged`), which shrinks an arena's million
clusters to the pairs that met. Models whose largest share exceeds
:data:`~ratings.inference.satterthwaite.CONCENTRATED` take the full formula, streamed in a
second pass.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.typing import NDArray

from ratings.inference.covariance import gram as symmetric_gram
from ratings.inference.satterthwaite import CONCENTRATED, one_direction, share_sums
from ratings.inference.working import WorkingRows

__all__ = ["streamed_pairs_df"]

#: Cells (clusters x models) of ``u`` held at once.
BLOCK_CELLS = 4_000_000


Block = tuple[NDArray[np.float64], NDArray[np.float64]]


def _blocks(groups: WorkingRows, n: NDArray[np.float64],
            weight: NDArray[np.float64]) -> Iterator[Block]:
    """``(u, w)`` a block of groups at a time: u (groups x contrasts), their weights (the
    groups' :meth:`~ratings.inference.working.WorkingRows.quadratic_block`: any working rows
    with it and :attr:`~ratings.inference.working.WorkingRows.merged`, such as a style fit's)."""
    per = max(1, BLOCK_CELLS // max(n.shape[1], 1))
    for lo in range(0, groups.n_clusters, per):
        hi = min(lo + per, groups.n_clusters)
        yield groups.quadratic_block(lo, hi, n), weight[lo:hi]


def streamed_pairs_df(rows: WorkingRows, n: NDArray[np.float64],
                      held: tuple | None = None) -> NDArray[np.float64]:
    """One-direction df of every pair (M x M) from the directions ``n`` (n_params x M: the
    bread times each model's contrast about the mean): with omega_jk = u_j + u_k over the
    clusters' ``u``, (sum omega)^2 / sum omega^2 (the Gram matrix of ``u`` gives every pair's
    sum at once; its diagonal included), the full one-direction formula for the pairs of the
    models with a concentrated share (:data:`~ratings.inference.satterthwaite.CONCENTRATED`),
    with memory in the models' size only. ``held``: the merged designs' ``u`` (designs x M)
    and their weights when already computed (the ratings' df ask for the same), used instead
    of a pass over the rows."""
    groups, weight, _ = rows.merged
    n = np.ascontiguousarray(n)

    def blocks() -> Iterator[Block]:
        return iter([held]) if held else _blocks(groups, n, weight)

    m = n.shape[1]
    tr, sq, top = np.zeros(m), np.zeros(m), np.zeros(m)
    gram = np.zeros((m, m))
    for u, w in blocks():
        tr += w @ u
        su = np.sqrt(w)[:, None] * u  # one pass over u for its weighted squares and Gram matrix
        sq += np.einsum("gc,gc->c", su, su)
        # sum_g w_g u_g u_g^T as BLAS's symmetric rank-k update (half a product's work, the
        # pairs met x models^2 that dominate a large board's table), on the pool's threads
        gram += symmetric_gram(su)
        np.maximum(top, u.max(axis=0, initial=0.0), out=top)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (tr[:, None] + tr[None, :]) ** 2 / (sq[:, None] + sq[None, :] + 2.0 * gram)
        share = top / tr
    concentrated = np.flatnonzero(~(share <= CONCENTRATED))
    if concentrated.size:  # the full formula for their pairs, summed block by block
        sums = np.zeros((3, concentrated.size, m))
        total = tr[concentrated][:, None] + tr[None, :]
        for u, w in blocks():
            for row, j in enumerate(concentrated):
                sums[:, row] += share_sums((u[:, [j]] + u).T, total[row], w)
        full = one_direction(sums, total)
        out[concentrated] = full
        out[:, concentrated] = full.T
    return out
