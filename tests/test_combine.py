"""Tests of :mod:`ratings.scopes.combine`: the combined headline Elo and its joint interval.

Boards are simulated with :func:`ratings.datasets.simulate.simulate_verdicts` and a Gaussian copula
(``task_corr``), which keeps every marginal win probability at sigma(s_a - s_b): the truth of each
scope is then the Bradley-Terry parameter itself, and scopes sharing the copula latents of a
(model, task) submission are positively correlated.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pandas as pd
import pytest

import ratings
from ratings.cli.app import main
from ratings.datasets.example import example_path
from ratings.datasets.simulate import random_matches, simulate_verdicts
from ratings.result import ELO_SCALE
from ratings.scopes.combine import combine

MODELS = [f"m{k}" for k in range(8)]
ANCHOR = "m3"
BASE = pd.Series(np.linspace(-0.8, 0.8, len(MODELS)), index=MODELS)


def _latents(rng: np.random.Generator, tasks: list[str]) -> pd.Series:
    keys = pd.MultiIndex.from_product([MODELS, tasks], names=["model", "task_id"])
    return pd.Series(rng.standard_normal(len(keys)), index=keys)


def _scope_verdicts(rng, strengths, *, n=600, n_tasks=40, prefix="task-", task_corr=0.0,
                    latents=None) -> pd.DataFrame:  # fmt: skip
    matches = random_matches(MODELS, n, n_tasks=n_tasks, seed=int(rng.integers(2**32)))
    if prefix != "task-":
        matches["task_id"] = matches["task_id"].str.replace("task-", prefix, regex=False)
    return simulate_verdicts(matches, strengths, tie_rate=0.12, task_corr=task_corr,
                             latents=latents, seed=int(rng.integers(2**32)))  # fmt: skip


def _fit(verdicts: pd.DataFrame, anchor: str = f"{ANCHOR}=1000", cluster="task_id"
         ) -> ratings.Ratings:  # fmt: skip
    return ratings.fit(ratings.aggregate(verdicts, cluster=cluster), anchor=anchor)


def _board(seed: int, *, task_corr: float, shared: bool, n=600, n_tasks=40, scope_sd=0.1):
    """Three scopes on the same tasks: fits and the true headline Elo (mean of scope truths)."""
    rng = np.random.default_rng(seed)
    tasks = [f"task-{k}" for k in range(n_tasks)]
    common = _latents(rng, tasks) if shared else None
    fits, truths = {}, []
    for scope in ("analytical", "presentation", "rubric"):
        strength = BASE + rng.normal(0.0, scope_sd, len(MODELS))
        v = _scope_verdicts(rng, strength, n=n, n_tasks=n_tasks, task_corr=task_corr,
                            latents=common)  # fmt: skip
        fits[scope] = _fit(v)
        truths.append(1000.0 + ELO_SCALE * (strength - strength[ANCHOR]))
    return fits, pd.concat(truths, axis=1).mean(axis=1)


@pytest.fixture(scope="module")
def shared_board():
    """Three positively correlated scopes (shared latents, task_corr 0.8)."""
    return _board(11, task_corr=0.8, shared=True)[0]


@pytest.fixture(scope="module")
def disjoint_board():
    """Two scopes judged on disjoint task sets (no common cluster)."""
    rng = np.random.default_rng(12)
    return {
        "a": _fit(_scope_verdicts(rng, BASE, prefix="a-", task_corr=0.5)),
        "b": _fit(_scope_verdicts(rng, BASE + 0.05, n=500, n_tasks=30, prefix="b-",
                                  task_corr=0.5)),
    }  # fmt: skip


# --- values --------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["joint", "independent"])
def test_single_scope_is_its_own_fit(shared_board, method):
    r = shared_board["analytical"]
    c = combine({"analytical": r}, method=method)
    assert list(c.models) == list(r.models)
    np.testing.assert_array_equal(c.elo.to_numpy(), r.elo.to_numpy())
    np.testing.assert_allclose(c.cov, r.cov, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(c.se, r.se, rtol=1e-10, atol=1e-10)
    assert (c.anchor, c.offset, c.scope) == (r.anchor, r.offset, "combined")
    assert c.se[ANCHOR] == 0.0


def test_equal_weights_give_the_mean_of_scope_elos(shared_board):
    c = combine(shared_board)
    mean = pd.concat([r.elo for r in shared_board.values()], axis=1).mean(axis=1)
    np.testing.assert_allclose(c.elo.to_numpy(), mean.reindex(c.models).to_numpy(), atol=1e-9)
    assert c.elo[ANCHOR] == 1000.0
    assert c.combination.weights == pytest.approx(dict.fromkeys(shared_board, 1 / 3))


def test_user_weights_are_normalised(shared_board):
    raw = {"analytical": 2.0, "presentation": 1.0, "rubric": 1.0}
    c = combine(shared_board, weights=raw)
    same = combine(shared_board, weights={k: v / 4 for k, v in raw.items()})
    expected = sum(w / 4 * shared_board[s].elo for s, w in raw.items())
    np.testing.assert_allclose(c.elo.to_numpy(), expected.reindex(c.models).to_numpy(), atol=1e-9)
    assert sum(c.combination.weights.values()) == pytest.approx(1.0)
    assert c.combination.weights["analytical"] == pytest.approx(0.5)
    np.testing.assert_allclose(c.elo, same.elo, atol=1e-12)
    np.testing.assert_allclose(c.cov, same.cov, rtol=1e-12, atol=1e-16)
    ind = combine(shared_board, weights=raw, method="independent")
    np.testing.assert_allclose(
        ind.cov, sum((w / 4) ** 2 * shared_board[s].cov for s, w in raw.items()), rtol=1e-12
    )
    # A zero weight removes a scope from the headline value.
    zero = combine(shared_board, weights={"analytical": 1, "presentation": 1, "rubric": 0})
    np.testing.assert_allclose(
        zero.elo, (shared_board["analytical"].elo + shared_board["presentation"].elo) / 2,
        atol=1e-9,
    )  # fmt: skip


def test_joint_equals_independent_for_disjoint_tasks(disjoint_board):
    joint = combine(disjoint_board)
    ind = combine(disjoint_board, method="independent")
    np.testing.assert_allclose(joint.elo, ind.elo)
    # Each scope keeps its own small-sample factor G_s/(G_s-1), so with no shared task the joint
    # covariance is exactly the independent one.
    assert joint.n_clusters == sum(r.n_clusters for r in disjoint_board.values())
    expected = sum(0.25 * r.cov for r in disjoint_board.values())
    np.testing.assert_allclose(joint.cov, expected, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(joint.se, ind.se, rtol=1e-9)
    np.testing.assert_allclose(joint.combination.se_independent, ind.se, rtol=1e-12)


def test_joint_needs_sandwich_fits_and_matching_clusters(shared_board):
    model_based = dict(shared_board)
    r = shared_board["analytical"]
    model_based["analytical"] = dataclasses.replace(
        r, uncertainty=dataclasses.replace(r.uncertainty, ci="model"))
    with pytest.raises(ValueError, match="ci='model'"):
        combine(model_based)
    other = dict(shared_board)
    other["analytical"] = dataclasses.replace(
        r, uncertainty=dataclasses.replace(r.uncertainty, cluster="date"))
    with pytest.raises(ValueError, match="same cluster column"):
        combine(other)
    with pytest.raises(ValueError, match="must be numbers"):
        combine(shared_board, weights={"analytical": "abc", "presentation": 1, "rubric": 1})


def test_joint_is_larger_with_shared_positive_latents(shared_board):
    joint = combine(shared_board)
    ind = combine(shared_board, method="independent")
    others = joint.models != ANCHOR
    ratio = joint.se[others] / ind.se[others]
    assert (ratio > 1.05).all(), ratio
    assert ratio.mean() > 1.25, ratio
    np.testing.assert_allclose(joint.combination.se_independent, ind.se, rtol=1e-12)
    assert joint.combination.method == "joint" and ind.combination.method == "independent"


def test_joint_headline_covers_and_a_wrong_variance_does_not():
    """40 boards with strongly shared latents: the joint 95 % interval covers the true headline
    (mean of the scopes' true Elo); the independent interval (cross-scope covariance ignored) and
    the joint interval with a quarter of its variance cover clearly less. If ``method="joint"``
    ignored the cross-scope terms it would equal the independent interval and fail here."""
    hits = {"joint": [], "independent": [], "quarter": []}
    ratios = []
    for b in range(40):
        fits, truth = _board(1000 + b, task_corr=0.9, shared=True)
        joint = combine(fits)
        ind = combine(fits, method="independent")
        others = joint.models[joint.models != ANCHOR]
        err = (joint.elo[others] - truth[others]).abs()
        hits["joint"].append(err <= 1.959964 * joint.se[others])
        hits["independent"].append(err <= 1.959964 * ind.se[others])
        hits["quarter"].append(err <= 1.959964 * joint.se[others] / 2)
        ratios.append(joint.se[others] / ind.se[others])
    cov = {k: float(pd.concat(v).mean()) for k, v in hits.items()}
    assert cov["joint"] >= 0.85, cov
    assert cov["independent"] <= 0.90, cov
    assert cov["joint"] - cov["independent"] >= 0.06, cov
    assert cov["quarter"] <= 0.80, cov
    assert float(pd.concat(ratios).mean()) > 1.3


# --- errors --------------------------------------------------------------------------------


def test_different_anchors_name_both(shared_board):
    v = _scope_verdicts(np.random.default_rng(3), BASE)
    other = _fit(v, anchor="m5=1000")
    with pytest.raises(ValueError, match=r"different scales") as info:
        combine({"analytical": shared_board["analytical"], "presentation": other})
    assert "'m3'" in str(info.value) and "'m5'" in str(info.value)
    shifted = _fit(v, anchor=f"{ANCHOR}=1200")
    with pytest.raises(ValueError, match=r"1200"):
        combine({"analytical": shared_board["analytical"], "presentation": shifted})


def test_missing_model_is_listed_or_dropped(shared_board):
    rng = np.random.default_rng(4)
    v = _scope_verdicts(rng, BASE)
    v = v[(v["model_a"] != "m7") & (v["model_b"] != "m7")]
    partial = _fit(v)
    assert "m7" not in partial.models
    results = {"analytical": shared_board["analytical"], "presentation": partial}
    with pytest.raises(ValueError, match=re.escape("presentation: ['m7']")):
        combine(results)
    for method in ("joint", "independent"):
        c = combine(results, missing="drop", method=method)
        assert "m7" not in c.models
        assert list(c.models) == [m for m in MODELS if m != "m7"]
        expected = (shared_board["analytical"].elo + partial.elo) / 2
        np.testing.assert_allclose(c.elo, expected.reindex(c.models), atol=1e-9)
    with pytest.raises(ValueError, match="missing"):
        combine(results, missing="ignore")


def test_weights_must_name_the_scopes(shared_board):
    with pytest.raises(ValueError, match="zzz"):
        combine(shared_board, weights={"analytical": 1, "presentation": 1, "rubric": 1, "zzz": 1})
    with pytest.raises(ValueError, match="exactly the scopes"):
        combine(shared_board, weights={"analytical": 1, "presentation": 1})
    with pytest.raises(ValueError, match=">= 0"):
        combine(shared_board, weights={"analytical": 1, "presentation": -1, "rubric": 1})
    with pytest.raises(ValueError, match="not all 0"):
        combine(shared_board, weights=dict.fromkeys(shared_board, 0.0))


def test_joint_needs_clustered_fits():
    rng = np.random.default_rng(5)
    fits = {s: _fit(_scope_verdicts(rng, BASE), cluster=None) for s in ("a", "b")}
    assert all(r.influence is None for r in fits.values())
    with pytest.raises(ValueError, match=r"\['a', 'b'\].*cluster='task_id'.*independent"):
        combine(fits)
    ind = combine(fits, method="independent")
    np.testing.assert_allclose(ind.cov, (fits["a"].cov + fits["b"].cov) / 4)
    with pytest.raises(ValueError, match="empty"):
        combine({})
    with pytest.raises(ValueError, match="method"):
        combine(fits, method="pooled")


# --- command line --------------------------------------------------------------------------


def test_cli_combine_with_rubric_and_weights(tmp_path):
    base = ["combine", str(example_path()), "--rubric", str(example_path("rubric.csv")),
            "--model", "bt", "--anchor", "GPT-5.5 (medium)=1000"]  # fmt: skip
    equal, weighted = tmp_path / "equal.csv", tmp_path / "weighted.csv"
    assert main([*base, "--out", str(equal)]) == 0
    assert main([*base, "--weights", "analytical=2,presentation=1,rubric=1",
                 "--out", str(weighted)]) == 0  # fmt: skip
    for path, w in ((equal, (1 / 3, 1 / 3, 1 / 3)), (weighted, (0.5, 0.25, 0.25))):
        table = pd.read_csv(path)
        assert set(table["scope"]) == {"analytical", "presentation", "rubric", "combined"}
        elo = table.pivot(index="model", columns="scope", values="elo")
        assert elo.notna().all().all()
        expected = w[0] * elo["analytical"] + w[1] * elo["presentation"] + w[2] * elo["rubric"]
        np.testing.assert_allclose(elo["combined"], expected, atol=1e-6)
        head = table[table["scope"] == "combined"].set_index("model")
        assert head.loc["GPT-5.5 (medium)", "elo"] == pytest.approx(1000.0)
        assert head["se_independent"].notna().all()
    a = pd.read_csv(equal).query("scope == 'combined'").set_index("model")["elo"]
    b = pd.read_csv(weighted).query("scope == 'combined'").set_index("model")["elo"]
    assert (a - b.reindex(a.index)).abs().max() > 1.0


def test_headline_degrees_of_freedom_stack_the_scopes(shared_board, disjoint_board):
    # one scope alone: its own degrees of freedom, rank intervals included
    r = shared_board["analytical"]
    c = combine({"analytical": r})
    np.testing.assert_allclose(c.model_df, r.model_df, rtol=1e-10)
    pd.testing.assert_frame_equal(c.rank_intervals(), r.rank_intervals())
    # scopes on disjoint tasks: the joint headline's df equal the independent one's
    joint = combine(disjoint_board)
    ind = combine(disjoint_board, method="independent")
    np.testing.assert_allclose(joint.model_df, ind.model_df, rtol=1e-10)
    # two equal halves of one scope on disjoint tasks have twice the degrees of freedom of one
    a = disjoint_board["a"]
    twin = combine({"x": a, "y": dataclasses.replace(a, uncertainty=dataclasses.replace(
        a.uncertainty, influence_clusters=a.influence_clusters.map(lambda t: f"{t}-copy")))})
    ok = np.isfinite(a.model_df)
    np.testing.assert_allclose(twin.model_df[ok], 2 * a.model_df[ok], rtol=1e-8)
    # the headline table has rank intervals, the shared board's headline df per model
    head = combine(shared_board).to_frame()
    assert head["rank_lower"].notna().all() and head["df"].notna().sum() == len(head) - 1
