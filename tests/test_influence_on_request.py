"""CR2's per-cluster influences are computed when first read, not by the fit or its table.

An arena's influences are a 50,000 x 200 matrix that neither the intervals nor their degrees of
freedom need; :attr:`ratings.Ratings.influence` still gives them. Checked against the dense CR2
path's influences (eigen-decompositions of every cluster, itself checked against R clubSandwich
in ``test_inference.py``), against the covariance (whose CR2 sandwich is their cross-product)
and against the re-anchoring written out as a matrix.
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from test_coverage import MODELS, STRENGTH

import ratings
import ratings.inference.small as small_module
from ratings.datasets.simulate import simulate_verdicts
from ratings.inference.builder import OnRequest
from ratings.scopes.combine import combine


def _arena(seed: int = 3, n: int = 900, m: int = 8) -> pd.DataFrame:
    """One verdict per task (the sparse path), a few tasks of several verdicts."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    task = np.where(rng.random(n) < 0.2, rng.integers(0, 20, n), np.arange(n) + 100)
    matches = pd.DataFrame({"model_a": np.array(MODELS)[a], "model_b": np.array(MODELS)[b],
                            "task_id": task})  # fmt: skip
    return simulate_verdicts(matches, STRENGTH, tie_rate=0.1, seed=seed + 1)


@pytest.fixture(scope="module")
def log() -> pd.DataFrame:
    return _arena()


def test_the_fit_and_its_table_leave_the_influences_uncomputed(log):
    r = ratings.fit(log)
    r.to_frame()
    r.pairwise()
    assert isinstance(r.uncertainty.held_influence(), OnRequest)
    infl = r.influence  # computed now, then kept
    assert r.uncertainty.held_influence() is infl and r.influence is infl
    assert infl.shape == (r.n_clusters, len(r.models)) and not infl.flags.writeable
    # CR2's covariance (from the clusters' meat, not from these) is their cross-product
    np.testing.assert_allclose(infl.T @ infl, r.cov, rtol=1e-9, atol=1e-12 * r.cov.max())


def test_computed_influences_equal_the_dense_paths(log, monkeypatch):
    sparse = ratings.fit(log, anchor=MODELS[2])
    with monkeypatch.context() as mp:
        mp.setattr(small_module, "use_small_path", lambda *a: False)
        dense = ratings.fit(log, anchor=MODELS[2])
    np.testing.assert_allclose(sparse.influence, dense.influence, rtol=1e-9,
                               atol=1e-12 * np.abs(dense.influence).max())  # fmt: skip


@pytest.mark.parametrize("anchor", [None, MODELS[4]])
def test_reanchoring_shifts_the_influences_when_read(log, anchor):
    r = ratings.fit(log, anchor=MODELS[1])
    moved = r.reanchor(anchor, 1500.0)
    assert isinstance(moved.uncertainty.held_influence(), OnRequest)
    m = len(r.models)
    a = np.eye(m) - (np.ones((m, m)) / m if anchor is None
                     else np.outer(np.ones(m), np.eye(m)[MODELS.index(anchor)]))  # fmt: skip
    want = r.influence @ a.T
    np.testing.assert_allclose(moved.influence, want, rtol=1e-10,
                               atol=1e-13 * np.abs(want).max())  # fmt: skip
    np.testing.assert_allclose(moved.influence.T @ moved.influence, moved.cov, rtol=1e-9,
                               atol=1e-12 * moved.cov.max())  # fmt: skip


def test_an_unread_influence_survives_pickling_and_combining(log):
    r = ratings.fit(log)
    back = pickle.loads(pickle.dumps(r))
    assert isinstance(back.uncertainty.held_influence(), OnRequest)
    np.testing.assert_array_equal(back.influence, r.influence)
    # a headline of one scope stacks its influences: the scope's own covariance
    one = ratings.fit(log)
    head = combine({"only": one})
    np.testing.assert_allclose(head.cov, one.cov, rtol=1e-9, atol=1e-12 * one.cov.max())


def test_past_the_memory_limit_the_influences_read_as_none(log, monkeypatch):
    import ratings.core.memory as memory

    monkeypatch.setattr(memory, "MAX_INFLUENCE_CELLS", 10)
    r = ratings.fit(log)
    assert r.influence is None and np.isfinite(r.se.drop(r.models[0])).all()
