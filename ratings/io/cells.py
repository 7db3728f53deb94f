"""The cell and column toolkit shared by every table reader (verdicts, rubrics, registries).

Cells are read the same way whatever the table: :func:`text` strips them and turns the usual
missing-value markers (:data:`NA_TOKENS`) into NaN, :func:`booleans` parses true/false-like
values, and :func:`pick_columns` finds a table's canonical columns (mapped by ``columns=``) with
an error naming what is there. Everything here is vectorised over distinct values, never rows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from pandas.api.types import is_bool_dtype, is_float_dtype

from ratings.core.errors import InvalidVerdictsError, option
from ratings.core.schema import STRING_DTYPE, WINNERS

try:  # optional: cheap construction of the winner column
    import pyarrow as pa
except ImportError:  # pragma: no cover - exercised only without pyarrow
    pa = None

__all__ = [
    "FORMULA_TRIGGERS",
    "NA_TOKENS",
    "booleans",
    "check_columns",
    "distinct",
    "escape_formulas",
    "pick_columns",
    "text",
    "unescape_formulas",
    "winner_labels",
]

#: pandas' default NA markers. Files are read keeping them as text (so a rejected-rows table
#: shows what the file holds); cells holding one (after stripping) are then missing, identically
#: for every format.
NA_TOKENS: frozenset[str] = frozenset((
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
))  # fmt: skip
_TRUE = frozenset({"true", "1", "yes", "t"})
_FALSE = frozenset({"false", "0", "no", "f"})

MissingMessage = Callable[[list[str], list[object]], str]

#: First characters that make a spreadsheet read a CSV cell as a formula (OWASP, "CSV
#: Injection"): ``=``, ``+``, ``-``, ``@``, tab and carriage return.
FORMULA_TRIGGERS = "=+-@\t\r"
# A cell to escape: any number of quotes, then a trigger (quotes included so that the escape is
# undone exactly, see unescape_formulas); an escaped cell: one quote more.
_TO_ESCAPE = r"'*[=+\-@\t\r]"
_ESCAPED = r"'+[=+\-@\t\r]"
# A plain number is not a formula ("-3.5", "+1e-3"): left as it is.
_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_RISKY = re.compile(_TO_ESCAPE)
_PLAIN_NUMBER = re.compile(_NUMBER)


def escape_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """Prefix ``'`` to text cells a spreadsheet would run as a formula (OWASP's advice for CSV
    files opened in spreadsheets); the frame is returned as is when no cell needs it.

    A text cell starting with one of :data:`FORMULA_TRIGGERS` (after any quotes) gets one more
    leading quote: ``=HYPERLINK(...)`` is written ``'=HYPERLINK(...)``, and a spreadsheet shows
    it as the text ``=HYPERLINK(...)``. Numbers are not text: numeric columns are never touched,
    nor are text cells holding a plain number such as ``-12.5``. :func:`unescape_formulas`
    undoes it exactly, so the package reads its own CSV outputs back unchanged.
    """
    out = None
    for i in range(frame.shape[1]):
        values = frame.iloc[:, i]
        if isinstance(values.dtype, pd.CategoricalDtype):
            fixed = _escape(pd.Series(values.cat.categories, dtype=object))
            new = None if fixed is None else values.cat.rename_categories(fixed.tolist())
        else:
            new = _escape(values) if _is_text(values) else None
        if new is not None:
            out = frame.copy() if out is None else out
            out.isetitem(i, new)
    return frame if out is None else out


def _is_text(values: pd.Series) -> bool:
    return values.dtype == object or pd.api.types.is_string_dtype(values.dtype)


def _escape(values: pd.Series) -> pd.Series | None:
    """``values`` with risky text cells escaped, or None when none is."""
    cells = values.astype(object)
    # one pass of compiled patterns (a table's few hundred cells: microseconds, where pandas'
    # string methods cost milliseconds a column); most cells fail on their first character
    hit = [k for k, v in enumerate(cells.to_numpy())
           if isinstance(v, str) and _RISKY.match(v) and not _PLAIN_NUMBER.fullmatch(v)]
    if not hit:
        return None
    out = cells.copy()
    out.iloc[hit] = "'" + cells.iloc[hit].astype(str)
    return out


def unescape_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """Undo :func:`escape_formulas` on a frame of text read from a CSV file: a cell of one or
    more quotes followed by a formula trigger loses one quote. Modified in place and returned."""
    for i in range(frame.shape[1]):
        values = frame.iloc[:, i]
        if not _is_text(values):
            continue
        hit = values.str.match(_ESCAPED).to_numpy(dtype=bool, na_value=False)
        if hit.any():
            fixed = values.copy()
            fixed[hit] = values[hit].str.slice(1)
            frame.isetitem(i, fixed)
    return frame


def text(values: pd.Series) -> pd.Series:
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
        missing = out.isin(NA_TOKENS).to_numpy(dtype=bool)
        return out.mask(missing) if missing.any() else out
    codes, uniques = pd.factorize(values.array)
    stripped = pd.Series(uniques, dtype=STRING_DTYPE).str.strip()
    bad = stripped.isin(NA_TOKENS).to_numpy(dtype=bool)
    if not bad.any() and bool((stripped.array == uniques).all()):
        # arrow arrays are immutable: share; otherwise copy as str.strip would
        return values if getattr(values.dtype, "storage", None) == "pyarrow" else values.copy()
    table = stripped.mask(bad).array
    return pd.Series(table.take(codes, allow_fill=True), index=values.index, name=values.name)


def distinct(values: pd.Series) -> tuple[NDArray[np.intp], list[str | None]]:
    """Factorize, then each distinct value as stripped text (None if missing).

    Low-cardinality columns (winner, flags) are parsed once per distinct value, never per row.
    Numbers read as text the way :func:`text` writes them (1.0 -> "1", True -> "True").
    """
    if isinstance(values.dtype, pd.CategoricalDtype):  # a factorization already (-1: missing)
        codes, uniques = values.array.codes, values.dtype.categories  # codes: a read-only view
    else:
        codes, uniques = pd.factorize(values)  # missing -> -1
    texts: list[str | None] = []
    for u in uniques:
        if isinstance(u, bool | np.bool_):
            t = str(bool(u))
        elif isinstance(u, float | np.floating) and np.isfinite(u) and float(u).is_integer():
            t = str(int(u)) if abs(u) < 2**53 else str(u)
        else:
            t = str(u).strip()
        texts.append(None if t in NA_TOKENS else t)
    return codes, texts


def booleans(values: pd.Series) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Parse boolean-like values; return (value, not boolean-like). Missing is False."""
    codes, texts = distinct(values)
    val = [0 if t is None else 1 if t.lower() in _TRUE else 0 if t.lower() in _FALSE else 2
           for t in texts]  # fmt: skip
    out = np.array([*val, 0], dtype=np.int8)[codes]
    return out == 1, out == 2


def winner_labels(outcome: NDArray[np.int8]) -> pd.api.extensions.ExtensionArray:
    """Outcome codes 0/1/2 as "A"/"B"/"tie" in :data:`STRING_DTYPE`."""
    if pa is not None and getattr(STRING_DTYPE, "storage", None) == "pyarrow":
        labels = pa.DictionaryArray.from_arrays(pa.array(outcome), pa.array(list(WINNERS)))
        return pd.array(labels.cast(pa.large_string()), dtype=STRING_DTYPE)
    return pd.array(np.asarray(WINNERS, dtype=object)[outcome], dtype=STRING_DTYPE)


def check_columns(
    columns: Mapping[str, str] | None, canonical: tuple[str, ...], kind: str = "canonical"
) -> dict[object, str]:
    """Validate ``columns=`` (user name -> one of ``canonical``); return {user name: canonical
    name}. ``kind`` names the canonical columns in messages (e.g. ``"rubric"``)."""
    targets = dict(columns or {})
    for key, value in targets.items():
        if value not in canonical:
            raise ValueError(
                f"{option('columns')} maps {key!r} to {value!r}, which is not a {kind} column. "
                f"{kind.capitalize()} columns: {list(canonical)}."
            )
    seen: dict[str, object] = {}
    for key, value in targets.items():
        if value in seen:
            raise ValueError(
                f"{option('columns')} maps both {seen[value]!r} and {key!r} to {value!r}; map "
                "one column to each canonical name."
            )
        seen[value] = key
    return targets


def pick_columns(
    frame: pd.DataFrame, targets: dict[object, str], prefix: str, *,
    canonical: tuple[str, ...], required: tuple[str, ...], what: str,
    missing_message: MissingMessage,
) -> dict[str, object]:  # fmt: skip
    """Return {canonical name: column label of ``frame``} for the columns present.

    ``targets`` are the user's names for canonical columns (from :func:`check_columns`); other
    canonical columns are found by name, blanks around header names ignored. ``prefix`` starts
    every message (e.g. the file name); ``missing_message(missing, labels)`` words the error
    for absent ``required`` columns; ``what`` names the table in the other messages.
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
            f"{prefix}Column(s) {absent} given in {option('columns')} not found in {what}. "
            f"Available columns: {labels}. Fix the names in {option('columns')}."
        )
    mapped = set(picked.values())
    for canon in canonical:
        label = find(canon)
        if canon not in picked and label is not None and label not in mapped:
            picked[canon] = label

    missing = [c for c in required if c not in picked]
    if missing:
        raise InvalidVerdictsError(prefix + missing_message(missing, labels))
    for canon, label in picked.items():
        if int((frame.columns == label).sum()) > 1:
            raise InvalidVerdictsError(
                f"{prefix}Column {label!r} (for {canon!r}) appears more than once in the "
                f"{what}. Rename or drop the duplicates."
            )
    return {c: picked[c] for c in canonical if c in picked}

