"""The verdict reduction in DuckDB: validate and count a log larger than memory where it lies.

A DuckDB relation (a Parquet or CSV glob, a table, any query) is grouped by the raw values of the
columns a fit reads and counted, in DuckDB: it streams the files and spills its hash table to disk
when it must, so the log never has to fit in memory. The groups (one per distinct combination of
task, judge, models, winner and flags) are validated by :func:`ratings.read_verdicts` itself
(:mod:`ratings.data.grouped`), so every rule is the in-memory one; the rows of rejected groups are
then looked up in DuckDB and named by file and row (or by position in the relation). Repeated
``match_id`` values are not looked for here (that needs every id at once).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import pandas as pd

from ratings.core.errors import InvalidVerdictsError, format_rows
from ratings.data.grouped import (
    PartialCounts,
    combine_partials,
    counts_of_groups,
    partial_of_counts,
    raw_columns,
)

__all__ = ["aggregate_counts_sql", "is_duckdb_relation", "relation_of"]

_SHOWN = 1000  # rejected rows fetched to name them
_SIZE = "n_verdicts__"
_BATCH = 1_000_000  # groups converted and validated at a time
_SUM_ABOVE = 8_000_000  # rows of counts held before equal keys are summed


def is_duckdb_relation(obj: object) -> bool:
    """True for a ``duckdb.DuckDBPyRelation`` (without importing duckdb otherwise)."""
    return (type(obj).__module__ or "").startswith("duckdb") and hasattr(obj, "query")


def relation_of(path: str | os.PathLike[str], connection=None):
    """A DuckDB relation over a Parquet or CSV file or glob (``logs/*.parquet``), carrying each
    row's file (and, for Parquet, row number) for error messages."""
    import duckdb

    con = connection
    if con is None:
        con = duckdb.connect()
        con.execute("SET enable_progress_bar = false")  # no bar written over the CLI's output
    name = os.fspath(path)
    quoted = "'" + name.replace("'", "''") + "'"
    lower = name.lower()
    if lower.endswith((".parquet", ".pq")):
        return con.sql(f"SELECT * FROM read_parquet({quoted}, filename = true, "
                       "file_row_number = true)")  # fmt: skip
    if lower.endswith((".csv", ".tsv", ".csv.gz", ".tsv.gz")):
        return con.sql(f"SELECT * FROM read_csv({quoted}, all_varchar = true)")
    raise ValueError(f"{name!r}: the DuckDB engine reads Parquet or CSV files (or globs).")


def _quoted(column: str) -> str:
    return '"' + column.replace('"', '""') + '"'


def aggregate_counts_sql(
    relation,
    *,
    columns: Mapping[str, str] | None = None,
    winner_map: Mapping[object, str] | None = None,
) -> pd.DataFrame:
    """Validate a DuckDB relation of verdicts and reduce it to a counts table.

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
    keys = ", ".join(_quoted(c) for c in cols)
    reader = relation.query("src", f"SELECT {keys}, count(*) AS {_SIZE} FROM src GROUP BY ALL"
                            ).to_arrow_reader(_BATCH)  # fmt: skip
    partials: list[PartialCounts] = []
    bad, n_bad = [], 0
    for batch in reader:  # one batch of groups in memory at a time, summed as it comes
        grouped = _to_pandas(batch)
        size = grouped.pop(_SIZE).to_numpy()
        try:
            counts, rejected = counts_of_groups(grouped, size, columns=columns,
                                                winner_map=winner_map)  # fmt: skip
        except InvalidVerdictsError as error:  # no usable group in this batch
            if not len(error.rows):
                raise
            counts, rejected = None, error.rows[["row", "reason"]]
        if len(rejected):
            rows = rejected["row"].to_numpy()
            n_bad += int(size[rows].sum())
            found = grouped.iloc[rows][cols].astype(object).reset_index(drop=True)
            bad.append(found.assign(reason__=rejected["reason"].astype(object).to_numpy()))
        if counts is not None:
            partials.append(partial_of_counts(counts))
        if sum(len(p.counts) for p in partials) > _SUM_ABOVE:  # bound the memory held
            partials = [combine_partials(partials)]
    if n_bad:
        _raise_rejected(relation, pd.concat(bad, ignore_index=True).head(_SHOWN), cols, n_bad)
    if not partials:
        raise InvalidVerdictsError("The relation holds no verdicts.")
    return combine_partials(partials, summed=False).frame()  # from_counts sums repeated keys


def _to_pandas(table) -> pd.DataFrame:
    """An Arrow table or record batch as pandas, its text columns dictionary-encoded
    (categoricals)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    cols = [pc.dictionary_encode(c) if pa.types.is_string(c.type) or pa.types.is_large_string(
        c.type) else c for c in table.columns]  # fmt: skip
    return pa.table(cols, names=table.column_names).to_pandas()


def _raise_rejected(relation, bad: pd.DataFrame, cols: list[str], n: int) -> None:
    """Raise naming the first rows of the rejected groups (file and row, or position);
    ``bad``: the groups' values and ``reason__``."""
    names = relation.columns
    by_file = "filename" in names and "file_row_number" in names
    where = ("s.filename AS file, s.file_row_number AS row" if by_file
             else "NULL AS file, pos AS row")  # fmt: skip
    order = "s.filename, s.file_row_number" if by_file else "pos"
    match = " AND ".join(f"CAST(s.{_quoted(c)} AS VARCHAR) IS NOT DISTINCT FROM "
                         f"CAST(b.{_quoted(c)} AS VARCHAR)" for c in cols)  # fmt: skip
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
