"""The verdict reduction in DuckDB: validate and count a log larger than memory where it lies.

A DuckDB relation (a Parquet or CSV glob, a table, any query) is grouped by the raw values of the
columns a fit reads and counted, in DuckDB: it streams the files and spills its hash table to disk
beyond its memory limit (1 GB on the connections made here, or half of ``--max-memory``), so the log
never has to fit in memory. A winner written ``A``, ``B`` or ``tie`` is counted per outcome within
its group (one group per task and ordered pair, not three); other winner values keep groups of their
own. The groups are validated by :func:`ratings.read_verdicts` itself (:mod:`ratings.data.grouped`),
so every rule is the in-memory one; the rows of rejected groups are then looked up in DuckDB and
named by file and row (or by position in the relation). Repeated ``match_id`` values are not looked
for here (that needs every id at once)."""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np
import pandas as pd

from ratings.core.errors import InvalidVerdictsError, format_rows
from ratings.core.memory import given_limit
from ratings.data.grouped import (
    PartialCounts,
    combine_partials,
    counts_of_groups,
    partial_of_counts,
    raw_columns,
)

__all__ = ["MEMORY_LIMIT", "aggregate_counts_sql", "connect", "is_duckdb_relation", "relation_of"]

_SHOWN = 1000  # rejected rows fetched to name them
#: Memory a connection of :func:`relation_of` lets DuckDB hold (it spills beyond it), unless a
#: ``--max-memory`` / ``max_memory=`` limit is in force: then half of that (the other half holds
#: the batches of groups being counted).
MEMORY_LIMIT = "1GB"
_SIZE = "n_verdicts__"
_BATCH = 1_000_000  # groups converted and validated at a time
_SUM_ABOVE = 4_000_000  # rows of counts held before equal keys are summed
_CANON = "canonical_winner__"  # the group's winner is A, B or tie: counted per outcome
_SPLIT = ("wins_a__", "wins_b__", "ties__")


def is_duckdb_relation(obj: object) -> bool:
    """True for a ``duckdb.DuckDBPyRelation`` (without importing duckdb otherwise)."""
    return (type(obj).__module__ or "").startswith("duckdb") and hasattr(obj, "query")


def relation_of(path: str | os.PathLike[str], connection=None):
    """A DuckDB relation over a Parquet or CSV file or glob (``logs/*.parquet``), carrying each
    row's file (and, for Parquet, row number) for error messages.

    Without a ``connection``, one from :func:`connect` is made; a ``connection`` passed in is
    used with its own settings.
    """
    con = connect() if connection is None else connection
    name = os.fspath(path)
    quoted = "'" + name.replace("'", "''") + "'"
    lower = name.lower()
    if lower.endswith((".parquet", ".pq")):
        return con.sql(f"SELECT * FROM read_parquet({quoted}, filename = true, "
                       "file_row_number = true)")  # fmt: skip
    if lower.endswith((".csv", ".tsv", ".csv.gz", ".tsv.gz")):
        return con.sql(f"SELECT * FROM read_csv({quoted}, all_varchar = true)")
    raise ValueError(f"{name!r}: the DuckDB engine reads Parquet or CSV files (or globs).")


def connect():
    """A DuckDB connection held to :data:`MEMORY_LIMIT`, or to half the limit that
    ``--max-memory`` sets (its group-by spills to a temporary directory beyond it, removed at
    exit), free to return groups in any order, and without a progress bar (none written over
    the CLI's output)."""
    import duckdb

    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    given = given_limit()
    limit = MEMORY_LIMIT if given is None else f"{max(given // 2 // 2**20, 64)}MiB"
    con.execute(f"SET memory_limit = '{limit}'")
    con.execute("SET preserve_insertion_order = false")
    con.execute(f"SET temp_directory = '{_spill_directory()}'")
    return con


def _spill_directory() -> str:
    """A fresh temporary directory for DuckDB to spill to, removed when Python exits."""
    import atexit
    import shutil
    import tempfile

    path = tempfile.mkdtemp(prefix="ratings-duckdb-")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path.replace("'", "''")


def _quoted(column: str) -> str:
    return '"' + column.replace('"', '""') + '"'


def aggregate_counts_sql(
    relation,
    *,
    columns: Mapping[str, str] | None = None,
    winner_map: Mapping[object, str] | None = None,
) -> pd.DataFrame:
    """Validate a DuckDB relation of verdicts and reduce it to a counts table.

    Verdicts whose winner is written ``A``, ``B`` or ``tie`` are counted per outcome inside
    each group (a third of the groups to fetch and validate); other winner values keep a group
    of their own, validated as written. With ``winner_map``, failure flags or models named
    like an outcome, every winner value is a group key.

    Parameters
    ----------
    relation : duckdb.DuckDBPyRelation
        Verdicts with the canonical columns (``columns=`` maps others), e.g.
        ``duckdb.sql("SELECT * FROM read_parquet('logs/*.parquet')")`` or :func:`relation_of`.
    columns, winner_map : mapping, optional
        As for :func:`ratings.read_verdicts`.

    Returns
    -------
    pandas.DataFrame
        Counts per (scope, task_id, judge, model_a, model_b) (keys may repeat), ``wins_a``,
        ``wins_b``, ``ties``, ``forfeits``; pass it to :func:`ratings.fit`.

    Raises
    ------
    InvalidVerdictsError
        Unusable rows, named by file and row (or position) with their reasons.
    """
    cols = raw_columns(relation.columns, columns)
    canonical = [(columns or {}).get(c, c) for c in cols]
    winner = [c for c, name in zip(cols, canonical, strict=True) if name == "winner"]
    flags = {"failed_a", "failed_b"} & set(canonical)  # they decide outcomes: values as written
    if winner_map is None and winner and not flags:
        try:
            return _counted(relation, cols, columns, winner_map, winner[0])
        except _OutcomeNames:  # a model named like an outcome: winner values as written
            pass
    return _counted(relation, cols, columns, winner_map, None)


class _OutcomeNames(Exception):
    """A model is named ``A``, ``B`` or ``tie``: outcomes cannot be counted within groups."""


def _counted(relation, cols: list[str], columns, winner_map, winner: str | None) -> pd.DataFrame:
    """:func:`aggregate_counts_sql`; ``winner``: the winner column whose canonical values are
    counted within the groups (None: every value a group key)."""
    keys = ", ".join(_quoted(c) for c in cols)
    split = ""
    if winner is not None:
        w = _quoted(winner)
        text = f"CAST({w} AS VARCHAR)"
        keys = ", ".join(_quoted(c) for c in cols if c != winner)
        keys += (f", CASE WHEN {text} IN ('A', 'B', 'tie') THEN NULL ELSE {w} END AS {w}, "
                 f"{text} IN ('A', 'B', 'tie') AS {_CANON}")  # fmt: skip
        split = "".join(f", count(*) FILTER (WHERE {text} = '{o}') AS {s}"
                        for o, s in zip(("A", "B", "tie"), _SPLIT, strict=True))  # fmt: skip
    reader = relation.query("src", f"SELECT {keys}, count(*) AS {_SIZE}{split} FROM src "
                            "GROUP BY ALL").to_arrow_reader(_BATCH)  # fmt: skip
    partials: list[PartialCounts] = []
    bad, n_bad = [], 0
    for batch in reader:  # one batch of groups in memory at a time, summed as it comes
        outcomes = None
        if winner is not None:
            outcomes, stand_in = _outcomes(batch, winner)
            batch = batch.set_column(batch.schema.get_field_index(winner), winner, stand_in)
        grouped = _to_pandas(batch.select(cols))
        size = batch.column(_SIZE).to_numpy()
        if winner is not None:
            _refuse_outcome_names(grouped, columns)
        try:
            counts, rejected = counts_of_groups(grouped, size, columns=columns,
                                                winner_map=winner_map,
                                                outcomes=outcomes)  # fmt: skip
        except InvalidVerdictsError as error:  # no usable group in this batch
            if not len(error.rows):
                raise
            counts, rejected = None, error.rows[["row", "reason"]]
        if len(rejected):
            rows = rejected["row"].to_numpy()
            n_bad += int(size[rows].sum())
            found = grouped.iloc[rows][cols].astype(object).reset_index(drop=True)
            if winner is not None:  # canonical winners are looked up as any of them
                found[_CANON] = outcomes[rows, 0] >= 0
                found.loc[found[_CANON], winner] = None
            bad.append(found.assign(reason__=rejected["reason"].astype(object).to_numpy()))
        if counts is not None:
            partials.append(partial_of_counts(counts))
        # Bound the memory held; groups counted per outcome are distinct keys already (bar
        # those of other winner values), so summing them would not shrink them.
        if winner is None and sum(len(p.counts) for p in partials) > _SUM_ABOVE:
            partials = [combine_partials(partials)]
    if n_bad:
        _raise_rejected(relation, pd.concat(bad, ignore_index=True).head(_SHOWN), cols, n_bad,
                        winner)
    if not partials:
        raise InvalidVerdictsError("The relation holds no verdicts.")
    total = combine_partials(partials, summed=False)  # from_counts sums repeated keys
    partials.clear()  # the parts' memory goes before the table is built
    return total.frame()


def _outcomes(batch, winner: str):
    """Verdicts of each group won by A, by B and tied where its winner was canonical (its
    ``winner`` then set to ``"A"``, a stand-in that validates like any of them), else -1."""
    import pyarrow as pa
    import pyarrow.compute as pc

    canon = pc.fill_null(batch.column(_CANON), False)
    split = np.column_stack([batch.column(s).to_numpy() for s in _SPLIT])
    split[~canon.to_numpy(zero_copy_only=False)] = -1
    column = batch.column(winner)
    if pc.any(canon).as_py():
        column = pc.if_else(canon, pa.scalar("A"), pc.cast(column, pa.string()))
    return split, column


def _refuse_outcome_names(grouped: pd.DataFrame, columns) -> None:
    """Raise :class:`_OutcomeNames` when a model is named like an outcome (a winner written as
    a model's name then reads differently from the stand-in)."""
    for c in grouped.columns:
        if (columns or {}).get(c, c) in ("model_a", "model_b"):
            names = pd.Index(grouped[c].cat.categories.astype(str)).str.strip()
            if names.isin(["A", "B", "tie"]).any():
                raise _OutcomeNames


def _to_pandas(table) -> pd.DataFrame:
    """An Arrow table or record batch as pandas, its text columns dictionary-encoded
    (categoricals)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    cols = [pc.dictionary_encode(c) if pa.types.is_string(c.type) or pa.types.is_large_string(
        c.type) else c for c in table.columns]  # fmt: skip
    return pa.table(cols, names=table.column_names).to_pandas()


def _raise_rejected(relation, bad: pd.DataFrame, cols: list[str], n: int,
                    winner: str | None = None) -> None:  # fmt: skip
    """Raise naming the first rows of the rejected groups (file and row, or position);
    ``bad``: the groups' values and ``reason__`` (and, with ``winner`` counted per outcome,
    whether the group's winner was canonical)."""
    names = relation.columns
    by_file = "filename" in names and "file_row_number" in names
    where = ("s.filename AS file, s.file_row_number AS row" if by_file
             else "NULL AS file, pos AS row")  # fmt: skip
    order = "s.filename, s.file_row_number" if by_file else "pos"
    same = {c: f"CAST(s.{_quoted(c)} AS VARCHAR) IS NOT DISTINCT FROM "
               f"CAST(b.{_quoted(c)} AS VARCHAR)" for c in cols}  # fmt: skip
    if winner is not None:
        w = _quoted(winner)
        same[winner] = (f"(CASE WHEN b.{_CANON} THEN CAST(s.{w} AS VARCHAR) IN ('A', 'B', "
                        f"'tie') ELSE {same[winner]} END)")  # fmt: skip
    match = " AND ".join(same.values())
    found = _lookup(relation, bad, where, order, match)
    parts = []
    for reason, group in found.groupby("reason", sort=False):
        if found["file"].notna().any():
            places = "; ".join(f"{os.path.basename(str(f))} rows {format_rows(g['row'])}"
                               for f, g in group.groupby("file", sort=False))  # fmt: skip
        else:
            places = f"rows {format_rows(group['row'])}"
        parts.append(f"{reason} ({places})")
    shown = "" if n <= _SHOWN else f" (the first {_SHOWN} shown)"
    raise InvalidVerdictsError(
        f"{n} verdict row(s) rejected{shown}: {'; '.join(parts)}. Fix those rows or leave them "
        "out of the relation (rows are numbered from 0 within each file, or by position in the "
        "relation).", rows=found)


def _lookup(relation, bad: pd.DataFrame, where: str, order: str, match: str) -> pd.DataFrame:
    """The source rows of the rejected groups, with their reasons (the first :data:`_SHOWN`)."""
    import pyarrow as pa

    arrow = pa.Table.from_pandas(bad, preserve_index=False)  # noqa: F841 - read by name in SQL
    return relation.query("src0", f"""
        WITH s AS (SELECT *, row_number() OVER () - 1 AS pos FROM src0)
        SELECT {where}, b.reason__ AS reason FROM s JOIN arrow AS b ON {match}
        ORDER BY {order} LIMIT {_SHOWN}""").df()
