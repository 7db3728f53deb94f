"""The subcommands' one shape: a module of :mod:`ratings.cli.commands` per subcommand, each a
:class:`ratings.cli.kit.Command` built by :func:`ratings.cli.kit.add_command`; ``next`` from
``sampling`` through the same kit; one path for reading verdicts."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

import ratings
import ratings.cli.commands as commands
from ratings.cli.app import build_parser, main
from ratings.cli.kit import Command
from ratings.cli.reference import reference

EXPECTED = ["fit", "ties", "judges", "combine", "rubric", "assign-judges", "place", "drift",
            "fragility", "freeze", "plot", "audit", "report", "demo", "style-features"]  # fmt: skip


def _choices(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_builtin_subcommand_is_one_module_with_one_command():
    found = commands.builtin()
    assert [c.name for c in found] == EXPECTED
    assert all(isinstance(c, Command) for c in found)
    parsers = _choices(build_parser([]))
    assert list(parsers)[:len(EXPECTED)] == EXPECTED
    for command in found:  # the parser runs the module's own handler
        assert parsers[command.name].get_default("func") is command.run


@pytest.mark.parametrize("name", EXPECTED)
def test_a_builtin_subcommand_is_built_alone_with_the_same_parser(name):
    # the command line of a built-in subcommand builds that one only (the others cost a fresh
    # `ratings fit` about 10 ms); its parser, help and defaults are those built among all
    alone = _choices(build_parser([name, "x"]))
    assert list(alone) == [name]
    among = _choices(build_parser([]))[name]
    assert alone[name].format_help() == among.format_help()
    defaults = [{a.dest: a.default for a in p._actions} | p._defaults for p in (alone[name], among)]
    assert defaults[0] == defaults[1]
    # the program's own help (or version) before the name lists every subcommand
    assert len(_choices(build_parser(["--help", name]))) > len(EXPECTED)


def test_fit_imports_no_other_subcommand(tmp_path):
    code = ("import json, sys; from ratings.cli.app import build_parser; "
            "build_parser(['fit', 'v.csv']).parse_args(['fit', 'v.csv']); "
            "print(json.dumps(sorted(m for m in sys.modules "
            "if m.startswith('ratings.cli.commands.'))))")  # fmt: skip
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)  # fmt: skip
    assert json.loads(proc.stdout) == ["ratings.cli.commands.fit"]


def test_next_is_registered_through_the_same_kit():
    from sampling.cli import COMMAND, cmd_next

    assert isinstance(COMMAND, Command) and COMMAND.run is cmd_next
    parsers = _choices(build_parser([]))
    assert list(parsers) == [*EXPECTED, "next"]
    assert parsers["next"].get_default("func") is cmd_next
    assert parsers["next"].get_default("io_outputs") == {"out": "--out", "forfeits": "--forfeits"}


THROWAWAY = '''
"""``ratings hello NAME``: a subcommand made of this one module."""

import argparse

from ratings.cli.kit import Command, add_output_options

__all__ = ["COMMAND"]


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", metavar="NAME", help="whom to greet")
    p.add_argument("-o", "--out", metavar="FILE", help="write the greeting here")
    add_output_options(p)


def _run(args: argparse.Namespace) -> int:
    print(f"hello {args.name}")
    return 0


COMMAND = Command(name="hello", help="say hello", add_arguments=_arguments, run=_run,
                  examples=("ratings hello you",), inputs={"name": "NAME"},
                  outputs={"out": "--out"}, order=15)
'''


@pytest.fixture
def throwaway(tmp_path, monkeypatch):
    """A subcommand added as one new module of the package (here in a folder of its path)."""
    (tmp_path / "hello.py").write_text(textwrap.dedent(THROWAWAY), encoding="utf-8")
    monkeypatch.setattr(commands, "__path__", [*commands.__path__, str(tmp_path)])
    yield
    sys.modules.pop("ratings.cli.commands.hello", None)


def test_adding_a_subcommand_is_adding_one_module(throwaway, capsys, tmp_path):
    assert main(["hello", "you"]) == 0
    assert capsys.readouterr().out == "hello you\n"
    names = list(_choices(build_parser([])))
    assert names[:2] == ["fit", "hello"]  # placed by its own order
    with pytest.raises(SystemExit):
        main(["hello", "--help"])
    shown = capsys.readouterr().out
    assert "say hello" in shown and "ratings hello you" in shown and "--no-csv-escape" in shown
    assert "## `ratings hello`" in reference()  # and in docs/cli.md once regenerated
    # its outputs are checked against its inputs like every subcommand's
    name = str(tmp_path / "hello.py")
    assert main(["hello", name, "-o", name]) == 2
    assert "NAME" in capsys.readouterr().err


def test_a_module_must_define_the_subcommand_named_like_it(tmp_path, monkeypatch):
    (tmp_path / "other.py").write_text(textwrap.dedent(THROWAWAY), encoding="utf-8")
    monkeypatch.setattr(commands, "__path__", [*commands.__path__, str(tmp_path)])
    try:
        with pytest.raises(RuntimeError, match="named like it"):
            commands.builtin()
    finally:
        sys.modules.pop("ratings.cli.commands.other", None)


def test_a_registration_function_of_earlier_releases_still_registers():
    from sampling.cli import add_next_parser

    parser = argparse.ArgumentParser(prog="ratings")
    sub = parser.add_subparsers(dest="command")
    p = add_next_parser(sub, object())
    assert p.get_default("func").__name__ == "cmd_next"


def _log(path, scoped=False):
    rng = np.random.default_rng(0)
    models = ["a", "b", "c", "d"]
    rows = []
    for t in range(30):
        i, j = rng.choice(4, 2, replace=False)
        rows.append((f"t{t}", models[i], models[j], rng.choice(["A", "B", "tie"]), "j1"))
    frame = pd.DataFrame(rows, columns=["task_id", "model_a", "model_b", "winner", "judge"])
    if scoped:
        frame["scope"] = np.where(np.arange(len(frame)) % 2, "one", "two")
    frame.to_csv(path, index=False)


@pytest.mark.parametrize("argv", [
    ["fit", "{log}"], ["judges", "{log}", "-o", "{dir}/j.json"], ["combine", "{log}"],
    ["audit", "{log}", "--n-boot", "20"], ["report", "{log}", "-o", "{dir}/r.html"],
    ["next", "{log}", "--judges", "j1", "--n", "4", "--seed", "1", "-o", "{dir}/n.csv"],
])  # fmt: skip
def test_every_command_reads_verdicts_by_one_path(argv, tmp_path, monkeypatch, capsys):
    import inspect

    log = tmp_path / "log.csv"
    _log(log, scoped=argv[0] == "combine")
    callers = []
    real = ratings.read_verdicts

    def spy(source, *args, **kwargs):
        if not isinstance(source, pd.DataFrame):  # a file (a frame is rows already read)
            callers.append(inspect.stack()[1].function)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(ratings, "read_verdicts", spy)
    words = [w.format(log=log, dir=tmp_path) for w in argv]
    assert main(words) == 0, capsys.readouterr().err
    assert callers == ["read_log"]
