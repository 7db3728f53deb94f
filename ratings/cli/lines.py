"""Rows named by their line in the file: the command line's tables of rejected rows carry the
line of each row (the header being line 1) beside its 0-based data row number."""

from __future__ import annotations

import argparse
import os
import re

import numpy as np
import pandas as pd

from ratings.io.lines import record_lines

__all__ = ["name_lines", "rows_table"]


def about_verdicts(message: str, path: object) -> bool:
    """Is ``message`` about the rows of the verdict file ``path`` (its reader's messages start
    with the file's name; a counts table's checks name "the counts table")?"""
    return isinstance(path, str) and os.path.isfile(path) and (
        message.startswith(f"{path!r}: ") or "of the counts table" in message)  # fmt: skip


def rows_table(rows: pd.DataFrame, message: str, args: argparse.Namespace) -> pd.DataFrame:
    """``rows`` (with a ``row`` column of 0-based data rows) with the ``line`` of each row in
    the verdict file first, when ``message`` is about the verdicts and they are a text table."""
    path = getattr(args, "verdicts", None)
    if "row" not in rows.columns or not about_verdicts(message, path):
        return rows
    lines = record_lines(path, rows["row"].to_numpy())
    if lines is None:
        return rows
    return rows.assign(line=lines)[["line", *rows.columns]]


_ROWS = re.compile(r"\brows \[(\d+(?:, \d+)*)(, \.\.\.)?\]")
_ROW = re.compile(r"\bat row (\d+)\b")


def name_lines(message: str, path: object) -> str:
    """A reader's message about ``path`` with its ``rows [..]`` (0-based data rows) named as
    ``lines [..]`` of the file, saying so; other messages unchanged."""
    if not about_verdicts(message, path) or not _ROWS.search(message):
        return message
    found = [int(n) for m in _ROWS.finditer(message) for n in m.group(1).split(", ")]
    found += [int(m.group(1)) for m in _ROW.finditer(message)]
    lines = record_lines(path, np.asarray(found))
    if lines is None:
        return message
    line_of = dict(zip(found, lines.tolist(), strict=True))

    def as_lines(m: re.Match) -> str:
        shown = ", ".join(str(line_of[int(n)]) for n in m.group(1).split(", "))
        return f"lines [{shown}{m.group(2) or ''}]"

    message = _ROW.sub(lambda m: f"at line {line_of[int(m.group(1))]}", message)
    return _ROWS.sub(as_lines, message) + " (Lines of the file, the header being line 1.)"
