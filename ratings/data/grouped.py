"""The reduction the engines that aggregate where the log lives share: the raw columns a fit
reads (:func:`raw_columns`; DuckDB applies the rules in SQL, :mod:`ratings.data.sql`), the
counts of validated verdicts by key (:func:`count_columns`), and partial counts tables
(:class:`PartialCounts`) summed per key and combined across partitions (:func:`sum_keys`,
:func:`combine_partials`; Dask, :mod:`ratings.data.dask`, validates each partition with
:func:`ratings.read_verdicts` itself).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.schema import CANONICAL, DEFAULT_JUDGE, DETERMINISTIC_JUDGE
from ratings.data.scores import SOFT_COLUMNS

__all__ = [
    "RAW_COLUMNS",
    "PartialCounts",
    "combine_partials",
    "count_columns",
    "no_rejected",
    "raw_columns",
    "sum_keys",
]

#: Columns a fit reads from a verdict log, grouped by their raw values.
RAW_COLUMNS = ("scope", "task_id", "judge", "model_a", "model_b", "winner", "failed_a", "failed_b")
_KEYS = ("scope", "task_id", "judge", "model_a", "model_b")
_COUNTS = ("wins_a", "wins_b", "ties", "forfeits")
_SOFT = SOFT_COLUMNS
_SHOWN = 1000  # rejected rows kept to name them


def raw_columns(columns, mapping: Mapping[str, str] | None = None) -> list[str]:
    """The source's columns (by their own names) that map to :data:`RAW_COLUMNS`."""
    mapping = mapping or {}
    return [c for c in columns if mapping.get(c, c) in RAW_COLUMNS and mapping.get(c, c)
            in CANONICAL]  # fmt: skip


def count_columns(
    verdicts: pd.DataFrame, *, flags: bool
) -> tuple[dict[str, pd.Categorical], NDArray[np.int8], NDArray[np.bool_]]:
    """The key columns, outcomes and forfeit flags of validated verdicts.

    Parameters
    ----------
    verdicts : pandas.DataFrame
        ``VerdictLog.verdicts`` of :func:`ratings.read_verdicts` (render forfeits already
        decide ``winner``).
    flags : bool
        Whether the source has failure flags: then a ``judge`` column is always returned, with
        ``"deterministic"`` where a flag decided the verdict (so that every part of a log split
        in pieces has the same keys).

    Returns
    -------
    keys : dict of str to pandas.Categorical
        ``scope``, ``task_id``, ``judge``, ``model_a``, ``model_b`` (whichever occur).
    outcome : ndarray of int8
        0 where A won, 1 where B won, 2 for a tie.
    decided : ndarray of bool
        Where a failure flag decided the verdict.
    """
    v = verdicts
    outcome = v["winner"].array.codes  # WINNERS order: A, B, tie; forfeits already applied
    decided = (v["failed_a"].to_numpy(dtype=bool) | v["failed_b"].to_numpy(dtype=bool)
               if "failed_a" in v.columns else np.zeros(len(v), dtype=bool))  # fmt: skip
    counts = {k: v[k].array for k in _KEYS if k in v.columns}
    if flags or decided.any():
        judge = counts.get("judge")
        if judge is None:
            judge = pd.Categorical.from_codes(np.zeros(len(v), dtype=np.int8),
                                              categories=[DEFAULT_JUDGE])  # fmt: skip
        if DETERMINISTIC_JUDGE not in judge.categories:
            judge = judge.add_categories([DETERMINISTIC_JUDGE])
        codes = np.where(decided, judge.categories.get_loc(DETERMINISTIC_JUDGE), judge.codes)
        counts["judge"] = pd.Categorical.from_codes(codes.astype(judge.codes.dtype),
                                                    dtype=judge.dtype, validate=False)  # fmt: skip
    return {k: counts[k] for k in _KEYS if k in counts}, outcome, decided


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
    counts : ndarray of int64, shape (n, 4), or of float64, shape (n, 7)
        ``wins_a``, ``wins_b``, ``ties`` and ``forfeits`` per row; a log read with soft scores
        adds ``graded``, ``graded_score`` and ``graded_square`` (:mod:`ratings.data.soft`).
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
        """The counts table: key columns as categoricals, then the counts (``forfeits`` only when
        some verdict was one)."""
        out = {k: pd.Categorical.from_codes(self.codes[k], dtype=pd.CategoricalDtype(cats),
                                            validate=False)
               for k, cats in self.categories.items()}  # fmt: skip
        shown = _COUNTS if self.counts[:, 3].any() else _COUNTS[:3]
        out.update({c: self.counts[:, j] for j, c in enumerate(shown)})
        if self.counts.shape[1] > len(_COUNTS):  # soft scores
            out.update({c: self.counts[:, len(_COUNTS) + j] for j, c in enumerate(_SOFT)})
        return pd.DataFrame(out, copy=False)


def no_rejected() -> pd.DataFrame:
    return pd.DataFrame({"partition": pd.Series(dtype=np.int64), "row": pd.Series(dtype=np.int64),
                         "reason": pd.Series(dtype=object), "value": pd.Series(dtype=object)})


def sum_keys(categories: dict[str, pd.Index], codes: dict[str, NDArray[np.integer]],
            counts: NDArray[np.int64]) -> tuple[dict[str, NDArray[np.integer]], NDArray[np.int64]]:
    """Rows of equal keys summed: the key columns' codes as one integer, counted in place when
    the possible keys are few (a board's pairs on its tasks), else hashed. Integer counts stay
    whole; float ones (soft scores' sums) stay as they are."""
    names = list(categories)
    whole = counts.dtype.kind in "iu"
    labels = [*_COUNTS, *_SOFT][:counts.shape[1]]
    sizes = [len(categories[k]) + 1 for k in names]  # code -1 (missing) is a digit too
    if not len(counts) or float(np.prod(np.asarray(sizes, dtype=np.float64))) >= 2.0**62:
        # empty, or too many combinations for one integer key: pandas groups the columns
        frame = pd.DataFrame({**codes, **{c: counts[:, j] for j, c in enumerate(labels)}})
        total = frame.groupby(names, sort=False).sum().reset_index()
        return ({k: total[k].to_numpy(dtype=codes[k].dtype) for k in names},
                total[labels].to_numpy(dtype=np.int64 if whole else np.float64))  # fmt: skip
    key = np.zeros(len(counts), dtype=np.int64)
    for k, size in zip(names, sizes, strict=True):
        key = key * size + (codes[k] + 1)
    n_keys = int(np.prod(np.asarray(sizes, dtype=np.int64)))
    if n_keys <= max(4 * len(counts), 1 << 24):  # few possible keys: count them in place
        uniques = np.flatnonzero(np.bincount(key, minlength=n_keys))
        total = np.column_stack([
            np.bincount(key, counts[:, j], minlength=n_keys)[uniques] if counts[:, j].any()
            else np.zeros(len(uniques)) for j in range(counts.shape[1])])  # fmt: skip
    else:
        inverse, uniques = pd.factorize(key)
        n = len(uniques)
        total = np.column_stack([np.bincount(inverse, counts[:, j], minlength=n)
                                 for j in range(counts.shape[1])])  # fmt: skip
    out = {}
    for k, size in zip(names[::-1], sizes[::-1], strict=True):  # the key's digits, last first
        uniques, digit = np.divmod(uniques, size)
        out[k] = (digit - 1).astype(codes[k].dtype)
    return {k: out[k] for k in names}, np.rint(total).astype(np.int64) if whole else total


def combine_partials(partials: Sequence[PartialCounts], *, summed: bool = True) -> PartialCounts:
    """Partial counts as one: codes renumbered onto the union of the categories, equal keys
    summed (or, with ``summed=False``, left repeated for the aggregation to sum)."""
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
        codes[k] = np.concatenate([p.codes[k] if union.equals(p.categories[k])
                                   else _renumbered(p.codes[k], p.categories[k], union)
                                   for p in partials])  # fmt: skip
    counts = np.concatenate([p.counts for p in partials])
    if summed:
        codes, counts = sum_keys(categories, codes, counts)
    rejected = [p.rejected for p in partials if len(p.rejected)]
    rejected = pd.concat(rejected, ignore_index=True).head(_SHOWN) if rejected else no_rejected()
    return PartialCounts(categories, codes, counts, rejected,
                         sum(p.n_rejected for p in partials))  # fmt: skip


def _renumbered(codes: NDArray[np.integer], categories: pd.Index,
                union: pd.Index) -> NDArray[np.int32]:  # fmt: skip
    """Codes into ``categories`` as codes into ``union`` (a missing -1 stays -1)."""
    return np.append(union.get_indexer(categories), -1).astype(np.int32)[codes]
