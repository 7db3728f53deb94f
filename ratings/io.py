"""Read, validate and normalise verdict logs; write output files atomically.

:func:`read_verdicts` turns a CSV / TSV / Parquet / JSON Lines file or a DataFrame into a
:class:`VerdictLog` with the canonical columns of ``shared/design.md``. Every row that cannot be
used is reported by its 0-based data row number (header excluded) and a reason, either in an
:class:`~ratings.errors.InvalidVerdictsError` or in ``VerdictLog.rejected``; no row is dropped
silently.

Output dtypes
-------------
Columns of repeated text values are categoricals whose categories are sorted
:data:`STRING_DTYPE` strings (pandas' default string dtype ``"str"``, pyarrow-backed when
pyarrow is installed): ``model_a`` and ``model_b`` (one shared set of categories, so their codes
compare), ``winner`` (categories ``"A"``, ``"B"``, ``"tie"``), ``task_id``, ``judge``, ``scope``.
Each is factorized once while validating, and :func:`ratings.aggregate` reuses the codes instead
of hashing the strings again; no category is left that only rejected rows used. ``match_id``
(mostly distinct) stays :data:`STRING_DTYPE`. ``failed_a`` and ``failed_b`` are numpy ``bool``.
The index is named ``"row"`` and holds the original row numbers.

Missing values
--------------
Text cells are stripped of surrounding whitespace. A cell that is then empty, or one of pandas'
usual missing-value markers (``NA``, ``N/A``, ``NaN``, ``nan``, ``NULL``, ``null``, ``None``,
``<NA>``, ``#N/A``, ...), is missing. Files are read with every field as a string, so ids such as
``"007"`` keep their leading zeros.
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import csv
import difflib
import gzip
import io as _io
import json
import lzma
import os
import re
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from pandas.api.types import is_bool_dtype, is_float_dtype, is_string_dtype

from ratings.errors import InvalidVerdictsError, format_rows

try:  # optional: the fast CSV engine and cheap construction of the winner column
    import pyarrow as pa
except ImportError:  # pragma: no cover - exercised only without pyarrow
    pa = None

__all__ = [
    "CANONICAL",
    "REQUIRED",
    "STRING_DTYPE",
    "WINNERS",
    "VerdictLog",
    "Winner",
    "read_verdicts",
    "write_atomic",
    "write_rejected",
]

Winner = Literal["A", "B", "tie"]
WINNERS: tuple[str, str, str] = ("A", "B", "tie")
CANONICAL: tuple[str, ...] = (
    "model_a", "model_b", "winner", "task_id", "judge", "scope", "match_id", "failed_a", "failed_b",
)  # fmt: skip
REQUIRED: tuple[str, ...] = ("model_a", "model_b", "winner")

try:  # pandas >= 2.3: the "str" dtype (pyarrow-backed when available, NaN for missing)
    STRING_DTYPE: pd.StringDtype | np.dtype = pd.StringDtype(na_value=np.nan)
except TypeError:  # pragma: no cover - older pandas: plain object columns of str
    STRING_DTYPE = np.dtype(object)

# Text columns of repeated values (stripped), returned as categoricals; `match_id` stays text,
# and `winner`, `failed_a`, `failed_b` have their own parsers.
_CATEGORICAL = ("model_a", "model_b", "task_id", "judge", "scope")
# Optional text columns whose empty cells reject the row (match_id may be empty).
_NEEDED_IF_PRESENT = ("task_id", "judge", "scope")
# pandas' default NA markers; read_csv is told to keep them as text so the rejected table shows
# what the file holds, and they are then treated as missing here, identically for every format.
_NA_TOKENS = (
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
)  # fmt: skip
_NA_SET = frozenset(_NA_TOKENS)

# Winner outcome codes; negative codes are rejection reasons.
_A, _B, _TIE, _OTHER = 0, 1, 2, 3
_WORDS = {"a": _A, "model_a": _A, "b": _B, "model_b": _B, "tie": _TIE}
_NUMBERS = {1.0: _A, 0.0: _B, 0.5: _TIE}
_TRUE = frozenset({"true", "1", "yes", "t"})
_FALSE = frozenset({"false", "0", "no", "f"})

# Rejection reasons, in the order they are checked (a row gets the first that applies), with
# the column whose values illustrate them in error messages.
_KINDS: tuple[tuple[str, str | None], ...] = (
    ("missing model_a", None),
    ("missing model_b", None),
    ("model_a equals model_b", "model_a"),
    ("missing winner", None),
    ("unknown winner value", "winner"),
    ("winner names a model not in this match", "winner"),
    ("ambiguous winner: a winner spelling that is also a model name in this match", "winner"),
    ("failed_a is not boolean-like", "failed_a"),
    ("failed_b is not boolean-like", "failed_b"),
    ("missing task_id", None),
    ("missing judge", None),
    ("missing scope", None),
    ("duplicate match_id", "match_id"),
)
_KIND = {text: code for code, (text, _) in enumerate(_KINDS, start=1)}
_AMBIGUOUS = _KINDS[6][0]

# Extension -> (format, delimiter); a compression suffix may follow text formats.
_EXTENSIONS: dict[str, tuple[str, str | None]] = {
    ".csv": ("csv", ","), ".tsv": ("csv", "\t"),
    ".parquet": ("parquet", None), ".pq": ("parquet", None),
    ".jsonl": ("jsonl", None), ".ndjson": ("jsonl", None), ".json": ("jsonl", None),
}  # fmt: skip
_COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz"}
_OPENERS: dict[str | None, Callable[..., IO[bytes]]] = {
    None: open, "gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open,
}  # fmt: skip
_CHUNK = 1 << 20
_WINNER_DTYPE = pd.CategoricalDtype(pd.Index(WINNERS, dtype=STRING_DTYPE))


@dataclass(frozen=True, eq=False, repr=False)
class VerdictLog:
    """A validated verdict log.

    Attributes
    ----------
    verdicts : pandas.DataFrame
        The usable rows, canonical columns in :data:`CANONICAL` order: ``model_a``, ``model_b``,
        ``winner`` (``"A"``, ``"B"`` or ``"tie"``), whichever of ``task_id``, ``judge``, ``scope``,
        ``match_id`` the input has, and always ``failed_a``, ``failed_b`` (bool). Text columns are
        categoricals of :data:`STRING_DTYPE` strings, ``match_id`` is :data:`STRING_DTYPE` (see
        the module notes). The index, named ``"row"``, is the 0-based data row number.
    rejected : pandas.DataFrame
        One row per unusable input row: ``row`` (int64), ``reason`` (str), then the raw values of
        the input's canonical columns as read. Empty (with these columns) when all rows are usable.
    source : str or None
        The path as given, or ``None`` for a DataFrame.
    """

    verdicts: pd.DataFrame
    rejected: pd.DataFrame
    source: str | None = None

    def __len__(self) -> int:
        return len(self.verdicts)

    def __repr__(self) -> str:
        return (f"VerdictLog(source={self.source!r}, verdicts={len(self.verdicts)} rows, "
                f"rejected={len(self.rejected)} rows)")  # fmt: skip


# ----------------------------------------------------------------------------------------------
# Public API
# ----------------------------------------------------------------------------------------------


def read_verdicts(
    source: str | os.PathLike[str] | pd.DataFrame,
    *,
    columns: Mapping[str, str] | None = None,
    winner_map: Mapping[object, str] | None = None,
    errors: Literal["raise", "report"] = "raise",
    format: Literal["csv", "parquet", "jsonl"] | None = None,
) -> VerdictLog:
    """Read a verdict log, validate every row and normalise it to the canonical columns.

    Parameters
    ----------
    source : path or pandas.DataFrame
        A ``.csv`` / ``.tsv`` (optionally ``.gz``, ``.bz2``, ``.xz``), ``.parquet`` / ``.pq`` or
        ``.jsonl`` / ``.ndjson`` / ``.json`` (JSON Lines, or one JSON array of records) file, or
        a DataFrame, which is not modified; its positional row numbers are the ``row`` numbers.
    columns : mapping, optional
        Your column names to canonical ones, e.g. ``{"left": "model_a", "right": "model_b"}``.
        Columns that are neither canonical nor mapped are ignored.
    winner_map : mapping, optional
        Extra winner spellings to ``"A"``, ``"B"`` or ``"tie"``, e.g.
        ``{"tie (bothbad)": "tie"}``; applied first, on the whitespace-stripped value (numeric
        keys also match numerically).
    errors : {"raise", "report"}, default="raise"
        ``"raise"``: any unusable row raises. ``"report"``: unusable rows go to
        ``VerdictLog.rejected`` and the rest are returned (it still raises if no row is usable).
    format : {"csv", "parquet", "jsonl"}, optional
        Overrides the format inferred from the file extension.

    Returns
    -------
    VerdictLog

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    InvalidVerdictsError
        The file cannot be read (empty, not UTF-8, malformed, truncated), required columns are
        missing, or rows are unusable (see ``errors``); ``.rows`` lists the rejected rows.
    ValueError
        Invalid arguments (unknown extension or format, a mapping to a non-canonical column, a
        ``winner_map`` value other than ``"A"``, ``"B"``, ``"tie"``).

    Notes
    -----
    Winners accepted (case-insensitive, stripped): ``a``, ``b``, ``tie``, ``model_a``,
    ``model_b``; numbers 1 (A), 0 (B), 0.5 (tie); the exact name of the row's ``model_a`` (A) or
    ``model_b`` (B). Other tie spellings such as ``draw`` need ``winner_map``: an unknown value is
    never read as a tie. ``failed_a`` / ``failed_b`` accept true/false/1/0/yes/no/t/f and booleans;
    empty means false. Rows are rejected, each with its first problem, for: a missing model name,
    ``model_a == model_b``, a missing or unknown winner, a winner naming a model of another match,
    a non-boolean failure flag, a missing ``task_id`` / ``judge`` / ``scope`` (when the column
    exists) and a repeated ``match_id`` (the first occurrence is kept).
    """
    if errors not in ("raise", "report"):
        raise ValueError(f"`errors` must be 'raise' or 'report'; got {errors!r}.")
    if format not in (None, "csv", "parquet", "jsonl"):
        raise ValueError(f"`format` must be 'csv', 'parquet' or 'jsonl'; got {format!r}.")
    targets = _check_columns(columns)
    spellings, numbers = _check_winner_map(winner_map)

    frame, name, prefix, raw = _load_table(
        source, targets, empty="The verdicts DataFrame contains no verdicts (0 rows).",
        format=format)  # fmt: skip
    verdicts, rejected, summary = _validate(raw, len(frame), spellings, numbers)

    if len(rejected):
        everything = len(rejected) == len(frame)
        if errors == "raise" or everything:
            raise InvalidVerdictsError(prefix + summary(everything, errors), rows=rejected)
    return VerdictLog(verdicts=verdicts, rejected=rejected, source=name)


def _load_table(
    source: str | os.PathLike[str] | pd.DataFrame,
    targets: Mapping[str, str],
    *,
    empty: str,
    not_found: str | None = None,
    format: Literal["csv", "parquet", "jsonl"] | None = None,
    pick: Callable[[pd.DataFrame, Mapping[str, str], str], dict[str, object]] | None = None,
) -> tuple[pd.DataFrame, str | None, str, dict[str, pd.Series]]:
    """Read a table (path or DataFrame, never modified) and pick its canonical columns.

    Returns (frame, path or None, the ``"'path': "`` prefix of error messages, and the picked
    columns as positional Series over the caller's data, which nothing may write into). An
    empty DataFrame raises :class:`InvalidVerdictsError` with ``empty``; a missing file raises
    ``FileNotFoundError`` naming it as ``not_found`` (else as a verdict file, when read).
    ``pick`` maps the columns (default: the verdict columns).
    """
    if isinstance(source, pd.DataFrame):
        frame, name = source, None
        if len(frame) == 0:
            raise InvalidVerdictsError(empty)
    elif isinstance(source, str | os.PathLike):
        name = os.fspath(source)
        if not_found is not None and not os.path.exists(name):
            raise FileNotFoundError(
                f"{not_found} {name!r} not found (looked for {os.path.abspath(name)!r})."
            )
        frame = _read_file(name, format)
    else:
        raise TypeError(
            f"`source` must be a path or a pandas DataFrame; got {type(source).__name__!r}."
        )
    prefix = f"{name!r}: " if name is not None else ""
    picked = (pick or _pick_columns)(frame, targets, prefix)
    return frame, name, prefix, {c: frame[src].reset_index(drop=True) for c, src in picked.items()}


def write_atomic(
    frame_or_text: pd.DataFrame | str,
    path: str | os.PathLike[str],
    *,
    inputs: Iterable[str | os.PathLike[str]] = (),
) -> None:
    """Write a DataFrame or text to ``path`` atomically: a temporary file, then ``os.replace``.

    Parameters
    ----------
    frame_or_text : pandas.DataFrame or str
        A DataFrame is written by the extension of ``path``: ``.csv`` / ``.tsv`` (no index,
        optionally ``.gz``, ``.bz2``, ``.xz``), ``.json`` (a list of records, indented),
        ``.jsonl`` (JSON Lines) or ``.parquet``. Text is written as UTF-8, as is.
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
        if item is not None and _same_file(target, Path(os.fspath(item))):
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


def write_rejected(log: VerdictLog, path: str | os.PathLike[str]) -> None:
    """Write ``log.rejected`` as CSV via :func:`write_atomic` (never over ``log.source``).

    Parameters
    ----------
    log : VerdictLog
    path : path
        Destination; ``.csv`` / ``.tsv`` (optionally compressed) are written as such, any other
        extension still receives comma-separated text.
    """
    inputs = [log.source] if log.source is not None else []
    if _format_of(Path(os.fspath(path)).name)[0] == "csv":
        write_atomic(log.rejected, path, inputs=inputs)
    else:
        write_atomic(log.rejected.to_csv(index=False), path, inputs=inputs)


# ----------------------------------------------------------------------------------------------
# Arguments and columns
# ----------------------------------------------------------------------------------------------


def _check_columns(
    columns: Mapping[str, str] | None, canonical: tuple[str, ...] = CANONICAL,
    kind: str = "canonical",
) -> dict[object, str]:  # fmt: skip
    """Validate ``columns=``; return {user name: canonical name}."""
    targets = dict(columns or {})
    for key, value in targets.items():
        if value not in canonical:
            raise ValueError(
                f"`columns` maps {key!r} to {value!r}, which is not a {kind} column. "
                f"{kind.capitalize()} columns: {list(canonical)}."
            )
    seen: dict[str, object] = {}
    for key, value in targets.items():
        if value in seen:
            raise ValueError(
                f"`columns` maps both {seen[value]!r} and {key!r} to {value!r}; map one column "
                "to each canonical name."
            )
        seen[value] = key
    return targets


def _check_winner_map(
    winner_map: Mapping[object, str] | None,
) -> tuple[dict[str, int], dict[float, int]]:
    """Validate ``winner_map=``; return codes by stripped text key and by numeric key."""
    spellings: dict[str, int] = {}
    numbers: dict[float, int] = {}
    for key, value in (winner_map or {}).items():
        if not isinstance(value, str) or value not in WINNERS:
            raise ValueError(
                f"`winner_map` values must be 'A', 'B' or 'tie'; got {key!r}: {value!r}."
            )
        code = WINNERS.index(value)
        spellings[str(key).strip()] = code
        if isinstance(key, int | float | np.number) and not isinstance(key, bool | np.bool_):
            numbers[float(key)] = code
    return spellings, numbers


def _pick_columns(
    frame: pd.DataFrame, targets: dict[object, str], prefix: str, *,
    canonical: tuple[str, ...] = CANONICAL, required: tuple[str, ...] = REQUIRED,
    what: str = "verdicts", missing_message=None,
) -> dict[str, object]:  # fmt: skip
    """Return {canonical name: column label of ``frame``} for the columns present.

    ``missing_message(missing, labels)`` words the error for absent required columns (default:
    :func:`_missing_message`); ``what`` names the table in the other messages.
    """
    labels = list(frame.columns)
    lookup: dict[object, object] = {c: c for c in labels}
    for c in labels:  # a header such as "model_a, model_b" leaves blanks around the names
        if isinstance(c, str):
            lookup.setdefault(c.strip(), c)

    def find(name: object) -> object | None:
        if name in lookup:
            return lookup[name]
        return lookup.get(name.strip()) if isinstance(name, str) else None

    picked: dict[str, object] = {}
    absent = []
    for key, canon in targets.items():
        label = find(key)
        if label is None:
            absent.append(key)
        else:
            picked[canon] = label
    if absent:
        raise InvalidVerdictsError(
            f"{prefix}Column(s) {absent} given in `columns=` not found in {what}. Available "
            f"columns: {labels}. Fix the names in `columns=`."
        )
    mapped = set(picked.values())
    for canon in canonical:
        label = find(canon)
        if canon not in picked and label is not None and label not in mapped:
            picked[canon] = label

    missing = [c for c in required if c not in picked]
    if missing:
        raise InvalidVerdictsError(prefix + (missing_message or _missing_message)(missing, labels))
    for canon, label in picked.items():
        if int((frame.columns == label).sum()) > 1:
            raise InvalidVerdictsError(
                f"{prefix}Column {label!r} (for {canon!r}) appears more than once in the "
                f"{what}. Rename or drop the duplicates."
            )
    return {c: picked[c] for c in canonical if c in picked}


def _missing_message(missing: list[str], labels: list[object]) -> str:
    """The missing-columns message, with a guessed mapping and a delimiter hint."""
    by_lower = {str(c).strip().lower(): c for c in labels}
    guesses = {}
    for m in missing:
        close = difflib.get_close_matches(m, list(by_lower), n=1, cutoff=0.75)
        guesses[m] = by_lower[close[0]] if close else None
    if len(missing) == 1 and guesses[missing[0]] is None:
        example = f"{{'your_name': {missing[0]!r}}}"
    else:
        pairs = [f"{guesses[m] if guesses[m] is not None else 'your_' + m!r}: {m!r}"
                 for m in missing]  # fmt: skip
        example = "{" + ", ".join(pairs) + "}"
    text = (f"Column(s) {missing} not found in verdicts. Available columns: {labels}. "
            f"Pass `columns={example}` to map your names.")  # fmt: skip
    if len(labels) == 1 and isinstance(labels[0], str):
        for sep, label in ((";", "';'"), ("\t", "a tab"), ("|", "'|'")):
            if sep in labels[0]:
                text += (f" The file may use {label} as delimiter: re-export it with commas"
                         f"{' or name it .tsv' if sep == chr(9) else ''}.")  # fmt: skip
                break
    return text


# ----------------------------------------------------------------------------------------------
# Validation and normalisation (vectorised; Python loops only over unique values)
# ----------------------------------------------------------------------------------------------


def _validate(
    raw: dict[str, pd.Series], n: int, spellings: dict[str, int], numbers: dict[float, int]
) -> tuple[pd.DataFrame, pd.DataFrame, Callable[[bool, str], str]]:
    """Check every row; return (verdicts, rejected, a function building the error message).

    Columns of repeated values are factorized once here; every check below runs on their integer
    codes, and they leave as categoricals (the codes :func:`ratings.data.aggregate` reuses).
    """
    codes: dict[str, NDArray[np.int64]] = {}
    categories: dict[str, pd.Index] = {}
    jobs = {c: (_factorize_text, raw[c]) for c in _CATEGORICAL if c in raw}
    jobs["winner"] = (_distinct, raw["winner"])
    found = _run_concurrently(jobs, n)
    winner = found.pop("winner")
    groups = [["model_a", "model_b"], *[[c] for c in found if c not in ("model_a", "model_b")]]
    for group in groups:  # model_a and model_b share their categories
        cats, tables = _union_categories([found[c][1] for c in group])
        for c, table in zip(group, tables, strict=True):
            codes[c], categories[c] = table[found[c][0]], cats
    reason = np.zeros(n, dtype=np.int8)

    def flag(kind: str, mask: NDArray[np.bool_]) -> None:
        if mask.any():
            reason[(reason == 0) & mask] = _KIND[kind]

    ca, cb = codes["model_a"], codes["model_b"]
    flag("missing model_a", ca < 0)
    flag("missing model_b", cb < 0)
    flag("model_a equals model_b", (ca == cb) & (ca >= 0))

    outcome = _winners(winner, ca, cb, categories["model_a"], spellings, numbers)
    for kind in ("missing winner", "unknown winner value",
                 "winner names a model not in this match", _AMBIGUOUS):  # fmt: skip
        flag(kind, outcome == -_KIND[kind])

    flags = {}
    for c in ("failed_a", "failed_b"):
        if c in raw:
            flags[c], bad = _booleans(raw[c])
            flag(f"{c} is not boolean-like", bad)
        else:
            flags[c] = np.zeros(n, dtype=bool)
    for c in _NEEDED_IF_PRESENT:
        if c in codes:
            flag(f"missing {c}", codes[c] < 0)
    first_of: NDArray[np.int64] | None = None
    text = {}
    if "match_id" in raw:
        text["match_id"] = _text(raw["match_id"])
        dup, first_of = _duplicates(text["match_id"])
        flag("duplicate match_id", dup)

    bad_rows = np.flatnonzero(reason)
    good = reason == 0
    keep = slice(None) if bad_rows.size == 0 else good
    columns: dict[str, object] = {c: flags[c][keep] for c in flags}
    for group in groups:
        kept = [codes[c][keep] for c in group]
        if bad_rows.size:  # categories of values seen only in rejected rows go
            kept, categories[group[0]] = _drop_unused(kept, categories[group[0]])
        dtype = pd.CategoricalDtype(categories[group[0]])
        columns.update((c, pd.Categorical.from_codes(k, dtype=dtype, validate=False))
                       for c, k in zip(group, kept, strict=True))  # fmt: skip
    columns["winner"] = pd.Categorical.from_codes(outcome[keep], dtype=_WINNER_DTYPE,
                                                  validate=False)  # fmt: skip
    if "match_id" in text:
        columns["match_id"] = text["match_id"].array[keep]
    data = {c: columns[c] for c in CANONICAL if c in columns}
    rows = pd.RangeIndex(n, name="row") if bad_rows.size == 0 else pd.Index(
        np.flatnonzero(good), name="row")  # fmt: skip
    verdicts = pd.DataFrame(data, index=rows, copy=False)

    kinds = reason[bad_rows]
    reasons = np.asarray([k for k, _ in _KINDS], dtype=object)[kinds - 1]
    is_dup = kinds == _KIND["duplicate match_id"]
    if first_of is not None and is_dup.any():
        rows = bad_rows[is_dup]
        reasons[is_dup] = _duplicate_reasons(text["match_id"].iloc[rows], first_of[rows])
    rejected = pd.DataFrame({
        "row": bad_rows.astype(np.int64),
        "reason": pd.array(reasons, dtype=STRING_DTYPE),
        **{c: _as_read(raw[c].iloc[bad_rows]).array for c in CANONICAL if c in raw},
    })  # fmt: skip

    def summary(everything: bool, errors: str) -> str:
        parts = []
        order = pd.unique(kinds)  # reasons in order of their first row
        for k in order:
            rows = bad_rows[kinds == k]
            kind, column = _KINDS[k - 1]
            where = f"rows {format_rows(rows)}"
            if column is not None:
                shown = _text(raw[column].iloc[rows]).dropna().unique()[:5]
                where = f"e.g. {[str(v) for v in shown]!r} at {where}"
            parts.append(f"{rows.size} with {kind} ({where})")
        head = (f"All {bad_rows.size} row(s) rejected, nothing to fit" if everything
                else f"{bad_rows.size} row(s) rejected")  # fmt: skip
        tie_hint = _KIND["unknown winner value"] in order
        if everything or errors == "report":
            fix = ("Map tie spellings with `winner_map=` or fix the rows." if tie_hint
                   else "Fix the rows.")  # fmt: skip
        else:
            fix = ("Map tie spellings with `winner_map=`, fix the rows" if tie_hint
                   else "Fix the rows")  # fmt: skip
            fix += ", or pass errors='report' to fit on the good rows and list the rest."
        return f"{head}: {'; '.join(parts)}. {fix}"

    return verdicts, rejected, summary


_FEW = 50_000  # distinct values up to which plain Python beats pandas' per-call overhead


def _run_concurrently(jobs: dict[str, tuple[Callable, pd.Series]], n: int) -> dict[str, object]:
    """``{name: fn(column)}`` for ``jobs = {name: (fn, column)}``, on threads for long columns.

    Hashing a pyarrow-backed string column releases the GIL, so on a multi-core machine the
    columns of a large log are factorized side by side (1M rows, 2 cores: 4 columns in 0.045 s
    instead of 0.068 s). Each job reads only its own column.
    """
    from ratings import _threads

    items = list(jobs.items())
    if n < _threads.CONCURRENT_ROWS:
        return {name: fn(col) for name, (fn, col) in items}
    # Largest columns first (hashing costs by bytes), so the pool's threads finish together:
    # at 1M rows on 2 cores one thread takes task_id then winner, the other model_a then
    # model_b (in log order one thread got model_a then task_id, the longest pair).
    items.sort(key=lambda item: -item[1][1].memory_usage(index=False))
    results = _threads.run([lambda fn=fn, col=col: fn(col) for _, (fn, col) in items])
    return dict(zip([name for name, _ in items], results, strict=True))


def _factorize_text(values: pd.Series) -> tuple[NDArray[np.intp], pd.Series | list[str | None]]:
    """Codes of a column (-1 where missing) and its distinct values as :func:`_text` reads them.

    The distinct values may repeat or be missing after stripping; :func:`_union_categories`
    merges them. A categorical column's codes are used as they are. A few distinct strings
    come back as a list (stripped in Python: microseconds, where pandas needs milliseconds).
    """
    if isinstance(values.dtype, pd.CategoricalDtype):
        codes, uniques = values.cat.codes.to_numpy(), values.cat.categories
    else:
        codes, uniques = pd.factorize(values.array)
        if values.dtype == object and pd.api.types.infer_dtype(uniques) != "string":
            # Mixed objects (1, 1.0 and True hash alike): factorize their text instead.
            codes, uniques = pd.factorize(values.astype(STRING_DTYPE).array)
    if len(uniques) <= _FEW and not _keeps(values):
        found = uniques.tolist()
        if all(type(u) is str for u in found):
            return codes, [None if (t := u.strip()) in _NA_SET else t for u in found]
    return codes, _text(pd.Series(uniques, dtype=values.dtype if _keeps(values) else None))


def _as_read(values: pd.Series) -> pd.Series:
    """Text held as a categorical (a Parquet file's dictionary columns) back as text."""
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype) and is_string_dtype(dtype.categories.dtype):
        return values.astype(dtype.categories.dtype)
    return values


def _code_dtype(n_values: int) -> type[np.signedinteger]:
    """The smallest integer type holding codes -1 .. n_values - 1 (pandas' rule for
    categorical codes)."""
    return next(d for d in (np.int8, np.int16, np.int32, np.int64) if n_values < np.iinfo(d).max)


def _keeps(values: pd.Series) -> bool:
    """Does the column's dtype carry the rule :func:`_text` applies (floats, booleans)?"""
    return is_float_dtype(values.dtype) or is_bool_dtype(values.dtype)


def _union_categories(
    texts: list[pd.Series | list[str | None]],
) -> tuple[pd.Index, list[NDArray[np.signedinteger]]]:
    """Sorted distinct non-missing values of several columns' distinct texts, and per column a
    table from its codes to codes in that union (the last entry, read by code -1, is -1).

    Tables use the smallest integer type that holds the codes (pandas' rule), so the codes they
    give are categorical codes as they are.
    """
    if all(isinstance(t, list) for t in texts):  # few values: plain Python
        order = sorted({v for t in texts for v in t if v is not None})
        at = {v: k for k, v in enumerate(order)}
        cats = pd.Index(order, dtype=STRING_DTYPE)
        found = [[at.get(v, -1) if v is not None else -1 for v in t] for t in texts]
    else:
        series = [pd.Series(t, dtype=STRING_DTYPE) for t in texts]
        cats = pd.Index(pd.unique(pd.concat(series, ignore_index=True).dropna()),
                        dtype=STRING_DTYPE).sort_values()  # fmt: skip
        found = [cats.get_indexer(t.array) for t in series]
    k = len(cats)
    dtype = _code_dtype(k)
    return cats, [np.append(np.asarray(f, dtype=np.int64), -1).astype(dtype) for f in found]


def _drop_unused(
    columns: list[NDArray[np.signedinteger]], cats: pd.Index
) -> tuple[list[NDArray[np.signedinteger]], pd.Index]:
    """Codes sharing ``cats`` renumbered without the categories no row uses, and those left."""
    used = np.zeros(len(cats), dtype=bool)
    for c in columns:
        used |= np.bincount(c.astype(np.intp) + 1, minlength=len(cats) + 1)[1:] > 0
    if used.all():
        return columns, cats
    remap = np.append(np.cumsum(used) - 1, -1).astype(columns[0].dtype)
    return [remap[c] for c in columns], cats[used]


def _text(values: pd.Series) -> pd.Series:
    """Values as stripped text (:data:`STRING_DTYPE`), NaN where missing.

    Stripping and the missing-marker check run once per distinct value (then mapped back by
    codes), and a column needing neither is returned without a copy; columns of mostly distinct
    values (ids) take the plain column-wise path.
    """
    if is_bool_dtype(values.dtype):
        values = values.astype(object)
    elif is_float_dtype(values.dtype):
        # Integral floats (ids in a column with gaps) read as "7", not "7.0".
        v = values.to_numpy(dtype=np.float64, na_value=np.nan)
        finite = v[np.isfinite(v)]
        if finite.size and np.all(finite == np.round(finite)) and np.all(np.abs(finite) < 2**53):
            values = values.astype("Int64")
    values = values.astype(STRING_DTYPE)
    n = len(values)
    if n >= 4096 and len(pd.unique(values.array[:4096])) > 1024:  # mostly distinct: no gain
        out = values.str.strip()
        missing = out.isin(_NA_TOKENS).to_numpy(dtype=bool)
        return out.mask(missing) if missing.any() else out
    codes, uniques = pd.factorize(values.array)
    stripped = pd.Series(uniques, dtype=STRING_DTYPE).str.strip()
    bad = stripped.isin(_NA_TOKENS).to_numpy(dtype=bool)
    if not bad.any() and bool((stripped.array == uniques).all()):
        # arrow arrays are immutable: share; otherwise copy as str.strip would
        return values if getattr(values.dtype, "storage", None) == "pyarrow" else values.copy()
    table = stripped.mask(bad).array
    return pd.Series(table.take(codes, allow_fill=True), index=values.index, name=values.name)


def _distinct(values: pd.Series) -> tuple[NDArray[np.intp], list[str | None]]:
    """Factorize, then each distinct value as stripped text (None if missing).

    Low-cardinality columns (winner, flags) are parsed once per distinct value, never per row.
    Numbers read as text the way :func:`_text` writes them (1.0 -> "1", True -> "True").
    """
    codes, uniques = pd.factorize(values)  # missing -> -1
    texts: list[str | None] = []
    for u in uniques:
        if isinstance(u, bool | np.bool_):
            t = str(bool(u))
        elif isinstance(u, float | np.floating) and np.isfinite(u) and float(u).is_integer():
            t = str(int(u)) if abs(u) < 2**53 else str(u)
        else:
            t = str(u).strip()
        texts.append(None if t in _NA_SET else t)
    return codes, texts


def _spelling(value: str, spellings: dict[str, int], numbers: dict[float, int]) -> int:
    """Outcome code of one distinct (stripped) winner value, or ``_OTHER``."""
    if value in spellings:
        return spellings[value]
    word = _WORDS.get(value.lower())
    if word is not None:
        return word
    try:
        x = float(value)
    except ValueError:
        return _OTHER
    if x in numbers:
        return numbers[x]
    return _NUMBERS.get(x, _OTHER)


def _winners(
    winner: tuple[NDArray[np.intp], list[str | None]], ca: NDArray[np.int64],
    cb: NDArray[np.int64], models: pd.Index, spellings: dict[str, int], numbers: dict[float, int],
) -> NDArray[np.int8]:
    """Outcome per row: 0 (A), 1 (B), 2 (tie), or minus the rejection reason code.

    ``winner`` is the winner column as :func:`_distinct` returns it; ``ca``, ``cb`` are the rows'
    model codes in ``models`` (-1 where missing); a winner written as a model's name is matched
    by code, never by comparing text row by row.
    """
    codes, texts = winner
    missing = -_KIND["missing winner"]
    cls = np.array([missing if t is None else _spelling(t, spellings, numbers) for t in texts]
                   + [missing], dtype=np.int8)  # fmt: skip
    out = cls[codes]  # code -1 (missing) takes the last entry
    # The model each distinct winner value names (-1: none; missing values name none).
    named = np.append(models.get_indexer(pd.Index([t or "" for t in texts], dtype=object)), -1)

    # A model's own name: A or B by the side it plays in this row.
    other = np.flatnonzero(out == _OTHER)
    if other.size:
        m = named[codes[other]]
        elsewhere = -_KIND["winner names a model not in this match"]
        out[other] = np.where(m < 0, -_KIND["unknown winner value"],
                              np.where(m == ca[other], _A,
                                       np.where(m == cb[other], _B, elsewhere)))  # fmt: skip

    # A spelling that is also a model name in the row, pointing at the other side: ambiguous.
    clash = [u for u, c in enumerate(cls[:-1]) if 0 <= c < _OTHER and named[u] >= 0]
    if clash:
        rows = np.flatnonzero(np.isin(codes, clash))
        m = named[codes[rows]]
        wrong = ((m == ca[rows]) & (out[rows] != _A)) | ((m == cb[rows]) & (out[rows] != _B))
        out[rows[wrong]] = -_KIND[_AMBIGUOUS]
    return out


def _booleans(values: pd.Series) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Parse boolean-like values; return (value, not boolean-like). Missing is False."""
    codes, texts = _distinct(values)
    val = [0 if t is None else 1 if t.lower() in _TRUE else 0 if t.lower() in _FALSE else 2
           for t in texts]  # fmt: skip
    out = np.array([*val, 0], dtype=np.int8)[codes]
    return out == 1, out == 2


def _duplicates(ids: pd.Series) -> tuple[NDArray[np.bool_], NDArray[np.int64] | None]:
    """Rows repeating an earlier non-missing id, and (if any) each such row's first row.

    A stable sort brings equal ids together in row order; it beats hashing 10M distinct strings.
    """
    n = len(ids)
    order = np.asarray(ids.array.argsort(kind="stable", na_position="last"), dtype=np.int64)
    ordered = ids.array.take(order)
    same = np.zeros(n, dtype=bool)
    same[1:] = np.asarray(ordered[1:] == ordered[:-1], dtype=bool)  # missing never equal
    dup = np.zeros(n, dtype=bool)
    dup[order] = same
    if not same.any():
        return dup, None
    starts = np.flatnonzero(~same)  # sorted positions where a run of equal ids begins
    repeats = np.flatnonzero(same)
    first_of = np.full(n, -1, dtype=np.int64)
    first_of[order[repeats]] = order[starts[np.searchsorted(starts, repeats, side="right") - 1]]
    return dup, first_of


def _duplicate_reasons(ids: pd.Series, first: NDArray[np.int64]) -> NDArray[np.object_]:
    """"duplicate match_id 'x' (first at row N)" per row, built column-wise."""
    ids = ids.reset_index(drop=True)
    quoted = "'" + ids + "'"  # equals repr(x) unless x needs escapes
    odd = ids.str.contains(r"[^ -~]|['\\]", regex=True).to_numpy(dtype=bool)  # not plain ASCII
    if odd.any():
        quoted[odd] = [repr(str(x)) for x in ids[odd]]
    at = pd.Series(first, dtype=np.int64).astype(STRING_DTYPE)
    return ("duplicate match_id " + quoted + " (first at row " + at + ")").to_numpy(dtype=object)


def _labels(outcome: NDArray[np.int8]) -> pd.api.extensions.ExtensionArray:
    """Outcome codes 0/1/2 as "A"/"B"/"tie" in :data:`STRING_DTYPE`."""
    if pa is not None and getattr(STRING_DTYPE, "storage", None) == "pyarrow":
        labels = pa.DictionaryArray.from_arrays(pa.array(outcome), pa.array(list(WINNERS)))
        return pd.array(labels.cast(pa.large_string()), dtype=STRING_DTYPE)
    return pd.array(np.asarray(WINNERS, dtype=object)[outcome], dtype=STRING_DTYPE)


# ----------------------------------------------------------------------------------------------
# Files
# ----------------------------------------------------------------------------------------------


def _format_of(filename: str) -> tuple[str | None, str | None, str | None]:
    """(format, delimiter, compression) from a file name; format None when unknown."""
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


def _read_file(name: str, format: str | None) -> pd.DataFrame:
    """Read a verdict file with every field as text (CSV) or as stored (Parquet, JSON)."""
    fmt, sep, compression = _format_of(os.path.basename(name))
    if format is not None:
        sep = sep if fmt == "csv" else ","
        fmt = format
    elif fmt is None:
        raise ValueError(
            f"Cannot tell the format of {name!r} from its extension. Supported: .csv, .tsv, "
            ".parquet, .pq, .jsonl, .ndjson, .json (text formats optionally with .gz, .bz2, "
            ".xz); or pass format='csv', 'parquet' or 'jsonl'."
        )
    if not os.path.exists(name):
        raise FileNotFoundError(
            f"Verdict file {name!r} not found (looked for {os.path.abspath(name)!r})."
        )
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
                frame = _read_csv(name, sep or ",", compression)
            else:
                frame = _read_json(name, compression, array=start == "[")
    if len(frame) == 0:
        what = (f"it has a header {list(frame.columns)} but no data rows" if fmt == "csv"
                else "it has no records")  # fmt: skip
        raise InvalidVerdictsError(f"{name!r} contains no verdicts: {what}.")
    return frame


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


def _read_csv(name: str, sep: str, compression: str | None) -> pd.DataFrame:
    """Read a CSV with every field as text: pyarrow if it reads the file cleanly, else C.

    The C engine is the reference: whenever pyarrow raises or warns, the file is read again
    with it, so results and messages never depend on which engine ran. Files with any double
    quote go to the C engine directly: pandas runs pyarrow with ``newlines_in_values=False``,
    which splits large files into blocks at line breaks even inside quoted values and then
    misreads such fields silently.
    """
    options = {
        "sep": sep, "dtype": str, "keep_default_na": False, "na_values": [],
        "encoding": "utf-8", "compression": compression,
    }  # fmt: skip
    frame = None
    if pa is not None and not _has_quotes(name, compression):
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
    _check_header(name, sep, compression)
    if len(frame) and len(frame.columns) > 1:
        _check_truncated(name, frame, sep, compression)
    return frame


def _has_quotes(name: str, compression: str | None) -> bool:
    """Does the (decompressed) file contain a double quote anywhere? One pass of memchr."""
    with _open(name, compression) as fh:
        while chunk := fh.read(_CHUNK):
            if b'"' in chunk:
                return True
    return False


def _check_header(name: str, sep: str, compression: str | None) -> None:
    """Refuse a header that names a column twice (pandas would rename it silently)."""
    with _open(name, compression) as fh:
        text = _io.TextIOWrapper(fh, encoding="utf-8-sig", errors="replace", newline="")
        header = next(csv.reader(text, delimiter=sep), [])
    names = [h.strip() for h in header]
    dups = sorted({h for h in names if names.count(h) > 1})
    if dups:
        raise InvalidVerdictsError(
            f"{name!r}: column {dups[0]!r} appears more than once in the header"
            f"{f' (also {dups[1:]})' if len(dups) > 1 else ''}. Rename or drop the duplicates "
            "so that every column is read."
        )


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
                return InvalidVerdictsError(
                    f"{name!r} is not valid UTF-8: first bad byte at line {line} (byte offset "
                    f"{offset}). Re-export as UTF-8 (found {data[exc.start:exc.end + 3]!r} "
                    "there).")  # fmt: skip
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
    except ValueError as exc:
        where = "" if array else _bad_json_line(name, compression)
        raise InvalidVerdictsError(
            f"{name!r} is not valid {'JSON' if array else 'JSON Lines'}{where}: {exc}. Each "
            "line must be one JSON object such as "
            '{"model_a": "x", "model_b": "y", "winner": "A"}.'
        ) from exc
    return frame


def _bad_json_line(name: str, compression: str | None) -> str:
    """" at line N" for the first line that is not a JSON object (error path only)."""
    with _open(name, compression) as fh:
        for number, raw in enumerate(fh, start=1):
            line = raw.decode("utf-8-sig" if number == 1 else "utf-8").strip()
            if not line:
                continue
            try:
                ok = isinstance(json.loads(line), dict)
            except ValueError:
                ok = False
            if not ok:
                return f" at line {number}"
    return ""


def _read_parquet(name: str) -> pd.DataFrame:
    """Read a Parquet file; its text columns come as categoricals straight from pyarrow's
    dictionary decoding (no Python strings made, no hashing: a 1M-row file's four columns in
    0.018 s instead of 0.036 s, and validation then reads their codes)."""
    try:
        text = _parquet_text_columns(name)
        return pd.read_parquet(name, **({"read_dictionary": text} if text else {}))
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


# ----------------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------------


def _writer(obj: pd.DataFrame | str, target: Path) -> tuple[Callable[[str], None], str]:
    """A function writing ``obj`` to a path, and the suffix the temporary file needs."""
    if isinstance(obj, str):

        def write_text(tmp: str) -> None:
            with open(tmp, "w", encoding="utf-8", newline="") as fh:
                fh.write(obj)

        return write_text, ""
    if not isinstance(obj, pd.DataFrame):
        raise TypeError(f"Expected a DataFrame or str; got {type(obj).__name__!r}.")
    fmt, sep, compression = _format_of(target.name)
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


def _same_file(a: Path, b: Path) -> bool:
    with contextlib.suppress(OSError):
        if os.path.samefile(a, b):
            return True
    return a.resolve() == b.resolve()


def _default_mode() -> int:
    """Permissions of a newly created file (0o666 less the umask)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def peek_columns(source: str | os.PathLike[str], format: str | None = None) -> list[str]:
    """Column names of a table file without reading its rows (CSV header, Parquet schema, or
    the first JSON line); an empty list when it cannot tell."""
    name = os.fspath(source)
    fmt, sep, compression = _format_of(os.path.basename(name))
    fmt = format or fmt
    try:
        if fmt == "csv":
            return [str(c) for c in pd.read_csv(name, sep=sep or ",", nrows=0,
                                                compression=compression).columns]  # fmt: skip
        if fmt == "parquet":
            import pyarrow.parquet as pq

            return list(pq.read_schema(name).names)
        if fmt == "jsonl":
            return [str(c) for c in pd.read_json(name, lines=True, nrows=1,
                                                 compression=compression).columns]  # fmt: skip
    except Exception:  # unreadable here: the full reader gives the precise error
        return []
    return []


def read_counts(source: str | os.PathLike[str] | pd.DataFrame) -> pd.DataFrame:
    """Read a pre-aggregated counts table (model_a, model_b, wins_a, wins_b, ties, optional
    judge and task_id), names as text and counts as numbers; validated by
    :func:`ratings.data.from_counts`."""
    if isinstance(source, pd.DataFrame):
        return source.copy()
    frame = _read_file(os.fspath(source), None)
    for col in ("wins_a", "wins_b", "ties"):
        if col in frame.columns:
            frame[col] = pd.to_numeric(frame[col], errors="coerce")
    for col in ("model_a", "model_b", "judge", "task_id"):
        if col in frame.columns:
            frame[col] = _text(frame[col])
    return frame
