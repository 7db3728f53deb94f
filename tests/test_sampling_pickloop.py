"""The compiled pick loop (:mod:`sampling.picks.picker_numba`) against the NumPy picker, plan
for plan.

Plans whose every pick is active are made by one numba kernel when large; the
:class:`sampling.picks.picker.Picker` (itself checked against a plain walk of the rule in
``test_sampling_picks.py``) is its twin. Both paths must give the same plan row for row, for
the same seed, on boards that reach the branches of the rule: the share cap and its
relaxation, both objectives, routing, forfeits, the looser task levels, and a plan whose
active pairs run out (the kernel hands over to the picker from the start).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sampling_runs import grow

import sampling.design.plan
import sampling.picks.compiled
import sampling.picks.picker
from sampling import plan_matches
from sampling.design.simulate import judge_matches, make_board, uniform_matches

JUDGES = ["j1", "j2", "j3"]


@pytest.fixture
def runs(monkeypatch):
    """Record what each call of the compiled loop returned (None: handed back)."""
    out = []
    original = sampling.picks.picker.Picker.run_active

    def spy(self, n):
        res = original(self, n)
        out.append(res)
        return res

    monkeypatch.setattr(sampling.picks.picker.Picker, "run_active", spy)
    return out


def both_paths(monkeypatch, make_plan) -> pd.DataFrame:
    """Plan with the compiled loop and with the NumPy picker; assert the plans are equal."""
    with monkeypatch.context() as m:
        m.setattr(sampling.design.plan, "_compiled_picks", lambda picker, n, n_models: True)
        compiled = make_plan()
    with monkeypatch.context() as m:
        m.setattr(sampling.design.plan, "_compiled_picks", lambda picker, n, n_models: False)
        numpy = make_plan()
    pd.testing.assert_frame_equal(compiled, numpy)
    return compiled


@pytest.fixture(scope="module")
def grown():
    board = make_board(12, 10, seed=2, judges=JUDGES)
    subs = board.submissions[["model", "task_id"]]
    return board, subs, grow(board, subs, 3, 60)


CASES = [("pairwise", 3.0), ("pairwise", 1.0), ("anchored", 1.0), ("anchored", None)]


@pytest.mark.parametrize("objective,max_share", CASES)
def test_active_plans_equal_with_and_without_the_share_cap(monkeypatch, runs, grown, objective,
                                                           max_share):  # fmt: skip
    _, subs, log = grown
    plan = both_paths(monkeypatch, lambda: plan_matches(
        log, subs, JUDGES, 90, seed=3, anchor="model-04", objective=objective,
        max_share=max_share))  # fmt: skip
    assert runs[0] is not None and len(runs) == 1  # the loop made the plan
    assert (plan["phase"] == "active").all()


def test_routing_and_explicit_active_phase(monkeypatch, runs, grown):
    _, subs, log = grown
    route = pd.DataFrame({"task_id": [f"task-{k:03d}" for k in range(4)], "judge": "j3"})
    both_paths(monkeypatch, lambda: plan_matches(log, subs, JUDGES, 70, seed=8, phase="active",
                                                 task_judges=route))  # fmt: skip
    assert runs[0] is not None


def test_forfeits(monkeypatch, runs, grown):
    _, subs, log = grown
    subs = subs.copy()
    subs["failed"] = np.where(np.random.default_rng(0).random(len(subs)) < 0.15, "true", "")
    plan = both_paths(monkeypatch, lambda: plan_matches(log, subs, JUDGES, 60, seed=1,
                                                        forfeits=True))  # fmt: skip
    assert runs[0] is not None
    assert (plan["judge"] == "deterministic").any()


def test_looser_task_levels(monkeypatch, runs):
    uses = []
    original = sampling.picks.picker.slack_levels

    def counted(*args):
        for mask in original(*args):
            uses.append(1)
            yield mask

    monkeypatch.setattr(sampling.picks.picker, "slack_levels", counted)
    board = make_board(5, 4, seed=0, judges=JUDGES, coverage=0.7)
    subs = board.submissions[["model", "task_id"]]
    log = grow(board, subs, 3, 8)
    both_paths(monkeypatch, lambda: plan_matches(
        log, subs, JUDGES, 15, seed=1, anchor="model-00", objective="anchored",
        max_share=None, phase="active"))  # fmt: skip
    assert uses  # the NumPy picker went past the strict levels
    assert runs[0] is not None


def test_no_active_pair_left_hands_over_to_the_picker(monkeypatch, runs):
    """An unrated model (min_matches=0: no balanced phase) is not scored; once the rated pairs
    have played every task, the next pick is balanced, which only the picker makes."""
    board = make_board(4, 2, seed=0, judges=JUDGES)
    subs = board.submissions[["model", "task_id"]]
    rated = subs[subs["model"] != "model-03"]
    log = grow(board, rated, 1, 6)
    plan = both_paths(monkeypatch, lambda: plan_matches(log, subs, JUDGES, 8, seed=0,
                                                        min_matches=0))  # fmt: skip
    assert runs == [None]
    assert set(plan["phase"]) == {"active", "balanced"}


def test_a_wider_board_where_most_pairs_share_a_level(monkeypatch, runs):
    """30 models (435 pairs): most picks score a whole level row by row and skip rows that
    cannot win, some pick among the few pairs of a lower level one by one."""
    board = make_board(30, 40, seed=4, judges=JUDGES)
    subs = board.submissions[["model", "task_id"]]
    log = judge_matches(uniform_matches(subs, board.judges, 3000, seed=4), board, seed=4)
    both_paths(monkeypatch, lambda: plan_matches(log, subs, JUDGES, 200, seed=5))
    assert runs[0] is not None


@pytest.mark.parametrize("cached", [False, True])
def test_large_plans_take_the_loop_only_when_it_runs_without_compiling(monkeypatch, runs,
                                                                       cached):  # fmt: skip
    """A plan large enough for the loop takes it when the loop is loaded or cached, and
    otherwise makes the same plan with the picker (the loop is not compiled for it)."""
    board = make_board(30, 40, seed=4, judges=JUDGES)
    subs = board.submissions[["model", "task_id"]]
    log = judge_matches(uniform_matches(subs, board.judges, 3000, seed=4), board, seed=4)
    n = 300
    monkeypatch.setattr(sampling.design.plan, "KERNEL_MIN_WORK", n * 30)  # a large plan here
    monkeypatch.setattr(sampling.picks.compiled, "ready", lambda: cached)
    with monkeypatch.context() as m:
        m.setattr(sampling.picks.compiled, "loaded", lambda: False)
        plan = plan_matches(log, subs, JUDGES, n, seed=5)
    assert (runs == [] if not cached else runs[0] is not None)
    with sampling.picks.compiled.forced():
        pd.testing.assert_frame_equal(plan, plan_matches(log, subs, JUDGES, n, seed=5))
    assert runs[-1] is not None  # the loop made the second plan


def test_background_compilation_is_skipped_when_not_needed(monkeypatch):
    """No background process when it is turned off or the loops are ready; the lock file lies
    in the loop's numba cache directory."""
    import sampling.warmup

    monkeypatch.setenv(sampling.warmup.ENV, "0")
    assert sampling.warmup.compile_in_background() is False
    monkeypatch.setenv(sampling.warmup.ENV, "1")
    monkeypatch.setattr(sampling.picks.compiled, "ready", lambda: True)
    assert sampling.warmup.compile_in_background() is False
    assert sampling.warmup.lock_path().parent.is_dir()
    assert not sampling.warmup.compiling()


def test_the_picker_without_its_stale_task_table(monkeypatch, runs):
    """Boards too large for the table of every pair's stale tasks rebuild each refreshed row's
    from its cells: the same plan as the compiled loop."""
    import sampling.board.feasibility

    monkeypatch.setattr(sampling.board.feasibility, "GONE_MAX_BYTES", 0)
    board = make_board(30, 40, seed=4, judges=JUDGES)
    subs = board.submissions[["model", "task_id"]]
    log = judge_matches(uniform_matches(subs, board.judges, 3000, seed=4), board, seed=4)
    both_paths(monkeypatch, lambda: plan_matches(log, subs, JUDGES, 200, seed=5))
