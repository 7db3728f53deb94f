"""Covariances of fitted log-strengths: sandwich (per verdict or clustered), model-based, bootstrap.

With H the Hessian of the negative log-likelihood over the free parameters (the reference model
removed) and B the "meat",

* ``model``: V = H^-1 (valid when the model is exactly right and verdicts are independent);
* ``sandwich`` per verdict (HC0): V = H^-1 B H^-1 with B = sum over verdicts of s s^T, computed
  from aggregated counts (each row contributes its summed squared per-verdict scores);
* ``sandwich`` clustered: B = G/(G-1) sum over clusters of g_c g_c^T, g_c the summed score of the
  cluster (verdicts on one task are dependent);
* ``bootstrap``: refits on resampled clusters (or verdicts), seeded.
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ratings.core import nogil
from ratings.core import threads as _threads
from ratings.core.linalg import (
    LAPACK_FROM,
    block,
    block_view,
    embed,
    embed_upper,
    inverse_pd,
    inverse_upper,
    mirror_upper,
)
from ratings.core.memory import MAX_INFLUENCE_CELLS
from ratings.data.comparisons import Comparisons

__all__ = [
    "MAX_INFLUENCE_CELLS",
    "PendingBread",
    "bootstrap_draws",
    "bread_meat_bread",
    "collapsed_contrasts",
    "gram",
    "gram_embedded",
    "identified_inverse",
    "inverse_free",
    "model_based_supplement",
    "ready",
    "start_bread",
]

def inverse_free(h: NDArray[np.float64], free: NDArray[np.int64]) -> NDArray[np.float64]:
    """Inverse of the free block of ``h``; returned embedded in an (M, M) matrix of zeros."""
    # raises LinAlgError unless positive definite; exactly symmetric
    if free.size < LAPACK_FROM:
        return embed(inverse_pd(block(h, free)), free, h.shape[0])
    return embed_upper(inverse_upper(block_view(h, free)), free, h.shape[0])


@dataclass(frozen=True, eq=False)
class PendingBread:
    """A bread (:func:`inverse_free` of a Hessian) being computed on the thread pool beside
    the work that does not need it (:func:`start_bread`), with its ``free`` coordinates."""

    pending: _threads.Pending
    free: NDArray[np.int64]

    def result(self) -> NDArray[np.float64]:
        """The bread, waiting for it; raises ``LinAlgError`` as :func:`inverse_free` does."""
        return self.pending.result()


def start_bread(h: NDArray[np.float64], free: NDArray[np.int64]) -> PendingBread:
    """:func:`inverse_free` of ``h`` started on the pool (from :data:`LAPACK_FROM` free
    coordinates: a Cholesky factorisation and LAPACK's inverse on one core while the caller's
    passes over the rows use the other; at once below that). ``potrf`` / ``potri`` are
    called through :mod:`ratings.core.nogil`, which releases the GIL for the whole call
    (scipy's wrappers keep it for much of theirs: beside them the meat's NumPy pass of 1,000
    models took 40-90 ms instead of 7; beside these 30-37 ms on two shared cores)."""
    job = functools.partial(inverse_free, h, free)
    if free.size < LAPACK_FROM:
        try:
            return PendingBread(_threads.Pending(value=job()), free)
        except np.linalg.LinAlgError as error:
            return PendingBread(_threads.Pending(error=error), free)
    return PendingBread(_threads.start(job), free)


def ready(bread: NDArray[np.float64] | PendingBread) -> NDArray[np.float64]:
    """``bread`` itself, or a :class:`PendingBread`'s result once computed."""
    return bread.result() if isinstance(bread, PendingBread) else bread


#: Variance inflation (``B_ii H_ii``, 1 / (1 - R^2) of coordinate i on the others) from which an
#: information matrix counts as singular: the direction is then determined by rounding, not by the
#: verdicts (double precision leaves about 1e-4 of relative accuracy in such a bread).
MAX_INFLATION = 1e12


def identified_inverse(h: NDArray[np.float64], free: NDArray[np.int64]) -> NDArray[np.float64]:
    """:func:`inverse_free`, raising ``LinAlgError`` also where the free block of ``h`` is
    positive definite only by rounding: some coordinate's variance inflation ``B_ii H_ii``
    exceeds :data:`MAX_INFLATION` (a likelihood flat along a direction, such as one judge's
    quality against the spread of ratings that all meet one baseline, keeps a curvature of
    order 1e-13 there, and a Cholesky factorisation may still succeed)."""
    bread = inverse_free(h, free)
    inflation = np.diag(bread)[free] * np.diag(h)[free]
    if not np.all(inflation <= MAX_INFLATION):
        raise np.linalg.LinAlgError("matrix is singular to working precision")
    return bread


def bread_meat_bread(bread: NDArray[np.float64] | PendingBread,
                     meat: NDArray[np.float64]) -> NDArray[np.float64]:  # fmt: skip
    """``bread @ meat @ bread`` for a bread from :func:`inverse_free` (or still being computed,
    :func:`start_bread`) and a positive semi-definite meat, exactly symmetric.

    From :data:`~ratings.models.newton.LAPACK_FROM` parameters, on the free block (where the bread's
    diagonal is not zero): with the meat's Cholesky factor, meat = R R^T, it is Z Z^T for
    Z = bread R, a triangular product and a symmetric rank-k update (2 P^3 flops, with P^3 / 3
    for the factor) in place of two general products (4 P^3); the two general products when
    the meat's free block is not positive definite. A pending bread's factor is computed
    while it is, and the triangular product in blocks of rows side by side on the pool (the
    routines release the GIL: :mod:`ratings.core.nogil`).
    """
    free = bread.free if isinstance(bread, PendingBread) else None
    if free is None or free.size < LAPACK_FROM:
        bread = ready(bread)
        free = np.flatnonzero(np.diagonal(bread))
    if free.size < LAPACK_FROM:
        out = bread @ meat @ bread
        return (out + out.T) / 2.0
    # The blocks are symmetric, so their transposes (in Fortran order) hold them.
    # No BLAS limit of its own here: a pending bread's job holds one on the pool, and the
    # limits are process-wide (two at once would restore each other's settings).
    r = nogil.fortran(block_view(meat, free).T)
    info = nogil.potrf(r, lower=True)  # meat = r r^T (above the diagonal: unread)
    bread = ready(bread)
    if info != 0:
        out = bread @ meat @ bread
        return (out + out.T) / 2.0
    z = nogil.fortran(block_view(bread, free).T)
    with _threads.one_blas_thread():  # z := bread @ r, blocks of rows side by side
        _threads.run([functools.partial(nogil.trmm_right, z[lo:hi], r, lower=True)
                      for lo, hi in _threads.row_blocks(z.shape[0], _threads.workers())])
    return gram_embedded(z.T, free, bread.shape[0])


def gram(a: NDArray[np.float64], alpha: float = 1.0) -> NDArray[np.float64]:
    """``alpha * a.T @ a``, exactly symmetric: BLAS's symmetric rank-k update (half the
    products of a general matrix product) once the result is large enough to matter."""
    if a.shape[1] < LAPACK_FROM or a.shape[0] == 0:  # scipy.linalg stays out of small fits
        out = alpha * (a.T @ a)
        return (out + out.T) / 2.0
    return mirror_upper(_gram_upper(a, alpha))


def gram_embedded(a: NDArray[np.float64], free: NDArray[np.int64], n: int,
                  alpha: float = 1.0) -> NDArray[np.float64]:  # fmt: skip
    """``embed(gram(a, alpha), free, n)``, the large case's triangle mirrored where it is
    embedded (:func:`~ratings.core.linalg.embed_upper`: one pass over the result)."""
    if a.shape[1] < LAPACK_FROM or a.shape[0] == 0:
        return embed(gram(a, alpha), free, n)
    return embed_upper(_gram_upper(a, alpha), free, n)


def _gram_upper(a: NDArray[np.float64], alpha: float) -> NDArray[np.float64]:
    """The upper triangle (zeros below) of :func:`gram`'s large case."""
    from scipy.linalg.blas import dsyrk

    g, p = a.shape
    parts = _threads.workers()
    if parts < 2 or g * p * p // 2 < _threads.SPLIT_FLOPS:
        # The upper triangle (zeros below); a.T is a Fortran-ordered view, so nothing is copied.
        return dsyrk(alpha, a.T, trans=0, lower=0)
    # Side by side on the pool (BLAS on one thread, see ratings.core.threads.matmul): the upper
    # triangle in blocks of columns, a rank-k update on each diagonal block and a product on
    # each block above it, each releasing the GIL (numpy's products, the updates through
    # ratings.core.nogil; two blocks: one product beside two updates of half its work each).
    upper = np.zeros((p, p))
    cuts = _threads.row_blocks(p, parts, _threads.ROW_ALIGN)
    rows = a.T if a.strides[1] == a.itemsize else nogil.fortran(a.T)  # a.T in Fortran order
    nogil.available()  # scipy's OpenBLAS loaded before its threads are limited

    def diagonal(lo: int, hi: int) -> None:
        out = np.zeros((hi - lo, hi - lo), order="F")
        nogil.syrk(out, rows[lo:hi], alpha)
        upper[lo:hi, lo:hi] = out

    def above(lo: int, hi: int, lo2: int, hi2: int) -> None:
        np.matmul(a[:, lo:hi].T, a[:, lo2:hi2], out=upper[lo:hi, lo2:hi2])
        upper[lo:hi, lo2:hi2] *= alpha

    jobs = [functools.partial(above, *c, *c2) for i, c in enumerate(cuts) for c2 in cuts[i + 1:]]
    with _threads.one_blas_thread():
        _threads.run(jobs + [functools.partial(diagonal, *c) for c in cuts])
    return upper


def bootstrap_draws(
    data: Comparisons,
    refit: Callable[[Comparisons], NDArray[np.float64] | None],
    *,
    n_boot: int,
    seed: int,
    clustered: bool,
    progress: bool | None = None,
) -> NDArray[np.float64]:
    """Refit on ``n_boot`` resamples and stack the parameter vectors, shape (n_boot, M).

    Clustered: clusters are drawn with replacement (each row's counts are multiplied by its
    cluster's draw count). Otherwise verdicts are drawn with replacement (a multinomial over the
    aggregated win/loss/tie cells). ``refit`` returns ``None`` for a resample whose estimate does
    not exist (a model never losing in it); such draws are skipped and reported in a warning.
    A progress line is written to stderr when it is a terminal (``progress=None``).
    """
    rng = np.random.default_rng(seed)
    show = sys.stderr.isatty() if progress is None else progress
    cells = np.concatenate([data.wi, data.wj, data.tt])
    n_verdicts = round(float(cells.sum()))
    draws, failed = [], 0
    for b in range(int(n_boot)):
        if clustered:
            mult = rng.multinomial(data.n_clusters, np.full(data.n_clusters, 1.0 / data.n_clusters))
            sample = data.reweighted(mult[data.cluster].astype(np.float64))
        else:
            counts = rng.multinomial(n_verdicts, cells / cells.sum()).astype(np.float64)
            wi, wj, tt = np.split(counts, 3)
            sample = Comparisons(data.models, data.judges, data.clusters, data.cluster_name,
                                 data.ii, data.jj, data.judge, data.cluster, wi, wj, tt)
        theta = refit(sample)
        if theta is None:
            failed += 1
        else:
            draws.append(theta)
        if show:
            sys.stderr.write(f"\rbootstrap {b + 1}/{n_boot}")
            sys.stderr.flush()
    if show:
        sys.stderr.write("\n")
    if failed:
        warnings.warn(
            f"{failed} of {n_boot} bootstrap resamples had no finite estimate (a model never lost "
            "or never won in them) and were skipped; intervals use the other draws.",
            RuntimeWarning,
            stacklevel=3,
        )
    if len(draws) < 2:
        raise ValueError("Fewer than 2 bootstrap resamples had a finite estimate.")
    return np.vstack(draws)



def collapsed_contrasts(
    cov: NDArray[np.float64], model_cov: NDArray[np.float64], *, rtol: float = 1e-8,
) -> NDArray[np.int64]:
    """Pairs (i, j), i < j, whose robust variance of ``s_i - s_j`` is at most ``rtol`` times its
    model-based variance (which is not 0), shape (K, 2).

    A sandwich estimates a contrast's variance from the residuals of its verdicts. When those are
    all zero (a board of ties only: every fitted probability is 1/2 and every outcome 1/2; or a
    model that only ever tied one opponent) the sandwich and the bootstrap report zero width
    although the model-based variance says the contrast is barely known: a confident number from
    no information. ``cov`` may be the covariance of bootstrap draws.

    Notes
    -----
    Since ``Var(X - Y) >= (sd X - sd Y)^2`` and ``Var(X - Y) <= (sd X + sd Y)^2``, a collapsed
    pair has robust standard deviations within ``sqrt(rtol) (m_i + m_j)`` of each other (``m``
    the model-based ones). Sorting by the robust standard deviation finds those candidates in
    O(M log M); only they are checked exactly, so a usual board costs no M x M pass.
    """
    m = cov.shape[0]
    d_sw, d_mb = np.clip(np.diag(cov), 0.0, None), np.clip(np.diag(model_cov), 0.0, None)
    sd, sd_mb = np.sqrt(d_sw), np.sqrt(d_mb)
    order = np.argsort(sd, kind="stable")
    ranked = sd[order]
    slack = np.sqrt(rtol) * (sd_mb + sd_mb.max(initial=0.0))
    lo = np.searchsorted(ranked, sd - slack, side="left")
    hi = np.searchsorted(ranked, sd + slack, side="right")
    width = hi - lo
    if int(width.sum()) > max(m * m // 4, 1024):  # most pairs are candidates: check them all
        i, j = np.triu_indices(m, k=1)
    else:
        i = np.repeat(np.arange(m), width)
        j = order[np.arange(int(width.sum())) - np.repeat(np.cumsum(width) - width - lo, width)]
        keep = i < j
        i, j = i[keep], j[keep]
    v_sw = d_sw[i] + d_sw[j] - 2.0 * cov[i, j]
    v_mb = d_mb[i] + d_mb[j] - 2.0 * model_cov[i, j]
    bad = (v_mb > 0) & (v_sw <= rtol * v_mb)
    return np.column_stack([i[bad], j[bad]]).astype(np.int64)


def model_based_supplement(cov: NDArray[np.float64], model_cov: NDArray[np.float64], *,
                           rtol: float = 1e-8) -> NDArray[np.float64] | None:
    """The variance a robust covariance lacks where it collapsed: a factor ``F`` (d x M) with
    ``cov + F.T @ F`` giving every contrast with no robust variance its model-based variance,
    and every contrast with no component along those directions its robust one; None when no
    direction collapsed.

    In coordinates where ``model_cov`` is the identity (``model_cov = L L^T``), the robust
    covariance is ``U diag(lam) U^T``; directions with ``lam <= rtol`` (no robust variance,
    :func:`collapsed_contrasts`) get ``1 - lam`` added, so ``F = ((L U_0) sqrt(1 - lam_0))^T``.
    A contrast ``c`` with ``cov @ c = 0`` then has variance ``c^T model_cov c`` exactly, and
    one orthogonal to them (in ``model_cov``'s inner product) keeps ``c^T cov c``. Coordinates
    without model-based variance (the reference's) stay zero.
    """
    from scipy.linalg import solve_triangular

    m = cov.shape[0]
    free = np.flatnonzero(np.diag(model_cov) > 0)
    if not free.size or not np.isfinite(cov).all():
        return None
    vm = model_cov[np.ix_(free, free)]
    vr = cov[np.ix_(free, free)]
    chol = np.linalg.cholesky((vm + vm.T) / 2.0)
    half = solve_triangular(chol, vr, lower=True)
    white = solve_triangular(chol, half.T, lower=True)
    lam, u = np.linalg.eigh((white + white.T) / 2.0)
    low = lam <= rtol
    if not low.any():
        return None
    out = np.zeros((int(low.sum()), m))
    out[:, free] = ((chol @ u[:, low]) * np.sqrt(1.0 - np.clip(lam[low], 0.0, 1.0))).T
    return out
