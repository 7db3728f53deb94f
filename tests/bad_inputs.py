"""Small files and checks shared by the bad-input tests (``test_bad_input_*.py``).

:func:`run_cli` runs the command line and asserts exit status 2 and that nothing in the
directory appeared or changed; :func:`tree` is the directory's every entry (hidden temporary
files and links included), byte for byte.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from ratings.cli.app import main

__all__ = [
    "COUNTS",
    "GOOD",
    "REGISTRY_HEADER",
    "SCOPED",
    "judge_file",
    "run_cli",
    "snapshot",
    "tree",
    "write",
]

GOOD = "model_a,model_b,winner\nx,y,A\ny,z,A\nz,x,A\nx,y,B\n"  # a connected three-model board
SCOPED = (
    "model_a,model_b,winner,task_id,scope,judge\n"
    "x,y,A,t1,s1,j1\ny,z,A,t2,s1,j2\nz,x,A,t3,s1,j1\nx,z,tie,t4,s1,j2\nx,y,B,t5,s1,j1\n"
    "y,x,B,t1,s2,j1\nx,y,A,t2,s2,j2\ny,x,A,t3,s2,j1\n"
)
REGISTRY_HEADER = "model,elo,lower,upper,index,frozen_on,source\n"
COUNTS = "model_a,model_b,wins_a,wins_b,ties\nx,y,3,1,0\ny,z,-2,1,0\nz,x,1,1,1\n"


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def snapshot(directory: Path) -> dict[str, object]:
    return tree(directory)  # every entry, hidden temporary files and links included


def run_cli(argv: list[str], capsys, directory: Path, *, entry=main) -> str:
    """Run the CLI; assert exit status 2 and that no file in ``directory`` appeared or changed.
    Returns stderr."""
    before = snapshot(directory)
    try:
        code = entry([str(a) for a in argv])
    except SystemExit as exc:  # argparse usage errors
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert snapshot(directory) == before, "the CLI wrote or changed a file"
    return err


def judge_file(path: Path, scope: str | None, judges: dict[str, float]) -> Path:
    doc = {"format": "ratings.judge_quality/1", "scope": scope, "model": "crowd-bt",
           "judges": [{"judge": j, "eta": eta} for j, eta in judges.items()]}  # fmt: skip
    return write(path, json.dumps(doc))


def tree(directory: Path) -> dict[str, object]:
    """Every entry under ``directory`` (hidden ones too): bytes of files, link targets, types."""
    out: dict[str, object] = {}
    for path in sorted(directory.rglob("*")):
        info = path.lstat()
        rel = str(path.relative_to(directory))
        if stat.S_ISLNK(info.st_mode):
            out[rel] = ("link", os.readlink(path))
        elif stat.S_ISREG(info.st_mode):
            out[rel] = path.read_bytes()
        else:
            out[rel] = ("dir" if stat.S_ISDIR(info.st_mode) else "special", info.st_mode)
    return out
