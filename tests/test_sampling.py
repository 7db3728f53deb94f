"""Tests of match planning: balance rules, determinism, reports, errors and the active criterion."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import ratings
import sampling.judges.assign as judges_module
from sampling import PlanWarning, check_balance, fit_for_planning, plan_matches
from sampling.design.simulate import SimulatedBoard, judge_matches, make_board
from sampling.judges.assign import assign_judges, level_bounds
from sampling.picks.criteria import add_comparison, comparison_weight, trace_reduction

JUDGES = ["j1", "j2", "j3"]


def subs_for(models, tasks) -> pd.DataFrame:
    return pd.DataFrame([(m, t) for m in models for t in tasks], columns=["model", "task_id"])


def run_batches(board, n_batches, n, *, seed=0, **kw):
    """Plan and judge ``n_batches`` batches; return the log and each batch's balance report."""
    subs = board.submissions[["model", "task_id"]]
    log, reports = None, []
    for k in range(n_batches):
        plan = plan_matches(log, subs, board.judges, n, seed=seed + k, **kw)
        reports.append(check_balance(plan, log, subs, board.judges))
        verdicts = judge_matches(plan, board, seed=100 + k)
        log = verdicts if log is None else pd.concat([log, verdicts], ignore_index=True)
    return log, pd.DataFrame(reports)


def assert_balanced(report: pd.DataFrame) -> None:
    assert (report["invalid_matches"] == 0).all()
    assert (report["premature_repeats"] == 0).all()
    cols = ["task_spread_plan", "task_spread_total", "judge_spread_plan", "judge_spread_total"]
    assert (report[cols] <= 1).all().all(), report[cols].max()
    # per model, judges are level where an assignment exists (not always: see
    # sampling.judges.assign)
    assert (report["judge_model_spread_total"] <= 2).all()
    assert (report["judge_model_spread_total"] <= 1).mean() >= 0.8


# --- balance rules -------------------------------------------------------------------------------


def test_batches_keep_every_balance_rule():
    board = make_board(12, 15, seed=1, judges=JUDGES)
    log, report = run_batches(board, 6, 40, anchor="model-03")
    assert_balanced(report)
    plan = plan_matches(log, board.submissions, JUDGES, 40, seed=9, anchor="model-03")
    assert set(plan["phase"]) == {"active"}
    assert plan["score"].notna().all() and (plan["score"] > 0).all()


def test_first_batch_is_connected_and_fits():
    board = make_board(30, 20, seed=2, judges=JUDGES)
    plan = plan_matches(None, board.submissions, JUDGES, 30, seed=0)
    assert (plan["phase"] == "balanced").all() and plan["score"].isna().all()
    edges = pd.concat(
        [
            plan[["model_a", "model_b"]],
            plan[["model_b", "model_a"]].set_axis(["model_a", "model_b"], axis=1),
        ]
    )
    seen, todo = set(), [plan["model_a"].iloc[0]]  # graph search over the planned pairs
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(edges.loc[edges["model_a"] == m, "model_b"])
    assert seen == set(board.models)
    counts = pd.concat([plan["model_a"], plan["model_b"]]).value_counts()
    assert counts.min() == counts.max() == 2  # one cycle through all models
    verdicts = judge_matches(plan, board, seed=0)
    r = fit_for_planning(verdicts, anchor="model-00")  # exists (ridge if someone never lost)
    assert len(r.models) == 30


@pytest.mark.parametrize(
    ("n_models", "n_tasks", "n"),
    [(2, 3, 3), (3, 1, 3), (3, 2, 6), (4, 3, 5), (5, 1, 10)],
)
def test_small_boards(n_models, n_tasks, n):
    models = [f"m{i}" for i in range(n_models)]
    subs = subs_for(models, [f"t{k}" for k in range(n_tasks)])
    plan = plan_matches(None, subs, ["j1", "j2"], n, seed=3)
    assert len(plan) == n
    keys = {(t, *sorted((a, b))) for t, a, b in plan[["task_id", "model_a", "model_b"]].values}
    assert len(keys) == n  # no (task, pair) twice in one plan
    report = check_balance(plan, None, subs, ["j1", "j2"])
    assert report["premature_repeats"] == 0 and report["invalid_matches"] == 0
    assert report["task_spread_plan"] <= 1 and report["judge_spread_plan"] <= 1


def test_one_task_uses_each_pair_once_then_starts_a_new_round():
    subs = subs_for(list("abcd"), ["t"])
    plan = plan_matches(None, subs, ["j"], 6, seed=0)
    pairs = {tuple(sorted(p)) for p in plan[["model_a", "model_b"]].values}
    assert len(pairs) == 6
    log = plan.assign(winner="A")
    again = plan_matches(log, subs, ["j"], 6, seed=1, phase="balanced")
    assert {tuple(sorted(p)) for p in again[["model_a", "model_b"]].values} == pairs
    assert check_balance(again, log, subs, ["j"])["premature_repeats"] == 0


def test_missing_submissions_are_respected():
    board = make_board(10, 8, seed=4, coverage=0.6, judges=JUDGES)
    _, report = run_batches(board, 4, 25)
    assert (report["invalid_matches"] == 0).all() and (report["premature_repeats"] == 0).all()
    assert (report["task_spread_total"] <= 1).all()


def test_history_repeats_are_counted():
    subs = subs_for(["a", "b", "c"], ["t1", "t2"])
    log = pd.DataFrame({"model_a": ["a", "a", "b"], "model_b": ["b", "c", "c"],
                        "task_id": ["t1", "t1", "t1"], "winner": ["A", "B", "A"]})  # fmt: skip
    plan = plan_matches(log, subs, ["j"], 3, seed=0)
    assert (plan["task_id"] == "t2").all()  # every pair already played t1


def test_judges_balanced_with_history_and_a_b_order_random():
    board = make_board(8, 30, seed=5, judges=["x", "y"])
    log, report = run_batches(board, 5, 24)
    assert (report["judge_spread_total"] <= 1).all()
    assert (report["judge_model_spread_total"] <= 1).all()
    first = pd.concat([log["model_a"], log["model_b"]]).value_counts()
    as_a = log["model_a"].value_counts().reindex(first.index) / first
    assert 0.25 < as_a.mean() < 0.75 and as_a.std() > 0


def test_judge_assignment_levels_each_model():
    rng = np.random.default_rng(0)
    judge_n, total = np.zeros((20, 3), dtype=np.int64), np.zeros(3, dtype=np.int64)
    for _ in range(5):
        a = rng.integers(0, 20, 60)
        b = (a + rng.integers(1, 20, 60)) % 20
        out = assign_judges(a, b, judge_n, total, rng)
        np.add.at(judge_n, (a, out), 1)
        np.add.at(judge_n, (b, out), 1)
        total += np.bincount(out, minlength=3)
        assert np.ptp(total) <= 1 and np.ptp(judge_n, axis=1).max() <= 1


def test_floor_is_each_models_best_split():
    rng = np.random.default_rng(3)
    h = rng.integers(0, 8, (40, 3))
    d = rng.integers(0, 9, 40)
    _, _, lo_t, hi_t = level_bounds(h, d)
    q = np.repeat((d // 3)[:, None], 3, axis=1)
    soft = ((lo_t, hi_t, 10), (q, q + 1, 1))
    floor = judges_module._floor(d, soft)
    for m in range(40):  # every split of d[m] matches among three judges
        best = min(
            sum(10 * max(0, x[j] - hi_t[m, j], lo_t[m, j] - x[j])
                + max(0, x[j] - q[m, j] - 1, q[m, j] - x[j]) for j in range(3))
            for x in itertools.product(range(d[m] + 1), repeat=3) if sum(x) == d[m]
        )  # fmt: skip
        assert floor[m] == best


def test_large_plans_repair_on_the_weighted_cost(monkeypatch):
    """Above the integer programme's size the repairs lower the weighted cost from the greedy
    start, keep the panel level, and stop at the lower bound when they reach it."""
    rng = np.random.default_rng(1)
    m, n = 30, 1_500  # 4,500 match x judge variables
    judge_n = rng.integers(20, 40, (m, 3))  # a history levelled badly per model
    total = np.full(3, judge_n.sum() // 3)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    monkeypatch.setattr(judges_module, "_milp", None)  # never called at this size
    out = assign_judges(a, b, judge_n, total, np.random.default_rng(0))
    start = judges_module._greedy(
        a, b, *level_bounds(judge_n, np.bincount(a, minlength=m) + np.bincount(b, minlength=m))[:2],
        *(x[0][None, :] for x in level_bounds(total[None, :], np.array([n]))[:2]),
        np.random.default_rng(0).permutation(3), np.zeros(n, dtype=np.int64))  # fmt: skip
    x = np.zeros_like(judge_n)
    np.add.at(x, (a, out), 1)
    np.add.at(x, (b, out), 1)
    deg = x.sum(axis=1)
    _, _, lo_t, hi_t = level_bounds(judge_n, deg)
    q = np.repeat((deg // 3)[:, None], 3, axis=1)
    soft = ((lo_t, hi_t, 10), (q, q + 1, 1))

    def cost(col):
        y = np.zeros_like(judge_n)
        np.add.at(y, (a, col), 1)
        np.add.at(y, (b, col), 1)
        return int(judges_module._model_cost(y, soft).sum())

    assert np.ptp(np.bincount(out, minlength=3)) <= 1
    assert judges_module._floor(deg, soft).sum() <= cost(out) < cost(start)
    np.testing.assert_array_equal(out, assign_judges(a, b, judge_n, total,
                                                     np.random.default_rng(0)))  # fmt: skip


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_compiled_weighted_repair_is_the_python_repair(monkeypatch, seed):
    """The compiled repair of large plans (:mod:`sampling.judges.assign_numba`) recolours what the
    Python repair does, with and without routing (matches that allow only some judges)."""
    rng = np.random.default_rng(seed)
    m, n = 25, 700  # above the integer programme's size
    judge_n = rng.integers(10, 40, (m, 3))
    total = judge_n.sum(axis=0) // 2
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    allowed = rng.random((n, 3)) < 0.8
    allowed[np.arange(n), rng.integers(0, 3, n)] = True
    for routing in (None, allowed):
        outs = []
        for compiled in (True, False):
            monkeypatch.setattr(judges_module, "_compiled_repair", lambda c=compiled: c)
            outs.append(assign_judges(a, b, judge_n, total, np.random.default_rng(seed),
                                      allowed=routing))  # fmt: skip
        np.testing.assert_array_equal(outs[0], outs[1])
        monkeypatch.setattr(judges_module, "_weighted_repair", lambda *args: None)
        unrepaired = assign_judges(a, b, judge_n, total, np.random.default_rng(seed),
                                   allowed=routing)  # fmt: skip
        assert (unrepaired != outs[0]).any()  # the repairs recoloured some matches
        monkeypatch.undo()


def test_water_level_is_the_highest_level_the_plan_reaches():
    rng = np.random.default_rng(4)
    h = rng.integers(0, 30, (200, 3))
    d = rng.integers(0, 40, 200)
    level = judges_module._water_level(h, d)
    reach = lambda f: np.maximum(f[:, None] - h, 0).sum(axis=1)  # noqa: E731
    assert (reach(level) <= d).all() and (reach(level + 1) > d).all()


def test_level_bounds():
    lo, hi, lo_t, hi_t = level_bounds(np.array([[3, 2, 2], [0, 0, 0]]), np.array([4, 2]))
    # (3, 2, 2) + 4 matches: totals level at 3/4, so the judge ahead gets at most one more;
    # the plan itself is level too (1 or 2 each)
    assert lo_t.tolist() == [[0, 1, 1], [0, 0, 0]] and hi_t.tolist() == [[1, 2, 2], [1, 1, 1]]
    assert lo.tolist() == [[1, 1, 1], [0, 0, 0]] and hi.tolist() == [[1, 2, 2], [1, 1, 1]]


# --- determinism ---------------------------------------------------------------------------------


def test_same_seed_same_plan_and_row_order_does_not_matter():
    board = make_board(9, 6, seed=6, judges=JUDGES)
    log, _ = run_batches(board, 2, 20)
    subs = board.submissions[["model", "task_id"]]
    one = plan_matches(log, subs, JUDGES, 20, seed=11)
    two = plan_matches(log.sample(frac=1.0, random_state=1), subs.iloc[::-1], JUDGES, 20, seed=11)
    pd.testing.assert_frame_equal(one, two)
    other = plan_matches(log, subs, JUDGES, 20, seed=12)
    assert not one[["task_id", "model_a", "model_b", "judge"]].equals(
        other[["task_id", "model_a", "model_b", "judge"]]
    )


# --- reports and errors --------------------------------------------------------------------------


def test_models_without_submissions_are_reported():
    subs = subs_for(["a", "b", "c"], ["t1", "t2"])
    log = pd.DataFrame({"model_a": ["a", "old", "b"], "model_b": ["old", "b", "a"],
                        "task_id": ["t1", "t1", "t2"], "winner": ["A", "B", "tie"]})  # fmt: skip
    with pytest.warns(PlanWarning, match=r"appear in the verdicts but have no submissions.*'old'"):
        plan = plan_matches(log, subs, ["j"], 4, seed=0, phase="balanced")
    assert "old" not in set(plan["model_a"]) | set(plan["model_b"])

    listed = pd.concat([subs, pd.DataFrame({"model": ["new"], "task_id": [None]})])
    with pytest.warns(PlanWarning, match=r"listed in `submissions` without any task.*'new'"):
        plan_matches(None, listed, ["j"], 2, seed=0)

    alone = pd.concat([subs, pd.DataFrame({"model": ["solo"], "task_id": ["t9"]})])
    with pytest.warns(PlanWarning, match=r"share no task with any other model.*'solo'"):
        plan_matches(None, alone, ["j"], 2, seed=0)


def test_split_board_is_reported():
    subs = pd.concat([subs_for(["a", "b"], ["t1"]), subs_for(["c", "d"], ["t2"])])
    with pytest.warns(PlanWarning, match=r"split into 2 groups"):
        plan_matches(None, subs, ["j"], 2, seed=0)


def test_infeasible_request_says_how_many_candidates():
    subs = subs_for(["a", "b", "c"], ["t1", "t2"])
    with pytest.raises(ValueError, match=r"Cannot plan 7 matches: only 6 distinct \(task, model "
                                         r"pair\) candidates exist"):  # fmt: skip
        plan_matches(None, subs, ["j"], 7, seed=0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n": 0}, r"`n` must be an integer >= 1; got 0"),
        ({"seed": None}, r"`seed` must be a non-negative integer .*got None"),
        ({"phase": "greedy"}, r"`phase` must be 'auto', 'balanced' or 'active'; got 'greedy'"),
        ({"judges": []}, r"`judges` must be a non-empty list"),
        ({"judges": ["x", "x"]}, r"`judges` must be distinct; \['x'\]"),
        ({"phase": "active"}, r"phase='active'` needs a fit, but there are no verdicts"),
        ({"anchor": "a=high"}, r"`anchor` must look like 'NAME=RATING'"),
    ],
)
def test_bad_arguments(kwargs, match):
    args = {"verdicts": None, "submissions": subs_for(["a", "b"], ["t"]), "judges": ["j"],
            "n": 1, "seed": 0} | kwargs  # fmt: skip
    with pytest.raises(ValueError, match=match):
        plan_matches(**args)


def test_bad_inputs():
    with pytest.raises(ValueError, match=r"Neither `submissions` nor verdicts were given"):
        plan_matches(None, None, ["j"], 1, seed=0)
    with pytest.raises(ValueError, match=r"Column\(s\) \['task_id'\] not found in submissions"):
        plan_matches(None, pd.DataFrame({"model": ["a"]}), ["j"], 1, seed=0)
    with pytest.raises(ValueError, match=r"Column\(s\) \['task_id'\] not found in verdicts"):
        plan_matches(pd.DataFrame({"model_a": ["a"], "model_b": ["b"], "winner": ["A"]}),
                     None, ["j"], 1, seed=0)  # fmt: skip
    with pytest.raises(TypeError, match=r"`judges` must be a list of names, not a string"):
        plan_matches(None, subs_for(["a", "b"], ["t"]), "j1,j2", 1, seed=0)
    log = pd.DataFrame({"model_a": ["a", "b"], "model_b": ["b", "a"], "task_id": ["t", "t"],
                        "winner": ["A", "A"], "scope": ["x", "y"]})  # fmt: skip
    with pytest.raises(ValueError, match=r"hold 2 scopes \['x', 'y'\].*Choose one with `scope`"):
        plan_matches(log, None, ["j"], 1, seed=0)
    plan = plan_matches(log, None, ["j"], 1, seed=0, scope="x", phase="balanced")
    assert len(plan) == 1
    new_scope = r"Scope 'z' has no verdicts yet, .* \(the log holds scopes \['x', 'y'\]\)"
    with pytest.warns(PlanWarning, match=new_scope):
        with pytest.raises(ValueError, match=r"Neither `submissions` nor verdicts were given"):
            plan_matches(log, None, ["j"], 1, seed=0, scope="z")
    selfie = log.assign(model_b=["b", "b"], scope="x")
    with pytest.raises(
        ValueError, match=r"1 verdict\(s\) pit a model against itself, at rows \[1\]"
    ):
        plan_matches(selfie, None, ["j"], 1, seed=0)
    gaps = log.assign(task_id=["t", None], scope="x")
    with pytest.raises(
        ValueError, match=r"column 'task_id' has 1 missing value\(s\) at rows \[1\]"
    ):
        plan_matches(gaps, None, ["j"], 1, seed=0)


def test_active_phase_needs_verdicts_for_every_model():
    subs = subs_for(["a", "b", "c"], ["t1", "t2"])
    log = pd.DataFrame({"model_a": ["a", "b"], "model_b": ["b", "a"], "task_id": ["t1", "t2"],
                        "winner": ["A", "A"]})  # fmt: skip
    with pytest.raises(ValueError, match=r"cannot score 1 model\(s\) without verdicts: \['c'\]"):
        plan_matches(log, subs, ["j"], 2, seed=0, phase="active")


# --- the active criterion ------------------------------------------------------------------------


def test_trace_reduction_matches_explicit_inverse():
    rng = np.random.default_rng(3)
    m = 5
    x = rng.normal(size=(40, m))
    hess = x.T @ x  # any SPD precision
    free = np.arange(1, m)  # model 0 is the anchor
    cov = np.zeros((m, m))
    cov[np.ix_(free, free)] = np.linalg.inv(hess[np.ix_(free, free)])
    w = comparison_weight(rng.normal(size=m))
    red = trace_reduction(cov, w)
    for i, j in [(0, 3), (1, 2), (4, 2)]:
        e = np.zeros(m)
        e[i], e[j] = 1.0, -1.0
        new = np.zeros((m, m))
        h2 = hess + w[i, j] * np.outer(e, e)
        new[np.ix_(free, free)] = np.linalg.inv(h2[np.ix_(free, free)])
        np.testing.assert_allclose(add_comparison(cov, i, j, w[i, j]), new, atol=1e-12)
        assert red[i, j] == pytest.approx(np.trace(cov) - np.trace(new), rel=1e-10)
    assert np.allclose(red, red.T) and np.all(np.diag(red) == 0)


def elo_board(elo, n_tasks=40) -> SimulatedBoard:
    """A board with the given true Elo, every model on every task, noiseless judges."""
    models = [f"m{i}" for i in range(len(elo))]
    tasks = [f"t{k:02d}" for k in range(n_tasks)]
    strength = pd.Series(np.asarray(elo, dtype=float) / ratings.Ratings.scale, index=models)
    return SimulatedBoard(strength, subs_for(models, tasks).assign(effect=0.0),
                          pd.Series(1.0, index=JUDGES))  # fmt: skip


def test_active_phase_picks_close_pairs():
    # Two tight clusters 500 Elo apart: 12 of the 28 pairs (43%) are within a cluster.
    board = elo_board([0, 20, 40, 60, 500, 520, 540, 560])
    log, _ = run_batches(board, 3, 30, phase="balanced")
    plan = plan_matches(log, board.submissions, JUDGES, 40, seed=1, phase="active")
    elo = board.elo()
    gap = (plan["model_a"].map(elo) - plan["model_b"].map(elo)).abs()
    assert (gap < 100).mean() >= 0.75
    assert plan["score"].iloc[0] == plan["score"].max()


def test_a_model_that_never_won_is_still_picked():
    # m0 is 1500 Elo below the rest; the planner's fit (ridge while the MLE is missing) keeps
    # its large variance, so it keeps being compared with its nearest opponents.
    board = elo_board([-1500, 0, 10, 20, 30, 40])
    log, _ = run_batches(board, 2, 15, phase="balanced")
    m0_won = ((log["model_a"] == "m0") & (log["winner"] == "A")) | (
        (log["model_b"] == "m0") & (log["winner"] == "B")
    )
    assert (log["model_a"] == "m0").any() and not m0_won.any()
    plan = plan_matches(log, board.submissions, JUDGES, 30, seed=0, phase="active")
    assert (plan["model_a"] == "m0").sum() + (plan["model_b"] == "m0").sum() >= 3


def test_active_batch_spreads_over_pairs():
    board = make_board(6, 50, seed=8, judges=JUDGES)
    log, _ = run_batches(board, 2, 30)
    plan = plan_matches(log, board.submissions, JUDGES, 30, seed=3, phase="active")
    pairs = plan[["model_a", "model_b"]].apply(lambda r: tuple(sorted(r)), axis=1)
    assert pairs.nunique() >= 5 and pairs.value_counts().max() <= 15


def test_fitted_is_used_and_reanchored():
    board = make_board(6, 10, seed=9, judges=JUDGES)
    log, _ = run_batches(board, 2, 20)
    fit = fit_for_planning(log)
    one = plan_matches(log, None, JUDGES, 10, seed=0, phase="active", anchor="model-02",
                       fitted=fit)  # fmt: skip
    two = plan_matches(log, None, JUDGES, 10, seed=0, phase="active", anchor="model-02")
    pd.testing.assert_frame_equal(one, two)
    with pytest.raises(ValueError, match=r"Anchor model 'nope' is not in the fitted ratings"):
        plan_matches(log, None, JUDGES, 5, seed=0, phase="active", anchor="nope", fitted=fit)


def test_fit_for_planning_falls_back_to_ridge():
    log = pd.DataFrame({"model_a": ["a", "a", "b"], "model_b": ["b", "c", "c"],
                        "winner": ["A", "A", "A"]})  # fmt: skip
    with pytest.raises(ratings.NonIdentifiableError):
        ratings.fit(log)
    r = fit_for_planning(log)
    assert r.penalty == pytest.approx(0.1)
    with pytest.raises(ratings.NonIdentifiableError):
        fit_for_planning(log, fit_options={"model": ratings.BT(penalty=0.0)})


@pytest.mark.slow
def test_planning_memory_is_not_quadratic_in_tasks_x_pairs():
    """300 models on 1,000 tasks: the M x M x T tables planning used to hold (int32 counts,
    candidate and fresh masks, about 24 bytes per cell) would be 2.2 GB."""
    import tracemalloc

    from sampling.board.inputs import plan_memory

    m, t, n_log = 300, 1_000, 3_000
    models = np.array([f"m{k:03d}" for k in range(m)], dtype=object)
    tasks = np.array([f"t{k:04d}" for k in range(t)], dtype=object)
    subs = pd.DataFrame({"model": np.repeat(models, t), "task_id": np.tile(tasks, m)})
    rng = np.random.default_rng(0)
    a = rng.integers(0, m, n_log)
    b = (a + rng.integers(1, m, n_log)) % m
    log = pd.DataFrame({"model_a": models[a], "model_b": models[b],
                        "task_id": tasks[rng.integers(0, t, n_log)],
                        "winner": np.where(a < b, "A", "B"),
                        "judge": rng.choice(JUDGES, n_log)})  # fmt: skip
    tracemalloc.start()
    try:
        plan = plan_matches(log, subs, JUDGES, 20, seed=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(plan) == 20
    assert peak < plan_memory(m, t, n_log) < 24 * m * m * t / 20
