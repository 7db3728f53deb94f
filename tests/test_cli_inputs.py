"""One source of diagnostics and one way in: the command line prints the library's own warnings,
hints that run when followed, the same input options and table formats for every subcommand,
help with examples, and docs/cli.md covering every flag of the parsers."""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
import warnings
from io import BytesIO, TextIOWrapper
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ratings
from ratings.cli.app import main
from ratings.cli.commands.demo import NEXT_STEPS
from ratings.cli.flags import render_option
from ratings.cli.reference import subcommands
from ratings.core.errors import UnclusteredWarning, options_rendered_by

ROOT = Path(__file__).resolve().parents[1]
ARENA = ROOT / "tests" / "data" / "arena_hard_battles_2024_09.csv"
#: Wins of a small board, every pair in both slots (a connected board whose ratings exist).
BOARD = [("x", "y", "A"), ("y", "z", "A"), ("z", "x", "A"), ("x", "y", "B"), ("y", "x", "A"),
         ("z", "y", "tie"), ("x", "z", "A"), ("z", "x", "B")]  # fmt: skip


def _csv(path: Path, header: str, rows: list[tuple]) -> Path:
    path.write_text(header + "\n" + "".join(",".join(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _cli_warnings(err: str) -> list[str]:
    return [line.removeprefix("ratings: warning: ") for line in err.splitlines()
            if line.startswith("ratings: warning: ")]  # fmt: skip


def _python_warnings(call) -> list[tuple[type, str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with options_rendered_by(render_option):  # options spelled as the command line does
            call()
    return [(w.category, str(w.message)) for w in caught]


# ----------------------------------------------------------------------------------------------
# Item 1: the same warnings from Python and the command line
# ----------------------------------------------------------------------------------------------


def test_fit_without_task_id_warns_in_python():
    with pytest.warns(UnclusteredWarning, match=r"has no task_id column, so intervals are per "
                      r"verdict.*'question_id' looks like the task: pass "
                      r"`cluster='question_id'`"):  # fmt: skip
        r = ratings.fit(ARENA)
    assert r.cluster is None
    # the advice holds: clustered by question, no warning, and the intervals widen
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnclusteredWarning)
        clustered = ratings.fit(ARENA, cluster="question_id")
        ratings.fit(ARENA, cluster=None)  # said to be independent: no warning
        ratings.fit(ARENA, ci="model")  # no sandwich: nothing to warn about
    assert (clustered.se > r.se).all()


@pytest.mark.parametrize("case", ["no-task", "counts-no-task", "one-judge", "penalty",
                                  "clean"])  # fmt: skip
def test_python_and_cli_warnings_are_equal(case, tmp_path, capsys):
    rows = [(a, b, w, f"t{k % 4}") for k, (a, b, w) in enumerate(BOARD)]
    argv: list[str] = []
    kwargs: dict = {}
    if case == "no-task":
        path = _csv(tmp_path / "v.csv", "model_a,model_b,winner", BOARD)
    elif case == "counts-no-task":
        path = _csv(tmp_path / "c.csv", "model_a,model_b,wins_a,wins_b,ties",
                    [("x", "y", "3", "1", "0"), ("y", "z", "2", "1", "1"),
                     ("z", "x", "1", "2", "0")])  # fmt: skip
    elif case == "one-judge":  # Crowd-BT with one judge: weakly identified (a JudgeWarning)
        path = _csv(tmp_path / "v.csv", "model_a,model_b,winner,task_id,judge",
                    [(*r, "j1") for r in rows] * 3)  # fmt: skip
        argv, kwargs = ["--model", "crowd-bt", "--no-cluster"], {"model": "crowd-bt",
                                                                  "cluster": None}
    elif case == "penalty":  # a model that never lost: rated only through the penalty
        path = _csv(tmp_path / "v.csv", "model_a,model_b,winner,task_id",
                    [("x", "y", "A", "t1"), ("x", "z", "A", "t2"), ("y", "z", "A", "t3"),
                     ("z", "y", "A", "t4"), ("y", "z", "tie", "t5")])  # fmt: skip
        argv, kwargs = ["--penalty", "0.1"], {"model": ratings.BT(penalty=0.1)}
    else:
        path = _csv(tmp_path / "v.csv", "model_a,model_b,winner,task_id", rows)
    python = _python_warnings(lambda: ratings.fit(path, **kwargs))
    assert main(["fit", str(path), *argv]) == 0
    cli = _cli_warnings(capsys.readouterr().err)
    assert cli == [text for _, text in python]
    if case in ("no-task", "counts-no-task"):
        assert [c for c, _ in python] == [UnclusteredWarning]
    elif case == "clean":
        assert python == []
    else:
        assert python, "the case should warn"


def test_cli_prints_warnings_raised_before_an_error(tmp_path, capsys):
    path = _csv(tmp_path / "v.csv", "model_a,model_b,winner",
                [("x", "y", "A"), ("x", "z", "A"), ("y", "z", "A"), ("z", "y", "A")])
    assert main(["fit", str(path)]) == 2  # x never lost: no finite rating
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("ratings: warning: ") and "per verdict" in lines[0]
    assert lines[1].startswith("ratings: error: ") and "never lost" in lines[1]


# ----------------------------------------------------------------------------------------------
# Item 2: hints that run when followed; one set of input options
# ----------------------------------------------------------------------------------------------


def _hinted_columns(err: str) -> str:
    found = re.search(r"`--columns ([^`]+)`", err)
    assert found, err
    return shlex.split(found.group(1))[0]


@pytest.mark.parametrize("header,expected", [
    ("model_1,model_2,result,question_id",
     "model_1=model_a,model_2=model_b,result=winner,question_id=task_id"),
    ("prompt_id,player_a,player_b,tokens_a,tokens_b,outcome",
     "player_a=model_a,player_b=model_b,outcome=winner,prompt_id=task_id"),
    ("left,right,winner", "left=model_a,right=model_b"),
    ("model_a,model_2,winner", "model_2=model_b"),
])  # fmt: skip
def test_column_hint_maps_every_missing_column_once_and_runs(header, expected, tmp_path, capsys):
    names = header.split(",")
    cells = {"model_1": "{a}", "model_2": "{b}", "player_a": "{a}", "player_b": "{b}",
             "left": "{a}", "right": "{b}", "model_a": "{a}", "result": "{w}",
             "outcome": "{w}", "winner": "{w}"}  # fmt: skip
    rows = [tuple(cells.get(n, f"t{k % 3}" if "id" in n else "5").format(a=a, b=b, w=w)
                  for n in names) for k, (a, b, w) in enumerate(BOARD)]  # fmt: skip
    path = _csv(tmp_path / "v.csv", header, rows)
    assert main(["fit", str(path)]) == 2
    mapping = _hinted_columns(capsys.readouterr().err)
    assert mapping == expected
    sources = [p.split("=")[0] for p in mapping.split(",")]
    targets = [p.split("=")[1] for p in mapping.split(",")]
    assert len(set(sources)) == len(sources) and len(set(targets)) == len(targets)
    assert main(["fit", str(path), "--columns", mapping]) == 0, capsys.readouterr().err


def test_duplicate_mapping_keys_are_an_error(tmp_path, capsys):
    path = _csv(tmp_path / "v.csv", "model_1,model_2,result", BOARD)
    code = main(["fit", str(path), "--columns", "model_1=model_a,model_2=model_b,"
                 "model_1=model_b,result=winner"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "gives ['model_1'] more than once" in err and "`--columns" in err


def _verdict_parsers() -> dict[str, argparse.ArgumentParser]:
    return {n: p for n, p in subcommands().items()
            if any(a.dest == "verdicts" for a in p._actions)}  # fmt: skip


def test_every_verdict_reader_takes_the_same_input_options():
    readers = _verdict_parsers()
    assert {"fit", "judges", "combine", "audit", "report", "next"} <= set(readers)
    for name, p in readers.items():
        flags = {s for a in p._actions for s in a.option_strings}
        assert {"--columns", "--winner-map", "--delimiter", "--encoding"} <= flags, name
        if name != "next":  # the planner computes no intervals to cluster
            assert {"--cluster", "--no-cluster"} <= flags, name


def test_subcommands_offer_only_their_flags(tmp_path, capsys):
    parsers = subcommands()
    flags = {n: {s for a in p._actions for s in a.option_strings} for n, p in parsers.items()}
    assert not {"--firth", "--penalty", "--adjust", "--style"} & flags["judges"]
    assert not {"--firth", "--penalty", "--scope"} & flags["combine"]
    path = _csv(tmp_path / "v.csv", "model_a,model_b,winner,judge",
                [(*r, "j1") for r in BOARD])  # fmt: skip
    assert main(["judges", str(path), "--model", "bt", "-o", str(tmp_path / "j.json")]) == 2
    err = capsys.readouterr().err
    assert "`ratings judges` fits Crowd-BT" in err and "--model bt" in err
    assert not (tmp_path / "j.json").exists()


def test_standard_input_delimiter_and_encoding(tmp_path, capsys, monkeypatch):
    text = "model_a;model_b;winner;task_id\n" + "".join(
        f"{a};{b};{w};t{k % 3}\n" for k, (a, b, w) in enumerate(BOARD))  # fmt: skip
    expected = ratings.fit(pd.DataFrame([r.split(";") for r in text.split()[1:]],
                                        columns=text.split()[0].split(";")))  # fmt: skip
    cp = tmp_path / "latin.csv"
    cp.write_bytes(text.replace("x", "é").encode("latin-1"))
    monkeypatch.setattr(sys, "stdin", TextIOWrapper(BytesIO(text.encode())))
    out = tmp_path / "r.csv"
    assert main(["fit", "-", "--delimiter", ";", "-o", str(out)]) == 0
    got = pd.read_csv(out).set_index("model")
    assert np.allclose(got.loc[expected.models, "elo"], expected.elo)
    # a latin-1 file: refused with the first bad byte's line, read with --encoding
    assert main(["fit", str(cp), "--delimiter", ";"]) == 2
    assert "not valid UTF-8" in capsys.readouterr().err
    assert main(["fit", str(cp), "--delimiter", ";", "--encoding", "latin-1"]) == 0
    assert "é" in capsys.readouterr().out
    # an error in standard input names it, not a temporary file
    monkeypatch.setattr(sys, "stdin", TextIOWrapper(BytesIO(b"a,b\n1,2\n")))
    assert main(["fit", "-"]) == 2
    err = capsys.readouterr().err
    assert "'<stdin>': Column(s)" in err and "tmp" not in err.split("Available")[0]


# ----------------------------------------------------------------------------------------------
# Item 5: messages name flags, values and lines
# ----------------------------------------------------------------------------------------------


def test_rejected_rows_file_gives_each_rows_line(tmp_path, capsys):
    path = tmp_path / "v.csv"
    path.write_text('model_a,model_b,winner,note\nx,y,A,\n\ny,z,A,\nz,x,draw,\nz,y,B,"two\nlines"\n'
                    "x,x,A,\ny,x,A,\nz,x,A,\nx,z,B,\n", encoding="utf-8")  # fmt: skip
    assert main(["fit", str(path), "--rejected", str(tmp_path / "rej.csv")]) == 0
    rejected = pd.read_csv(tmp_path / "rej.csv")
    lines = path.read_text().splitlines()
    assert rejected["line"].tolist() == [5, 8]  # counted by hand: header 1, blank line 3
    assert lines[5 - 1] == "z,x,draw," and lines[8 - 1] == "x,x,A,"


# ----------------------------------------------------------------------------------------------
# Item 9: one consistent command line
# ----------------------------------------------------------------------------------------------


def test_every_subcommand_has_a_description_and_examples_that_parse():
    from ratings.cli.app import _parser

    parser = _parser([])
    for name, p in subcommands().items():
        assert p.description and len(p.description) > 40, name
        examples = [ln.strip() for ln in (p.epilog or "").splitlines()[1:] if ln.strip()]
        assert examples, f"{name} has no example"
        for example in examples:
            words = shlex.split(example)
            assert words[:2] == ["ratings", name]
            parser.parse_args(words[1:])  # exits on a flag the parser does not know


def test_metavars_are_upper_case_and_writers_take_o():
    for name, p in subcommands().items():
        for a in p._actions:
            if isinstance(a.metavar, str):
                assert a.metavar == a.metavar.upper(), (name, a.metavar)
        out = [a for a in p._actions if a.dest == "out"]
        if out:
            assert "-o" in out[0].option_strings, name


def test_demo_ends_with_commands_to_try_that_parse(capsys):
    from ratings.cli.app import _parser

    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith(NEXT_STEPS.rstrip())
    commands = [ln.split("#")[0].strip() for ln in NEXT_STEPS.splitlines()
                if ln.strip().startswith("ratings ")]  # fmt: skip
    assert len(commands) >= 5
    for command in commands:
        if "COMMAND" not in command:
            _parser([]).parse_args(shlex.split(command)[1:])


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".json", ".jsonl", ".parquet"])
def test_every_table_in_every_format(suffix, tmp_path, capsys):
    path = _csv(tmp_path / "v.csv", "model_a,model_b,winner,task_id",
                [(a, b, w, f"t{k % 4}") for k, (a, b, w) in enumerate(BOARD)])  # fmt: skip
    r = ratings.fit(path)
    out, pairs = tmp_path / f"r{suffix}", tmp_path / f"p{suffix}"
    assert main(["fit", str(path), "-o", str(out), "--pairs", str(pairs)]) == 0
    capsys.readouterr()

    def read(p: Path) -> pd.DataFrame:
        if suffix == ".json":
            doc = json.loads(p.read_text())
            return pd.DataFrame(doc["ratings"] if isinstance(doc, dict) else doc)
        if suffix == ".jsonl":
            return pd.read_json(p, lines=True)
        if suffix == ".parquet":
            return pd.read_parquet(p)
        return pd.read_csv(p, sep="\t" if suffix == ".tsv" else ",")

    table = read(out).set_index("model")
    assert np.allclose(table.loc[r.models, "elo"], r.elo, rtol=0, atol=1e-9)
    assert len(read(pairs)) == 3


def test_precision_rounds_written_tables_only(tmp_path, capsys):
    path = _csv(tmp_path / "v.csv", "model_a,model_b,winner,task_id",
                [(a, b, w, f"t{k % 4}") for k, (a, b, w) in enumerate(BOARD)])  # fmt: skip
    r = ratings.fit(path)
    assert main(["fit", str(path), "-o", str(tmp_path / "full.csv")]) == 0
    assert main(["fit", str(path), "-o", str(tmp_path / "r.csv"), "--precision", "4"]) == 0
    capsys.readouterr()
    full = pd.read_csv(tmp_path / "full.csv").set_index("model")
    short = pd.read_csv(tmp_path / "r.csv").set_index("model")
    assert np.array_equal(full.loc[r.models, "elo"], r.elo)  # full precision by default
    for m in r.models:  # 4 significant digits, checked with Python's own formatting
        assert short.loc[m, "elo"] == float(f"{r.elo[m]:.4g}")
    assert main(["fit", str(path), "-o", str(tmp_path / "x.csv"), "--precision", "0"]) == 2
    assert "`--precision 0`" in capsys.readouterr().err


# ----------------------------------------------------------------------------------------------
# docs/cli.md: the reference covers the parsers
# ----------------------------------------------------------------------------------------------


def test_docs_cli_covers_every_subcommand_and_flag():
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for name, p in subcommands().items():
        assert f"## `ratings {name}`" in text, name
        section = text.split(f"## `ratings {name}`")[1].split("\n## ")[0]
        for a in p._actions:
            for flag in a.option_strings:
                if flag not in ("-h", "--help") and a.help != argparse.SUPPRESS:
                    assert f"`{flag}" in section or f", {flag}" in section, (name, flag)

