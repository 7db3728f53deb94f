"""Verdicts aggregated with their A/B slots kept, and model families.

The fits aggregate verdicts into ``(judge, i, j)`` rows with ``i < j`` (:mod:`ratings.data`),
which forgets which submission a judge saw first. Judge effects need that order, so this module
aggregates the same verdicts by ``(cluster, judge, model in slot A, model in slot B)`` with
wins of each slot and ties, in a vectorised pass over the categorical codes (one sort of an
integer key, no loop over verdicts). Labels (models, judges, clusters) are those of the
:class:`~ratings.data.Comparisons` the package builds from the same verdicts, so parameters of
both line up; render forfeits are applied as :func:`ratings.aggregate` applies them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.data import Comparisons
from ratings.errors import InvalidVerdictsError, format_rows
from ratings.schema import DETERMINISTIC_JUDGE

__all__ = [
    "Families",
    "SlotCounts",
    "check_families_cover",
    "group_rows",
    "own_matrix",
    "read_families",
    "slot_counts",
]

#: A family table: a CSV path with columns ``name,family``, such a DataFrame, or a mapping.
Families = str | os.PathLike | pd.DataFrame | Mapping[str, str] | None


@dataclass(frozen=True, eq=False)
class SlotCounts:
    """Verdict counts per unique ``(cluster, judge, a, b)``, ``a`` the model in slot A.

    Rows are sorted by cluster. ``clusters`` is ``None`` when verdicts are independent (then
    every row has cluster 0). ``wa``, ``wb`` and ``tt`` are wins of slot A, wins of slot B and
    ties.
    """

    models: pd.Index
    judges: pd.Index
    clusters: pd.Index | None
    cluster: NDArray[np.int64]
    judge: NDArray[np.int64]
    a: NDArray[np.int64]
    b: NDArray[np.int64]
    wa: NDArray[np.float64]
    wb: NDArray[np.float64]
    tt: NDArray[np.float64]

    @property
    def n_rows(self) -> int:
        return int(self.a.size)

    @property
    def n(self) -> NDArray[np.float64]:
        """Verdicts per row."""
        return self.wa + self.wb + self.tt

    @property
    def n_clusters(self) -> int:
        return 1 if self.clusters is None else len(self.clusters)

    @cached_property
    def collapsed(self) -> SlotCounts:
        """The same counts summed over clusters: one row per ``(judge, a, b)`` (computed once)."""
        if self.clusters is None:
            return self
        (judge, a, b), sums = group_rows((self.judge, self.a, self.b), self._sizes()[1:],
                                         (self.wa, self.wb, self.tt))  # fmt: skip
        return SlotCounts(self.models, self.judges, None, np.zeros(judge.size, dtype=np.int64),
                          judge, a, b, *sums)  # fmt: skip

    def _sizes(self) -> tuple[int, int, int, int]:
        m = len(self.models)
        return self.n_clusters, len(self.judges), m, m


def group_rows(keys: tuple, sizes, weights: tuple) -> tuple[tuple, tuple]:
    """Unique rows of the integer ``keys`` (codes below ``sizes``), sorted, and the ``weights``
    summed per row: ``(row keys, sums)``.

    Small key spaces (up to four slots per input row) are counted in a dense table by
    ``np.bincount`` (no sort); larger ones sort a mixed-radix int64 key once, or, beyond int64,
    sort lexicographically.
    """
    n = keys[0].size
    space = float(np.prod([float(s) for s in sizes]))
    if space < 2.0**62:
        key = np.zeros(n, dtype=np.int64)
        for codes, size in zip(keys, sizes, strict=True):
            key = key * np.int64(size) + codes
        if space <= max(4 * n, 1 << 20):
            occupied = np.flatnonzero(np.bincount(key, minlength=int(space)))
            sums = tuple(np.bincount(key, w, int(space))[occupied] for w in weights)
            return np.unravel_index(occupied, tuple(int(s) for s in sizes)), sums
        uniq, inverse = np.unique(key, return_inverse=True)
        sums = tuple(np.bincount(inverse, w, uniq.size) for w in weights)
        return np.unravel_index(uniq, tuple(int(s) for s in sizes)), sums
    order = np.lexsort(keys[::-1])  # pragma: no cover - beyond 4e18 combinations
    stacked = np.column_stack([k[order] for k in keys])
    new = np.ones(n, dtype=bool)
    new[1:] = (stacked[1:] != stacked[:-1]).any(axis=1)
    row = np.empty(n, dtype=np.int64)
    row[order] = np.cumsum(new) - 1
    first = order[new]
    return tuple(k[first] for k in keys), tuple(np.bincount(row, w, first.size) for w in weights)


def _codes(values: pd.Series, labels: pd.Index) -> NDArray[np.int64]:
    """Positions of ``values`` in ``labels`` (-1 where absent), through categorical codes when
    the column is categorical (one lookup per category, not per verdict)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        where = labels.get_indexer(pd.Index(values.cat.categories, dtype=object))
        codes = np.asarray(values.array.codes, dtype=np.int64)
        return np.where(codes >= 0, where[np.maximum(codes, 0)], -1)
    return labels.get_indexer(pd.Index(values.to_numpy(dtype=object), dtype=object))


def _outcome_weights(frame: pd.DataFrame) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """Wins of A, wins of B, ties per input row, and the render-forfeit mask.

    Forfeits as in :func:`ratings.aggregate`: the submission that rendered wins, two failures
    tie (such rows are judge-free).
    """
    if "winner" not in frame.columns:  # a counts table
        arr = frame[["wins_a", "wins_b", "ties"]].to_numpy(dtype=np.float64)
        return arr[:, 0], arr[:, 1], arr[:, 2], np.zeros(len(frame), dtype=bool)
    w = _codes(frame["winner"], pd.Index(["A", "B", "tie"], dtype=object))
    fa = _flag(frame, "failed_a")
    fb = _flag(frame, "failed_b")
    forfeit = fa | fb
    w = np.where(fa & fb, 2, np.where(fa, 1, np.where(fb, 0, w)))
    return ((w == 0).astype(np.float64), (w == 1).astype(np.float64),
            (w == 2).astype(np.float64), forfeit)  # fmt: skip


def _flag(frame: pd.DataFrame, name: str) -> NDArray[np.bool_]:
    if name not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    return frame[name].fillna(False).to_numpy(dtype=bool)


def slot_counts(frame: pd.DataFrame, data: Comparisons) -> SlotCounts:
    """Aggregate ``frame`` (verdicts of one scope, or a counts table) by slots, in the labels of
    ``data`` (the package's aggregation of the same rows)."""
    n = len(frame)
    a = _codes(frame["model_a"], data.models)
    b = _codes(frame["model_b"], data.models)
    if "judge" in frame.columns:
        judge = _codes(frame["judge"], data.judges)
    else:
        judge = np.zeros(n, dtype=np.int64)
    wa, wb, tt, forfeit = _outcome_weights(frame)
    if forfeit.any():
        judge = np.where(forfeit, data.judges.get_loc(DETERMINISTIC_JUDGE), judge)
    if data.clusters is not None:
        cluster = _codes(frame[data.cluster_name], data.clusters)
    else:
        cluster = np.zeros(n, dtype=np.int64)
    bad = (a < 0) | (b < 0) | (judge < 0) | (cluster < 0)
    if bad.any():  # the package's aggregation accepted these rows: a label mismatch
        raise InvalidVerdictsError(
            f"{int(bad.sum())} verdict(s) could not be matched to the fitted labels: rows "
            f"{format_rows(frame.index[bad])}."
        )
    g = 1 if data.clusters is None else len(data.clusters)
    m = len(data.models)
    rows, sums = group_rows((cluster, judge, a, b), (g, len(data.judges), m, m),
                            (wa, wb, tt))  # fmt: skip
    keep = (sums[0] + sums[1] + sums[2]) > 0  # counts rows of zero verdicts carry nothing
    return SlotCounts(data.models, data.judges, data.clusters, *(r[keep] for r in rows),
                      *(s[keep] for s in sums))  # fmt: skip


def read_families(families: Families) -> dict[str, str]:
    """``{name: family}`` from a CSV path (columns ``name,family``), a DataFrame or a mapping.

    Names not listed have no family. A name listed twice with different families, or with an
    empty family, is an error naming the rows.
    """
    if families is None:
        return {}
    if isinstance(families, Mapping):
        return {str(k): str(v) for k, v in families.items() if v is not None and str(v) != ""}
    if isinstance(families, str | os.PathLike):
        path = os.fspath(families)
        if not os.path.exists(path):
            raise FileNotFoundError(f"Families file {path!r} does not exist.")
        try:
            table = pd.read_csv(path, dtype=str, keep_default_na=False)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
            raise InvalidVerdictsError(f"Cannot read families file {path!r}: {err}") from None
        where = f"families file {path!r}"
    elif isinstance(families, pd.DataFrame):
        table, where = families.astype(object), "`families`"
    else:
        raise TypeError(f"`families` must be a CSV path, a DataFrame or a mapping; got "
                        f"{type(families).__name__}.")  # fmt: skip
    missing = [c for c in ("name", "family") if c not in table.columns]
    if missing:
        raise InvalidVerdictsError(
            f"Column(s) {missing} not found in the {where}. Available columns: "
            f"{table.columns.tolist()}. It needs one row per model or judge: name,family."
        )
    name = table["name"].map(lambda v: "" if pd.isna(v) else str(v).strip())
    family = table["family"].map(lambda v: "" if pd.isna(v) else str(v).strip())
    for bad, what in ((name == "", "an empty name"), (family == "", "an empty family")):
        if bad.any():
            raise InvalidVerdictsError(
                f"{int(bad.sum())} row(s) of the {where} have {what}: rows "
                f"{format_rows(np.flatnonzero(bad.to_numpy()))}. Leave names without a family "
                "out of the table.",
                rows=pd.DataFrame({"row": np.flatnonzero(bad.to_numpy()), "reason": what}),
            )
    pairs = pd.DataFrame({"name": name, "family": family}).drop_duplicates()
    clash = pairs["name"].duplicated(keep=False).to_numpy()
    if clash.any():
        rows = np.flatnonzero(name.isin(pairs["name"][clash]).to_numpy())
        raise InvalidVerdictsError(
            f"The {where} gives different families to {sorted(set(pairs['name'][clash]))[:5]} "
            f"(rows {format_rows(rows)}). Give each name one family.",
            rows=pd.DataFrame({"row": rows, "reason": "name with several families"}),
        )
    return dict(zip(pairs["name"], pairs["family"], strict=True))


def check_families_cover(families: Mapping[str, str], names) -> None:
    """Raise when a families table names none of ``names`` (the models and judges of the
    verdicts): most likely the wrong file, or names spelled differently."""
    if families and not set(families) & {str(n) for n in names}:
        raise InvalidVerdictsError(
            f"The families table names none of the models or judges in the verdicts (it names "
            f"{sorted(families)[:5]}; the verdicts have {[str(n) for n in list(names)[:5]]})."
        )


def own_matrix(judges: pd.Index, models: pd.Index, families: Mapping[str, str]
               ) -> NDArray[np.bool_]:  # fmt: skip
    """``own[k, m]``: model ``m`` is of judge ``k``'s family (False when either has none)."""
    fj = pd.Index(judges, dtype=object).map(lambda j: families.get(str(j))).to_numpy(object)
    fm = pd.Index(models, dtype=object).map(lambda m: families.get(str(m))).to_numpy(object)
    has = np.array([f is not None for f in fj])[:, None] & np.array([f is not None for f in fm])
    return has & (fj[:, None] == fm[None, :])
