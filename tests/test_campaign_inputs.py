"""Inputs of a running campaign: verdicts decided by failure flags, rubric panels, one judge per
check, and the command-line ergonomics found in the campaign. Through the CLI where the README
shows it."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import ratings
from ratings.cli.app import main
from ratings.core.errors import DataWarning, InvalidVerdictsError
from ratings.datasets.simulate import simulate_verdicts
from ratings.scopes.rubric import read_rubric, rubric_to_matches

# --- 5. failure flags decide the outcome ----------------------------------------------------------


def flagged() -> pd.DataFrame:
    return pd.DataFrame({
        "model_a": ["x", "x", "y", "z", "x", "y"], "model_b": ["y", "z", "z", "x", "y", "z"],
        "winner": [None, "A", "", "B", "A", "B"],
        "failed_a": ["true", "", "true", "", "", ""],
        "failed_b": ["", "true", "true", "", "", ""],
        "task_id": ["t1", "t1", "t2", "t2", "t3", "t3"],
    })  # fmt: skip


def test_flags_decide_rows_with_an_empty_winner():
    log = ratings.read_verdicts(flagged())
    # row 0: A failed, no winner -> B; row 1: B failed, A named -> A; row 2: both failed -> tie
    assert log.verdicts["winner"].astype(str).tolist() == ["B", "A", "tie", "B", "A", "B"]
    assert len(log.rejected) == 0
    data = ratings.aggregate(flagged().assign(winner=[None, "A", None, "B", "A", "B"],
                                              failed_a=[True, False, True, False, False, False],
                                              failed_b=[False, True, True, False, False, False]),
                             cluster=None)  # fmt: skip
    assert data.wi.sum() + data.wj.sum() + data.tt.sum() == 6


def test_a_winner_the_flags_contradict_is_reported():
    log = flagged().assign(winner=["A", "A", "B", "B", "A", "B"])  # rows 0 and 2 contradict
    with pytest.warns(DataWarning, match=r"2 verdict row\(s\) name a winner that their failure "
                                         r"flags contradict, at rows \[0, 2\]"):  # fmt: skip
        got = ratings.read_verdicts(log)
    assert got.verdicts["winner"].astype(str).tolist()[:3] == ["B", "A", "tie"]
    bad = flagged().assign(winner=["maybe", "A", None, "B", "A", "B"])  # unreadable: still out
    with pytest.raises(InvalidVerdictsError, match=r"1 with unknown winner value"):
        ratings.read_verdicts(bad)


def test_cli_fit_reports_contradictions_and_fits_the_flags(tmp_path, capsys):
    path = tmp_path / "log.csv"
    rng = np.random.default_rng(0)
    n = 400
    a = rng.integers(0, 4, n)
    b = (a + rng.integers(1, 4, n)) % 4
    frame = pd.DataFrame({"model_a": [f"m{k}" for k in a], "model_b": [f"m{k}" for k in b],
                          "winner": rng.choice(["A", "B", "tie"], n),
                          "task_id": rng.integers(0, 40, n).astype(str),
                          "failed_a": rng.random(n) < 0.1})  # fmt: skip
    frame.to_csv(path, index=False)
    assert main(["fit", str(path), "--anchor", "m0=1000", "--out", str(tmp_path / "r.csv")]) == 0
    contradicted = frame["failed_a"] & (frame["winner"] != "B")
    assert (f"ratings: warning: {int(contradicted.sum())} verdict row(s) name a winner that "
            "their failure flags contradict") in capsys.readouterr().err  # fmt: skip
    fixed = frame.assign(winner=np.where(frame["failed_a"], "B", frame["winner"]))
    expected = ratings.fit(fixed, anchor="m0=1000")  # the same log with the winners corrected
    got = pd.read_csv(tmp_path / "r.csv").set_index("model")["elo"]
    np.testing.assert_allclose(got[expected.models], expected.elo, atol=1e-6)


# --- 6. rubric panels ----------------------------------------------------------------------------


def test_passed_accepts_numbers_and_shares():
    values = ["1", "0", "true", "False", "1.0", "0.0", "0.5", "2/3", " 1/3 ", 0.25, 1, True]
    rubric = pd.DataFrame({"task_id": "t", "model": "m",
                           "check_id": [f"c{k}" for k in range(len(values))],
                           "passed": pd.Series(values, dtype=object)})  # fmt: skip
    got = read_rubric(rubric)["passed"].tolist()
    assert got == pytest.approx([1, 0, 1, 0, 1, 0, 0.5, 2 / 3, 1 / 3, 0.25, 1, 1])
    for bad in ("1.5", "-0.1", "3/2", "1/0"):
        with pytest.raises(InvalidVerdictsError, match=r"passed is not a grade"):
            read_rubric(rubric.assign(passed=[bad, *values[1:]]))


def panel_rubric(seed: int = 0) -> pd.DataFrame:
    """Three judges grade every check of every submission (0/1), in shuffled order."""
    rng = np.random.default_rng(seed)
    rows = [(t, m, c, j, int(rng.random() < p))
            for t in ("t1", "t2", "t3") for m, p in (("x", 0.8), ("y", 0.5), ("z", 0.3))
            for c in ("c1", "c2", "c3", "c4") for j in ("J1", "J2", "J3")]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["task_id", "model", "check_id", "judge", "passed"])
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def reference_matches(rubric: pd.DataFrame, method: str) -> list[tuple[str, str, str, str]]:
    """Plain loops with exact fractions: each check's share of judges passing, then matches."""
    share: dict[tuple[str, str, str], list[int]] = {}
    for t, m, c, _, p in rubric.itertuples(index=False):
        share.setdefault((t, m, c), []).append(int(p))
    frac = {k: Fraction(sum(v), len(v)) for k, v in share.items()}
    out = []
    for t in sorted({k[0] for k in frac}):
        models = sorted({k[1] for k in frac if k[0] == t})
        for a, b in itertools.combinations(models, 2):
            ca = {k[2]: v for k, v in frac.items() if k[:2] == (t, a)}
            cb = {k[2]: v for k, v in frac.items() if k[:2] == (t, b)}
            if method == "rate":
                pairs = [(sum(ca.values()) / len(ca), sum(cb.values()) / len(cb), "")]
            else:
                pairs = [(ca[c], cb[c], c) for c in sorted(set(ca) & set(cb))]
            for ra, rb, c in pairs:
                out.append((t, a, b, c, "A" if ra > rb else "B" if ra < rb else "tie"))
    return out


@pytest.mark.parametrize("method", ["rate", "check"])
def test_panel_grades_are_averaged_into_each_check(method):
    rubric = panel_rubric()
    read = read_rubric(rubric)
    assert len(read) == 3 * 3 * 4 and (read["n_grades"] == 3).all()
    assert set(read["judge"]) == {"J1,J2,J3"}
    assert set(np.round(read["passed"] * 3, 9)) <= {0, 1, 2, 3}  # shares 0, 1/3, 2/3, 1
    got = rubric_to_matches(rubric, method=method)
    rows = list(zip(got["task_id"], got["model_a"], got["model_b"],
                    got["match_id"].str.split(":").str[4].fillna("") if method == "check"
                    else [""] * len(got), got["winner"], strict=True))  # fmt: skip
    assert rows == reference_matches(rubric, method)


def test_panel_duplicates_and_messages():
    rubric = panel_rubric()
    twice = pd.concat([rubric, rubric.iloc[:1].assign(passed=1 - rubric["passed"].iloc[0])])
    with pytest.raises(InvalidVerdictsError, match=r"\(task_id, model, check_id, judge\)"):
        read_rubric(twice)
    assert len(read_rubric(twice, duplicates="last")) == 36
    no_judge = rubric.drop(columns="judge")
    with pytest.raises(InvalidVerdictsError, match=r"add a 'judge' column naming who graded"):
        read_rubric(no_judge)


def test_cli_rubric_panel_and_combine(tmp_path, capsys):
    rubric = tmp_path / "panel.csv"
    panel = pd.concat([panel_rubric(seed) for seed in range(4)], ignore_index=True)
    panel["task_id"] = panel["task_id"] + np.repeat(["a", "b", "c", "d"], len(panel) // 4)
    panel.assign(passed=np.where(panel["passed"] == 1, "1.0", "0.0")).to_csv(rubric, index=False)
    out = tmp_path / "m.csv"
    assert main(["rubric", str(rubric), "--out", str(out)]) == 0
    assert "from 144 checks" in capsys.readouterr().err
    assert len(pd.read_csv(out)) == 36  # twelve tasks, three pairs each
    # the panel is one scope of the headline next to a judged scope on the same tasks
    rng = np.random.default_rng(2)
    m = pd.DataFrame({"model_a": rng.choice(["x", "y"], 300), "task_id": rng.choice(
        sorted(set(panel["task_id"])), 300), "judge": "j1"})  # fmt: skip
    m["model_b"] = np.where(m["model_a"] == "x", rng.choice(["y", "z"], 300), "z")
    log = simulate_verdicts(m, pd.Series({"x": 0.5, "y": 0.0, "z": -0.5}), seed=3)
    path = tmp_path / "log.csv"
    log.assign(scope="analytical").to_csv(path, index=False)
    assert main(["combine", str(path), "--rubric", str(rubric), "--anchor", "y=1000",
                 "--out", str(tmp_path / "board.csv")]) == 0  # fmt: skip
    board = pd.read_csv(tmp_path / "board.csv")
    assert set(board["scope"]) == {"analytical", "rubric", "combined"}
    capsys.readouterr()


def test_cli_assign_judges_balanced_and_stable(tmp_path, capsys):
    checks = pd.DataFrame({"task_id": [f"t{i // 5}" for i in range(40)],
                           "check_id": [f"c{i % 5}" for i in range(40)]})  # fmt: skip
    first, more, out1, out2, out3 = (tmp_path / f for f in ("a.csv", "b.csv", "o1.csv",
                                                              "o2.csv", "o3.csv"))  # fmt: skip
    checks.to_csv(first, index=False)
    pd.concat([checks, pd.DataFrame({"task_id": ["t8"] * 5, "check_id": list("vwxyz")})]).to_csv(
        more, index=False)  # fmt: skip
    base = ["assign-judges", "--judges", "J1,J2,J3", "--seed", "7"]
    assert main([*base[:1], str(first), *base[1:], "--out", str(out1)]) == 0
    assert "assigned 40 checks" in capsys.readouterr().err
    one = pd.read_csv(out1)
    assert one["judge"].value_counts().max() - one["judge"].value_counts().min() <= 1
    assert main([*base[:1], str(more), *base[1:], "--out", str(out2)]) == 0
    two = pd.read_csv(out2)
    pd.testing.assert_frame_equal(two.iloc[:40], one)  # every check keeps its judge
    assert two["judge"].value_counts().max() - two["judge"].value_counts().min() <= 1
    shuffled = tmp_path / "shuffled.csv"
    pd.read_csv(more).sample(frac=1.0, random_state=1).to_csv(shuffled, index=False)
    assert main([*base[:1], str(shuffled), *base[1:], "--previous", str(out1),
                 "--out", str(out3)]) == 0  # fmt: skip
    three = pd.read_csv(out3).merge(one, on=["task_id", "check_id"], suffixes=("", "_before"))
    assert (three["judge"] == three["judge_before"]).all() and len(three) == 40
    assert main([*base[:1], str(first), *base[1:], "--out", str(first)]) == 2
    capsys.readouterr()


# --- 8. command-line ergonomics ------------------------------------------------------------------


def plain_log(tmp_path, task: str | None = "task_id"):
    rng = np.random.default_rng(4)
    n = 600
    a = rng.integers(0, 5, n)
    b = (a + rng.integers(1, 5, n)) % 5
    m = pd.DataFrame({"model_a": [f"m{k}" for k in a], "model_b": [f"m{k}" for k in b],
                      "judge": rng.choice(["j1", "j2"], n),
                      "question_id": rng.integers(0, 30, n).astype(str)})  # fmt: skip
    if task:
        m["task_id"] = m["question_id"].map(lambda q: f"group-{int(q) % 3}")
    v = simulate_verdicts(m, pd.Series(np.linspace(-1, 1, 5), index=[f"m{k}" for k in range(5)]),
                          judge_eta={"j1": 1.0, "j2": 0.8}, seed=1)  # fmt: skip
    path = tmp_path / "log.csv"
    v.to_csv(path, index=False)
    return path, v


def test_cluster_takes_any_column(tmp_path, capsys):
    path, v = plain_log(tmp_path)
    assert main(["fit", str(path), "--cluster", "question_id", "--anchor", "m0=1000"]) == 0
    out = capsys.readouterr().out
    assert "clustered by 'question_id' (30 clusters)" in out
    expected = ratings.fit(v, cluster="question_id", anchor="m0=1000")
    assert expected.n_clusters == 30 and expected.cluster == "question_id"
    assert ratings.fit(str(path), cluster="question_id", anchor="m0=1000").se.equals(expected.se)
    assert main(["fit", str(path), "--cluster", "nope"]) == 2
    assert "['nope'] not found in verdicts" in capsys.readouterr().err


def test_warning_without_task_id(tmp_path, capsys):
    path, _ = plain_log(tmp_path, task=None)
    assert main(["fit", str(path)]) == 0
    err = capsys.readouterr().err
    assert "ratings: warning:" in err and "has no task_id column, so intervals are per" in err
    assert main(["fit", str(path), "--no-cluster"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_judge_quality_implies_crowd_bt(tmp_path, capsys):
    path, _ = plain_log(tmp_path)
    quality = tmp_path / "q.json"
    assert main(["judges", str(path), "--out", str(quality)]) == 0
    capsys.readouterr()
    assert main(["fit", str(path), "--judge-quality", str(quality)]) == 0
    assert "Ratings (Crowd-BT)" in capsys.readouterr().out
    assert main(["fit", str(path), "--judge-quality", str(quality), "--model", "bt"]) == 2
    assert "`--judge-quality` is only available with `--model crowd-bt`" in capsys.readouterr().err


def test_combine_headline_has_no_likelihood_and_notes_name_their_scope(tmp_path, capsys):
    _, v = plain_log(tmp_path)
    both = pd.concat([v.assign(scope="analytical"), v.assign(scope="presentation")])
    path = tmp_path / "scoped.csv"
    both.to_csv(path, index=False)
    # the plain maximum likelihood (--prior none), where a noiseless judge's eta reaches 1
    assert main(["combine", str(path), "--anchor", "m0=1000", "--prior", "none"]) == 0
    captured = capsys.readouterr()
    blocks = captured.out.split("Ratings (")
    headline = [b for b in blocks if b.startswith("combined headline")]
    assert len(headline) == 1 and "log-likelihood" not in headline[0]
    assert captured.out.count("log-likelihood") == 2  # one per scope
    # j1 is noiseless: without a prior its eta sits on the boundary in each scope, and the
    # notes say where
    assert "note: scope 'analytical': judge(s) ['j1'] have eta on the boundary" in captured.err
    assert "note: scope 'presentation': judge(s) ['j1']" in captured.err
