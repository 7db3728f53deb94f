"""Outputs: checked against inputs and each other, written through links, atomically, with text
cells escaped for spreadsheets; a killed writer leaves the old file and no temporary file."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ratings
import ratings.io.writers as writers
from ratings.cli.app import main
from ratings.core.errors import OutputError
from ratings.io import read_verdicts, write_atomic
from ratings.io.cells import escape_formulas, unescape_formulas
from ratings.scopes.registry import freeze, load_registry

ROOT = Path(__file__).resolve().parents[1]
GOOD = "model_a,model_b,winner\nx,y,A\ny,z,A\nz,x,A\nx,y,B\n"
BAD_ROW = GOOD + "x,y,draw\n"


def files(directory: Path) -> dict[str, bytes]:
    """Every entry of ``directory`` (hidden temporary files included) with its bytes."""
    return {p.name: (p.read_bytes() if p.is_file() else b"<dir>")
            for p in sorted(directory.iterdir())}  # fmt: skip


def run(argv, capsys) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err


@pytest.fixture
def log(tmp_path) -> Path:
    path = tmp_path / "v.csv"
    path.write_text(BAD_ROW)
    return path


# ----------------------------------------------------------------------------------------------
# Outputs against inputs and each other
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("second", ["--rejected", "--judges-out"])
def test_two_outputs_naming_one_file_are_refused(tmp_path, log, capsys, second):
    before = files(tmp_path)
    extra = ["--model", "crowd-bt"] if second == "--judges-out" else []
    code, err = run(["fit", log, "--out", tmp_path / "o.csv", second, tmp_path / "o.csv",
                     *extra], capsys)  # fmt: skip
    assert code == 2
    assert f"`--out` and `{second}` name the same file" in err and "Nothing was written" in err
    assert files(tmp_path) == before


def test_two_outputs_one_through_a_link_are_refused(tmp_path, log, capsys):
    (tmp_path / "link.csv").symlink_to(tmp_path / "o.csv")  # dangling: o.csv does not exist
    before = files(tmp_path)
    code, err = run(["fit", log, "--out", tmp_path / "o.csv", "--rejected",
                     tmp_path / "link.csv"], capsys)  # fmt: skip
    assert code == 2 and "`--out` and `--rejected` name the same file" in err
    assert files(tmp_path) == before


def test_output_linked_to_an_input_is_refused(tmp_path, log, capsys):
    (tmp_path / "link.csv").symlink_to(log)
    before = files(tmp_path)
    code, err = run(["fit", log, "--rejected", tmp_path / "link.csv"], capsys)
    assert code == 2
    assert "refusing to overwrite the input file" in err and "(VERDICTS) with `--rejected`" in err
    assert files(tmp_path) == before


def test_outputs_write_through_symbolic_links(tmp_path, log, capsys):
    target = tmp_path / "real" / "ratings.csv"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "latest.csv"
    link.symlink_to(target)
    code, _ = run(["fit", log, "--out", link, "--rejected", tmp_path / "rej.csv"], capsys)
    assert code == 0
    assert link.is_symlink() and os.readlink(link) == str(target)  # the link stays
    table = pd.read_csv(target)
    assert sorted(table["model"]) == ["x", "y", "z"]
    assert sorted(p.name for p in target.parent.iterdir()) == ["ratings.csv"]  # no temp file


@pytest.mark.parametrize("make, expected", [
    (lambda d: d.joinpath("out").mkdir() or d / "out", "is a directory"),
    (lambda d: str(d) + os.sep, "is a directory"),
    (lambda d: os.mkfifo(d / "out.csv") or d / "out.csv", "is a FIFO (named pipe)"),
    (lambda d: d / "v.csv" / "out.csv", "is not a directory"),
    (lambda d: d / "missing" / "out.csv", "does not exist"),
])  # fmt: skip
def test_unusable_output_targets_name_the_flag(tmp_path, log, capsys, make, expected):
    out = make(tmp_path)
    before = files(tmp_path)
    code, err = run(["fit", log, "--out", out], capsys)
    assert code == 2, err
    assert err.startswith("ratings: error: `--out`: ") and expected in err
    assert files(tmp_path) == before


def test_read_only_output_names_the_flag(tmp_path, log, capsys, monkeypatch):
    out = tmp_path / "r.csv"
    out.write_text("keep\n")
    real = os.access
    monkeypatch.setattr(writers.os, "access",  # as a user without write permission sees it
                        lambda p, mode: False if Path(p) == out else real(p, mode))  # fmt: skip
    code, err = run(["fit", log, "--rejected", tmp_path / "rej.csv", "--out", out], capsys)
    assert code == 2 and "`--out`: Cannot write" in err and "read-only" in err
    assert out.read_text() == "keep\n" and not (tmp_path / "rej.csv").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_unwritable_directory_names_the_flag(tmp_path, log, capsys):  # pragma: no cover
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        code, err = run(["fit", log, "--out", locked / "r.csv"], capsys)
    finally:
        locked.chmod(0o755)
    assert code == 2 and "`--out`" in err and "not writable" in err


def test_write_error_during_the_write_names_the_flag(tmp_path, log, capsys, monkeypatch):
    def full_disk(self, path, *args, **kwargs):
        with open(path, "w") as fh:
            fh.write("model,el")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_csv", full_disk)
    log.write_text(GOOD)
    code, err = run(["fit", log, "--out", tmp_path / "r.csv"], capsys)
    assert code == 2
    assert "`--out`: Cannot write" in err and "No space left on device" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.csv"]


def test_failed_run_writes_no_output_at_all(tmp_path, capsys):
    """--rejected is written last: a fit that fails leaves no rejected-rows file behind."""
    path = tmp_path / "v.csv"
    path.write_text("model_a,model_b,winner\nx,y,A\ny,z,A\nx,z,A\nx,y,draw\n")  # x never lost
    code, err = run(["fit", path, "--rejected", tmp_path / "rej.csv", "--out",
                     tmp_path / "r.csv"], capsys)  # fmt: skip
    assert code == 2 and "never lost" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.csv"]


# ----------------------------------------------------------------------------------------------
# The temporary file
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("unnamed", [True, False])
def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch,
                                                                   unnamed):  # fmt: skip
    if not unnamed:
        monkeypatch.setattr(writers, "_unnamed", lambda directory: None)
    target = tmp_path / "out.csv"
    target.write_text("old\n")

    def half(path: str) -> None:
        with open(path, "w") as fh:
            fh.write("half")
        raise RuntimeError("the writer broke")

    with pytest.raises(RuntimeError, match="the writer broke"):
        write_atomic(half, target)
    assert files(tmp_path) == {"out.csv": b"old\n"}
    write_atomic("new\n", target)
    assert files(tmp_path) == {"out.csv": b"new\n"}


_KILLED_WRITER = textwrap.dedent("""
    import sys, time
    from ratings.io.writers import write_atomic

    def slow(path):
        with open(path, "w") as fh:
            fh.write("new " * 100_000)
            fh.flush()
            print("writing", flush=True)
            time.sleep(float(sys.argv[2]))
            fh.write("end")

    write_atomic(slow, sys.argv[1])
    print("done", flush=True)
""")


def _killed_writer(target: Path, sleep: float) -> str:
    """Start a writer, SIGKILL it once it has written part of the file (or has finished)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(target), str(sleep)],
                          stdout=subprocess.PIPE, text=True, env=env) as proc:  # fmt: skip
        lines = [proc.stdout.readline().strip()]
        if sleep == 0:
            lines.append(proc.stdout.readline().strip())
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    return " ".join(lines)


def _has_unnamed_files() -> bool:
    fd = writers._unnamed(Path(__file__).parent)
    if fd is not None:
        os.close(fd)
    return fd is not None


@pytest.mark.skipif(not _has_unnamed_files(), reason="no O_TMPFILE here")
def test_a_killed_writer_leaves_old_content_and_no_temporary_file(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    assert _killed_writer(target, sleep=60) == "writing"  # killed halfway through its write
    assert files(tmp_path) == {"out.txt": b"old\n"}
    assert _killed_writer(target, sleep=0) == "writing done"  # killed after it finished
    assert files(tmp_path) == {"out.txt": b"new " * 100_000 + b"end"}


def test_unnamed_file_fd_is_closed_after_writing(tmp_path):
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0
    for k in range(5):
        write_atomic(f"{k}\n", tmp_path / "o.txt")
    after = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0
    assert after == before


def test_write_atomic_refuses_special_and_directory_targets(tmp_path):
    os.mkfifo(tmp_path / "pipe.csv")
    with pytest.raises(OutputError, match=r"'.*pipe\.csv' is a FIFO"):
        write_atomic("x", tmp_path / "pipe.csv")
    with pytest.raises(OutputError, match="is a directory"):
        write_atomic("x", tmp_path)
    assert OutputError.__mro__[1] is OSError


# ----------------------------------------------------------------------------------------------
# Spreadsheet formulas in CSV outputs (OWASP: prefix a single quote)
# ----------------------------------------------------------------------------------------------

FORMULAS = ['=HYPERLINK("http://evil.example","x")', "+cmd|' /C calc'!A0", "-2+3",
            "@SUM(A1:A2)", "\tx", "'=already quoted"]  # fmt: skip


def test_escape_formulas_prefixes_a_quote_and_spares_numbers():
    frame = pd.DataFrame({"model": [*FORMULAS, "-12.5", "+3", "plain", None],
                          "elo": [-1.0, 2, 3, 4, 5, 6, -7.5, 8, 9, 10]})  # fmt: skip
    out = escape_formulas(frame)
    assert out["model"].tolist()[:6] == ["'" + f for f in FORMULAS[:5]] + ["''=already quoted"]
    assert out["model"].tolist()[6:9] == ["-12.5", "+3", "plain"]  # numbers and plain text
    assert out["elo"].tolist() == frame["elo"].tolist()  # numbers are not text
    assert frame["model"].tolist()[0] == FORMULAS[0]  # the input is not modified
    back = unescape_formulas(out.astype({"model": object}))
    assert back["model"].tolist()[:9] == frame["model"].tolist()[:9]


def _spreadsheet_formula(cell: object) -> bool:
    """OWASP's rule, cell by cell: text whose first character after any quotes starts a
    formula, unless the text is a plain decimal number (a sign, digits with at most one point,
    an exponent)."""
    if not isinstance(cell, str):
        return False
    head = cell.lstrip("'")
    if not head or head[0] not in "=+-@\t\r":
        return False
    text = cell[1:] if cell[:1] in ("+", "-") else cell
    mantissa, e, exponent = text.replace("E", "e").partition("e")
    power = exponent[1:] if exponent[:1] in ("+", "-") else exponent
    digits = mantissa.replace(".", "", 1)
    number = (digits.isdecimal() and (not e or power.isdecimal()))
    return not number


@pytest.mark.parametrize("seed", range(4))
def test_escape_formulas_matches_the_cell_rule(seed):
    rng = np.random.default_rng(seed)
    pieces = ["=", "+", "-", "@", "\t", "\r", "'", "''", "1", "2.5", ".5", "e3", "E-2", "x",
              "SUM(A1)", " ", "", "-"]  # fmt: skip
    cells = ["".join(rng.choice(pieces, rng.integers(1, 4))) for _ in range(400)]
    mixed = [*cells, None, np.nan, 3, -2.5, True]
    frame = pd.DataFrame({"text": mixed, "arrow": pd.array([*cells, None, None, None, None,
                                                            None], dtype="string"),
                          "cat": pd.Categorical([*cells, None, None, None, None, None])},
                         index=np.repeat(np.arange(len(mixed) // 5 + 1), 5)[:len(mixed)])
    out = escape_formulas(frame)
    for col in frame.columns:
        want = ["'" + v if _spreadsheet_formula(v) else v for v in frame[col].astype(object)]
        got = out[col].astype(object).tolist()
        assert [g for g in got if isinstance(g, str)] == [w for w in want if isinstance(w, str)]
    assert frame["text"].tolist()[:400] == cells  # the input is not modified


def test_cli_outputs_escape_formulas_and_read_them_back(tmp_path, capsys):
    evil = '=HYPERLINK("http://evil.example","x")'
    path = tmp_path / "v.csv"
    pd.DataFrame({"model_a": ["x", "y", evil, "x", "y"], "model_b": ["y", evil, "x", evil, "x"],
                  "winner": ["A", "A", "A", "B", "draw"]}).to_csv(path, index=False)
    code, _ = run(["fit", path, "--out", tmp_path / "r.csv", "--rejected", tmp_path / "rej.csv"],
                  capsys)  # fmt: skip
    assert code == 0
    raw = pd.read_csv(tmp_path / "r.csv")  # as a spreadsheet sees the cells
    assert "'" + evil in set(raw["model"]) and evil not in set(raw["model"])
    assert (raw["elo"] - raw["elo"].mean()).abs().max() > 0  # numbers stay numbers
    assert set(ratings.io.readers.read_file(str(tmp_path / "r.csv"))["model"]) == {"x", "y", evil}
    code, _ = run(["fit", path, "--no-csv-escape", "--out", tmp_path / "raw.csv", "--rejected",
                   tmp_path / "rej2.csv"], capsys)  # fmt: skip
    assert code == 0 and evil in set(pd.read_csv(tmp_path / "raw.csv")["model"])


def test_registry_round_trip_keeps_escaped_names(tmp_path):
    evil = "=1+1"
    table = pd.DataFrame({"model": [evil, "-5", "y"], "elo": [1500.0, 1000.0, 900.0]})
    freeze(table, tmp_path / "reg.csv", date="2026-01-01")
    assert "'=1+1" in (tmp_path / "reg.csv").read_text()
    assert load_registry(tmp_path / "reg.csv")["model"].tolist() == [evil, "-5", "y"]
    again = freeze(table, tmp_path / "reg.csv", date="2026-02-01")  # nothing new: unchanged
    assert again["frozen_on"].tolist() == ["2026-01-01"] * 3


def test_rejected_rows_and_verdicts_read_back_escaped_names(tmp_path):
    path = tmp_path / "v.csv"
    path.write_text("model_a,model_b,winner\n'@x,y,A\ny,'@x,A\n")
    log = read_verdicts(path)
    assert set(log.verdicts["model_a"]) == {"@x", "y"}


def test_a_system_that_will_not_link_the_unnamed_file_gets_a_copy(tmp_path, monkeypatch):
    def refuse(fd, target):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(writers, "_link_and_replace", refuse)
    target = tmp_path / "out.csv"
    target.write_text("old\n")
    write_atomic(pd.DataFrame({"a": [1, 2]}), target)
    assert files(tmp_path) == {"out.csv": b"a\n1\n2\n"}
