"""Verdicts aggregated with their A/B slots kept, and model families.

The fits aggregate verdicts into ``(judge, i, j)`` rows with ``i < j``
(:mod:`ratings.data.comparisons`),
which forgets which submission a judge saw first. Judge effects need that order, so this module
aggregates the same verdicts by ``(cluster, judge, model in slot A, model in slot B)`` with
wins of each slot and ties: the categorical codes are mapped once per category (one code per
verdict, no table per cluster), and the kernels of :mod:`ratings.kernels.slots` (or their
NumPy twins) sum them per (judge, a, b) and per cluster in single passes.
Labels (models, judges, clusters) are those of the :class:`~ratings.data.comparisons.Comparisons`
the
package builds from the same verdicts, so parameters of both line up; render forfeits are
applied as :func:`ratings.aggregate` applies them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.errors import InvalidVerdictsError, format_rows
from ratings.core.rows import PairRows
from ratings.core.schema import DETERMINISTIC_JUDGE, require_columns
from ratings.data.comparisons import Comparisons
from ratings.kernels.engine import Engine, kernels

__all__ = [
    "ClusterOrder",
    "Families",
    "SlotCounts",
    "check_families_cover",
    "cluster_order",
    "own_matrix",
    "read_families",
    "slot_counts",
    "verdict_cluster_order",
]

#: A family table: a CSV path with columns ``name,family``, such a DataFrame, or a mapping.
Families = str | os.PathLike | pd.DataFrame | Mapping[str, str] | None


@dataclass(frozen=True, eq=False)
class SlotCounts:
    """Verdicts with their slots, in the package's row layout
    (:class:`ratings.core.rows.PairRows`, :attr:`pairs`) with ``ii`` the model in slot A and
    ``jj`` the one in slot B (so ``wi`` counts wins of slot A): one row per verdict (or counts
    row) of ``(cluster, judge, ii, jj)``, or, as the design with covariates groups them
    (:func:`ratings.models.covariates.design_rows`), per ``(cluster, judge, ii, jj, x)`` with
    the covariate block ``x`` (one row per row, one column per covariate; None until then).

    ``clusters`` is ``None`` when verdicts are independent (then every row has cluster 0).
    :attr:`collapsed` sums the rows per ``(judge, ii, jj)``; per-cluster scores are summed from
    the rows themselves, so no table per (cluster, judge, ii, jj) is ever built. ``order``: when
    the rows are in cluster order (``slot_counts(by_cluster=True)``), row r is input row
    ``order[r]`` (empty: the inputs came in cluster order); ``None`` when rows are inputs.
    ``a``, ``b``, ``wa``, ``wb``: the slots' names of earlier releases for ``ii`` ... ``wj``.
    """

    models: pd.Index
    judges: pd.Index
    clusters: pd.Index | None
    cluster: NDArray[np.int64]
    judge: NDArray[np.int64]
    ii: NDArray[np.int64]
    jj: NDArray[np.int64]
    wi: NDArray[np.float64]
    wj: NDArray[np.float64]
    tt: NDArray[np.float64]
    engine: Engine = "auto"
    order: NDArray[np.int64] | None = None
    x: NDArray[np.float64] | None = None

    a = property(lambda self: self.ii)
    b = property(lambda self: self.jj)
    wa = property(lambda self: self.wi)
    wb = property(lambda self: self.wj)

    @property
    def pairs(self) -> PairRows:
        """The rows without their covariates, as :class:`~ratings.core.rows.PairRows`."""
        return PairRows(self.cluster, self.judge, self.ii, self.jj, self.wi, self.wj, self.tt)

    @property
    def n_models(self) -> int:
        return len(self.models)

    @property
    def n_judges(self) -> int:
        return len(self.judges)

    @property
    def n_rows(self) -> int:
        return int(self.ii.size)

    def by_cluster(self) -> SlotCounts:
        """These rows in cluster order (keeping their order within a cluster), with that order
        in :attr:`order`."""
        if self.order is not None:
            return self
        sorted_by = cluster_order(kernels(self.engine, self.n_rows), self.cluster,
                                  self.n_clusters)  # fmt: skip
        order = sorted_by.order
        if not order.size:
            return replace(self, order=order)
        cols = [np.take(c, order) for c in self.pairs[1:]]
        return replace(self, cluster=sorted_by.cluster, judge=cols[0], ii=cols[1], jj=cols[2],
                       wi=cols[3], wj=cols[4], tt=cols[5], order=order)  # fmt: skip

    @property
    def n(self) -> NDArray[np.float64]:
        """Verdicts per row."""
        return self.wi + self.wj + self.tt

    @property
    def n_clusters(self) -> int:
        return 1 if self.clusters is None else len(self.clusters)

    @cached_property
    def collapsed(self) -> SlotCounts:
        """The counts summed per ``(judge, ii, jj)``, sorted by that key (computed once)."""
        nj, m = len(self.judges), len(self.models)
        # the kernel's dense (judge, a, b) table, unless the board makes it too large
        dense = nj * m * m <= max(4 * self.n_rows, _DENSE_SLOTS)
        k = kernels(self.engine, self.n_rows) if dense else kernels("numpy")
        *rows, _ = k.slot_collapse(*self.pairs[1:], nj, m)
        zeros = np.zeros(rows[0].size, dtype=np.int64)
        return SlotCounts(self.models, self.judges, None, zeros, *rows, self.engine)


#: (judge, a, b) slots up to which the collapse uses the kernel's dense table whatever the
#: number of verdicts (32 MB of row numbers).
_DENSE_SLOTS = 1 << 22


def _codes(values: pd.Series, labels: pd.Index,
           order: NDArray[np.int64] | None = None) -> NDArray[np.int64]:  # fmt: skip
    """Positions of ``values`` in ``labels`` (-1 where absent), through categorical codes when
    the column is categorical (one lookup per category, not per verdict); taken in ``order``
    when given (a categorical's small codes are moved, not the positions)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        where = labels.get_indexer(pd.Index(values.cat.categories, dtype=object))
        codes = _taken(np.asarray(values.array.codes), order)
        if np.array_equal(where, np.arange(where.size)):  # the same labels: the codes
            return codes.astype(np.int64)
        return np.append(where, -1)[codes]  # code -1 (missing) reads the -1 at the end
    return _taken(labels.get_indexer(pd.Index(values.to_numpy(dtype=object), dtype=object)),
                  order)  # fmt: skip


@dataclass(frozen=True, eq=False)
class ClusterOrder:
    """Input rows in cluster order: place t holds row ``order[t]``, row r goes to place
    ``rank[r]`` (both empty when the rows are in cluster order already); ``cluster``: the rows'
    cluster codes in that order."""

    order: NDArray[np.int64]
    rank: NDArray[np.int64]
    cluster: NDArray[np.int64]


def cluster_order(k, cluster: NDArray[np.int64], n_clusters: int) -> ClusterOrder:
    """The cluster order of rows with codes ``cluster``, by kernels ``k``'s counting sort."""
    cluster = np.ascontiguousarray(cluster, dtype=np.int64)
    g = max(n_clusters, 1)
    order, rank = np.empty(cluster.size, dtype=np.int64), np.empty(cluster.size, dtype=np.int64)
    if not k.slot_order(cluster, g, order, rank):
        return ClusterOrder(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), cluster)
    return ClusterOrder(order, rank, np.repeat(np.arange(g), np.bincount(cluster, minlength=g)))


def verdict_cluster_order(frame: pd.DataFrame, data: Comparisons,
                          engine: Engine = "auto") -> ClusterOrder:  # fmt: skip
    """The cluster order of the verdicts of ``frame`` (clusters as ``data`` labels them)."""
    return cluster_order(kernels(engine, len(frame)), _cluster_codes(frame, data),
                         data.n_clusters)  # fmt: skip


def _cluster_codes(frame: pd.DataFrame, data: Comparisons) -> NDArray[np.int64]:
    if data.clusters is None:
        return np.zeros(len(frame), dtype=np.int64)
    return _codes(frame[data.cluster_name], data.clusters)


def _taken(values: NDArray, order: NDArray[np.int64] | None) -> NDArray:
    return values if order is None or not order.size else np.take(values, order)


def _outcome_weights(frame: pd.DataFrame, k, order: NDArray[np.int64] | None = None,
                     ) -> tuple[NDArray, NDArray, NDArray, NDArray]:  # fmt: skip
    """Wins of A, wins of B, ties per input row (taken in ``order`` when given), and the
    render-forfeit mask (kernels ``k``).

    Forfeits as in :func:`ratings.aggregate`: the submission that rendered wins, two failures
    tie (such rows are judge-free).
    """
    if "winner" not in frame.columns:  # a counts table
        arr = _taken(frame[["wins_a", "wins_b", "ties"]].to_numpy(dtype=np.float64), order)
        return arr[:, 0], arr[:, 1], arr[:, 2], np.zeros(len(frame), dtype=bool)
    w = _codes(frame["winner"], pd.Index(["A", "B", "tie"], dtype=object), order)
    out = np.empty(w.size), np.empty(w.size), np.empty(w.size), np.empty(w.size, dtype=bool)
    k.slot_outcomes(w, _flag(frame, "failed_a", order), _flag(frame, "failed_b", order), *out)
    return out


def _flag(frame: pd.DataFrame, name: str,
          order: NDArray[np.int64] | None = None) -> NDArray[np.bool_]:  # fmt: skip
    if name not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    flags = frame[name].fillna(False).to_numpy(dtype=bool)
    return _taken(flags, order) if flags.any() else flags  # none set: alike in any order


def slot_counts(frame: pd.DataFrame, data: Comparisons, engine: Engine = "auto", *,
                by_cluster: bool | ClusterOrder = False) -> SlotCounts:  # fmt: skip
    """The rows of ``frame`` (verdicts of one scope, or a counts table) as slot codes, in the
    labels of ``data`` (the package's aggregation of the same rows); ``engine`` runs the
    kernels of the later passes. ``by_cluster``: the rows in cluster order (a counting sort of
    the row numbers, :func:`ratings.kernels.slots.slot_order`, or the
    :func:`verdict_cluster_order` given, then each column's codes taken in that order), with
    that order in :attr:`SlotCounts.order`."""
    n = len(frame)
    k = kernels(engine, n)
    if by_cluster is True:
        by_cluster = verdict_cluster_order(frame, data, engine)
    order = None
    if isinstance(by_cluster, ClusterOrder):
        order, cluster = by_cluster.order, by_cluster.cluster
    else:
        cluster = _cluster_codes(frame, data)
    a = _codes(frame["model_a"], data.models, order)
    b = _codes(frame["model_b"], data.models, order)
    if "judge" in frame.columns:
        judge = _codes(frame["judge"], data.judges, order)
    else:
        judge = np.zeros(n, dtype=np.int64)
    wa, wb, tt, forfeit = _outcome_weights(frame, k, order)
    if forfeit.any():
        judge = np.where(forfeit, data.judges.get_loc(DETERMINISTIC_JUDGE), judge)
    if k.slot_missing(a, b, judge, cluster):  # the package's aggregation accepted these rows:
        bad = (a < 0) | (b < 0) | (judge < 0) | (cluster < 0)  # a label mismatch
        rows = np.sort(order[bad]) if order is not None and order.size else bad
        raise InvalidVerdictsError(
            f"{int(bad.sum())} verdict(s) could not be matched to the fitted labels: rows "
            f"{format_rows(frame.index[rows])}."
        )
    return SlotCounts(data.models, data.judges, data.clusters, cluster, judge, a, b, wa, wb, tt,
                      engine, order)  # fmt: skip


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
    require_columns(table, ["name", "family"], f"the {where}",
                    hint="It needs one row per model or judge: name,family.")
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
