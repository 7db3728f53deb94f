"""Crowd-BT numerics: the derivatives of its objective
(:func:`ratings.models.design.pair_objective`, the collapsed-counts path of the one solver)
against finite differences (eta at and near the bounds 1/2 and 1, large strengths), and the
numba kernels against their NumPy twins in :mod:`ratings.kernels.fit_ref` (hypothesis-drawn
rows, extreme values, zero rows and the Python bodies of the jitted functions)."""

from __future__ import annotations

import numpy as np
import pytest
from crowd_reference import draw_board
from helpers import assert_close
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit

from ratings.data.comparisons import aggregate
from ratings.kernels import fit as _kernels
from ratings.kernels import fit_ref as _kernels_ref
from ratings.models.design import pair_objective
from ratings.models.families import CROWD_BT

# ----------------------------------------------------------------------------------------------
# Derivatives of Crowd-BT's objective against finite differences
# ----------------------------------------------------------------------------------------------


def crowd_terms(x, data, k) -> tuple:
    """Negative log-likelihood of the decisive verdicts, gradient and Hessian over
    x = (theta, eta), as the solver reads them."""
    m = data.n_models
    return pair_objective(CROWD_BT, k, x[:m], x[m:], data, len(data.judges))


@pytest.fixture(scope="module")
def small_data():
    frame = draw_board(
        5,
        [0.0, 0.6, -0.4, 1.1, -0.9, 0.3],
        {"ja": 0.9, "jb": 0.7, "jc": 0.6},
        3000,
        n_tasks=60,
        tie_rate=0.2,
        task_sd=0.2,
    )
    return aggregate(frame, cluster="task_id")


ETA_POINTS = [
    [0.5001, 0.9999, 1.0],
    [0.5, 0.75, 1.0],
    [0.9999, 0.5001, 0.62],
    [0.5, 0.5, 0.5],
    [1.0, 1.0, 1.0],
]


def _fd_steps(x, m, h):
    """Per-coordinate steps: backward-only (second order) for eta = 1, central otherwise."""
    return [(c, h, x[c] >= 1.0 and c >= m) for c in range(x.size)]


def _derivative(fun, x, c, h, one_sided):
    e = np.zeros_like(x)
    e[c] = h
    if one_sided:  # eta = 1: the box ends here; 3 f(x) - 4 f(x - h) + f(x - 2h) over 2h
        return (3 * fun(x) - 4 * fun(x - e) + fun(x - 2 * e)) / (2 * h)
    return (fun(x + e) - fun(x - e)) / (2 * h)


@pytest.mark.parametrize("k", [_kernels, _kernels_ref], ids=["numba", "numpy"])
@pytest.mark.parametrize("etas", ETA_POINTS)
@pytest.mark.parametrize("scale", [0.1, 1.0, 4.0])
def test_crowd_terms_derivatives(small_data, k, etas, scale):
    m = small_data.n_models
    theta = scale * np.random.default_rng(int(10 * scale)).standard_normal(m)
    x = np.concatenate([theta, etas])
    nll, grad, hess = crowd_terms(x, small_data, k)
    assert np.isfinite(nll) and grad.shape == (m + 3,) and hess.shape == (m + 3, m + 3)
    np.testing.assert_array_equal(hess, hess.T)

    def f(v):
        return crowd_terms(v, small_data, k)[0]

    def g(v):
        return crowd_terms(v, small_data, k)[1]

    h_scale = np.abs(grad).max()
    num_grad = np.array([_derivative(f, x, c, h, one) for c, h, one in _fd_steps(x, m, 1e-6)])
    np.testing.assert_allclose(grad, num_grad, rtol=1e-6, atol=1e-6 * max(1.0, h_scale))
    num_hess = np.column_stack(
        [_derivative(g, x, c, h, one) for c, h, one in _fd_steps(x, m, 1e-6)]
    )
    np.testing.assert_allclose(hess, num_hess, rtol=1e-5, atol=1e-5 * np.abs(hess).max())
    # The likelihood depends on strength differences only.
    np.testing.assert_allclose(grad[:m].sum(), 0.0, atol=1e-9 * max(1.0, h_scale))
    np.testing.assert_allclose(hess[:, :m].sum(axis=1), 0.0, atol=1e-9 * np.abs(hess).max())


def test_crowd_terms_at_half_and_one(small_data):
    """eta = 1/2: strengths carry no information from that judge (ties never do); eta = 1:
    the BT terms of the decisive verdicts."""
    m = small_data.n_models
    theta = np.random.default_rng(3).standard_normal(m)
    _, grad, hess = crowd_terms(np.concatenate([theta, [0.5, 0.5, 0.5]]), small_data, _kernels)
    np.testing.assert_allclose(grad[:m], 0.0, atol=1e-12)
    np.testing.assert_allclose(hess[:m, :m], 0.0, atol=1e-12)
    nll, grad, hess = crowd_terms(np.concatenate([theta, [1.0, 1.0, 1.0]]), small_data, _kernels)
    d = theta[small_data.ii] - theta[small_data.jj]
    yi, yj = small_data.wi, small_data.wj
    assert small_data.tt.sum() > 0
    bt_nll = -np.sum(yi * np.log(expit(d)) + yj * np.log(expit(-d)))
    assert nll == pytest.approx(bt_nll, rel=1e-12)
    info = (yi + yj) * expit(d) * expit(-d)
    lap = np.zeros((m, m))
    np.add.at(lap, (small_data.ii, small_data.ii), info)
    np.add.at(lap, (small_data.jj, small_data.jj), info)
    np.add.at(lap, (small_data.ii, small_data.jj), -info)
    np.add.at(lap, (small_data.jj, small_data.ii), -info)
    np.testing.assert_allclose(hess[:m, :m], lap, rtol=1e-12, atol=1e-9)


# ----------------------------------------------------------------------------------------------
# Kernel parity: numba against the NumPy twins
# ----------------------------------------------------------------------------------------------

THETA_EXTREME = [-30.0, -20.0, -1e-300, 0.0, 1e-300, 20.0, 30.0]
ETA_EXTREME = [0.5, 0.5 + 1e-12, 0.5001, 0.75, 0.9999, 1.0 - 1e-12, 1.0]
crowd_thetas = st.one_of(st.floats(-30.0, 30.0), st.sampled_from(THETA_EXTREME))
crowd_etas = st.one_of(st.floats(0.5, 1.0), st.sampled_from(ETA_EXTREME))
counts = st.one_of(st.just(0.0), st.integers(0, 30).map(float), st.floats(0.0, 50.0))


@st.composite
def crowd_rows(draw, max_rows: int = 15):
    """Aggregated rows with judges and clusters, as the crowd kernels take them."""
    m = draw(st.integers(2, 6))
    nj = draw(st.integers(1, 4))
    r = draw(st.integers(1, max_rows))
    ints = st.lists
    theta = np.array(draw(ints(crowd_thetas, min_size=m, max_size=m)))
    eta = np.array(draw(ints(crowd_etas, min_size=nj, max_size=nj)))
    ii = np.array(draw(ints(st.integers(0, m - 1), min_size=r, max_size=r)), dtype=np.int64)
    shift = np.array(draw(ints(st.integers(1, m - 1), min_size=r, max_size=r)), dtype=np.int64)
    jj = (ii + shift) % m
    kk = np.array(draw(ints(st.integers(0, nj - 1), min_size=r, max_size=r)), dtype=np.int64)
    wi, wj, tt = (np.array(draw(ints(counts, min_size=r, max_size=r))) for _ in range(3))
    n_clusters = draw(st.integers(1, 4))
    cluster = np.sort(draw(ints(st.integers(0, n_clusters - 1), min_size=r, max_size=r)))
    starts = np.searchsorted(cluster, np.arange(n_clusters + 1)).astype(np.int64)
    return m, nj, theta, eta, ii, jj, kk, wi, wj, tt, starts


def assert_crowd_terms_equal(got, want) -> None:
    assert len(got) == len(want) == 9
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12, atol=1e-300)
    for a, b in zip(got[1:], want[1:], strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10 * (1.0 + np.abs(b).max()))


@settings(deadline=None, max_examples=150)
@given(rows=crowd_rows())
def test_crowd_row_terms_matches_twin(rows):
    _, _, theta, eta, ii, jj, kk, wi, wj, tt, _ = rows
    got = _kernels.crowd_row_terms(theta, eta, ii, jj, kk, wi, wj, tt)
    assert_crowd_terms_equal(got, _kernels_ref.crowd_row_terms(theta, eta, ii, jj, kk, wi, wj, tt))
    for k in (_kernels, _kernels_ref):  # Newton's steps skip the meat columns
        lean = k.crowd_row_terms(theta, eta, ii, jj, kk, wi, wj, tt, False)
        assert all(a.size == 0 for a in lean[6:])
        assert_crowd_terms_equal((*lean[:6], *got[6:]), got)
    nll, *arrays = got
    assert np.isfinite(nll) and nll >= 0.0
    for a in arrays:
        assert np.all(np.isfinite(a))
    hee, mdd, mee = arrays[4], arrays[5], arrays[7]
    assert np.all(hee >= 0.0) and np.all(mdd >= 0.0) and np.all(mee >= 0.0)


@settings(deadline=None, max_examples=150)
@given(rows=crowd_rows())
def test_crowd_weights_match_twin_and_definition(rows):
    """CR2's working weights a = sqrt(n / (p q)) dp/dd, b = sqrt(n / (p q)) dp/deta: the kernel
    against its twin, and both against the definition from scipy's expit where p q is a
    normal number (0 where it has no value: no decisive verdict, or p q zero)."""
    _, _, theta, eta, ii, jj, kk, wi, wj, _, _ = rows
    d, e, n = theta[ii] - theta[jj], eta[kk], wi + wj
    got, want = _kernels.crowd_weights(d, e, n), _kernels_ref.crowd_weights(d, e, n)
    s = expit(d)
    p = e * s + (1 - e) * (1 - s)
    ok = (p * (1 - p) > 1e-300) & (n > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        root = np.where(ok, np.sqrt(n / (p * (1 - p))), 0.0)
    for g, w, dp in zip(got, want, ((2 * e - 1) * s * (1 - s), 2 * s - 1), strict=True):
        scale = 1.0 + np.abs(w).max(initial=0.0)
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10 * scale)
        assert np.all(np.isfinite(g))
        np.testing.assert_allclose(g[ok], (root * dp)[ok], rtol=1e-9, atol=1e-9 * scale)
    np.testing.assert_array_equal(got[0][n == 0], 0.0)


@settings(deadline=None, max_examples=100)
@given(rows=crowd_rows())
def test_crowd_assemble_and_cluster_meat_match_twins(rows):
    m, nj, theta, eta, ii, jj, kk, wi, wj, tt, starts = rows
    wdd, wde, wee = wi - 0.5 * wj + tt, wj - tt, wi * tt - 3.0  # any real weights
    assert_close(
        _kernels.crowd_assemble(m, nj, ii, jj, kk, wdd, wde, wee),
        _kernels_ref.crowd_assemble(m, nj, ii, jj, kk, wdd, wde, wee),
        rtol=1e-12,
    )
    _, gd, ge, *_ = _kernels.crowd_row_terms(theta, eta, ii, jj, kk, wi, wj, tt)
    got = _kernels.cluster_meat(m, m + nj, ii, jj, kk, gd, ge, starts)
    want = _kernels_ref.cluster_meat(m, m + nj, ii, jj, kk, gd, ge, starts)
    assert_close(got, want, rtol=1e-10)
    np.testing.assert_array_equal(got, got.T)
    assert np.linalg.eigvalsh(want).min() >= -1e-9 * max(1.0, np.abs(want).max())


@settings(deadline=None, max_examples=60)
@given(rows=crowd_rows())
def test_per_verdict_meat_is_one_cluster_per_verdict(rows):
    """The per-verdict meat rows equal the cluster meat with every verdict its own cluster."""
    m, nj, theta, eta, ii, jj, kk, wi, wj, tt, _ = rows
    wi, wj, tt = np.round(wi), np.round(wj), np.round(tt)
    *_, mdd, mde, mee = _kernels.crowd_row_terms(theta, eta, ii, jj, kk, wi, wj, tt)
    meat = _kernels.crowd_assemble(m, nj, ii, jj, kk, mdd, mde, mee)
    # Expand each row into single verdicts (one win of i, one win of j, or one tie each).
    reps = (wi + wj + tt).astype(np.int64)
    ei, ej, ek = np.repeat(ii, reps), np.repeat(jj, reps), np.repeat(kk, reps)
    kind = np.concatenate(
        [np.repeat([0, 1, 2], [int(a), int(b), int(c)]) for a, b, c in zip(wi, wj, tt, strict=True)]
        or [np.zeros(0, int)]
    )
    one = [(kind == q).astype(np.float64) for q in range(3)]
    _, gd, ge, *_ = _kernels.crowd_row_terms(theta, eta, ei, ej, ek, *one)
    starts = np.arange(reps.sum() + 1, dtype=np.int64)
    want = _kernels.cluster_meat(m, m + nj, ei, ej, ek, gd, ge, starts)
    assert_close(meat, want, rtol=1e-10)


def test_crowd_row_terms_at_eta_one_are_bt_terms():
    """With eta = 1 every crowd term is the Bradley-Terry one of the decisive verdicts (theta
    within +-30): ties are not part of the Crowd-BT likelihood."""
    theta = np.array([0.0, 30.0, -30.0, 2.5])
    ii, jj = np.array([0, 0, 1, 3, 3]), np.array([1, 2, 2, 0, 1])
    kk = np.zeros(5, dtype=np.int64)
    wi, wj, tt = (
        np.array([1.0, 0, 2, 3, 1]),
        np.array([0.0, 2, 1, 1, 0]),
        np.array([1.0, 1, 0, 2, 0]),
    )
    nll, gd, _, hdd, _, _, mdd, _, _ = _kernels.crowd_row_terms(
        theta, np.array([1.0]), ii, jj, kk, wi, wj, tt
    )
    bt_nll, score, info, meat = _kernels.bt_row_terms(theta, ii, jj, wi, wj, 0 * tt)
    assert nll == pytest.approx(bt_nll, rel=1e-13)
    np.testing.assert_allclose(gd, score, rtol=1e-12, atol=1e-12)
    no_ties = _kernels.crowd_row_terms(theta, np.array([1.0]), ii, jj, kk, wi, wj, 0 * tt)
    for a, b in zip(no_ties[1:], (gd, _, hdd, _, _, mdd, _, _), strict=True):
        if b is not _:
            np.testing.assert_array_equal(a, b)
    # (the crowd form differences two O(1) terms: absolute, not relative, accuracy in the tails)
    np.testing.assert_allclose(hdd, info, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(mdd, meat, rtol=1e-12)


def test_crowd_row_terms_at_eta_one_are_bt_terms_for_extreme_theta():
    theta = np.array([0.0, 800.0, -800.0, 1e4])
    ii, jj = np.array([0, 0, 1, 3]), np.array([1, 2, 2, 0])
    kk = np.zeros(4, dtype=np.int64)
    one = np.ones(4)
    nll, gd, _, hdd, _, _, mdd, _, _ = _kernels.crowd_row_terms(
        theta, np.array([1.0]), ii, jj, kk, one, one, one
    )
    bt_nll, score, info, meat = _kernels.bt_row_terms(theta, ii, jj, one, one, 0 * one)
    assert nll == pytest.approx(bt_nll, rel=1e-13)
    np.testing.assert_allclose(gd, score, rtol=1e-12)
    np.testing.assert_allclose(hdd, info, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(mdd, meat, rtol=1e-12)


@pytest.mark.parametrize("k", [_kernels, _kernels_ref], ids=["numba", "numpy"])
def test_crowd_kernels_zero_rows(k):
    e_i, e_f = np.zeros(0, dtype=np.int64), np.zeros(0)
    out = k.crowd_row_terms(np.zeros(3), np.array([0.8, 1.0]), e_i, e_i, e_i, e_f, e_f, e_f)
    assert out[0] == 0.0 and all(a.size == 0 for a in out[1:])
    np.testing.assert_array_equal(
        k.crowd_assemble(3, 2, e_i, e_i, e_i, e_f, e_f, e_f), np.zeros((5, 5))
    )
    starts = np.zeros(2, dtype=np.int64)
    np.testing.assert_array_equal(
        k.cluster_meat(3, 3 + 2, e_i, e_i, e_i, e_f, e_f, starts), np.zeros((5, 5))
    )


def test_crowd_py_func_versions_match_twins(rng):
    """Run the Python bodies of the crowd kernels (coverage does not see jitted code)."""
    m, nj, r = 4, 3, 14
    theta = rng.normal(scale=3.0, size=m)
    theta[0] = 30.0
    eta = np.array([0.5, 0.77, 1.0])
    ii = rng.integers(0, m, r)
    jj = (ii + rng.integers(1, m, r)) % m
    kk = rng.integers(0, nj, r)
    wi, wj, tt = (rng.integers(0, 5, r).astype(np.float64) for _ in range(3))
    wi[0] = wj[0] = tt[0] = 0.0
    starts = np.array([0, 6, 6, 14], dtype=np.int64)
    got = _kernels.crowd_row_terms.py_func(theta, eta, ii, jj, kk, wi, wj, tt)
    want = _kernels_ref.crowd_row_terms(theta, eta, ii, jj, kk, wi, wj, tt)
    d, e, n = theta[ii] - theta[jj], eta[kk], wi + wj
    with np.errstate(divide="ignore", invalid="ignore"):  # rows without a decisive verdict
        weights = _kernels.crowd_weights.py_func(d, e, n)
    for g, w in zip(weights, _kernels_ref.crowd_weights(d, e, n), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-300)
    assert_crowd_terms_equal(got, want)
    assert_crowd_terms_equal(_kernels.crowd_row_terms(theta, eta, ii, jj, kk, wi, wj, tt), want)
    for d in (-30.0, -1.0, 0.0, 2.0, 30.0):
        for e in (0.5, 0.9, 1.0):
            point = _kernels._crowd_point.py_func(d, e)
            assert point == pytest.approx(_kernels._crowd_point(d, e), rel=1e-14, abs=1e-300)
            p = e * expit(d) + (1 - e) * expit(-d)
            pc = e * expit(-d) + (1 - e) * expit(d)  # 1 - p without its rounding
            assert point[0] == pytest.approx(p, rel=1e-12)
            assert point[1] == pytest.approx(pc, rel=1e-12)
            log_p = _kernels._crowd_log.py_func(d, e, point[0])
            assert log_p == pytest.approx(np.log(p), rel=1e-12)
            assert _kernels._crowd_log(-d, e, point[1]) == pytest.approx(np.log(pc), rel=1e-12)
    _, gd, ge, hdd, hde, hee, *_ = want
    assert_close(
        _kernels.crowd_assemble.py_func(m, nj, ii, jj, kk, hdd, hde, hee),
        _kernels_ref.crowd_assemble(m, nj, ii, jj, kk, hdd, hde, hee),
        rtol=1e-13,
    )
    assert_close(
        _kernels.cluster_meat.py_func(m, m + nj, ii, jj, kk, gd, ge, starts),
        _kernels_ref.cluster_meat(m, m + nj, ii, jj, kk, gd, ge, starts),
        rtol=1e-12,
    )
