"""Verdicts as integer codes: what the aggregation kernels read, and what they return.

:func:`ratings.aggregate` encodes a verdict log once (each text column as codes into its own
labels, plus small tables from those labels to model and outcome codes) and hands the codes to
the aggregation kernels (:mod:`ratings.kernels.aggregate`, or their twins in
:mod:`ratings.kernels.fit_ref`) as a :class:`VerdictCodes`. The kernels take its fields as their
leading arguments, in this order, so ``k.aggregate_codes(*codes, weight)`` calls them; they
return an :class:`AggregatedRows` or a :class:`CollapsedRows`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

__all__ = ["AggregatedRows", "CollapsedRows", "VerdictCodes"]

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


class AggregatedRows(NamedTuple):
    """Unique (cluster, judge, i, j) rows (``i < j``), ordered by cluster, and what was used.

    When ``n_unusable > 0`` only that count is meaningful (the rows are empty).
    """

    cluster: NDArray[np.int64]
    judge: NDArray[np.int64]
    i: NDArray[np.int64]
    j: NDArray[np.int64]
    wins_i: NDArray[np.float64]
    wins_j: NDArray[np.float64]
    ties: NDArray[np.float64]
    used_models: NDArray[np.bool_]  #: model codes a usable verdict names
    used_judges: NDArray[np.bool_]  #: judge codes a usable verdict names
    used_clusters: NDArray[np.bool_]  #: cluster codes a usable verdict names
    #: None, or (judge, i, j, wins_i, wins_j, ties): the rows summed over clusters, when the
    #: pass computed them on the way (as ``collapse_rows`` gives them)
    collapsed: tuple | None
    n_unusable: int


class CollapsedRows(NamedTuple):
    """The rows summed over clusters, one per (judge, i, j), sorted by that key."""

    judge: NDArray[np.int64]
    i: NDArray[np.int64]
    j: NDArray[np.int64]
    wins_i: NDArray[np.float64]
    wins_j: NDArray[np.float64]
    ties: NDArray[np.float64]
    used_models: NDArray[np.bool_]
    used_judges: NDArray[np.bool_]
    used_clusters: NDArray[np.bool_]
    #: int64[n_judges * n_models^2]: the row of each (judge, i, j) key that occurs, at
    #: ``(judge * n_models + i) * n_models + j`` (other entries are not read)
    slot: NDArray[np.int64]
    n_unusable: int
