"""The frozen index registry: each model's headline Elo, frozen once, on a 0-1 index scale.

Ratings move every time a board is refitted (new models, new verdicts, another anchor). A
published index must not: :func:`freeze` records each model the first time it is seen, with its
headline Elo and :func:`index_value`, and never changes that entry afterwards unless the model is
named in ``refreeze``. The registry is a CSV file with the columns of :data:`REGISTRY_COLUMNS`:

============== ==============================================================================
model          the model name (unique)
elo            headline Elo when frozen
lower          lower end of its interval (empty when the ratings table had none)
upper          upper end of its interval (empty when the ratings table had none)
index          ``clip((elo - 500) / 2000, 0, 1)``
frozen_on      ISO date (``YYYY-MM-DD``, UTC by default) of the freeze
source         where the rating came from (e.g. the ratings CSV), may be empty
anchor         the board's anchor model (empty: centred, the board's mean at anchor_rating)
anchor_rating  the anchor's rating: with ``anchor``, the scale of the entry
scopes         the scopes of the headline (empty for a single fit)
weights        their weights, ``scope=w,...``
method         how the board was fitted (``bt``, ``crowd-bt``, ``combined (joint)``, ...)
version        the package version that froze the entry
============== ==============================================================================

Every entry with a recorded scale is on the registry's one scale: :func:`freeze` refuses a
board on another scale (naming both anchors, leaving the registry untouched) unless asked to
convert it. Other columns (notes added by hand) are kept as they are. A registry that fails
validation is never overwritten: fix or restore it first. A registry written before the scale
columns existed loads with a :class:`~ratings.core.errors.DataWarning` and gains them (empty for its
old entries) on the next freeze. Freezes of one registry by several processes run one after the
other (a file lock), and a registry given as a symbolic link is written through the link.
"""

from __future__ import annotations

import datetime as _dt
import os
import warnings
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from ratings.core.deprecation import deprecated_names
from ratings.core.errors import (
    DataWarning,
    InvalidVerdictsError,
    close_matches,
    format_rows,
    option,
)
from ratings.core.schema import STRING_DTYPE, require_columns
from ratings.io.cells import text
from ratings.io.readers import format_of, read_csv, read_file
from ratings.io.writers import file_lock, same_file, write_atomic
from ratings.result import Ratings
from ratings.scopes.scale import Scale, board_info, convert_board, table_scale

__all__ = [
    "INDEX_FLOOR",
    "INDEX_SPAN",
    "REGISTRY_COLUMNS",
    "freeze",
    "freeze_file",
    "index_value",
    "load_registry",
]

_CORE: tuple[str, ...] = ("model", "elo", "lower", "upper", "index", "frozen_on", "source")
_BOARD: tuple[str, ...] = ("anchor", "anchor_rating", "scopes", "weights", "method", "version")
REGISTRY_COLUMNS: tuple[str, ...] = (*_CORE, *_BOARD)
INDEX_FLOOR = 500.0  # Elo at index 0
INDEX_SPAN = 2000.0  # Elo from index 0 to index 1 (index 1 at Elo 2500)
HEADLINE_SCOPE = "combined"
_INDEX_TOL = 1e-6  # |index - index_value(elo)| above this is an inconsistent (edited) entry
_NUMBERS = ("elo", "lower", "upper", "index", "anchor_rating")
_TEXTS = ("model", "frozen_on", "source", "anchor", "scopes", "weights", "method", "version")


def index_value(elo: float | ArrayLike | pd.Series) -> float | NDArray[np.float64] | pd.Series:
    """Map Elo to the 0-1 index: ``clip((elo - 500) / 2000, 0, 1)``.

    Parameters
    ----------
    elo : float, array_like or pandas.Series
        Elo ratings; NaN stays NaN.

    Returns
    -------
    float, numpy.ndarray or pandas.Series
        Same shape (a Series keeps its index, named ``"index"``).

    Examples
    --------
    >>> index_value([400.0, 1500.0, 2600.0]).tolist()
    [0.0, 0.5, 1.0]
    """
    if isinstance(elo, pd.Series):
        values = elo.to_numpy(dtype=np.float64, na_value=np.nan)
        return pd.Series(index_value(values), index=elo.index, name="index")
    out = np.clip((np.asarray(elo, dtype=np.float64) - INDEX_FLOOR) / INDEX_SPAN, 0.0, 1.0)
    return float(out) if out.ndim == 0 else out


def load_registry(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read and validate an index registry CSV.

    Parameters
    ----------
    path : path
        The registry (``.csv``; ``.tsv`` and compressed ``.gz`` / ``.bz2`` / ``.xz`` also work).

    Returns
    -------
    pandas.DataFrame
        :data:`REGISTRY_COLUMNS` (``elo``, ``lower``, ``upper``, ``index``, ``anchor_rating`` as
        float64, NaN when empty; the others as text), then any extra columns of the file, in
        file order.

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    InvalidVerdictsError
        The file is corrupt: unreadable as CSV, a missing column, a missing or duplicate model,
        a non-numeric or missing ``elo`` / ``index``, a non-numeric ``lower`` / ``upper``, an
        ``index`` that does not equal ``index_value(elo)``, a ``frozen_on`` that is not a
        ``YYYY-MM-DD`` date, or entries on different scales. The message names the file, rows
        and values; ``.rows`` lists them.

    Warns
    -----
    DataWarning
        The registry has no scale columns (written by an older version): its entries are read
        with an unknown scale, and the next freeze adds the columns.
    """
    name = os.fspath(path)
    fmt, sep, compression = format_of(os.path.basename(name))
    if fmt != "csv":
        raise ValueError(
            f"The registry must be a CSV file (.csv, or .tsv, optionally .gz/.bz2/.xz); got "
            f"{name!r}."
        )
    if not os.path.exists(name):
        raise FileNotFoundError(
            f"Registry {name!r} not found (looked for {os.path.abspath(name)!r})."
        )
    if os.path.isdir(name):
        raise InvalidVerdictsError(f"Registry {name!r} is a directory, not a CSV file.")
    if os.path.getsize(name) == 0:
        raise InvalidVerdictsError(
            f"Registry {name!r} is corrupt: the file is empty (0 bytes; a registry has at least "
            f"the header {','.join(REGISTRY_COLUMNS)}). {_UNTOUCHED}"
        )
    try:
        frame = read_csv(name, sep or ",", compression)
    except InvalidVerdictsError as exc:
        raise InvalidVerdictsError(
            f"Registry {name!r} is corrupt: it cannot be read as CSV ({exc}). {_UNTOUCHED}"
        ) from exc
    return _validate_registry(frame, name)


def freeze(
    ratings_table: pd.DataFrame | Ratings,
    registry_path: str | os.PathLike[str],
    *,
    date: str | None = None,
    refreeze: Sequence[str] = (),
    source: str | None = None,
    inputs: Iterable[str | os.PathLike[str]] = (),
    csv_escape: bool = True,
    scale: str | None = None,
    convert: bool = False,
) -> pd.DataFrame:
    """Add the models of a ratings table to the index registry; never change existing entries.

    Parameters
    ----------
    ratings_table : pandas.DataFrame or Ratings
        One row per model with at least ``model`` and ``elo`` (the headline Elo, e.g. the
        combined table), optionally ``lower`` and ``upper``, and the board columns
        (``anchor``, ``anchor_rating``, ``method``, ``scopes``, ``weights``) that tables
        written by ``ratings fit --out`` / ``ratings combine --out`` carry; or a
        :class:`~ratings.Ratings` (a fit or a combined headline), which knows them. Not
        modified.
    registry_path : path
        The registry CSV; created if missing. A symbolic link is written through.
    date : str, optional
        ``YYYY-MM-DD`` recorded as ``frozen_on`` for new and refrozen entries; default today's
        date in UTC.
    refreeze : sequence of str, default=()
        Models whose entry is replaced by the current rating (and ``frozen_on`` by ``date``).
        Each must be in ``ratings_table``. A single string is one model name.
    source : str, optional
        Recorded in the ``source`` column of new and refrozen entries.
    inputs : iterable of path, default=()
        Files the ratings came from; the registry must not be one of them.
    csv_escape : bool, default=True
        Prefix ``'`` to text cells a spreadsheet would run as formulas (a model named
        ``=HYPERLINK(...)``); :func:`load_registry` reads them back unchanged.
    scale : str, optional
        ``"NAME=RATING"`` (``"mean=1000"``: centred): the board's scale, for a table that does
        not record it. A table that records another scale is an error.
    convert : bool, default=False
        A board on another scale than the registry is shifted onto the registry's scale (the
        registry's anchor model must be on the board: every Elo moves by the registry's rating
        minus that model's board Elo). Its intervals, which are relative to the board's own
        anchor, are not carried over (``lower`` / ``upper`` stay empty); ``source`` says
        "converted from ...".

    Returns
    -------
    pandas.DataFrame
        The registry after the freeze, as :func:`load_registry` returns it: existing entries in
        their order (refrozen ones in place), then new models in ``ratings_table`` order.

    Raises
    ------
    InvalidVerdictsError
        The registry is corrupt (see :func:`load_registry`; the file is left untouched), or the
        ratings table lacks ``model`` / ``elo``, has a missing or duplicate model, or a
        non-numeric Elo.
    ValueError
        A ``refreeze`` name is not in the ratings table, ``date`` is not ``YYYY-MM-DD``, the
        registry is one of ``inputs``, or the board is on another scale than the registry
        (both anchors named; nothing is written) and ``convert`` is off, or its scale is
        unknown (no board columns and no ``scale``) while the registry records one.

    Notes
    -----
    The file is written with :func:`ratings.io.write_atomic` (a temporary file, then a rename):
    a failure leaves the previous registry intact. The read, the checks and the write hold an
    exclusive lock (:func:`ratings.io.file_lock`), so concurrent freezes of one registry run
    one after the other and none loses another's models. When no model is new and none is
    refrozen the file is not rewritten. ``index = clip((elo - 500) / 2000, 0, 1)``
    (:func:`index_value`).

    Examples
    --------
    >>> import pandas as pd, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "registry.csv")
    >>> reg = freeze(pd.DataFrame({"model": ["x"], "elo": [1500.0]}), path, date="2026-01-31")
    >>> reg[["model", "elo", "index", "frozen_on"]].values.tolist()
    [['x', 1500.0, 0.5, '2026-01-31']]
    >>> reg = freeze(pd.DataFrame({"model": ["x"], "elo": [1700.0]}), path)  # frozen: unchanged
    >>> float(reg["elo"].iloc[0])
    1500.0
    """
    registry = os.fspath(registry_path)
    inputs = [os.fspath(i) for i in inputs if i is not None]
    for item in inputs:
        if same_file(registry, item):
            raise ValueError(
                f"Refusing to write the registry {registry!r}: it is the input file "
                f"{item!r}. Pass another registry path."
            )
    day = _check_date(date)
    names = [refreeze] if isinstance(refreeze, str) else [str(n) for n in refreeze]
    if isinstance(ratings_table, Ratings):
        ratings_table = ratings_table.to_frame().assign(**board_info(ratings_table))
    _headline(ratings_table, day=day, source=source)  # the table's own checks come first
    board = _board_scale(ratings_table, scale)
    with file_lock(registry):
        exists = os.path.exists(registry)
        reg = load_registry(registry) if exists else _empty_registry()
        kept = table_scale(reg, f"Registry {registry!r}")
        table, note = ratings_table, ""
        if kept is not None and (board is None or not board.same(kept)):
            table, note = convert_board(ratings_table, board, kept, registry, convert=convert)
            board = kept
        fresh = _headline(table, day=day, source=source, board=board, note=note)
        unknown = [n for n in names if n not in set(fresh["model"])]
        if unknown:
            raise ValueError(
                f"{option('refreeze')} names {unknown!r}, not in the ratings table, so they have "
                f"no rating to freeze. {close_matches(unknown[0], fresh['model'])}"
            )
        return _merge_and_write(reg, fresh, names, exists, registry, inputs, csv_escape)


def _board_scale(table: pd.DataFrame, scale: str | Scale | None) -> Scale | None:
    """The scale the table records, or ``scale`` when it records none (both: they must agree)."""
    recorded = table_scale(table)
    given = Scale.parse(scale) if isinstance(scale, str) else scale
    if recorded is not None and given is not None and not recorded.same(given):
        raise ValueError(
            f"{option('scale')} says the board is {given}, but the ratings table records "
            f"{recorded}. Drop {option('scale')}: the table's own record is used."
        )
    return recorded if recorded is not None else given


def _merge_and_write(reg: pd.DataFrame, fresh: pd.DataFrame, names: list[str], exists: bool,
                     registry: str, inputs: list[str],
                     csv_escape: bool) -> pd.DataFrame:  # fmt: skip
    """Add new models and replace refrozen ones; write the registry unless nothing changed."""
    extras = [c for c in reg.columns if c not in REGISTRY_COLUMNS]
    where = pd.Index(reg["model"]).get_indexer(fresh["model"])  # -1: not in the registry
    take = fresh[(where < 0) | fresh["model"].isin(names).to_numpy(dtype=bool)]
    if exists and len(take) == 0:
        return reg
    pos = pd.Index(reg["model"]).get_indexer(take["model"]).astype(np.float64)
    new = pos < 0
    pos[new] = len(reg) + np.arange(int(new.sum()))
    if extras:  # hand-added notes of a refrozen model stay with it
        take = take.merge(reg[["model", *extras]], on="model", how="left")
    take = take.assign(_pos=pos)
    taken = reg["model"].isin(take["model"]).to_numpy(dtype=bool)
    keep = reg[~taken].assign(_pos=np.flatnonzero(~taken))
    parts = [p for p in (keep, take) if len(p)]
    out = (pd.concat(parts, ignore_index=True).sort_values("_pos", kind="stable")
           .drop(columns="_pos").reset_index(drop=True)[[*REGISTRY_COLUMNS, *extras]])  # fmt: skip
    write_atomic(out, registry, inputs=inputs, csv_escape=csv_escape)
    return out


def freeze_file(
    ratings_csv: str,
    registry: str,
    *,
    refreeze: Sequence[str] = (),
    date: str | None = None,
    csv_escape: bool = True,
    scale: str | None = None,
    convert: bool = False,
) -> pd.DataFrame:
    """Freeze the headline ratings of a saved ratings CSV into the registry (what
    ``ratings freeze`` runs).

    Parameters
    ----------
    ratings_csv : str
        A ratings table as written by ``ratings fit --out FILE.csv`` (or the combined table).
        If it has a ``scope`` column with several scopes, the rows with scope ``"combined"``
        are used; without them it is an error.
    registry : str
        The registry CSV (created if missing; never the same file as ``ratings_csv``).
    refreeze : sequence of str, default=()
        Models whose entry is replaced (see :func:`freeze`).
    date : str, optional
        ``YYYY-MM-DD``; default today's UTC date.
    csv_escape : bool, default=True
        See :func:`freeze`.
    scale, convert
        See :func:`freeze` (CLI ``--scale``, ``--convert``).

    Returns
    -------
    pandas.DataFrame
        The registry after the freeze. Nothing is printed. ``source`` of new entries is
        ``ratings_csv`` as given.

    Raises
    ------
    FileNotFoundError
        ``ratings_csv`` does not exist.
    InvalidVerdictsError
        ``ratings_csv`` cannot be read or mixes scopes without a ``"combined"`` one, or the
        registry is corrupt (left untouched).
    ValueError
        See :func:`freeze`.
    """
    name = os.fspath(ratings_csv)
    if format_of(os.path.basename(name))[0] != "csv":
        raise ValueError(
            f"The ratings table must be a CSV file (as written by `ratings fit --out "
            f"FILE.csv`); got {name!r}."
        )
    if not os.path.exists(name):
        raise FileNotFoundError(
            f"Ratings table {name!r} not found (looked for {os.path.abspath(name)!r})."
        )
    try:
        table = read_file(name, "csv")
    except InvalidVerdictsError as exc:
        raise InvalidVerdictsError(f"Ratings table {name!r} cannot be read: {exc}") from exc
    if "scope" in table.columns:
        scope = text(table["scope"])
        scopes = sorted(scope.dropna().unique().tolist())
        if len(scopes) > 1:
            if HEADLINE_SCOPE not in scopes:
                raise InvalidVerdictsError(
                    f"{name!r} holds ratings of {len(scopes)} scopes {scopes[:8]!r} and no "
                    f"{HEADLINE_SCOPE!r} rows; the registry freezes one headline rating per "
                    "model. Pass the combined headline table (scope 'combined', from `ratings "
                    "combine`) or a table of a single scope."
                )
            table = table[(scope == HEADLINE_SCOPE).to_numpy(dtype=bool, na_value=False)]
    return freeze(table, registry, refreeze=refreeze, date=date, source=name, inputs=[name],
                  csv_escape=csv_escape, scale=scale, convert=convert)  # fmt: skip


# ----------------------------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------------------------

_UNTOUCHED = (
    "The registry was left unchanged; fix the file (or restore it from a backup or version "
    "control) and run again, or move it away to start a new registry."
)


def _check_date(date: str | _dt.date | None) -> str:
    """``date`` as ``YYYY-MM-DD`` (default today's UTC date)."""
    if date is None:
        return _dt.datetime.now(_dt.UTC).date().isoformat()
    if isinstance(date, _dt.datetime):
        return date.date().isoformat()
    if isinstance(date, _dt.date):
        return date.isoformat()
    day = str(date).strip()
    try:
        ok = len(day) == 10 and _dt.date.fromisoformat(day).isoformat() == day
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"{option('date')} must be an ISO date 'YYYY-MM-DD'; got {date!r}.")
    return day


def _empty_registry() -> pd.DataFrame:
    return pd.DataFrame({
        c: pd.Series([], dtype=np.float64 if c in _NUMBERS else STRING_DTYPE)
        for c in REGISTRY_COLUMNS
    })  # fmt: skip


def _numbers(values: pd.Series) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Parse numbers; return (values with NaN where missing or bad, not numeric)."""
    missing = text(values).isna().to_numpy(dtype=bool)
    num = pd.to_numeric(values.where(~missing), errors="coerce")
    x = np.asarray(num, dtype=np.float64)
    return x, np.isnan(x) & ~missing


def _headline(table: pd.DataFrame, *, day: str, source: str | None, board: Scale | None = None,
              note: str = "") -> pd.DataFrame:  # fmt: skip
    """Validate the ratings table; return fresh registry rows for every model in it (with the
    board's scale, how it was made, and this package's version)."""
    if not isinstance(table, pd.DataFrame):
        raise TypeError(
            f"`ratings_table` must be a pandas DataFrame (e.g. `ratings.fit(...).to_frame()`); "
            f"got {type(table).__name__!r}."
        )
    require_columns(table, ["model", "elo"], "the ratings table", hint="Pass the table written "
                    "by `ratings fit --out` or the combined headline table (columns model, elo "
                    "and optionally lower, upper).")  # fmt: skip
    if len(table) == 0:
        raise InvalidVerdictsError("The ratings table is empty: no model to freeze.")
    model = text(table["model"].reset_index(drop=True))
    elo, _ = _numbers(table["elo"].reset_index(drop=True))
    bounds = {}
    problems = [
        ("missing model", model.isna().to_numpy(dtype=bool), None),
        ("duplicate model", model.duplicated(keep=False).to_numpy(dtype=bool)
         & model.notna().to_numpy(dtype=bool), "model"),
        ("elo is not a finite number", ~np.isfinite(elo), "elo"),
    ]  # fmt: skip
    for c in ("lower", "upper"):
        if c in table.columns:
            bounds[c], bad = _numbers(table[c].reset_index(drop=True))
            problems.append((f"{c} is not a number", bad, c))
        else:
            bounds[c] = np.full(len(table), np.nan)
    raw = {c: table[c].reset_index(drop=True) for c in ("model", "elo", "lower", "upper")
           if c in table.columns}  # fmt: skip
    _raise_rows(problems, raw, "The ratings table",
                "Pass one row per model with a finite Elo: the headline (combined) table, not a "
                "table of several scopes.")  # fmt: skip
    n = len(table)
    from ratings.core.version import __version__

    made = {c: _first_text(table, c) for c in ("scopes", "weights", "method")}
    source = None if source is None and not note else f"{source or ''}{note}"

    def constant(value: str | None) -> pd.api.extensions.ExtensionArray:
        return pd.array([value if value else np.nan] * n, dtype=STRING_DTYPE)

    return pd.DataFrame({
        "model": model.array,
        "elo": elo,
        "lower": bounds["lower"],
        "upper": bounds["upper"],
        "index": index_value(elo),
        "frozen_on": constant(day),
        "source": constant(source),
        "anchor": constant(board.anchor if board is not None else None),
        "anchor_rating": np.full(n, board.rating if board is not None else np.nan),
        **{c: constant(v) for c, v in made.items()},
        "version": constant(__version__),
    })[list(REGISTRY_COLUMNS)]  # fmt: skip


def _first_text(table: pd.DataFrame, column: str) -> str | None:
    """The first non-empty value of a board column (the same on every row), or None."""
    if column not in table.columns:
        return None
    values = text(table[column]).dropna()
    return str(values.iloc[0]) if len(values) else None


def _validate_registry(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    """Check a registry read as text; return it typed, or raise naming the problem and file."""
    require_columns(frame, _CORE, "the registry", prefix=f"Registry {name!r} is corrupt: ",
                    hint=f"A registry has {list(REGISTRY_COLUMNS)}. {_UNTOUCHED}")
    old = [c for c in _BOARD if c not in frame.columns]
    if old:
        frame = frame.assign(**{c: pd.Series(pd.NA, index=frame.index, dtype=STRING_DTYPE)
                                for c in old})  # fmt: skip
    twice = frame.columns[frame.columns.duplicated()].tolist()
    if twice:
        raise InvalidVerdictsError(
            f"Registry {name!r} is corrupt: column(s) {twice} appear more than once. {_UNTOUCHED}"
        )
    raw = {c: frame[c].reset_index(drop=True) for c in frame.columns}
    model = text(raw["model"])
    num = {c: _numbers(raw[c]) for c in _NUMBERS}
    elo, index = num["elo"][0], num["index"][0]
    day = text(raw["frozen_on"])
    valid_day = day.str.fullmatch(r"\d{4}-\d{2}-\d{2}").to_numpy(dtype=bool, na_value=False)
    parsed = pd.to_datetime(day.where(valid_day), format="%Y-%m-%d", errors="coerce")
    valid_day = valid_day & ~np.asarray(pd.isna(parsed), dtype=bool)
    with np.errstate(invalid="ignore"):
        off = np.abs(index - np.asarray(index_value(elo), dtype=np.float64)) > _INDEX_TOL
    present = model.notna().to_numpy(dtype=bool)
    lower, upper, rating = num["lower"][0], num["upper"][0], num["anchor_rating"][0]
    anchor = text(raw["anchor"])
    with np.errstate(invalid="ignore"):
        below = lower > elo  # NaN (an empty bound) compares False
        above = upper < elo
        outside = (index < 0.0) | (index > 1.0)
        off_anchor = ((model == anchor).to_numpy(dtype=bool, na_value=False)
                      & ~(np.abs(elo - rating) <= _INDEX_TOL * np.maximum(1.0, np.abs(rating))))
    problems = [
        ("missing model", ~present, None),
        ("duplicate model", model.duplicated(keep=False).to_numpy(dtype=bool) & present,
         "model"),
        ("elo is not a number", num["elo"][1], "elo"),
        ("missing elo", np.isnan(elo) & ~num["elo"][1], None),
        ("elo is not finite", np.isinf(elo), "elo"),
        ("index is not a number", num["index"][1], "index"),
        ("missing index", np.isnan(index) & ~num["index"][1], None),
        ("lower is not a number", num["lower"][1], "lower"),
        ("upper is not a number", num["upper"][1], "upper"),
        ("anchor_rating is not a number", num["anchor_rating"][1], "anchor_rating"),
        ("anchor_rating is not finite", np.isinf(rating), "anchor_rating"),
        ("index outside [0, 1]", outside, "index"),
        ("index inconsistent with elo: (elo, index) must satisfy index = "
         "clip((elo - 500) / 2000, 0, 1)", off, ("elo", "index")),
        ("lower above elo (lower <= elo <= upper)", below, ("lower", "elo", "upper")),
        ("upper below elo (lower <= elo <= upper)", above, ("lower", "elo", "upper")),
        ("the board's anchor off its anchor_rating (the anchor model's elo is the rating its "
         "board pins it at)", off_anchor, ("model", "elo", "anchor_rating")),
        ("frozen_on is not a YYYY-MM-DD date", ~valid_day, "frozen_on"),
    ]  # fmt: skip
    _raise_rows(problems, raw, f"Registry {name!r} is corrupt",
                "The entries were edited or damaged. " + _UNTOUCHED, lines=True)  # fmt: skip
    out = pd.DataFrame({
        "model": model.array,
        **{c: num[c][0] for c in ("elo", "lower", "upper", "index")},
        "frozen_on": day.array,
        **{c: text(raw[c]).array for c in ("source", "anchor")},
        "anchor_rating": num["anchor_rating"][0],
        **{c: text(raw[c]).array for c in ("scopes", "weights", "method", "version")},
        **{c: text(raw[c]).array for c in frame.columns if c not in REGISTRY_COLUMNS},
    })  # fmt: skip
    table_scale(out, f"Registry {name!r} is corrupt: it")  # entries on one scale only
    if old:  # valid, but from before the scale columns: say so once it is known to be usable
        warnings.warn(
            f"Registry {name!r} has no column(s) {old}: it was written before registries "
            "recorded their scale (anchor and rating), scopes, weights, method and version. Its "
            f"{len(out)} entries are read with an unknown scale; the next freeze adds the "
            "columns (empty for these entries) and records the scale of the boards it freezes.",
            DataWarning,
            stacklevel=4,
        )
    return out


def _raise_rows(
    problems: list[tuple[str, NDArray[np.bool_], str | tuple[str, ...] | None]],
    raw: dict[str, pd.Series],
    what: str,
    fix: str,
    *,
    lines: bool = False,
) -> None:
    """Raise InvalidVerdictsError if any row has a problem (each row gets its first one);
    rows are 0-based data rows, with ``lines`` also their lines in the file (the header is
    line 1)."""
    n = len(next(iter(raw.values())))
    reason = np.zeros(n, dtype=np.int16)
    for code, (_, mask, _) in enumerate(problems, start=1):
        reason[(reason == 0) & np.asarray(mask, dtype=bool)] = code
    bad = np.flatnonzero(reason)
    if bad.size == 0:
        return
    kinds = reason[bad]
    parts = []
    for k in pd.unique(kinds):  # one entry per kind of problem
        rows = bad[kinds == k]
        kind, column = problems[k - 1][0], problems[k - 1][2]
        where = f"rows {format_rows(rows)}"
        if isinstance(column, tuple):  # show the values that disagree together
            first = rows[:5]
            shown = list(zip(*(raw[c].iloc[first].tolist() for c in column), strict=True))
            where = f"e.g. {shown!r} at {where}"
        elif column is not None:
            shown = raw[column].iloc[rows].drop_duplicates().head(5).tolist()
            where = f"e.g. {shown!r} at {where}"
        parts.append(f"{rows.size} with {kind} ({where})")
    table = pd.DataFrame({
        "row": bad.astype(np.int64),
        "reason": np.asarray([p[0] for p in problems], dtype=object)[kinds - 1],
        **{c: s.iloc[bad].to_numpy() for c, s in raw.items()},
    })  # fmt: skip
    where = (f" Rows count data rows from 0: in the file they are lines {format_rows(bad + 2)} "
             "(the header is line 1)." if lines else "")  # fmt: skip
    raise InvalidVerdictsError(
        f"{what}: {bad.size} row(s) unusable: {'; '.join(parts)}.{where} {fix}", rows=table
    )


__getattr__ = deprecated_names(__name__, {
    "freeze_cli": ("ratings.scopes.registry.freeze_file", lambda: freeze_file)})
