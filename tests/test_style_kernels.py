"""The style kernels (numba) equal their NumPy twins, and the twins equal dense products
written out here (design matrix built row by row)."""

from __future__ import annotations

import numpy as np
import pytest

from ratings.kernels import style_ref as ref

nb = pytest.importorskip("ratings.kernels.style")


def _rows(seed=1, r=400, m=6, p=3, nj=3, g=7):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, m, r)
    b = (a + 1 + rng.integers(0, m - 1, r)) % m
    judge, cl = rng.integers(0, nj, r), np.sort(rng.integers(0, g, r))
    x = rng.normal(size=(r, p))
    x[:5] = 0.0
    return rng, a, b, judge, cl, x, m, p, nj, g


def _dense(a, b, judge, x, m, p, nj, wa, wb):
    """Working design rows w_r = wa_r u_r + wb_r e_judge as a dense matrix."""
    r = a.size
    n = m + p + (nj if wb.size else 0)
    w = np.zeros((r, n))
    w[np.arange(r), a] += wa
    w[np.arange(r), b] -= wa
    w[:, m:m + p] = wa[:, None] * x
    if wb.size:
        w[np.arange(r), m + p + judge] += wb
    return w


@pytest.mark.parametrize("crowd", [False, True])
def test_kernels_equal_twins_and_dense(crowd):
    rng, a, b, judge, cl, x, m, p, nj, g = _rows()
    r = a.size
    n = m + p + (nj if crowd else 0)
    w0, w1, w2, wa = (rng.random(r) for _ in range(4))
    wb = rng.random(r) if crowd else np.zeros(0)
    e1, e2 = (w1, w2) if crowd else (np.zeros(0), np.zeros(0))
    v, cols = rng.normal(size=(g, n)), rng.normal(size=(n, 4))
    calls = {
        "style_gradient": (m, nj, a, b, judge, x, w0, e1),
        "style_assemble": (m, nj, a, b, judge, x, w0, e1, e2),
        "style_cluster_scores": (g, n, m, a, b, judge, cl, x, w0, e1),
        "style_cluster_times": (m, a, b, judge, cl, x, wa, wb, v),
        "style_cluster_quadratic": (g, m, a, b, judge, cl, x, wa, wb, cols),
    }
    for name, args in calls.items():
        np.testing.assert_allclose(getattr(nb, name)(*args), getattr(ref, name)(*args),
                                   rtol=1e-12, atol=1e-12, err_msg=name)
    u = np.zeros((r, n))
    u[:, :m + p] = _dense(a, b, judge, x, m, p, nj, np.ones(r), np.zeros(0))
    eta = np.zeros((r, n))
    if crowd:
        eta[np.arange(r), m + p + judge] = 1.0
    grad = u.T @ w0 + (eta.T @ w1 if crowd else 0.0)
    np.testing.assert_allclose(ref.style_gradient(*calls["style_gradient"]), grad, atol=1e-10)
    hess = u.T @ (w0[:, None] * u)
    if crowd:
        cross = u.T @ (w1[:, None] * eta)
        hess = hess + cross + cross.T + eta.T @ (w2[:, None] * eta)
    np.testing.assert_allclose(ref.style_assemble(*calls["style_assemble"]), hess, atol=1e-10)
    w = _dense(a, b, judge, x, m, p, nj, wa, wb)
    times = np.array([w[cl == c].T @ (w[cl == c] @ v[c]) for c in range(g)])
    np.testing.assert_allclose(ref.style_cluster_times(*calls["style_cluster_times"]), times,
                               atol=1e-10)
    quad = np.array([((w[cl == c] @ cols) ** 2).sum(axis=0) for c in range(g)])
    np.testing.assert_allclose(ref.style_cluster_quadratic(*calls["style_cluster_quadratic"]),
                               quad, atol=1e-10)


def test_row_keys_group_equal_rows_only():
    _, a, b, judge, cl, x, *_ = _rows(r=300)
    x = np.round(x, 1) + 0.0
    keys = [k.style_row_keys(cl, judge, a, b, x, 50) for k in (nb, ref)]
    np.testing.assert_array_equal(keys[0], keys[1])
    rows = np.column_stack([cl, judge, a, b, x])
    _, by_row = np.unique(rows, axis=0, return_inverse=True)
    _, by_key = np.unique(keys[0], return_inverse=True)
    # the same partition of the verdicts, and the cluster in the high bits orders the keys
    assert np.unique(np.column_stack([by_row.ravel(), by_key.ravel()]), axis=0).shape[0] == \
        by_row.max() + 1 == by_key.max() + 1
    assert np.all(np.diff(cl[np.argsort(keys[0])]) >= 0)


def test_groups_kernel_equals_twin():
    _, a, b, judge, cl, x, *_ = _rows(r=500, g=9)
    x = np.round(x, 1) + 0.0
    key = ref.style_row_keys(cl, judge, a, b, x, 50)
    got, want = nb.style_groups(key, cl, 9), ref.style_groups(key, cl, 9)
    for u, v in zip(got, want, strict=True):
        np.testing.assert_array_equal(u, v)
    inv, reps = want
    np.testing.assert_array_equal(key[reps][inv], key)  # every verdict in its key's group
    assert np.all(np.diff(cl[reps]) >= 0)  # groups in cluster order
    assert reps.size == np.unique(key).size
