"""Verdict validation: :func:`read_verdicts` reads a log, checks every row and normalises it.

Every row that cannot be used is reported by its 0-based data row number (header excluded) and a
reason, either in an :class:`~ratings.core.errors.InvalidVerdictsError` or in
``VerdictLog.rejected``; no row is dropped silently. The output dtypes and missing-value rules
are described in :mod:`ratings.io`.
"""

from __future__ import annotations

import os
import unicodedata
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from pandas.api.types import is_bool_dtype, is_float_dtype, is_string_dtype

from ratings.core.errors import DataWarning, InvalidVerdictsError, format_rows, option
from ratings.core.schema import CANONICAL, REQUIRED, STRING_DTYPE, WINNERS, require_columns
from ratings.io.blanks import missing_cells
from ratings.io.cells import (
    NA_TOKENS,
    booleans,
    check_columns,
    distinct,
    escape_formulas,
    pick_columns,
    text,
)
from ratings.io.formats import PeerFormat, peer_format
from ratings.io.hints import guess_columns
from ratings.io.readers import format_of, load_table
from ratings.io.writers import write_atomic

__all__ = ["REASONS", "WINNER_MISSING", "WINNER_OTHER", "VerdictLog", "fraction",
           "name_categoricals", "read_verdicts", "winner_meanings", "write_rejected"]

# Text columns of repeated values (stripped), returned as categoricals; `match_id` stays text,
# and `winner`, `failed_a`, `failed_b` have their own parsers.
_CATEGORICAL = ("model_a", "model_b", "task_id", "judge", "scope")
# Optional text columns whose empty cells reject the row (match_id may be empty).
_NEEDED_IF_PRESENT = ("task_id", "judge", "scope")

# Winner outcome codes; negative codes are rejection reasons.
_A, _B, _TIE, _OTHER = 0, 1, 2, 3
_WORDS = {"a": _A, "model_a": _A, "b": _B, "model_b": _B, "tie": _TIE}
_NUMBERS = {1.0: _A, 0.0: _B, 0.5: _TIE}

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
    ("missing value in a column kept for clustering", None),
    ("duplicate match_id", "match_id"),
    ("fractional winner score", "winner"),
)
_KIND = {reason: code for code, (reason, _) in enumerate(_KINDS, start=1)}
#: The rejection reasons, in the order they are checked (reason k + 1 is ``REASONS[k]``).
REASONS: tuple[str, ...] = tuple(reason for reason, _ in _KINDS)
#: Winner classes of :func:`winner_meanings` beside 0 (A), 1 (B) and 2 (tie): a value that is
#: no spelling (a model's name, or unknown), and a missing one (minus its reason).
WINNER_OTHER, WINNER_MISSING = _OTHER, -_KIND["missing winner"]
_AMBIGUOUS = _KINDS[6][0]
_WINNER_DTYPE = pd.CategoricalDtype(pd.Index(WINNERS, dtype=STRING_DTYPE))


@dataclass(frozen=True, eq=False, repr=False)
class VerdictLog:
    """A validated verdict log.

    Attributes
    ----------
    verdicts : pandas.DataFrame
        The usable rows, canonical columns in :data:`CANONICAL` order: ``model_a``, ``model_b``,
        ``winner`` (``"A"``, ``"B"`` or ``"tie"``), whichever of ``task_id`` (unless read with
        ``task_codes=False``), ``judge``, ``scope``, ``match_id`` the input has, and always
        ``failed_a``, ``failed_b`` (bool). Text columns are categoricals of :data:`STRING_DTYPE`
        strings, ``match_id`` is :data:`STRING_DTYPE` (see :mod:`ratings.io`). The index, named
        ``"row"``, is the 0-based data row number.
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


def read_verdicts(
    source: str | os.PathLike[str] | pd.DataFrame,
    *,
    columns: Mapping[str, str] | None = None,
    winner_map: Mapping[object, str] | None = None,
    errors: Literal["raise", "report"] = "raise",
    format: str | PeerFormat | None = None,
    keep: Sequence[str] = (),
    as_numbers: Sequence[str] = (),
    soft: bool = False,
    task_codes: bool = True,
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
    format : str or PeerFormat, optional
        ``"csv"``, ``"parquet"`` or ``"jsonl"`` override the format inferred from the file
        extension. A peer tool's format (``"fastchat"``, ``"arena-hard"``, ``"alpaca-eval"``,
        or a spec with options such as ``ratings.io.formats.ArenaHard(strong_weight=3)``) reads
        its log as verdicts (:mod:`ratings.io.formats`); without ``format``, a file (or
        DataFrame) whose fields are unmistakably one tool's is read so too.
    keep : sequence of str, optional
        Other columns to keep (after the canonical ones, as categoricals), e.g. a
        ``question_id`` to cluster intervals by (``ratings.fit(..., cluster="question_id")``
        asks for it). A row with an empty value there is rejected like one with an empty
        ``task_id``.
    as_numbers : sequence of str, optional
        Columns of ``keep`` (e.g. style feature counts) kept as they are, not as categoricals,
        when they hold numbers (an integer or float dtype); missing values are rejected as
        above.
    soft : bool, default=False
        Read ``winner`` as A's score in [0, 1]: fractional numbers are kept (as ``"tie"`` in
        ``winner``) and every row's score goes to a float column ``score`` (1, 0 and 0.5 for
        A, B and a tie). Without it a fractional number is rejected, and the message names
        this option.
    task_codes : bool, default=True
        False: a ``task_id`` column is checked (a row with an empty task is rejected all the
        same) but not encoded, and left out of ``verdicts``: for a fit that clusters by
        nothing (``ratings.fit(..., cluster=None)``), which never reads it.

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
    empty means false. A row with a failure flag needs no winner (the failed side loses, two
    failures tie): an empty one is filled in, and a winner the flags contradict is overridden with
    a :class:`~ratings.core.errors.DataWarning` giving the count and rows. Rows are rejected, each
    with its first problem, for: a missing model name, ``model_a == model_b``, a missing (without
    a failure flag) or unknown winner, a winner naming a model of another match, a non-boolean
    failure flag, a missing ``task_id`` / ``judge`` / ``scope`` (when the column exists) and a
    repeated ``match_id`` (the first occurrence is kept).
    """
    if errors not in ("raise", "report"):
        raise ValueError(f"`errors` must be 'raise' or 'report'; got {errors!r}.")
    peer_format(format)  # an unknown name fails here, before reading
    targets = check_columns(columns, CANONICAL)
    spellings, numbers = _check_winner_map(winner_map)

    frame, name, prefix, raw = load_table(
        source, targets, pick=_pick_verdict_columns, format=format, peers=True, soft=soft,
        empty="The verdicts DataFrame contains no verdicts (0 rows).")  # fmt: skip
    extra = _kept_columns(frame, keep, prefix)
    raw.update(extra)
    plain = {c for c in as_numbers if c in extra and extra[c].dtype.kind in "iuf"}
    unread = () if task_codes else ("task_id",)
    verdicts, rejected, summary = _validate(raw, len(frame), spellings, numbers, tuple(extra),
                                            prefix=prefix, plain=plain, soft=soft,
                                            unread=unread)  # fmt: skip

    if len(rejected):
        everything = len(rejected) == len(frame)
        if errors == "raise" or everything:
            raise InvalidVerdictsError(prefix + summary(everything, errors), rows=rejected)
    return VerdictLog(verdicts=verdicts, rejected=rejected, source=name)


def write_rejected(
    log: VerdictLog, path: str | os.PathLike[str], *, csv_escape: bool = True
) -> None:
    """Write ``log.rejected`` as CSV via :func:`write_atomic` (never over ``log.source``).

    Parameters
    ----------
    log : VerdictLog
    path : path
        Destination (a ``line`` column gives each row's line in a text source, the header
        being line 1); written in the format of its extension (``.csv``, ``.tsv``, ``.json``,
        ``.jsonl``, ``.parquet``, text formats optionally compressed); any other extension
        still receives comma-separated text.
    csv_escape : bool, default=True
        Prefix ``'`` to text cells a spreadsheet would run as formulas (see
        :func:`~ratings.io.writers.write_atomic`).
    """
    inputs = [log.source] if log.source is not None else []
    table = log.rejected
    if log.source is not None and len(table):  # each row's line in a text file, header line 1
        from ratings.io.lines import record_lines

        lines = record_lines(log.source, table["row"].to_numpy())
        if lines is not None:
            table = table.assign(line=lines)[["line", *table.columns]]
    if format_of(Path(os.fspath(path)).name)[0] is not None:  # .csv, .tsv, .json, .parquet...
        write_atomic(table, path, inputs=inputs, csv_escape=csv_escape)
    else:
        table = escape_formulas(table) if csv_escape else table
        write_atomic(table.to_csv(index=False), path, inputs=inputs)


def _check_winner_map(
    winner_map: Mapping[object, str] | None,
) -> tuple[dict[str, int], dict[float, int]]:
    """Validate ``winner_map=``; return codes by stripped text key and by numeric key."""
    spellings: dict[str, int] = {}
    numbers: dict[float, int] = {}
    for key, value in (winner_map or {}).items():
        if not isinstance(value, str) or value not in WINNERS:
            raise ValueError(
                f"{option('winner_map')} values must be 'A', 'B' or 'tie'; got {key!r}: "
                f"{value!r}.")  # fmt: skip
        code = WINNERS.index(value)
        spellings[str(key).strip()] = code
        if isinstance(key, int | float | np.number) and not isinstance(key, bool | np.bool_):
            numbers[float(key)] = code
    return spellings, numbers


def _kept_columns(frame: pd.DataFrame, keep: Sequence[str], prefix: str) -> dict[str, pd.Series]:
    """The non-canonical columns asked for by ``keep``, by name (blanks around names ignored)."""
    if isinstance(keep, str):
        keep = [keep]
    wanted = [str(c) for c in keep if str(c) not in CANONICAL]
    by_name = {str(c).strip(): c for c in frame.columns}
    require_columns(by_name, [c.strip() for c in wanted], "verdicts (asked for by `keep=`, or "
                    f"to cluster by: {option('cluster')})", prefix=prefix, hint="Name a column "
                    f"of the file, or pass {option('cluster', None)} to treat verdicts as "
                    "independent.")  # fmt: skip
    return {c: frame[by_name[c.strip()]].reset_index(drop=True) for c in wanted}


def _pick_verdict_columns(
    frame: pd.DataFrame, targets: Mapping[str, str], prefix: str
) -> dict[str, object]:
    """Return {canonical name: column label of ``frame``} for the verdict columns present."""
    def message(missing: list[str], labels: list[object]) -> str:
        return _missing_verdict_columns(missing, labels, numeric=_numeric_columns(frame))

    return pick_columns(frame, targets, prefix, canonical=CANONICAL, required=REQUIRED,
                        what="verdicts", missing_message=message)  # fmt: skip


def _numeric_columns(frame: pd.DataFrame, sample: int = 1000) -> list[str]:
    """Labels of the columns whose first ``sample`` values are all numbers (error path only)."""
    out = []
    for label in frame.columns:
        head = frame[label].head(sample)
        if head.dtype.kind in "iuf" or (
                len(head) and pd.to_numeric(head, errors="coerce").notna().all()):
            out.append(str(label))
    return out


def _missing_verdict_columns(missing: list[str], labels: list[object],
                             numeric: Collection[str] = ()) -> str:  # fmt: skip
    """The missing-columns message: a mapping of every missing column from its likeliest source
    (:func:`ratings.io.hints.guess_columns`; the task too, when a column looks like one) that
    reads the file when followed, and a delimiter hint."""
    head = f"Column(s) {missing} not found in verdicts. Available columns: {labels}."
    if len(labels) == 1 and isinstance(labels[0], str):  # one column: another delimiter?
        for sep, label in ((";", "';'"), ("\t", "a tab"), ("|", "'|'")):
            if sep in labels[0]:
                flag = option("delimiter", "tab" if sep == "\t" else sep)  # CLI only
                return head + (f" The file may use {label} as delimiter: pass {flag}."
                               if flag.startswith("`--") else
                               f" The file may use {label} as delimiter: re-export it with "
                               f"commas{' or name it .tsv' if sep == chr(9) else ''}.")  # fmt: skip
    guesses = guess_columns(labels, missing, numeric=numeric)
    example = {(label if label is not None else f"YOUR_{canon.upper()}_COLUMN"): canon
               for canon, label in guesses.items()}  # fmt: skip
    unknown = [canon for canon, label in guesses.items() if label is None]
    message = f"{head} Pass {option('columns', example)} to map your names"
    if unknown:
        message += (f" (replace {', '.join(f'YOUR_{c.upper()}_COLUMN' for c in unknown)} with "
                    "the column that holds it)")  # fmt: skip
    return message + "."


def _validate(
    raw: dict[str, pd.Series], n: int, spellings: dict[str, int], numbers: dict[float, int],
    extra: tuple[str, ...] = (), *, prefix: str = "", plain: Collection[str] = (),
    soft: bool = False, unread: Collection[str] = (),
) -> tuple[pd.DataFrame, pd.DataFrame, Callable[[bool, str], str]]:
    """Check every row; return (verdicts, rejected, a function building the error message).

    Columns of repeated values are factorized once here; every check below runs on their integer
    codes, and they leave as categoricals (the codes :func:`ratings.data.comparisons.aggregate`
    reuses). Columns of ``unread`` (of :data:`_NEEDED_IF_PRESENT`) are only checked for missing
    cells, and left out of the verdicts.
    """
    jobs = {c: (_missing if c in unread else _factorize_text, raw[c])
            for c in (*_CATEGORICAL, *extra) if c in raw and c not in plain}  # fmt: skip
    jobs["winner"] = (distinct, raw["winner"])
    found = _run_concurrently(jobs, n)
    winner = found.pop("winner")
    missing = {c: found.pop(c) for c in unread if c in found}
    groups, codes, categories = _shared_codes(found, prefix)
    reason = np.zeros(n, dtype=np.int8)

    def flag(kind: str, mask: NDArray[np.bool_]) -> None:
        if mask.any():
            reason[(reason == 0) & mask] = _KIND[kind]

    ca, cb = codes["model_a"], codes["model_b"]
    flag("missing model_a", ca < 0)
    flag("missing model_b", cb < 0)
    flag("model_a equals model_b", (ca == cb) & (ca >= 0))

    flags, bad_flag = {}, {}
    for c in ("failed_a", "failed_b"):
        if c in raw:
            flags[c], bad_flag[c] = booleans(raw[c])
        else:
            flags[c] = np.zeros(n, dtype=bool)
    outcome = _winners(winner, ca, cb, categories["model_a"], spellings, numbers)
    score = _scores(outcome, winner, soft)
    contradicted = _forfeits(outcome, flags["failed_a"], flags["failed_b"])
    if outcome.size and int(outcome.min()) < 0:  # rejection codes are negative: one pass
        for kind in ("missing winner", "unknown winner value", "fractional winner score",
                     "winner names a model not in this match", _AMBIGUOUS):  # fmt: skip
            flag(kind, outcome == -_KIND[kind])
    for c, bad in bad_flag.items():
        flag(f"{c} is not boolean-like", bad)
    for c in _NEEDED_IF_PRESENT:
        if c in codes or c in missing:
            flag(f"missing {c}", missing[c] if c in missing else codes[c] < 0)
    for c in extra:
        missing = np.isnan(raw[c].to_numpy()) if c in plain else codes[c] < 0
        flag("missing value in a column kept for clustering", missing)
    first_of: NDArray[np.int64] | None = None
    ids = None
    if "match_id" in raw:
        ids = text(raw["match_id"])
        dup, first_of = _duplicates(ids)
        flag("duplicate match_id", dup)

    bad_rows = np.flatnonzero(reason)
    good = reason == 0
    _warn_contradicted(np.flatnonzero(contradicted & good))
    keep = slice(None) if bad_rows.size == 0 else good
    columns: dict[str, object] = {c: flags[c][keep] for c in flags}
    for group in groups:
        kept = [codes[c][keep] for c in group]
        if bad_rows.size:  # categories of values seen only in rejected rows go
            kept, categories[group[0]] = _drop_unused(kept, categories[group[0]])
        dtype = pd.CategoricalDtype(categories[group[0]])
        columns.update((c, pd.Categorical.from_codes(k, dtype=dtype, validate=False))
                       for c, k in zip(group, kept, strict=True))  # fmt: skip
    columns.update((c, raw[c].to_numpy()[keep]) for c in plain)  # numbers as they are
    columns["winner"] = pd.Categorical.from_codes(outcome[keep], dtype=_WINNER_DTYPE,
                                                  validate=False)  # fmt: skip
    if soft:  # A's score; forfeits decided by the flags score 1, 0 or 1/2 like the others
        decided = flags["failed_a"] | flags["failed_b"]
        score = np.where(decided | (score < 0), _OUTCOME_SCORE[np.clip(outcome, 0, 2)], score)
        columns["score"] = score[keep]
    if ids is not None:
        columns["match_id"] = ids.array[keep]
    data = {c: columns[c] for c in (*CANONICAL, *extra, "score") if c in columns}
    rows = pd.RangeIndex(n, name="row") if bad_rows.size == 0 else pd.Index(
        np.flatnonzero(good), name="row")  # fmt: skip
    verdicts = pd.DataFrame(data, index=rows, copy=False)

    kinds = reason[bad_rows]
    reasons = np.asarray([k for k, _ in _KINDS], dtype=object)[kinds - 1]
    is_dup = kinds == _KIND["duplicate match_id"]
    if first_of is not None and is_dup.any():
        rows = bad_rows[is_dup]
        reasons[is_dup] = _duplicate_reasons(ids.iloc[rows], first_of[rows])
    rejected = pd.DataFrame({
        "row": bad_rows.astype(np.int64),
        "reason": pd.array(reasons, dtype=STRING_DTYPE),
        **{c: _as_read(raw[c].iloc[bad_rows if bad_rows.size else slice(0)]).array
           for c in (*CANONICAL, *extra) if c in raw},  # a slice: pyarrow's first take costs ~25 ms
    })  # fmt: skip

    def summary(everything: bool, errors: str) -> str:
        parts = []
        order = pd.unique(kinds)  # reasons in order of their first row
        for k in order:
            rows = bad_rows[kinds == k]
            kind, column = _KINDS[k - 1]
            where = f"rows {format_rows(rows)}"
            if column is not None:
                shown = text(raw[column].iloc[rows]).dropna().unique()[:5]
                where = f"e.g. {[str(v) for v in shown]!r} at {where}"
            parts.append(f"{rows.size} with {kind} ({where})")
        head = (f"All {bad_rows.size} row(s) rejected, nothing to fit" if everything
                else f"{bad_rows.size} row(s) rejected")  # fmt: skip
        tie_hint = _KIND["unknown winner value"] in order
        spell = f"Map tie spellings with {option('winner_map')}"
        if _KIND["fractional winner score"] in order:  # a graded verdict, not a spelling
            tie_hint = True
            spell = (f"Pass {option('soft', True)} to read `winner` as A's score in [0, 1]"
                     + (f"; map tie spellings with {option('winner_map')}"
                        if _KIND["unknown winner value"] in order else ""))
        if tie_hint and "winner" in raw:  # FastChat / LMArena's own tie spellings
            seen = set(text(raw["winner"]).dropna().str.lower().unique()[:1000])
            if seen & {"tie (bothbad)", "both_bad"}:
                spell += (f" (FastChat / LMArena battles: {option('format', 'fastchat')} reads "
                          "'tie (bothbad)' and 'both_bad' as ties)")
        if everything or errors == "report":
            fix = f"{spell} or fix the rows." if tie_hint else "Fix the rows."
        else:
            fix = f"{spell}, fix the rows" if tie_hint else "Fix the rows"
            fix += (f", or pass {option('errors', 'report')} to fit on the good rows and list "
                    "the rest.")  # fmt: skip
        return f"{head}: {'; '.join(parts)}. {fix}"

    return verdicts, rejected, summary


def _shared_codes(found: dict[str, tuple], prefix: str):
    """(column groups, codes, categories) from :func:`_factorize_text` results: sorted
    categories per column, ``model_a`` and ``model_b`` sharing theirs; look-alike names
    refused."""
    codes: dict[str, NDArray[np.signedinteger]] = {}
    categories: dict[str, pd.Index] = {}
    pair = [c for c in ("model_a", "model_b") if c in found]
    groups = [g for g in [pair, *[[c] for c in found if c not in pair]] if g]
    for group in groups:  # model_a and model_b share their categories
        cats, tables = _union_categories([found[c][1] for c in group])
        for c, table in zip(group, tables, strict=True):
            codes[c], categories[c] = _renumbered(found[c][0], table), cats
        if group[0] in _NAMED:
            _refuse_lookalikes(group, codes, cats, prefix)
    return groups, codes, categories


def _renumbered(codes: NDArray[np.signedinteger],
                table: NDArray[np.signedinteger]) -> NDArray[np.signedinteger]:  # fmt: skip
    """``table[codes]``: a column's codes in the union's numbering (-1 stays -1). Where the
    table is the identity (a categorical whose categories are the union, sorted, as a Parquet
    file's dictionary columns read back) the codes are already those: copied in the table's
    type instead of gathered (1M rows: 0.3 against 2 ms a column; a copy, never the caller's
    own array)."""
    if np.array_equal(table[:-1], np.arange(table.size - 1)):
        return codes.astype(table.dtype)
    return table[codes]


def name_categoricals(raw: Mapping[str, pd.Series], prefix: str = "") -> dict[str, pd.Categorical]:
    """Text columns (names, tasks, judges, scopes) encoded as :func:`read_verdicts` encodes
    them: stripped, missing markers as missing (code -1), sorted categories (``model_a`` and
    ``model_b`` share theirs), Unicode look-alike names refused. Long columns are factorized
    side by side on the package's threads."""
    n = len(next(iter(raw.values()))) if raw else 0
    found = _run_concurrently({c: (_factorize_text, v) for c, v in raw.items()}, n)
    _, codes, categories = _shared_codes(found, prefix)
    return {c: pd.Categorical.from_codes(codes[c], dtype=pd.CategoricalDtype(categories[c]),
                                         validate=False) for c in raw}  # fmt: skip


# Distinct values up to which plain Python beats pandas: about even at 4,000, half as fast
# at 50,000 (one column of 200k cells).
_FEW = 4_000
# Columns of names where two spellings of one name would silently make two models (judges,
# scopes): Unicode look-alikes there are refused.
_NAMED = ("model_a", "judge", "scope")


def _refuse_lookalikes(group: list[str], codes: dict[str, NDArray[np.signedinteger]],
                       names: pd.Index, prefix: str) -> None:  # fmt: skip
    """Raise when distinct names of a column group are equal after Unicode normalisation
    (NFKC: ``"café"`` composed or decomposed, full-width ``"ｘ"`` and ``"x"``, ``"ﬁ"`` and
    ``"fi"``): they look alike, yet would be rated as different models (or judges, scopes).

    Only non-ASCII names are normalised (ASCII is its own normal form), so a log of ASCII
    names costs one check per distinct name.
    """
    texts = [str(v) for v in names]
    if all(t.isascii() for t in texts):
        return
    by_form: dict[str, list[int]] = {}
    for k, t in enumerate(texts):
        by_form.setdefault(t if t.isascii() else unicodedata.normalize("NFKC", t), []).append(k)
    clashes = [ks for ks in by_form.values() if len(ks) > 1]
    if not clashes:
        return
    parts = []
    for ks in clashes[:3]:
        spelled = []
        for k in ks:
            rows = np.flatnonzero(np.any([codes[c] == k for c in group], axis=0))
            spelled.append(f"{texts[k]!a} (rows {format_rows(rows)})")
        parts.append(" and ".join(spelled))
    what = "Model" if group[0] == "model_a" else group[0].capitalize()
    python = option("columns").startswith("`columns")  # advice in Python's terms only there
    how = "e.g. unicodedata.normalize('NFC', name)" if python else "e.g. retyped in the file"
    raise InvalidVerdictsError(
        f"{prefix}{what} names that differ only in Unicode normalisation would count as "
        f"different {what.lower()}s: {'; '.join(parts)}{'; ...' if len(clashes) > 3 else ''}. "
        "They look alike but are different strings (composed and decomposed accents, "
        f"full-width letters, ligatures). Use one spelling for each, {how}, or rename one if "
        "they are different.")


def _run_concurrently(jobs: dict[str, tuple[Callable, pd.Series]], n: int) -> dict[str, object]:
    """``{name: fn(column)}`` for ``jobs = {name: (fn, column)}``, on threads for long columns.

    Hashing a pyarrow-backed string column releases the GIL, so on a multi-core machine the
    columns of a large log are factorized side by side (1M rows, 2 cores: 4 columns in 0.045 s
    instead of 0.068 s). Each job reads only its own column.
    """
    from ratings.core import threads as _threads

    items = list(jobs.items())
    if n < _threads.CONCURRENT_ROWS or all(isinstance(col.dtype, pd.CategoricalDtype)
                                           for _, (_, col) in items):  # codes: no hashing
        return {name: fn(col) for name, (fn, col) in items}
    # Largest columns first (hashing costs by bytes), so the pool's threads finish together:
    # at 1M rows on 2 cores one thread takes task_id then winner, the other model_a then
    # model_b (in log order one thread got model_a then task_id, the longest pair).
    items.sort(key=lambda item: -item[1][1].memory_usage(index=False))
    results = _threads.run([lambda fn=fn, col=col: fn(col) for _, (fn, col) in items])
    return dict(zip([name for name, _ in items], results, strict=True))


def _factorize_text(values: pd.Series) -> tuple[NDArray[np.intp], pd.Series | list[str | None]]:
    """Codes of a column (-1 where missing) and its distinct values as
    :func:`~ratings.io.cells.text` reads them.

    The distinct values may repeat or be missing after stripping; :func:`_union_categories`
    merges them. A categorical column's codes are used as they are. A few distinct strings
    come back as a list (stripped in Python: microseconds, where pandas needs milliseconds).
    """
    if isinstance(values.dtype, pd.CategoricalDtype):  # its codes (a read-only view)
        codes, uniques = values.array.codes, values.dtype.categories
    else:
        # NumPy-backed columns as their ndarray (pandas 2 deprecates factorizing the wrapper)
        array = values.array
        if isinstance(array, pd.arrays.NumpyExtensionArray):
            array = array.to_numpy()
        codes, uniques = pd.factorize(array)
        if values.dtype == object and pd.api.types.infer_dtype(uniques) != "string":
            # Mixed objects (1, 1.0 and True hash alike): factorize their text instead.
            codes, uniques = pd.factorize(values.astype(STRING_DTYPE).array)
    if len(uniques) <= _FEW and not _keeps(values):
        found = uniques.tolist()
        if all(type(u) is str for u in found):
            return codes, [None if (t := u.strip()) in NA_TOKENS else t for u in found]
    return codes, text(pd.Series(uniques, dtype=values.dtype if _keeps(values) else None))


def _missing(values: pd.Series) -> NDArray[np.bool_]:
    """Is each cell missing (code -1 once encoded as :func:`_validate` encodes it)? Read off
    the cells' bytes where :func:`~ratings.io.blanks.missing_cells` can, else encoded."""
    found = missing_cells(values)
    if found is not None:
        return found
    codes, uniques = _factorize_text(values)
    gone = [u is None for u in uniques] if isinstance(uniques, list) else uniques.isna()
    return np.append(np.asarray(gone, dtype=bool), True)[codes]


def _as_read(values: pd.Series) -> pd.Series:
    """Text held as a categorical (a Parquet file's dictionary columns) back as text."""
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype) and is_string_dtype(dtype.categories.dtype):
        if not len(values):  # (no rows: the text dtype alone, without converting them)
            return pd.Series(dtype.categories[:0])
        return values.astype(dtype.categories.dtype)
    return values


def _code_dtype(n_values: int) -> type[np.signedinteger]:
    """The smallest integer type holding codes -1 .. n_values - 1 (pandas' rule for
    categorical codes)."""
    return next(d for d in (np.int8, np.int16, np.int32, np.int64) if n_values < np.iinfo(d).max)


def _keeps(values: pd.Series) -> bool:
    """Does the column's dtype carry the rule :func:`~ratings.io.cells.text` applies (floats,
    booleans)?"""
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
        codes, uniques = pd.factorize(pd.concat(series, ignore_index=True), sort=True)
        cats = pd.Index(uniques, dtype=STRING_DTYPE)  # one hash pass; missing values are -1
        found = np.split(codes, np.cumsum([len(t) for t in series])[:-1])
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


def _forfeits(outcome: NDArray[np.int8], failed_a: NDArray[np.bool_],
              failed_b: NDArray[np.bool_]) -> NDArray[np.bool_]:  # fmt: skip
    """Let the failure flags decide their rows' outcome (in place); the rows they contradict.

    A failed submission loses to a rendered one and two failures tie, so such a row needs no
    winner: an empty one is filled in. A winner that says otherwise is overridden and returned
    for the caller to report; a winner that cannot be read stays rejected.
    """
    decided = failed_a | failed_b
    if not decided.any():
        return np.zeros(outcome.size, dtype=bool)
    forced = np.where(failed_a & failed_b, _TIE, np.where(failed_a, _B, _A)).astype(np.int8)
    empty = decided & (outcome == -_KIND["missing winner"])
    contradicted = decided & (outcome >= 0) & (outcome != forced)
    take = empty | (decided & (outcome >= 0))
    outcome[take] = forced[take]
    return contradicted


def _warn_contradicted(rows: NDArray[np.int64]) -> None:
    if rows.size:
        warnings.warn(
            f"{rows.size} verdict row(s) name a winner that their failure flags contradict, at "
            f"rows {format_rows(rows)}: a failed submission loses to a rendered one and two "
            "failures tie, so the flags decide these rows. Check the flags or the winners.",
            DataWarning,
            stacklevel=4,
        )


#: A's score of each outcome code (A, B, tie).
_OUTCOME_SCORE = np.array([1.0, 0.0, 0.5])


def fraction(text: str | None) -> float:
    """The number in (0, 1) that ``text`` spells, else NaN."""
    try:
        x = float(text) if text is not None else np.nan
    except ValueError:
        return np.nan
    return x if 0.0 < x < 1.0 else np.nan


def _scores(outcome: NDArray[np.int8], winner: tuple, soft: bool) -> NDArray[np.float64]:
    """Rows whose unknown winner is a fraction in (0, 1): rejected as a fractional score, or
    (``soft``) read as A's score, their outcome a tie in ``winner``. Returns each row's score
    when ``soft`` (-1 where it comes from the outcome), else an empty array; ``outcome`` is
    updated in place."""
    codes, texts = winner
    unknown = np.flatnonzero(outcome == -_KIND["unknown winner value"])
    if not unknown.size:
        return np.full(outcome.size, -1.0) if soft else np.zeros(0)
    frac = np.array([fraction(t) for t in texts] + [np.nan])[codes[unknown]]
    graded = unknown[np.isfinite(frac)]
    if not soft:
        outcome[graded] = -_KIND["fractional winner score"]
        return np.zeros(0)
    outcome[graded] = _TIE
    score = np.full(outcome.size, -1.0)
    score[graded] = frac[np.isfinite(frac)]
    return score


def _winners(
    winner: tuple[NDArray[np.intp], list[str | None]], ca: NDArray[np.int64],
    cb: NDArray[np.int64], models: pd.Index, spellings: dict[str, int], numbers: dict[float, int],
) -> NDArray[np.int8]:
    """Outcome per row: 0 (A), 1 (B), 2 (tie), or minus the rejection reason code.

    ``winner`` is the winner column as :func:`~ratings.io.cells.distinct` returns it; ``ca``,
    ``cb`` are the rows' model codes in ``models`` (-1 where missing); a winner written as a
    model's name is matched by code, never by comparing text row by row.
    """
    codes, texts = winner
    missing = -_KIND["missing winner"]
    cls = np.array([missing if t is None else _spelling(t, spellings, numbers) for t in texts]
                   + [missing], dtype=np.int8)  # fmt: skip
    if np.array_equal(cls[:-1], np.arange(cls.size - 1)):  # codes A, B, tie as outcomes 0..2
        out = codes.astype(np.int8)  # (a categorical's winners: a copy, not a gather)
        if out.size and int(out.min()) < 0:
            out[out < 0] = missing
    else:
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



def winner_meanings(texts: Sequence[str | None], models: pd.Index,
                    winner_map: Mapping[object, str] | None = None
                    ) -> tuple[NDArray[np.int8], NDArray[np.intp]]:  # fmt: skip
    """What distinct winner values mean, as :func:`read_verdicts` reads them: per value (its
    stripped text, None where missing, as :func:`~ratings.io.cells.distinct` gives it) its
    class (0 A, 1 B, 2 tie, :data:`WINNER_OTHER` or :data:`WINNER_MISSING`) and the code of
    the model in ``models`` it names (-1 none). A row's outcome then follows from its models
    (see :func:`_winners`: a model's own name wins for its side; a spelling that is also a
    model of the match, pointing at the other side, is ambiguous)."""
    spellings, numbers = _check_winner_map(winner_map)
    cls = np.array([WINNER_MISSING if t is None else _spelling(t, spellings, numbers)
                    for t in texts], dtype=np.int8)  # fmt: skip
    named = models.get_indexer(pd.Index([t or "" for t in texts], dtype=object))
    return cls, named
