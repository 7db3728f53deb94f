"""Numba kernels against their NumPy twins, and derivatives against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import simulate_verdicts
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import approx_fprime, check_grad
from scipy.special import expit, log_expit

from ratings.data.comparisons import aggregate
from ratings.kernels import fit as _kernels
from ratings.kernels import fit_ref as _kernels_ref
from ratings.models.bt import penalised_terms

EXTREME = [-1e4, -745.0, -700.0, -1.0, -1e-300, 0.0, 1e-300, 1.0, 700.0, 745.0, 1e4]
thetas = st.one_of(
    st.floats(-700.0, 700.0, allow_nan=False, allow_infinity=False),
    st.sampled_from(EXTREME),
)
NO_ETA = np.zeros(0)  # cluster kernels without Crowd-BT's eta block
counts = st.one_of(st.just(0.0), st.integers(0, 30).map(float), st.floats(0.0, 50.0))


@st.composite
def comparison_rows(draw, min_rows: int = 1, max_rows: int = 15):
    """Aggregated-row arrays as the kernels take them, with clusters for ``cluster_meat``."""
    m = draw(st.integers(2, 6))
    r = draw(st.integers(min_rows, max_rows))
    theta = np.array(draw(st.lists(thetas, min_size=m, max_size=m)))
    ii = np.array(draw(st.lists(st.integers(0, m - 1), min_size=r, max_size=r)), dtype=np.int64)
    shift = np.array(draw(st.lists(st.integers(1, m - 1), min_size=r, max_size=r)), dtype=np.int64)
    jj = (ii + shift) % m
    wi, wj, tt = (np.array(draw(st.lists(counts, min_size=r, max_size=r))) for _ in range(3))
    n_clusters = draw(st.integers(1, 4))
    cluster = np.sort(draw(st.lists(st.integers(0, n_clusters - 1), min_size=r, max_size=r)))
    starts = np.searchsorted(cluster, np.arange(n_clusters + 1)).astype(np.int64)
    return m, theta, ii, jj, wi, wj, tt, starts


def assert_row_terms_equal(got, want) -> None:
    nll, score, info, meat = got
    nll_r, score_r, info_r, meat_r = want
    np.testing.assert_allclose(nll, nll_r, rtol=1e-12, atol=1e-300)
    for a, b in ((score, score_r), (info, info_r), (meat, meat_r)):
        atol = 1e-12 * (1.0 + np.max(np.abs(b), initial=0.0))
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=atol)


@settings(deadline=None, max_examples=150)
@given(d=st.one_of(st.floats(allow_nan=False), st.sampled_from(EXTREME)))
def test_sigmoids_match_scipy(d):
    np.testing.assert_allclose(_kernels._sigmoid(d), expit(d), rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(_kernels._log_sigmoid(d), log_expit(d), rtol=1e-14, atol=1e-300)
    x = np.array([d, -d])  # the twins' own vectorised versions
    np.testing.assert_allclose(_kernels_ref.expit(x), expit(x), rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(_kernels_ref.log_expit(x), log_expit(x), rtol=1e-14, atol=1e-300)


@settings(deadline=None, max_examples=150)
@given(rows=comparison_rows())
def test_bt_row_terms_matches_twin(rows):
    _, theta, ii, jj, wi, wj, tt, _ = rows
    got = _kernels.bt_row_terms(theta, ii, jj, wi, wj, tt)
    assert_row_terms_equal(got, _kernels_ref.bt_row_terms(theta, ii, jj, wi, wj, tt))
    assert np.isfinite(got[0]) and got[0] >= 0.0
    assert np.all(np.isfinite(got[1])) and np.all(got[2] >= 0.0) and np.all(got[3] >= 0.0)
    for k in (_kernels, _kernels_ref):  # Newton's steps skip the meat column
        lean = k.bt_row_terms(theta, ii, jj, wi, wj, tt, False)
        assert lean[3].size == 0
        assert_row_terms_equal((*lean[:3], got[3]), got)


@settings(deadline=None, max_examples=150)
@given(rows=comparison_rows(max_rows=60))
def test_bt_scores_match_twin_and_row_terms(rows):
    # max_rows=60 > m^2 for small m: both the tabulated and the direct branch run.
    _, theta, ii, jj, wi, wj, tt = rows[:7]
    got = _kernels.bt_scores(theta, ii, jj, wi, wj, tt)
    for want in (_kernels_ref.bt_scores(theta, ii, jj, wi, wj, tt),
                 _kernels_ref.bt_row_terms(theta, ii, jj, wi, wj, tt)[1]):  # fmt: skip
        atol = 1e-12 * (1.0 + np.max(np.abs(want), initial=0.0))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=atol)
    _kernels.bt_scores.py_func(theta, ii, jj, wi, wj, tt)


@settings(deadline=None, max_examples=100)
@given(rows=comparison_rows())
def test_graph_kernels_match_twins(rows):
    m, _, ii, jj, wi, wj, tt, starts = rows
    w = wi - 0.5 * wj + tt  # any real weights, negative ones too
    np.testing.assert_allclose(
        _kernels.laplacian(m, ii, jj, w),
        _kernels_ref.laplacian(m, ii, jj, w),
        rtol=1e-13,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        _kernels.scatter_diff(m, ii, jj, w),
        _kernels_ref.scatter_diff(m, ii, jj, w),
        rtol=1e-13,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        _kernels.cluster_meat(m, m, ii, jj, ii, w, NO_ETA, starts),
        _kernels_ref.cluster_meat(m, m, ii, jj, ii, w, NO_ETA, starts),
        rtol=1e-12,
        atol=1e-9,
    )


def test_single_row_by_hand():
    theta = np.array([0.3, -0.2])
    ii, jj = np.array([0], dtype=np.int64), np.array([1], dtype=np.int64)
    wi, wj, tt = np.array([2.0]), np.array([1.0]), np.array([1.0])
    p = expit(0.5)
    nll, score, info, meat = _kernels.bt_row_terms(theta, ii, jj, wi, wj, tt)
    assert nll == pytest.approx(-(2.5 * np.log(p) + 1.5 * np.log1p(-p)), rel=1e-14)
    assert score[0] == pytest.approx(2.5 - 4 * p, rel=1e-14)
    assert info[0] == pytest.approx(4 * p * (1 - p), rel=1e-14)
    assert meat[0] == pytest.approx(2 * (1 - p) ** 2 + p**2 + (0.5 - p) ** 2, rel=1e-14)
    lap = _kernels.laplacian(2, ii, jj, np.array([3.0]))
    np.testing.assert_array_equal(lap, [[3.0, -3.0], [-3.0, 3.0]])
    np.testing.assert_array_equal(_kernels.scatter_diff(2, ii, jj, np.array([3.0])), [3.0, -3.0])
    np.testing.assert_array_equal(
        _kernels.cluster_meat(2, 2, ii, jj, ii, np.array([3.0]), NO_ETA,
                              np.array([0, 1], dtype=np.int64)), lap * 3
    )


@pytest.mark.parametrize("k", [_kernels, _kernels_ref], ids=["numba", "numpy"])
def test_zero_rows(k):
    e_i, e_f = np.zeros(0, dtype=np.int64), np.zeros(0)
    nll, score, info, meat = k.bt_row_terms(np.zeros(3), e_i, e_i, e_f, e_f, e_f)
    assert nll == 0.0 and score.size == info.size == meat.size == 0
    np.testing.assert_array_equal(k.laplacian(3, e_i, e_i, e_f), np.zeros((3, 3)))
    np.testing.assert_array_equal(k.scatter_diff(3, e_i, e_i, e_f), np.zeros(3))
    starts = np.zeros(2, dtype=np.int64)  # one empty cluster
    np.testing.assert_array_equal(k.cluster_meat(3, 3, e_i, e_i, e_i, e_f, NO_ETA, starts),
                                  np.zeros((3, 3)))  # fmt: skip


def test_py_func_versions_match_twins(rng):
    """Run the Python bodies of the kernels too (coverage does not see jitted code)."""
    m, r = 4, 12
    theta = rng.normal(scale=2.0, size=m)
    ii = rng.integers(0, m, r)
    jj = (ii + rng.integers(1, m, r)) % m
    wi, wj, tt = (rng.integers(0, 5, r).astype(np.float64) for _ in range(3))
    starts = np.array([0, 5, 5, 12], dtype=np.int64)
    for d in (-800.0, -2.0, 0.0, 3.0, 800.0):
        assert _kernels._sigmoid.py_func(d) == pytest.approx(expit(d), rel=1e-14, abs=1e-300)
        assert _kernels._log_sigmoid.py_func(d) == pytest.approx(log_expit(d), rel=1e-14)
    assert_row_terms_equal(
        _kernels.bt_row_terms.py_func(theta, ii, jj, wi, wj, tt),
        _kernels_ref.bt_row_terms(theta, ii, jj, wi, wj, tt),
    )
    np.testing.assert_allclose(
        _kernels.laplacian.py_func(m, ii, jj, wi), _kernels_ref.laplacian(m, ii, jj, wi), rtol=1e-14
    )
    np.testing.assert_allclose(
        _kernels.scatter_diff.py_func(m, ii, jj, wi),
        _kernels_ref.scatter_diff(m, ii, jj, wi),
        rtol=1e-14,
    )
    np.testing.assert_allclose(
        _kernels.cluster_meat.py_func(m, m, ii, jj, ii, wi - wj, NO_ETA, starts),
        _kernels_ref.cluster_meat(m, m, ii, jj, ii, wi - wj, NO_ETA, starts),
        rtol=1e-13,
    )


# --- derivatives of the penalised negative log-likelihood ------------------------------------


@pytest.fixture(scope="module")
def comparisons():
    rng = np.random.default_rng(7)
    log = simulate_verdicts(
        rng, [0.0, 0.5, -0.5, 1.2, -1.0, 0.2], 400, 40, tie_fraction=0.15, task_sd=0.3
    )
    return aggregate(log, cluster="task_id")


SCALES = [1e-3, 0.1, 0.5, 1.0, 2.0, 5.0, 20.0]


@pytest.mark.parametrize("k", [_kernels, _kernels_ref], ids=["numba", "numpy"])
@pytest.mark.parametrize("penalty", [0.0, 0.7])
@pytest.mark.parametrize("scale", SCALES)
def test_gradient_matches_finite_differences(comparisons, k, penalty, scale):
    theta = scale * np.random.default_rng(int(scale * 1000)).standard_normal(comparisons.n_models)

    def f(t):
        return penalised_terms(t, comparisons, penalty, k)[0]

    def g(t):
        return penalised_terms(t, comparisons, penalty, k)[1]

    grad = g(theta)
    assert check_grad(f, g, theta) <= 1e-5 * max(1.0, np.linalg.norm(grad))
    h = 1e-6 * max(1.0, scale)
    central = np.array(
        [(f(theta + h * e) - f(theta - h * e)) / (2 * h) for e in np.eye(theta.size)]
    )
    np.testing.assert_allclose(grad, central, rtol=1e-6, atol=1e-6 * max(1.0, np.abs(grad).max()))
    forward = approx_fprime(theta, f, 1e-7)
    np.testing.assert_allclose(grad, forward, rtol=1e-3, atol=1e-3 * max(1.0, np.abs(grad).max()))


@pytest.mark.parametrize("k", [_kernels, _kernels_ref], ids=["numba", "numpy"])
@pytest.mark.parametrize("penalty", [0.0, 0.7])
@pytest.mark.parametrize("scale", SCALES)
def test_hessian_matches_jacobian_of_gradient(comparisons, k, penalty, scale):
    theta = scale * np.random.default_rng(int(scale * 1000) + 1).standard_normal(
        comparisons.n_models
    )
    _, _, hess = penalised_terms(theta, comparisons, penalty, k)
    h = 1e-5
    jac = np.column_stack(
        [
            (
                penalised_terms(theta + h * e, comparisons, penalty, k)[1]
                - penalised_terms(theta - h * e, comparisons, penalty, k)[1]
            )
            / (2 * h)
            for e in np.eye(theta.size)
        ]
    )
    atol = 1e-6 * max(1.0, np.abs(hess).max())
    np.testing.assert_allclose(hess, jac, rtol=1e-6, atol=atol)
    np.testing.assert_array_equal(hess, hess.T)
    # Shift invariance: the (penalised) likelihood depends on differences only.
    np.testing.assert_allclose(hess.sum(axis=1), 0.0, atol=1e-9 * max(1.0, np.abs(hess).max()))


@pytest.mark.parametrize("threads", [1, 2])
def test_row_passes_side_by_side_give_one_pass_values(monkeypatch, threads):
    """The NumPy row passes (``bt_row_weights``, ``scores_by_blocks``) split their blocks
    across the package's threads on long logs: the values are bit for bit those of one
    thread, and match scipy's sigmoid and a brute-force sum per (cluster, model)."""
    from ratings.core import threads as pool
    from ratings.kernels import inference_ref as ref

    rng = np.random.default_rng(3)
    n, m, g = 300_000, 30, 700  # above CONCURRENT_ROWS: the blocks run side by side
    ii = rng.integers(0, m, n)
    jj = (ii + rng.integers(1, m, n)) % m
    cluster = np.sort(rng.integers(0, g, n))
    wi, wj, tt = (rng.integers(0, 3, n).astype(float) for _ in range(3))
    theta = rng.normal(size=m)
    blocks = ref.cluster_blocks(np.searchsorted(cluster, np.arange(g + 1)))
    monkeypatch.setattr(pool, "workers", lambda: threads)
    a, score = ref.bt_row_weights(theta, ii, jj, wi, wj, tt)
    summed = ref.scores_by_blocks(ii, jj, cluster, score, g, m, blocks)
    monkeypatch.setattr(pool, "workers", lambda: 1)
    a1, score1 = ref.bt_row_weights(theta, ii, jj, wi, wj, tt)
    assert np.array_equal(a, a1) and np.array_equal(score, score1)
    assert np.array_equal(summed, ref.scores_by_blocks(ii, jj, cluster, score, g, m, blocks))
    p = expit(theta[ii] - theta[jj])
    total = wi + wj + tt
    np.testing.assert_allclose(a, np.sqrt(total * p * (1 - p)), rtol=1e-12)
    np.testing.assert_allclose(score, wi + tt / 2 - total * p, rtol=1e-9, atol=1e-12)
    brute = np.zeros((g, m))
    np.add.at(brute, (cluster, ii), score)
    np.subtract.at(brute, (cluster, jj), score)
    np.testing.assert_allclose(summed, brute, rtol=1e-9, atol=1e-9)
