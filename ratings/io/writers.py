"""The one atomic writer: every output of the package (tables, JSON, figures) goes through
:func:`write_atomic`, which writes a temporary file next to the target and renames it over the
target, and refuses to write over an input."""

from __future__ import annotations

import contextlib
import csv
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

import pandas as pd

from ratings.io.readers import format_of

__all__ = ["same_file", "write_atomic"]

#: ``write(path)`` creates the file at ``path`` (e.g. ``lambda p: fig.savefig(p, format="png")``).
FileWriter = Callable[[str], None]


def write_atomic(
    frame_or_text: pd.DataFrame | str | FileWriter,
    path: str | os.PathLike[str],
    *,
    inputs: Iterable[str | os.PathLike[str]] = (),
) -> None:
    """Write a DataFrame, text or a file writer's output to ``path`` atomically: a temporary
    file in the same directory, flushed to disk, then ``os.replace``.

    Parameters
    ----------
    frame_or_text : pandas.DataFrame, str or callable
        A DataFrame is written by the extension of ``path``: ``.csv`` / ``.tsv`` (no index,
        optionally ``.gz``, ``.bz2``, ``.xz``), ``.json`` (a list of records, indented),
        ``.jsonl`` (JSON Lines) or ``.parquet``. Text is written as UTF-8, as is. A callable
        ``write(tmp_path)`` creates the file itself (e.g. a figure's ``savefig``).
    path : path
        The destination. Its directory must exist. An existing file keeps its permissions.
    inputs : iterable of path, optional
        Files this output was computed from; writing over one of them is refused.

    Raises
    ------
    ValueError
        ``path`` is one of ``inputs``, or the extension is not supported for a DataFrame.
    FileNotFoundError
        The directory of ``path`` does not exist.

    Notes
    -----
    If anything fails, the temporary file is removed and an existing file at ``path`` is left
    as it was.
    """
    target = Path(os.fspath(path))
    for item in inputs:
        if item is not None and same_file(target, item):
            raise ValueError(
                f"refusing to overwrite the input file {os.fspath(item)!r} with output "
                f"{os.fspath(path)!r}; write the output to another path."
            )
    writer, suffix = _writer(frame_or_text, target)
    if not target.parent.is_dir():
        raise FileNotFoundError(
            f"Cannot write {os.fspath(path)!r}: directory {str(target.parent)!r} does not exist."
        )
    mode = target.stat().st_mode & 0o7777 if target.exists() else _default_mode()
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=f".tmp{suffix}",
                               dir=target.parent)  # fmt: skip
    os.close(fd)
    try:
        writer(tmp)
        with open(tmp, "rb+") as fh:  # flush to disk before the rename makes it visible
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _writer(obj: pd.DataFrame | str | FileWriter, target: Path) -> tuple[FileWriter, str]:
    """A function writing ``obj`` to a path, and the suffix the temporary file needs."""
    if callable(obj):
        return obj, target.suffix.lower()
    if isinstance(obj, str):

        def write_text(tmp: str) -> None:
            with open(tmp, "w", encoding="utf-8", newline="") as fh:
                fh.write(obj)

        return write_text, ""
    if not isinstance(obj, pd.DataFrame):
        raise TypeError(f"Expected a DataFrame, str or callable; got {type(obj).__name__!r}.")
    fmt, sep, compression = format_of(target.name)
    name = target.name.lower()
    # Keep the extension (and compression suffix) so pandas infers the compression.
    suffix = "".join(Path(name).suffixes[-2 if compression else -1:])
    if fmt == "csv":
        # pandas quotes fields holding the delimiter, quotes or '\n', but not a bare '\r',
        # which would split the row when read back: quote every text field then.
        text_cols = obj.select_dtypes(include=["object", "string"]).columns
        bare_cr = any(obj[c].astype(str).str.contains("\r", regex=False).any() for c in text_cols)
        quoting = csv.QUOTE_NONNUMERIC if bare_cr else csv.QUOTE_MINIMAL
        return (lambda tmp: obj.to_csv(tmp, index=False, sep=sep or ",",
                                       quoting=quoting)), suffix  # fmt: skip
    if fmt == "parquet":
        return (lambda tmp: obj.to_parquet(tmp, index=False)), suffix
    if fmt == "jsonl" and name.endswith(".json"):
        return (lambda tmp: obj.to_json(tmp, orient="records", lines=False, indent=2)), suffix
    if fmt == "jsonl":
        return (lambda tmp: obj.to_json(tmp, orient="records", lines=True)), suffix
    raise ValueError(
        f"Cannot tell how to write a DataFrame to {str(target)!r} from its extension. Supported: "
        ".csv, .tsv (optionally .gz, .bz2, .xz), .json, .jsonl, .ndjson, .parquet, .pq."
    )


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Do ``a`` and ``b`` name the same file (the same inode, or the same resolved path when
    either does not exist yet)?"""
    a, b = Path(os.fspath(a)), Path(os.fspath(b))
    with contextlib.suppress(OSError):
        if os.path.samefile(a, b):
            return True
    return a.resolve() == b.resolve()


def _default_mode() -> int:
    """Permissions of a newly created file (0o666 less the umask)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask

