"""Reading a verdict source for a fit: read, validate, select the scope and aggregate."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Literal, NamedTuple

import numpy as np
import pandas as pd

from ratings.core.errors import (
    InvalidVerdictsError,
    UnclusteredWarning,
    close_matches,
    option,
)
from ratings.core.schema import RESERVED_SCOPES
from ratings.data.comparisons import Comparisons, aggregate, from_counts, is_counts_frame
from ratings.data.soft import (
    SOFT_COLUMNS,
    check_not_soft,
    check_not_soft_table,
    is_soft_table,
    soft_aggregate,
    soft_table_data,
)
from ratings.io import VerdictLog, peek_columns, read_counts, read_verdicts
from ratings.io.hints import task_column
from ratings.kernels.engine import Engine

__all__ = [
    "LoadedComparisons",
    "LoadedLog",
    "Source",
    "is_counts_source",
    "load_comparisons",
    "load_log",
    "load_with",
    "source_columns",
    "warn_unclustered",
]

Source = str | os.PathLike | pd.DataFrame | VerdictLog | Comparisons


def _select_scope(log: VerdictLog, scope: str | None) -> tuple[pd.DataFrame, str | None]:
    """The verdicts of one scope, and that scope (the log's only one when not given)."""
    v = log.verdicts
    if "scope" not in v.columns:
        if scope is not None:
            raise InvalidVerdictsError(
                f"{option('scope', scope)} was given but the verdicts have no `scope` column. "
                f"Available columns: {v.columns.tolist()}."
            )
        return v, None
    scopes = pd.unique(v["scope"])
    if scope is None:
        if len(scopes) > 1:
            raise InvalidVerdictsError(
                f"The verdicts hold {len(scopes)} scopes {sorted(map(str, scopes))[:8]}; ratings "
                f"from different scopes must not be pooled. Choose one with {option('scope')}."
            )
        return v, _not_reserved(str(scopes[0]))
    if scope not in set(scopes):
        raise InvalidVerdictsError(
            f"Scope {scope!r} not in the verdicts. {close_matches(scope, scopes)}"
        )
    return v[v["scope"] == scope], _not_reserved(scope)


def _not_reserved(scope: str) -> str:
    """Refuse a data scope named like a scope of the package's own outputs."""
    if scope in RESERVED_SCOPES:
        raise InvalidVerdictsError(
            f"The verdicts have a scope named {scope!r}, the name the package gives the "
            "combined headline in its output tables: ratings of this scope would pass for the "
            "headline (and be frozen as one). Rename the scope in the data, e.g. to "
            f"'{scope}_data'.")  # fmt: skip
    return scope


def is_counts_source(source) -> bool:
    """Pre-aggregated counts (wins_a, wins_b, ties) rather than verdicts?"""
    columns = source_columns(source)
    return columns is not None and is_counts_frame(pd.DataFrame(columns=columns))


def source_columns(source: Source, format: object = None) -> list | None:
    """The column names of a verdict source as given: a frame's columns, a file's header
    (:func:`ratings.io.peek_columns`); None for anything else (a log already read,
    ``Comparisons``, no such file)."""
    if isinstance(source, pd.DataFrame):
        return list(source.columns)
    if isinstance(source, str | os.PathLike) and os.path.isfile(source):
        return list(peek_columns(source, format))
    return None


class LoadedLog(NamedTuple):
    """A verdict source read, validated and aggregated for one scope.

    ``frame`` holds the scope's rows as read (canonical verdicts, or a counts table), for
    computations that need more than the aggregated rows (the A/B slots of
    :mod:`ratings.models.judge_effects`); ``None`` when the source was :class:`Comparisons`.
    """

    data: Comparisons
    frame: pd.DataFrame | None
    n_rejected: int
    scope: str | None


class LoadedComparisons(NamedTuple):
    """What :func:`load_comparisons` returns: the aggregated ``data``, the number of rejected
    rows ``n_rejected`` and the ``scope`` fitted (a named tuple, so that code unpacking the
    earlier plain tuple keeps working)."""

    data: Comparisons
    n_rejected: int
    scope: str | None


def load_log(
    verdicts: Source,
    *,
    scope: str | None = None,
    cluster: str | None = "auto",
    errors: Literal["raise", "report"] = "raise",
    columns: Mapping[str, str] | None = None,
    winner_map: Mapping[object, str] | None = None,
    engine: Engine = "auto",
    keep: Sequence[str] = (),
    as_numbers: Sequence[str] = (),
    soft: bool = False,
    format: object = None,
) -> LoadedLog:
    """Read (if needed), select the scope and aggregate (``keep``: other columns to keep,
    e.g. style features; ``as_numbers``: those of them kept as numbers when numeric;
    ``soft``: ``winner`` is A's score, see :mod:`ratings.data.soft`; ``format``: the file's
    format, see :class:`ratings.Read`)."""
    if isinstance(verdicts, Comparisons):
        return LoadedLog(data=verdicts, frame=None, n_rejected=0, scope=scope)
    if is_counts_source(verdicts):
        counts = read_counts(verdicts)
        if "scope" in counts.columns:
            counts, scope = _select_scope(VerdictLog(counts, counts.iloc[:0], None), scope)
        if cluster == "auto":
            cluster = "task_id" if "task_id" in counts.columns else None
        if is_soft_table(counts):  # reduced with fractional scores (ratings.data.soft)
            if soft:
                data = soft_table_data(counts, cluster=cluster, engine=engine)
                return LoadedLog(data=data, frame=counts, n_rejected=0, scope=scope)
            check_not_soft_table(counts)
            counts = counts.drop(columns=list(SOFT_COLUMNS))
        try:
            data = from_counts(counts, cluster=cluster)
        except InvalidVerdictsError as exc:  # name the file, as a verdict log's errors do
            if not isinstance(verdicts, str | os.PathLike) or str(exc).startswith("'"):
                raise
            raise InvalidVerdictsError(f"{os.fspath(verdicts)!r}: {exc}",
                                       rows=exc.rows) from None  # fmt: skip
        return LoadedLog(data=data, frame=counts, n_rejected=0, scope=scope)
    if isinstance(verdicts, VerdictLog):
        log = verdicts
    else:
        kept = [cluster] if cluster not in (None, "auto") else []  # e.g. a question_id
        log = read_verdicts(verdicts, columns=columns, winner_map=winner_map, errors=errors,
                            keep=[*kept, *keep], as_numbers=as_numbers, soft=soft,
                            format=format, task_codes=cluster is not None)  # fmt: skip
    frame, scope = _select_scope(log, scope)
    if cluster == "auto":
        cluster = "task_id" if "task_id" in frame.columns else None
    if soft or "score" in frame.columns:  # A's scores (ratings.data.soft)
        if not soft:
            check_not_soft(frame)
        elif "score" not in frame.columns:  # a VerdictLog read without scores
            frame = frame.assign(score=frame["winner"].map({"A": 1.0, "B": 0.0, "tie": 0.5})
                                 .astype(np.float64))  # fmt: skip
        data = soft_aggregate(frame, cluster=cluster, engine=engine)
        return LoadedLog(data=data, frame=frame, n_rejected=len(log.rejected), scope=scope)
    return LoadedLog(data=aggregate(frame, cluster=cluster, engine=engine), frame=frame,
                     n_rejected=len(log.rejected), scope=scope)  # fmt: skip


def load_with(verdicts: Source, options, **extra) -> LoadedLog:
    """:func:`load_log` as a fit's checked options (:class:`~ratings.api.specs.FitOptions`)
    say: their scope, cluster, :class:`~ratings.Read` spec, engine and soft outcomes
    (``extra``: the columns to keep)."""
    read = options.read
    return load_log(verdicts, scope=options.scope, cluster=options.cluster, errors=read.errors,
                    columns=read.columns, winner_map=read.winner_map,
                    engine=options.solver.engine, soft=options.bt.soft, format=read.format,
                    **extra)  # fmt: skip


def load_comparisons(verdicts: Source, **options) -> LoadedComparisons:
    """Read (if needed), select the scope and aggregate (``options`` as :func:`load_log`'s):
    the data, the number of rejected rows and the scope fitted (:func:`load_log` also keeps
    the rows as read)."""
    loaded = load_log(verdicts, **options)
    return LoadedComparisons(data=loaded.data, n_rejected=loaded.n_rejected,
                             scope=loaded.scope)  # fmt: skip


def warn_unclustered(verdicts: Source, scope: str | None, *, stacklevel: int = 2) -> None:
    """Warn (:class:`~ratings.core.errors.UnclusteredWarning`) that a log without ``task_id``
    gets intervals per verdict: the one source of this warning, for Python and the command line.
    """
    if isinstance(verdicts, VerdictLog):
        verdicts = verdicts.source if verdicts.source is not None else pd.DataFrame()
    if isinstance(verdicts, str | os.PathLike):
        where = f"{os.fspath(verdicts)!r} has"
    else:
        where = "The verdicts have"
    if scope is not None:
        where = where.replace(" ha", f" (scope {scope!r}) ha")
    task = task_column(_labels(verdicts))
    if task is not None:
        fix = (f"Its column {task!r} looks like the task: pass {option('cluster', task)} (or "
               f"map it with {option('columns', {task: 'task_id'})}); if not, pass "
               f"{option('cluster', None)} to say the verdicts are independent.")  # fmt: skip
    else:
        fix = (f"Add a task_id column, cluster by another column with "
               f"{option('cluster', 'COLUMN')}, or pass {option('cluster', None)} to say the "
               "verdicts are independent.")  # fmt: skip
    warnings.warn(
        f"{where} no task_id column, so intervals are per verdict (HC0): they are too narrow "
        "(often about half the clustered width) when verdicts on one task are dependent. "
        + fix, UnclusteredWarning, stacklevel=stacklevel + 1)  # fmt: skip


def _labels(verdicts: object) -> list[object]:
    """The column names of a verdict source as given, or none when they cannot be read."""
    try:
        return source_columns(verdicts) or []
    except (ValueError, OSError):
        return []
