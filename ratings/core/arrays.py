"""Read-only arrays: aggregated rows and fitted results are immutable, and tell NumPy so."""

from __future__ import annotations

import numpy as np
from numpy.typing import DTypeLike

__all__ = ["frozen", "readonly_copy", "run_starts", "run_sums"]


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


def run_starts(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The runs of equal values in sorted ``codes``: each run's code and where it starts."""
    starts = np.flatnonzero(np.diff(codes, prepend=-1))
    return codes[starts], starts


def run_sums(runs: tuple[np.ndarray, np.ndarray], values: np.ndarray, m: int) -> np.ndarray:
    """Per code ``0..m-1``, ``values`` summed over its run (``runs`` from :func:`run_starts`):
    a third of a scatter's time (a scatter adding into one bin row after row waits on each
    add)."""
    code, starts = runs
    out = np.zeros(m)
    if starts.size:
        out[code] = np.add.reduceat(values, starts)
    return out
