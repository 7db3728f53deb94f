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
    # the kernel's other ways: four rows at a time (2 columns), four columns a pass with one
    # padded (3, 7), each row's values over all columns (many)
    for width in (2, 3, 7, nb.WIDE_COLUMNS + 1):
        cols = rng.normal(size=(n, width))
        quad = np.array([((w[cl == c] @ cols) ** 2).sum(axis=0) for c in range(g)])
        for k in (nb, ref):
            np.testing.assert_allclose(k.style_cluster_quadratic(g, m, a, b, judge, cl, x, wa, wb,
                                                                 cols), quad, atol=1e-10)


def _aggregate(k, cl, judge, a, b, x, w, n_models, n_clusters=9):
    """``style_rows``'s steps with kernels ``k``: sort, find equal rows, sum them."""
    from ratings.data.slots import cluster_order
    from ratings.kernels import fit, fit_ref

    order = cluster_order(fit if k is nb else fit_ref, cl, n_clusters).order
    cols = [cl, judge, a, b, x, *w]
    cols = [c[order] for c in cols] if order.size else cols
    lead = np.full(cols[0].size, -1, dtype=np.int64)
    merged = k.style_merge(*cols[:5], n_models, 3, lead)
    return k.style_compact(*cols, lead) if merged else cols


# 6 models, 9 clusters: equal rows found by key; 1,000 models (past DENSE_KEYS keys), or one
# cluster of more than CHAIN_ROWS rows per key: by hash
@pytest.mark.parametrize(("n_models", "g"), [(6, 9), (1000, 9), (6, 1)])
@pytest.mark.parametrize("coarse", [True, False])  # equal rows to sum, or none (continuous x)
def test_aggregate_kernels_equal_twins_and_sum_equal_rows(coarse, n_models, g):
    keys = n_models**2 * 3
    assert (keys > nb.DENSE_KEYS or 500 / g > nb.CHAIN_ROWS * keys) == (n_models > 6 or g == 1)
    rng, a, b, judge, cl, x, *_ = _rows(r=500, g=g)
    order = rng.permutation(a.size)  # clusters interleaved, as verdicts come
    a, b, judge, cl = a[order], b[order], judge[order], cl[order]
    x = np.round(x[order] / 2) if coarse else x[order]  # rounding leaves -0.0 beside 0.0
    assert not coarse or (np.signbit(x) & (x == 0)).any()
    w = [rng.integers(0, 2, a.size).astype(float) for _ in range(3)]
    got = _aggregate(nb, cl, judge, a, b, x, w, n_models, g)
    want = _aggregate(ref, cl, judge, a, b, x, w, n_models, g)
    for u, v in zip(got, want, strict=True):
        np.testing.assert_array_equal(u, v)
    g_cl, g_j, g_a, g_b, g_x, g_wa, g_wb, g_tt = want
    keys = np.column_stack([g_cl, g_j, g_a, g_b, g_x])
    assert (keys.shape[0] < a.size) == coarse
    assert np.unique(keys, axis=0).shape[0] == keys.shape[0]  # each distinct row once
    first = np.array([np.flatnonzero((np.column_stack([cl, judge, a, b, x]) == k).all(axis=1))[0]
                      for k in keys])  # fmt: skip
    assert np.all(np.diff(g_cl) >= 0)  # by cluster, then by first verdict
    assert all(np.all(np.diff(first[g_cl == c]) > 0) for c in range(g))
    for gi in rng.choice(keys.shape[0], 20, replace=False):  # sums written out
        at = np.flatnonzero((np.column_stack([cl, judge, a, b, x]) == keys[gi]).all(axis=1))
        assert np.allclose([g_wa[gi], g_wb[gi], g_tt[gi]], [v[at].sum() for v in w])
    # verdicts already in cluster order are left where they are
    in_order = _rows(r=500, g=9)[4]
    from ratings.kernels import fit, fit_ref

    out, rank = np.full(in_order.size, -1), np.full(in_order.size, -1)
    for k in (fit, fit_ref):
        assert not k.slot_order(in_order, 9, out, rank)
    assert (out == -1).all() and (rank == -1).all()


@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_style_rows_in_blocks_of_whole_clusters_equal_one_block(engine, monkeypatch):
    """``style_rows`` merges blocks of clusters side by side: the same rows as in one block."""
    import pandas as pd

    from ratings.core import threads
    from ratings.data.slots import SlotCounts
    from ratings.models import covariates as style
    from ratings.models.covariates import design_rows as style_rows

    rng, a, b, judge, cl, x, *_ = _rows(r=600, g=9)
    order = rng.permutation(a.size)
    x = np.round(x[order] / 2)
    w = [rng.integers(0, 2, a.size).astype(float) for _ in range(3)]
    slots = SlotCounts(pd.Index(range(6)), pd.Index(range(3)), pd.Index(range(9)), cl[order],
                       judge[order], a[order], b[order], *w)  # fmt: skip
    one = style_rows(slots, x, engine)
    monkeypatch.setattr(threads, "CONCURRENT_ROWS", 10)
    monkeypatch.setenv("RATINGS_NUM_THREADS", "3")
    monkeypatch.setattr(style, "MERGE_SHARE", 0.0)  # merged whatever a sample shows
    many = style_rows(slots, x, engine)
    want = _aggregate(ref, cl[order], judge[order], a[order], b[order], x, w, 6)
    assert many.n_rows < a.size  # rows were merged, across all blocks
    for got in (one, many):
        for u, v in zip((got.cluster, got.judge, got.ii, got.jj, got.x, got.wi, got.wj, got.tt),
                        want, strict=True):  # fmt: skip
            np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("flat", [False, True])
def test_bt_pass_kernels_equal_twins_and_dense(flat):
    rng, a, b, _, _, x, m, p, *_ = _rows(seed=3, r=403)  # not a multiple of 4 rows
    wa, wb, tt = (rng.integers(0, 3, a.size).astype(float) for _ in range(3))
    params = rng.normal(size=m + p)
    if flat:  # beta = 0, the fit's start
        params[m:] = 0.0
    bufs = [np.full(a.size, np.nan) for _ in range(4)]
    got, want = nb.style_bt_newton(params, m, a, b, x, wa, wb, tt, *bufs[:2]), \
        ref.style_bt_newton(params, m, a, b, x, wa, wb, tt, *bufs[2:])
    for u, v in zip(got, want, strict=True):
        np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-12)
    u = _dense(a, b, None, x, m, p, 0, np.ones(a.size), np.zeros(0))
    d = u @ params
    pa = 1.0 / (1.0 + np.exp(-d))
    ya, yb = wa + tt / 2, wb + tt / 2
    nll = -np.sum(ya * np.log(pa) + yb * np.log1p(-pa))
    np.testing.assert_allclose(want[0], nll, rtol=1e-12)
    np.testing.assert_allclose(want[1], -u.T @ (ya - (ya + yb) * pa), atol=1e-10)
    np.testing.assert_allclose(want[2], u.T @ (((ya + yb) * pa * (1 - pa))[:, None] * u),
                               atol=1e-10)
    got, want = nb.style_bt_rows(params, m, a, b, x, wa, wb, tt), \
        ref.style_bt_rows(params, m, a, b, x, wa, wb, tt)
    for u_, v in zip(got, want, strict=True):
        np.testing.assert_allclose(u_, v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(want[0], ya - (ya + yb) * pa, atol=1e-12)
    np.testing.assert_allclose(want[1], np.sqrt((wa + wb + tt) * pa * (1 - pa)), atol=1e-12)
    for k in (0, 2):  # the Newton pass writes each row's score and information
        np.testing.assert_allclose(bufs[k], want[0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(bufs[k + 1], (wa + wb + tt) * pa * (1 - pa), rtol=1e-12,
                                   atol=1e-12)


@pytest.mark.parametrize("kind", [0, 1, 2, 3])
def test_transform_kernel_equals_twin(kind):
    rng = np.random.default_rng(kind)
    a, b = rng.integers(0, 5, 200), rng.integers(0, 5, 200)
    want, got, got_f = np.empty(200), np.empty(200), np.empty(200)
    total, negative = ref.style_transform(a, b, kind, want)
    np.testing.assert_allclose(total, np.sum(want**2), rtol=1e-12)
    got_total, got_negative = nb.style_transform(a, b, kind, got)
    np.testing.assert_allclose(got_total, total, rtol=1e-12)
    assert negative == got_negative == 0
    b_neg = b.copy()
    b_neg[[3, 7]] = -1  # the verdicts with a negative count are counted
    assert ref.style_transform(a, b_neg, kind, np.empty(200))[1] == 2
    assert nb.style_transform(a, b_neg, kind, np.empty(200))[1] == 2
    nb.style_transform(a.astype(float), b.astype(float), kind, got_f)
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)
    np.testing.assert_allclose(got_f, want, rtol=1e-15, atol=0)
    u, v = a.astype(float), b.astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        written = [np.nan_to_num((u - v) / (u + v)), u - v,
                   np.nan_to_num((u - v) / np.maximum(u, v)), np.log((1 + u) / (1 + v))][kind]
    np.testing.assert_allclose(want, written, rtol=1e-12, atol=1e-15)
    # by verdict, scaled: kernel and twin, and written out
    xt, scale = np.vstack([want, 2.0 * want]), np.array([2.0, 3.0])
    outs = [np.empty((200, 2)), np.empty((200, 2))]
    rows = np.column_stack([want / 2.0, 2.0 * want / 3.0])
    none = np.zeros(0, dtype=np.int64)
    nb.style_interleave(xt, scale, none, outs[0])
    ref.style_interleave(xt, scale, none, outs[1])
    for out in outs:
        np.testing.assert_allclose(out, rows, rtol=1e-15)
    rank = rng.permutation(200)  # row r written to place rank[r]
    nb.style_interleave(xt, scale, rank, outs[0])
    ref.style_interleave(xt, scale, rank, outs[1])
    for out in outs:
        np.testing.assert_allclose(out[rank], rows, rtol=1e-15)


def test_style_rows_merged_or_not_give_the_same_fit(monkeypatch):
    """Merging equal rows only saves passes: the fit and its CR2 intervals are the same."""
    import pandas as pd

    from ratings.core import threads
    from ratings.data.slots import SlotCounts
    from ratings.models import covariates as style
    from ratings.models.covariates import design_rows as style_rows
    from ratings.models.covariates import fit_design as fit_style

    rng, a, b, judge, cl, x, m, *_ = _rows(r=3000, g=40)
    x = np.round(x)  # equal rows to merge
    order = rng.permutation(a.size)
    wa = rng.integers(0, 2, a.size).astype(float)
    slots = SlotCounts(pd.Index(range(m)), pd.Index(range(3)), pd.Index(range(40)), cl[order],
                       judge[order], a[order], b[order], wa, 1.0 - wa, np.zeros(a.size))
    monkeypatch.setattr(threads, "CONCURRENT_ROWS", 10)  # the long-log path: a sample first
    fits = []
    for share in (0.0, 2.0):  # always merged, never merged
        monkeypatch.setattr(style, "MERGE_SHARE", share)
        rows = style_rows(slots, x[order], "numba")
        fits.append(fit_style(rows, np.zeros(m)))
        assert (rows.n_rows < a.size) == (share == 0.0)
    np.testing.assert_allclose(fits[0].params, fits[1].params, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fits[0].cov, fits[1].cov, rtol=1e-8, atol=1e-12)


def test_slot_counts_by_cluster_are_the_inputs_in_cluster_order():
    """``slot_counts(by_cluster=True)`` takes each column's codes in cluster order: the input
    rows' slot codes, outcomes and forfeits, moved."""
    import pandas as pd

    from ratings.api.loading import load_log
    from ratings.core.errors import DataWarning
    from ratings.data.slots import slot_counts

    rng = np.random.default_rng(5)
    n = 300
    a = rng.integers(0, 5, n)
    b = (a + rng.integers(1, 5, n)) % 5
    df = pd.DataFrame({"model_a": [f"m{i}" for i in a], "model_b": [f"m{i}" for i in b],
                       "winner": rng.choice(["A", "B", "tie"], n),
                       "judge": rng.choice(["j1", "j2"], n), "task_id": rng.integers(0, 12, n),
                       "failed_a": rng.random(n) < 0.1, "failed_b": rng.random(n) < 0.1})
    with pytest.warns(DataWarning, match="failure flags contradict"):
        loaded = load_log(df)
    plain = slot_counts(loaded.frame, loaded.data)
    by = slot_counts(loaded.frame, loaded.data, by_cluster=True)
    order = np.argsort(plain.cluster, kind="stable")
    assert plain.order is None and not np.array_equal(order, np.arange(n))
    for moved in (by, plain.by_cluster()):
        np.testing.assert_array_equal(moved.order, order)
        for name in ("cluster", "judge", "a", "b", "wa", "wb", "tt"):
            np.testing.assert_array_equal(getattr(moved, name), getattr(plain, name)[order])
