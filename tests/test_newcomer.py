"""A newcomer's first hour, through the command line only, on a real board: Arena-Hard's GPT-4
judged battles (tests/data/arena_hard_battles_2024_09.csv: question_id, model_a, model_b,
winner; one model always in slot A; no judge and no task_id column).

Each step follows what the previous one printed, as a user would: fit without a task column
(a warning naming the column that looks like the task), the hint followed, the same file with
other column names (the hint of the error followed), the judge audit, every pair, the plot and
the next matches with mapped columns. Each step exits 0, or exits 2 naming the flag that fixes
it; nothing is written over the input. Then the same path on a second real board in another
tool's format, AlpacaEval annotations read as AlpacaEval writes them.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ratings
from ratings.cli.app import main

ARENA = Path(__file__).resolve().parent / "data" / "arena_hard_battles_2024_09.csv"


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _ok_or_names_the_fix(code: int, err: str) -> None:
    """Exit 0, or exit 2 with an error that names a flag to change (no dead end)."""
    assert "Traceback" not in err
    if code != 0:
        _names_the_fix(code, err)


def _names_the_fix(code: int, err: str) -> list[str]:
    """Exit 2 with an error naming the flag that fixes the run; the fixes as printed
    (```--flag value```). An exit 0 fails: the step is one that must stop and say why."""
    assert "Traceback" not in err
    assert code == 2, f"expected the run to stop naming a fix (exit 2); it exited {code}:\n{err}"
    message = err.split("ratings: error: ", 1)[1]
    fixes = re.findall(r"`(--[a-z-]+[^`]*)`", message)
    assert fixes, f"the error names no flag:\n{err}"
    return fixes


@pytest.fixture(scope="module")
def board(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("newcomer")
    copy = folder / "battles.csv"
    copy.write_bytes(ARENA.read_bytes())
    return copy


def test_the_board_is_the_real_one(board):
    frame = pd.read_csv(board)
    assert frame.columns.tolist() == ["question_id", "model_a", "model_b", "winner"]
    assert len(frame) == 1348 and frame["question_id"].nunique() == 100
    assert frame["model_a"].nunique() == 1  # one model always in slot A


def test_step1_fit_without_a_task_column_warns_and_the_hint_runs(board, capsys):
    code, out, err = _run(["fit", board], capsys)
    assert code == 0 and "Ratings (Bradley-Terry): 4 models, 1348 verdicts" in out
    warning = next(ln for ln in err.splitlines() if ln.startswith("ratings: warning: "))
    assert "no task_id column" in warning and "per verdict" in warning
    hints = re.findall(r"`(--(?:cluster|columns) [^`]+)`", warning)
    assert hints == ["--cluster question_id", "--columns question_id=task_id"]
    for hint in hints:  # followed as printed: clustered by question, nothing more to warn
        code, out, err = _run(["fit", board, *shlex.split(hint)], capsys)
        assert code == 0 and "warning" not in err, err
        assert "clustered by 'question_id'" in out or "clustered by 'task_id'" in out, out


def test_step2_other_column_names_get_a_mapping_that_runs(board, capsys, tmp_path):
    renamed = tmp_path / "renamed.csv"
    frame = pd.read_csv(board, dtype=str)
    frame.columns = ["prompt_id", "model_1", "model_2", "result"]
    frame.to_csv(renamed, index=False)
    code, _, err = _run(["fit", renamed], capsys)
    assert code == 2
    mapping = re.search(r"`--columns ([^`]+)`", err).group(1)
    assert shlex.split(mapping) == [
        "model_1=model_a,model_2=model_b,result=winner,prompt_id=task_id"]
    code, out, err = _run(["fit", renamed, "--columns", *shlex.split(mapping)], capsys)
    assert code == 0 and "warning" not in err, err
    # the same board as the original file mapped by the first hint
    code, original, _ = _run(["fit", board, "--columns", "question_id=task_id"], capsys)
    assert out == original


def test_step3_audit_with_mapped_columns(board, capsys):
    code, _, err = _run(["audit", board, "--columns", "question_id=task_id"], capsys)
    _ok_or_names_the_fix(code, err)


def test_step4_pairs_plot_and_next(board, capsys):
    folder = board.parent
    before = board.read_bytes()
    table, pairs = folder / "ratings.csv", folder / "pairs.csv"
    code, _, err = _run(["fit", board, "--columns", "question_id=task_id", "-o", table,
                         "--pairs", pairs], capsys)  # fmt: skip
    _ok_or_names_the_fix(code, err)
    assert code == 0
    r = ratings.fit(board, cluster="question_id")
    written = pd.read_csv(table).set_index("model")
    assert (written.loc[r.models, "elo"] - r.elo).abs().max() < 1e-9
    pairwise = pd.read_csv(pairs)
    assert len(pairwise) == 6 and {"p_value", "p_adjusted"} <= set(pairwise.columns)

    code, _, err = _run(["plot", table, "-o", folder / "bands.png"], capsys)
    _ok_or_names_the_fix(code, err)
    assert code == 0 and (folder / "bands.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    plan = folder / "next.csv"
    code, _, err = _run(["next", board, "--columns", "question_id=task_id", "--judges", "gpt-4",
                         "--n", "20", "--seed", "1", "-o", plan], capsys)  # fmt: skip
    _ok_or_names_the_fix(code, err)
    assert code == 0
    matches = pd.read_csv(plan, dtype=str)
    assert len(matches) == 20
    questions = set(pd.read_csv(board, dtype=str)["question_id"])
    assert set(matches["task_id"]) <= questions  # the planner read the mapped task column
    assert board.read_bytes() == before  # the input is never written


def test_step5_next_without_the_mapping_names_the_fix(board, capsys, tmp_path):
    argv = ["next", board, "--judges", "gpt-4", "--n", "5", "--seed", "1", "-o",
            tmp_path / "n.csv"]  # fmt: skip
    code, _, err = _run(argv, capsys)
    fixes = _names_the_fix(code, err)
    assert fixes == ["--columns question_id=task_id"], err
    assert not (tmp_path / "n.csv").exists()
    code, _, err = _run([*argv, *shlex.split(fixes[0])], capsys)  # the fix, followed, runs
    assert code == 0, err
    assert len(pd.read_csv(tmp_path / "n.csv")) == 5


def test_the_fix_check_refuses_a_run_that_went_through():
    # the helper itself: a step that must name a fix fails when the run exits 0, or exits 2
    # without naming a flag
    with pytest.raises(AssertionError, match="expected the run to stop"):
        _names_the_fix(0, "")
    with pytest.raises(AssertionError, match="names no flag"):
        _names_the_fix(2, "ratings: error: something is wrong.")
    assert _names_the_fix(2, "ratings: error: pass `--columns a=task_id`.") == [
        "--columns a=task_id"]


# -- a second real board, in another tool's format ----------------------------------------------
# AlpacaEval 2.0 annotations as AlpacaEval writes them (tests/data/alpaca_eval_annotations_
# sample.json.gz: four models against gpt4_1106_preview, one GPT-4 Turbo judge, 40
# instructions): read with its reader, no conversion, style control from the answers' lengths,
# the audit, the page and the next matches.

ALPACA = ARENA.parent / "alpaca_eval_annotations_sample.json.gz"


@pytest.fixture(scope="module")
def annotations(tmp_path_factory) -> Path:
    copy = tmp_path_factory.mktemp("alpaca") / "annotations.json.gz"
    copy.write_bytes(ALPACA.read_bytes())
    return copy


def test_alpaca_step1_read_as_it_is(annotations, capsys):
    code, out, err = _run(["fit", annotations], capsys)
    assert code == 0, err
    assert "read as AlpacaEval annotations (--format alpaca-eval): 160 verdicts, 5 models" in err
    assert "Ratings (Bradley-Terry): 5 models, 160 verdicts" in out
    assert "clustered by 'task_id' (40 clusters)" in out and "warning" not in err


def test_alpaca_step2_style_control_from_the_lengths(annotations, capsys, tmp_path):
    style = tmp_path / "style.csv"
    code, _, err = _run(["fit", annotations, "--style", "len", "--style-out", style], capsys)
    assert code == 0, err
    coefficients = pd.read_csv(style)
    assert list(coefficients["feature"]) == ["len"]
    raw = pd.read_json(annotations)
    assert pd.Series(raw["output_2"].str.len()).mean() > 0  # lengths the reader computed
    plain = ratings.fit(annotations)
    styled = ratings.fit(annotations, style=["len"])
    assert not np.allclose(styled.elo, plain.elo)  # the length term moved the ratings


def test_alpaca_step3_audit_report_and_next(annotations, capsys):
    folder = annotations.parent
    before = annotations.read_bytes()
    code, out, err = _run(["audit", annotations], capsys)
    _ok_or_names_the_fix(code, err)
    assert code == 0 and "weighted_alpaca_eval_gpt4_turbo" in out
    page = folder / "board.html"
    code, _, err = _run(["report", annotations, "-o", page, "--title", "AlpacaEval sample"],
                        capsys)  # fmt: skip
    _ok_or_names_the_fix(code, err)
    assert code == 0 and "FuseChat-Gemma-2-9B-Instruct" in page.read_text()
    plan = folder / "next.csv"
    code, _, err = _run(["next", annotations, "--n", "8", "-o", plan], capsys)
    assert code == 0, err  # the log's one judge, seed 0: no --judges, no --seed needed
    matches = pd.read_csv(plan)
    assert len(matches) == 8 and set(matches["judge"]) == {"weighted_alpaca_eval_gpt4_turbo"}
    instructions = set(pd.read_json(annotations)["instruction"])
    assert set(matches["task_id"]) <= instructions
    assert annotations.read_bytes() == before
