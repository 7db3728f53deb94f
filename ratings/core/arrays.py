"""Read-only arrays: aggregated rows and fitted results are immutable, and tell NumPy so."""

from __future__ import annotations

import numpy as np
from numpy.typing import DTypeLike

__all__ = ["frozen", "readonly_copy"]


def frozen(a, dtype: DTypeLike = None) -> np.ndarray:
    """``a`` as a C-contiguous array of ``dtype`` (copied only when it is not one already),
    made read-only in place: for arrays nobody else writes to (fresh results, kernel output)."""
    a = np.ascontiguousarray(a, dtype=dtype)
    a.setflags(write=False)
    return a


def readonly_copy(a, dtype: DTypeLike = np.float64) -> np.ndarray:
    """A read-only copy of ``a`` as ``dtype``; an array of that dtype that owns its data and is
    already read-only (a fresh result made :func:`frozen`) is kept as is."""
    if (isinstance(a, np.ndarray) and a.dtype == dtype and a.flags.owndata
            and not a.flags.writeable):  # fmt: skip
        return a
    a = np.array(a, dtype=dtype)
    a.setflags(write=False)
    return a
