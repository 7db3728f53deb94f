"""Tests of the offline plan -> judge -> refit simulator."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sampling.design.simulate import (
    SimulatedBoard,
    judge_matches,
    make_board,
    simulate_loop,
    uniform_matches,
)


def test_make_board():
    board = make_board(5, 8, seed=0, coverage=0.3, elo_sd=100.0, task_sd=0.5,
                       judge_eta={"judge-1": 0.9, "judge-2": 1.0, "judge-3": 0.7})  # fmt: skip
    assert board.models == [f"model-{i:02d}" for i in range(5)]
    assert set(board.submissions["model"]) == set(board.models)  # everyone keeps a task
    assert board.submissions["effect"].std() > 0
    assert board.elo("model-02=1500")["model-02"] == pytest.approx(1500)
    assert board.elo().mean() == pytest.approx(1000)
    assert board.mid_model() == board.strength.sort_values().index[2]
    with pytest.raises(ValueError, match=r"`judge_eta` must give every judge a quality in"):
        make_board(3, 2, seed=0, judge_eta=0.3)


def test_submission_effects_are_shared_across_batches():
    # Huge per-submission effects, no judge noise: a pair on one task always has one winner.
    board = make_board(2, 30, seed=1, elo_sd=0.0, task_sd=30.0)
    tasks = board.submissions["task_id"].unique()
    matches = pd.DataFrame({"task_id": tasks, "model_a": "model-00", "model_b": "model-01",
                            "judge": "judge-1"})  # fmt: skip
    one = judge_matches(matches, board, seed=1)["winner"]
    two = judge_matches(matches, board, seed=2)["winner"]
    assert (one == two).mean() > 0.9 and 0.1 < (one == "A").mean() < 0.9


def test_judge_quality_and_ties():
    strong = pd.Series([10.0, -10.0], index=["s", "w"])
    subs = pd.DataFrame({"model": ["s", "w"], "task_id": ["t", "t"], "effect": [0.0, 0.0]})
    board = SimulatedBoard(strong, subs, pd.Series({"good": 1.0, "coin": 0.5}), tie_rate=0.0)
    m = pd.DataFrame({"task_id": ["t"] * 400, "model_a": ["s"] * 400, "model_b": ["w"] * 400,
                      "judge": ["good", "coin"] * 200})  # fmt: skip
    out = judge_matches(m, board, seed=0)
    assert (out.loc[out["judge"] == "good", "winner"] == "A").all()
    assert 0.35 < (out.loc[out["judge"] == "coin", "winner"] == "A").mean() < 0.65
    assert judge_matches(m, board, seed=0).equals(out)
    bad = m.assign(task_id="nope")
    with pytest.raises(ValueError, match=r"use a submission the board does not have"):
        judge_matches(bad, board, seed=0)


def test_uniform_matches_respect_submissions():
    board = make_board(6, 10, seed=3, coverage=0.4)
    m = uniform_matches(board.submissions, ["a", "b"], 300, seed=4)
    have = set(zip(board.submissions["model"], board.submissions["task_id"], strict=True))
    assert all((x, t) in have for x, t in zip(m["model_a"], m["task_id"], strict=True))
    assert all((x, t) in have for x, t in zip(m["model_b"], m["task_id"], strict=True))
    assert (m["model_a"] != m["model_b"]).all()
    assert m.equals(uniform_matches(board.submissions, ["a", "b"], 300, seed=4))
    assert abs((m["judge"] == "a").sum() - 150) <= 1


def test_loop_reaches_target_and_keeps_balance():
    board = make_board(6, 20, seed=5, judges=["x", "y", "z"])
    anchor = board.mid_model()
    res = simulate_loop(board, seed=1, batch_size=30, target_half_width=80.0, anchor=anchor,
                        min_matches=4, check=True)  # fmt: skip
    assert res.reached and res.n_comparisons == len(res.verdicts)
    b = res.batches
    assert b["mean_half_width"].iloc[-1] <= 80.0 < b["mean_half_width"].dropna().iloc[0]
    assert (b["premature_repeats"] == 0).all() and (b["invalid_matches"] == 0).all()
    assert (b["task_spread_plan"] <= 1).all() and (b["task_spread_total"] <= 2).all()
    assert (b["judge_spread_plan"] <= 1).all() and (b["judge_spread_total"] <= 1).all()
    assert b["n_active"].sum() > 0 and b["n_balanced"].iloc[0] == 30
    again = simulate_loop(board, seed=1, batch_size=30, target_half_width=80.0, anchor=anchor,
                          min_matches=4)  # fmt: skip
    pd.testing.assert_frame_equal(again.verdicts, res.verdicts)


def test_loop_confirms_with_the_default_fit():
    board = make_board(5, 12, seed=7, judges=["x", "y"], task_sd=0.4)
    res = simulate_loop(board, seed=2, strategy="uniform", batch_size=40, target_half_width=90.0,
                        anchor=board.mid_model(), confirm=True)  # fmt: skip
    assert res.reached and res.fit.cluster == "task_id"
    last = res.batches.iloc[-1]
    assert last["mean_half_width"] <= 90.0 and last["default_half_width"] <= 90.0


def test_loop_budget_and_uniform_strategy():
    board = make_board(4, 5, seed=6)
    res = simulate_loop(board, seed=0, strategy="uniform", batch_size=25, max_comparisons=60)
    assert not res.reached and len(res.verdicts) == 60
    assert res.batches["n_verdicts"].tolist() == [25, 50, 60]
    assert np.isfinite(res.batches["mean_half_width"].iloc[-1])
    with pytest.raises(ValueError, match=r"`strategy` must be 'active', .* or 'oracle'"):
        simulate_loop(board, seed=0, strategy="random")
