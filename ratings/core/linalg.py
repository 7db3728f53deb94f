"""Dense symmetric linear algebra shared by the fits and the covariances: positive definite
solves and inverses, and blocks of a matrix with the anchored model left out."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ratings.core.threads import one_blas_thread

__all__ = ["KEPT_CHANGE", "LAPACK_FROM", "SINGLE_FROM", "KeptFactor", "block", "block_view",
           "embed", "embed_upper", "inverse_pd", "inverse_upper", "mirror_upper", "solve_pd"]


#: From this many parameters on, positive definite systems are solved through one Cholesky
#: factorisation (scipy.linalg); below it numpy's Cholesky check plus LU costs a fit at most a
#: few ms more (199 parameters: 0.3 vs 0.13 ms a solve, 1.5 vs 0.4 ms the inverse) and keeps
#: scipy.linalg (0.1-0.3 s to import) out of a fresh process's fit.
LAPACK_FROM = 250
#: From this many parameters on, :func:`solve_pd` factorises in single precision (about half
#: the time of double: 999 parameters 9.5 against 17 ms on one thread) and refines the solution
#: with double-precision residuals.
SINGLE_FROM = 500


#: A kept single-precision factor (:class:`KeptFactor`) serves the next system while that
#: one's diagonal is within this relative change of the factorised matrix's: the refinement
#: contracts at about that rate (1,000 models' last Newton step: 0.5 %, six rounds of a
#: millisecond against a 12 ms factorisation), and bails out past :data:`KEPT_ROUNDS`.
KEPT_CHANGE = 0.02
#: At most this many refinement rounds on a kept factor before factorising afresh.
KEPT_ROUNDS = 8


class KeptFactor:
    """The single-precision Cholesky factor of :func:`solve_pd`'s last system, kept for the
    next system of a sequence that changes little (Newton's steps near the estimate): from
    :data:`SINGLE_FROM` parameters, a system whose diagonal is within :data:`KEPT_CHANGE` of
    the factorised one's is solved by refining on this factor (double-precision residuals of
    the new system, so to the same accuracy), sparing a factorisation."""

    __slots__ = ("diagonal", "factor")

    def __init__(self) -> None:
        self.factor: NDArray[np.float32] | None = None
        self.diagonal: NDArray[np.float64] | None = None

    def serves(self, h: NDArray[np.float64]) -> bool:
        """Is the kept factor close enough to ``h`` to refine on?"""
        old = self.diagonal
        if self.factor is None or old is None or old.shape[0] != h.shape[0]:
            return False
        with np.errstate(divide="ignore", invalid="ignore"):
            change = np.abs(np.diagonal(h) / old - 1.0)
        return bool(np.all(change <= KEPT_CHANGE))


def solve_pd(h: NDArray[np.float64], g: NDArray[np.float64],
             kept: KeptFactor | None = None) -> NDArray[np.float64]:  # fmt: skip
    """``h^-1 g`` for a symmetric ``h``; raises ``LinAlgError`` unless it is positive definite.

    ``kept`` (Newton's steps): a single-precision factor of an earlier system to refine on
    while it serves (:class:`KeptFactor`), and where this solve's factor is kept."""
    if h.shape[0] >= SINGLE_FROM:
        if kept is not None and kept.serves(h):
            x = _refined(kept.factor, h, g, KEPT_ROUNDS)
            if x is not None:
                return x
        factor = _factor_single(h)
        x = None if factor is None else _refined(factor, h, g, 4)
        if kept is not None:
            kept.factor, kept.diagonal = (None, None) if x is None else \
                (factor, np.diagonal(h).copy())
        if x is not None:
            return x
    if h.shape[0] >= LAPACK_FROM:
        from scipy.linalg import cho_factor, cho_solve

        with one_blas_thread():  # scipy's own OpenBLAS, perhaps loaded just now
            return cho_solve(cho_factor(h, check_finite=False), g, check_finite=False)
    np.linalg.cholesky(h)  # positive definite?
    return np.linalg.solve(h, g)


def _factor_single(h: NDArray[np.float64]) -> NDArray[np.float32] | None:
    """The lower Cholesky factor of ``h`` in single precision; None when ``h`` is not positive
    definite in single precision."""
    from scipy.linalg.lapack import spotrf

    with one_blas_thread():
        # h.T holds h (symmetric): in Fortran order, so the factorisation overwrites this copy
        factor, info = spotrf(h.T.astype(np.float32), lower=True, clean=False, overwrite_a=1)
    return factor if info == 0 else None


def _refined(factor: NDArray[np.float32], h: NDArray[np.float64], g: NDArray[np.float64],
             rounds: int) -> NDArray[np.float64] | None:  # fmt: skip
    """``h^-1 g`` from a single-precision Cholesky factor (of ``h``, or of a matrix close to
    it), refined by double-precision residuals until the error left is below 1e-13 of the
    solution (the accuracy of a double-precision solve on a well-conditioned ``h``): a
    correction that small, or one whose ratio to the previous correction (the rate the
    refinement contracts at) puts the next below it, which spares the round that would only
    confirm it; None when a correction is not finite or the refinement does not settle in
    ``rounds`` rounds (then the caller factorises afresh or solves in double precision)."""
    from scipy.linalg.lapack import spotrs

    with one_blas_thread():
        x = np.zeros_like(g)
        r, last = g, np.nan  # no rate after one round (nan compares false)
        for _ in range(rounds):
            dx, info = spotrs(factor, r.astype(np.float32), lower=True)
            if info != 0 or not np.all(np.isfinite(dx)):
                return None
            x += dx
            size = float(np.max(np.abs(x), initial=0.0))
            step = float(np.max(np.abs(dx), initial=0.0))
            rate = step / last  # from the second round on: the first correction is x itself
            if step <= 1e-13 * size or (rate < 0.5 and step * rate / (1.0 - rate) <= 1e-13 * size):
                return x
            r, last = g - h @ x, step
    return None


def inverse_pd(h: NDArray[np.float64]) -> NDArray[np.float64]:
    """Inverse of a symmetric positive definite ``h``, exactly symmetric; raises
    ``LinAlgError`` otherwise.

    From :data:`LAPACK_FROM` parameters: one Cholesky factorisation and LAPACK's triangular
    inverse (``potrf`` + ``potri``, half the work of solving against the identity).
    """
    if h.shape[0] < LAPACK_FROM:
        inv = solve_pd(h, np.eye(h.shape[0]))
        return (inv + inv.T) / 2.0
    return mirror_upper(inverse_upper(h))


def inverse_upper(h: NDArray[np.float64]) -> NDArray[np.float64]:
    """The upper triangle of :func:`inverse_pd` of ``h`` (below the diagonal: whatever the
    factorisation left there), from ``potrf`` + ``potri`` whatever its size, for a caller that
    mirrors it where it puts it (:func:`embed_upper`, :func:`mirror_upper`)."""
    from ratings.core import nogil

    # h is symmetric, so h.T (in Fortran order) holds the same matrix: copied along memory.
    inv = nogil.fortran(h.T)
    nogil.available()  # scipy's OpenBLAS loaded before its threads are limited
    with one_blas_thread():  # GIL-free: a bread on the pool runs beside the caller's passes
        info = nogil.potrf(inv, lower=False)  # below the diagonal: unread
        if info == 0:
            info = nogil.potri(inv, lower=False)  # fills the upper part
    if info != 0:
        raise np.linalg.LinAlgError("matrix is not positive definite")
    return inv


def mirror_upper(upper: NDArray[np.float64]) -> NDArray[np.float64]:
    """The symmetric matrix whose upper triangle ``upper`` holds (what lies below the diagonal
    is not read)."""
    out = np.empty(upper.shape)
    _mirror_into(out, upper)
    return out


#: Rows per block of :func:`_mirror_into`: a block's transposed reads stay in a core's cache.
MIRROR_ROWS = 64


def _mirror_into(out: NDArray[np.float64], upper: NDArray[np.float64]) -> None:
    """``out[...] = mirror_upper(upper)``, written in place (``out`` may be a view), a block of
    rows at a time: the triangle's transpose read in blocks, not as one strided pass over the
    matrix (999 parameters: 1.3 against 3.4 ms). Only ``upper``'s upper triangle is read; in
    Fortran order (as LAPACK leaves it) it is read as the lower triangle of ``upper.T``."""
    lower = upper.strides[0] < upper.strides[1]
    src = upper.T if lower else upper  # src's rows run along memory
    n = src.shape[0]
    for lo in range(0, n, MIRROR_ROWS):
        hi = min(lo + MIRROR_ROWS, n)
        block = src[lo:hi, lo:hi]
        if lower:  # the matrix is src's lower triangle
            out[lo:hi, :lo] = src[lo:hi, :lo]
            out[lo:hi, hi:] = src[hi:, lo:hi].T
            out[lo:hi, lo:hi] = np.tril(block) + np.tril(block, -1).T
        else:
            out[lo:hi, hi:] = src[lo:hi, hi:]
            out[lo:hi, :lo] = src[:lo, lo:hi].T
            out[lo:hi, lo:hi] = np.triu(block) + np.triu(block, 1).T


def embed_upper(upper: NDArray[np.float64], idx: NDArray[np.int64],
                n: int) -> NDArray[np.float64]:  # fmt: skip
    """``embed(mirror_upper(upper), idx, n)`` written in one pass over the (n, n) result (a
    999-parameter inverse or sandwich: about a third of the time of the two)."""
    k = _gap(idx, n) if idx.size < n else None
    if idx.size == n and np.array_equal(idx, np.arange(n)):
        return mirror_upper(upper)
    if k is None:
        return embed(mirror_upper(upper), idx, n)
    out = np.zeros((n, n))
    _mirror_into(out[:k, :k], upper[:k, :k])
    _mirror_into(out[k + 1:, k + 1:], upper[k:, k:])
    out[:k, k + 1:] = upper[:k, k:]
    out[k + 1:, :k] = upper[:k, k:].T
    return out


def _gap(idx: NDArray[np.int64], n: int) -> int | None:
    """The one index of ``0..n-1`` that sorted ``idx`` leaves out (the anchored model), else
    None."""
    if idx.size != n - 1 or not np.all(np.diff(idx) > 0):
        return None
    return int(np.flatnonzero(np.diff(np.concatenate([[-1], idx, [n]])) > 1)[0])


def block(h: NDArray[np.float64], idx: NDArray[np.int64]) -> NDArray[np.float64]:
    """``h[np.ix_(idx, idx)]``; with one row and column left out, as four block copies
    instead of a gather per element."""
    n = h.shape[0]
    if idx.size == n:
        return h
    k = _gap(idx, n)
    if k is None:
        return h[np.ix_(idx, idx)]
    out = np.empty((n - 1, n - 1))
    out[:k, :k], out[:k, k:] = h[:k, :k], h[:k, k + 1:]
    out[k:, :k], out[k:, k:] = h[k + 1:, :k], h[k + 1:, k + 1:]
    return out


def block_view(h: NDArray[np.float64], idx: NDArray[np.int64]) -> NDArray[np.float64]:
    """:func:`block` for a caller that only reads it: a view of ``h`` when ``idx`` leaves out
    its first or last index (the anchored model is usually the first), else the copy. Solvers
    copy what they factorise anyway; a view spares the copy before theirs."""
    n = h.shape[0]
    k = _gap(idx, n) if idx.size == n - 1 else None
    if k == 0:
        return h[1:, 1:]
    if k == n - 1:
        return h[:-1, :-1]
    return block(h, idx)


def embed(a: NDArray[np.float64], idx: NDArray[np.int64], n: int) -> NDArray[np.float64]:
    """The (n, n) matrix of zeros with ``a`` at ``np.ix_(idx, idx)`` (the inverse of
    :func:`block`)."""
    out = np.zeros((n, n))
    k = _gap(idx, n)
    if k is None:
        out[np.ix_(idx, idx)] = a
        return out
    out[:k, :k], out[:k, k + 1:] = a[:k, :k], a[:k, k:]
    out[k + 1:, :k], out[k + 1:, k + 1:] = a[k:, :k], a[k:, k:]
    return out
