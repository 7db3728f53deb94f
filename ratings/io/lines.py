"""The line of a CSV / TSV file on which each data record starts (the header is line 1), for
messages that name rows as a user finds them in an editor."""

from __future__ import annotations

import csv
import io
import os

import numpy as np
from numpy.typing import NDArray

from ratings.io.readers import format_of

__all__ = ["record_lines"]


def _open(name: str, compression: str | None):
    import bz2
    import gzip
    import lzma

    return {None: open, "gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}[compression](
        name, "rb")


def record_lines(path: str | os.PathLike[str],
                 rows: NDArray[np.integer]) -> NDArray[np.int64] | None:  # fmt: skip
    """The 1-based line where each of ``rows`` (0-based data rows, as the readers number them;
    blank lines are skipped, as they are) starts; None when ``path`` is not a readable text
    table."""
    name = os.fspath(path)
    fmt, sep, compression = format_of(os.path.basename(name))
    if fmt != "csv" or not len(rows):
        return None
    wanted = np.asarray(rows, dtype=np.int64)
    last = int(wanted.max())
    starts: list[int] = []
    try:
        with _open(name, compression) as fh:
            text = io.TextIOWrapper(fh, encoding="utf-8-sig", newline="")
            reader = csv.reader(text, delimiter=sep or ",")
            end = 0
            header = True
            for record in reader:
                start, end = end + 1, reader.line_num
                if not record:  # a blank line: not a row
                    continue
                if header:
                    header = False
                    continue
                starts.append(start)
                if len(starts) > last:
                    break
    except (OSError, UnicodeDecodeError, csv.Error):
        return None
    if len(starts) <= last:
        return None
    return np.asarray(starts, dtype=np.int64)[wanted]
