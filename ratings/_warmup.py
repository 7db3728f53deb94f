"""Call every numba kernel once on tiny arrays so later calls do not compile."""

from __future__ import annotations

import numpy as np

from ratings import _kernels


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
    _kernels.cluster_meat(2, 3, ii, jj, ii, gd, ge, starts)
    # aggregation: every pass over the verdict codes (count, dense, scatter, scores)
    codes = (np.array([0, 1]), np.array([1, 0]), np.arange(2), np.arange(2), np.array([0, 2]),
             np.arange(3), np.zeros(0, dtype=np.int64), np.array([0, 1]),
             np.zeros(0, dtype=bool), np.zeros(0, dtype=bool), 0, 2, 1, 2)  # fmt: skip
    _kernels.aggregate_codes(*codes, np.zeros(0))
    *_, slot, _ = _kernels.collapse_codes(*codes, np.zeros(0))
    _kernels.verdict_cluster_scores(*codes, np.zeros(0), slot, np.zeros(3), np.zeros(0))
    _kernels.verdict_cluster_scores(*codes, np.zeros(0), slot, np.zeros(3), np.zeros(3))
