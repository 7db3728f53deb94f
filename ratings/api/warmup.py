"""Call every numba kernel once on tiny arrays so later calls do not compile."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ratings.api.fitting import fit
from ratings.api.specs import Solver
from ratings.core.arrays import frozen
from ratings.inference.cluster import readonly
from ratings.kernels import fit as _kernels

__all__ = ["warmup"]


def warmup() -> None:
    """Compile or load each kernel for the dtypes the package uses."""
    theta = np.zeros(2)
    ii, jj = np.array([0], dtype=np.int64), np.array([1], dtype=np.int64)
    one = np.ones(1)
    _, score, info, _ = _kernels.bt_row_terms(theta, ii, jj, one, one, one)
    _kernels.bt_row_terms(theta, ii, jj, one, one, one, False)  # as Newton's steps call it
    _kernels.laplacian(2, ii, jj, info)
    _kernels.scatter_diff(2, ii, jj, score)
    starts = np.array([0, 1], dtype=np.int64)
    _kernels.bt_scores(theta, ii, jj, one, one, one)
    _kernels.cluster_meat(2, 2, ii, jj, ii, score, np.zeros(0), starts)
    _kernels.cluster_scores(1, 2, ii, jj, ii, ii, score, np.zeros(0), 2)
    eta = np.ones(1)
    _, gd, ge, hdd, hde, hee, *_ = _kernels.crowd_row_terms(theta, eta, ii, jj, ii, one, one, one)
    _kernels.crowd_row_terms(theta, eta, ii, jj, ii, one, one, one, False)  # Newton's steps
    _kernels.crowd_assemble(2, 1, ii, jj, ii, hdd, hde, hee)
    _kernels.crowd_weights(theta[ii] - theta[jj], eta, one)  # CR2's working rows
    from ratings.kernels import ties as _ties  # the tie models' row terms

    for kernel in (_ties.davidson_row_terms, _ties.rao_kupper_row_terms):
        kernel(theta, 0.0, ii, jj, one, one, one)
        kernel(theta, 0.0, ii, jj, one, one, one, False)
    _kernels.cluster_meat(2, 3, ii, jj, ii, gd, ge, starts)
    zero = np.zeros(1, dtype=np.int64)  # the judge audit's slot kernels
    _kernels.slot_collapse(zero, ii, jj, one, one, one, 1, 2)
    # counts tables' rows, for the code widths of their categoricals (judge and cluster
    # codes absent, or 8, 16 or 32 bits wide; model codes 8 or 16)
    one_map = np.array([0, 1], dtype=np.int64)
    for names in (np.int8, np.int16):
        pair = np.array([0], dtype=names), np.array([1], dtype=names)
        for judge in (zero[:0], np.zeros(1, dtype=np.int8)):
            for cluster in (zero[:0], *(np.zeros(1, dtype=t) for t in (np.int8, np.int16,
                                                                          np.int32))):
                _kernels.count_rows(*pair, one_map, one_map, judge, cluster, one, one, one, 2, 1,
                                    1)  # fmt: skip
    _kernels.slot_cluster_scores(1, 2, 1, zero, zero, ii, jj, one, score, np.zeros(0))
    _kernels.slot_cluster_scores(1, 2, 1, zero, zero, ii, jj, one, score, one)
    from ratings.kernels import inference as cr2

    ri, rj = (frozen(a.copy()) for a in (ii, jj))  # the fit's rows are read-only (copies: the
    # merged rows of the df passes are writable)
    for b in (np.zeros(0), one):  # Bradley-Terry rows, and rows with a judge column
        bread = np.eye(3) / 4.0  # the sparse CR2 path (many small clusters)
        for i, j in ((ii, jj), (ri, rj)):
            cr2.cluster_times(i, j, i, i, one, b, 2, np.zeros((1, 3)))
            cr2.cluster_quadratic(1, i, j, i, i, one, b, 2, np.zeros((3, 1)))
            cr2.small_blocks(starts, i, j, i, one, b, 2, bread, 1e-8)
            cr2.small_meat(starts, i, j, i, one, b, 2, 3, one)
            cr2.small_shares(starts, i, j, i, one, b, 2, np.ones((3, 1)), one, 1e-8, one)
    # the kernels a large board's CR2 takes once loaded, on read-only views (one signature)
    cr2.bt_cluster_scores(*readonly(theta, ii, jj, one, one, one, ii), 1)
    cr2.model_clusters(*readonly(ii, jj, ii), 2, 1)
    for dtype in (np.float32, np.float64):  # the series' terms of both precisions
        cr2.series_term(np.zeros((1, 2), dtype=dtype), 0.5, np.zeros((1, 2)), np.zeros((1, 2)))
    # aggregation and clustered intervals, for the code widths read_verdicts gives (int8 and
    # int16 model and task codes), with and without clusters
    for n_models, n_tasks in ((3, 3), (200, 200)):
        log = _cycle(n_models, n_tasks)
        for cluster in ("task_id", None):
            fit(log, cluster=cluster, solver=Solver(engine="numba"))
        # int32 task codes (past 32,767 tasks: an arena, every vote its own prompt), as a
        # categorical of that many tasks gives them
        tasks = pd.CategoricalDtype(np.arange(1 << 15))
        fit(log.assign(task_id=pd.Categorical(np.arange(len(log)) % n_tasks, dtype=tasks)),
            solver=Solver(engine="numba"))  # fmt: skip
    # an unclustered log of FIRST_GROUPS x n_models verdicts over too many models for a dense
    # table: its rows deduplicated in order of their first model (a cycle has 2 x n_models)
    from ratings.kernels.aggregate import FIRST_GROUPS

    fit(pd.concat([_cycle(400, 1)] * (FIRST_GROUPS // 2), ignore_index=True), cluster=None,
        solver=Solver(engine="numba"))  # fmt: skip
    from ratings.io.blanks import candidates_with  # an unread task column's missing cells
    from ratings.kernels.cells import candidates

    for offsets in (np.int32, np.int64):  # Arrow's string and large_string
        candidates_with(candidates, np.zeros(2, dtype=offsets), np.zeros(1, dtype=np.uint8))
    # modules a clustered fit's intervals import on first use: the NumPy twins of some small
    # steps, every pair's streamed df, rank intervals, and t quantiles for many df at once
    import scipy.special  # noqa: F401

    import ratings.inference.pairdf
    import ratings.inference.ranks
    import ratings.kernels.fit_ref
    import ratings.kernels.inference_ref  # noqa: F401


def _cycle(n_models: int, n_tasks: int) -> pd.DataFrame:
    """Each model beats the next and loses to the one after it, on ``n_tasks`` tasks."""
    names = [f"m{k}" for k in range(n_models)]
    a = np.arange(2 * n_models) % n_models
    b = (a + 1 + np.arange(2 * n_models) // n_models) % n_models
    return pd.DataFrame({"model_a": [names[k] for k in a], "model_b": [names[k] for k in b],
                         "winner": ["A"] * n_models + ["B"] * n_models,
                         "task_id": [f"t{k % n_tasks}" for k in range(2 * n_models)]})
