"""Row checks shared by the aggregation: naming rejected rows, and the counts of a
pre-aggregated table (whole numbers of verdicts, finite, below 2^53)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.bounds import MAX_COUNT
from ratings.core.errors import InvalidVerdictsError, format_rows

__all__ = ["check_counts", "reject_rows"]

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


def _plain_counts(counts: pd.DataFrame,
                  cols: list[str]) -> tuple[NDArray[np.float64], ...] | None:  # fmt: skip
    """Counts stored as NumPy integers or floats (a SQL ``SUM`` often comes back as a double) as
    float64 columns (float64 ones as they are) when every one is a whole number in range; None
    otherwise (the checks that name the bad cells then run)."""
    arrays = [counts[c].to_numpy() if isinstance(counts[c].dtype, np.dtype) else None
              for c in cols]  # fmt: skip
    if not all(v is not None and v.dtype.kind in "iuf" for v in arrays):
        return None
    out = []
    for v in arrays:
        if len(v) and not (v.min() >= 0 and v.max() <= MAX_COUNT):  # NaN fails both
            return None
        if v.dtype.kind == "f" and not np.array_equal(np.floor(v), v):
            return None
        out.append(v if v.dtype == np.float64 else v.astype(np.float64))
    return tuple(out)


def check_counts(counts: pd.DataFrame) -> tuple[NDArray[np.float64], ...]:
    """The counts ``wins_a``, ``wins_b``, ``ties`` as float64 arrays after checking every cell
    is a whole number in [0, :data:`~ratings.core.bounds.MAX_COUNT`]; raise naming the first
    bad cell otherwise.

    Counts are numbers of verdicts: a fractional count (a weight, or a count already
    averaged) is refused rather than rounded, and beyond 2^53 float64 no longer counts exactly
    (1e300 verdicts would overflow the fit's sums).
    """
    cols = ["wins_a", "wins_b", "ties"]
    fast = _plain_counts(counts, cols)
    if fast is not None:
        return fast
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
