"""Messages name options as the user sets them: Python arguments from the Python API, flags from
the command line (one message text, rendered by :func:`ratings.core.errors.option`)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

import ratings
from ratings.cli.app import FLAGS, main
from ratings.core.errors import option, option_available, options_rendered_by
from ratings.scopes.rubric import read_rubric

GOOD = "model_a,model_b,winner\nx,y,A\ny,z,A\nz,x,A\nx,y,B\n"
PYTHON_SPELLING = re.compile(r"`\w+=|errors='report'|duplicates='last'|winner_map=|columns=\{")


def cli_error(argv) -> str:
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main([str(a) for a in argv]) == 2
    return err.getvalue()


def test_option_renders_python_by_default_and_flags_on_the_command_line():
    from ratings.cli.flags import render_option

    assert option("errors", "report") == "`errors='report'`"
    assert option("level") == "`level`"
    assert option("columns", {"q": "task_id"}) == "`columns={'q': 'task_id'}`"
    with options_rendered_by(render_option):
        assert option("errors", "report") == "`--rejected FILE`"
        assert option("level") == "`--level`"
        assert option("columns", {"q": "task_id", "l": "model_a"}) == (
            "`--columns q=task_id,l=model_a`")
        assert option("winner_map", {"tie (bothbad)": "tie"}) == (
            "`--winner-map 'tie (bothbad)=tie'`")
        assert option("duplicates", "last") == "`--duplicates last`"
        assert option("cluster", None) == "`--no-cluster`"
        assert option("format", "alpaca-eval") == "`--format alpaca-eval`"
        assert not option_available("keep")  # a Python-only argument
    assert option("errors", "report") == "`errors='report'`"  # restored after the block
    assert option_available("keep")


def test_every_flag_in_the_table_exists(capsys):
    """FLAGS names real flags of some subcommand (so messages never advise a missing one)."""
    helps = []
    for command in ("fit", "judges", "combine", "rubric", "assign-judges", "freeze", "next",
                    "plot", "audit", "place", "fragility"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        helps.append(capsys.readouterr().out)
    text = "\n".join(helps)
    missing = [flag for flag in set(FLAGS.values()) if flag not in text]
    assert missing == []


@pytest.mark.parametrize("case", ["errors", "winner_map", "columns", "duplicates", "scope"])
def test_cli_messages_name_flags_and_python_messages_name_arguments(tmp_path, case):
    v = tmp_path / "v.csv"
    if case in ("errors", "winner_map"):
        v.write_text(GOOD + "x,y,draw\n")
        call = lambda: ratings.read_verdicts(v)  # noqa: E731
        argv, python, flag = ["fit", v], {
            "errors": "`errors='report'`", "winner_map": "`winner_map`"}[case], {
            "errors": "`--rejected FILE`", "winner_map": "`--winner-map`"}[case]  # fmt: skip
    elif case == "columns":
        v.write_text("model_a,model_b,Winner\nx,y,A\n")
        call = lambda: ratings.read_verdicts(v)  # noqa: E731
        argv, python, flag = ["fit", v], "`columns={'Winner': 'winner'}`", (
            "`--columns Winner=winner`")
    elif case == "duplicates":
        v = tmp_path / "rubric.csv"
        v.write_text("task_id,model,check_id,passed\nt,x,c,1\nt,y,c,0\nt,x,c,0\n")
        call = lambda: read_rubric(v)  # noqa: E731
        argv = ["rubric", v, "--out", tmp_path / "m.csv"]
        python, flag = "`duplicates='last'`", "`--duplicates last`"
    else:
        v.write_text("model_a,model_b,winner,scope\nx,y,A,s\ny,x,A,t\n")
        call = lambda: ratings.fit(v)  # noqa: E731
        argv, python, flag = ["fit", v], "`scope`", "`--scope`"
    with pytest.raises(ValueError) as info:
        call()
    assert python in str(info.value) and flag not in str(info.value)
    err = cli_error(argv)
    assert flag in err and python not in err
    assert not PYTHON_SPELLING.search(err.split("\n")[0]), err


@pytest.mark.parametrize("argv, flag", [
    (["fit", "{v}", "--level", "1.5"], "`--level`"),
    (["fit", "{v}", "--penalty", "1e308"], "`--penalty`"),
    (["fit", "{v}", "--anchor", "x=1e300"], "`--anchor`"),
    (["fit", "{v}", "--ci", "bootstrap", "--n-boot", "1"], "`--n-boot`"),
    (["fit", "{v}", "--max-memory", "lots"], "`--max-memory`"),
    (["freeze", "{r}", "--registry", "{d}/reg.csv", "--date", "1/2/2026"], "`--date`"),
    (["freeze", "{r}", "--registry", "{d}/reg.csv", "--refreeze", "w"], "`--refreeze`"),
    (["combine", "{s}", "--model", "bt", "--weights", "a=1e308,b=1"], "`--weights`"),
])  # fmt: skip
def test_argument_errors_name_the_flag(tmp_path, argv, flag):
    v = tmp_path / "v.csv"
    v.write_text(GOOD)
    s = tmp_path / "s.csv"
    s.write_text("model_a,model_b,winner,scope\n" + "".join(
        f"{a},{b},{w},{sc}\n" for sc in "ab" for a, b, w in
        [("x", "y", "A"), ("y", "z", "A"), ("z", "x", "A"), ("x", "y", "B")]))  # fmt: skip
    r = tmp_path / "r.csv"
    ratings.fit(v).to_frame().to_csv(r, index=False)
    argv = [a.format(v=v, r=r, d=tmp_path, s=s) for a in argv]
    err = cli_error(argv)
    assert flag in err, err
    assert not PYTHON_SPELLING.search(err), err


def test_python_api_keeps_python_names(tmp_path):
    v = tmp_path / "v.csv"
    v.write_text(GOOD)
    for kwargs, name in ((lambda: {"level": 1.5}, "`level`"),
                         (lambda: {"model": ratings.BT(penalty=1e308)}, "`penalty`"),
                         (lambda: {"anchor": "x=1e300"}, "`anchor`"),
                         (lambda: {"solver": ratings.Solver(max_memory="lots")},
                          "`max_memory`")):  # fmt: skip
        with pytest.raises(ValueError, match=re.escape(name)):  # the spec checks its values
            ratings.fit(v, **kwargs())
    with pytest.raises(ValueError, match=re.escape("`weights`")):
        from ratings.scopes.combine import combine, fit_scopes

        frame = pd.read_csv(v).assign(scope="a")
        both = pd.concat([frame, frame.assign(scope="b")], ignore_index=True)
        combine(fit_scopes(both, model="bt"), weights={"a": 1.0, "b": float("inf")})


def test_no_cli_message_advises_python_arguments():
    """Scan the sources: a backticked ``name=`` in a message string is written with option()."""
    root = Path(__file__).resolve().parents[1]
    offenders = []
    pattern = re.compile(r"""f?["'][^"'\n]*`(errors|winner_map|columns|duplicates|scope|"""
                         r"""fit_new_judges|missing|cluster|penalty|level)=""")  # fmt: skip
    for path in [*root.glob("ratings/**/*.py"), *root.glob("sampling/**/*.py")]:
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            stripped = line.strip()
            if stripped.startswith(("#", "``", ">>>")) or "``" in stripped:
                continue
            if pattern.search(stripped):
                offenders.append(f"{path.relative_to(root)}:{number}: {stripped}")
    assert offenders == []
