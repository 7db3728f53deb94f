"""Row checks shared by the aggregation: naming rejected rows, and the counts of a
pre-aggregated table (whole numbers of verdicts, finite, below 2^53)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.bounds import MAX_COUNT
from ratings.core.errors import InvalidVerdictsError, format_rows

__all__ = ["COUNTS", "check_counts", "counts_as_floats", "reject_rows"]

#: The count columns of a counts table.
COUNTS = ("wins_a", "wins_b", "ties")

_FIX_VERDICTS = "Read logs with `ratings.read_verdicts`, which reports such rows, or fix them."


def reject_rows(verdicts: pd.DataFrame, bad: NDArray[np.bool_], what: str, detail: str = "", *,
            noun: str = "verdict(s)", fix: str = _FIX_VERDICTS) -> None:  # fmt: skip
    """Raise naming the rows (by the frame's index) where ``bad`` holds."""
    if bad.any():
        rows = verdicts.index[bad]
        if not rows.is_unique:  # a counts row expanded into one row per outcome
            rows = rows.drop_duplicates().sort_values()
        raise InvalidVerdictsError(
            f"{len(rows)} {noun} {what}: rows {format_rows(rows)}"
            f"{' (' + detail + ')' if detail else ''}. {fix}",
            rows=pd.DataFrame({"row": rows, "reason": what}),
        )



def _numbers(values: pd.Series) -> pd.Series:
    """Numbers as float64 (NaN where missing or not a number); booleans are not counts."""
    if pd.api.types.is_bool_dtype(values.dtype):
        return pd.Series(np.nan, index=values.index)
    if values.dtype == object:
        values = values.mask(values.map(lambda v: isinstance(v, bool | np.bool_)).astype(bool))
    return pd.to_numeric(values, errors="coerce").astype(np.float64)


def counts_as_floats(counts: pd.DataFrame) -> tuple[NDArray[np.float64], ...] | None:
    """``wins_a``, ``wins_b``, ``ties`` as float64 arrays (float64 columns as they are) when
    all three are NumPy integers or floats (a SQL ``SUM`` often comes back as a double), for a
    kernel that checks the values on its way (see :func:`check_counts`); None otherwise."""
    arrays = [counts[c].to_numpy() if isinstance(counts[c].dtype, np.dtype) else None
              for c in COUNTS]  # fmt: skip
    if not all(v is not None and v.dtype.kind in "iuf" for v in arrays):
        return None
    if any(v.dtype.kind in "iu" and len(v) and v.max() > MAX_COUNT for v in arrays):
        return None  # inexact as floats: named by check_counts
    return tuple(v if v.dtype == np.float64 else v.astype(np.float64) for v in arrays)


def check_counts(counts: pd.DataFrame) -> tuple[NDArray[np.float64], ...]:
    """The counts ``wins_a``, ``wins_b``, ``ties`` as float64 arrays after checking every cell
    is a whole number in [0, :data:`~ratings.core.bounds.MAX_COUNT`]; raise naming the first
    bad cell otherwise.

    Counts are numbers of verdicts: a fractional count (a weight, or a count already
    averaged) is refused rather than rounded, and beyond 2^53 float64 no longer counts exactly
    (1e300 verdicts would overflow the fit's sums).
    """
    cols = list(COUNTS)
    raw = counts[cols]
    values = raw.apply(_numbers).to_numpy(dtype=np.float64)
    with np.errstate(invalid="ignore"):
        problems = (
            ("are missing or not numbers", np.isnan(values)),
            ("are not finite", np.isinf(values)),
            ("are negative", values < 0),
            ("are not whole numbers (counts of verdicts are never fractional; weighted "
             "counts are not supported)", np.isfinite(values) & (values != np.round(values))),
            (f"exceed 2**53 = {MAX_COUNT:.0f} (counts are exact in float64 only below it)",
             np.isfinite(values) & (values > MAX_COUNT)),
        )  # fmt: skip
    for what, bad in problems:
        if bad.any():
            r, c = np.argwhere(bad)[0]
            value = raw.iloc[r, c]
            value = value.item() if hasattr(value, "item") else value
            reject_rows(counts, bad.any(axis=1), f"have counts that {what}",
                    detail=f"e.g. {cols[c]} = {value!r} at row {counts.index[r]}",
                    noun="row(s) of the counts table", fix="Fix those counts: each is a whole "
                    "number of verdicts >= 0.")  # fmt: skip
    return tuple(np.ascontiguousarray(values[:, j]) for j in range(3))
