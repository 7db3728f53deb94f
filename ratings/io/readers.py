"""File readers: a table file (CSV / TSV, optionally compressed, Parquet, JSON Lines) to a frame.

:func:`read_file` reads every CSV field as text (ids such as ``"007"`` keep their zeros) and
turns every way a file can be unreadable (empty, not UTF-8, malformed, truncated, corrupt) into
an :class:`~ratings.core.errors.InvalidVerdictsError` that says where and how to fix it.
:func:`load_table` reads a path or takes a DataFrame and picks its canonical columns; the
verdict, rubric and registry readers are built on it.
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import csv
import gzip
import io as _io
import json
import lzma
import os
import re
import stat
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import IO, Literal

import numpy as np
import pandas as pd

from ratings.core.errors import InvalidVerdictsError, format_rows, option, option_available
from ratings.io.cells import unescape_formulas
from ratings.io.formats import PeerFormat, peer_format, recognise

try:  # optional: the fast CSV engine and Parquet's dictionary-encoded text columns
    import pyarrow as pa
except ImportError:  # pragma: no cover - exercised only without pyarrow
    pa = None

__all__ = [
    "check_regular_file",
    "check_scalar_cells",
    "format_of",
    "is_header_only",
    "load_table",
    "peek_columns",
    "peer_of",
    "read_csv",
    "read_file",
]

Format = Literal["csv", "parquet", "jsonl"]
#: ``pick(frame, targets, prefix) -> {canonical name: column label}`` (see
#: :func:`ratings.io.cells.pick_columns`).
Picker = Callable[[pd.DataFrame, Mapping[str, str], str], dict[str, object]]

# Extension -> (format, delimiter); a compression suffix may follow text formats.
_EXTENSIONS: dict[str, tuple[str, str | None]] = {
    ".csv": ("csv", ","), ".tsv": ("csv", "\t"),
    ".parquet": ("parquet", None), ".pq": ("parquet", None),
    ".jsonl": ("jsonl", None), ".ndjson": ("jsonl", None), ".json": ("jsonl", None),
}  # fmt: skip
#: Spreadsheet files, which are refused with the advice to export the sheet as CSV.
SPREADSHEETS = (".xlsx", ".xlsm", ".xls", ".ods")
_COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz"}
_OPENERS: dict[str | None, Callable[..., IO[bytes]]] = {
    None: open, "gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open,
}  # fmt: skip
_CHUNK = 1 << 20


def format_of(filename: str) -> tuple[str | None, str | None, str | None]:
    """(format, delimiter, compression) from a file name; format None when unknown.

    Formats are ``"csv"`` (``.csv``, or ``.tsv`` with a tab delimiter), ``"parquet"`` (``.parquet``,
    ``.pq``) and ``"jsonl"`` (``.jsonl``, ``.ndjson``, ``.json``); text formats may end in
    ``.gz``, ``.bz2`` or ``.xz`` (compression ``"gzip"``, ``"bz2"``, ``"xz"``).
    """
    lower = filename.lower()
    compression = None
    for ext, comp in _COMPRESSIONS.items():
        if lower.endswith(ext):
            lower, compression = lower[: -len(ext)], comp
            break
    for ext, (fmt, sep) in _EXTENSIONS.items():
        if lower.endswith(ext):
            if fmt == "parquet" and compression is not None:
                return None, None, compression
            return fmt, sep, compression
    return None, None, compression


def load_table(
    source: str | os.PathLike[str] | pd.DataFrame,
    targets: Mapping[str, str],
    *,
    pick: Picker,
    empty: str,
    not_found: str | None = None,
    format: Format | str | PeerFormat | None = None,
    peers: bool = False,
    soft: bool = False,
) -> tuple[pd.DataFrame, str | None, str, dict[str, pd.Series]]:
    """Read a table (path or DataFrame, never modified) and pick its canonical columns.

    Returns (frame, path or None, the ``"'path': "`` prefix of error messages, and the picked
    columns as positional Series over the caller's data, which nothing may write into). An
    empty DataFrame raises :class:`InvalidVerdictsError` with ``empty``; a missing file raises
    ``FileNotFoundError`` naming it as ``not_found`` (else as a verdict file, when read).
    ``pick`` finds the canonical columns (e.g. :func:`ratings.io.cells.pick_columns` with the
    table's own canonical and required columns). ``peers``: a file (or a DataFrame) in a peer
    tool's format (named by ``format`` or recognised from its columns,
    :mod:`ratings.io.formats`) is converted to verdict rows first.
    """
    if isinstance(source, pd.DataFrame):
        frame, name = source, None
        if len(frame) == 0:
            raise InvalidVerdictsError(empty)
        peer = peer_format(format) if peers else None
        if peers and peer is None and format is None:
            peer = recognise(frame.columns)
        if peer is not None:
            frame = (peer.for_soft() if soft else peer).convert(frame)
    elif isinstance(source, str | os.PathLike):
        name = os.fspath(source)
        if not_found is not None and not os.path.exists(name):
            raise FileNotFoundError(
                f"{not_found} {name!r} not found (looked for {os.path.abspath(name)!r})."
            )
        frame = read_file(name, format, peers=peers, soft=soft)
    else:
        raise TypeError(
            f"`source` must be a path or a pandas DataFrame; got {type(source).__name__!r}."
        )
    prefix = f"{name!r}: " if name is not None else ""
    picked = pick(frame, targets, prefix)
    # the columns over positions 0..n-1: as they are where the frame's index is that already
    # (a file read), else renumbered (which copies every cell on pandas 2)
    index = frame.index
    positional = (isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1
                  and index.name is None)  # fmt: skip
    columns = {c: frame[src] if positional else frame[src].reset_index(drop=True)
               for c, src in picked.items()}  # fmt: skip
    check_scalar_cells(columns, prefix)
    return frame, name, prefix, columns


_SCALAR_KINDS = frozenset({
    "string", "empty", "integer", "floating", "mixed-integer-float", "boolean", "decimal",
    "integer-na", "categorical",
})  # fmt: skip


def check_scalar_cells(columns: Mapping[str, pd.Series], prefix: str = "") -> None:
    """Refuse cells holding a list, a dict or an array (Parquet list / struct columns, JSON
    fields holding objects or arrays): a name or a winner is one text or number.

    ``columns`` are the picked columns by canonical name; the error names the column, the
    first rows (0-based data rows) and a value. Plain text and number columns cost one
    dtype check each.
    """
    for name, values in columns.items():
        if values.dtype != object or pd.api.types.infer_dtype(values) in _SCALAR_KINDS:
            continue
        nested = values.map(lambda v: isinstance(v, dict | list | tuple | set | np.ndarray))
        bad = np.flatnonzero(nested.to_numpy(dtype=bool))
        if bad.size:
            first = values.iloc[bad[0]]
            shown = first.tolist() if isinstance(first, np.ndarray) else first
            raise InvalidVerdictsError(
                f"{prefix}column {name!r} holds {bad.size} value(s) that are not single values "
                f"(e.g. the {type(first).__name__} {shown!r} at rows {format_rows(bad)}): each "
                f"cell of {name!r} must be one text or number. Flatten the field (e.g. take the "
                "name out of the object) before reading.",
                rows=pd.DataFrame({"row": bad.astype(np.int64),
                                   "reason": f"{name} is not a single value"}))  # fmt: skip


def read_file(name: str, format: Format | str | PeerFormat | None = None, *,
              peers: bool = False, soft: bool = False) -> pd.DataFrame:  # fmt: skip
    """Read a table file with every field as text (CSV) or as stored (Parquet, JSON).

    The format comes from the extension (see :func:`format_of`) unless ``format`` is given.
    With ``peers``, a peer tool's log (``format`` one of :data:`ratings.io.formats.FORMATS` or
    a spec such as ``ArenaHard(strong_weight=3)``, or, without ``format``, recognised from its
    columns) is returned as verdict rows (:meth:`~ratings.io.formats.PeerFormat.convert`);
    ``soft`` reads it for a soft-outcome fit (:meth:`~ratings.io.formats.PeerFormat.for_soft`).
    Raises ``ValueError`` for an unknown extension, ``FileNotFoundError`` for a missing file and
    :class:`~ratings.core.errors.InvalidVerdictsError` for a file that cannot be read or has no
    rows.
    """
    peer = peer_format(format) if peers else None
    if peer is not None:
        format = None  # the table format from the extension
    fmt, sep, compression = format_of(os.path.basename(name))
    if format is not None:
        sep = sep if fmt == "csv" else ","
        fmt = format
    elif fmt is None:
        if name.lower().endswith(SPREADSHEETS):
            raise ValueError(
                f"{name!r} is a spreadsheet ({os.path.splitext(name)[1]}), which is not read "
                "directly: export the sheet as CSV (in Excel or LibreOffice: File > Save As > "
                "CSV UTF-8) and pass the .csv file.")  # fmt: skip
        raise ValueError(
            f"Cannot tell the format of {name!r} from its extension. Supported: .csv, .tsv, "
            ".parquet, .pq, .jsonl, .ndjson, .json (text formats optionally with .gz, .bz2, "
            ".xz)" + (f"; or pass {option('format', 'csv')}, 'parquet' or 'jsonl'."
                      if option_available("format") else "; rename the file.")
        )
    if not os.path.exists(name):
        raise FileNotFoundError(
            f"Verdict file {name!r} not found (looked for {os.path.abspath(name)!r})."
        )
    check_regular_file(name)
    if fmt == "parquet":
        frame = _read_parquet(name)
    else:
        if os.path.isdir(name):
            raise InvalidVerdictsError(f"{name!r} is a directory, not a verdict file.")
        with _decompression_errors(name, compression):
            start = _first_text(name, compression)
            if start is None:
                raise InvalidVerdictsError(f"{name!r} contains no verdicts: the file is empty.")
            if fmt == "csv":
                frame = read_csv(name, sep or ",", compression)
            else:
                frame = _read_json(name, compression, array=start == "[")
    if len(frame) == 0:
        what = (f"it has a header {list(frame.columns)} but no data rows" if fmt == "csv"
                else "it has no records")  # fmt: skip
        raise InvalidVerdictsError(f"{name!r} contains no verdicts: {what}.")
    if peers and peer is None and format is None:
        peer = recognise(frame.columns)
    if peer is not None:
        frame = (peer.for_soft() if soft else peer).convert(frame, f"{name!r}: ")
    return frame


def peer_of(source: str | os.PathLike[str], format: object = None) -> PeerFormat | None:
    """The peer format a verdict file is read as: the one ``format`` names, else the one its
    columns are recognised as (:func:`ratings.io.formats.recognise`), else None."""
    if format is not None:
        return peer_format(format)
    return recognise(peek_columns(source, raw=True))


@contextlib.contextmanager
def _decompression_errors(name: str, compression: str | None) -> Iterator[None]:
    """Report a corrupt or truncated compressed file as an InvalidVerdictsError."""
    try:
        yield
    except (EOFError, OSError, lzma.LZMAError) as exc:
        if compression is None:
            raise
        raise InvalidVerdictsError(
            f"{name!r} could not be decompressed as {compression}: {exc}. The file may be "
            f"truncated or not {compression}-compressed; re-create it."
        ) from exc


def check_regular_file(name: str) -> None:
    """Refuse a FIFO, a device or a socket: reading checks a file in several passes, which
    such a file cannot give (a pipe would hang waiting for a writer on the second)."""
    try:
        mode = os.stat(name).st_mode
    except OSError:
        return  # missing or unreadable: the reader's own error says so
    if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
        return
    kind = ("FIFO (named pipe)" if stat.S_ISFIFO(mode) else "character device"
            if stat.S_ISCHR(mode) else "socket" if stat.S_ISSOCK(mode) else "special file")
    raise InvalidVerdictsError(
        f"{name!r} is a {kind}, not a regular file: it can be read only once, and a table is "
        f"checked in several passes. Save it to a file first (e.g. `cat {name} > table.csv`) "
        "and pass that file.")  # fmt: skip


def _open(name: str, compression: str | None) -> IO[bytes]:
    return _OPENERS[compression](name, "rb")


def _first_text(name: str, compression: str | None) -> str | None:
    """The first non-blank character of a text file (after a BOM), or None if it has none."""
    with _open(name, compression) as fh:
        head = True
        while chunk := fh.read(_CHUNK):
            if head and chunk.startswith(codecs.BOM_UTF8):
                chunk = chunk[len(codecs.BOM_UTF8):]
            head = False
            stripped = chunk.lstrip()
            if stripped:
                return chr(stripped[0])
    return None


def read_csv(name: str, sep: str, compression: str | None) -> pd.DataFrame:
    """Read a CSV with every field as text: pyarrow if it reads the file cleanly, else C.

    ``sep`` and ``compression`` as :func:`format_of` gives them. The C engine is the
    reference: whenever pyarrow raises or warns, the file is read again with it, so results and
    messages never depend on which engine ran. Files with any double
    quote go to the C engine directly: pandas runs pyarrow with ``newlines_in_values=False``,
    which splits large files into blocks at line breaks even inside quoted values and then
    misreads such fields silently. Text cells escaped for spreadsheets by
    :func:`~ratings.io.writers.write_atomic` (``'=x``) are read back as written (``=x``).
    """
    options = {
        "sep": sep, "dtype": str, "keep_default_na": False, "na_values": [],
        "encoding": "utf-8", "compression": compression,
    }  # fmt: skip
    check_regular_file(name)
    double, single = _quotes(name, compression)
    if _C_READS_TEXT_AS_STRINGS:
        frame = _read_csv_text_inferred(name, options)
    else:  # pandas 2: the C reader's text columns hold Python str objects
        frame = None if double else _read_csv_arrow_text(name, sep, compression)
    if frame is None and pa is not None and not double:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                frame = pd.read_csv(name, engine="pyarrow", **options)
            if caught:
                frame = None
        except MemoryError:
            raise
        except Exception:  # any pyarrow failure: the C engine decides (and explains)
            frame = None
    if frame is None:
        frame = _read_csv_c(name, sep, options)
    header = _check_header(name, sep, compression)
    if len(frame) and len(frame.columns) > 1:
        _check_truncated(name, frame, sep, compression)
    frame = _drop_blank_columns(frame, header)
    if single:  # cells the package's CSV writers escaped for spreadsheets ("'=x" -> "=x")
        frame = unescape_formulas(frame)
    return frame


def _read_csv_text_inferred(name: str, options: dict[str, object]) -> pd.DataFrame | None:
    """The C reader without ``dtype=str``, kept only when it read every column as text, cleanly.

    Reading with ``dtype=str`` costs the C reader 3-4x its plain read (1M verdicts: 0.7-0.9 s
    against 0.22-0.26 s, and pyarrow's 0.3-0.5 s, on a loaded 2-core machine). A column it
    reads as text holds each field as written, as ``dtype=str`` would; any other column (all
    fields numeric or boolean-like), any warning or error, or no rows returns None, and the
    caller reads the file as text.
    """
    plain = {k: v for k, v in options.items() if k != "dtype"}
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            frame = pd.read_csv(name, engine="c", index_col=False, **plain)
    except MemoryError:
        raise
    except Exception:  # the reader that decides explains it
        return None
    text_read = all(isinstance(d, pd.StringDtype) for d in frame.dtypes)
    return frame if text_read and len(frame) and not caught else None


def _strings_dtype() -> pd.StringDtype | None:
    """pandas 3's default text dtype (Arrow-backed, missing as NaN), where this pandas has it."""
    try:
        return pd.StringDtype("pyarrow", na_value=np.nan)
    except (TypeError, ImportError):  # pandas < 2.3, or no pyarrow
        return None


#: Does the C reader give text columns pandas' Arrow-backed ``str`` dtype (pandas 3), rather
#: than arrays of Python ``str`` objects (pandas 2)?
_C_READS_TEXT_AS_STRINGS = pd.Series(["a"]).dtype != object


def _read_csv_arrow_text(name: str, sep: str, compression: str | None) -> pd.DataFrame | None:
    """pyarrow's CSV reader with every column as text, into pandas 3's ``str`` columns (no
    Python string per cell), for pandas 2, where the C reader makes a Python ``str`` of every
    cell and the rest of the read hashes them (1M verdicts: 0.25 s of CPU against 0.87 s).

    The cells are exactly those of the C reader with ``dtype=str`` (no missing values: empty
    cells are empty strings). Only for uncompressed files without double quotes (the caller's
    rule for pyarrow); any error or warning returns None, and the caller's readers decide.
    """
    dtype = _strings_dtype()
    if pa is None or dtype is None or compression is not None:
        return None
    try:
        import pyarrow.csv as pacsv

        with open(name, encoding="utf-8-sig", errors="strict", newline="") as fh:
            raw = next(csv.reader(fh, delimiter=sep), None)
        if not raw or len(set(raw)) < len(raw):
            return None  # no header, or a repeated name (the C reader's path refuses it)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            table = pacsv.read_csv(
                name, parse_options=pacsv.ParseOptions(delimiter=sep),
                convert_options=pacsv.ConvertOptions(
                    column_types=dict.fromkeys(raw, pa.string()), strings_can_be_null=False,
                    quoted_strings_can_be_null=False))  # fmt: skip
            frame = table.to_pandas(types_mapper={pa.string(): dtype}.get)
    except MemoryError:
        raise
    except Exception:  # the reader that decides explains it
        return None
    if caught or list(frame.columns) != raw or not len(frame):
        return None
    return frame


def _quotes(name: str, compression: str | None) -> tuple[bool, bool]:
    """Does the (decompressed) file contain a double quote, a single quote? One read, memchr."""
    double = single = False
    with _open(name, compression) as fh:
        while not (double and single) and (chunk := fh.read(_CHUNK)):
            double = double or b'"' in chunk
            single = single or b"'" in chunk
    return double, single


def _check_header(name: str, sep: str, compression: str | None) -> list[str]:
    """The header's names, stripped; refuse one that names a column twice (pandas would rename
    it silently). Blank names (spreadsheet exports' empty columns) may repeat."""
    with _open(name, compression) as fh:
        text = _io.TextIOWrapper(fh, encoding="utf-8-sig", errors="replace", newline="")
        header = next(csv.reader(text, delimiter=sep), [])
    names = [h.strip() for h in header]
    dups = sorted({h for h in names if h and names.count(h) > 1})
    if dups:
        raise InvalidVerdictsError(
            f"{name!r}: column {dups[0]!r} appears more than once in the header"
            f"{f' (also {dups[1:]})' if len(dups) > 1 else ''}. Rename or drop the duplicates "
            "so that every column is read."
        )
    return names


def _drop_blank_columns(frame: pd.DataFrame, header: list[str]) -> pd.DataFrame:
    """Drop columns with a blank header and no value in any row: the empty columns spreadsheet
    programs leave at the end of an export (``a,b,c,,,``). A blank-headed column holding
    values stays (pandas calls it ``Unnamed: N``; like any unmapped column it is not read)."""
    if len(header) != len(frame.columns) or all(header):
        return frame
    keep = [k for k, h in enumerate(header) if h
            or frame.iloc[:, k].astype(str).str.strip().ne("").any()]  # fmt: skip
    return frame if len(keep) == len(header) else frame.iloc[:, keep]


def _read_csv_c(name: str, sep: str, options: dict[str, object]) -> pd.DataFrame:
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            frame = pd.read_csv(name, engine="c", index_col=False, **options)
    except UnicodeDecodeError as exc:
        raise _not_utf8(name, options["compression"]) from exc
    except pd.errors.EmptyDataError as exc:
        raise InvalidVerdictsError(f"{name!r} contains no verdicts: the file is empty.") from exc
    except pd.errors.ParserError as exc:
        detail = re.sub(r"^Error tokenizing data\. C error: ", "", str(exc).strip())
        raise InvalidVerdictsError(
            f"{name!r} could not be parsed as CSV: {detail}. Check the delimiter and quoting "
            f"there: fields containing {sep!r}, quotes or line breaks must be quoted."
        ) from exc
    for w in caught:
        if issubclass(w.category, pd.errors.ParserWarning):
            # e.g. the first data row has more fields than the header: values would shift.
            raise InvalidVerdictsError(
                f"{name!r} could not be parsed as CSV: the first data row has more fields than "
                f"the header ({len(frame.columns)}), so values would shift or be lost. Add the "
                f"missing header names or quote fields containing {sep!r}."
            )
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return frame


def _check_truncated(name: str, frame: pd.DataFrame, sep: str, compression: str | None) -> None:
    """Raise if the file lacks a final newline and its last record has too few fields.

    The last record is found outside quotes (it may span lines); its line number is that of
    the physical line it starts on, counting ``\r\n``, ``\n`` and ``\r`` line ends alike.
    """
    last = frame.iloc[-1, -1]
    if not (pd.isna(last) or last == ""):  # a short record leaves its last field empty
        return
    found = _last_record(name, compression)
    if found is None:  # ends with a line break, or a record too long to isolate
        return
    record, breaks_before = found
    text = record.decode("utf-8", errors="replace")
    fields = next(csv.reader(_io.StringIO(text, newline=""), delimiter=sep), [])
    if len(fields) >= len(frame.columns):
        return
    raise InvalidVerdictsError(
        f"{name!r}: last line (line {breaks_before + 1}) looks truncated: it has {len(fields)} "
        f"field(s) but the header has {len(frame.columns)}, and the file does not end with a "
        f"newline ({text[-60:]!r}). It was probably cut off while being written; re-export the "
        "file or delete that line."
    )


def _line_breaks(data: bytes) -> int:
    """Line ends in ``data``: ``\r\n``, ``\n`` and ``\r`` each count once."""
    return data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")


_MAX_CANDIDATES = 10_000  # line breaks inside quotes tried before giving up on the last record


def _last_record(name: str, compression: str | None) -> tuple[bytes, int] | None:
    """The bytes of the file's last CSV record and the line breaks before it, or None when the
    file ends with a line break (nothing can be cut off) or the record cannot be isolated.

    An uncompressed file's last byte is read first; otherwise one pass: quote characters are
    counted before a sliding tail of the file, so the last line break outside quotes (an even
    number of quotes before it) is found in the tail.
    """
    if compression is None:  # the common case, a final line break, without reading the file
        with open(name, "rb") as fh:
            if fh.seek(0, os.SEEK_END) == 0:
                return None
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) in (b"\n", b"\r"):
                return None
    quotes = breaks = 0  # before `tail`
    tail = b""
    with _open(name, compression) as fh:
        while chunk := fh.read(_CHUNK):
            tail += chunk
            if len(tail) > 4 * _CHUNK:
                cut = len(tail) - 2 * _CHUNK
                quotes += tail.count(b'"', 0, cut)
                breaks += _line_breaks(tail[:cut]) - (tail[cut - 1:cut + 1] == b"\r\n")
                tail = tail[cut:]
    if not tail or tail.endswith((b"\n", b"\r")):
        return None
    pos = len(tail)
    for _ in range(_MAX_CANDIDATES):
        pos = max(tail.rfind(b"\n", 0, pos), tail.rfind(b"\r", 0, pos))
        if pos < 0 or (quotes + tail.count(b'"', 0, pos)) % 2 == 0:
            break
    else:
        return None
    if pos < 0 and (quotes or breaks):  # the record began before the tail: too long to tell
        return None
    return tail[pos + 1:], breaks + _line_breaks(tail[:pos + 1])


def _not_utf8(name: str, compression: object) -> InvalidVerdictsError:
    """Locate the first byte that is not UTF-8 and describe it."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    consumed = lines = 0
    with _open(name, compression if isinstance(compression, str) else None) as fh:
        while True:
            chunk = fh.read(_CHUNK)
            pending = decoder.getstate()[0]
            try:
                decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as exc:
                data = pending + chunk
                offset = consumed - len(pending) + exc.start
                line = lines + data[: exc.start].count(b"\n") + 1
                flag = option("encoding", "NAME")  # a flag only on the command line
                other = (f", or name its encoding with {flag} (e.g. latin-1 or cp1252)"
                         if flag.startswith("`--") else "")  # fmt: skip
                return InvalidVerdictsError(
                    f"{name!r} is not valid UTF-8: first bad byte at line {line} (byte offset "
                    f"{offset}). Re-export as UTF-8{other} (found "
                    f"{data[exc.start:exc.end + 3]!r} there).")  # fmt: skip
            if not chunk:
                break
            consumed += len(chunk)
            lines += chunk.count(b"\n")
    return InvalidVerdictsError(f"{name!r} is not valid UTF-8. Re-export as UTF-8.")


def _read_json(name: str, compression: str | None, *, array: bool) -> pd.DataFrame:
    """Read JSON Lines (or one JSON array of records) keeping values as stored."""
    try:
        frame = pd.read_json(name, lines=not array, orient="records", dtype=False,
                             encoding="utf-8-sig", compression=compression)  # fmt: skip
    except UnicodeDecodeError as exc:
        raise _not_utf8(name, compression) from exc
    except (ValueError, TypeError, AttributeError) as exc:  # TypeError: a scalar or null line
        where = _bad_json_record(name, compression) if array else _bad_json_line(
            name, compression)  # fmt: skip
        detail = f": {exc}" if isinstance(exc, ValueError) else ""  # not pandas' TypeError
        raise InvalidVerdictsError(
            f"{name!r} is not valid {'JSON' if array else 'JSON Lines'}{where}{detail}. Each "
            f"{'record' if array else 'line'} must be one JSON object such as "
            '{"model_a": "x", "model_b": "y", "winner": "A"}.'
        ) from exc
    if any(not isinstance(c, str) for c in frame.columns):  # lines of arrays, not objects
        where = _bad_json_record(name, compression) if array else _bad_json_line(
            name, compression)  # fmt: skip
        raise InvalidVerdictsError(
            f"{name!r} is not valid {'JSON' if array else 'JSON Lines'}{where}: each "
            f"{'record' if array else 'line'} must be one JSON object such as "
            '{"model_a": "x", "model_b": "y", "winner": "A"}.')
    return frame


def _bad_json_record(name: str, compression: str | None) -> str:
    """" (record N is 5, not an object)" for a JSON array holding a non-object (error path)."""
    try:
        with _open(name, compression) as fh:
            doc = json.loads(fh.read().decode("utf-8-sig"))
    except (ValueError, OSError):
        return ""
    for number, item in enumerate(doc if isinstance(doc, list) else [], start=1):
        if not isinstance(item, dict):
            return f" (record {number} is {json.dumps(item)[:40]}, not an object)"
    return ""


def _bad_json_line(name: str, compression: str | None) -> str:
    """" at line N" for the first line that is not a JSON object (error path only)."""
    with _open(name, compression) as fh:
        for number, raw in enumerate(fh, start=1):
            line = raw.decode("utf-8-sig" if number == 1 else "utf-8").strip()
            if not line:
                continue
            try:
                value = json.loads(line)
            except ValueError:
                return f" at line {number}"
            if not isinstance(value, dict):
                return f" at line {number} ({line[:40]} is not an object)"
    return ""


def _read_parquet(name: str) -> pd.DataFrame:
    """Read a Parquet file; its text columns come as categoricals straight from pyarrow's
    dictionary decoding (no Python strings made, no hashing: a 1M-row file's four columns in
    0.018 s instead of 0.036 s, and validation then reads their codes)."""
    try:
        strings = _parquet_text_columns(name)
        return pd.read_parquet(name, **({"read_dictionary": strings} if strings else {}))
    except ImportError:
        raise
    except MemoryError:
        raise
    except Exception as exc:  # pyarrow raises several types for unreadable files
        raise InvalidVerdictsError(f"{name!r} could not be read as Parquet: {exc}") from exc


def _parquet_text_columns(name: str) -> list[str]:
    """Names of a Parquet file's string columns (pyarrow only; a broken file gives none and
    fails when read)."""
    if pa is None:
        return []
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(name)
    except Exception:  # unreadable: pd.read_parquet raises the error that is reported
        return []
    return [f.name for f in schema
            if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]  # fmt: skip


def peek_columns(source: str | os.PathLike[str], format: object = None, *,
                 raw: bool = False) -> list[str]:  # fmt: skip
    """Column names of a table file without reading its rows (CSV header, Parquet schema, or
    the first JSON record); an empty list when it cannot tell.

    A peer tool's log (``format`` naming one, or recognised from its fields) gives the columns
    it is read as (:mod:`ratings.io.formats`), unless ``raw``.
    """
    peer = peer_format(format)
    names = _peek_raw(source, None if peer is not None else format)
    if raw:
        return names
    peer = peer if peer is not None or format is not None else recognise(names)
    return peer.output_columns(names) if peer is not None else names


def _peek_raw(source: str | os.PathLike[str], format: object) -> list[str]:
    name = os.fspath(source)
    fmt, sep, compression = format_of(os.path.basename(name))
    fmt = format or fmt
    if not os.path.isfile(name):  # a pipe would be consumed here: the full reader refuses it
        return []
    try:
        if fmt == "csv":
            return [str(c) for c in pd.read_csv(name, sep=sep or ",", nrows=0,
                                                compression=compression).columns]  # fmt: skip
        if fmt == "parquet":
            import pyarrow.parquet as pq

            return list(pq.read_schema(name).names)
        if fmt == "jsonl":
            record = _first_json_record(name, compression)
            return [str(c) for c in record] if isinstance(record, dict) else []
    except Exception:  # unreadable here: the full reader gives the precise error
        return []
    return []


def _first_json_record(name: str, compression: str | None) -> object:
    """The first record of a JSON Lines file or of a JSON array, read incrementally."""
    decoder = json.JSONDecoder()
    text = ""
    with _open(name, compression) as fh:
        reader = codecs.getincrementaldecoder("utf-8-sig")()
        while chunk := fh.read(1 << 16):
            text += reader.decode(chunk)
            body = text.lstrip()
            if body.startswith("["):
                body = body[1:].lstrip()
            try:
                return decoder.raw_decode(body)[0]
            except ValueError:
                if len(text) > (64 << 20):
                    return None
    return None


def is_header_only(source: str | os.PathLike[str]) -> bool:
    """True for an existing CSV / TSV file (optionally compressed) with a header and no data
    rows: an empty log in a tool that accepts one, which :func:`read_file` refuses."""
    name = os.fspath(source)
    fmt, sep, compression = format_of(os.path.basename(name))
    if fmt != "csv" or not os.path.isfile(name):
        return False
    try:
        head = pd.read_csv(name, sep=sep, nrows=1, dtype=str, compression=compression)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError):
        return False  # not an empty log: the full reader says what is wrong
    return len(head) == 0 and len(head.columns) > 0
