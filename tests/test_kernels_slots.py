"""The slot kernels of the judge audit (:mod:`ratings.kernels.slots`): numba kernel, its
``py_func`` and the NumPy twin against references written here (a pandas groupby, and
``np.add.at`` over the design)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ratings.kernels import fit as _kernels
from ratings.kernels import fit_ref as _kernels_ref

KERNELS = [_kernels.slot_collapse, _kernels.slot_collapse.py_func, _kernels_ref.slot_collapse]
SCORES = [_kernels.slot_cluster_scores, _kernels.slot_cluster_scores.py_func,
          _kernels_ref.slot_cluster_scores]  # fmt: skip


def _codes(seed: int, n: int, g: int, k: int, m: int):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    return (rng.integers(0, g, n), rng.integers(0, k, n), a, b,
            rng.integers(0, 3, n).astype(float), rng.random(n), rng.integers(0, 2, n) * 1.0)


@settings(deadline=None, max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 300), g=st.integers(1, 6),
       k=st.integers(1, 3), m=st.integers(2, 6))  # fmt: skip
def test_slot_collapse_is_a_groupby(seed, n, g, k, m):
    _, judge, a, b, wa, wb, tt = _codes(seed, n, g, k, m)
    frame = pd.DataFrame({"k": judge, "a": a, "b": b, "wa": wa, "wb": wb, "tt": tt})
    want = frame.groupby(["k", "a", "b"], as_index=False)[["wa", "wb", "tt"]].sum()
    for kernel in KERNELS:
        *out, row = kernel(judge, a, b, wa, wb, tt, k, m)
        for got, col in zip(out, ["k", "a", "b", "wa", "wb", "tt"], strict=True):
            np.testing.assert_allclose(got, want[col].to_numpy(), rtol=1e-12, atol=1e-12)
            if col in "kab":
                assert got.dtype == np.int64
        assert row.dtype == np.int64 and row.shape == (n,)
        np.testing.assert_array_equal(out[0][row], judge)  # each input's row has its key
        np.testing.assert_array_equal(out[1][row], a)
        np.testing.assert_array_equal(out[2][row], b)


@pytest.mark.parametrize("crowd", [False, True])
def test_slot_cluster_scores_match_a_dense_design(crowd):
    n, g, k, m = 200, 7, 3, 5
    cluster, judge, a, b, *_ = _codes(3, n, g, k, m)
    rng = np.random.default_rng(4)
    d_own = rng.integers(-1, 2, n).astype(float)
    score, score_eta = rng.normal(size=n), rng.normal(size=n) if crowd else np.zeros(0)
    x = np.zeros((n, m + 3 * k))  # the design row of each verdict
    x[np.arange(n), a] += 1
    x[np.arange(n), b] -= 1
    x[np.arange(n), m + judge] = 1
    x[np.arange(n), m + k + judge] = d_own
    want = np.zeros((g, m + 3 * k))
    np.add.at(want, cluster, x * score[:, None])
    if crowd:
        np.add.at(want, (cluster, m + 2 * k + judge), score_eta)
    for kernel in SCORES:
        got = kernel(g, m, k, cluster, judge, a, b, d_own, score, score_eta)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("outcomes", [_kernels.slot_outcomes, _kernels.slot_outcomes.py_func,
                                      _kernels_ref.slot_outcomes])
def test_outcomes_from_winner_codes_and_render_failures(outcomes):
    """Each verdict's win of A, win of B or tie; a failed render loses, two failures tie."""
    winner = np.array([0, 1, 2, 0, 1, 2, 0, -1])
    failed_a = np.array([0, 0, 0, 1, 1, 0, 1, 0], dtype=bool)
    failed_b = np.array([0, 0, 0, 0, 1, 1, 0, 0], dtype=bool)
    wa, wb, tt, forfeit = outcomes(winner, failed_a, failed_b)
    np.testing.assert_array_equal(wa, [1, 0, 0, 0, 0, 1, 0, 0])
    np.testing.assert_array_equal(wb, [0, 1, 0, 1, 0, 0, 1, 0])
    np.testing.assert_array_equal(tt, [0, 0, 1, 0, 1, 0, 0, 0])
    np.testing.assert_array_equal(forfeit, failed_a | failed_b)


@pytest.mark.parametrize("missing", [_kernels.slot_missing, _kernels.slot_missing.py_func,
                                     _kernels_ref.slot_missing])
def test_missing_codes_counted(missing):
    codes = [np.array([0, 1, 2, 3]) for _ in range(4)]
    assert missing(*codes) == 0
    codes[1] = np.array([0, -1, 2, 3])
    codes[3] = np.array([0, -1, 2, -1])
    assert missing(*codes) == 2
