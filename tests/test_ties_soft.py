"""Soft outcomes (``ratings.BT(soft=True)``: ``winner`` is A's score in [0, 1]) against
references we did not write: statsmodels' binomial GLM with a fractional response (the
Bernoulli quasi-likelihood; HC0 and cluster sandwiches), the soft MLE's closed form on a
one-baseline board, and today's fit for scores 0, 1 and 1/2."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from helpers import design

import ratings
from ratings.core.errors import InvalidVerdictsError


def graded_board(seed: int, n: int = 800, m: int = 5, n_tasks: int = 40) -> pd.DataFrame:
    """Scores from a Beta around sigma(d) (a graded judge), plus some exact 0, 1 and 1/2."""
    rng = np.random.default_rng(seed)
    s = rng.normal(0, 0.7, m)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    p = 1 / (1 + np.exp(-(s[a] - s[b])))
    y = rng.beta(4 * p + 0.2, 4 * (1 - p) + 0.2)
    exact = rng.random(n) < 0.3
    y[exact] = rng.choice([0.0, 0.5, 1.0], exact.sum())
    names = np.array([f"m{i}" for i in range(m)])
    return pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": y,
                         "task_id": rng.integers(0, n_tasks, n)})


@pytest.mark.parametrize("cluster", ["auto", None])
@pytest.mark.parametrize("ci", ["sandwich", "sandwich-z", "model"])
def test_soft_scores_of_0_1_and_half_equal_today_s_fit(board, cluster, ci):
    plain = ratings.fit(board, cluster=cluster, ci=ci)
    numeric = board.assign(winner=board["winner"].map({"A": 1.0, "B": 0.0, "tie": 0.5}))
    for log in (board, numeric):
        soft = ratings.fit(log, model=ratings.BT(soft=True), cluster=cluster, ci=ci)
        np.testing.assert_allclose(soft.elo, plain.elo, rtol=0, atol=1e-8)
        np.testing.assert_allclose(soft.cov, plain.cov, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(soft.to_frame()["df"], plain.to_frame()["df"], rtol=1e-10)
        for c in ("n_matches", "wins", "losses", "ties"):
            np.testing.assert_array_equal(soft.counts[c], plain.counts[c])
        assert soft.kind == "bt-soft"


def test_one_baseline_board_matches_the_soft_mle_s_closed_form():
    """Every model meets only the baseline: the quasi-MLE sets each model's win probability
    against it to the mean of its scores against it."""
    rng = np.random.default_rng(4)
    rows = []
    for k in range(6):
        y = rng.beta(2 + k, 3, 50 + 10 * k)
        swap = rng.random(y.size) < 0.5  # the baseline in either slot
        rows.append(pd.DataFrame({
            "model_a": np.where(swap, "base", f"m{k}"), "model_b": np.where(swap, f"m{k}", "base"),
            "winner": np.where(swap, 1 - y, y), "task_id": rng.integers(0, 20, y.size)}))
        rows[-1]["mean"] = y.mean()
    log = pd.concat(rows, ignore_index=True)
    r = ratings.fit(log.drop(columns="mean"), model=ratings.BT(soft=True))
    for k in range(6):
        p = r.win_probability(f"m{k}", "base")["probability"]
        np.testing.assert_allclose(p, log.loc[log["model_a"].eq(f"m{k}")
                                              | log["model_b"].eq(f"m{k}"), "mean"].iloc[0],
                                   rtol=0, atol=1e-8)


def _statsmodels_soft(log: pd.DataFrame, cov_type: str, groups=None):
    models = sorted(set(log["model_a"]) | set(log["model_b"]))
    x = design(log["model_a"], log["model_b"], models)[:, 1:]
    kwds = {}
    if cov_type == "cluster":
        kwds = {"cov_kwds": {"groups": pd.factorize(pd.Series(groups))[0],
                             "use_correction": False}}
    res = sm.GLM(log["winner"].to_numpy(float), x, family=sm.families.Binomial()).fit(
        tol=1e-13, maxiter=100, cov_type=cov_type, **kwds)
    return models, np.asarray(res.params), np.asarray(res.cov_params())


def test_soft_fit_equals_statsmodels_fractional_glm_with_hc0():
    log = graded_board(1)
    models, params, cov = _statsmodels_soft(log, "HC0")
    r = ratings.fit(log, model=ratings.BT(soft=True), cluster=None, anchor=models[0])
    np.testing.assert_allclose(r.strength[1:], params, atol=1e-8)
    np.testing.assert_allclose(r.cov[1:, 1:], cov, rtol=1e-8, atol=1e-14)


def test_soft_fit_equals_statsmodels_fractional_glm_with_cluster_sandwich():
    log = graded_board(2)
    models, params, cov = _statsmodels_soft(log, "cluster", log["task_id"])
    g = log["task_id"].nunique()
    r = ratings.fit(log, model=ratings.BT(soft=True), ci="sandwich-z", anchor=models[0])
    np.testing.assert_allclose(r.strength[1:], params, atol=1e-8)
    np.testing.assert_allclose(r.cov[1:, 1:], cov * g / (g - 1), rtol=1e-8, atol=1e-14)


def test_soft_counts_report_scores():
    log = graded_board(3, n=200)
    r = ratings.fit(log, model=ratings.BT(soft=True))
    c = r.counts
    assert (c["n_matches"] == c["wins"] + c["losses"] + c["ties"] + c["graded"]).all()
    y = log["winner"].to_numpy()
    total = sum(np.where(log["model_a"] == m, y, 0).sum()
                + np.where(log["model_b"] == m, 1 - y, 0).sum() for m in r.models)
    np.testing.assert_allclose(c["score"].sum(), total)
    assert c["score"].sum() == pytest.approx(len(log))


def test_fractional_score_without_soft_names_the_option():
    log = graded_board(5, n=50)
    with pytest.raises(InvalidVerdictsError, match=r"fractional winner score.*`soft=True`"):
        ratings.fit(log)
    log.loc[3, "winner"] = 1.5  # not a score: still an unknown value, with the map hint
    with pytest.raises(InvalidVerdictsError, match="unknown winner value"):
        ratings.fit(log, model=ratings.BT(soft=True))


def test_a_soft_verdict_log_is_refused_by_a_plain_fit():
    log = ratings.read_verdicts(graded_board(6, n=60), soft=True)
    assert "score" in log.verdicts.columns
    with pytest.raises(InvalidVerdictsError, match="soft=True"):
        ratings.fit(log)
    r = ratings.fit(log, model=ratings.BT(soft=True))
    assert r.kind == "bt-soft"


def test_per_verdict_bootstrap_of_fractional_scores_is_refused():
    log = graded_board(7, n=200)
    with pytest.raises(ValueError, match="per-verdict bootstrap"):
        ratings.fit(log, model=ratings.BT(soft=True), ci="bootstrap", cluster=None)
    r = ratings.fit(log, model=ratings.BT(soft=True), ci=ratings.Bootstrap(n=50))  # clusters
    assert np.isfinite(r.se).all()
