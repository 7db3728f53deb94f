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
