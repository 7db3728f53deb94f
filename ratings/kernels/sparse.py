"""The sparse product the clustered intervals' NumPy twin runs on (a CSR matrix times a dense
one, by way of its CSC form), with scipy's compiled routines but without importing
:mod:`scipy.sparse`.

Importing scipy.sparse costs a fresh process about 0.1 s of CPU, a tenth of a one-shot
``ratings fit`` of a million verdicts: its array-API layer touches every lazily loaded numpy
submodule (numpy.f2py and numpy.testing among them). The routines themselves live in scipy's
``sparsetools`` extension, which imports nothing but numpy and loads in under a millisecond:
it is loaded from its file here, for this module's own use. When it cannot be (another layout
of scipy), or scipy.sparse is imported already, scipy.sparse's own copy is used: the same
routines on the same arrays, the same results bit for bit (tested against ``csr_matrix``).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import threading
from types import ModuleType
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

__all__ = ["CSC", "csc_of_csr", "csc_times_dense"]

_NAME = "scipy.sparse._sparsetools"
_TOOLS: ModuleType | None = None
_LOCK = threading.Lock()


def _from_file() -> ModuleType | None:
    """scipy's sparsetools extension loaded from its file (None where it is not found). It is
    kept out of ``sys.modules``: a later ``import scipy.sparse`` loads it as its own."""
    scipy = importlib.util.find_spec("scipy")  # finds the package without importing it
    if scipy is None or scipy.origin is None:
        return None
    folder = os.path.join(os.path.dirname(scipy.origin), "sparse")
    spec = importlib.machinery.PathFinder.find_spec(_NAME, [folder])
    if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
        return None
    had = _NAME in sys.modules
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        if not had:  # an extension of one-phase initialisation registers itself
            sys.modules.pop(_NAME, None)
    return module


def _sparsetools() -> ModuleType:
    """The extension, loaded once (scipy.sparse's own copy when that is imported, or where
    loading it from its file fails)."""
    global _TOOLS
    with _LOCK:
        if _TOOLS is None:
            module = None
            if "scipy.sparse" not in sys.modules:
                try:
                    module = _from_file()
                except Exception:  # any failure: scipy.sparse's own import decides
                    module = None
            if module is None or not all(hasattr(module, f) for f in ("csr_tocsc",
                                                                      "csc_matvecs")):
                from scipy.sparse import _sparsetools as module  # type: ignore[no-redef]
            _TOOLS = module
        return _TOOLS


class CSC(NamedTuple):
    """A sparse matrix in compressed sparse columns: column ``j``'s entries are
    ``values[col_ptr[j]:col_ptr[j + 1]]`` in the rows ``rows[col_ptr[j]:col_ptr[j + 1]]``."""

    col_ptr: NDArray[np.signedinteger]
    rows: NDArray[np.signedinteger]
    values: NDArray[np.float64]
    shape: tuple[int, int]


def csc_of_csr(data: NDArray[np.float64], indices: NDArray[np.signedinteger],
               indptr: NDArray[np.signedinteger], n_cols: int) -> CSC:  # fmt: skip
    """``csr_matrix((data, indices, indptr), shape=(len(indptr) - 1, n_cols)).tocsc()``:
    duplicates kept, each column's entries by row, then in their order in the CSR arrays.

    Parameters
    ----------
    data : ndarray of float64
    indices, indptr : ndarray of int32 or int64
        The CSR arrays; ``indptr`` has one entry per row and one more. The CSC arrays take
        ``indptr``'s integer type.
    n_cols : int

    Returns
    -------
    CSC
    """
    n_rows = indptr.size - 1
    index = indptr.dtype
    nnz = int(indptr[-1]) if indptr.size else 0
    col_ptr = np.empty(n_cols + 1, dtype=index)
    rows = np.empty(nnz, dtype=index)
    values = np.empty(nnz, dtype=np.float64)
    _sparsetools().csr_tocsc(n_rows, n_cols, indptr, indices.astype(index, copy=False),
                             np.asarray(data, dtype=np.float64), col_ptr, rows,
                             values)  # fmt: skip
    return CSC(col_ptr, rows, values, (n_rows, n_cols))


def csc_times_dense(w: CSC, x: NDArray[np.float64]) -> NDArray[np.float64]:
    """``w @ x`` as scipy's ``csc_matrix @ ndarray`` computes it: each column's entries added
    into the product's rows in turn (column by column, in the entries' order).

    Parameters
    ----------
    w : CSC, shape (m, n)
    x : ndarray of float64, shape (n, k)

    Returns
    -------
    ndarray of float64, shape (m, k)
    """
    n_rows, n_cols = w.shape
    if x.shape[0] != n_cols:
        raise ValueError(f"Shapes {w.shape} and {x.shape} do not align.")
    out = np.zeros((n_rows, x.shape[1]))
    _sparsetools().csc_matvecs(n_rows, n_cols, x.shape[1], w.col_ptr, w.rows, w.values,
                               np.ascontiguousarray(x, dtype=np.float64).ravel(),
                               out.ravel())  # fmt: skip
    return out
