"""Encode verdicts once and collapse them into sufficient statistics.

A verdict log of N rows becomes R unique ``(cluster, judge, i, j)`` rows with three counts each:
wins of i, wins of j and ties (one tie is one observation with outcome 1/2, never two half rows,
so per-verdict robust variances count it once). Every later computation costs O(R), not O(N).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.arrays import frozen, run_starts, run_sums
from ratings.core.errors import InvalidVerdictsError, option
from ratings.core.rows import (
    AggregatedRows,
    CollapsedRows,
    PairRows,
    VerdictCodes,
    summed_rows,
)
from ratings.core.schema import DEFAULT_JUDGE, DETERMINISTIC_JUDGE, require_columns
from ratings.data.counts import check_counts, counts_as_floats, reject_rows
from ratings.kernels.engine import Engine, kernels

__all__ = ["COUNT_COLUMNS", "Comparisons", "aggregate", "from_counts", "is_counts_frame"]

_DENSE_SLOTS = 25_000_000  # models^2 up to which aggregation uses a dense pair table (200 MB)


def _frozen_rows(rows: PairRows) -> PairRows:
    """``rows`` as read-only, C-contiguous arrays (the per-cluster rows of a
    :class:`Comparisons`)."""
    return PairRows(*(frozen(a, np.int64) for a in rows[:4]),
                    *(frozen(a, np.float64) for a in rows[4:]))  # fmt: skip


@dataclass(frozen=True, eq=False, init=False)
class Comparisons:
    """Aggregated pairwise comparisons: one row per unique (cluster, judge, i, j), ``i < j``.

    Rows are sorted by cluster: cluster ``c`` owns rows ``cluster_starts[c]:cluster_starts[c+1]``.
    A clustered log from :func:`aggregate` usually keeps its verdict codes instead
    (:attr:`keeps_codes`): the fit's rows (:meth:`collapsed`) and the clusters' summed scores
    (:meth:`cluster_score_matrix`) come straight from them, and the per-cluster rows are built
    the first time one of ``ii`` ... ``tt`` is read (bootstrap resampling, :meth:`subset`, ...).

    Attributes
    ----------
    models, judges : pandas.Index
        Labels of the codes in ``ii``/``jj`` and ``judge``.
    clusters : pandas.Index or None
        Labels of the codes in ``cluster``; ``None`` when verdicts are independent (one cluster
        per verdict, which needs no labels: the per-verdict sandwich uses row sums of squares).
    cluster_name : str or None
        The verdict column the clusters came from (e.g. ``"task_id"``).
    ii, jj, judge, cluster : ndarray of int64, shape (R,)
    wi, wj, tt : ndarray of float64, shape (R,)
        Wins of ``ii``, wins of ``jj`` and ties (the row layout
        :class:`~ratings.core.rows.PairRows`).
    """

    models: pd.Index
    judges: pd.Index
    clusters: pd.Index | None
    cluster_name: str | None
    # A log that kept its verdict codes (see _KeptCodes): the codes, and its fit's rows.
    _kept: _KeptCodes | None = field(default=None, repr=False)
    # The rows summed over clusters, once computed (see collapsed(); it takes the kernels).
    _collapsed: Comparisons | None = field(default=None, repr=False)
    # Render forfeits per model (rows with failed_a or failed_b), when the log flagged any.
    _forfeits: NDArray[np.int64] | None = field(default=None, repr=False)

    def __init__(self, models: pd.Index, judges: pd.Index, clusters: pd.Index | None,
                 cluster_name: str | None, ii, jj, judge, cluster, wi, wj, tt) -> None:  # fmt: skip
        self._set_labels(models, judges, clusters, cluster_name)
        rows = PairRows(cluster=cluster, judge=judge, ii=ii, jj=jj, wi=wi, wj=wj, tt=tt)
        self.__dict__["_rows"] = _frozen_rows(rows)  # already known

    @classmethod
    def of_rows(cls, models: pd.Index, judges: pd.Index, clusters: pd.Index | None,
                cluster_name: str | None, rows: PairRows) -> Comparisons:  # fmt: skip
        """Comparisons of ``rows`` (:class:`~ratings.core.rows.PairRows`) with their labels."""
        return cls(models, judges, clusters, cluster_name, ii=rows.ii, jj=rows.jj,
                   judge=rows.judge, cluster=rows.cluster, wi=rows.wi, wj=rows.wj, tt=rows.tt)

    def _set_labels(self, models, judges, clusters, cluster_name) -> None:
        for name, value in (("models", models), ("judges", judges), ("clusters", clusters),
                            ("cluster_name", cluster_name)):  # fmt: skip
            object.__setattr__(self, name, value)

    @classmethod
    def _keeping_codes(cls, models, judges, clusters, cluster_name, collapsed: Comparisons,
                       kept: _KeptCodes) -> Comparisons:  # fmt: skip
        """Comparisons whose per-cluster rows stay unbuilt until read: ``collapsed`` are the
        fit's rows (summed over clusters), ``kept`` the verdict codes they came from."""
        out = cls.__new__(cls)
        out._set_labels(models, judges, clusters, cluster_name)
        object.__setattr__(out, "_kept", kept)
        object.__setattr__(out, "_collapsed", collapsed)
        return out

    @cached_property
    def _rows(self) -> PairRows:
        """The per-cluster rows; given to the constructor, or built here from the kept codes."""
        return self._kept.rows()

    # The per-cluster rows, by column (building them first when the codes were kept).
    ii = property(lambda self: self._rows.ii, doc="Model code i of each row, int64[R].")
    jj = property(lambda self: self._rows.jj, doc="Model code j > i of each row, int64[R].")
    judge = property(lambda self: self._rows.judge, doc="Judge code of each row, int64[R].")
    cluster = property(lambda self: self._rows.cluster, doc="Cluster code of each row.")
    wi = property(lambda self: self._rows.wi, doc="Wins of i in each row, float64[R].")
    wj = property(lambda self: self._rows.wj, doc="Wins of j in each row, float64[R].")
    tt = property(lambda self: self._rows.tt, doc="Ties in each row, float64[R].")

    @property
    def keeps_codes(self) -> bool:
        """True while the per-cluster rows are unbuilt (the verdict codes serve instead)."""
        return self._kept is not None and "_rows" not in self.__dict__

    def cluster_score_matrix(self, n_params: int, row_scores, k,
                             slot: NDArray[np.int64] | None = None) -> NDArray[np.float64]:
        """Summed score of each cluster, shape (G, P).

        Row c is the sum over the cluster's verdicts of each verdict's score. ``row_scores(rows,
        wi, wj, tt) -> (score_d, score_eta)`` gives the summed scores of ``rows`` (a
        Comparisons) with those counts, w.r.t. d = theta_i - theta_j and, unless ``score_eta``
        is None, the row's slot's parameter ``n_models + slot`` (by default the row's judge's:
        Crowd-BT's eta; ``slot`` per row of these rows otherwise). ``k`` is the kernel module.
        A log that kept its verdict codes is summed from them (scores of one verdict of each
        outcome per (judge, i, j) row, looked up per verdict) without building its per-cluster
        rows, unless ``slot`` is given.
        """
        g = self.n_clusters
        if not self.keeps_codes or slot is not None:
            score_d, score_eta = row_scores(self, self.wi, self.wj, self.tt)
            score_eta = np.zeros(0) if score_eta is None else score_eta
            return k.cluster_scores(g, n_params, self.ii, self.jj,
                                    self.judge if slot is None else slot, self.cluster,
                                    score_d, score_eta, self.n_models)  # fmt: skip
        rows = self._collapsed
        r = rows.n_rows
        one, zero = np.ones(r), np.zeros(r)
        parts = [row_scores(rows, *counts)
                 for counts in ((one, zero, zero), (zero, one, zero), (zero, zero, one))]
        tab_d = np.column_stack([sd for sd, _ in parts]).ravel()  # [3 r + outcome]
        tab_e = (np.zeros(0) if parts[0][1] is None
                 else np.column_stack([se for _, se in parts]).ravel())  # fmt: skip
        return self._kept.cluster_scores(k, tab_d, tab_e)

    @property
    def n_models(self) -> int:
        return len(self.models)

    @property
    def n_rows(self) -> int:
        return int(self.ii.size)

    @property
    def n_verdicts(self) -> int:
        rows = self._collapsed if self._kept is not None else self
        return round(float(rows.wi.sum() + rows.wj.sum() + rows.tt.sum()))

    @property
    def n_clusters(self) -> int:
        return len(self.clusters) if self.clusters is not None else self.n_verdicts

    @property
    def cluster_starts(self) -> NDArray[np.int64]:
        """Row offsets of each cluster, shape (G + 1,)."""
        g = len(self.clusters) if self.clusters is not None else 1
        return np.searchsorted(self.cluster, np.arange(g + 1)).astype(np.int64)

    def model_counts(self) -> pd.DataFrame:
        """Per model: ``n_matches``, ``wins``, ``losses``, ``ties`` (ties count once each side)
        and ``forfeits`` (matches decided by a render failure, already in ``n_matches``).

        Computed once per object; do not modify the returned table.
        """
        return self._model_counts

    @cached_property
    def _model_counts(self) -> pd.DataFrame:
        m = self.n_models
        r = self._collapsed if self._kept is not None else self  # the same totals
        (wi_i, wj_i, tt_i), (wi_j, wj_j, tt_j) = (_sums_by(codes, (r.wi, r.wj, r.tt), m)
                                                  for codes in (r.ii, r.jj))  # fmt: skip
        wins, losses, ties = (np.rint(a + b).astype(np.int64)
                              for a, b in ((wi_i, wj_j), (wj_i, wi_j), (tt_i, tt_j)))  # fmt: skip
        forfeits = np.zeros(m, dtype=np.int64) if self._forfeits is None else self._forfeits
        return pd.DataFrame({"n_matches": wins + losses + ties, "wins": wins, "losses": losses,
                             "ties": ties, "forfeits": forfeits}, index=self.models)  # fmt: skip

    def _set_forfeits(self, per_model: NDArray[np.int64]) -> None:
        """Record each model's render forfeits, here and on the fit's rows (before any
        :meth:`model_counts`)."""
        for target in (self, self._collapsed):
            if target is not None:
                object.__setattr__(target, "_forfeits", per_model)
                target.__dict__.pop("_model_counts", None)

    def subset(self, mask: NDArray[np.bool_]) -> Comparisons:
        """Keep the rows where ``mask`` is true (labels and codes unchanged)."""
        return Comparisons(
            self.models, self.judges, self.clusters, self.cluster_name,
            self.ii[mask], self.jj[mask], self.judge[mask], self.cluster[mask],
            self.wi[mask], self.wj[mask], self.tt[mask],
        )  # fmt: skip

    def collapsed(self, *, engine: Engine = "auto") -> Comparisons:
        """The same likelihood on fewer rows: counts summed over clusters, per (judge, i, j).

        Fits run on these rows; only the clustered meat needs the per-cluster rows. Computed
        once, by the kernels of the first call's ``engine`` (:func:`aggregate` may already have
        summed them while building the rows).
        """
        if self.clusters is None or len(self.clusters) <= 1:
            return self
        if self._collapsed is None:
            rows = self._collapse(engine)
            object.__setattr__(rows, "_forfeits", self._forfeits)
            object.__setattr__(self, "_collapsed", rows)
        return self._collapsed

    def _collapse(self, engine: Engine) -> Comparisons:
        m, nj = self.n_models, len(self.judges)
        if nj * m * m <= max(2 * self.n_rows, 1 << 20):  # dense table: rows come out sorted
            collapse = kernels(engine, self.n_verdicts).collapse_rows
        else:  # the twin's sort-based reduction: memory follows the rows, not the key space
            collapse = kernels("numpy").collapse_rows
        summed = collapse(self.judge, self.ii, self.jj, self.wi, self.wj, self.tt, nj, m)
        return Comparisons.of_rows(self.models, self.judges, None, None, summed_rows(*summed))

    def reweighted(self, weight: NDArray[np.float64]) -> Comparisons:
        """Multiply every row's counts by ``weight`` (bootstrap resampling of clusters)."""
        return Comparisons(
            self.models, self.judges, self.clusters, self.cluster_name,
            self.ii, self.jj, self.judge, self.cluster,
            self.wi * weight, self.wj * weight, self.tt * weight,
        )  # fmt: skip


def _factorized(values: pd.Series) -> tuple[NDArray[np.integer], pd.Index]:
    """Codes (-1 where missing) and the values they stand for, used or not.

    A categorical column (as :func:`ratings.read_verdicts` returns) gives its codes for free.
    """
    if isinstance(values.dtype, pd.CategoricalDtype):
        return values.array.codes, values.cat.categories  # a read-only view, no copy
    codes, uniques = pd.factorize(values)
    return codes, pd.Index(uniques)


def _sorted_codes(values: pd.Series) -> tuple[NDArray[np.integer], pd.Index]:
    """Codes (-1 where missing) into sorted distinct values, which may include unused ones.

    Categoricals with sorted categories (as :func:`ratings.read_verdicts` returns) keep their
    codes (a read-only view); other columns are factorized.
    """
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype) and dtype.categories.is_monotonic_increasing:
        return values.array.codes, dtype.categories
    codes, uniques = pd.factorize(values, sort=True)
    return codes, pd.Index(uniques)


def aggregate(
    verdicts: pd.DataFrame,
    *,
    cluster: str | None = "task_id",
    models: pd.Index | list[str] | None = None,
    weights: NDArray[np.float64] | None = None,
    engine: Engine = "auto",
) -> Comparisons:
    """Collapse canonical verdicts into :class:`Comparisons`.

    Parameters
    ----------
    verdicts : pandas.DataFrame, dask.dataframe.DataFrame or duckdb.DuckDBPyRelation
        Canonical columns ``model_a``, ``model_b``, ``winner`` (``"A"``, ``"B"`` or ``"tie"``)
        and optionally ``judge``, ``failed_a``, ``failed_b`` and the cluster column, as returned by
        :func:`ratings.io.read_verdicts`. A Dask DataFrame (raw verdicts, validated partition by
        partition) is reduced in parallel by :func:`ratings.data.dask.aggregate_counts`; a
        DuckDB relation or query (raw verdicts, validated in SQL) by
        :func:`ratings.data.sql.aggregate_counts_sql`, in DuckDB, for logs larger than memory.
    cluster : str or None, default="task_id"
        Column whose values are the clusters (verdicts on one task are dependent). ``None``
        treats every verdict as its own cluster.
    models : sequence of str, optional
        Fix the model order (and include models without verdicts); default: sorted names seen.
    weights : ndarray, optional
        A count per row (default 1): rows standing for several identical verdicts.
    engine : {"auto", "numba", "numpy"}, default="auto"
        Kernels for the pass over the verdicts (see :mod:`ratings.kernels.engine`).

    Returns
    -------
    Comparisons

    Notes
    -----
    Render forfeits: where ``failed_a`` or ``failed_b`` is true, the submission that produced
    output wins whatever the judge said, two failures tie, and the row's judge becomes
    ``"deterministic"`` (a judge-free comparison, eta = 1 in Crowd-BT); such rows need no
    winner. Each model's number
    of such matches is the ``forfeits`` column of :meth:`Comparisons.model_counts` (0 where
    the log has no failure flags).
    """
    return _aggregate(verdicts, cluster=cluster, models=models, weights=weights, engine=engine,
                      lazy=True)


def _aggregate(verdicts, *, cluster, models, weights, engine, lazy: bool,
               named: dict | None = None) -> Comparisons:  # fmt: skip
    """:func:`aggregate`; ``lazy`` lets clustered logs keep their verdict codes in place of
    per-cluster rows (see :class:`_KeptCodes`); ``named``: how errors name the rows (the
    ``noun`` and ``fix`` of :func:`~ratings.data.counts.reject_rows`)."""
    if not isinstance(verdicts, pd.DataFrame) and _lives_elsewhere(verdicts):  # reduced there
        from ratings.data.dask import aggregate_counts, is_dask_frame
        from ratings.data.sql import aggregate_counts_sql
        from ratings.io import read_counts

        if is_dask_frame(verdicts):
            counts = read_counts(aggregate_counts(verdicts))  # names encoded as a log's
        else:  # names encoded as a log's already
            counts = aggregate_counts_sql(verdicts)
        if "scope" in counts.columns and counts["scope"].nunique() > 1:
            raise InvalidVerdictsError(
                f"The verdicts hold {counts['scope'].nunique()} scopes; ratings from different "
                "scopes must not be pooled. Select one scope before aggregating.")
        if cluster is not None and cluster not in counts.columns:
            cluster = None if cluster == "task_id" else cluster
        return from_counts(counts, cluster=cluster, models=models)
    needed = ["model_a", "model_b", "winner", *([] if cluster is None else [cluster])]
    require_columns(verdicts, needed, "verdicts", hint="Read logs with `ratings.read_verdicts` "
                    f"or pass {option('cluster', None)} to treat verdicts as independent.")
    n = len(verdicts)
    ca, names_a = _factorized(verdicts["model_a"])
    cb, names_b = _factorized(verdicts["model_b"])
    if models is None:  # all names, used or not (names only in other scopes are dropped below)
        labels = pd.Index(sorted(set(names_a.tolist()) | set(names_b.tolist())), dtype=object)
    else:
        labels = pd.Index(list(models), dtype=object)
    amap = labels.get_indexer(names_a).astype(np.int64)  # -1: not in `models`
    bmap = labels.get_indexer(names_b).astype(np.int64)
    wc, wu = _factorized(verdicts["winner"])
    wmap = np.asarray(pd.Index(wu).map({"A": 0, "B": 1, "tie": 2}).fillna(-1), dtype=np.int64)
    none = np.zeros(0, dtype=np.int64)  # an absent column, for the kernels
    if "judge" in verdicts.columns:
        jc, judges = _sorted_codes(verdicts["judge"])
    else:
        jc, judges = none, pd.Index([DEFAULT_JUDGE], dtype=object)
    fa, fb = _flag(verdicts, "failed_a"), _flag(verdicts, "failed_b")
    forfeits = bool(fa.any() or fb.any())
    if not forfeits:
        fa = fb = np.zeros(0, dtype=bool)
    else:
        fa, fb = (f if f.size else np.zeros(n, dtype=bool) for f in (fa, fb))
    if forfeits:  # the flags decide these rows: an empty winner is no problem there
        empty = (wc < 0) & (fa | fb)
        if empty.any():
            wc = np.where(empty, len(wu), wc).astype(np.result_type(wc.dtype, np.int16))
            wu, wmap = np.append(np.asarray(wu, dtype=object), "tie"), np.append(wmap, 2)
    if forfeits and DETERMINISTIC_JUDGE not in judges:
        judges = judges.append(pd.Index([DETERMINISTIC_JUDGE], dtype=object))
    det = judges.get_loc(DETERMINISTIC_JUDGE) if forfeits else 0
    if cluster is None:
        gc, clusters = none, None
    else:
        gc, clusters = _sorted_codes(verdicts[cluster])

    # Orient every pair as i < j with the outcome seen from i (0: i won, 1: j won, 2: tie),
    # forfeits applied (the deterministic judge), then one row per (cluster, judge, i, j), rows
    # grouped by cluster so each cluster's rows are contiguous. The kernels also report which
    # codes occur and how many rows are unusable (found and named below, only then).
    m, nj, ng = len(labels), len(judges), (len(clusters) if clusters is not None else 1)
    one = np.zeros(0) if weights is None else np.asarray(weights, dtype=np.float64)  # [] is 1s
    codes = VerdictCodes(model_a=ca, model_b=cb, model_a_map=amap, model_b_map=bmap, winner=wc,
                         winner_map=wmap, judge=jc, cluster=gc, failed_a=fa, failed_b=fb,
                         forfeit_judge=det, n_models=m, n_judges=nj, n_clusters=ng)
    labelled = _Labels(labels, judges, clusters, cluster, models is None, det if forfeits else -1)
    # render forfeits per model label, counted before the kernels may reuse the codes' memory
    lost = _forfeit_counts(ca, cb, amap, bmap, fa | fb, one, m) if forfeits else None
    if lazy and _keeps_codes(n, m, nj, ng):  # the fit's rows now, per-cluster rows on demand
        summed = kernels(engine, n).collapse_codes(*codes, one)
        if summed.n_unusable:
            _explain_unusable(verdicts, codes, wu, cluster, named or {})
        data = labelled.keeping_codes(summed, codes, one, engine)
    else:
        # The kernel may reuse the memory of codes it owns (writable int64 ones from
        # factorize); categorical codes are read-only views of the frame and stay untouched.
        out = _aggregate_codes(codes, one, engine, reuse=True)
        if out.n_unusable:
            _explain_unusable(verdicts, codes, wu, cluster, named or {})
        data = labelled.comparisons(out)
    if lost is not None:
        data._set_forfeits(pd.Series(lost, index=labels).reindex(data.models, fill_value=0)
                           .to_numpy(dtype=np.int64))  # fmt: skip
    return data


def _sums_by(codes: NDArray[np.int64], columns, m: int) -> list[NDArray[np.float64]]:
    """Per code ``0..m-1``, each of ``columns`` summed over the rows of that code: sorted codes
    (the rows of one judge, unclustered) as sums over their runs (:func:`run_sums`), else a
    scatter."""
    if codes.size and bool(np.all(codes[1:] >= codes[:-1])):
        runs = run_starts(codes)
        return [run_sums(runs, c, m) for c in columns]
    return [np.bincount(codes, c, m) for c in columns]


def _lives_elsewhere(verdicts: object) -> bool:
    """Is ``verdicts`` a Dask DataFrame or a DuckDB relation? (Their readers' modules are
    imported only to ask: a fit of a pandas frame never loads them.)"""
    from ratings.data.dask import is_dask_frame
    from ratings.data.sql import is_duckdb_relation

    return is_dask_frame(verdicts) or is_duckdb_relation(verdicts)


def _forfeit_counts(ca, cb, amap, bmap, failed, weight, m: int) -> NDArray[np.int64]:
    """Matches of each model (label code) that were render forfeits (``failed`` rows)."""
    w = (weight if weight.size else np.ones(failed.size)) * failed
    a, b = amap[ca], bmap[cb]
    ok = (ca >= 0) & (cb >= 0) & (a >= 0) & (b >= 0)
    return (np.bincount(a[ok], w[ok], m) + np.bincount(b[ok], w[ok], m)).round().astype(np.int64)


#: (judge, i, j) slots up to which a clustered log keeps its verdict codes (the fit's rows and
#: their slot table are dense over them).
_KEEP_CODES_SLOTS = 1 << 18


def _keeps_codes(n: int, m: int, nj: int, ng: int) -> bool:
    """Keep the verdict codes (:class:`_KeptCodes`) rather than build per-cluster rows?

    For clustered logs whose (cluster, judge, i, j) key space exceeds the verdicts (then
    nearly every verdict is a row of its own: 1,000 tasks and 200 models give 40 million keys)
    and whose (judge, i, j) table is small enough.
    """
    return ng > 1 and ng * nj * m * m > n and nj * m * m <= _KEEP_CODES_SLOTS


def _aggregate_codes(codes: VerdictCodes, weight, engine: Engine, *, reuse: bool,
                     collapse: bool = True) -> AggregatedRows:  # fmt: skip
    """Per-cluster rows of the verdict codes (and, with ``collapse``, the kernel may sum them
    over clusters on the way); boards too large for a dense (i, j) slot table take the twin's
    sort-based reduction."""
    m = codes.n_models
    k = kernels(engine, codes.model_a.shape[0]) if m * m <= _DENSE_SLOTS else kernels("numpy")
    return k.aggregate_codes(*codes, weight, reuse=reuse, collapse=collapse)


@dataclass(frozen=True, eq=False)
class _KeptCodes:
    """A clustered log's verdict codes, kept in place of its rows per (cluster, judge, i, j).

    A clustered fit needs those rows only for the G x P matrix of summed cluster scores, which
    :meth:`cluster_scores` computes straight from the codes in one pass; anything else that
    reads them builds them on first use (:meth:`rows`, the same rows :func:`aggregate` builds).
    """

    codes: VerdictCodes
    weight: NDArray[np.float64]
    slot: NDArray[np.int64]  # (judge, i, j) key in the codes' numbering -> collapsed row
    engine: Engine
    labels: _Labels
    used: tuple  # (models, judges, clusters) flags of the codes the labels keep

    def rows(self) -> PairRows:
        """The per-cluster rows, numbered like the labels kept (as :func:`aggregate` builds
        them without keeping the codes)."""
        return self.labels.comparisons(
            _aggregate_codes(self.codes, self.weight, self.engine, reuse=False,
                             collapse=False))._rows  # the summed rows are built already

    def cluster_scores(self, k, tab_d, tab_e) -> NDArray[np.float64]:
        """G x P summed scores: verdict v of outcome o in cluster c adds the score
        ``tab_d[3 r + o]`` of its collapsed row r (and ``tab_e`` on its judge's eta), in the
        numbering of the labels kept."""
        used_m, used_j, used_g = self.used
        full = k.verdict_cluster_scores(*self.codes, self.weight, self.slot, tab_d, tab_e)
        if not used_g.all():
            full = full[used_g]
        cols = np.flatnonzero(used_m)
        if tab_e.size:
            cols = np.concatenate([cols, self.codes.n_models + np.flatnonzero(used_j)])
        return full if cols.size == full.shape[1] else full[:, cols]


@dataclass(frozen=True)
class _Labels:
    """The labels of :func:`aggregate`'s codes, and how unused ones are dropped."""

    models: pd.Index
    judges: pd.Index
    clusters: pd.Index | None
    cluster_name: str | None
    drop_models: bool  # no model list was given: models no usable row names go
    det: int  # the deterministic judge's code when forfeits occur, else -1

    def compacted(self, used_m, used_j, used_g):
        """(model, judge, cluster renumbering or None; the labels kept). Labels no usable row
        names (other scopes' models, tasks and judges) are dropped; the renumbering keeps
        order, so rows stay sorted by cluster and i < j."""
        if self.det >= 0:
            used_j[self.det] = True
        remap_m, models = None, self.models
        if self.drop_models and not used_m.all():
            remap_m, models = np.cumsum(used_m) - 1, self.models[used_m]
        remap_j, judges = _renumbering(self.judges, used_j)
        remap_g, clusters = None, None
        if self.clusters is not None:
            remap_g, clusters = _renumbering(self.clusters, used_g)
        return remap_m, remap_j, remap_g, models, judges, clusters

    def comparisons(self, rows: AggregatedRows) -> Comparisons:
        """Comparisons from per-cluster rows (and, when summed on the way, the fit's rows)."""
        remap_m, remap_j, remap_g, models, judges, clusters = self.compacted(*rows.used)
        out = Comparisons.of_rows(models, judges, clusters, self.cluster_name,
                                  _renumbered(rows.rows, remap_m, remap_j, remap_g))  # fmt: skip
        if rows.collapsed is not None and clusters is not None:  # summed on the way
            object.__setattr__(out, "_collapsed", Comparisons.of_rows(
                models, judges, None, None, _renumbered(rows.collapsed, remap_m, remap_j)))
        return out

    def keeping_codes(self, summed: CollapsedRows, codes: VerdictCodes, weight,
                      engine: Engine) -> Comparisons:  # fmt: skip
        """Comparisons that keep the verdict codes, with the fit's rows (summed over clusters)."""
        used = summed.used
        remap_m, remap_j, _, models, judges, clusters = self.compacted(*used)
        rows = Comparisons.of_rows(models, judges, None, None,
                                   _renumbered(summed.rows, remap_m, remap_j))  # fmt: skip
        kept_m = used[0] if self.drop_models else np.ones(len(self.models), dtype=bool)
        kept = _KeptCodes(codes, weight, summed.slot, engine, self, (kept_m, *used[1:]))
        return Comparisons._keeping_codes(models, judges, clusters, self.cluster_name, rows,
                                          kept)  # fmt: skip



def _renumbering(labels: pd.Index, used: NDArray[np.bool_]):
    """(codes' renumbering or None when all are used, the labels kept)."""
    if used.all():
        return None, labels
    return np.cumsum(used) - 1, labels[used]


def _apply(remap, codes):
    return codes if remap is None else remap[codes]


def _renumbered(rows: PairRows, remap_m, remap_j, remap_g=None) -> PairRows:
    """``rows`` with the model, judge and cluster codes renumbered (None: kept)."""
    return rows._replace(cluster=_apply(remap_g, rows.cluster), judge=_apply(remap_j, rows.judge),
                         ii=_apply(remap_m, rows.ii), jj=_apply(remap_m, rows.jj))

def _explain_unusable(verdicts, codes: VerdictCodes, winners: pd.Index, cluster,
                      named: dict) -> None:  # fmt: skip
    """Raise naming the rows :func:`aggregate` cannot use, first problem first (``winners``:
    the labels of the winner codes; ``named``: ``noun`` and ``fix`` for the message)."""
    a, b = codes.model_a, codes.model_b
    model_a, model_b = codes.model_a_map[a], codes.model_b_map[b]
    reject_rows(verdicts, (a < 0) | (b < 0), "have a missing model name", **named)
    unknown = (model_a < 0) | (model_b < 0)
    if unknown.any():
        names = pd.concat([verdicts["model_a"][model_a < 0], verdicts["model_b"][model_b < 0]])
        raise InvalidVerdictsError(
            f"Verdicts name models not in `models`: {sorted(set(map(str, names)))[:5]}."
        )
    reject_rows(verdicts, model_a == model_b, "pit a model against itself (model_a == model_b)",
                **named)
    reject_rows(verdicts, codes.winner < 0, "have a missing winner", **named)
    odd = np.flatnonzero(codes.winner_map < 0)
    if np.isin(codes.winner, odd).any():
        bad = [winners[k] for k in odd if (codes.winner == k).any()]
        raise InvalidVerdictsError(
            f"`winner` must be 'A', 'B' or 'tie' after reading; found {bad[:5]!r}. "
            "Read logs with `ratings.read_verdicts`, which normalises winner spellings."
        )
    reject_rows(verdicts, codes.judge < 0, "have a missing judge", **named)
    reject_rows(verdicts, codes.cluster < 0, f"have a missing {cluster}", **named)
    raise AssertionError("aggregate_codes counted unusable rows no check names")  # pragma: no cover


def _flag(verdicts: pd.DataFrame, name: str) -> NDArray[np.bool_]:
    """A boolean column (missing counts as False), or an empty array when there is none."""
    if name not in verdicts.columns:
        return np.zeros(0, dtype=bool)
    return verdicts[name].fillna(False).to_numpy(dtype=bool)


#: Columns of a pre-aggregated counts table (``judge`` and a cluster column are optional).
COUNT_COLUMNS = ("model_a", "model_b", "wins_a", "wins_b", "ties")


def is_counts_frame(frame: pd.DataFrame) -> bool:
    """True when ``frame`` holds pre-aggregated counts rather than one row per verdict: it has
    count columns (``wins_a``, ``wins_b``, ``ties``; :func:`from_counts` names any missing) and
    no ``winner``.

    Raises
    ------
    InvalidVerdictsError
        ``frame`` has both ``winner`` and count columns: it is not clear which to fit.
    """
    counts = [c for c in COUNT_COLUMNS[2:] if c in frame.columns]
    if counts and "winner" in frame.columns:
        raise InvalidVerdictsError(
            f"The table has both a `winner` column and count column(s) {counts}, so it is "
            "ambiguous: a verdict log has one row per verdict with its `winner`, a counts table "
            "one row per pair with wins_a, wins_b and ties. Drop the columns of the kind you do "
            "not mean, or split the table."
        )
    return bool(counts)


def from_counts(
    counts: pd.DataFrame,
    *,
    cluster: str | None = "task_id",
    models: pd.Index | list[str] | None = None,
) -> Comparisons:
    """Build :class:`Comparisons` from pre-aggregated counts.

    This is the same commutative reduction :func:`aggregate` performs, done elsewhere: one row per
    (cluster, judge, model_a, model_b) with ``wins_a``, ``wins_b`` and ``ties`` (see
    :func:`ratings.data.dask.aggregate_counts` for Dask, and the README for SQL). Rows may
    repeat a key or name a pair in either order; they are summed.

    Parameters
    ----------
    counts : pandas.DataFrame
        ``model_a``, ``model_b``, ``wins_a``, ``wins_b``, ``ties`` and optionally ``judge``,
        the cluster column and ``forfeits`` (how many of the row's verdicts were render
        forfeits, for the per-model ``forfeits`` count; the row's judge should then be
        ``"deterministic"``, as :func:`ratings.data.dask.aggregate_counts` writes it).
    cluster : str or None, default="task_id"
        Cluster column (absent column with the default: verdicts treated as independent).
    models : sequence of str, optional
        Fix the model order.
    """
    require_columns(counts, COUNT_COLUMNS, "the counts table", hint="A counts table has one "
                    "row per (task_id, judge, model_a, model_b) with wins_a, wins_b and ties.")
    if cluster is not None and cluster not in counts.columns:
        if cluster != "task_id":
            raise InvalidVerdictsError(f"Cluster column {cluster!r} not in the counts table.")
        cluster = None
    w = counts_as_floats(counts)  # checked by the kernel on its way, else here
    data = _counted_rows(counts, check_counts(counts) if w is None else w, cluster, models)
    if "forfeits" in counts.columns:
        lost = pd.to_numeric(counts["forfeits"], errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(lost) | (lost < 0)
        if bad.any():
            reject_rows(counts, bad, "have a `forfeits` count that is not a finite number >= 0")
        per = _per_name(counts["model_a"], lost).add(_per_name(counts["model_b"], lost),
                                                     fill_value=0)  # fmt: skip
        data._set_forfeits(per.reindex(data.models, fill_value=0).round().to_numpy(np.int64))
    return data


def _counted_rows(counts: pd.DataFrame, w: tuple[NDArray[np.float64], ...], cluster: str | None,
                  models) -> Comparisons:  # fmt: skip
    """A counts table (``w``: its wins_a, wins_b, ties as floats) straight into the
    aggregated-row layout: each row oriented ``i < j`` (its wins swapped where ``model_a``
    sorts after ``model_b``), rows of one (cluster, judge, i, j) summed, rows grouped by
    cluster, in one kernel that also finds the unusable rows (bad counts included). Rows of
    zero counts only are checked like the others, then leave no row behind; bad counts are
    named by cell, other unusable rows as :func:`aggregate` names a log's."""
    n = len(counts)
    ca, names_a = _factorized(counts["model_a"])
    cb, names_b = _factorized(counts["model_b"])
    if models is None:
        labels = pd.Index(sorted(set(names_a.tolist()) | set(names_b.tolist())), dtype=object)
    else:
        labels = pd.Index(list(models), dtype=object)
    amap = labels.get_indexer(names_a).astype(np.int64)
    bmap = labels.get_indexer(names_b).astype(np.int64)
    none = np.zeros(0, dtype=np.int64)
    jc, judges = (_sorted_codes(counts["judge"]) if "judge" in counts.columns
                  else (none, pd.Index([DEFAULT_JUDGE], dtype=object)))  # fmt: skip
    gc, clusters = (none, None) if cluster is None else _sorted_codes(counts[cluster])
    m, nj, ng = len(labels), len(judges), (len(clusters) if clusters is not None else 1)
    # one slot table of m^2 entries in the kernel; larger boards take the twin's sort. The
    # engine is chosen by the verdicts counted, as the fit's later passes choose theirs.
    verdicts = sum(float(c.sum()) for c in w)
    verdicts = int(verdicts) if np.isfinite(verdicts) else n  # NaN or inf: bad counts, named below
    k = kernels("auto", verdicts) if m * m <= _DENSE_SLOTS else kernels("numpy")
    found = k.count_rows(ca, cb, amap, bmap, jc, gc, *w, m, nj, ng)
    if found.n_unusable:
        check_counts(counts)  # bad counts first, named by cell
        codes = VerdictCodes(model_a=ca, model_b=cb, model_a_map=amap, model_b_map=bmap,
                             winner=np.zeros(n, dtype=np.int8), winner_map=np.zeros(1, np.int64),
                             judge=jc, cluster=gc, failed_a=np.zeros(0, dtype=bool),
                             failed_b=np.zeros(0, dtype=bool), forfeit_judge=0, n_models=m,
                             n_judges=nj, n_clusters=ng)  # fmt: skip
        _explain_unusable(counts, codes, pd.Index(["A"]), cluster, _COUNTS_ROWS)
    labelled = _Labels(labels, judges, clusters, cluster, models is None, -1)
    data = labelled.comparisons(found)
    keep = (data.wi + data.wj + data.tt) > 0
    return data if keep.all() else data.subset(keep)


_COUNTS_ROWS = {"noun": "row(s) of the counts table",
                "fix": "Fix or remove those rows of the counts table."}


def _per_name(names: pd.Series, amounts: NDArray[np.float64]) -> pd.Series:
    """``amounts`` summed per distinct name (missing names left out)."""
    codes, labels = _factorized(names)
    ok = codes >= 0
    return pd.Series(np.bincount(codes[ok], amounts[ok], len(labels)), index=labels)
