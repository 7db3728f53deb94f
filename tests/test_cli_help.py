"""The first commands a new user types: help for the program and each subcommand, and --version."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import ratings
from ratings.cli.app import _parser, main

ROOT = Path(__file__).resolve().parents[1]


def _subcommands() -> list[str]:
    actions = [a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return sorted(actions[0].choices)


def test_every_subcommand_is_covered():
    # the list is read from the parser, so a new subcommand is tested without editing this file
    assert {"fit", "judges", "combine", "rubric", "freeze", "plot", "demo", "next"} <= set(
        _subcommands()
    )


@pytest.mark.parametrize("argv", [["--help"], ["-h"]] + [[c, "--help"] for c in _subcommands()])
def test_help_exits_zero_and_prints_usage(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: ratings")
    if len(argv) == 2:
        assert f"ratings {argv[0]}" in out


def test_version_matches_the_package_metadata(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"ratings {ratings.__version__}"
    # one source of truth: pyproject reads the version from the package
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" in project.get("dynamic", [])


@pytest.mark.slow
def test_help_and_version_from_a_fresh_process():
    for argv in (["--help"], ["-h"], ["--version"], ["fit", "-h"], ["plot", "--help"]):
        done = subprocess.run([sys.executable, "-m", "ratings.cli.app", *argv],
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
        assert done.stdout.strip()
