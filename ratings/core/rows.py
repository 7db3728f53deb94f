"""Verdicts as integer codes: what the aggregation kernels read, and what they return.

:func:`ratings.aggregate` encodes a verdict log once (each text column as codes into its own
labels, plus small tables from those labels to model and outcome codes) and hands the codes to
the aggregation kernels (:mod:`ratings.kernels.aggregate`, or their twins in
:mod:`ratings.kernels.fit_ref`) as a :class:`VerdictCodes`. The kernels take its fields as their
leading arguments, in this order, so ``k.aggregate_codes(*codes, weight)`` calls them; they
return an :class:`AggregatedRows` or a :class:`CollapsedRows`, whose rows are in the one
aggregated-row layout, :class:`PairRows`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "AggregatedRows",
    "CollapsedRows",
    "PairRows",
    "UsedCodes",
    "VerdictCodes",
    "no_rows",
    "summed_rows",
]

Codes = NDArray[np.integer]  # int8 / int16 (a categorical's codes, as they are) up to int64


class VerdictCodes(NamedTuple):
    """A verdict log as codes. An optional column that is absent is an empty array.

    A verdict is unusable where one of its codes is -1 (missing), a map gives -1, or both sides
    name the same model; the kernels count such verdicts and the caller names them.
    """

    model_a: Codes  #: per verdict: code of ``model_a`` among that column's labels
    model_b: Codes  #: per verdict: code of ``model_b`` among that column's labels
    model_a_map: NDArray[np.int64]  #: ``model_a`` label code -> model code (-1: not fitted)
    model_b_map: NDArray[np.int64]  #: ``model_b`` label code -> model code
    winner: Codes  #: per verdict: code of the ``winner`` label
    winner_map: NDArray[np.int64]  #: winner label code -> 0 (A won), 1 (B won), 2 (tie), -1
    judge: Codes  #: per verdict: judge code (empty: one judge, code 0)
    cluster: Codes  #: per verdict: cluster code (empty: one cluster, code 0)
    failed_a: NDArray[np.bool_]  #: per verdict: A failed to render (empty: no forfeits)
    failed_b: NDArray[np.bool_]  #: per verdict: B failed to render
    forfeit_judge: int  #: judge code of forfeited verdicts (the deterministic judge)
    n_models: int
    n_judges: int
    n_clusters: int


class PairRows(NamedTuple):
    """The aggregated-row layout, declared once: one row per ``(cluster, judge, ii, jj)`` key
    (``ii < jj``) with the three counts of its verdicts. A tie is one observation with outcome
    1/2 in ``tt``, never two half rows, so that per-verdict robust variances count it once.

    Every holder of aggregated rows spells them so: the aggregation kernels' results
    (:class:`AggregatedRows`, :class:`CollapsedRows`), :class:`ratings.data.comparisons.Comparisons`
    (``data.ii`` ... ``data.tt``), the GLM working rows of :mod:`ratings.inference.working`, and
    the row kernels' arguments (:mod:`ratings.kernels.fit`).
    """

    cluster: NDArray[np.int64]  #: cluster code (0 throughout for rows summed over clusters)
    judge: NDArray[np.int64]  #: judge code
    ii: NDArray[np.int64]  #: model code i
    jj: NDArray[np.int64]  #: model code j > i
    wi: NDArray[np.float64]  #: wins of ``ii``
    wj: NDArray[np.float64]  #: wins of ``jj``
    tt: NDArray[np.float64]  #: ties


class UsedCodes(NamedTuple):
    """Which codes a usable verdict names (flags over each code range)."""

    models: NDArray[np.bool_]
    judges: NDArray[np.bool_]
    clusters: NDArray[np.bool_]


class AggregatedRows(NamedTuple):
    """Unique (cluster, judge, ii, jj) rows, ordered by cluster, and what was used.

    When ``n_unusable > 0`` only that count and ``used`` are meaningful (the rows are empty).
    """

    rows: PairRows
    used: UsedCodes
    #: None, or the rows summed over clusters (cluster 0), when the pass computed them on the
    #: way (as ``collapse_rows`` gives them)
    collapsed: PairRows | None
    n_unusable: int


class CollapsedRows(NamedTuple):
    """The rows summed over clusters (cluster 0), one per (judge, ii, jj), sorted by that key."""

    rows: PairRows
    used: UsedCodes
    #: int64[n_judges * n_models^2]: the row of each (judge, ii, jj) key that occurs, at
    #: ``(judge * n_models + ii) * n_models + jj`` (other entries are not read)
    slot: NDArray[np.int64]
    n_unusable: int


def summed_rows(judge, ii, jj, wi, wj, tt) -> PairRows:
    """Rows summed over clusters (as ``collapse_rows`` returns them) in the row layout."""
    return PairRows(np.zeros(len(ii), dtype=np.int64), judge, ii, jj, wi, wj, tt)


def no_rows() -> PairRows:
    """The empty rows (of a log with unusable verdicts)."""
    i8, f8 = np.zeros(0, dtype=np.int64), np.zeros(0)
    return PairRows(i8, i8, i8, i8, f8, f8, f8)
