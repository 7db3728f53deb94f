"""Counts from a log already grouped by its raw values: the reduction of the engines that
aggregate where the log lives and validate in Python (Dask; DuckDB applies the same rules in
SQL, :mod:`ratings.data.sql`, and shares :func:`raw_columns`).

An engine groups the verdicts by the raw values of the columns the fit reads (``scope``,
``task_id``, ``judge``, ``model_a``, ``model_b``, ``winner``, ``failed_a``, ``failed_b``) and
counts each group, with its own group-by at its own speed. Those groups are then validated by
:func:`ratings.read_verdicts` itself (every rule, exactly as in memory, once per distinct
combination rather than per verdict) and turned into a counts table weighted by the group sizes.
Groups that fail validation are handed back, for the engine to name the rows they came from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.schema import CANONICAL, DEFAULT_JUDGE, DETERMINISTIC_JUDGE
from ratings.io import read_verdicts

__all__ = [
    "RAW_COLUMNS",
    "PartialCounts",
    "combine_partials",
    "count_columns",
    "counts_of_groups",
    "no_rejected",
    "partial_of_counts",
    "raw_columns",
    "sum_keys",
]

#: Columns a fit reads from a verdict log, grouped by their raw values.
RAW_COLUMNS = ("scope", "task_id", "judge", "model_a", "model_b", "winner", "failed_a", "failed_b")
_KEYS = ("scope", "task_id", "judge", "model_a", "model_b")
_COUNTS = ("wins_a", "wins_b", "ties", "forfeits")
_SHOWN = 1000  # rejected rows kept to name them


def raw_columns(columns, mapping: Mapping[str, str] | None = None) -> list[str]:
    """The source's columns (by their own names) that map to :data:`RAW_COLUMNS`."""
    mapping = mapping or {}
    return [c for c in columns if mapping.get(c, c) in RAW_COLUMNS and mapping.get(c, c)
            in CANONICAL]  # fmt: skip


def counts_of_groups(
    groups: pd.DataFrame,
    size: NDArray[np.integer],
    *,
    columns: Mapping[str, str] | None = None,
    winner_map: Mapping[object, str] | None = None,
    outcomes: NDArray[np.integer] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Validate grouped verdicts and count them.

    Parameters
    ----------
    groups : pandas.DataFrame
        One row per distinct combination of raw values (missing values kept as missing).
    size : ndarray of int
        How many verdicts each row stands for.
    columns, winner_map : mapping, optional
        As for :func:`ratings.read_verdicts`.
    outcomes : ndarray of int, shape (n, 3), optional
        Verdicts of each row won by A, won by B and tied, for rows counted per outcome by the
        engine (their ``winner`` a stand-in that validates alike; failure flags must not
        decide them); -1 in rows counted by their own ``winner``.

    Returns
    -------
    counts : pandas.DataFrame
        ``scope``, ``task_id``, ``judge`` (whichever occur; a ``judge`` column is added when
        render forfeits can occur), ``model_a``, ``model_b``, ``wins_a``, ``wins_b``, ``ties``
        and, when the log has failure flags, ``forfeits`` (keys may repeat:
        :func:`ratings.data.comparisons.from_counts` sums them).
    rejected : pandas.DataFrame
        The rows of ``groups`` that failed validation (their verdicts are not counted):
        ``row`` (position in ``groups``) and ``reason``, as ``VerdictLog.rejected``.
    """
    groups = groups.reset_index(drop=True)
    log = read_verdicts(groups, columns=columns, winner_map=winner_map, errors="report")
    v = log.verdicts
    w = np.asarray(size, dtype=np.int64)[v.index.to_numpy()]
    flags = bool({"failed_a", "failed_b"} & set(raw_columns(groups.columns, columns)))
    keys, outcome, decided = count_columns(v, flags=flags)
    out = pd.DataFrame(keys, copy=False)
    for o, name in enumerate(("wins_a", "wins_b", "ties")):
        out[name] = w * (outcome == o)
    if outcomes is not None:
        split = np.asarray(outcomes, dtype=np.int64)[v.index.to_numpy()]
        within = (split[:, 0] >= 0) & ~decided
        for o, name in enumerate(("wins_a", "wins_b", "ties")):
            out[name] = np.where(within, split[:, o], out[name].to_numpy())
    if flags:
        out["forfeits"] = w * decided
    return out, log.rejected[["row", "reason"]]


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
        """The counts table: key columns as categoricals, then the counts (``forfeits`` only when
        some verdict was one)."""
        out = {k: pd.Categorical.from_codes(self.codes[k], dtype=pd.CategoricalDtype(cats),
                                            validate=False)
               for k, cats in self.categories.items()}  # fmt: skip
        shown = _COUNTS if self.counts[:, 3].any() else _COUNTS[:3]
        out.update({c: self.counts[:, j] for j, c in enumerate(shown)})
        return pd.DataFrame(out, copy=False)


def no_rejected() -> pd.DataFrame:
    return pd.DataFrame({"partition": pd.Series(dtype=np.int64), "row": pd.Series(dtype=np.int64),
                         "reason": pd.Series(dtype=object), "value": pd.Series(dtype=object)})


def sum_keys(categories: dict[str, pd.Index], codes: dict[str, NDArray[np.integer]],
            counts: NDArray[np.int64]) -> tuple[dict[str, NDArray[np.integer]], NDArray[np.int64]]:
    """Rows of equal keys summed: the key columns' codes as one integer, counted in place when
    the possible keys are few (a board's pairs on its tasks), else hashed."""
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
    return {k: out[k] for k in names}, np.rint(total).astype(np.int64)


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


def partial_of_counts(counts: pd.DataFrame) -> PartialCounts:
    """:class:`PartialCounts` of a table from :func:`counts_of_groups`: categorical keys,
    ``wins_a``, ``wins_b``, ``ties`` and optionally ``forfeits`` (keys may repeat)."""
    keys = [k for k in _KEYS if k in counts.columns]
    categories = {k: pd.Index(counts[k].array.categories) for k in keys}
    codes = {k: counts[k].array.codes for k in keys}
    values = np.zeros((len(counts), len(_COUNTS)), dtype=np.int64)
    for j, c in enumerate(_COUNTS):
        if c in counts.columns:
            values[:, j] = counts[c].to_numpy(dtype=np.int64)
    return PartialCounts(categories, codes, values, no_rejected(), 0)
