"""Tests of the ``next`` subcommand (through an argparse parser and through ``main``)."""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
import pytest

from ratings.cli.app import main
from sampling.cli import add_next_parser, read_verdict_file
from sampling.design.plan import plan_matches
from sampling.design.simulate import judge_matches, make_board

HEADER = "model_a,model_b,winner,task_id,judge\n"


@pytest.fixture
def files(tmp_path):
    """An empty (header-only) verdict log and a submissions table with a model without tasks."""
    verdicts = tmp_path / "verdicts.csv"
    verdicts.write_text(HEADER)
    subs = tmp_path / "subs.csv"
    rows = [(m, t) for m in ("a", "b", "c", "d") for t in ("t1", "t2", "t3")] + [("e", "")]
    pd.DataFrame(rows, columns=["model", "task_id"]).to_csv(subs, index=False)
    return verdicts, subs, tmp_path / "next.csv"


def parse(argv):
    parser = argparse.ArgumentParser(prog="ratings")
    add_next_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


def test_header_only_log_is_a_new_benchmark(files, capsys):
    verdicts, subs, out = files
    args = parse(["next", str(verdicts), "--submissions", str(subs), "--judges", "j1,j2",
                  "--n", "6", "--seed", "3", "--out", str(out)])  # fmt: skip
    assert args.func(args) == 0
    plan = pd.read_csv(out)
    assert plan.columns.tolist() == ["task_id", "model_a", "model_b", "judge", "phase", "score"]
    assert len(plan) == 6 and (plan["phase"] == "balanced").all()
    assert sorted(plan["judge"].value_counts().tolist()) == [3, 3]
    err = capsys.readouterr().err
    assert "warning: 1 model(s) are listed in `submissions` without any task" in err
    assert "wrote 6 matches (6 balanced, 0 active)" in err
    assert ("ratings next: balanced phase: 4 of 4 models are below the exposure target of 10 "
            "matches on 10 distinct tasks (or all of a model's tasks): a (0 matches, 0 tasks), "
            "b (0 matches, 0 tasks), c (0 matches, 0 tasks) and 1 more; 6 balanced, 0 active\n"
            ) in err
    assert read_verdict_file(verdicts) is None


def test_plan_from_a_log_is_reproducible(tmp_path):
    board = make_board(6, 10, seed=1, judges=["x", "y", "z"])
    log = None
    for k in range(3):
        plan = plan_matches(log, board.submissions, board.judges, 20, seed=k)
        v = judge_matches(plan, board, seed=k)
        log = v if log is None else pd.concat([log, v], ignore_index=True)
    path = tmp_path / "log.csv"
    log.drop(columns=["phase", "score"]).to_csv(path, index=False)
    outs = [tmp_path / "one.csv", tmp_path / "two.csv"]
    for out in outs:
        argv = ["next", str(path), "--judges", "x,y,z", "--n", "15", "--seed", "5", "--out",
                str(out), "--anchor", "model-01=1200"]  # fmt: skip
        assert main(argv) == 0
    one, two = (pd.read_csv(o) for o in outs)
    pd.testing.assert_frame_equal(one, two)
    assert (one["phase"] == "active").all() and (one["score"] > 0).all()


def test_errors_exit_2_with_message(files, capsys):
    verdicts, subs, out = files
    base = ["next", str(verdicts), "--judges", "j1", "--seed", "0", "--out", str(out)]
    assert main([*base, "--submissions", str(subs), "--n", "99"]) == 2
    assert "only 18 distinct (task, model pair) candidates exist" in capsys.readouterr().err
    assert main([*base, "--n", "2"]) == 2
    assert "Neither `submissions` nor verdicts were given" in capsys.readouterr().err
    argv = ["next", str(verdicts), "--submissions", str(subs), "--judges", "j1", "--seed", "0",
            "--n", "2", "--out", str(subs)]  # fmt: skip
    assert main(argv) == 2
    assert "refusing to overwrite the input file" in capsys.readouterr().err
    assert not out.exists()


def test_bad_judges_argument(files, capsys):
    verdicts, _, out = files
    with pytest.raises(SystemExit):
        parse(["next", str(verdicts), "--judges", "a,,b", "--n", "1", "--seed", "0",
               "--out", str(out)])  # fmt: skip
    assert "expected comma-separated judge names" in capsys.readouterr().err


def test_unreadable_log_is_reported(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("model_a,model_b,winner,task_id\nx,y,maybe,t1\n")
    argv = ["next", str(bad), "--judges", "j", "--n", "1", "--seed", "0",
            "--out", str(tmp_path / "o.csv")]  # fmt: skip
    assert main(argv) == 2
    assert "maybe" in capsys.readouterr().err


def test_cli_default_min_matches_is_the_planners():
    from sampling import cli
    from sampling.design import plan

    assert cli.MIN_MATCHES == plan.DEFAULT_MIN_MATCHES


def styled_log(seed=0):
    """A judged log whose winners favour the longer answer (``tokens_a``, ``tokens_b``)."""
    board = make_board(8, 20, seed=seed, judges=["x", "y", "z"])
    subs = board.submissions[["model", "task_id"]]
    log = None
    for k in range(4):
        plan = plan_matches(log, subs, board.judges, 60, seed=seed + k)
        v = judge_matches(plan, board, seed=seed + k)
        log = v if log is None else pd.concat([log, v], ignore_index=True)
    rng = np.random.default_rng(seed)
    log["tokens_a"] = rng.integers(50, 500, len(log))
    log["tokens_b"] = rng.integers(50, 500, len(log))
    longer = np.where(log["tokens_a"] > log["tokens_b"], "A", "B")
    flip = rng.random(len(log)) < 0.3  # 30% of verdicts go to the longer answer
    log["winner"] = np.where(flip, longer, log["winner"])
    return log.drop(columns=["phase", "score"]), subs


def test_style_reaches_the_planners_fit(tmp_path, capsys):
    import ratings

    log, _ = styled_log()
    path, out = tmp_path / "log.csv", tmp_path / "next.csv"
    log.to_csv(path, index=False)
    argv = ["next", str(path), "--judges", "x,y,z", "--n", "12", "--seed", "4", "--phase",
            "active", "--out", str(out)]  # fmt: skip
    assert main([*argv, "--style", "tokens"]) == 0
    assert "ratings next: active matches only, as asked (`--phase active`); 0 balanced, 12 " \
        "active" in capsys.readouterr().err
    styled = pd.read_csv(out)
    read = ratings.read_verdicts(path, keep=["tokens_a", "tokens_b"]).verdicts
    fit = ratings.fit(read, style=ratings.Style(["tokens"]), ci="model")
    assert abs(fit.style["coef"].iloc[0]) > 0.1  # the planted bias is estimated
    expected = plan_matches(read, None, ["x", "y", "z"], 12, seed=4, phase="active",
                            fitted=fit)  # fmt: skip
    pd.testing.assert_frame_equal(styled, expected.reset_index(drop=True), check_dtype=False)
    assert main(argv) == 0
    plain = pd.read_csv(out)
    assert not np.allclose(plain["score"], styled["score"])  # the plain fit scores otherwise
