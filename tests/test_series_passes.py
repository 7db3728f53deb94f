"""The CR2 series' passes over the rows on the compiled ``cluster_times`` (taken where the
inference kernels are loaded and the kernel is ready) against the NumPy twin's passes and
the exact per-cluster decomposition."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import simulate_verdicts

import ratings
import ratings.inference.cluster as cluster_module
import ratings.kernels.engine as engine


@pytest.fixture(scope="module")
def log():
    rng = np.random.default_rng(11)
    return simulate_verdicts(rng, [0.0, 0.5, -0.3, 0.9, -0.7, 0.2, 0.4], 900, 30,
                             tie_fraction=0.1, task_sd=0.4)  # fmt: skip


@pytest.mark.parametrize("kernel", ["cluster_times", "bt_cluster_scores", "model_clusters",
                                    "series_term"])
def test_series_on_the_compiled_kernels_equals_the_twins_and_the_exact_path(log, monkeypatch,
                                                                            kernel):  # fmt: skip
    """The series' passes, the rows' weights and scores, the models' cluster spans, its
    terms summed."""
    from ratings.kernels import inference as compiled

    monkeypatch.setattr(engine, "kernels_loaded", lambda: False)  # rows.times: the twin
    exact = ratings.fit(log, anchor="m00")
    monkeypatch.setattr(cluster_module, "EXACT_BUDGET", 0.0)  # the series
    twin = ratings.fit(log, anchor="m00")
    used = []
    real = getattr(compiled, kernel)

    def spy(*args):
        used.append(len(args))
        return real(*args)

    monkeypatch.setattr(engine, "AUTO_NUMBA_VERDICTS", 1)  # this small board counts as large
    monkeypatch.setattr(compiled, kernel, spy)
    monkeypatch.setattr(cluster_module, "_kernel_ready", lambda kernel: True)
    fast = ratings.fit(log, anchor="m00")
    assert used, f"the compiled {kernel} did not run"
    assert twin.inference.shape == fast.inference.shape == "series"
    np.testing.assert_allclose(fast.cov, twin.cov, rtol=1e-12, atol=1e-16)
    np.testing.assert_allclose(fast.cov, exact.cov, rtol=1e-8, atol=1e-14)
    np.testing.assert_allclose(fast.model_df, twin.model_df, rtol=1e-12)
    np.testing.assert_allclose(fast.pair_df(), twin.pair_df(), rtol=1e-12)


def test_the_twin_runs_where_the_kernel_would_compile(log, monkeypatch):
    from ratings.kernels import inference as compiled

    monkeypatch.setattr(engine, "kernels_loaded", lambda: False)  # rows.times: the twin
    monkeypatch.setattr(cluster_module, "EXACT_BUDGET", 0.0)
    monkeypatch.setattr(engine, "AUTO_NUMBA_VERDICTS", 1)
    monkeypatch.setattr(cluster_module, "_kernel_ready", lambda kernel: False)

    def refuse(*args):
        raise AssertionError("a kernel that is not ready must not run")

    monkeypatch.setattr(compiled, "cluster_times", refuse)
    r = ratings.fit(log, anchor="m00")
    assert r.inference.shape == "series" and np.isfinite(r.se.iloc[1:]).all()


@pytest.mark.parametrize("threads", [2, 3])
def test_compiled_passes_over_ranges_of_clusters_equal_the_twin(log, monkeypatch, threads):
    """The compiled pass in ranges of clusters side by side (each range's clusters renumbered
    from its first): the twin's H_g v_g, and no new compiled signature."""
    from ratings.core import threads as _threads
    from ratings.inference.working import bt_rows
    from ratings.kernels import inference as compiled
    from ratings.kernels import inference_ref as twin

    r = ratings.fit(log, anchor="m00")
    data = r.source.data
    rows = bt_rows(np.asarray(r.strength), data)
    assert rows.n_clusters == 30
    monkeypatch.setattr(cluster_module, "CONCURRENT_ROWS", 1)
    monkeypatch.setattr(cluster_module, "workers", lambda: threads)
    monkeypatch.setattr(_threads, "workers", lambda: threads)
    monkeypatch.setattr(engine, "AUTO_NUMBA_VERDICTS", 1)
    monkeypatch.setattr(cluster_module, "_kernel_ready", lambda kernel: True)
    parts = cluster_module._cluster_parts(rows)
    assert len(parts) == threads and parts[0][0] == 0 and parts[-1][1] == rows.n_clusters
    v = np.random.default_rng(threads).normal(size=(rows.n_clusters, rows.n_params))
    want = twin.cluster_times(rows.ii, rows.jj, rows.judge, rows.cluster, rows.a, rows.b,
                              rows.n_models, v)  # fmt: skip
    signatures = len(compiled.cluster_times.signatures)
    got = cluster_module._cluster_times(rows)(v)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13 * np.abs(want).max())
    assert len(compiled.cluster_times.signatures) == max(signatures, 1)


def _written_out(rng, m=6, g=5, r=40):
    """Working rows sorted by cluster (one cluster without rows) and their design vectors
    x_r = a_r (e_ii - e_jj), written out."""
    from ratings.inference.working import WorkingRows

    cluster = np.sort(rng.choice([0, 1, 3, 4], size=r))  # cluster 2 has no rows
    ii = rng.integers(0, m - 1, r)
    jj = ii + rng.integers(1, m - ii)
    a = rng.uniform(0.2, 2.0, r)
    rows = WorkingRows(ii=ii, jj=jj, judge=np.zeros(r, dtype=np.int64), cluster=cluster, a=a,
                       b=np.zeros(0), n_clusters=g, n_params=m, n_models=m)  # fmt: skip
    x = np.zeros((r, m))
    x[np.arange(r), ii] = a
    x[np.arange(r), jj] = -a
    return rows, x


def test_twin_passes_at_the_rows_cells_equal_the_written_out_sums(monkeypatch):
    from ratings.inference.small import summed_scores

    monkeypatch.setattr(engine, "kernels_loaded", lambda: False)  # the twins
    rng = np.random.default_rng(5)
    rows, x = _written_out(rng)
    g, m = rows.n_clusters, rows.n_params
    starts = [int(np.sum(rows.cluster < c)) for c in range(g + 1)]
    np.testing.assert_array_equal(rows.starts, starts)
    v = rng.normal(size=(g, m))
    want = np.array([x[rows.cluster == c].T @ (x[rows.cluster == c] @ v[c]) for c in range(g)])
    np.testing.assert_allclose(rows.times(v), want, rtol=1e-12, atol=1e-12)
    e = rng.normal(size=x.shape[0])  # each row's score on d
    want = np.array([e[rows.cluster == c] @ (x[rows.cluster == c] / rows.a[rows.cluster == c,
                                                                             None])
                     for c in range(g)])  # fmt: skip
    np.testing.assert_allclose(summed_scores(rows, e), want, rtol=1e-12, atol=1e-12)


def test_fused_rows_pass_matches_the_twin_and_the_written_out_rows():
    from scipy.special import expit

    from ratings.kernels import inference as fast
    from ratings.kernels import inference_ref as slow

    rng = np.random.default_rng(3)
    m, g, r = 6, 4, 50
    theta = rng.normal(size=m)
    theta[5] = 800.0  # p q underflows to 0 on model 5's rows: they add nothing
    cluster = np.sort(rng.integers(0, g, r))
    ii = rng.integers(0, m - 1, r)
    jj = ii + rng.integers(1, m - ii)
    wi, wj, tt = (rng.integers(0, 3, r).astype(float) for _ in range(3))
    wi[0] = wj[0] = tt[0] = 0.0  # a row without verdicts
    a, w = fast.bt_cluster_scores(theta, ii, jj, wi, wj, tt, cluster, g)
    a2, w2 = slow.bt_cluster_scores(theta, ii, jj, wi, wj, tt, cluster, g)
    np.testing.assert_allclose(a, a2, rtol=1e-14, atol=0)
    np.testing.assert_allclose(w, w2, rtol=1e-12, atol=1e-13)
    # written out: a_r = sqrt(n p q) and each cluster's summed score, row by row
    p = expit(theta[ii] - theta[jj])
    n = wi + wj + tt
    np.testing.assert_allclose(a, np.sqrt(n * p * (1.0 - p)), rtol=1e-12, atol=1e-300)
    want = np.zeros((g, m))
    for k in range(r):
        if a[k] > 0:
            s = wi[k] + tt[k] / 2 - n[k] * p[k]
            want[cluster[k], ii[k]] += s
            want[cluster[k], jj[k]] -= s
    np.testing.assert_allclose(w, want, rtol=1e-12, atol=1e-12)
    # and the table of pairs the twin gathers from when the rows outnumber the pairs
    many = np.repeat(np.arange(r), 2)
    got = slow.bt_cluster_scores(theta, ii[many], jj[many], wi[many], wj[many], tt[many],
                                 cluster[many], g)  # fmt: skip
    np.testing.assert_allclose(got[1], 2 * want, rtol=1e-12, atol=1e-12)


def test_kernel_arguments_take_the_one_compiled_signature():
    """Whatever the arrays' types and flags, the compiled kernels see read-only, C-contiguous
    int64 and float64 arrays (the signature warm-up compiles); the arrays themselves are
    untouched."""
    codes = np.arange(6, dtype=np.int32)[::2]  # narrow and strided
    weights = np.ones(3, dtype=np.float32)
    got = cluster_module.readonly(codes, weights, np.arange(3))
    assert [(a.dtype, a.flags.writeable, a.flags.c_contiguous) for a in got] == [
        (np.dtype(np.int64), False, True), (np.dtype(np.float64), False, True),
        (np.dtype(np.int64), False, True)]
    np.testing.assert_array_equal(got[0], [0, 2, 4])
    assert codes.flags.writeable and weights.dtype == np.float32


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("in_place", [False, True])
def test_series_term_scales_sums_and_measures_as_a_loop(dtype, in_place):
    """A series term (a product in single or double precision, scaled into the last step's
    memory or in place): compiled and twin give the loop's step, total and row norms."""
    from ratings.kernels import inference as compiled
    from ratings.kernels import inference_ref as twin

    rng = np.random.default_rng(3)
    p0, total0 = rng.normal(size=(4, 7)).astype(dtype), rng.normal(size=(4, 7))
    ratio = 5.0 / 6.0
    want_step = [[float(x) * ratio for x in row] for row in p0.tolist()]
    want_total = [[t + s for t, s in zip(tr, sr, strict=True)]
                  for tr, sr in zip(total0.tolist(), want_step, strict=True)]  # fmt: skip
    want_size = [sum(s * s for s in row) ** 0.5 for row in want_step]
    for k in (compiled, twin):
        p, total = p0.copy(), total0.copy()
        step = p if in_place and dtype == np.float64 else np.full(p.shape, np.nan)
        size = k.series_term(p, ratio, total, step)
        np.testing.assert_array_equal(step, want_step)  # the same products and sums, exactly
        np.testing.assert_array_equal(total, want_total)
        np.testing.assert_allclose(size, want_size, rtol=1e-14)
