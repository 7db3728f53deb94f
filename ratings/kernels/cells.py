"""Numba kernel of :mod:`ratings.io.blanks`: which cells of an Arrow string array may be
missing, from their offsets and bytes in one pass.

Private, self-contained (numba's cache does not follow edits into other files); its twin is
:func:`ratings.io.blanks._candidates`' NumPy passes, tested equal.
"""

from __future__ import annotations

from numba import njit

__all__ = ["candidates"]


@njit(cache=True, nogil=True)
def candidates(offsets, data, edge, ends, length_bits, longest, out):
    """``out[r]``: may cell r (bytes ``data[offsets[r]:offsets[r + 1]]``) be missing? Empty,
    an edge byte (``edge``) at either end, or at most ``longest`` bytes with the end bytes of
    a marker of its length (``ends[first * 256 + last] & length_bits[length]``)."""
    for r in range(out.shape[0]):
        lo, hi = offsets[r], offsets[r + 1]
        length = hi - lo
        if length <= 0:
            out[r] = True
            continue
        first, last = data[lo], data[hi - 1]
        hit = edge[first] or edge[last]
        if not hit and length <= longest:
            hit = (ends[first * 256 + last] & length_bits[length]) != 0
        out[r] = hit
