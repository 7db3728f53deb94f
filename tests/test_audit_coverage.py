"""A fast version of ``benchmarks_perf/audit_study.py``: over simulated boards with planted judge
effects, the 95 % intervals cover the truth about 95 % of the time, absent effects are flagged
at about the nominal 5 %, ``adjust="self-preference"`` removes a planted family inflation, and on
a board without biases adjusting moves ratings by less than their standard errors.

Boards are small (1,500 verdicts on 60 tasks) and few, so the bounds are loose: they catch an
interval that is too narrow or too wide by a clear margin (the study measures the rates)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ratings
from ratings.datasets.simulate import random_matches, simulate_verdicts
from ratings.result import ELO_SCALE

MODELS = [f"m{i:02d}" for i in range(10)]
STRENGTHS = pd.Series(np.linspace(-1.0, 1.0, 10), index=MODELS)
FAMILIES = {"m00": "red", "m03": "red", "m06": "red", "m01": "blue", "m04": "blue",
            "J1": "red", "J2": "blue"}  # fmt: skip
JUDGES = ["J1", "J2", "J3"]


def _board(seed: int, *, beta=None, gamma=None, n: int = 1500) -> pd.DataFrame:
    matches = random_matches(MODELS, n, n_tasks=60, judges=JUDGES, seed=seed)
    return simulate_verdicts(matches, STRENGTHS, tie_rate=0.12, task_corr=0.3, seed=seed + 1,
                             position_bias=beta, self_preference=gamma,
                             families=FAMILIES)  # fmt: skip


@pytest.mark.slow
def test_effect_intervals_cover_and_absent_effects_are_rarely_flagged():
    beta = {"J1": 0.3, "J2": 0.0, "J3": -0.2}
    gamma = {"J1": 0.5, "J2": 0.0}
    covered, flagged_absent = [], []
    for seed in range(40):
        fit = ratings.fit(
            _board(100 + 7 * seed, beta=beta, gamma=gamma),
            adjust=ratings.Adjust("position,self-preference", families=FAMILIES),
        )
        fx = fit.judge_effects.table.set_index("judge")
        for j in JUDGES:
            truths = [("position", beta[j])] + ([("self", gamma[j])] if j in gamma else [])
            for prefix, truth in truths:
                lo, hi = fx.loc[j, f"{prefix}_lower"], fx.loc[j, f"{prefix}_upper"]
                covered.append(lo <= truth <= hi)
                if truth == 0.0:
                    flagged_absent.append(fx.loc[j, f"{prefix}_p"] < 0.05)
        assert np.isnan(fx.loc["J3", "self_preference"])  # no family: never a number
    assert 0.89 <= np.mean(covered) <= 0.99, np.mean(covered)
    assert np.mean(flagged_absent) <= 0.12, np.mean(flagged_absent)


def _red_inflation(r: ratings.Ratings) -> float:
    true = 1000 + ELO_SCALE * (STRENGTHS - STRENGTHS["m09"])
    err = r.elo - true
    red = err.index.isin(["m00", "m03", "m06"])
    return float(err[red].mean() - err[~red].mean())


def test_adjusting_removes_family_inflation():
    plain, adjusted = [], []
    for seed in range(15):
        log = _board(500 + 11 * seed, gamma={"J1": 0.8}, n=3000)
        plain.append(_red_inflation(ratings.fit(log, anchor="m09")))
        adjusted.append(
            _red_inflation(
                ratings.fit(
                    log, anchor="m09", adjust=ratings.Adjust("self-preference", families=FAMILIES)
                )
            )
        )
    assert np.mean(plain) > 25.0  # J1 gives a third of the verdicts: about 35 Elo
    assert abs(np.mean(adjusted)) < 0.25 * np.mean(plain)


def test_adjusting_a_board_without_biases_moves_ratings_less_than_their_se():
    worst = 0.0
    for seed in range(10):
        log = _board(900 + 13 * seed)
        plain = ratings.fit(log, anchor="m09")
        adj = ratings.fit(
            log, anchor="m09", adjust=ratings.Adjust("position,self-preference", families=FAMILIES)
        )
        keep = plain.models != "m09"
        worst = max(worst, float((np.abs(adj.elo - plain.elo)[keep] / plain.se[keep]).max()))
    assert worst < 1.0
