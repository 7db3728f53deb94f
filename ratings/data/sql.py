"""The verdict reduction in DuckDB: validate and count a log larger than memory where it lies.

A DuckDB relation (a Parquet or CSV glob, a table, any query) is reduced in two queries. The
first gathers each column's distinct values (one scan, a grouping set per column); Python reads
them as :func:`ratings.read_verdicts` reads any cell (stripped, missing markers missing, winner
spellings, failure flags, look-alike names refused), once per distinct value. The second groups
the verdicts by those values (a text column by its position in a list of them, names first in
sorted order so that a name's position is its code, found by a hash join against that list: a
join and a group-by of small integers cost less than a cast of each row to an ``ENUM`` or a
group-by of the text) and applies the row rules in SQL to the groups, not the rows: a ``CASE``
gives each group the reason :func:`ratings.read_verdicts` would give its rows (a missing or
equal model, a winner that is missing, unknown, names a model of another match or is
ambiguous, a failure flag that is not boolean-like, a missing task, judge or scope; render
forfeits decide their outcome). Only integer codes and counts come back. DuckDB streams
the files and spills its hash table to disk beyond its memory limit (1 GB on the connections
made here, or half of ``--max-memory``), so the log never has to fit in memory.

When a group is rejected, a third query applies the same rules to the source rows and names
the first offending rows by file and row (or by position in the relation), with the number of
rejected rows in all. Repeated ``match_id`` values are not looked for here (that needs every id
at once)."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd

from ratings.core.errors import DataWarning, InvalidVerdictsError, format_rows, option
from ratings.core.memory import given_limit
from ratings.core.schema import DEFAULT_JUDGE, DETERMINISTIC_JUDGE
from ratings.data.grouped import raw_columns
from ratings.data.scores import SOFT_COLUMNS, graded_sums
from ratings.io.cells import booleans, distinct
from ratings.io.verdicts import (
    REASONS,
    WINNER_MISSING,
    WINNER_OTHER,
    fraction,
    name_categoricals,
    winner_meanings,
)

__all__ = ["MEMORY_LIMIT", "aggregate_counts_sql", "connect", "is_duckdb_relation", "relation_of"]

_SHOWN = 1000  # rejected rows fetched to name them
_ENUM_MOST = 20_000  # distinct values of a text column up to which it is grouped by position
_CASE_MOST = 64  # WHEN branches a column's codes may take in SQL (else looked up in a table)
#: Memory a connection of :func:`relation_of` lets DuckDB hold (it spills beyond it), unless a
#: ``--max-memory`` / ``max_memory=`` limit is in force: then half of that (the other half holds
#: the groups' codes and counts).
MEMORY_LIMIT = "1GB"
_NAMES = ("model_a", "model_b")
_TEXT = ("task_id", "judge", "scope")  # other columns of names, encoded one by one
_MISSING_WINNER = WINNER_MISSING  # outcome codes below 0: minus the reason (read_verdicts')
_REASONS = dict(enumerate(REASONS, start=1))
_CODE = {reason: k for k, reason in _REASONS.items()}  # read_verdicts' numbering of reasons
_UNKNOWN, _ELSEWHERE, _AMBIGUOUS = (-_CODE[r] for r in REASONS[4:7])


def is_duckdb_relation(obj: object) -> bool:
    """True for a ``duckdb.DuckDBPyRelation`` (without importing duckdb otherwise)."""
    return (type(obj).__module__ or "").startswith("duckdb") and hasattr(obj, "query")


def relation_of(path: str | os.PathLike[str], connection=None):
    """A DuckDB relation over a Parquet or CSV file or glob (``logs/*.parquet``), carrying each
    row's file (and, for Parquet, row number) for error messages.

    Without a ``connection``, a cursor of this process's connection from :func:`connect` (one
    per memory limit, made on first use) is used; a ``connection`` passed in is used with its
    own settings.
    """
    con = _cursor() if connection is None else connection
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


_SHARED: dict[str, object] = {}  # connections of connect(), by memory limit
_INHERITED: list[object] = []  # a forked child's copies of its parent's connections


def _forget_shared() -> None:
    """In a forked child: make new connections when needed (DuckDB's threads stayed behind),
    and keep the inherited ones referenced, never closed: closing one waits for those threads."""
    _INHERITED.extend(_SHARED.values())
    _SHARED.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_shared)


def _cursor():
    """A new cursor (its own client, same database and settings) of the process's connection
    for the memory limit in force: a connection takes ~30 ms to make, a cursor ~0.5 ms."""
    given = given_limit()
    key = "" if given is None else str(given)
    if key not in _SHARED:
        _SHARED[key] = connect()
    con = _SHARED[key].cursor()
    con.execute("SET enable_progress_bar = false")
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
    soft: bool = False,
) -> pd.DataFrame:
    """Validate a DuckDB relation of verdicts and reduce it to a counts table, in DuckDB.

    The rules are :func:`ratings.read_verdicts`' own, applied in SQL to the groups of equal
    raw values (see the module's notes); any rejected row is an error.

    Parameters
    ----------
    relation : duckdb.DuckDBPyRelation
        Verdicts with the canonical columns (``columns=`` maps others), e.g.
        ``duckdb.sql("SELECT * FROM read_parquet('logs/*.parquet')")`` or :func:`relation_of`.
    columns, winner_map : mapping, optional
        As for :func:`ratings.read_verdicts`.
    soft : bool, default=False
        Read ``winner`` as A's score in [0, 1], as :func:`ratings.read_verdicts` does: the
        table then also has ``graded``, ``graded_score`` and ``graded_square`` (the fractional
        scores' number and sums, :mod:`ratings.data.soft`), for ``ratings.fit(table,
        model=ratings.BT(soft=True))``. Without it a fractional score is rejected.

    Returns
    -------
    pandas.DataFrame
        Counts per (scope, task_id, judge, model_a, model_b) (keys may repeat; categorical),
        ``wins_a``, ``wins_b``, ``ties`` and, when some verdict was a render forfeit,
        ``forfeits`` (whole numbers as float64, as the fit reads them); pass it to
        :func:`ratings.fit`.

    Raises
    ------
    InvalidVerdictsError
        Unusable rows, named by file and row (or position) with their reasons.
    """
    cols = raw_columns(relation.columns, columns)
    source = {(columns or {}).get(c, c): c for c in cols}  # canonical name -> source column
    if "model_a" not in source or "model_b" not in source or "winner" not in source:
        missing = [c for c in ("model_a", "model_b", "winner") if c not in source]
        raise InvalidVerdictsError(
            f"The relation has no column(s) {missing} (columns: {list(relation.columns)}). "
            f"Map yours with {option('columns')}.")  # fmt: skip
    values = _distinct_values(relation, cols)
    codes = _Codes(values, source, winner_map, soft=soft)
    return _counted(relation, codes)


def _distinct_values(relation, cols: list[str]) -> dict[str, object]:
    """Each column's distinct values (a pyarrow array, missing values left out), in one scan."""
    sets = ", ".join(f"({_quoted(c)})" for c in cols)
    flags = ", ".join(f"GROUPING({_quoted(c)}) AS g{k}__" for k, c in enumerate(cols))
    query = (f"SELECT {', '.join(_quoted(c) for c in cols)}, {flags} FROM src "
             f"GROUP BY GROUPING SETS ({sets})")  # fmt: skip
    table = relation.query("src", query).to_arrow_table()
    out = {}
    for k, c in enumerate(cols):
        column = table.column(c).combine_chunks()
        keep = np.equal(table.column(f"g{k}__").to_numpy(), 0)
        out[c] = column.filter(keep).drop_null()
    return out


class _Codes:
    """What each distinct value of each column means, read as :func:`ratings.read_verdicts`
    reads cells, and the SQL that gives each row (or group) those meanings.

    A text column of at most :data:`_ENUM_MOST` distinct values is grouped by its position in
    a list of them (a small integer, cheaper to group than text), joined to each row from a
    small table (``e_<column>``: ``v``, the value, ``k``, its position); the list holds the
    column's sorted names first, so that a name's position is its code, then the values that
    are spelled otherwise (blanks around a name, missing markers). Other columns are grouped by
    their values and looked up afterwards in a small table (``t_<column>``: ``v``, the value,
    and its codes).

    Attributes
    ----------
    key : dict of str to str
        Per canonical column: the SQL over ``src`` of the key rows are grouped by.
    tables : dict of str to pyarrow.Table
        The look-up tables of the columns grouped by value.
    positions : dict of str to pyarrow.Table
        The position tables of the columns grouped by position (``model_a`` and ``model_b``
        share theirs).
    categories : dict of str to pandas.Index
        Per canonical name column (``model_a`` and ``model_b`` share theirs).
    flags : bool
        The relation has failure flags.
    """

    def __init__(self, values: dict[str, object], source: dict[str, str], winner_map, *,
                 soft: bool = False) -> None:  # fmt: skip
        self.source = source
        self.soft = soft
        self.key: dict[str, str] = {}
        self.tables: dict[str, object] = {}
        self.positions: dict[str, object] = {}
        self.categories: dict[str, pd.Index] = {}
        self._meaning: dict[str, dict[str, np.ndarray]] = {}  # per column: codes per value
        self._enum: dict[str, int] = {}  # by position: how many leading values are names
        self._values = values
        groups = [list(_NAMES)] + [[c] for c in _TEXT if c in source]
        for group in groups:  # one column of the group's distinct values: shared categories
            parts = [values[source[c]].to_pandas() for c in group]
            found = name_categoricals({group[0]: pd.concat(parts, ignore_index=True)},
                                      "In the relation's distinct values (numbered here from "
                                      "0, not by row): ")[group[0]]  # fmt: skip
            cats = pd.Index(found.categories)
            ends = np.cumsum([0, *map(len, parts)])
            for c, lo, hi in zip(group, ends[:-1], ends[1:], strict=True):
                self.categories[c] = cats
                self._meaning[c] = {"c": found.codes[lo:hi].astype(np.int64)}
            self._plan(group, cats)
        winners = values[source["winner"]]
        _, texts = distinct(pd.Series(winners.to_pandas(), dtype=object))
        cls, named = winner_meanings(texts, self.categories["model_a"], winner_map)
        cls = np.asarray(cls, dtype=np.int64)
        # a fraction in (0, 1) that is no spelling nor name: A's score (soft), else rejected
        frac = np.array([fraction(t) for t in texts], dtype=np.float64)
        graded = (cls == WINNER_OTHER) & (named < 0) & np.isfinite(frac)
        #: the fractional scores, by the ``grade`` code of their winner value (-1: none)
        self.grades = frac[graded]
        grade = np.full(cls.size, -1, dtype=np.int64)
        grade[graded] = np.arange(self.grades.size)
        cls[graded] = 2 if soft else -_CODE["fractional winner score"]
        self._meaning["winner"] = {"cls": cls, "named": named.astype(np.int64), "grade": grade}
        self._plan(["winner"], None)
        self.flags = False
        for c in ("failed_a", "failed_b"):
            if c in source:
                self.flags = True
                val, bad = booleans(pd.Series(values[source[c]].to_pandas(), dtype=object))
                self._meaning[c] = {"val": val.astype(np.int64), "bad": bad.astype(np.int64)}
                self._plan([c], None)

    def _plan(self, group: list[str], names: pd.Index | None) -> None:
        """Group ``group``'s columns by position in one list of their values (``names``: their
        categories, listed first), or by value with a look-up table."""
        import pyarrow as pa

        arrays = [self._values[self.source[c]] for c in group]
        text = all(pa.types.is_string(a.type) or pa.types.is_large_string(a.type)
                   for a in arrays)  # fmt: skip
        members: list[str] = []
        if text and sum(len(a) for a in arrays) <= 2 * _ENUM_MOST:
            first = [] if names is None else [str(v) for v in names]
            extra = sorted({str(v) for a in arrays for v in a.to_pylist()} - set(first))
            members = [*first, *extra]
        meanings = {}
        for c in group if 0 < len(members) <= _ENUM_MOST else ():
            at = {str(v): k for k, v in enumerate(arrays[group.index(c)].to_pylist())}
            # what each position means; positions of values not in this column never
            # occur: a name's there is its own code all the same (one range in SQL)
            meanings[c] = {name: np.array([m[at[v]] if v in at else k if k < len(first)
                                           else -1 for k, v in enumerate(members)],
                                          dtype=np.int64)
                           for name, m in self._meaning[c].items()}  # fmt: skip
        if not meanings or any(_runs(m, len(first) if name == "c" else 0) > _CASE_MOST
                               for c in group for name, m in meanings[c].items()):
            for c in group:  # many values, or many that mean different things: a table
                self.key[c] = f"src.{_quoted(self.source[c])}"
                self.tables[c] = pa.table({"v": self._values[self.source[c]],
                                           **self._meaning[c]})  # fmt: skip
            return
        positions = pa.table({"v": pa.array(members, pa.string()),
                              "k": np.arange(len(members), dtype=np.int32)})  # fmt: skip
        for c in group:
            self.key[c] = f"e_{c}.k"
            self.positions[c] = positions
            self._enum[c] = len(first)
            self._meaning[c] = meanings[c]

    def lookup(self, column: str, name: str, default: int, key: str) -> str:
        """SQL of the code ``name`` of ``column`` from its key ``key`` (``default`` where the
        value is missing)."""
        if column in self.tables:
            return f"COALESCE(t_{column}.{name}, {default})"
        codes = self._meaning[column][name]
        first = self._enum[column]
        if name == "c" and first and np.array_equal(codes[:first], np.arange(first)):
            rest = codes[first:]  # names are their own codes; other spellings looked up
            if not rest.size:
                return f"COALESCE({key}, {default})"
            return (f"CASE WHEN {key} < {first} THEN {key} {_cases(key, rest, first)} "
                    f"ELSE {default} END")  # fmt: skip
        return f"CASE {_cases(key, codes, 0)} ELSE {default} END"


def _runs(codes: np.ndarray, first: int) -> int:
    """``WHEN`` branches :meth:`_Codes.lookup` writes for ``codes`` (runs of equal codes; none
    for leading names that are their own codes)."""
    if first and np.array_equal(codes[:first], np.arange(first)):
        codes = codes[first:]
    return int(codes.size and 1 + np.count_nonzero(np.diff(codes)))


def _cases(key: str, codes: np.ndarray, first: int) -> str:
    """``WHEN key = first + k THEN codes[k]`` for each k, runs of equal codes as ranges."""
    out, k = [], 0
    while k < codes.size:
        end = k
        while end + 1 < codes.size and codes[end + 1] == codes[k]:
            end += 1
        when = (f"{key} = {first + k}" if end == k
                else f"{key} BETWEEN {first + k} AND {first + end}")  # fmt: skip
        out.append(f"WHEN {when} THEN {int(codes[k])}")
        k = end + 1
    return " ".join(out)


def _rules(codes: _Codes, rows: str) -> str:
    """SQL giving each row of ``rows`` (keys ``k_<column>`` from :attr:`_Codes.key`, and any
    other columns) its codes (``model_a__`` ...), outcome (``outcome__``: 0 A, 1 B, 2 tie, or
    minus the reason), whether a failure flag decided it (``decided__``) or contradicts its
    winner (``contradicted__``), and the reason :func:`ratings.read_verdicts` would reject it
    for (``reason__``, its number in read_verdicts' order; 0 when usable)."""
    source = codes.source
    joins = [f"LEFT JOIN t_{c} ON r.k_{c} = t_{c}.v" for c in source if c in codes.tables]
    picks = []
    for c in source:
        key = f"r.k_{c}"
        if c in (*_NAMES, *_TEXT):
            picks.append(f"{codes.lookup(c, 'c', -1, key)} AS {c}__")
        elif c == "winner":
            picks.append(f"{codes.lookup(c, 'cls', _MISSING_WINNER, key)} AS cls__, "
                         f"{codes.lookup(c, 'named', -1, key)} AS named__, "
                         f"{codes.lookup(c, 'grade', -1, key)} AS grade__")  # fmt: skip
        else:
            picks.append(f"{codes.lookup(c, 'val', 0, key)} = 1 AS {c}__, "
                         f"{codes.lookup(c, 'bad', 0, key)} = 1 AS {c}_bad__")  # fmt: skip
    fa = "failed_a__" if "failed_a" in source else "FALSE"
    fb = "failed_b__" if "failed_b" in source else "FALSE"
    looked = f"SELECT r.*, {', '.join(picks)} FROM ({rows}) AS r {' '.join(joins)}"
    # read_verdicts' _winners: a model's own name is A or B by its side; a spelling that is
    # also a model of the match, pointing at the other side, is ambiguous
    stated = (f"CASE WHEN cls__ = {WINNER_OTHER} THEN (CASE WHEN named__ < 0 THEN {_UNKNOWN} "
              f"WHEN named__ = model_a__ THEN 0 WHEN named__ = model_b__ THEN 1 ELSE "
              f"{_ELSEWHERE} END) WHEN cls__ >= 0 AND named__ >= 0 AND ((named__ = model_a__ "
              f"AND cls__ <> 0) OR (named__ = model_b__ AND cls__ <> 1)) THEN {_AMBIGUOUS} "
              "ELSE cls__ END")  # fmt: skip
    # render forfeits (_forfeits): the flags decide a readable or missing winner
    forced = f"CASE WHEN {fa} AND {fb} THEN 2 WHEN {fa} THEN 1 ELSE 0 END"
    outcome = (f"CASE WHEN decided__ AND (stated__ >= 0 OR stated__ = {_MISSING_WINNER}) "
               f"THEN {forced} ELSE stated__ END")  # fmt: skip
    checks = [f"WHEN model_a__ < 0 THEN {_CODE['missing model_a']}",
              f"WHEN model_b__ < 0 THEN {_CODE['missing model_b']}",
              f"WHEN model_a__ = model_b__ THEN {_CODE['model_a equals model_b']}",
              "WHEN outcome__ < 0 THEN -outcome__"]  # the winner's reasons come next
    checks += [f"WHEN {c}_bad__ THEN {_CODE[f'{c} is not boolean-like']}"
               for c in ("failed_a", "failed_b") if c in source]  # fmt: skip
    checks += [f"WHEN {c}__ < 0 THEN {_CODE[f'missing {c}']}" for c in _TEXT if c in source]
    return (f"SELECT *, CASE {' '.join(checks)} ELSE 0 END AS reason__, decided__ AND "
            "stated__ >= 0 AND stated__ <> outcome__ AS contradicted__ FROM (SELECT *, "
            f"{outcome} AS outcome__ FROM (SELECT *, {stated} AS stated__, ({fa} OR {fb}) AS "
            f"decided__ FROM ({looked})))")  # fmt: skip


def _keys(codes: _Codes) -> str:
    return ", ".join(f"{codes.key[c]} AS k_{c}" for c in codes.source)


def _keyed(codes: _Codes, rows: str = "src") -> str:
    """``rows`` (aliased ``src``) joined to the position tables of the listed columns, for
    :func:`_keys`: a hash join against a few values beats casting each row to an ``ENUM``."""
    joins = [f"LEFT JOIN e_{c} ON src.{_quoted(codes.source[c])} = e_{c}.v"
             for c in codes.source if c in codes.positions]  # fmt: skip
    return " ".join([rows if rows == "src" else f"({rows}) AS src", *joins])


def _run(relation, codes: _Codes, query: str, frame: bool = False):
    """``query`` over the relation (``src``), the look-up tables (``t_<column>``) and the
    position tables (``e_<column>``): a pyarrow table, or with ``frame`` a pandas one."""
    # the tables are read by name in SQL (DuckDB's replacement scans)
    tables, positions = codes.tables, codes.positions
    t_scope = tables.get("scope")  # noqa: F841
    t_task_id = tables.get("task_id")  # noqa: F841
    t_judge = tables.get("judge")  # noqa: F841
    t_model_a = tables.get("model_a")  # noqa: F841
    t_model_b = tables.get("model_b")  # noqa: F841
    t_winner = tables.get("winner")  # noqa: F841
    t_failed_a = tables.get("failed_a")  # noqa: F841
    t_failed_b = tables.get("failed_b")  # noqa: F841
    e_scope = positions.get("scope")  # noqa: F841
    e_task_id = positions.get("task_id")  # noqa: F841
    e_judge = positions.get("judge")  # noqa: F841
    e_model_a = positions.get("model_a")  # noqa: F841
    e_model_b = positions.get("model_b")  # noqa: F841
    e_winner = positions.get("winner")  # noqa: F841
    e_failed_a = positions.get("failed_a")  # noqa: F841
    e_failed_b = positions.get("failed_b")  # noqa: F841
    found = relation.query("src", query)
    return found.df() if frame else found.to_arrow_table()


def _counted(relation, codes: _Codes) -> pd.DataFrame:
    """The counts table of the relation's verdicts; raises naming the first rejected rows."""
    source = codes.source
    grouped = f"SELECT {_keys(codes)}, count(*) AS n__ FROM {_keyed(codes)} GROUP BY ALL"
    judges = codes.categories.get("judge", pd.Index([DEFAULT_JUDGE], dtype=object))
    if codes.flags and DETERMINISTIC_JUDGE not in judges:
        judges = judges.append(pd.Index([DETERMINISTIC_JUDGE], dtype=judges.dtype))
    out = [f"CAST({c}__ AS {_code_type(c, codes)}) AS {c}" for c in ("scope", "task_id")
           if c in source]  # fmt: skip
    if "judge" in source or codes.flags:  # forfeits are judged by "deterministic"
        det = judges.get_loc(DETERMINISTIC_JUDGE) if codes.flags else -1
        judge = "judge__" if "judge" in source else "0"
        out.append(f"CAST(CASE WHEN decided__ THEN {det} ELSE {judge} END AS "
                   f"{_code_type('judge', codes, len(judges))}) AS judge")  # fmt: skip
    out += [f"CAST({c}__ AS {_code_type('model_a', codes)}) AS {c}" for c in _NAMES]
    # the outcome (0 A, 1 B, 2 tie) of a usable group; minus the reason of a rejected one
    out.append("CAST(CASE WHEN reason__ = 0 THEN outcome__ ELSE -reason__ END AS TINYINT) "
               "AS outcome, n__ AS n")  # fmt: skip
    if codes.flags:
        out += ["decided__ AS decided", "contradicted__ AS contradicted"]
    if codes.soft:  # the fractional score's code; a render forfeit's flags decide its score
        out.append("CASE WHEN decided__ THEN -1 ELSE grade__ END AS grade")
    query = f"SELECT {', '.join(out)} FROM ({_rules(codes, grouped)})"
    table = _run(relation, codes, query)  # a few integers a group
    outcome = table.column("outcome").to_numpy()
    if len(outcome) and outcome.min() < 0:
        _raise_rejected(relation, codes)
    if not len(outcome):
        raise InvalidVerdictsError("The relation holds no verdicts.")
    if codes.flags and table.column("contradicted").to_numpy(zero_copy_only=False).any():
        _warn_contradicted(relation, codes)
    n = table.column("n").to_numpy().astype(np.float64)  # counts as the fit reads them
    frame = {}
    for c in ("scope", "task_id", "judge", *_NAMES):
        if c in table.column_names:
            cats = judges if c == "judge" else codes.categories[c]
            frame[c] = pd.Categorical.from_codes(table.column(c).to_numpy(), validate=False,
                                                 dtype=pd.CategoricalDtype(cats))  # fmt: skip
    whole = n
    if codes.soft:
        grade = table.column("grade").to_numpy()
        y = np.append(codes.grades, 0.0)[np.where(grade >= 0, grade, -1)]  # 0: not graded
        graded = graded_sums(y, n)
        whole = n - graded[:, 0]
    for o, name in enumerate(("wins_a", "wins_b", "ties")):
        frame[name] = (outcome == o) * whole  # (faster than np.where with a scalar)
    if codes.flags:
        decided = table.column("decided").to_numpy(zero_copy_only=False)
        if decided.any():
            frame["forfeits"] = np.where(decided, n, 0.0)
    if codes.soft:
        frame.update((c, graded[:, j]) for j, c in enumerate(SOFT_COLUMNS))
    return pd.DataFrame(frame, copy=False)


def _code_type(column: str, codes: _Codes, n: int | None = None) -> str:
    """The narrowest SQL integer type of the column's codes (pandas' choice for categoricals;
    ``n``: the categories when not the column's own)."""
    n = len(codes.categories[column]) if n is None else n
    return "TINYINT" if n < 127 else "SMALLINT" if n < 32767 else "INTEGER"


def _rows_sql(relation, codes: _Codes, where: str) -> str:
    """The source rows where ``where`` holds (over :func:`_rules`' columns): file and row (or
    position), reason, and how many such rows there are in all; the first :data:`_SHOWN`."""
    names = relation.columns
    by_file = "filename" in names and "file_row_number" in names
    if by_file:
        rows = (f"SELECT {_keys(codes)}, src.filename AS file__, src.file_row_number AS row__ "
                f"FROM {_keyed(codes)}")  # fmt: skip
    else:  # positions counted before the joins, which need not keep the order
        numbered = "SELECT *, row_number() OVER () - 1 AS row__ FROM src"
        rows = f"SELECT {_keys(codes)}, NULL AS file__, src.row__ FROM {_keyed(codes, numbered)}"
    return (f"SELECT file__ AS file, row__ AS row, reason__ AS reason, count(*) OVER () AS "
            f"total__ FROM ({_rules(codes, rows)}) WHERE {where} "
            f"ORDER BY file__, row__ LIMIT {_SHOWN}")  # fmt: skip


def _raise_rejected(relation, codes: _Codes) -> None:
    """Raise naming the first rejected rows (file and row, or position) with their reasons."""
    found = _run(relation, codes, _rows_sql(relation, codes, "reason__ <> 0"),
                 frame=True)
    n = int(found["total__"].iloc[0])
    found = found.drop(columns="total__")
    found["reason"] = [_REASONS[int(k)] for k in found["reason"]]
    parts = []
    for reason, group in found.groupby("reason", sort=False):
        parts.append(f"{reason} ({_places(found, group)})")
    shown = "" if n <= _SHOWN else f" (the first {_SHOWN} shown)"
    hint = (f"Pass {option('soft', True)} to read `winner` as A's score in [0, 1], fix those "
            "rows," if (found["reason"] == "fractional winner score").any() else "Fix those rows")
    raise InvalidVerdictsError(
        f"{n} verdict row(s) rejected{shown}: {'; '.join(parts)}. {hint} or leave them "
        "out of the relation (rows are numbered from 0 within each file, or by position in the "
        "relation).", rows=found)


def _places(found: pd.DataFrame, group: pd.DataFrame) -> str:
    """``a.parquet rows [3, 7]; b.parquet rows [0]`` or ``rows [3, 7]``."""
    if found["file"].notna().any():
        return "; ".join(f"{os.path.basename(str(f))} rows {format_rows(g['row'])}"
                         for f, g in group.groupby("file", sort=False))  # fmt: skip
    return f"rows {format_rows(group['row'])}"


def _warn_contradicted(relation, codes: _Codes) -> None:
    """Warn, as :func:`ratings.read_verdicts` does, of winners the failure flags override."""
    found = _run(relation, codes, _rows_sql(relation, codes,
                                                   "contradicted__ AND reason__ = 0"), frame=True)
    warnings.warn(
        f"{int(found['total__'].iloc[0])} verdict row(s) name a winner that their failure flags "
        f"contradict, at {_places(found, found)}: a failed submission loses to a rendered one "
        "and two failures tie, so the flags decide these rows. Check the flags or the winners.",
        DataWarning, stacklevel=4)
