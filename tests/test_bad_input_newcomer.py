"""A newcomer's hour on real boards: each thing that met them, and what it does now.

One test (or more) per finding: the column hints, the leader line, ``fit --out``'s summary,
the one warning prefix, ``ratings next``'s defaults, an anchor given as a dict, the planner's
memory limit, the counts table's errors, judges that carry no information, and Crowd-BT and
style control on a one-judge board.
"""

from __future__ import annotations

import re
import shlex
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bad_inputs import run_cli, write

import ratings
from ratings.cli.app import main

DATA = Path(__file__).resolve().parent / "data"
ALPACA = DATA / "alpaca_eval_annotations_sample.json.gz"
ARENA = DATA / "arena_hard_battles_2024_09.csv"


@pytest.fixture(scope="module")
def alpaca_csv(tmp_path_factory) -> Path:
    """The AlpacaEval sample as a team's conversion script wrote it (no `--format` needed)."""
    frame = ratings.read_verdicts(ALPACA).verdicts
    raw = pd.read_json(ALPACA)
    table = pd.DataFrame({"instruction": raw["instruction"], "generator_1": raw["generator_1"],
                          "generator_2": raw["generator_2"],
                          "result": frame["winner"].astype(str).to_numpy(),
                          "len_a": raw["output_1"].str.len(), "len_b": raw["output_2"].str.len()})
    path = tmp_path_factory.mktemp("alpaca") / "alpaca.csv"
    table.to_csv(path, index=False)
    return path


# 2. the hint: numeric columns last for the models; instruction / prompt / *_id as the task

def test_hint_maps_names_not_lengths_and_offers_the_instruction(alpaca_csv, capsys):
    err = run_cli(["fit", alpaca_csv], capsys, alpaca_csv.parent)
    mapping = re.search(r"`--columns ([^`]+)`", err).group(1)
    assert shlex.split(mapping) == [
        "generator_1=model_a,generator_2=model_b,result=winner,instruction=task_id"]
    assert main(["fit", str(alpaca_csv), "--columns", *shlex.split(mapping)]) == 0
    out = capsys.readouterr().out
    assert "5 models, 160 verdicts" in out and "clustered by 'task_id' (40 clusters)" in out


@pytest.mark.parametrize(("columns", "task"), [
    (["prompt_text", "model_left", "model_right", "outcome"], "prompt_text"),
    (["sample_id", "model_left", "model_right", "outcome"], "sample_id"),
    (["match_id", "model_left", "model_right", "outcome"], None),
])
def test_hint_offers_task_like_columns(tmp_path, capsys, columns, task):
    path = write(tmp_path / "v.csv", ",".join(columns) + "\nq1,x,y,A\nq2,y,x,B\n")
    err = run_cli(["fit", path], capsys, tmp_path)
    mapping = re.search(r"`--columns ([^`]+)`", err).group(1)
    assert (f"{task}=task_id" in mapping) == (task is not None)
    assert "model_left=model_a,model_right=model_b" in mapping


def test_hint_takes_numeric_pairs_only_when_nothing_else_fits(tmp_path, capsys):
    path = write(tmp_path / "v.csv", "tokens_a,tokens_b,winner\n3,4,A\n5,6,B\n")
    err = run_cli(["fit", path], capsys, tmp_path)
    assert "tokens_a=model_a,tokens_b=model_b" in err  # the only pair: still proposed


# 4. the leader is never listed as tied with itself

def test_leader_line_names_the_leader_once(capsys):
    assert main(["fit", str(ALPACA)]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("Rank intervals"))
    leader, tied = re.search(r"leader (.+), statistically tied with it: (.+)$", line).groups()
    assert leader == "FuseChat-Gemma-2-9B-Instruct" and leader not in tied
    r = ratings.fit(ARENA, cluster="question_id")
    top, *others = r.tied_with_leader()
    expected = ", ".join(others) or "none (ahead of every other model)"
    assert f"leader {top}, statistically tied with it: {expected}" in r.summary()


# 9. an anchor given as a dict, like the command line's NAME=RATING

def test_anchor_as_a_dict():
    by_dict = ratings.fit(ARENA, cluster="question_id", anchor={"gpt-4o": 1200})
    by_text = ratings.fit(ARENA, cluster="question_id", anchor="gpt-4o=1200")
    assert by_dict.elo["gpt-4o"] == 1200.0
    assert np.allclose(by_dict.elo, by_text.elo, atol=0) and np.allclose(by_dict.se, by_text.se)
    with pytest.raises(ValueError, match="pins one model"):
        ratings.fit(ARENA, anchor={"gpt-4o": 1200, "gpt-4": 1000})


# 10. the planner's memory limit reaches the fit without a deprecated keyword

def test_plan_matches_max_memory_with_history_warns_nothing():
    from sampling import plan_matches

    history = pd.read_csv(ARENA, dtype=str).rename(columns={"question_id": "task_id"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plan = plan_matches(history, None, ["gpt-4"], 10, seed=1,
                            solver=ratings.Solver(max_memory="2GB"))
    assert len(plan) == 10
    # the flat keyword of earlier releases: one warning, naming the spec, at the caller's line
    with pytest.warns(DeprecationWarning, match="Solver") as caught:
        flat = plan_matches(history, None, ["gpt-4"], 10, seed=1, max_memory="2GB")
    assert [w.filename for w in caught] == [__file__]
    pd.testing.assert_frame_equal(flat, plan)


# 11. a counts table's errors name the file; judges fixed at eta 0.5 are refused, and why

@pytest.mark.parametrize(("text", "what"), [
    ("model_a,model_b,wins_a,wins_b,ties\nx,y,3,1,0\ny,z,-2,1,0\nz,x,1,1,1\n", "negative"),
    ("model_a,model_b,wins_a,wins_b\nx,y,3,1\n", "['ties'] not found"),
])
def test_counts_table_errors_name_the_file(tmp_path, capsys, text, what):
    path = write(tmp_path / "counts.csv", text)
    err = run_cli(["fit", path], capsys, tmp_path)
    assert f"ratings: error: {str(path)!r}: " in err and what in err


def test_every_judge_at_one_half_is_refused(tmp_path, capsys):
    frame = pd.read_csv(ARENA, dtype=str).assign(judge="gpt-4")
    with pytest.raises(ValueError, match=r"fixed at 0\.5 \(gpt-4\).*no information"):
        ratings.fit(frame, model=ratings.CrowdBT(judge_quality={"gpt-4": 0.5}))
    mixed = pd.concat([frame, frame.assign(judge="other")])  # one informative judge: fitted
    r = ratings.fit(mixed, model=ratings.CrowdBT(judge_quality={"gpt-4": 0.5},
                                                 fit_new_judges=True), cluster="question_id")
    assert r.elo.std() > 50


# 5. fit --out prints the board's header and top as well as writing it; --quiet silences it

def test_fit_out_prints_the_board(tmp_path, capsys):
    out = tmp_path / "ratings.csv"
    assert main(["fit", str(ARENA), "--cluster", "question_id", "--out", str(out)]) == 0
    printed, err = capsys.readouterr()
    assert printed.startswith("Ratings (Bradley-Terry): 4 models, 1348 verdicts")
    assert "leader gpt-4o" in printed and "wrote 4 ratings" in err
    table = pd.read_csv(out)
    assert all(m in printed for m in table["model"])
    assert main(["fit", str(ARENA), "--cluster", "question_id", "--out", str(out), "-q"]) == 0
    assert capsys.readouterr().out == ""


def test_fit_out_prints_ten_rows_of_a_large_board(tmp_path, capsys):
    rng = np.random.default_rng(3)
    models = [f"m{i:02d}" for i in range(14)]
    pairs = rng.integers(0, 14, size=(3000, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    frame = pd.DataFrame({"model_a": np.take(models, pairs[:, 0]),
                          "model_b": np.take(models, pairs[:, 1]),
                          "winner": rng.choice(["A", "B"], size=len(pairs))})
    log = tmp_path / "log.csv"
    frame.to_csv(log, index=False)
    assert main(["fit", str(log), "--no-cluster", "-o", str(tmp_path / "r.csv")]) == 0
    printed = capsys.readouterr().out
    table_lines = printed.split("\n\n", 1)[1].strip().splitlines()
    assert len(table_lines) == 1 + 10 + 1 and table_lines[-1].startswith("... 4 more in ")


# 6. one warning prefix for every subcommand

def test_one_warning_prefix(tmp_path, capsys):
    assert main(["audit", str(ALPACA)]) == 0
    audit_err = capsys.readouterr().err
    assert main(["next", str(ALPACA), "--judges", "weighted_alpaca_eval_gpt4_turbo,other",
                 "--n", "5", "-o", str(tmp_path / "n.csv")]) == 0
    next_err = capsys.readouterr().err
    assert main(["fit", str(ARENA)]) == 0
    fit_err = capsys.readouterr().err
    for err, what in ((audit_err, "position bias"), (next_err, "never appear"),
                      (fit_err, "no task_id column")):
        lines = [ln for ln in err.splitlines() if "warning:" in ln.lower()]
        assert lines and all(ln.startswith("ratings: warning: ") for ln in lines), err
        assert any(what in ln for ln in lines)


# 7. ratings next: the log's one judge by default, a stated seed default, score explained

def test_next_takes_the_logs_one_judge_and_a_default_seed(tmp_path, capsys):
    plans = []
    for k in range(2):
        out = tmp_path / f"next{k}.csv"
        assert main(["next", str(ALPACA), "--n", "6", "-o", str(out)]) == 0
        err = capsys.readouterr().err
        assert "judge 'weighted_alpaca_eval_gpt4_turbo' (the log's one judge" in err
        plans.append(pd.read_csv(out))
    assert set(plans[0]["judge"]) == {"weighted_alpaca_eval_gpt4_turbo"}
    pd.testing.assert_frame_equal(plans[0], plans[1])  # seed 0 by default: the same plan
    seeded = tmp_path / "seeded.csv"
    assert main(["next", str(ALPACA), "--n", "6", "--seed", "0", "-o", str(seeded)]) == 0
    pd.testing.assert_frame_equal(plans[0], pd.read_csv(seeded))


def test_next_without_judges_names_the_flag_when_it_cannot_choose(tmp_path, capsys):
    err = run_cli(["next", ARENA, "--columns", "question_id=task_id", "--n", "5", "-o",
                   tmp_path / "n.csv"], capsys, tmp_path)
    assert "`--judges J1,J2,...`" in err and "no judge column" in err
    two = pd.read_csv(ARENA, dtype=str).rename(columns={"question_id": "task_id"})
    two["judge"] = np.where(np.arange(len(two)) % 2, "j1", "j2")
    path = tmp_path / "two.csv"
    two.to_csv(path, index=False)
    err = run_cli(["next", path, "--n", "5", "-o", tmp_path / "n.csv"], capsys, tmp_path)
    assert "names 2 judges (j1, j2)" in err


def test_next_help_explains_score_and_the_seed_default(capsys):
    with pytest.raises(SystemExit):
        main(["next", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "score is, for an active pick, how much it was expected to reduce" in text
    assert "(default 0: the same inputs and seed give the same plan)" in text


# 1. Crowd-BT on a one-judge board (AlpacaEval's: one GPT-4 Turbo annotator)

def test_crowd_bt_on_the_one_judge_alpaca_board(capsys):
    code = main(["fit", str(ALPACA), "--model", "crowd-bt"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "not positive definite" not in out + err
    assert "Only one judge" in err  # said, with the fixes: --judge-quality or --model bt
    with pytest.warns(ratings.JudgeWarning, match="Only one judge"):
        r = ratings.fit(ALPACA, model="crowd-bt")
    plain = ratings.fit(ALPACA)
    # one judge: its eta and the spread of the ratings trade off; what the verdicts do fix is
    # the order, which is the Bradley-Terry fit's
    assert list(r.elo.sort_values().index) == list(plain.elo.sort_values().index)
    finite = np.isfinite(r.se.to_numpy())
    assert finite.all() or "left open" in err


def test_fastchat_tie_spellings_point_to_the_format(tmp_path, capsys):
    path = write(tmp_path / "battles.csv", "question_id,model_a,model_b,winner\n"
                 "q1,x,y,tie (bothbad)\nq2,x,y,model_a\nq3,y,x,model_a\nq4,y,x,both_bad\n")
    err = run_cli(["fit", path], capsys, tmp_path)
    assert "`--format fastchat` reads 'tie (bothbad)' and 'both_bad' as ties" in err
    assert main(["fit", str(path), "--format", "fastchat"]) == 0
    out, err = capsys.readouterr()
    assert "4 verdicts" in out and "read as FastChat / LMArena battles" in err
    assert "clustered by 'task_id' (4 clusters)" in out


# 3. style control says so: the header, the printed coefficient, the table's method

def test_style_control_is_named_everywhere(tmp_path, capsys):
    out_file = tmp_path / "r.csv"
    assert main(["fit", str(ALPACA), "--style", "len", "-o", str(out_file)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Ratings (Bradley-Terry, style-controlled: len): 5 models")
    assert main(["fit", str(ALPACA), "--style", "len"]) == 0  # no --style-out needed
    printed = capsys.readouterr().out
    assert "Style coefficients" in printed and re.search(r"^\s+len\s+\d", printed, re.M)
    assert set(pd.read_csv(out_file)["method"]) == {"bt (style: len)"}
    r = ratings.fit(ALPACA, style=["len"])
    assert "style-controlled: len" in r.summary().splitlines()[0]
