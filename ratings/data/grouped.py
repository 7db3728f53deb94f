"""Counts from a log already grouped by its raw values: the reduction shared by the engines that
aggregate where the log lives (Dask, DuckDB).

An engine groups the verdicts by the raw values of the columns the fit reads (``scope``,
``task_id``, ``judge``, ``model_a``, ``model_b``, ``winner``, ``failed_a``, ``failed_b``) and
counts each group, with its own group-by at its own speed. Those groups are then validated by
:func:`ratings.read_verdicts` itself (every rule, exactly as in memory, once per distinct
combination rather than per verdict) and turned into a counts table weighted by the group sizes.
Groups that fail validation are handed back, for the engine to name the rows they came from.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.schema import CANONICAL, DEFAULT_JUDGE, DETERMINISTIC_JUDGE
from ratings.io import read_verdicts

__all__ = ["RAW_COLUMNS", "count_columns", "counts_of_groups", "raw_columns"]

#: Columns a fit reads from a verdict log, grouped by their raw values.
RAW_COLUMNS = ("scope", "task_id", "judge", "model_a", "model_b", "winner", "failed_a", "failed_b")
_KEYS = ("scope", "task_id", "judge", "model_a", "model_b")


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

    Returns
    -------
    counts : pandas.DataFrame
        ``scope``, ``task_id``, ``judge`` (whichever occur; a ``judge`` column is added when
        render forfeits can occur), ``model_a``, ``model_b``, ``wins_a``, ``wins_b``, ``ties``
        and ``forfeits`` (keys may repeat: :func:`ratings.data.comparisons.from_counts` sums
        them).
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
    out["wins_a"] = w * (outcome == 0)
    out["wins_b"] = w * (outcome == 1)
    out["ties"] = w * (outcome == 2)
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
