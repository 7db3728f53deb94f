"""LAPACK and BLAS routines called without holding the GIL: the dense algebra a fit runs on
the thread pool beside its other work.

scipy's ``scipy.linalg.lapack`` / ``scipy.linalg.blas`` wrappers keep the GIL for much of a
call, so a factorisation on the pool stalls the caller's NumPy passes beside it, and blocks of
one triangular product on two threads take as long as one. The same routines (scipy's OpenBLAS,
through the C entry points ``scipy.linalg.cython_lapack`` and ``cython_blas`` export for
Cython) called by ``ctypes`` release the GIL for the whole call, and compute the same numbers.
Where those entry points cannot be read (:func:`available` False), each function calls
scipy's wrapper of the same routine instead. scipy is imported on the first call (small fits
never make one).

Every function works in place on arrays in Fortran order: a float64 array (or view) whose
rows are adjacent in memory (``strides[0] == 8``), e.g. ``a.T`` of a C-ordered ``a``
(:func:`fortran`).
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

__all__ = ["available", "fortran", "potrf", "potri", "syrk", "trmm_right"]


def _entry(lapack: bool, name: str, n_args: int) -> Callable | None:
    """The C routine ``name`` of ``scipy.linalg.cython_lapack`` (``lapack``) or
    ``cython_blas`` as a ctypes function of ``n_args`` pointers (which releases the GIL), or
    None where it cannot be read."""
    try:
        from scipy.linalg import cython_blas, cython_lapack

        capsule = (cython_lapack if lapack else cython_blas).__pyx_capi__[name]
        api = ctypes.pythonapi  # private prototypes: the shared ones' types are left alone
        get_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(
            ("PyCapsule_GetName", api))
        get = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
            ("PyCapsule_GetPointer", api))
        address = get(capsule, get_name(capsule))
    except (ImportError, AttributeError, KeyError, ValueError):
        return None
    if not address:
        return None
    return ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * n_args))(address)


#: (from LAPACK, else BLAS; routine; number of arguments) of each entry point.
_ROUTINES = {"potrf": (True, "dpotrf", 5), "potri": (True, "dpotri", 5),
             "trmm": (False, "dtrmm", 11), "syrk": (False, "dsyrk", 10)}


@functools.cache
def _routine(key: str) -> Callable | None:
    """The GIL-free entry point of :data:`_ROUTINES`' ``key`` (read once), or None."""
    return _entry(*_ROUTINES[key])


def available() -> bool:
    """Are the GIL-free entry points in use (else scipy's wrappers of the same routines)?
    Reads them on the first call, importing ``scipy.linalg``: call it before
    :func:`ratings.core.threads.one_blas_thread`, whose limit reaches the BLAS libraries
    loaded when it is entered."""
    return all(_routine(key) is not None for key in _ROUTINES)


def fortran(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """A copy of ``a`` in Fortran order (of a symmetric ``a``: a copy of ``a.T``, read along
    memory)."""
    return np.array(a, dtype=np.float64, order="F")


def _ld(a: NDArray[np.float64], write: bool = True) -> int:
    """The leading dimension of a Fortran-ordered float64 array or view (``write``: one the
    routine writes); ``ValueError`` for any other layout."""
    rows, cols = a.shape
    ld = a.strides[1] // 8 if cols > 1 else max(1, rows)
    if a.dtype != np.float64 or (rows > 1 and a.strides[0] != 8) or a.strides[1] % 8 \
            or ld < max(1, rows) or (write and not a.flags.writeable):  # fmt: skip
        raise ValueError("expected a float64 array in Fortran order")
    return ld


def _square(a: NDArray[np.float64], write: bool = True) -> tuple:
    """``(pointer, n, leading dimension)`` of a square Fortran-ordered ``a``."""
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"expected a square matrix, got shape {a.shape}")
    return ctypes.c_void_p(a.ctypes.data), _int(a.shape[0]), _int(_ld(a, write))


def _int(v: int):
    return ctypes.byref(ctypes.c_int(v))


def _uplo(lower: bool) -> ctypes.c_char_p:
    """LAPACK's triangle flag: "L" (lower) or "U" (upper)."""
    return ctypes.c_char_p(b"L" if lower else b"U")


def _factor(key: str, a: NDArray[np.float64], lower: bool) -> int:
    """``potrf`` or ``potri`` (``key``) of ``a`` in place; LAPACK's ``info``."""
    pointer, n, ld = _square(a)
    if not a.shape[0]:
        return 0
    call = _routine(key)
    if call is None:  # scipy's wrapper of the same routine (copies a view it cannot write)
        from scipy.linalg import lapack

        if key == "potrf":
            out, info = lapack.dpotrf(a, lower=lower, clean=False, overwrite_a=True)
        else:
            out, info = lapack.dpotri(a, lower=lower, overwrite_c=True)
        if not np.shares_memory(out, a):
            a[...] = out
        return int(info)
    info = ctypes.c_int(0)
    call(_uplo(lower), n, pointer, ld, ctypes.byref(info))
    return info.value


def potrf(a: NDArray[np.float64], *, lower: bool) -> int:
    """The Cholesky factor of the symmetric positive definite ``a`` (its ``lower`` or upper
    triangle read) written over that triangle, the other left as it was; LAPACK's ``info``
    (0: done; > 0: not positive definite)."""
    return _factor("potrf", a, lower)


def potri(a: NDArray[np.float64], *, lower: bool) -> int:
    """The inverse of the matrix whose Cholesky factor :func:`potrf` left in ``a``'s
    ``lower`` or upper triangle, written over that triangle; LAPACK's ``info``."""
    return _factor("potri", a, lower)


def trmm_right(b: NDArray[np.float64], r: NDArray[np.float64], *, lower: bool) -> None:
    """``b := b @ r`` in place, ``r`` triangular (its ``lower`` or upper triangle read)."""
    pointer, n, ld = _square(r, write=False)
    if b.ndim != 2 or b.shape[1] != r.shape[0]:
        raise ValueError(f"shapes {b.shape} and {r.shape} do not multiply")
    ldb = _ld(b)
    if not b.size:
        return
    call = _routine("trmm")
    if call is None:
        from scipy.linalg.blas import dtrmm

        b[...] = dtrmm(1.0, r, b, side=1, lower=int(lower))
        return
    call(ctypes.c_char_p(b"R"), _uplo(lower), ctypes.c_char_p(b"N"), ctypes.c_char_p(b"N"),
         _int(b.shape[0]), n, ctypes.byref(ctypes.c_double(1.0)), pointer, ld,
         ctypes.c_void_p(b.ctypes.data), _int(ldb))  # fmt: skip


def syrk(c: NDArray[np.float64], a: NDArray[np.float64], alpha: float = 1.0) -> None:
    """The upper triangle of ``c := alpha * a @ a.T`` in place (below the diagonal left as it
    was)."""
    pointer, n, ldc = _square(c)
    if a.ndim != 2 or a.shape[0] != c.shape[0]:
        raise ValueError(f"shapes {a.shape} and {c.shape} do not match")
    if not c.size:
        return
    if not a.shape[1]:
        c[np.triu_indices(c.shape[0])] = 0.0
        return
    lda = _ld(a, write=False)
    call = _routine("syrk")
    if call is None:
        from scipy.linalg.blas import dsyrk

        c[...] = dsyrk(alpha, a, beta=0.0, c=c, trans=0, lower=0)
        return
    call(_uplo(False), ctypes.c_char_p(b"N"), n, _int(a.shape[1]),
         ctypes.byref(ctypes.c_double(alpha)), ctypes.c_void_p(a.ctypes.data), _int(lda),
         ctypes.byref(ctypes.c_double(0.0)), pointer, ldc)  # fmt: skip
