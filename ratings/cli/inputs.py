"""The input options of every subcommand that reads verdicts, defined once.

``--columns``, ``--winner-map``, ``--cluster`` / ``--no-cluster``, ``--delimiter`` and
``--encoding``, and ``-`` for standard input: :func:`add_input_options` adds them to a parser,
:func:`read_log` reads the log they describe, and :func:`staged_verdicts` hands the readers a
file they can read (standard input, another encoding or delimiter: a UTF-8, comma-separated
copy in a temporary directory, whose path messages show as the name given).
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import csv
import io
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence

__all__ = [
    "STDIN",
    "add_input_options",
    "missing_task_message",
    "parse_mapping",
    "read_log",
    "relabel",
    "staged_verdicts",
    "verdict_format",
]

#: The verdicts argument that reads standard input.
STDIN = "-"
#: How standard input is named in messages.
STDIN_LABEL = "<stdin>"
#: Staged copies -> the name given on the command line (for messages).
_LABELS: dict[str, str] = {}


def add_input_options(p: argparse.ArgumentParser, *, cluster: bool = True) -> None:
    """Add the options that say how to read a verdict log (``cluster``: also ``--cluster`` /
    ``--no-cluster``, for subcommands whose intervals are clustered)."""
    g = p.add_argument_group("reading the verdicts")
    g.add_argument("--columns", metavar="OLD=NEW,...",
                   help="map your column names to the verdict columns (model_a, model_b, "
                        "winner, task_id, judge, scope), e.g. 'model_1=model_a, model_2=model_b, "
                        "result=winner' (without the spaces)")
    g.add_argument("--winner-map", metavar="VALUE=A|B|TIE,...",
                   help="accept extra winner spellings, e.g. 'tie (bothbad)=tie,draw=tie'")
    g.add_argument("--delimiter", metavar="CHAR",
                   help="field delimiter of a CSV file or standard input, e.g. ';' or 'tab' "
                        "(default: ',' for .csv, tab for .tsv)")  # fmt: skip
    g.add_argument("--encoding", metavar="NAME",
                   help="text encoding of the file, e.g. latin-1 or cp1252 (default utf-8)")
    g.add_argument("--format", metavar="NAME", type=str.lower,
                   choices=["csv", "parquet", "jsonl", "fastchat", "arena-hard", "alpaca-eval"],
                   help="read the file as csv, parquet or jsonl (default: from its extension), "
                        "or as another tool's log: fastchat (FastChat / LMArena battles, JSON "
                        "or Parquet), arena-hard (arena-hard-auto judgments), alpaca-eval "
                        "(AlpacaEval annotations.json); such logs are also recognised from "
                        "their fields")  # fmt: skip
    g.add_argument("--strong-weight", type=int, metavar="N",
                   help="arena-hard: verdicts a strong label (A>>B, B>>A) counts as (default "
                        "1; arena-hard-auto's own leaderboard counts 3)")  # fmt: skip
    if cluster:
        x = g.add_mutually_exclusive_group()
        x.add_argument("--cluster", metavar="COLUMN",
                       help="cluster verdicts by this column for the sandwich, e.g. "
                            "question_id (default task_id; without one, per verdict and a "
                            "warning)")  # fmt: skip
        x.add_argument("--no-cluster", action="store_true",
                       help="treat verdicts as independent (per-verdict HC0 sandwich)")
    else:
        p.set_defaults(cluster=None, no_cluster=False)


def parse_mapping(text: str | None, flag: str) -> dict[str, str] | None:
    """``"a=b,c=d"`` as a dict; a key given twice is an error naming it (commas inside names
    are not supported here)."""
    if not text:
        return None
    out: dict[str, str] = {}
    twice: list[str] = []
    for part in text.split(","):
        key, sep, value = part.rpartition("=")
        if not sep or not key.strip():
            raise ValueError(f"`{flag}` must look like 'old=new,old2=new2'; got {text!r}.")
        key = key.strip()
        if key in out and key not in twice:
            twice.append(key)
        out.setdefault(key, value.strip())
    if twice:
        raise ValueError(f"`{flag} {text}` gives {twice} more than once; give each name once.")
    return out


def missing_task_message(path: str) -> str:
    """A verdict file without ``task_id`` where the command needs one (``ratings next``): the
    file's columns, and the ``--columns`` mapping of the one that looks like the task."""
    from ratings.core.errors import option
    from ratings.io import peek_columns
    from ratings.io.hints import task_column

    labels = peek_columns(path)
    task = task_column(labels)
    fix = (f"{task!r} looks like it: pass {option('columns', {task: 'task_id'})}" if task
           else f"map your task column with {option('columns', {'YOUR_TASK_COLUMN': 'task_id'})}")
    return (f"{path!r} has no task_id column, and planning needs each verdict's task, so as not "
            f"to repeat a (task, pair). Columns of the file: {labels}; {fix}.")  # fmt: skip


def _delimiter(text: str | None) -> str | None:
    if text is None:
        return None
    named = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|",
             "space": " "}  # fmt: skip
    sep = named.get(text.lower(), text)
    if len(sep) != 1 or sep in "\"\r\n":
        raise ValueError(f"`--delimiter` must be one character (or 'tab'); got {text!r}.")
    return sep


def _encoding(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        return codecs.lookup(text).name
    except LookupError:
        raise ValueError(f"`--encoding {text}` is not an encoding Python knows; e.g. utf-8, "
                         "latin-1, cp1252, utf-16.") from None


def relabel(text: str) -> str:
    """``text`` with every staged copy's path replaced by the name given for it."""
    for path, label in _LABELS.items():
        text = text.replace(repr(path), repr(label)).replace(path, label)
    return text


@contextlib.contextmanager
def staged_verdicts(args: argparse.Namespace) -> Iterator[None]:
    """While the block runs, ``args.verdicts`` names a file the readers can read: the file given,
    or (standard input, ``--encoding``, ``--delimiter``) a UTF-8, comma-separated copy."""
    path = getattr(args, "verdicts", None)
    sep, enc = _delimiter(getattr(args, "delimiter", None)), _encoding(
        getattr(args, "encoding", None))  # fmt: skip
    if path is None or (path != STDIN and sep is None and enc in (None, "utf-8")):
        yield
        return
    from ratings.io.readers import format_of

    name = STDIN_LABEL if path == STDIN else os.fspath(path)
    fmt, default_sep, compression = (("csv", ",", None) if path == STDIN
                                     else format_of(os.path.basename(name)))  # fmt: skip
    if fmt == "parquet" or (fmt == "jsonl" and sep is not None):
        raise ValueError(f"`--delimiter` and `--encoding` read text tables; {name!r} is "
                         f"{'Parquet' if fmt == 'parquet' else 'JSON'} (drop them).")
    if path != STDIN and not os.path.exists(name):
        yield  # the reader says the file is missing
        return
    data = sys.stdin.buffer.read() if path == STDIN else _raw(name, compression)
    text = data.decode(enc or "utf-8-sig", errors="strict") if enc else None
    if text is None:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = None  # left as bytes: the reader locates the bad byte
    if path == STDIN and fmt == "csv" and text is not None and text.lstrip()[:1] in ("{", "["):
        fmt = "jsonl"
    if sep is not None and text is not None and sep != ",":
        text = _recomma(text, sep)
    base = os.path.basename(name) if path != STDIN else "stdin"
    for ext in (".gz", ".bz2", ".xz"):
        base = base.removesuffix(ext)
    if fmt == "csv":  # re-delimited with commas (or left as it was)
        stem, suffix = os.path.splitext(base)
        if sep is not None or suffix.lower() not in (".csv", ".tsv"):
            base = stem + (".csv" if sep is not None or default_sep == "," else ".tsv")
    elif fmt == "jsonl" and not base.lower().endswith((".jsonl", ".ndjson", ".json")):
        base += ".jsonl"
    folder = tempfile.mkdtemp(prefix="ratings-input-")
    staged = os.path.join(folder, base)
    try:
        with open(staged, "wb") as fh:
            fh.write(text.encode("utf-8") if text is not None else data)
        _LABELS[staged] = name
        args.verdicts, args.verdicts_given = staged, path
        try:
            yield
        finally:
            args.verdicts = path
    finally:  # the label stays: the error naming the copy is printed after this block
        shutil.rmtree(folder, ignore_errors=True)


def _raw(name: str, compression: str | None) -> bytes:
    import bz2
    import gzip
    import lzma

    opener = {None: open, "gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}[compression]
    with opener(name, "rb") as fh:
        return fh.read()


def _recomma(text: str, sep: str) -> str:
    """A table delimited by ``sep`` as CSV with commas: records (and the lines of quoted
    fields) stay on the lines they were on."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for record in csv.reader(io.StringIO(text, newline=""), delimiter=sep):
        writer.writerow(record)
    return out.getvalue()


def read_log(args: argparse.Namespace, *, errors: str = "raise", keep: Sequence[str] = (),
             as_numbers: Sequence[str] = (), empty: bool = False):  # fmt: skip
    """The verdict log of ``args``: the one path every subcommand reads verdicts by.

    :func:`ratings.read_verdicts` with the input options; the ``--cluster`` column is kept, and
    ``keep``, as numbers where named in ``as_numbers``. With ``empty``, a ``.csv`` / ``.tsv``
    holding only a header is an empty log (``None``; a new benchmark), which
    ``read_verdicts`` would reject.
    """
    import ratings

    if empty:
        from ratings.io.readers import is_header_only

        if is_header_only(args.verdicts):
            return None
    cluster = getattr(args, "cluster", None)
    fmt = verdict_format(args)
    log = ratings.read_verdicts(
        args.verdicts,
        columns=_given_mapping(getattr(args, "columns", None), "--columns"),
        winner_map=_given_mapping(getattr(args, "winner_map", None), "--winner-map"),
        errors=errors,
        keep=([cluster] if cluster else []) + list(keep),  # e.g. --cluster question_id
        as_numbers=as_numbers,
        soft=getattr(args, "soft", False),  # `winner` as A's score (ratings.BT(soft=True))
        format=fmt,
    )
    _say_format(args, fmt, log)
    return log


def verdict_format(args: argparse.Namespace):
    """The ``format=`` of ``--format`` and ``--strong-weight`` (None when neither is given)."""
    from ratings.io.formats import ArenaHard, peer_format
    from ratings.io.readers import peer_of

    name = getattr(args, "format", None)
    weight = getattr(args, "strong_weight", None)
    if weight is None:
        return name
    path = getattr(args, "verdicts", None)
    peer = peer_format(name) if name else (peer_of(path) if isinstance(path, str) else None)
    if not isinstance(peer, ArenaHard):
        raise ValueError("`--strong-weight` weighs arena-hard-auto's strong labels; pass "
                         "`--format arena-hard` (or an arena-hard judgments file).")
    return ArenaHard(strong_weight=weight)


def _say_format(args: argparse.Namespace, fmt, log) -> None:
    """One line on standard error when the log was read as another tool's format."""
    from ratings.io.readers import peer_of

    path = getattr(args, "verdicts", None)
    if not isinstance(path, str) or not os.path.isfile(path):
        return
    peer = peer_of(path, fmt)
    if peer is not None:
        shown = _LABELS.get(path, path)
        print(f"{shown!r}: {peer.summary(log.verdicts)}", file=sys.stderr)


def _given_mapping(value, flag: str) -> dict[str, str] | None:
    """A mapping option as given: already a mapping (from Python), or the flag's text."""
    if isinstance(value, dict):
        return value
    return parse_mapping(value, flag)
