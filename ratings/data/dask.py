"""The verdict reduction on a Dask DataFrame: aggregate where the log lives, fit locally.

Collapsing verdicts into counts per (scope, task_id, judge, model_a, model_b) is a commutative,
associative reduction. Each partition is validated by :func:`ratings.read_verdicts` itself (every
rule, exactly as in memory) and reduced, on its worker, to a small table of category codes and
counts (:class:`PartialCounts`); the partial tables are then summed in a tree (no shuffle), their
codes renumbered onto the union of categories. Only that table comes back to the client, where
:func:`ratings.data.comparisons.from_counts` turns it into the same
:class:`~ratings.data.comparisons.Comparisons` the in-memory path builds; the fit runs locally.

Rejected rows are reported by partition and row (0-based within the partition) and raise once
every partition has been read, so one run names the problems of the whole log.

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
from numpy.typing import NDArray

from ratings.core.errors import InvalidVerdictsError, format_rows, option
from ratings.data.grouped import (
    PartialCounts,
    combine_partials,
    count_columns,
    no_rejected,
    raw_columns,
    sum_keys,
)

__all__ = ["aggregate_counts", "is_dask_frame", "partition_counts"]

_SHOWN = 1000  # rejected rows kept per partition to name them
_SPLIT_EVERY = 8  # partial tables summed per task of the tree


def is_dask_frame(obj: object) -> bool:
    """True for a ``dask.dataframe.DataFrame`` (without importing dask otherwise)."""
    module = type(obj).__module__ or ""
    return module.startswith("dask") and hasattr(obj, "map_partitions")


def partition_counts(
    part: pd.DataFrame,
    number: int,
    *,
    columns: Mapping[str, str] | None = None,
    winner_map: Mapping[object, str] | None = None,
    flags: bool = False,
    soft: bool = False,
) -> PartialCounts:
    """Validate one partition like an in-memory log and reduce it to :class:`PartialCounts`.

    Parameters
    ----------
    part : pandas.DataFrame
        The partition's verdicts (its positions are the reported ``row`` numbers).
    number : int
        The partition's number, for the rejected rows.
    columns, winner_map : mapping, optional
        As for :func:`ratings.read_verdicts`.
    flags : bool, default=False
        Whether the log has failure flags (then every partition has a ``judge`` key).
    soft : bool, default=False
        Read ``winner`` as A's score in [0, 1] (:mod:`ratings.data.soft`): the fractional
        scores are counted in three more columns; without it they are rejected.
    """
    from ratings.data.scores import graded_sums, is_graded
    from ratings.io import read_verdicts

    part = part.reset_index(drop=True)
    rejected = no_rejected()
    try:
        log = read_verdicts(part, columns=columns, winner_map=winner_map, errors="report",
                            soft=soft)  # fmt: skip
    except InvalidVerdictsError as error:  # no usable row: an empty partition, or all bad
        if not len(error.rows) and len(part):
            raise
        log, rejected = None, error.rows
    if log is not None:
        rejected = log.rejected
        keys, outcome, decided = count_columns(log.verdicts, flags=flags)
        y = log.verdicts["score"].to_numpy(np.float64) if soft else np.zeros(0)
    else:  # the keys of an empty table (the same columns as the other partitions)
        names = [k for k in raw_columns(part.columns, columns)]
        mapped = {(columns or {}).get(c, c) for c in names}
        if flags:
            mapped.add("judge")
        keys = {k: pd.Categorical([]) for k in ("scope", "task_id", "judge", "model_a",
                                                  "model_b") if k in mapped}  # fmt: skip
        outcome, decided, y = np.zeros(0, np.int8), np.zeros(0, bool), np.zeros(0)
    if soft:  # verdicts scored 0, 1/2, 1 as counts; the fractional ones' sums beside them
        whole = ~is_graded(y)
        counts = np.column_stack([(outcome == 0) & whole, (outcome == 1) & whole,
                                  (outcome == 2) & whole, decided,
                                  graded_sums(y)]).astype(np.float64)  # fmt: skip
    else:
        counts = np.column_stack([outcome == 0, outcome == 1, outcome == 2,
                                  decided]).astype(np.int64)  # fmt: skip
    categories = {k: pd.Index(c.categories) for k, c in keys.items()}
    codes, counts = sum_keys(categories, {k: c.codes for k, c in keys.items()}, counts)
    n_rejected = len(rejected)
    shown = rejected.head(_SHOWN)
    shown = pd.DataFrame({"partition": np.full(len(shown), int(number), dtype=np.int64),
                          "row": shown["row"].to_numpy(dtype=np.int64),
                          "reason": shown["reason"].astype(object).to_numpy(),
                          "value": _values(shown)})  # fmt: skip
    return PartialCounts(categories, codes, counts, shown, n_rejected)


def _values(rejected: pd.DataFrame) -> NDArray[np.object_]:
    """The value that shows each rejected row's problem (``column=value``, the first column named
    in its reason), or ``""``."""
    cells = rejected.drop(columns=["row", "reason"], errors="ignore")
    out = np.full(len(rejected), "", dtype=object)
    for i, reason in enumerate(rejected["reason"].astype(str)):
        words = set(reason.replace(",", " ").split())
        named = [c for c in cells.columns if c in words]
        if named:
            out[i] = f"{named[0]}={cells[named[0]].iloc[i]!r}"
    return out


def aggregate_counts(
    ddf,
    *,
    columns: Mapping[str, str] | None = None,
    winner_map: Mapping[object, str] | None = None,
    split_every: int = _SPLIT_EVERY,
    soft: bool = False,
) -> pd.DataFrame:
    """Reduce a Dask DataFrame of verdicts to a counts table (computed, in memory).

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        Verdicts with the canonical columns (or ``columns=`` to map them); every partition is
        validated like :func:`ratings.read_verdicts`, and the columns a fit does not read are not
        loaded.
    columns, winner_map : mapping, optional
        As for :func:`ratings.read_verdicts`.
    split_every : int, default=8
        Partial tables summed per task of the reduction tree.
    soft : bool, default=False
        Read ``winner`` as A's score in [0, 1], as :func:`ratings.read_verdicts` does: the
        table then also has ``graded``, ``graded_score`` and ``graded_square`` (the fractional
        scores' number and sums, :mod:`ratings.data.soft`), for ``ratings.fit(table,
        model=ratings.BT(soft=True))``. Without it a fractional score is rejected.

    Returns
    -------
    pandas.DataFrame
        One row per (scope, task_id, judge, model_a, model_b) present, with ``wins_a``,
        ``wins_b``, ``ties`` and ``forfeits`` (how many of them were render forfeits); pass
        it to :func:`ratings.fit` or :func:`ratings.data.comparisons.from_counts`.

    Raises
    ------
    InvalidVerdictsError
        Unusable rows, named by partition and row (0-based within the partition) with their
        reasons, once every partition has been read.
    """
    import dask

    cols = raw_columns(ddf.columns, columns)
    flags = any((columns or {}).get(c, c) in ("failed_a", "failed_b") for c in cols)
    parts = ddf[cols].to_delayed()
    count = dask.delayed(partition_counts, pure=True)
    combine = dask.delayed(combine_partials, pure=True)
    level = [count(p, k, columns=columns, winner_map=winner_map, flags=flags, soft=soft)
             for k, p in enumerate(parts)]  # fmt: skip
    while len(level) > 1:
        level = [combine(level[i:i + split_every]) for i in range(0, len(level), split_every)]
    (total,) = dask.compute(level[0])
    if total.n_rejected:
        _raise_rejected(total)
    return total.frame()


def _raise_rejected(total: PartialCounts) -> None:
    """Raise naming the rejected rows by partition and row, grouped by reason."""
    found = total.rejected.sort_values(["partition", "row"], kind="stable")
    parts = []
    for reason, group in found.groupby("reason", sort=False):
        places = "; ".join(f"partition {k} rows {format_rows(g['row'])}"
                           for k, g in group.groupby("partition", sort=True))  # fmt: skip
        example = next((v for v in group["value"] if v), "")
        parts.append(f"{reason} ({places}{', e.g. ' + example if example else ''})")
    n = total.n_rejected
    shown = "" if n <= len(found) else f" (the first {len(found)} shown)"
    hint = (f"Pass {option('soft', True)} to read `winner` as A's score in [0, 1], fix those "
            "rows," if (found["reason"] == "fractional winner score").any() else "Fix those rows")
    raise InvalidVerdictsError(
        f"{n} verdict row(s) rejected{shown}: {'; '.join(parts)}. {hint} or leave them "
        "out of the Dask DataFrame (rows are numbered from 0 within each partition).",
        rows=found.reset_index(drop=True))
