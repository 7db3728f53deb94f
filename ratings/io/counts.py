"""Reading a pre-aggregated counts table: one row per (task_id, judge, model_a, model_b)."""

from __future__ import annotations

import os

import pandas as pd

from ratings.io.readers import check_scalar_cells, read_file
from ratings.io.verdicts import name_categoricals

__all__ = ["COUNT_TEXT_COLUMNS", "read_counts"]

#: The text columns of a counts table, encoded like a verdict log's.
COUNT_TEXT_COLUMNS = ("model_a", "model_b", "judge", "task_id", "scope")
_READ = ("model_a", "model_b", "wins_a", "wins_b", "ties", "judge", "task_id", "scope", "forfeits")


def read_counts(source: str | os.PathLike[str] | pd.DataFrame) -> pd.DataFrame:
    """Read a pre-aggregated counts table (``model_a``, ``model_b``, ``wins_a``, ``wins_b``,
    ``ties``, optional ``judge``, ``task_id``, ``scope`` and ``forfeits``).

    The text columns come back as categoricals encoded as :func:`ratings.read_verdicts`
    encodes a log's (stripped, missing markers missing, sorted categories shared by
    ``model_a`` and ``model_b``, look-alike names refused), so the aggregation reads their
    codes; the counts are kept as stored and checked (and named when bad) by
    :func:`ratings.data.comparisons.from_counts`. A DataFrame is not modified; other columns
    are kept.
    """
    if isinstance(source, pd.DataFrame):
        frame, prefix = source.copy(deep=False), ""
    else:
        frame, prefix = read_file(os.fspath(source), None), f"{os.fspath(source)!r}: "
    names = [c for c in _READ if c in frame.columns]
    check_scalar_cells({c: frame[c] for c in names}, prefix)
    text = {c: frame[c] for c in COUNT_TEXT_COLUMNS if c in frame.columns}
    for c, values in name_categoricals(text, prefix).items():
        frame[c] = pd.Series(values, index=frame.index, name=c)
    return frame
