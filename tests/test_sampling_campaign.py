"""Planning a running campaign: judge routing, several scopes, new models, the objective and
the share bound, failed submissions. Through the ``ratings next`` CLI where the README shows it.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from sampling_runs import grow

import ratings
from ratings.cli.app import main
from sampling import PlanWarning, check_balance, panel_targets, plan_matches, plan_scopes
from sampling.design.oracle import comparison_information, oracle_matches
from sampling.design.simulate import judge_matches, make_board, pairwise_half_width
from sampling.picks.criteria import add_comparison, centred, comparison_weight, trace_reduction
from sampling.picks.picker import ladder_point, share_cap

JUDGES = ["j1", "j2", "j3"]


def opponents(plan: pd.DataFrame, model: str) -> list[str]:
    """The opponents of ``model`` in plan order."""
    rows = plan[(plan["model_a"] == model) | (plan["model_b"] == model)]
    return np.where(rows["model_a"] == model, rows["model_b"], rows["model_a"]).tolist()


# --- 1. routing ----------------------------------------------------------------------------------


def best_spread_by_enumeration(allowed: np.ndarray, total: np.ndarray) -> int:
    """The smallest spread of the panel's totals over every assignment (brute force)."""
    choices = [np.flatnonzero(row) for row in allowed]
    return min(int(np.ptp(total + np.bincount(c, minlength=total.size)))
               for c in itertools.product(*choices))  # fmt: skip


@pytest.mark.parametrize("seed", range(40))
def test_panel_targets_reach_the_best_spread(seed):
    rng = np.random.default_rng(seed)
    n_judges, n = int(rng.integers(2, 5)), int(rng.integers(1, 8))
    allowed = rng.random((n, n_judges)) < 0.5
    allowed[np.arange(n), rng.integers(0, n_judges, n)] = True
    total = rng.integers(0, 5, n_judges)
    target = panel_targets(allowed, total, rng)
    assert target.plan.sum() == n
    assert np.ptp(total + target.plan) == best_spread_by_enumeration(allowed, total)
    # every group's quota uses only its allowed judges and adds up to the group's size
    sets = np.unique(allowed, axis=0)
    assert not (target.quota[~sets]).any()
    assert (target.quota.sum(axis=1) == np.bincount(target.group, minlength=len(sets))).all()


def routed_board():
    board = make_board(12, 30, seed=3, judges=JUDGES)
    video = [f"task-{k:03d}" for k in range(10)]  # a third of the tasks: only j3 handles them
    return board, video, pd.DataFrame({"task_id": video, "judge": "j3"})


def test_routing_sends_tasks_to_their_judges_and_levels_the_rest():
    board, video, route = routed_board()
    subs = board.submissions[["model", "task_id"]]
    log = None
    for k in range(4):
        plan = plan_matches(log, subs, JUDGES, 60, seed=k, task_judges=route)
        on_video = plan["task_id"].isin(video)
        assert (plan.loc[on_video, "judge"] == "j3").all()
        report = check_balance(plan, log, subs, JUDGES, task_judges=route)
        assert report["routing_violations"] == 0 and report["invalid_matches"] == 0
        # the panel's totals are as even as the routing allows: every split of the free
        # matches over the three judges, the forced ones on j3 (enumerated here)
        seen = pd.Series(dtype=np.int64) if log is None else log["judge"].value_counts()
        h1, h2, h3 = seen.reindex(JUDGES, fill_value=0).to_numpy()
        forced, free = int(on_video.sum()), int((~on_video).sum())
        best = min(np.ptp([h1 + x, h2 + free - x - y, h3 + forced + y])
                   for y in range(free + 1) for x in range(free - y + 1))  # fmt: skip
        assert report["judge_spread_total_best"] == best
        assert report["judge_spread_total"] == best
        v = judge_matches(plan, board, seed=k)
        log = v if log is None else pd.concat([log, v], ignore_index=True)
    counts = log["judge"].value_counts()
    assert counts.max() - counts.min() <= 1  # video is 1/3 of tasks: the panel can stay level


def test_routing_from_a_mapping_and_bad_tables():
    board, video, route = routed_board()
    subs = board.submissions[["model", "task_id"]]
    mapping = {t: ["j2", "j3"] for t in video}
    plan = plan_matches(None, subs, JUDGES, 40, seed=1, task_judges=mapping)
    assert plan.loc[plan["task_id"].isin(video), "judge"].isin(["j2", "j3"]).all()
    with pytest.raises(ValueError, match=r"names judge\(s\) \['jx'\] that are not in the panel"):
        plan_matches(None, subs, JUDGES, 5, seed=0, task_judges=route.assign(judge="jx"))
    with pytest.raises(ValueError, match=r"1 row\(s\) with an empty 'judge', at rows \[2\]"):
        plan_matches(None, subs, JUDGES, 5, seed=0,
                     task_judges=route.assign(judge=["j3", "j3", None] + ["j3"] * 7))  # fmt: skip
    with pytest.raises(ValueError, match=r"Column\(s\) \['judge'\] not found in `task_judges`"):
        plan_matches(None, subs, JUDGES, 5, seed=0, task_judges=route[["task_id"]])
    with pytest.warns(PlanWarning, match=r"1 task\(s\) in `task_judges` have no submissions"):
        plan_matches(None, subs, JUDGES, 5, seed=0,
                     task_judges=pd.concat([route, pd.DataFrame({"task_id": ["nope"],
                                                                 "judge": ["j1"]})]))  # fmt: skip


def test_cli_task_judges(tmp_path, capsys):
    board, video, route = routed_board()
    subs, routing, out = tmp_path / "subs.csv", tmp_path / "route.csv", tmp_path / "next.csv"
    board.submissions[["model", "task_id"]].to_csv(subs, index=False)
    route.to_csv(routing, index=False)
    log = tmp_path / "log.csv"
    log.write_text("model_a,model_b,winner,task_id,judge\n")
    argv = ["next", str(log), "--submissions", str(subs), "--judges", "j1,j2,j3", "--n", "45",
            "--seed", "2", "--task-judges", str(routing), "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    plan = pd.read_csv(out)
    assert (plan.loc[plan["task_id"].isin(video), "judge"] == "j3").all()
    bad = tmp_path / "bad.csv"
    route.assign(judge="video-judge").to_csv(bad, index=False)
    assert main([*argv[:-4], "--task-judges", str(bad), "--out", str(out)]) == 2
    assert "['video-judge'] that are not in the panel" in capsys.readouterr().err


# --- 2. scopes -----------------------------------------------------------------------------------


def test_scope_without_verdicts_is_an_empty_log_and_scopes_plan_together():
    board = make_board(8, 12, seed=4, judges=JUDGES)
    subs = board.submissions[["model", "task_id"]]
    log = grow(board, subs, 3, 30).assign(scope="analytical")
    with pytest.warns(PlanWarning, match=r"Scope 'presentation' has no verdicts yet"):
        plan = plan_scopes(log, subs, JUDGES, 20, scopes=["analytical", "presentation"], seed=5)
    assert plan.columns[0] == "scope" and plan["scope"].value_counts().to_dict() == {
        "analytical": 20, "presentation": 20}
    first = plan[plan["scope"] == "presentation"]
    assert (first["phase"] == "balanced").all()  # a new scope starts with the balanced phase
    assert (plan.loc[plan["scope"] == "analytical", "phase"] == "active").all()
    # each scope's plan depends only on the seed and its own name
    with pytest.warns(PlanWarning):
        alone = plan_scopes(log, subs, JUDGES, 20, scopes=["presentation"], seed=5)
    pd.testing.assert_frame_equal(alone, first.reset_index(drop=True))
    with pytest.raises(ValueError, match=r"`scopes` must be distinct; \['a'\]"):
        plan_scopes(log, subs, JUDGES, 2, scopes=["a", "a"], seed=0)
    with pytest.raises(TypeError, match=r"`scope` is not accepted"):
        plan_scopes(log, subs, JUDGES, 2, scopes=["a"], seed=0, scope="a")


def test_cli_scopes_from_an_empty_log(tmp_path, capsys):
    board = make_board(6, 8, seed=2, judges=JUDGES)
    subs, log, out = tmp_path / "subs.csv", tmp_path / "log.csv", tmp_path / "next.csv"
    board.submissions[["model", "task_id"]].to_csv(subs, index=False)
    log.write_text("model_a,model_b,winner,task_id,judge,scope\n")
    base = ["next", str(log), "--submissions", str(subs), "--judges", "j1,j2,j3", "--n", "12",
            "--seed", "3", "--out", str(out)]  # fmt: skip
    assert main([*base, "--scopes", "axis-1,axis-2,axis-3"]) == 0
    plan = pd.read_csv(out)
    assert plan["scope"].tolist() == ["axis-1"] * 12 + ["axis-2"] * 12 + ["axis-3"] * 12
    assert "wrote 36 matches (36 balanced, 0 active) for 3 scope(s)" in capsys.readouterr().err
    assert main([*base, "--scopes", "a,b", "--scope", "a"]) == 2
    assert "either `--scope` or `--scopes`" in capsys.readouterr().err
    # a scope that the log does not hold yet: planned from an empty log, with a warning
    done = judge_matches(plan, board, seed=0)
    done.to_csv(log, index=False)
    assert main([*base, "--scope", "axis-4"]) == 0
    assert "Scope 'axis-4' has no verdicts yet" in capsys.readouterr().err


# --- 3. new models -------------------------------------------------------------------------------


def test_new_models_meet_rated_models_across_the_ladder_first():
    board = make_board(23, 40, seed=1, judges=JUDGES)
    subs = board.submissions[["model", "task_id"]]
    new = ["model-20", "model-21", "model-22"]
    log = grow(board, subs[~subs["model"].isin(new)], 5, 120)
    plan = plan_matches(log, subs, JUDGES, 120, seed=9)
    both_new = plan["model_a"].isin(new) & plan["model_b"].isin(new)
    assert not both_new.any()
    # the ladder is the rated models by current fitted rating, weakest 0 to strongest 1
    elo = ratings.fit(log).elo.sort_values()
    rung = pd.Series(np.arange(len(elo)) / (len(elo) - 1), index=elo.index)
    for m in new:
        opp = opponents(plan[plan["phase"] == "balanced"], m)
        assert len(opp) >= 10 and len(set(opp)) >= 8
        at = rung.reindex(opp).to_numpy()
        assert abs(at[0] - 0.5) <= 0.06  # the median first
        assert at.min() <= 0.2 and at.max() >= 0.8  # then out to both ends of the ladder
    # after their first verdicts, new models may meet each other in the active phase
    log = pd.concat([log, judge_matches(plan, board, seed=0)], ignore_index=True)
    later = plan_matches(log, subs, JUDGES, 200, seed=1, max_share=None)
    assert (later["phase"] == "active").all()
    assert (later["model_a"].isin(new) & later["model_b"].isin(new)).any()


def test_ladder_points_spread_over_the_unit_interval():
    pts = [ladder_point(k) for k in range(1, 8)]
    assert pts == [0.5, 0.25, 0.75, 0.125, 0.625, 0.375, 0.875]
    for n in (3, 7, 15):  # the first 2^k - 1 points are the grid i / 2^k
        assert sorted(ladder_point(k) for k in range(1, n + 1)) == [
            i / (n + 1) for i in range(1, n + 1)]


def test_a_new_board_is_unchanged_by_the_ladder_rule():
    # without rated models every model is new: the first batch still connects and cycles
    board = make_board(10, 10, seed=2, judges=JUDGES)
    plan = plan_matches(None, board.submissions, JUDGES, 10, seed=0)
    counts = pd.concat([plan["model_a"], plan["model_b"]]).value_counts()
    assert counts.min() == counts.max() == 2


# --- 4. objective and share bound ----------------------------------------------------------------


def test_pairwise_objective_is_the_mean_variance_of_differences_by_explicit_inverse():
    rng = np.random.default_rng(5)
    m = 6
    x = rng.normal(size=(50, m))
    x -= x.mean(axis=1, keepdims=True)  # comparisons carry no information on the mean
    prec = x.T @ x
    free = np.arange(1, m)  # anchored at model 0
    cov = np.zeros((m, m))
    cov[np.ix_(free, free)] = np.linalg.inv(prec[np.ix_(free, free)])
    w = comparison_weight(rng.normal(size=m))

    def mean_pair_var(c):
        pairs = itertools.combinations(range(m), 2)
        return np.mean([c[i, i] + c[j, j] - 2 * c[i, j] for i, j in pairs])

    c = centred(cov, np.ones(m, dtype=bool))
    assert mean_pair_var(c) == pytest.approx(mean_pair_var(cov), rel=1e-12)
    assert np.allclose(c.sum(axis=0), 0)
    red = trace_reduction(c, w) * 2 / (m - 1)  # the planner's score, in strength^2
    for i, j in [(0, 3), (1, 2), (5, 4)]:
        e = np.zeros(m)
        e[i], e[j] = 1.0, -1.0
        after = np.zeros((m, m))
        h = prec + w[i, j] * np.outer(e, e)
        after[np.ix_(free, free)] = np.linalg.inv(h[np.ix_(free, free)])
        assert red[i, j] == pytest.approx(mean_pair_var(cov) - mean_pair_var(after), rel=1e-9)
        np.testing.assert_allclose(add_comparison(c, i, j, w[i, j]),
                                   centred(after, np.ones(m, dtype=bool)), atol=1e-12)


def test_default_plans_do_not_depend_on_the_anchor():
    board = make_board(10, 20, seed=6, judges=JUDGES)
    log = grow(board, board.submissions, 3, 40)
    plans = [plan_matches(log, None, JUDGES, 30, seed=3, phase="active", anchor=a)
             for a in (None, "model-01", "model-07=1600")]  # fmt: skip
    for other in plans[1:]:
        pd.testing.assert_frame_equal(plans[0].drop(columns="score"),
                                      other.drop(columns="score"))  # fmt: skip
        np.testing.assert_allclose(other["score"], plans[0]["score"], rtol=1e-6)


def test_share_bound_caps_the_anchor():
    board = make_board(20, 40, seed=7, judges=JUDGES)
    log = grow(board, board.submissions, 3, 100)
    anchor = board.mid_model()
    n = 200
    free = plan_matches(log, None, JUDGES, n, seed=1, anchor=anchor, objective="anchored",
                        max_share=None)  # fmt: skip
    bounded = plan_matches(log, None, JUDGES, n, seed=1, anchor=anchor, objective="anchored")
    cap = math.ceil(3 * 2 * n / 20)  # 3x the fair share 2n/M
    assert share_cap(3.0, n, 20) == cap == 60
    count = pd.concat([free["model_a"], free["model_b"]]).value_counts()
    assert count[anchor] > 0.4 * n  # the anchored objective alone hinges on the anchor
    count = pd.concat([bounded["model_a"], bounded["model_b"]]).value_counts()
    assert count.max() <= cap and count[anchor] == cap
    pairwise = plan_matches(log, None, JUDGES, n, seed=1, anchor=anchor)
    count = pd.concat([pairwise["model_a"], pairwise["model_b"]]).value_counts()
    assert count[anchor] < 0.15 * n and count.max() <= cap
    with pytest.raises(ValueError, match=r"objective='anchored'` .* needs `anchor`"):
        plan_matches(log, None, JUDGES, 5, seed=0, objective="anchored")
    with pytest.raises(ValueError, match=r"`max_share` must be a number >= 1"):
        plan_matches(log, None, JUDGES, 5, seed=0, max_share=0.5)
    with pytest.raises(ValueError, match=r"`objective` must be 'pairwise' or 'anchored'"):
        plan_matches(log, None, JUDGES, 5, seed=0, objective="trace")


def test_cli_objective_and_share(tmp_path, capsys):
    board = make_board(8, 20, seed=8, judges=JUDGES)
    path, out = tmp_path / "log.csv", tmp_path / "next.csv"
    grow(board, board.submissions, 3, 40).drop(columns=["phase", "score"]).to_csv(path,
                                                                                  index=False)
    base = ["next", str(path), "--judges", "j1,j2,j3", "--n", "40", "--seed", "1", "--out",
            str(out), "--anchor", "model-03=1000"]  # fmt: skip
    assert main([*base, "--objective", "anchored", "--max-share", "inf"]) == 0
    free = pd.read_csv(out)
    assert main([*base, "--objective", "anchored", "--max-share", "1.5"]) == 0
    bounded = pd.read_csv(out)
    n_anchor = [((p["model_a"] == "model-03") | (p["model_b"] == "model-03")).sum()
                for p in (free, bounded)]  # fmt: skip
    assert n_anchor[1] == math.ceil(1.5 * 2 * 40 / 8) < n_anchor[0]
    with pytest.raises(SystemExit):
        main([*base, "--max-share", "0.5"])
    assert "expected a number >= 1" in capsys.readouterr().err


def test_pairwise_half_width_is_the_mean_of_the_difference_intervals():
    board = make_board(6, 10, seed=9, judges=JUDGES)
    fit = ratings.fit(grow(board, board.submissions, 3, 30), anchor="model-02")
    widths = [fit.diff(a, b)["upper"] - fit.diff(a, b)["estimate"]
              for a, b in itertools.combinations(fit.models, 2)]  # fmt: skip
    assert pairwise_half_width(fit) == pytest.approx(np.mean(widths), rel=1e-9)


def test_oracle_information_and_matches():
    s = np.array([0.0, 0.7, -1.2])
    sig = 1 / (1 + np.exp(-(s[:, None] - s[None, :])))
    np.testing.assert_allclose(comparison_information(s), sig * (1 - sig) * (1 - np.eye(3)))
    # Crowd-BT with eta = 0.8: the Fisher information of d, by numerical differentiation
    eta, d, h = 0.8, 0.7, 1e-5

    def p(x):
        return eta / (1 + np.exp(-x)) + (1 - eta) / (1 + np.exp(x))

    slope = (p(d + h) - p(d - h)) / (2 * h)
    expected = slope**2 / (p(d) * (1 - p(d)))
    assert comparison_information(s, [eta])[1, 0] == pytest.approx(expected, rel=1e-8)
    board = make_board(5, 6, seed=1, coverage=0.7)
    played = np.zeros((5, 5))
    m = oracle_matches(board.strength, board.submissions, ["a", "b"], played, 40, seed=0)
    have = set(zip(board.submissions["model"], board.submissions["task_id"], strict=True))
    assert all((x, t) in have for x, t in zip(m["model_a"], m["task_id"], strict=True))
    assert all((x, t) in have for x, t in zip(m["model_b"], m["task_id"], strict=True))
    assert m.equals(oracle_matches(board.strength, board.submissions, ["a", "b"], played, 40,
                                   seed=0))  # fmt: skip


# --- 5. failed submissions -----------------------------------------------------------------------


def failed_subs():
    board = make_board(6, 8, seed=10, judges=JUDGES)
    subs = board.submissions[["model", "task_id"]].copy()
    rng = np.random.default_rng(0)
    subs["failed"] = np.where(rng.random(len(subs)) < 0.2, "true", "")
    return board, subs


def test_failed_submissions_never_reach_a_judge():
    _, subs = failed_subs()
    bad = set(map(tuple, subs.loc[subs["failed"] == "true", ["model", "task_id"]].to_numpy()))
    with pytest.warns(PlanWarning, match=r"failed submission\(s\) of .* not sent to a judge"):
        plan = plan_matches(None, subs, JUDGES, 40, seed=0)
    sides = [set(zip(plan[c], plan["task_id"], strict=True)) for c in ("model_a", "model_b")]
    assert not (sides[0] | sides[1]) & bad
    assert check_balance(plan, None, subs, JUDGES)["invalid_matches"] == 0

    plan = plan_matches(None, subs, JUDGES, 40, seed=0, forfeits=True)
    forfeit = plan["judge"] == "deterministic"
    judged = plan[~forfeit]
    assert len(judged) == 40 and forfeit.sum() > 0 and judged["winner"].isna().all()
    for row in plan[forfeit].itertuples():
        fa, fb = (row.model_a, row.task_id) in bad, (row.model_b, row.task_id) in bad
        assert (fa, fb) == (row.failed_a, row.failed_b) and (fa or fb)
        assert row.winner == ("tie" if fa and fb else "B" if fa else "A")
    for row in judged.itertuples():
        assert (row.model_a, row.task_id) not in bad and (row.model_b, row.task_id) not in bad
    report = check_balance(plan, None, subs, JUDGES, forfeits=True)
    assert report["invalid_matches"] == 0 and report["judge_spread_plan"] <= 1
    # the forfeit rows are verdicts the reader takes as they are
    log = ratings.read_verdicts(plan[forfeit][["task_id", "model_a", "model_b", "winner",
                                               "judge", "failed_a", "failed_b"]]).verdicts
    assert len(log) == forfeit.sum()


def test_bad_failed_column():
    _, subs = failed_subs()
    bad = r"'failed' has 1 value\(s\) that are not true/false \(e.g. \['maybe'\]\) at rows \[3\]"
    with pytest.raises(ValueError, match=bad):
        plan_matches(None, subs.assign(failed=["", "", "", "maybe"] + [""] * (len(subs) - 4)),
                     JUDGES, 5, seed=0)  # fmt: skip
    twice = pd.concat([subs.iloc[:1].assign(failed="yes"), subs.iloc[:1].assign(failed="no"),
                       subs.iloc[1:]])  # fmt: skip
    with pytest.raises(ValueError, match=r"both as failed and as rendered.*rows \[0, 1\]"):
        plan_matches(None, twice, JUDGES, 5, seed=0)


def test_cli_forfeits_file(tmp_path, capsys):
    board, subs = failed_subs()
    sub_path, log, out, ff = (tmp_path / n for n in ("subs.csv", "log.csv", "next.csv",
                                                       "forfeits.csv"))  # fmt: skip
    subs.to_csv(sub_path, index=False)
    log.write_text("model_a,model_b,winner,task_id,judge\n")
    base = ["next", str(log), "--submissions", str(sub_path), "--judges", "j1,j2,j3", "--n",
            "30", "--seed", "4", "--out", str(out)]  # fmt: skip
    assert main(base) == 0
    assert "are not sent to a judge" in capsys.readouterr().err
    assert main([*base, "--forfeits", str(ff)]) == 0
    err = capsys.readouterr().err
    plan, forfeits = pd.read_csv(out), pd.read_csv(ff)
    assert len(plan) == 30 and (plan["judge"] != "deterministic").all()
    assert "winner" not in plan.columns
    assert f"; {len(forfeits)} forfeit row(s) to {ff}" in err and len(forfeits) > 0
    assert (forfeits["judge"] == "deterministic").all()
    # judge the plan, append both, fit: the forfeits count as deterministic verdicts
    verdicts = pd.concat([judge_matches(plan, board, seed=1), forfeits], ignore_index=True)
    verdicts.to_csv(log, index=False)
    assert main(["fit", str(log)]) == 0
    assert main([*base, "--forfeits", str(out)]) == 2
    err = capsys.readouterr().err
    assert "`--out` and `--forfeits` name the same file" in err and "Nothing was written" in err


# --- 8. ergonomics of `next` ---------------------------------------------------------------------


def test_cli_warns_about_judges_the_log_never_names(tmp_path, capsys):
    board = make_board(5, 8, seed=11, judges=JUDGES)
    path, out = tmp_path / "log.csv", tmp_path / "next.csv"
    grow(board, board.submissions, 2, 20).drop(columns=["phase", "score"]).to_csv(path,
                                                                                  index=False)
    base = ["next", str(path), "--n", "10", "--seed", "0", "--out", str(out)]
    assert main([*base, "--judges", "j1,j2,j3"]) == 0
    assert "never appear" not in capsys.readouterr().err
    assert main([*base, "--judges", "j1,j2,J3"]) == 0
    err = capsys.readouterr().err
    assert "warning: Judge(s) ['J3'] in `--judges` never appear in the" in err
    assert "(their judges: ['j1', 'j2', 'j3'])" in err
