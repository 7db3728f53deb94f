"""Bradley-Terry fits and covariances against statsmodels on simulated and real data.

Bradley-Terry is a logistic regression of the outcome (1, 0, or 1/2 for a tie) on +-1 indicator
columns, with the reference model's column dropped. Our fit anchored at that reference model
reports strength 0 for it, so ``strength[1:]`` must equal the statsmodels ``params`` and
``cov[1:, 1:]`` its covariance: ``ci="model"`` is ``nonrobust``, the per-verdict sandwich is
``HC0`` and the clustered sandwich is ``cluster`` (no small-sample correction) times G / (G - 1).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import (
    REFERENCE_DATA,
    WINNER_OF_Y,
    Y_OF_WINNER,
    assert_close,
    design,
    simulate_verdicts,
    statsmodels_bt,
)
from scipy.special import expit

from ratings.api.fitting import fit
from ratings.data.comparisons import aggregate

# name -> (verdicts with canonical columns plus the cluster column, cluster column)
DATASETS = ["simulated_ties", "simulated_no_ties", "icehockey", "football", "arena_hard"]
COV_TYPES = ["nonrobust", "HC0", "cluster"]


@cache
def load(name: str) -> tuple[pd.DataFrame, str]:
    if name == "simulated_ties":
        rng = np.random.default_rng(11)
        log = simulate_verdicts(
            rng, [0.0, 0.6, -0.4, 1.5, -1.2, 0.3, 0.9], 900, 90, tie_fraction=0.12, task_sd=0.7
        )
        return log, "task_id"
    if name == "simulated_no_ties":
        rng = np.random.default_rng(12)
        log = simulate_verdicts(rng, [0.0, -0.7, 0.8, 0.1, 2.0], 500, 40, task_sd=0.5)
        return log, "task_id"
    if name == "icehockey":  # result is 1 / 0 / 0.5 for the visitor; games on one date cluster
        raw = pd.read_csv(REFERENCE_DATA / "icehockey_2009_10.csv")
        log = pd.DataFrame(
            {
                "model_a": raw["visitor"],
                "model_b": raw["opponent"],
                "winner": raw["result"].map(WINNER_OF_Y),
                "date": raw["date"],
            }
        )
        return log, "date"
    if name == "football":  # result 1 home win, 0 draw, -1 away win; no dates, so seasons
        raw = pd.read_csv(REFERENCE_DATA / "football_epl_2008_2013.csv")
        log = pd.DataFrame(
            {
                "model_a": raw["home"],
                "model_b": raw["away"],
                "winner": raw["result"].map({1: "A", 0: "tie", -1: "B"}),
                "season": raw["season"],
            }
        )
        return log, "season"
    if name == "arena_hard":
        raw = pd.read_csv(REFERENCE_DATA / "arena_hard_battles_2024_09.csv")
        winner = raw["winner"].map({"model_a": "A", "model_b": "B", "tie": "tie"})
        log = pd.DataFrame(
            {
                "model_a": raw["model_a"],
                "model_b": raw["model_b"],
                "winner": winner,
                "question_id": raw["question_id"],
            }
        )
        return log, "question_id"
    raise KeyError(name)


@cache
def reference(name: str, cov_type: str, logit: bool = False):
    log, column = load(name)
    groups = log[column].to_numpy() if cov_type == "cluster" else None
    return statsmodels_bt(log, cov_type, groups, logit=logit)


def ours(name: str, cov_type: str):
    log, column = load(name)
    data = aggregate(log, cluster=column if cov_type == "cluster" else None)
    # clustered: the per-cluster scores come straight from the kept verdict codes
    assert data.keeps_codes == (cov_type == "cluster")
    models = sorted(set(log["model_a"]) | set(log["model_b"]))
    # the textbook cluster sandwich (CR1) is ci="sandwich-z"; the default "sandwich" is CR2
    ci = {"nonrobust": "model", "HC0": "sandwich", "cluster": "sandwich-z"}[cov_type]
    out = fit(data, anchor=models[0], ci=ci)
    assert data.keeps_codes == (cov_type == "cluster")  # and the fit built no rows per cluster
    return out


def test_reference_data_is_where_expected():
    # inside the repository: a fresh clone runs the suite with nothing beside it
    root = Path(__file__).resolve().parents[1]
    assert REFERENCE_DATA.resolve().is_relative_to(root)
    for name in ("icehockey", "football", "arena_hard"):
        log, column = load(name)
        assert log["winner"].notna().all()
        assert log[column].nunique() >= 2
    assert load("icehockey")[0].shape == (1083, 4)
    assert load("football")[0].shape == (1900, 4)
    assert load("arena_hard")[0].shape == (1348, 4)


@pytest.mark.parametrize("cov_type", COV_TYPES)
@pytest.mark.parametrize("name", DATASETS)
def test_matches_statsmodels(name, cov_type):
    models, params, cov = reference(name, cov_type)
    r = ours(name, cov_type)
    assert list(r.models) == models
    assert r.anchor == models[0] and r.strength[0] == 0.0
    np.testing.assert_array_equal(r.cov[0], 0.0)
    assert_close(r.strength[1:], params, rtol=1e-8, atol_rel=1e-10)
    assert_close(r.cov[1:, 1:], cov, rtol=1e-8, atol_rel=1e-10)
    # Elo-scale standard errors are the statsmodels ones times 400 / ln 10.
    assert_close(r.se.to_numpy()[1:], 400 / np.log(10) * np.sqrt(np.diag(cov)), rtol=1e-8)


@pytest.mark.parametrize("name", DATASETS)
def test_loglik_matches_direct_computation(name):
    """The reported log-likelihood is sum y log p + (1 - y) log(1 - p) at the statsmodels MLE."""
    log, _ = load(name)
    models, params, _ = reference(name, "nonrobust")
    x = design(log["model_a"], log["model_b"], models)[:, 1:]
    y = log["winner"].map(Y_OF_WINNER).to_numpy(dtype=np.float64)
    p = expit(x @ params)
    expected = float(np.sum(y * np.log(p) + (1 - y) * np.log1p(-p)))
    assert ours(name, "nonrobust").loglik == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("cov_type", COV_TYPES)
def test_glm_with_fractional_outcome_equals_logit_without_ties(cov_type):
    """The GLM reference used for ties reproduces sm.Logit where there are no ties."""
    _, p_glm, c_glm = reference("simulated_no_ties", cov_type)
    _, p_logit, c_logit = reference("simulated_no_ties", cov_type, logit=True)
    assert_close(p_glm, p_logit, rtol=1e-9)
    assert_close(c_glm, c_logit, rtol=1e-7, atol_rel=1e-9)
    r = ours("simulated_no_ties", cov_type)
    assert_close(r.strength[1:], p_logit, rtol=1e-8, atol_rel=1e-10)
    assert_close(r.cov[1:, 1:], c_logit, rtol=1e-8, atol_rel=1e-10)
