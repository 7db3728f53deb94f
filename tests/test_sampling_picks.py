"""The planner's vectorised pick search against a plain walk of the rule, pick by pick.

:class:`sampling_reference.ReferencePicker` walks the ranked pairs one at a time and recomputes
every model's allowed tasks with Python loops; plans made with it and with the planner's
:class:`sampling.picks.picker.Picker` must be identical row for row (a plan lists its picks
in order), on small boards that reach every branch of the rule: balanced and active phases,
routing, scopes, new models, failed submissions, the share cap and its relaxation, and the
looser task levels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sampling_reference import ReferencePicker
from sampling_runs import grow

import sampling.design.plan
import sampling.picks.picker
from sampling import plan_matches, plan_scopes
from sampling.design.simulate import judge_matches, make_board
from sampling.picks.picker import lexmin

JUDGES = ["j1", "j2", "j3"]


@pytest.fixture
def slack_uses(monkeypatch):
    """Count the picks that reach a level looser than the three strict ones."""
    uses = []
    original = sampling.picks.picker.slack_levels

    def counted(*args):
        for mask in original(*args):
            uses.append(1)
            yield mask

    monkeypatch.setattr(sampling.picks.picker, "slack_levels", counted)
    return uses


def same_plans(monkeypatch, make_plan) -> pd.DataFrame:
    """Plan with the planner's picker and with the reference walk; assert they are equal."""
    fast = make_plan()
    with monkeypatch.context() as m:
        m.setattr(sampling.design.plan, "Picker", ReferencePicker)
        slow = make_plan()
    pd.testing.assert_frame_equal(fast, slow)
    return fast


@pytest.mark.parametrize("seed", [0, 1])
def test_balanced_start_on_sparse_submissions(monkeypatch, seed):
    board = make_board(11, 7, seed=seed, judges=JUDGES, coverage=0.6)
    subs = board.submissions[["model", "task_id"]]
    plan = same_plans(monkeypatch, lambda: plan_matches(None, subs, JUDGES, 60, seed=seed))
    assert (plan["phase"] == "balanced").any()


@pytest.mark.parametrize("objective,max_share", [("pairwise", 3.0), ("anchored", 1.0),
                                                 ("anchored", None)])  # fmt: skip
def test_active_phase_with_and_without_the_share_cap(monkeypatch, objective, max_share):
    board = make_board(9, 12, seed=2, judges=JUDGES)
    subs = board.submissions[["model", "task_id"]]
    log = grow(board, subs, 3, 40)
    plan = same_plans(monkeypatch, lambda: plan_matches(
        log, subs, JUDGES, 80, seed=3, anchor="model-04", objective=objective,
        max_share=max_share))  # fmt: skip
    assert (plan["phase"] == "active").all()


def test_looser_task_levels_on_a_few_models(monkeypatch, slack_uses):
    board = make_board(5, 4, seed=0, judges=JUDGES, coverage=0.7)
    subs = board.submissions[["model", "task_id"]]
    log = grow(board, subs, 3, 8)
    same_plans(monkeypatch, lambda: plan_matches(
        log, subs, JUDGES, 15, seed=1, anchor="model-00", objective="anchored",
        max_share=None))  # fmt: skip
    assert slack_uses  # the search went past the strict levels


def test_routing(monkeypatch):
    board = make_board(10, 15, seed=3, judges=JUDGES)
    subs = board.submissions[["model", "task_id"]]
    route = pd.DataFrame({"task_id": [f"task-{k:03d}" for k in range(5)], "judge": "j3"})
    log = grow(board, subs, 2, 30, task_judges=route)
    same_plans(monkeypatch, lambda: plan_matches(log, subs, JUDGES, 50, seed=8,
                                                 task_judges=route))  # fmt: skip


def test_scopes(monkeypatch):
    board = make_board(8, 10, seed=5, judges=JUDGES)
    subs = board.submissions[["model", "task_id"]]
    log = grow(board, subs, 2, 30).assign(scope="analytical")
    with pytest.warns(UserWarning):
        plan = same_plans(monkeypatch, lambda: plan_scopes(
            log, subs, JUDGES, 25, scopes=["analytical", "presentation"], seed=5))  # fmt: skip
    assert set(plan["scope"]) == {"analytical", "presentation"}


def test_new_models_on_the_ladder(monkeypatch):
    board = make_board(14, 12, seed=1, judges=JUDGES)
    subs = board.submissions[["model", "task_id"]]
    new = ["model-12", "model-13"]
    log = grow(board, subs[~subs["model"].isin(new)], 4, 60)
    plan = same_plans(monkeypatch, lambda: plan_matches(log, subs, JUDGES, 70, seed=9))
    assert set(plan["phase"]) == {"balanced", "active"}


def test_failed_submissions_and_forfeits(monkeypatch):
    board = make_board(7, 9, seed=10, judges=JUDGES)
    subs = board.submissions[["model", "task_id"]].copy()
    subs["failed"] = np.where(np.random.default_rng(0).random(len(subs)) < 0.2, "true", "")
    plan = same_plans(monkeypatch, lambda: plan_matches(None, subs, JUDGES, 50, seed=0,
                                                        forfeits=True))  # fmt: skip
    assert (plan["judge"] == "deterministic").any()
    with pytest.warns(UserWarning, match="failed"):
        same_plans(monkeypatch, lambda: plan_matches(None, subs, JUDGES, 40, seed=2))


def test_lexmin_is_the_first_of_the_lexsort_order():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(1, 40))
        keys = (rng.integers(0, 3, n), rng.integers(0, 2, n).astype(bool),
                np.where(rng.random(n) < 0.2, np.nan, rng.integers(0, 3, n) / 2.0))  # fmt: skip
        mask = rng.random(n) < 0.5
        if not mask.any():
            continue
        order = np.lexsort(keys)
        assert lexmin(keys, mask) == order[mask[order]][0]


def star_log(board, per_model, seed=0):
    """Every model met only ``model-00`` (a baseline), ``per_model`` times on random tasks."""
    rng = np.random.default_rng(seed)
    tasks = board.submissions["task_id"].unique()
    others = [m for m in board.models if m != "model-00"]
    rows = [(t, "model-00", m, board.judges[k % len(board.judges)])
            for m in others for k, t in enumerate(rng.choice(tasks, per_model[m], replace=False))]
    plan = pd.DataFrame(rows, columns=["task_id", "model_a", "model_b", "judge"])
    return judge_matches(plan, board, seed=seed)


def test_a_log_meeting_every_exposure_target_plans_no_balanced_phase(monkeypatch):
    board = make_board(12, 30, seed=4, judges=JUDGES)
    subs = board.submissions[["model", "task_id"]]
    log = star_log(board, {m: 25 for m in board.models})  # model-00: 275 matches
    plan = same_plans(monkeypatch, lambda: plan_matches(log, subs, JUDGES, 30, seed=2))
    assert (plan["phase"] == "active").all()  # whom a model met does not hold it back
    assert plan.attrs["phase_reason"].startswith("no balanced phase: every model meets")


def test_models_below_their_exposure_target_are_named(monkeypatch):
    board = make_board(12, 30, seed=4, judges=JUDGES)
    subs = board.submissions[["model", "task_id"]]
    per_model = {m: 25 for m in board.models} | {"model-05": 4, "model-09": 12}
    log = star_log(board, per_model)
    plan = same_plans(monkeypatch, lambda: plan_matches(log, subs, JUDGES, 30, seed=2))
    assert plan.attrs["phase_reason"] == (
        "balanced phase: 1 of 12 models are below the exposure target of 10 matches on 10 "
        "distinct tasks (or all of a model's tasks): model-05 (4 matches, 4 tasks)")
    first = plan[plan["phase"] == "balanced"]
    assert len(first) == 6  # model-05 plays until it has 10 matches
    assert ((first["model_a"] == "model-05") | (first["model_b"] == "model-05")).all()
    assert (plan["phase"].iloc[len(first):] == "active").all()
