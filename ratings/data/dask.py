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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.errors import InvalidVerdictsError, format_rows
from ratings.data.grouped import count_columns, raw_columns

__all__ = ["PartialCounts", "aggregate_counts", "combine_partials", "is_dask_frame",
           "partition_counts"]  # fmt: skip

_SHOWN = 1000  # rejected rows kept to name them
_SPLIT_EVERY = 8  # partial tables summed per task of the tree
_COUNTS = ("wins_a", "wins_b", "ties", "forfeits")


def is_dask_frame(obj: object) -> bool:
    """True for a ``dask.dataframe.DataFrame`` (without importing dask otherwise)."""
    module = type(obj).__module__ or ""
    return module.startswith("dask") and hasattr(obj, "map_partitions")


@dataclass(frozen=True)
class PartialCounts:
    """Counts of part of a log: one row per distinct key, keys as codes into ``categories``.

    Attributes
    ----------
    categories : dict of str to pandas.Index
        Sorted categories of each key column (``scope``, ``task_id``, ``judge``, ``model_a``,
        ``model_b``, whichever occur).
    codes : dict of str to ndarray of int
        Each key column's codes, one per row.
    counts : ndarray of int64, shape (n, 4)
        ``wins_a``, ``wins_b``, ``ties`` and ``forfeits`` per row.
    rejected : pandas.DataFrame
        ``partition``, ``row``, ``reason`` and ``value`` (e.g. ``"winner='draw'"``) of the first
        rejected rows.
    n_rejected : int
        How many rows were rejected in all.
    """

    categories: dict[str, pd.Index]
    codes: dict[str, NDArray[np.integer]]
    counts: NDArray[np.int64]
    rejected: pd.DataFrame
    n_rejected: int

    def frame(self) -> pd.DataFrame:
        """The counts table: key columns as categoricals, then the four counts."""
        out = {k: pd.Categorical.from_codes(self.codes[k], dtype=pd.CategoricalDtype(cats),
                                            validate=False)
               for k, cats in self.categories.items()}  # fmt: skip
        out.update({c: self.counts[:, j] for j, c in enumerate(_COUNTS)})
        return pd.DataFrame(out, copy=False)


def _no_rejected() -> pd.DataFrame:
    return pd.DataFrame({"partition": pd.Series(dtype=np.int64), "row": pd.Series(dtype=np.int64),
                         "reason": pd.Series(dtype=object), "value": pd.Series(dtype=object)})


def _summed(categories: dict[str, pd.Index], codes: dict[str, NDArray[np.integer]],
            counts: NDArray[np.int64]) -> tuple[dict[str, NDArray[np.integer]], NDArray[np.int64]]:
    """Rows of equal keys summed (keys in order of first appearance)."""
    names = list(categories)
    sizes = [len(categories[k]) + 1 for k in names]  # code -1 (missing) is a digit too
    if not len(counts) or float(np.prod(np.asarray(sizes, dtype=np.float64))) >= 2.0**62:
        # empty, or too many combinations for one integer key: pandas groups the columns
        frame = pd.DataFrame({**codes, **{c: counts[:, j] for j, c in enumerate(_COUNTS)}})
        total = frame.groupby(names, sort=False).sum().reset_index()
        return ({k: total[k].to_numpy(dtype=codes[k].dtype) for k in names},
                total[list(_COUNTS)].to_numpy(dtype=np.int64))  # fmt: skip
    key = np.zeros(len(counts), dtype=np.int64)
    for k, size in zip(names, sizes, strict=True):
        key = key * size + (codes[k] + 1)
    inverse, uniques = pd.factorize(key)
    n = len(uniques)
    total = np.column_stack([np.bincount(inverse, counts[:, j], minlength=n)
                             for j in range(counts.shape[1])])  # fmt: skip
    out = {}
    for k, size in zip(names[::-1], sizes[::-1], strict=True):  # the key's digits, last first
        uniques, digit = np.divmod(uniques, size)
        out[k] = (digit - 1).astype(codes[k].dtype)
    return {k: out[k] for k in names}, np.rint(total).astype(np.int64)


def partition_counts(
    part: pd.DataFrame,
    number: int,
    *,
    columns: Mapping[str, str] | None = None,
    winner_map: Mapping[object, str] | None = None,
    flags: bool = False,
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
    """
    from ratings.io import read_verdicts

    part = part.reset_index(drop=True)
    rejected = _no_rejected()
    try:
        log = read_verdicts(part, columns=columns, winner_map=winner_map, errors="report")
    except InvalidVerdictsError as error:  # no usable row: an empty partition, or all bad
        if not len(error.rows) and len(part):
            raise
        log, rejected = None, error.rows
    if log is not None:
        rejected = log.rejected
        keys, outcome, decided = count_columns(log.verdicts, flags=flags)
    else:  # the keys of an empty table (the same columns as the other partitions)
        names = [k for k in raw_columns(part.columns, columns)]
        mapped = {(columns or {}).get(c, c) for c in names}
        if flags:
            mapped.add("judge")
        keys = {k: pd.Categorical([]) for k in ("scope", "task_id", "judge", "model_a",
                                                  "model_b") if k in mapped}  # fmt: skip
        outcome, decided = np.zeros(0, np.int8), np.zeros(0, bool)
    counts = np.column_stack([outcome == 0, outcome == 1, outcome == 2, decided]).astype(np.int64)
    categories = {k: pd.Index(c.categories) for k, c in keys.items()}
    codes, counts = _summed(categories, {k: c.codes for k, c in keys.items()}, counts)
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


def combine_partials(partials: Sequence[PartialCounts]) -> PartialCounts:
    """Sum partial counts: codes renumbered onto the union of the categories, equal keys summed."""
    partials = list(partials)
    if len(partials) == 1:
        return partials[0]
    names = list(partials[0].categories)
    categories, codes = {}, {}
    for k in names:
        union = partials[0].categories[k]
        for p in partials[1:]:
            if not union.equals(p.categories[k]):
                union = union.union(p.categories[k])
        categories[k] = union
        codes[k] = np.concatenate([
            p.codes[k] if union.equals(p.categories[k])
            else union.get_indexer(p.categories[k]).astype(np.int32)[p.codes[k]]
            for p in partials])  # fmt: skip
    counts = np.concatenate([p.counts for p in partials])
    codes, counts = _summed(categories, codes, counts)
    rejected = [p.rejected for p in partials if len(p.rejected)]
    rejected = pd.concat(rejected, ignore_index=True).head(_SHOWN) if rejected else _no_rejected()
    return PartialCounts(categories, codes, counts, rejected,
                         sum(p.n_rejected for p in partials))  # fmt: skip


def aggregate_counts(
    ddf,
    *,
    columns: Mapping[str, str] | None = None,
    winner_map: Mapping[object, str] | None = None,
    split_every: int = _SPLIT_EVERY,
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
    level = [count(p, k, columns=columns, winner_map=winner_map, flags=flags)
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
    raise InvalidVerdictsError(
        f"{n} verdict row(s) rejected{shown}: {'; '.join(parts)}. Fix those rows or leave them "
        "out of the Dask DataFrame (rows are numbered from 0 within each partition).",
        rows=found.reset_index(drop=True))
