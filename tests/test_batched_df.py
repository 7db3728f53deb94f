"""The batched exact Satterthwaite df (``ratings.inference.batched``) against R's clubSandwich and
the textbook formulas.

``tests/data/baseline_board.csv`` has five models each against one baseline once on each of 24
prompts (24 clusters of one design, merged into one) and 16 tasks of a few random pairs; R's
clubSandwich (``baseline_board_clubsandwich.R``, values in ``baseline_board_clubsandwich.csv``)
gives the CR2 standard errors and Satterthwaite df of every model against the baseline and of
every pair, from the logistic GLM. The dense verdict-level reference of ``test_inference.py``
(Bell & McCaffrey's adjustment, Pustejovsky & Tipton's df, written out with N x N matrices)
checks the same on simulated boards, for each path the cost model can choose.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_inference import _contrast, bt_reference

import ratings
import ratings.inference.cluster as cluster_module
import ratings.inference.small as small_module
from ratings.core.schema import ELO_SCALE

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def baseline():
    log = pd.read_csv(DATA / "baseline_board.csv")
    want = pd.read_csv(DATA / "baseline_board_clubsandwich.csv")
    return log, want


def _fit(log, monkeypatch, path: str):
    """A fit anchored at m0 on the sparse path, its df by ``path`` ("exact")."""
    with monkeypatch.context() as mp:
        mp.setattr(small_module, "use_small_path", lambda *a: True)
        r = ratings.fit(log, anchor="m0")
        m = len(r.models)
        assert r.inference.df_plan(m * (m - 1) // 2)[0] == path
        return r, r.model_df, r.pair_df()


@pytest.mark.parametrize("path", ["exact"])
def test_baseline_board_matches_clubsandwich(baseline, monkeypatch, path):
    log, want = baseline
    r, df, pairs = _fit(log, monkeypatch, path)
    d = r.inference.designs
    assert d.rows.n_clusters < r.inference.n_clusters  # the baseline's prompts merged
    models = list(r.models)
    vs = want[want["b"] == "m0"].set_index("a")
    # clubSandwich's CR2 standard errors of a glm sit within 1e-3 of the textbook formula's
    # (which ours equal to 1e-10, test_inference.py); its df agree to a few 1e-6
    np.testing.assert_allclose(r.se.drop("m0") / ELO_SCALE, vs["se"].loc[r.se.drop("m0").index],
                               rtol=1e-3)  # fmt: skip
    np.testing.assert_allclose(df[1:], vs["df"].loc[models[1:]], rtol=2e-5)
    for a, b, dfs in want[["a", "b", "df"]].itertuples(index=False):
        j, k = models.index(a), models.index(b)
        assert pairs[j, k] == pytest.approx(dfs, rel=2e-5)
        assert r.diff(a, b)["df"] == pytest.approx(dfs, rel=2e-5)


def _board(seed: int) -> pd.DataFrame:
    """Seven models: a baseline block (each against m0 on 15 prompts), tasks of random pairs
    of several sizes, one-verdict tasks (merged by design), with ties."""
    rng = np.random.default_rng(seed)
    s = rng.normal(0.0, 0.7, 7)
    rows = []
    t = 0
    for _ in range(15):
        for a in range(1, 7):
            rows.append((a, 0, t))
        t += 1
    for size in rng.integers(1, 9, 60):
        for _ in range(size):
            a, b = rng.choice(7, 2, replace=False)
            rows.append((a, b, t))
        t += 1
    a, b, task = (np.array(x) for x in zip(*rows, strict=True))
    p = 1.0 / (1.0 + np.exp(-(s[a] - s[b])))
    x = rng.random(a.size)
    winner = np.where(x < 0.1, "tie", np.where(rng.random(a.size) < p, "A", "B"))
    names = np.array([f"m{k}" for k in range(7)])
    return pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner,
                         "task_id": task})  # fmt: skip


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("path", ["exact"])
def test_every_contrast_matches_the_textbook_formulas(seed, path, monkeypatch):
    log = _board(seed)
    r, df, pairs = _fit(log, monkeypatch, path)
    ref = bt_reference(log.assign(winner=log["winner"]), r)
    models = list(r.models)
    want = [ref.df(_contrast(models, m, "m0")) for m in models[1:]]
    np.testing.assert_allclose(df[1:], want, rtol=1e-6)
    for j in range(len(models)):
        for k in range(j + 1, len(models)):
            assert pairs[j, k] == pytest.approx(
                ref.df(_contrast(models, models[j], models[k])), rel=1e-6)


def test_cost_model_falls_back_past_its_budgets(monkeypatch):
    log = _board(4)
    r = ratings.fit(log, anchor="m0")
    inf = r.inference
    assert inf.df_plan(21)[0] == "exact"
    monkeypatch.setattr(cluster_module, "BATCHED_RATIO", 0.0)
    path, why = inf.df_plan(21)
    assert path == "one-direction" and "past" in why


def test_distinct_designs_merge_identical_clusters_only():
    from ratings.inference.batched import distinct_designs
    from ratings.inference.working import WorkingRows

    # clusters 0, 2 and 4 are identical; 1 has the same rows in another order; 3 another weight
    ii = np.array([0, 1, 1, 0, 0, 1, 0, 1, 0, 1])
    jj = np.array([1, 2, 2, 1, 1, 2, 1, 2, 1, 2])
    a = np.array([0.5, 0.4, 0.4, 0.5, 0.5, 0.4, 0.5, 0.3, 0.5, 0.4])
    rows = WorkingRows(ii=ii, jj=jj, judge=np.zeros(10, dtype=np.int64),
                       cluster=np.repeat(np.arange(5), 2), a=a, b=np.zeros(0), n_clusters=5,
                       n_params=3, n_models=3)  # fmt: skip
    designs, weight, of = distinct_designs(rows, rows.merged)
    assert designs.n_clusters == 3
    assert of[0] == of[2] == of[4] and len({of[0], of[1], of[3]}) == 3
    assert weight[of[0]] == 3 and weight[of[1]] == weight[of[3]] == 1
    np.testing.assert_array_equal(designs.a[designs.starts[of[3]]:designs.starts[of[3] + 1]],
                                  [0.5, 0.3])  # fmt: skip
