"""Tables the command line writes: one set of formats, chosen by the file's suffix, for every
table of every subcommand (.csv, .tsv, .json, .jsonl, .parquet; text formats optionally
compressed), at full precision unless ``--precision N`` asks for N significant digits."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["TABLE_FORMATS", "add_precision_option", "check_table_suffix", "rounded",
           "write_table"]  # fmt: skip

#: Suffixes of the tables the command line writes (a text format may end in .gz, .bz2, .xz).
TABLE_FORMATS = (".csv", ".tsv", ".json", ".jsonl", ".parquet")
_ALSO = (".ndjson", ".pq")
_COMPRESSED = (".gz", ".bz2", ".xz")


def add_precision_option(p: argparse.ArgumentParser) -> None:
    """Add ``--precision N`` (significant digits of written tables; default: full)."""
    p.add_argument("--precision", type=int, metavar="N",
                   help="round the numbers of written tables to N significant digits "
                        "(default: full precision)")  # fmt: skip


def _suffix(path: str) -> str:
    name = path.lower()
    for ext in _COMPRESSED:
        if name.endswith(ext):
            name = name[: -len(ext)]
            break
    return Path(name).suffix


def check_table_suffix(path: str | None, flag: str, *, extra: Sequence[str] = ()) -> None:
    """Refuse, before any work, an output whose suffix is not a table format."""
    if path is None:
        return
    suffix = _suffix(path)
    allowed = (*TABLE_FORMATS, *_ALSO, *extra)
    compressed = any(path.lower().endswith(e) for e in _COMPRESSED)
    if suffix not in allowed or (compressed and suffix in (".parquet", ".pq")):
        raise ValueError(f"`{flag} {path}`: the format is chosen by the suffix: "
                         f"{', '.join((*TABLE_FORMATS, *extra))} (text formats optionally "
                         ".gz, .bz2 or .xz).")  # fmt: skip


def rounded(table: pd.DataFrame, precision: int | None) -> pd.DataFrame:
    """``table`` with its float columns rounded to ``precision`` significant digits."""
    if precision is None:
        return table
    if not 1 <= precision <= 17:
        raise ValueError(f"`--precision {precision}` must be a number of significant digits "
                         "from 1 to 17.")  # fmt: skip
    out = table.copy()
    for col in out.columns:
        if pd.api.types.is_float_dtype(out[col]):
            x = out[col].to_numpy(dtype=float)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                mag = np.floor(np.log10(np.abs(x)))
                scale = 10.0 ** (precision - 1 - np.where(np.isfinite(mag), mag, 0))
                r = np.round(x * scale) / scale
            out[col] = np.where(np.isfinite(r) & np.isfinite(x), r, x)
    return out


def write_table(table: pd.DataFrame, path: str, *, inputs: Sequence[str] = (),
                csv_escape: bool = True, precision: int | None = None) -> None:  # fmt: skip
    """Write ``table`` atomically in the format of ``path``'s suffix (JSON at 15 digits, the
    most JSON round-trips; the others at full precision unless ``precision``)."""
    from ratings.io import write_atomic

    table = rounded(table, precision)
    suffix = _suffix(path)
    if suffix == ".json" and not path.lower().endswith(_COMPRESSED):
        text = table.to_json(orient="records", indent=2, double_precision=15) + "\n"
        write_atomic(text, path, inputs=inputs)
    elif suffix in (".jsonl", ".ndjson") and not path.lower().endswith(_COMPRESSED):
        text = table.to_json(orient="records", lines=True, double_precision=15)
        write_atomic(text if text.endswith("\n") else text + "\n", path, inputs=inputs)
    else:
        write_atomic(table, path, inputs=inputs, csv_escape=csv_escape)
