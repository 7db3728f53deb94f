"""Which cells of a text column are missing, without encoding the column.

A column a computation does not use (the task of a fit that clusters by nothing) still rejects
the rows where it is empty, as :func:`ratings.io.read_verdicts` rejects them: a cell is missing
when it is null or, stripped, one of :data:`~ratings.io.cells.NA_TOKENS`. Encoding the column
(hashing every cell) answers that, but costs as much as encoding a column that is used. For an
Arrow string column, :func:`missing_cells` reads each cell's length and its first and last
bytes instead: only a cell that stripping could change (one starting or ending with whitespace
or a multi-byte character) or that has a marker's length and end bytes can be missing, and only
those few are compared as text.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.schema import STRING_DTYPE
from ratings.io.cells import NA_TOKENS, text

__all__ = ["COMPILED_FROM", "candidates_with", "missing_cells"]

# Bytes that can begin or end a cell ``str.strip`` changes: ASCII whitespace as Python sees it
# (\x1c-\x1f included) and every byte of a multi-byte UTF-8 character.
_EDGE = np.zeros(256, dtype=bool)
_EDGE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True
_EDGE[128:] = True
_EDGE_BYTES = _EDGE.astype(np.uint8).tobytes()  # a translation table: byte -> 0 or 1
_LONGEST = max(len(t.encode()) for t in NA_TOKENS)
_ANY = np.uint16(1 << 15)
# By a cell's (first byte, last byte), as first * 256 + last: bit L set where a marker of L
# bytes ends so, and _ANY where either byte is an edge byte.
_ENDS = np.where(_EDGE[:, None] | _EDGE[None, :], _ANY, 0).astype(np.uint16).ravel()
for _t in NA_TOKENS:
    if _t:
        _ENDS[_t.encode()[0] * 256 + _t.encode()[-1]] |= np.uint16(1 << len(_t.encode()))
# By a cell's length (clipped): the bits of _ENDS that make it a candidate (an empty cell is).
_LENGTH_BITS = np.array([0, *((1 << k) | _ANY for k in range(1, _LONGEST + 1)), _ANY],
                        dtype=np.uint16)


def missing_cells(values: pd.Series) -> NDArray[np.bool_] | None:
    """Is each cell of ``values`` missing (null, or a missing-value marker once stripped), as
    :func:`ratings.io.read_verdicts` decides it? None when the column is not held as Arrow
    strings, or when a cell's answer would depend on whose whitespace rule strips it (the
    caller then encodes the column).

    Parameters
    ----------
    values : pandas.Series

    Returns
    -------
    numpy.ndarray of bool, or None
    """
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
    except ImportError:  # pragma: no cover - exercised only without pyarrow
        return None
    array, dtype = values.array, values.dtype
    held = isinstance(dtype, pd.ArrowDtype) or (isinstance(dtype, pd.StringDtype)
                                                and dtype.storage == "pyarrow")  # fmt: skip
    if not held or not hasattr(array, "__arrow_array__"):  # Python strings: no Arrow buffers
        return None
    chunks = pa.chunked_array(array.__arrow_array__()).chunks
    if not all(pa.types.is_string(c.type) or pa.types.is_large_string(c.type) for c in chunks):
        return None
    parts = [_candidates(c) for c in chunks]
    out = np.concatenate(parts) if parts else np.zeros(0, dtype=bool)
    rows = np.flatnonzero(out)
    if not rows.size:
        return out
    cells = pa.chunked_array(chunks, type=chunks[0].type if chunks else None).take(rows)
    found = pc.unique(cells).to_pylist()
    marker = [v is None or v.strip() in NA_TOKENS for v in found]
    # long columns strip in Arrow (ratings.io.cells.text): both rules must agree on each cell
    arrow = text(pd.Series(found, dtype=STRING_DTYPE)).isna().to_numpy(dtype=bool)
    if not np.array_equal(arrow, marker):
        return None
    gone = [v for v, m in zip(found, marker, strict=True) if m and v is not None]
    hit = pc.is_in(cells, value_set=pa.array(gone, type=cells.type)).to_numpy(
        zero_copy_only=False)  # fmt: skip
    hit |= cells.is_null().to_numpy(zero_copy_only=False)
    out[rows] = hit
    return out


def _edges(codes: NDArray[np.uint8]) -> NDArray[np.bool_]:
    """:data:`_EDGE` of each byte, through ``bytes.translate`` (a fancy index would widen the
    bytes to 8-byte indices first)."""
    return np.frombuffer(bytearray(codes.tobytes().translate(_EDGE_BYTES)), dtype=bool)


def _marker_ends(first, last, length) -> NDArray[np.bool_]:
    """Cells of at most :data:`_LONGEST` bytes (``length``) ending as some marker does, or
    empty."""
    ends = first.astype(np.uint16)
    ends <<= 8
    ends |= last
    out = (_ENDS[ends] & _LENGTH_BITS[np.minimum(length, _LONGEST + 1)]).astype(bool)
    out |= length == 0
    return out


def _candidates(chunk) -> NDArray[np.bool_]:
    """Cells of one Arrow string array that may be missing: null, empty, with an edge byte
    (:data:`_EDGE`) at either end, or with a marker's length and end bytes. In one pass of
    the compiled :func:`ratings.kernels.cells.candidates` where :func:`_compiled` gives it
    (1M cells: 1-2 against 10-11 ms), else in NumPy passes (its twin, tested equal)."""
    import pyarrow as pa

    n = len(chunk)
    _, offsets_buf, data_buf = chunk.buffers()
    kind = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
    offsets = np.frombuffer(offsets_buf, dtype=kind)[chunk.offset:chunk.offset + n + 1] \
        if offsets_buf is not None else np.zeros(n + 1, dtype=kind)  # fmt: skip
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None and data_buf.size \
        else np.zeros(1, dtype=np.uint8)  # fmt: skip
    kernel = _compiled(n)
    out = _candidates_numpy(offsets, data) if kernel is None else \
        candidates_with(kernel, offsets, data)  # fmt: skip
    if chunk.null_count:
        out |= chunk.is_null().to_numpy(zero_copy_only=False)
    return out


#: Cells from which the compiled pass is taken where it is loaded (the engine's threshold once
#: kernels are loaded, :data:`ratings.kernels.engine.AUTO_NUMBA_VERDICTS`).
COMPILED_FROM = 200_000


def _compiled(n: int):
    """The compiled :func:`ratings.kernels.cells.candidates` for ``n`` cells from
    :data:`COMPILED_FROM`, where this process has compiled or loaded it already (warm-up does,
    from a part above this one: numba's start-up is paid then); else None (the NumPy
    passes)."""
    module = sys.modules.get("ratings.kernels.cells")
    if n < COMPILED_FROM or module is None:
        return None
    kernel = module.candidates
    return kernel if getattr(kernel, "signatures", None) else None


def candidates_with(kernel, offsets: NDArray[np.integer],
                    data: NDArray[np.uint8]) -> NDArray[np.bool_]:  # fmt: skip
    """:func:`_candidates` of non-null cells by ``kernel`` (:func:`ratings.kernels.cells.
    candidates`, which its caller passes: this part imports no kernels) over their
    ``offsets`` and bytes ``data``, read-only as Arrow's buffers are (one compiled type)."""
    out = np.empty(offsets.size - 1, dtype=bool)
    kernel(_readonly(offsets), _readonly(data), _EDGE, _ENDS, _LENGTH_BITS, _LONGEST, out)
    return out


def _readonly(a: NDArray) -> NDArray:
    """A read-only view of ``a``."""
    a = a.view()
    a.flags.writeable = False
    return a


def _candidates_numpy(offsets, data) -> NDArray[np.bool_]:
    """:func:`_candidates` of non-null cells by NumPy passes over their ``offsets`` and bytes
    ``data``."""
    n = offsets.size - 1
    length = np.diff(offsets)
    top = data.size - 1
    first = data[np.minimum(offsets[:-1], top)]  # an empty cell's bytes are its neighbours':
    last = data[np.maximum(offsets[1:] - 1, 0)]  # its length alone makes it a candidate
    out = _edges(first)
    out |= _edges(last)
    short = length <= _LONGEST
    count = int(np.count_nonzero(short))
    if count > n // 8:  # short ids: every cell's ends looked up
        out |= _marker_ends(first, last, length)
    elif count:
        at = np.flatnonzero(short)
        out[at] |= _marker_ends(first[at], last[at], length[at])
    return out
