"""Tests for :mod:`ratings.io`: atomic writes (formats, never overwriting the input, the old
file kept when writing fails) and the rejected-rows file."""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest
from verdict_files import HEADER, write

from ratings.io import read_verdicts, write_atomic, write_rejected

# ----------------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------------


def test_write_atomic_formats(tmp_path: Path) -> None:
    df = pd.DataFrame({"a": ["007", "x"], "b": [1, 2]})
    write_atomic(df, tmp_path / "o.csv")
    assert (tmp_path / "o.csv").read_text() == "a,b\n007,1\nx,2\n"
    write_atomic(df, tmp_path / "o.json")
    assert json.loads((tmp_path / "o.json").read_text()) == [{"a": "007", "b": 1},
                                                             {"a": "x", "b": 2}]  # fmt: skip
    write_atomic(df, tmp_path / "o.csv.gz")
    assert gzip.decompress((tmp_path / "o.csv.gz").read_bytes()) == b"a,b\n007,1\nx,2\n"
    write_atomic(df, tmp_path / "o.parquet")
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "o.parquet"), df)
    write_atomic("héllo\n", tmp_path / "o.txt")
    assert (tmp_path / "o.txt").read_text(encoding="utf-8") == "héllo\n"
    with pytest.raises(ValueError, match="Cannot tell how to write a DataFrame"):
        write_atomic(df, tmp_path / "o.xlsx")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "o.csv", "o.csv.gz", "o.json", "o.parquet", "o.txt"]


def test_write_atomic_refuses_to_overwrite_input(tmp_path: Path) -> None:
    src = write(tmp_path / "v.csv", HEADER + "x,y,A,t\n")
    df = pd.DataFrame({"a": [1]})
    with pytest.raises(ValueError, match="refusing to overwrite the input file"):
        write_atomic(df, src, inputs=[src])
    # Another spelling of the same path, and a hard link, are the same file too.
    other = tmp_path / "sub" / ".." / "v.csv"
    (tmp_path / "sub").mkdir()
    with pytest.raises(ValueError, match="refusing to overwrite the input file"):
        write_atomic("text", other, inputs=[str(src)])
    os.link(src, tmp_path / "link.csv")
    with pytest.raises(ValueError, match="refusing to overwrite the input file"):
        write_atomic(df, tmp_path / "link.csv", inputs=[src])
    assert src.read_text() == HEADER + "x,y,A,t\n"


def test_write_atomic_keeps_old_file_when_writing_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = write(tmp_path / "out.csv", "old,content\n1,2\n")
    target.chmod(0o640)

    def broken_to_csv(self: pd.DataFrame, path: str, *args: object, **kwargs: object) -> None:
        with open(path, "w") as fh:  # a partial write, then a failure
            fh.write("a,b\n1,")
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_csv", broken_to_csv)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(pd.DataFrame({"a": [1], "b": [2]}), target)
    assert target.read_text() == "old,content\n1,2\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]  # no temporary file left
    monkeypatch.undo()
    write_atomic(pd.DataFrame({"a": [1]}), target)
    assert target.read_text() == "a\n1\n"
    assert target.stat().st_mode & 0o777 == 0o640  # permissions kept


def test_write_atomic_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_atomic("x", tmp_path / "no" / "such.txt")


def test_write_rejected(tmp_path: Path) -> None:
    src = write(tmp_path / "v.csv", HEADER + "x,y,A,007\nx,y,draw,008\n")
    log = read_verdicts(src, errors="report")
    write_rejected(log, tmp_path / "rejected.csv")
    back = pd.read_csv(tmp_path / "rejected.csv", dtype=str)
    assert back.to_dict("records") == [{"line": "3", "row": "1", "reason": "unknown winner value",
                                        "model_a": "x", "model_b": "y", "winner": "draw",
                                        "task_id": "008"}]  # fmt: skip
    write_rejected(log, tmp_path / "rejected.txt")
    assert (tmp_path / "rejected.txt").read_text().startswith("line,row,reason,model_a")
    expected = f"refusing to overwrite the input file {str(src)!r}"
    with pytest.raises(ValueError, match=re.escape(expected)):
        write_rejected(log, src)
