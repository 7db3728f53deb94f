"""The verdict reduction on a Dask DataFrame: aggregate where the log lives, fit locally.

Collapsing verdicts into counts per (task_id, judge, model_a, model_b) is a commutative, associative
reduction, so it runs partition by partition and the partial counts are summed. The result is the
small counts table that :func:`ratings.data.comparisons.from_counts` turns into the same
:class:`~ratings.data.comparisons.Comparisons` the in-memory path builds; the fit runs locally on
it.

The same reduction in SQL (Spark, DuckDB, BigQuery), after mapping winners to 'A', 'B', 'tie'::

    SELECT task_id, judge, model_a, model_b,
           SUM(CASE WHEN winner = 'A'   THEN 1 ELSE 0 END) AS wins_a,
           SUM(CASE WHEN winner = 'B'   THEN 1 ELSE 0 END) AS wins_b,
           SUM(CASE WHEN winner = 'tie' THEN 1 ELSE 0 END) AS ties
    FROM verdicts
    GROUP BY task_id, judge, model_a, model_b
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ratings.core.schema import DEFAULT_JUDGE, DETERMINISTIC_JUDGE

__all__ = ["aggregate_counts", "is_dask_frame"]

_KEYS = ("scope", "task_id", "judge", "model_a", "model_b")


def is_dask_frame(obj: object) -> bool:
    """True for a ``dask.dataframe.DataFrame`` (without importing dask otherwise)."""
    module = type(obj).__module__ or ""
    return module.startswith("dask") and hasattr(obj, "map_partitions")


def _partition_counts(part: pd.DataFrame, columns, winner_map) -> pd.DataFrame:
    """Validate one partition like an in-memory log, then reduce it to counts."""
    from ratings.io import read_verdicts

    v = read_verdicts(part.reset_index(drop=True), columns=columns,
                      winner_map=winner_map).verdicts  # fmt: skip
    winner = v["winner"].to_numpy(dtype=object)
    keys = [k for k in _KEYS if k in v.columns]
    counts = pd.DataFrame({k: v[k].to_numpy(dtype=object) for k in keys})
    fa, fb = v["failed_a"].to_numpy(dtype=bool), v["failed_b"].to_numpy(dtype=bool)
    forfeit = fa | fb
    if forfeit.any():  # the same rule as ratings.data.comparisons.aggregate: output beats no output
        winner = np.where(forfeit, np.where(fa & fb, "tie", np.where(fa, "B", "A")), winner)
        judge = counts["judge"] if "judge" in counts else DEFAULT_JUDGE
        counts["judge"] = np.where(forfeit, DETERMINISTIC_JUDGE, judge)
    counts["wins_a"] = (winner == "A").astype("int64")
    counts["wins_b"] = (winner == "B").astype("int64")
    counts["ties"] = (winner == "tie").astype("int64")
    counts["forfeits"] = forfeit.astype("int64")
    keys = [k for k in _KEYS if k in counts.columns]
    return counts.groupby(keys, sort=False, as_index=False).sum()


def aggregate_counts(
    ddf,
    *,
    columns: Mapping[str, str] | None = None,
    winner_map: Mapping[object, str] | None = None,
) -> pd.DataFrame:
    """Reduce a Dask DataFrame of verdicts to a counts table (computed, in memory).

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        Verdicts with the canonical columns (or ``columns=`` to map them); every partition is
        validated like :func:`ratings.read_verdicts` with ``errors="raise"``.
    columns, winner_map : mapping, optional
        As for :func:`ratings.read_verdicts`.

    Returns
    -------
    pandas.DataFrame
        One row per (scope, task_id, judge, model_a, model_b) present, with ``wins_a``,
        ``wins_b``, ``ties`` and ``forfeits`` (how many of them were render forfeits); pass
        it to :func:`ratings.fit` or :func:`ratings.data.comparisons.from_counts`.
    """
    mapped = [columns.get(c, c) if columns else c for c in ddf.columns]
    keys = [k for k in _KEYS if k in mapped]
    if "judge" not in keys and {"failed_a", "failed_b"} & set(mapped):
        keys.insert(keys.index("model_a"), "judge")  # forfeits add the deterministic judge
    meta = pd.DataFrame({k: pd.Series(dtype=object) for k in keys})
    for c in ("wins_a", "wins_b", "ties", "forfeits"):
        meta[c] = pd.Series(dtype="int64")
    partial = ddf.map_partitions(_partition_counts, columns, winner_map, meta=meta)
    total = partial.groupby(keys, sort=False).sum().reset_index().compute()
    return total.sort_values(keys, kind="stable").reset_index(drop=True)
