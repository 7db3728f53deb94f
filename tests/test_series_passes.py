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


def test_series_on_the_compiled_passes_equals_the_twin_and_the_exact_path(log, monkeypatch):
    from ratings.kernels import inference as compiled

    monkeypatch.setattr(engine, "kernels_loaded", lambda: False)  # rows.times: the twin
    exact = ratings.fit(log, anchor="m00")
    monkeypatch.setattr(cluster_module, "EXACT_BUDGET", 0.0)  # the series
    twin = ratings.fit(log, anchor="m00")
    used = []
    real = compiled.cluster_times

    def spy(*args):
        used.append(args[0].size)
        return real(*args)

    monkeypatch.setattr(engine, "AUTO_NUMBA_VERDICTS", 1)  # this small board counts as large
    monkeypatch.setattr(compiled, "cluster_times", spy)
    monkeypatch.setattr(cluster_module, "_kernel_ready", lambda kernel: True)
    fast = ratings.fit(log, anchor="m00")
    assert used, "the series' passes did not take the compiled kernel"
    assert twin.inference.shape == fast.inference.shape == "series"
    np.testing.assert_allclose(fast.cov, twin.cov, rtol=1e-12, atol=1e-16)
    np.testing.assert_allclose(fast.cov, exact.cov, rtol=1e-8, atol=1e-14)


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
