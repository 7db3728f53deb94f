"""The sparse CR2 path (many small clusters) against the dense one, which stays the reference.

The dense path's covariance and degrees of freedom are checked against R clubSandwich and
statsmodels in ``test_inference.py``; here the sparse path must give the same numbers (1e-10)
on the coverage study's boards, on boards of one verdict per task, and on a mixed board (a few
large tasks among many singletons).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_coverage import MODELS, STRENGTH, board

import ratings
import ratings.inference.cluster as cluster_module
import ratings.inference.small as small_module
from ratings.datasets.simulate import simulate_verdicts
from ratings.kernels import inference as kernels
from ratings.kernels import inference_ref as twins


def _fit(log: pd.DataFrame, small: bool, monkeypatch, **kw):
    with monkeypatch.context() as mp:
        mp.setattr(small_module, "use_small_path", lambda *a: small)
        r = ratings.fit(log, **kw)
        return r, r.model_df, r.pair_df()


def _assert_same(log, monkeypatch, **kw):
    dense, df_d, pairs_d = _fit(log, False, monkeypatch, **kw)
    sparse, df_s, pairs_s = _fit(log, True, monkeypatch, **kw)
    assert dense.inference.shape in ("exact", "series") and sparse.inference.shape == "sparse"
    np.testing.assert_allclose(sparse.cov, dense.cov, rtol=1e-10, atol=1e-12 * dense.cov.max())
    np.testing.assert_allclose(sparse.se, dense.se, rtol=1e-10)
    np.testing.assert_allclose(df_s, df_d, rtol=1e-10)
    np.testing.assert_allclose(pairs_s, pairs_d, rtol=1e-10)
    return dense, sparse


def _singletons(seed: int, n: int = 600, m: int = 8) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    matches = pd.DataFrame({"model_a": np.array(MODELS)[a], "model_b": np.array(MODELS)[b],
                            "task_id": np.arange(n)})  # fmt: skip
    return simulate_verdicts(matches, STRENGTH, tie_rate=0.1, seed=seed + 1)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("task_corr", [0.0, 0.5])
def test_coverage_study_boards_match_the_dense_path(seed, task_corr, monkeypatch):
    _assert_same(board(seed, task_corr), monkeypatch, anchor=MODELS[5])


@pytest.mark.parametrize("seed", [4, 5])
def test_one_verdict_tasks_match_the_dense_path(seed, monkeypatch):
    log = _singletons(seed)
    _, sparse = _assert_same(log, monkeypatch)
    assert sparse.inference.exact and np.isfinite(sparse.model_df).all()


def test_mixed_board_matches_and_takes_the_sparse_path(monkeypatch):
    """Three tasks of 60 verdicts among 500 one-verdict tasks."""
    log = _singletons(6, n=680)
    log["task_id"] = np.where(np.arange(len(log)) < 180, np.arange(len(log)) % 3,
                              np.arange(len(log))).astype(str)  # fmt: skip
    _assert_same(log, monkeypatch)
    r = ratings.fit(log)
    assert r.inference.shape == "sparse"


def test_a_model_seen_once_is_left_open(monkeypatch):
    log = _singletons(7)
    new = pd.DataFrame({"model_a": ["new", MODELS[1]], "model_b": [MODELS[0], "new"],
                        "winner": ["A", "A"], "task_id": [10_000, 10_000]})  # one task
    log = pd.concat([log, new], ignore_index=True)
    _, sparse = _assert_same(log, monkeypatch)
    assert np.isinf(sparse.se["new"])
    assert np.isnan(sparse.model_df[list(sparse.models).index("new")])


def test_approximate_df_past_the_budget_equal_the_dense_large_path(monkeypatch):
    log = _singletons(8)
    monkeypatch.setattr(cluster_module, "EXACT_BUDGET", 0.0)
    dense, sparse = _assert_same(log, monkeypatch)
    assert not sparse.inference.exact and not dense.inference.exact


def test_paths_chosen_by_cluster_sizes():
    assert small_module.use_small_path(np.ones(300_000, dtype=np.int64), 299)
    assert not small_module.use_small_path(np.full(20, 500, dtype=np.int64), 9)


@pytest.mark.parametrize("with_eta", [False, True])
def test_small_kernels_match_their_numpy_twins(with_eta):
    rng = np.random.default_rng(0)
    m, nj = 6, 3
    sizes = rng.integers(1, 5, size=40)
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    n = int(starts[-1])
    ii = rng.integers(0, m, n)
    jj = (ii + rng.integers(1, m, n)) % m
    kk = rng.integers(0, nj, n)
    a = rng.uniform(0.1, 0.5, n)
    b = rng.uniform(-0.2, 0.2, n) if with_eta else np.zeros(0)
    p = m + nj if with_eta else m
    x = rng.normal(size=(p, p))
    bread = np.linalg.inv(x @ x.T + 50 * np.eye(p))
    got = kernels.small_blocks(starts, ii, jj, kk, a, b, m, bread, 1e-8)
    want = twins.small_blocks(starts, ii, jj, kk, a, b, m, bread, 1e-8)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
    e = rng.normal(size=n)
    v = rng.normal(size=(p, 5))
    tr = rng.uniform(1.0, 2.0, 5)
    weight = rng.integers(1, 4, size=40).astype(np.float64)
    for name, args in (("small_meat", (starts, ii, jj, kk, a, b, m, p, e)),
                       ("small_shares", (starts, ii, jj, kk, a, b, m, v, tr, 1e-8, weight)),
                       # a block of clusters, as the df pass splits them across threads
                       ("small_shares", (starts[10:31], ii, jj, kk, a, b, m, v, tr, 1e-8,
                                         weight[10:30]))):  # fmt: skip
        np.testing.assert_allclose(getattr(kernels, name)(*args), getattr(twins, name)(*args),
                                   rtol=1e-12, atol=1e-13)  # fmt: skip


def _judged(seed: int, n: int = 900, m: int = 8, sizes=(1,)) -> pd.DataFrame:
    """One-verdict (or small) tasks judged by three judges of different quality."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    task = np.repeat(np.arange(n), rng.choice(sizes, n))[:n]
    matches = pd.DataFrame({"model_a": np.array(MODELS)[a], "model_b": np.array(MODELS)[b],
                            "task_id": task,
                            "judge": rng.choice(["j1", "j2", "j3"], n)})  # fmt: skip
    return simulate_verdicts(matches, STRENGTH, tie_rate=0.1, seed=seed + 1,
                             judge_eta={"j1": 0.95, "j2": 0.8, "j3": 0.65})  # fmt: skip


@pytest.mark.parametrize(("seed", "sizes"), [(6, (1,)), (7, (1, 2, 3))])
def test_crowd_bt_takes_the_sparse_path_with_the_same_numbers(seed, sizes, monkeypatch):
    """Crowd-BT (ratings and judge qualities estimated) on small tasks: the sparse path gives
    the dense path's covariance, SEs and df, the judges' rows included."""
    dense, sparse = _assert_same(_judged(seed, sizes=sizes), monkeypatch, model="crowd-bt")
    np.testing.assert_allclose(sparse.inference.covariance(), dense.inference.covariance(),
                               rtol=1e-9, atol=1e-12)  # fmt: skip
    eta = np.zeros((3, dense.inference.n_params))
    eta[np.arange(3), dense.inference.n_models + np.arange(3)] = 1.0
    np.testing.assert_allclose(sparse.inference.df(eta), dense.inference.df(eta), rtol=1e-9)


def test_contrasted_influence_equals_the_dense_paths(monkeypatch):
    """Each cluster's influence on a contrast (combined scopes with reused judge qualities need
    it) from the sparse rows equals the dense path's influence matrix times the contrast."""
    log = _judged(8, sizes=(1, 2))
    dense, _, _ = _fit(log, False, monkeypatch, model="crowd-bt")
    sparse, _, _ = _fit(log, True, monkeypatch, model="crowd-bt")
    c = np.random.default_rng(0).normal(size=(4, dense.inference.n_params))
    want = dense.inference.influence() @ c.T
    np.testing.assert_allclose(sparse.inference.contrasted_influence(c), want, rtol=1e-9,
                               atol=1e-12 * np.abs(want).max())  # fmt: skip


@pytest.mark.filterwarnings("ignore::ratings.core.errors.JudgeWarning")
@pytest.mark.parametrize("seed", [9, 10])
def test_one_judge_crowd_bt_widening_on_the_sparse_path(seed, monkeypatch):
    """One judge (its eta from the prior's posterior mode, intervals widened by the one-judge
    profile): the sparse path widens as the dense path does."""
    log = _judged(seed, n=400, sizes=(1, 2)).assign(judge="j1")
    _assert_same(log, monkeypatch, model="crowd-bt")


@pytest.mark.parametrize("one_weight_a_pair", [True, False])
@pytest.mark.parametrize("with_eta", [False, True])
def test_clusters_merged_by_design_give_the_clusters_sums(one_weight_a_pair, with_eta):
    """One-row clusters of one design merge into a weighted group (counted in a table when each
    pair has one weight, else sorted); any sum over clusters of a function of their rows is the
    groups' weighted sum, and each cluster's group has its rows."""
    from ratings.inference.working import WorkingRows

    rng = np.random.default_rng(3)
    m, nj, g = 5, 2, 300
    sizes = rng.choice([1, 1, 1, 2, 3], size=g)
    n = int(sizes.sum())
    ii = rng.integers(0, m - 1, n)
    jj = ii + rng.integers(1, m - ii, n)
    kk = rng.integers(0, nj, n)
    pair_weight = rng.uniform(0.2, 0.5, (m, m))
    a = pair_weight[ii, jj] * (1.0 if one_weight_a_pair else rng.choice([1.0, 2.0], n))
    b = rng.choice([-0.3, 0.1], n) if with_eta else np.zeros(0)
    rows = WorkingRows(ii=ii, jj=jj, judge=kk if with_eta else np.zeros(n, dtype=np.int64),
                       cluster=np.repeat(np.arange(g), sizes), a=a, b=b, n_clusters=g,
                       n_params=m + (nj if with_eta else 0), n_models=m)  # fmt: skip
    groups, weight, group_of = rows.merged
    assert groups.n_clusters < g and weight.sum() == g
    v = rng.normal(size=(rows.n_params, 4))
    per_cluster, per_group = rows.quadratic(v), groups.quadratic(v)
    np.testing.assert_allclose(per_group[group_of], per_cluster, rtol=1e-13)
    bent = per_cluster**2 / (1.0 + per_cluster)  # a function no linear merge would keep
    np.testing.assert_allclose(weight @ (per_group**2 / (1.0 + per_group)), bent.sum(axis=0),
                               rtol=1e-12)  # fmt: skip


def test_pairs_past_the_budget_count_each_designs_clusters(monkeypatch):
    """The ratings' df exact, every pair's past the budget (the one-direction df from each
    pair's exact omega): on the sparse path each merged design stands for its clusters, so the
    pairs' df equal the dense path's over the clusters themselves."""
    log = _singletons(4)
    monkeypatch.setattr(cluster_module, "EXACT_BUDGET", 3e5)
    monkeypatch.setattr(cluster_module, "BATCHED_RATIO", 0.5)
    dense, sparse = _assert_same(log, monkeypatch)
    m = len(dense.models)
    for r in (dense, sparse):
        assert r.inference.exact
        assert r.inference.df_plan(m * (m - 1) // 2, pairs=True)[0] == "one-direction"
    assert sparse.inference.designs.rows.n_clusters < sparse.inference.n_clusters
