"""The design with covariates: d = s_A - s_B + x'beta, one coefficient per covariate column,
fitted with any outcome family by the one Newton solver, with every interval kind.

Style features (:mod:`ratings.models.style`), judge effects (:mod:`ratings.models.judge_effects`:
position bias and self-preference as signed indicator columns) and both together are covariate
blocks of this one design; :func:`ratings.api.covariates.fit_covariates` builds the columns and
runs it. The outcome family (:mod:`ratings.models.families`) gives each row's terms in its
linear predictor and its own parameters, one per slot: none for Bradley-Terry (ties as half
wins), Crowd-BT's eta per judge (ties left out of its likelihood), a tie model's tie parameter
(one slot for every row; a tie row contributes its tie likelihood).

Rows
----
Verdicts are aggregated by (cluster, judge, slot A, slot B, covariates) (:func:`design_rows`:
a :class:`~ratings.data.slots.SlotCounts` with its covariate block): identical rows collapse
where enough of them do (discrete features such as header counts collapse many), continuous
features leave every verdict its own row. Rows are kept in cluster order.

Fit and inference
-----------------
Unpenalised maximum likelihood (an optional ridge ``ridge / 2 |beta|^2`` on the first
``n_ridge`` coefficients, the style features') by Newton's method
(:func:`ratings.models.newton.newton`) over params = (s, beta, the family's parameters). For
Bradley-Terry each evaluation is one call over the rows (:func:`ratings.kernels.style.
style_bt_newton`: the rows' terms, then their sums per model pair beside the features' block;
at the start, beta = 0, each row's terms read from its pair's in the loop of the sums), split
in blocks across the package's threads; other families' row derivatives
come from their row kernels (:mod:`ratings.kernels.fit`) on the linear predictor, assembled by
:mod:`ratings.kernels.style`. Every kernel has a NumPy twin in :mod:`ratings.kernels.style_ref`.
Crowd-BT's default follows :func:`ratings.models.crowd.likelihood.choose_estimate`: the
posterior mode under its weak prior where the plain estimate is irregular (with judge effects
alone: where it does not exist). The covariance is
joint over all params, built by :func:`ratings.inference.builder.build`: model-based H^-1, HC0
(per verdict), CR1 (clustered, G/(G-1)) or CR2 with Satterthwaite degrees of freedom per
contrast (:class:`ratings.inference.ClusterInference`) from the working rows
(:class:`~ratings.inference.working.WorkingRows` with the covariate block; a tie model's
rank-two information gives each row two): exact (one
eigen-decomposition per cluster) on small boards, past :data:`ratings.inference.EXACT_BUDGET` by
the binomial series of (I - M H_g)^(-1/2) with the products H_g v of all clusters in one pass
over the rows.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from ratings.core import threads
from ratings.core.errors import NonIdentifiableError
from ratings.data.comparisons import Comparisons
from ratings.data.slots import SlotCounts
from ratings.inference import ClusterInference
from ratings.inference.builder import Built, Scores
from ratings.kernels.engine import Engine, kernels
from ratings.models.crowd.prior import CrowdPrior, prior_terms
from ratings.models.design import pair_block, pair_meat, pair_objective
from ratings.models.families import BRADLEY_TERRY, CROWD_BT, Family
from ratings.models.newton import newton

__all__ = ["COVARIATES", "DIVERGED", "MERGE_SHARE", "DesignFit", "Remedy", "blocks_of",
           "design_builder", "design_kernels", "design_rows", "fit_design", "pair_built",
           "pair_design", "side_by_side", "unit_df", "wald"]


@dataclass(frozen=True)
class Remedy:
    """How the errors of a fit with covariates name them: ``what`` the fit is (the convergence
    warning's subject), ``covariates`` the coefficients, and what to do when the fit diverges
    (``diverged``) or the information is singular (``singular_fix``)."""

    what: str
    covariates: str
    diverged: str
    singular_fix: str

    def diverges(self) -> str:
        return f"The joint fit of strengths and {self.covariates} diverges: {self.diverged}"

    def singular(self) -> str:
        return (f"The information matrix of the strengths and {self.covariates} is singular: "
                f"{self.singular_fix}")


DIVERGED = 30.0  # |log-strength| beyond which a fit is taken to diverge (an Elo gap of ~5200)


#: The errors of a fit with covariates that names none (:func:`fit_design`'s default).
COVARIATES = Remedy("Covariate", "coefficients",
                    "some covariate (or model) separates wins from losses on these verdicts.",
                    "some covariate cannot be told apart from the strengths.")


def design_rows(slots: SlotCounts, x: NDArray[np.float64], engine: Engine = "auto") -> SlotCounts:
    """Aggregate the verdicts of ``slots`` by cluster, judge, slots and covariates, sorted by
    cluster (then by first appearance): ``slots`` with the covariate block ``x`` (the
    covariates of ``slots``' rows, in their order).

    No loop in Python. Rows in input order (``slots.order`` None) are put in cluster order by
    a counting sort of their numbers (:func:`ratings.kernels.slots.slot_order`; cluster order
    keeps the sandwich's per-cluster passes in cache) and the features gathered by it;
    ``slot_counts(by_cluster=...)`` gives them in that order already (each column's small
    codes taken in that order), with the features placed there by :func:`feature_jobs`. Equal
    rows are found
    within each cluster by key (:func:`~ratings.kernels.style.style_merge`, compared exactly;
    blocks of whole clusters side by side) and summed into the first of them
    (:func:`~ratings.kernels.style.style_compact`) when there are any: discrete features such
    as header counts merge many; continuous ones leave every verdict its own row. On a long
    log (from :data:`ratings.core.threads.CONCURRENT_ROWS` verdicts) a sample of clusters
    (:func:`_sample_clusters`) is merged first, and the rest only when at least
    :data:`MERGE_SHARE` of the sample's rows merge: merging only saves later passes, the
    likelihood and the per-cluster sums being the same over equal rows kept apart.
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    if slots.order is None:  # rows and features in input order: both put in cluster order
        slots = slots.by_cluster()
        if slots.order.size:
            x = np.take(x, slots.order, axis=0)
    if len(slots.judges) == 1:  # a single judge's codes are all zero
        judge = np.zeros(x.shape[0], dtype=np.int64)
    else:
        judge = np.ascontiguousarray(slots.judge, dtype=np.int64)
    cols = [np.ascontiguousarray(slots.cluster, dtype=np.int64), judge,
            *(np.ascontiguousarray(c, dtype=np.int64) for c in (slots.ii, slots.jj)), x,
            *(np.ascontiguousarray(c, dtype=np.float64) for c in (slots.wi, slots.wj, slots.tt))]
    names = ("cluster", "judge", "ii", "jj", "x", "wi", "wj", "tt")
    sk = design_kernels(kernels(engine, x.shape[0]))

    def merge(blocks: list[slice], lead: NDArray[np.int64]) -> int:
        return sum(side_by_side(lambda s: sk.style_merge(
            *(c[s] for c in cols[:5]), len(slots.models), len(slots.judges), lead[s]), blocks))

    lead = np.empty(x.shape[0], dtype=np.int64)
    if x.shape[0] >= threads.CONCURRENT_ROWS:  # merge only if a sample shows it pays
        sample = _sample_clusters(cols[0])
        found = merge(sample, lead)
        if found < MERGE_SHARE * sum(s.stop - s.start for s in sample):
            return replace(slots, **dict(zip(names, cols, strict=True)))
    blocks = _cluster_blocks(cols[0])
    if merge(blocks, lead):
        for s in blocks[1:]:  # each block numbered its rows from 0
            lead[s] += s.start
        cols = sk.style_compact(*cols, lead)
    return replace(slots, **dict(zip(names, cols, strict=True)))


#: Share of a sample's rows (:func:`_sample_clusters`) that must be equal to others of their
#: cluster for a long log's rows to be merged: a merge is a pass over the rows (about 12 ms on
#: 1M rows), each later Newton and sandwich pass over a merged row saved about 0.08 us.
MERGE_SHARE = 0.125


def _sample_clusters(cluster: NDArray[np.int64], parts: int = 4,
                     share: float = 1 / 16) -> list[slice]:  # fmt: skip
    """``parts`` row ranges of whole clusters spread over rows in cluster order, about
    ``share`` of the rows in all (each at least one cluster)."""
    n = cluster.size
    out = []
    for k in range(parts):
        lo = int(np.searchsorted(cluster, cluster[n * k // parts]))
        hi = int(np.searchsorted(cluster, cluster[min(lo + int(n * share / parts), n - 1)],
                                 side="right"))  # fmt: skip
        if not out or lo >= out[-1].stop:
            out.append(slice(lo, hi))
    return out


def _cluster_blocks(cluster: NDArray[np.int64]) -> list[slice]:
    """:func:`blocks_of` of rows in cluster order, each moved to start at a cluster's first row
    (no cluster split between two blocks)."""
    starts = [0]
    for s in blocks_of(cluster.size)[1:]:
        at = int(np.searchsorted(cluster, cluster[s.start]))
        if at > starts[-1]:
            starts.append(at)
    return [slice(lo, hi) for lo, hi in zip(starts, [*starts[1:], cluster.size], strict=True)]


def design_kernels(k):
    """The style kernels matching the fit kernels ``k`` (numba, or the NumPy twins: then
    without importing numba)."""
    if k.__name__.endswith("_ref"):
        from ratings.kernels import style_ref as _style_ref

        return _style_ref
    from ratings.kernels import style as _style

    return _style


def blocks_of(n: int) -> list[slice]:
    """Row blocks a pass over ``n`` rows is split into, run side by side on the package's
    threads (one block below :data:`ratings.core.threads.CONCURRENT_ROWS` rows)."""
    if n < threads.CONCURRENT_ROWS:
        return [slice(0, n)]
    return [slice(lo, hi) for lo, hi in threads.row_blocks(n, threads.workers())]


def side_by_side(job, blocks: list, concurrent: bool = True) -> list:
    """``[job(block) for block in blocks]``, the blocks on the package's threads (the kernels
    release the GIL) unless not ``concurrent`` (then in turn, on the calling thread)."""
    jobs = [lambda s=s: job(s) for s in blocks]
    return threads.run(jobs) if concurrent else [each() for each in jobs]


def _joined(parts: list, items) -> tuple:
    """Each of the blocks' per-row arrays ``items`` joined in block order (one block's as
    they are)."""
    return tuple(parts[0][k] if len(parts) == 1 else np.concatenate([part[k] for part in parts])
                 for k in items)  # fmt: skip


def _total(parts) -> NDArray[np.float64]:
    """The sum of the blocks' arrays, in block order."""
    parts = iter(parts)
    out = next(parts)
    for part in parts:
        out = out + part
    return out


class _Design:
    """Linear predictor d_r = s_a - s_b + beta . x_r over params (s, beta, eta)."""

    def __init__(self, rows: SlotCounts, family: Family, k, prior=None,
                 pairs: Comparisons | None = None, clustered: bool = True) -> None:  # fmt: skip
        self.rows, self.family, self.k, self.sk = rows, family, k, design_kernels(k)
        # without covariate columns, the sandwich's passes run over the rows ``pairs`` (per
        # cluster, judge and pair of models; ``rows`` their sums over clusters), clustered
        # unless not ``clustered``
        self.pairs = pairs
        # the estimated etas (set by the fit), those off a bound (by the intervals)
        self.estimated = self.live = None
        over = rows if pairs is None else pairs
        self.clusters = over.clusters if clustered else None
        self.n_clusters = over.n_clusters
        self.crowd = family is CROWD_BT
        # the family's own parameters, one per slot: Crowd-BT's eta per judge (the slot of a
        # row its judge), a tie model's one tie parameter (every row's slot 0)
        self.m, self.p, self.nj = rows.n_models, rows.x.shape[1], family.n_extra(rows.n_judges)
        self.one_slot = family.slots == "one"
        self.slot = self.slots(rows.judge)  # (read only with parameters of the family's own)
        self.n_params = self.m + self.p + self.nj
        self.prior = prior if self.crowd else None
        self.empty = np.zeros(0)
        self.blocks = blocks_of(rows.n_rows)
        self._bt_rows = self._weights = None

    def slots(self, judge: NDArray[np.int64]) -> NDArray[np.int64]:
        """The slot of each row whose judge is ``judge``: the judge itself (Crowd-BT), or slot
        0 for every row (a tie model's one tie parameter)."""
        return np.zeros_like(judge) if self.one_slot else judge

    @cached_property
    def block_index(self) -> list[tuple[NDArray[np.int64], NDArray[np.int64]]]:
        """Per block of rows, ``ii`` and ``jj`` of the fit kernels' row terms over the block's
        linear predictor with a zero appended: d_r = lin[r] - lin[n] = lin[r]."""
        return [(np.arange(s.stop - s.start),
                 np.full(s.stop - s.start, s.stop - s.start, dtype=np.int64))
                for s in self.blocks]  # fmt: skip

    def lin(self, params: NDArray[np.float64]) -> NDArray[np.float64]:
        """d_r per row."""
        r, m = self.rows, self.m
        return params[r.ii] - params[r.jj] + r.x @ params[m:m + self.p]

    def terms(self, params, with_meat: bool) -> tuple:
        """(nll, s_d, s_eta, h_dd, h_deta, h_etaeta, m_dd, m_deta, m_etaeta) per row (the
        eta columns empty for Bradley-Terry); blocks of rows side by side."""
        r, k = self.rows, self.k
        lin = self.lin(params)
        eta = np.ascontiguousarray(params[self.m + self.p:])

        def block(b: int) -> tuple:
            s, (ii, jj) = self.blocks[b], self.block_index[b]
            return self.family.row_terms(k, np.append(lin[s], 0.0), eta, ii, jj, self.slot[s],
                                         r.wi[s], r.wj[s], r.tt[s], with_meat)  # fmt: skip

        parts = side_by_side(block, range(len(self.blocks)))
        return (_total(part[0] for part in parts), *_joined(parts, range(1, 9)))

    def grad(self, sd, se) -> NDArray[np.float64]:
        """X^T s_d + E^T s_eta (the log-likelihood's gradient); blocks of rows side by side."""
        r = self.rows
        return _total(side_by_side(lambda s: self.sk.style_gradient(
            self.m, self.nj, r.ii[s], r.jj[s], self.slot[s], r.x[s], sd[s],
            se[s] if se.size else se), self.blocks))  # fmt: skip

    def quad(self, wdd, wde, wee) -> NDArray[np.float64]:
        """X^T W_dd X + X^T W_de E + E^T W_de X + E^T W_ee E, dense (P x P); blocks of rows
        side by side."""
        r = self.rows
        if self.nj and not self.p:  # no covariate columns: the (M + K)-square block alone
            return pair_block(self.k, r, self.nj, self.slot, wdd, wde, wee)
        return _total(side_by_side(lambda s: self.sk.style_assemble(
            self.m, self.nj, r.ii[s], r.jj[s], self.slot[s], r.x[s], wdd[s],
            wde[s] if wde.size else wde, wee[s] if wee.size else wee), self.blocks))

    def objective(self, params, ridge: float, n_ridge: int) -> tuple:
        if self.nj and not self.p:  # no covariate columns: the collapsed-counts fast path
            nll, grad, hess = pair_objective(self.family, self.k, params[:self.m],
                                             params[self.m:], self.rows, self.nj, self.slot)
        elif self.nj:
            nll, sd, se, hdd, hde, hee, *_ = self.terms(params, False)
            grad, hess = -self.grad(sd, se), self.quad(hdd, hde, hee)
        else:  # one pass over the rows (blocks of them side by side)
            r, m, sk = self.rows, self.m, self.sk
            score, info = self._bt_rows[1] if self._bt_rows is not None else (
                np.empty(r.n_rows), np.empty(r.n_rows))  # reused: no fresh pages each time
            parts = side_by_side(lambda s: sk.style_bt_newton(
                params, m, r.ii[s], r.jj[s], r.x[s], r.wi[s], r.wj[s], r.tt[s], score[s],
                info[s]), self.blocks)
            self._bt_rows = (params.copy(), (score, info))  # for the sandwich at the estimate
            nll = sum(part[0] for part in parts)
            grad, hess = _total(part[1] for part in parts), _total(part[2] for part in parts)
        if ridge:  # on the first n_ridge coefficients (the style features') only
            at = self.m + np.arange(n_ridge)
            beta = params[at]
            nll = nll + 0.5 * ridge * float(beta @ beta)
            grad[at] += ridge * beta
            hess[at, at] += ridge
        if self.prior is not None:  # the Crowd-BT prior's value, gradient and Hessian
            value, g, h = prior_terms(params[:self.m], params[self.m + self.p:], self.estimated,
                                      self.prior, self.p)  # fmt: skip
            nll, grad, hess = nll + value, grad + g, hess + h
        return nll, grad, hess

    def row_scores(self, params) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Each row's summed score on d and on its slot's family parameter (empty for
        Bradley-Terry)."""
        if self.nj:
            return self.terms(params, False)[1:3]
        return self.bt_rows(params)[0], self.empty

    def cluster_scores(self, params, lo: int = 0, hi: int | None = None,
                       row_scores: tuple | None = None) -> NDArray[np.float64]:  # fmt: skip
        """The summed score over all params of each cluster from ``lo`` to ``hi`` (exclusive;
        all by default) -> ((hi - lo) x P), from the rows' scores (:meth:`row_scores`, unless
        given); the rows of all clusters in blocks side by side."""
        r = self.rows
        sd, se = self.row_scores(params) if row_scores is None else row_scores
        q, m, sk = self.n_params, self.m, self.sk
        hi = r.n_clusters if hi is None else hi
        blocks = self.blocks if (lo, hi) == (0, r.n_clusters) else \
            [slice(*(int(v) for v in np.searchsorted(r.cluster, [lo, hi])))]
        return _total(side_by_side(lambda s: sk.style_cluster_scores(
            hi - lo, q, m, r.ii[s], r.jj[s], self.slot[s], r.cluster[s] - lo if lo else
            r.cluster[s], r.x[s], sd[s], se[s] if se.size else se), blocks))  # fmt: skip

    def cluster_meat(self, params, per_block: int) -> NDArray[np.float64]:
        """sum_g s_g s_g^T over the clusters' summed scores (P x P), ``per_block`` clusters'
        scores held at a time (rows are in cluster order)."""
        g, scores = self.rows.n_clusters, self.row_scores(params)
        parts = (self.cluster_scores(params, lo, min(lo + per_block, g), scores)
                 for lo in range(0, g, per_block))  # fmt: skip
        return sum((part.T @ part for part in parts), np.zeros((self.n_params, self.n_params)))

    def bt_rows(self, params) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Bradley-Terry: per row, its summed score on d and its working weight
        sqrt(n p (1 - p)) (kept for the last ``params`` asked; from the last objective's rows
        when ``params`` are its)."""
        if self._weights is None or not np.array_equal(self._weights[0], params):
            if self._bt_rows is not None and np.array_equal(self._bt_rows[0], params):
                score, info = self._bt_rows[1]
                both = score, np.sqrt(info)
            else:
                r, m, sk = self.rows, self.m, self.sk
                parts = side_by_side(lambda s: sk.style_bt_rows(
                    params, m, r.ii[s], r.jj[s], r.x[s], r.wi[s], r.wj[s], r.tt[s]), self.blocks)
                both = _joined(parts, range(2))
            self._weights = (params.copy(), both)
        return self._weights[1]

    def working(self, params, r=None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Working-model weights (a, b) per row of ``r`` (the design's rows by default): the
        design row is a x_r + b e_eta (Crowd-BT's:
        :func:`ratings.inference.working.crowd_weights`; b zero for the etas held fixed or on a
        bound, which are treated as known)."""
        from ratings.inference.working import crowd_weights

        if not self.crowd:
            return self.bt_rows(params)[1], self.empty
        r = self.rows if r is None else r
        lin = params[r.ii] - params[r.jj] if r is not self.rows else self.lin(params)
        a, b = crowd_weights(lin, params[self.m + self.p + r.judge], r.wi + r.wj)
        return a, np.where(self.live[r.judge], b, 0.0)

    def scores(self, params) -> Scores:
        """How the builder reads the scores at ``params``: over ``pairs`` where given (the
        clusters' scores by :func:`ratings.inference.builder.row_scores_of`), else over the
        design's rows (blocks side by side)."""
        from ratings.inference import covariance
        from ratings.inference.builder import row_scores_of

        d = self.pairs
        if d is None:
            per_block = max(1, covariance.MAX_INFLUENCE_CELLS // self.n_params)
            return Scores(lambda: self.quad(*self.terms(params, True)[6:]),
                          lambda: self.cluster_scores(params),
                          lambda: self.cluster_meat(params, per_block))  # fmt: skip
        k, theta, eta = self.k, params[:self.m], params[self.m:]
        slot = self.slots(d.judge) if self.one_slot else None  # (else the log's judges, unread:
        # a log that kept its verdict codes sums its clusters' scores without building rows)

        def row_scores(rows, wi, wj, tt):  # ``d``'s rows, or its rows summed over clusters
            return self.family.row_terms(k, theta, eta, rows.ii, rows.jj, self.slots(rows.judge),
                                         wi, wj, tt, False)[1:3]  # fmt: skip

        return row_scores_of(d, self.n_params, k, row_scores,
                             lambda: pair_meat(self.family, k, theta, eta, d, self.nj, slot),
                             slot)  # fmt: skip


@dataclass(frozen=True, eq=False)
class DesignFit:
    """A fit of the design: params = (s (M), beta (P)[, the family's parameters (K)]), with the
    Hessian of its objective and, when asked, the covariance joint over them. Plain Crowd-BT
    (no covariate columns) and Crowd-BT with covariates are both this one type.

    ``influence`` (G x n_params): clustered fits' per-cluster influences, with
    ``cov = influence.T @ influence`` (CR2) or ``G/(G-1)`` times it (CR1). ``nll``: the
    objective at the estimate (plain Crowd-BT's fit keeps the likelihood's alone). Crowd-BT:
    ``estimated`` and ``boundary`` etas, ``prior`` (None: plain maximum likelihood) and, for
    the default estimate's posterior mode
    (:func:`ratings.models.crowd.likelihood.choose_estimate`), the etas the plain estimate put on
    a bound (``plain_on_bound``; all where it had none), whether it converged
    (``plain_found``) and how far the prior moved a regular one (``prior_shift``, NaN
    otherwise).
    """

    params: NDArray[np.float64]
    n_models: int
    n_features: int
    cov: NDArray[np.float64] | None
    influence: NDArray[np.float64] | None
    inference: ClusterInference | None
    nll: float
    converged: bool
    n_iter: int
    max_grad: float
    estimated: NDArray[np.bool_] | None = None
    boundary: NDArray[np.bool_] | None = None
    hessian: NDArray[np.float64] | None = None
    ref: int = 0
    prior: CrowdPrior | None = None
    plain_on_bound: NDArray[np.bool_] | None = None
    plain_found: bool = True
    prior_shift: float = float("nan")

    @property
    def strength(self) -> NDArray[np.float64]:
        return self.params[: self.n_models]

    theta = strength

    @property
    def beta(self) -> NDArray[np.float64]:
        return self.params[self.n_models:self.n_models + self.n_features]

    @property
    def eta(self) -> NDArray[np.float64]:
        return self.params[self.n_models + self.n_features:]

    @property
    def phi(self) -> float:
        """A tie model's tie parameter on its unbounded scale (its family's one parameter)."""
        return float(self.eta[0])

    @property
    def eta_at(self) -> NDArray[np.int64]:
        """Where ``params`` holds the family's parameters (Crowd-BT's etas)."""
        return self.n_models + self.n_features + np.arange(self.eta.size)

    @property
    def live(self) -> NDArray[np.bool_]:
        """The family's parameters with a covariance: Crowd-BT's estimated etas that are not on
        a bound (every one of a family without a box)."""
        if self.estimated is None:
            return np.ones(self.eta.size, dtype=bool)
        return self.estimated & ~self.boundary

    @property
    def free(self) -> NDArray[np.int64]:
        """The coordinates with a covariance: strengths but the reference, the coefficients,
        and the family's parameters with one (:attr:`live`)."""
        m, p = self.n_models, self.n_features
        return np.concatenate([np.delete(np.arange(m), self.ref), m + np.arange(p),
                               self.eta_at[self.live]]).astype(np.int64)  # fmt: skip

    def _prior_hessian(self, prior: CrowdPrior | None) -> NDArray[np.float64]:
        return prior_terms(self.strength, self.eta, self.estimated, prior, self.n_features)[2]

    @property
    def prior_hessian(self) -> NDArray[np.float64]:
        """Hessian of the negative log-prior at the estimate (zeros without a prior)."""
        return self._prior_hessian(self.prior)

    @property
    def bread_penalty(self) -> NDArray[np.float64]:
        """The strengths' prior's curvature alone (zeros without a prior): with the
        likelihood's information, what the verdicts say about eta (:attr:`information`)."""
        return self._prior_hessian(None if self.prior is None else self.prior.strengths_only)

    def likelihood_nll(self, ridge: float = 0.0, n_ridge: int = 0) -> float:
        """The negative log-likelihood at the estimate: ``nll`` without the prior's value and
        the ridge ``ridge`` on the first ``n_ridge`` coefficients (the style features')."""
        beta = self.beta[:n_ridge]
        return self.nll - 0.5 * ridge * float(beta @ beta) - prior_terms(
            self.strength, self.eta, self.estimated, self.prior, self.n_features)[0]  # fmt: skip

    @property
    def information(self) -> NDArray[np.float64]:
        """The Hessian without the prior on eta: the likelihood's observed information with the
        strengths' prior (and the style features' ridge), the CR1 / HC0 / model-based bread."""
        return self.hessian - self.prior_hessian + self.bread_penalty


def fit_design(
    rows: SlotCounts,
    theta0: NDArray[np.float64],
    *,
    ref: int = 0,
    family: Family = BRADLEY_TERRY,
    eta0: NDArray[np.float64] | None = None,
    eta_free: NDArray[np.bool_] | None = None,
    ci: str | None = "sandwich",
    ridge: float = 0.0,
    prior=None,
    engine: Engine = "auto",
    tol: float = 1e-10,
    max_iter: int = 100,
    beta0: NDArray[np.float64] | None = None,
    n_ridge: int | None = None,
    remedy: Remedy = COVARIATES,
) -> DesignFit:
    """Fit strengths and style coefficients (and Crowd-BT etas) jointly; see the module notes.

    ``theta0`` starts the strengths (e.g. the plain fit's), ``beta0`` the coefficients (zero by
    default); ``eta0``/``eta_free`` start and select the estimated etas (Crowd-BT). ``prior``
    (Crowd-BT, a :class:`ratings.models.crowd.prior.CrowdPrior`): fit the posterior mode under
    it instead of the likelihood's maximum; its curvature enters the bread. ``ci``:
    ``"model"``, ``"sandwich"`` (CR2 with Satterthwaite df when clustered, else HC0),
    ``"sandwich-z"`` (CR1 when clustered) or None (the estimate alone: ``cov`` None).
    ``ridge`` applies to the first ``n_ridge`` coefficients (default: all), the style
    features' when judge effects follow them. ``remedy`` words the errors of a fit that
    diverges or whose information is singular (:class:`Remedy`). Crowd-BT's default intervals
    are built after the estimate (:func:`design_builder`,
    :func:`ratings.models.crowd.policy.crowd_inference`).
    """
    k = kernels(engine, int(rows.n_rows))
    design = _Design(rows, family, k, prior)
    m, p, nj, crowd = design.m, design.p, design.nj, design.crowd
    # Crowd-BT's etas are fixed at 1 (plain Bradley-Terry) unless chosen; a tie parameter is free
    eta0 = np.ones(nj) if eta0 is None else np.asarray(eta0, dtype=np.float64)
    eta_free = (np.full(nj, not crowd) if eta_free is None
                else np.asarray(eta_free, dtype=bool))  # fmt: skip
    design.estimated = eta_free
    if prior is not None and crowd:  # the Beta prior is infinite on the bounds: start inside
        eta0 = np.where(eta_free, np.clip(eta0, 0.55, 0.95), eta0)
    x0 = np.concatenate([theta0, np.zeros(p) if beta0 is None else beta0, eta0])
    free = np.concatenate([np.delete(np.arange(m), ref), m + np.arange(p),
                           m + p + np.flatnonzero(eta_free)]).astype(np.int64)  # fmt: skip
    lower = np.concatenate([np.full(m + p, -np.inf), np.full(nj, family.lower)])
    upper = np.concatenate([np.full(m + p, np.inf), np.full(nj, family.upper)])
    try:
        n_ridge = p if n_ridge is None else n_ridge
        res = newton(lambda v: design.objective(v, ridge, n_ridge), x0, free, lower=lower,
                     upper=upper, tol=tol, max_iter=max_iter, what=remedy.what,
                     bound=DIVERGED)  # fmt: skip
    except FloatingPointError:
        raise NonIdentifiableError(remedy.diverges()) from None
    boundary = res.active[m + p:] & eta_free
    fit = DesignFit(res.x, m, p, None, None, None, res.f, res.converged, res.n_iter,
                    res.max_grad, eta_free if crowd else None, boundary if crowd else None,
                    res.hessian, ref, design.prior)  # fmt: skip
    if ci is None:
        return fit
    built = _built(fit, design, ci, ridge=ridge, n_ridge=n_ridge, remedy=remedy)
    return replace(fit, cov=built.cov, influence=built.influence, inference=built.inference)


def pair_design(rows: Comparisons, engine: Engine = "auto") -> SlotCounts:
    """Collapsed rows (one per judge and pair of models) as a design without covariate columns
    (:func:`fit_design` takes its collapsed-counts fast path)."""
    n = rows.ii.size
    return SlotCounts(rows.models, rows.judges, None, np.zeros(n, dtype=np.int64), rows.judge,
                      rows.ii, rows.jj, rows.wi, rows.wj, rows.tt, engine, x=np.zeros((n, 0)))


def design_builder(rows: SlotCounts, *, ridge: float = 0.0, n_ridge: int | None = None,
                   engine: Engine = "auto", remedy: Remedy | None = COVARIATES,
                   family: Family = CROWD_BT, pairs: Comparisons | None = None,
                   clustered: bool = True):  # fmt: skip
    """How a fit of ``family`` (Crowd-BT's, with covariate columns or not) on ``rows`` builds
    its intervals: ``built(fit, ci, eta_prior)``, the covariance of kind ``ci`` by the one path
    of :func:`fit_design`'s intervals (:func:`_built`; ``eta_prior`` False leaves the prior on
    eta out of CR2's bread), built once per fit and kind. ``pairs``: the rows per cluster of a
    fit without covariate columns, ``rows`` their sums over clusters (:func:`pair_design`), the
    clusters' passes over them (per verdict unless ``clustered``), as :func:`pair_built`."""
    cache: dict = {}
    k = kernels(engine, int(rows.n_rows) if pairs is None else pairs.n_verdicts)

    def built(fit: DesignFit, ci: str, eta_prior: bool) -> Built:
        key = (id(fit), ci, eta_prior)
        if key not in cache:  # the fit is kept beside its Built: its id stays its own
            design = _Design(rows, family, k, fit.prior, pairs, clustered)
            cache[key] = fit, _built(fit, design, ci, eta_prior=eta_prior, ridge=ridge,
                                     n_ridge=n_ridge, remedy=remedy)  # fmt: skip
        return cache[key][1]

    return built


def pair_built(fit: DesignFit, pairs: Comparisons, ci: str, *, clustered: bool,
               eta_prior: bool = True, family: Family = CROWD_BT, engine: Engine = "auto",
               remedy: Remedy | None = None) -> Built:  # fmt: skip
    """The covariance of kind ``ci`` of a fit without covariate columns (plain Crowd-BT's, a
    tie model's) whose rows per cluster are ``pairs`` (its estimate ran on their sums over
    clusters): the one path of :func:`fit_design`'s intervals (see :func:`_built`; the
    clusters' passes over ``pairs``, CR2 by :func:`ratings.inference.small.working_inference`),
    by :func:`design_builder` for this fit alone.
    With ``remedy`` None (plain Crowd-BT) in its open-intervals mode: infinite variances on
    ``fit.free`` where the likelihood's information is singular there (or only by rounding),
    the ratings the prior alone makes finite; else a singular information raises
    :class:`NonIdentifiableError` worded by ``remedy``. Per verdict unless ``clustered``;
    ``eta_prior`` False leaves the prior on eta out of CR2's bread (what the verdicts alone say
    about eta)."""
    built = design_builder(pair_design(pairs.collapsed(engine=engine), engine), engine=engine,
                           remedy=remedy, family=family, pairs=pairs, clustered=clustered)
    return built(fit, ci, eta_prior)


def unit_df(fit: DesignFit, at: NDArray[np.int64], df=None):
    """The degrees of freedom of the parameters ``at`` one by one: their CR2 (Satterthwaite)
    df where the fit has CR2 inference, else ``df`` (None: the normal)."""
    if fit.inference is None:
        return df
    c = np.zeros((len(at), fit.params.size))
    c[np.arange(len(at)), at] = 1.0
    return fit.inference.df(c)


def wald(est: NDArray[np.float64], se: NDArray[np.float64], level: float,
         df=None) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Wald intervals and two-sided p-values of estimates ``est`` with standard errors ``se``:
    (lower, upper, p), Student t with ``df`` degrees of freedom (one, or one per estimate;
    None or infinite: the normal)."""
    from scipy.special import ndtr, stdtr

    from ratings.core.tdist import critical_value

    df = np.inf if df is None else np.where(np.isfinite(df), df, np.inf)
    crit, finite = critical_value(level, df), np.isfinite(df)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(est / se)
        p = np.where(finite, 2.0 * stdtr(np.where(finite, df, 1.0), -t), 2.0 * ndtr(-t))
    return est - crit * se, est + crit * se, p


def _open(fit: DesignFit) -> Built:
    """Infinite variances on ``fit.free`` (zero elsewhere and off the diagonal)."""
    q = fit.params.size
    out = np.zeros((q, q))
    out[fit.free, fit.free] = np.inf
    return Built(out)


def _built(fit: DesignFit, design: _Design, ci: str, *, eta_prior: bool = True,
           ridge: float = 0.0, n_ridge: int | None = None,
           remedy: Remedy | None = COVARIATES) -> Built:  # fmt: skip
    """The covariance of kind ``ci`` over all params, from the one inference builder
    (:func:`ratings.inference.builder.build`): the bread (:func:`_bread_information`), the
    scores (:meth:`_Design.scores`) and, for CR2, the working rows (:func:`_cr2`). A singular
    information raises :class:`NonIdentifiableError` worded by ``remedy``, or with ``remedy``
    None (plain Crowd-BT) gives open intervals (:func:`_open`), as where the likelihood's
    information is singular or positive definite only by rounding
    (:func:`~ratings.inference.covariance.identified_inverse`). ``eta_prior`` False: CR2's bread
    without the prior on eta (:func:`_bread_information`)."""
    from ratings.inference.builder import build
    from ratings.inference.covariance import identified_inverse, inverse_free

    free = fit.free
    design.estimated = fit.estimated
    design.live = fit.live
    try:
        if remedy is None:
            identified_inverse(fit.information, free)
        info = _bread_information(fit, design, ci, ridge,
                                  fit.n_features if n_ridge is None else n_ridge, eta_prior)
        bread = inverse_free(info, free)
    except np.linalg.LinAlgError:
        if remedy is None:
            return _open(fit)
        raise NonIdentifiableError(remedy.singular()) from None
    try:
        return build(bread, ci, design.scores(fit.params), n_clusters=design.n_clusters
                     if design.clusters is not None else None,
                     cr2=lambda: _cr2(fit.params, free, bread, design),
                     cluster_name=getattr(design.pairs, "cluster_name", None))  # fmt: skip
    except np.linalg.LinAlgError:  # CR2's bread positive definite only by rounding
        if remedy is None:
            return _open(fit)
        raise


def _bread_information(fit: DesignFit, design: _Design, ci: str, ridge: float, n_ridge: int,
                       eta_prior: bool = True) -> NDArray[np.float64]:  # fmt: skip
    """The matrix whose inverse is the bread; Bradley-Terry's is the Hessian itself (observed
    and expected information agree).

    * CR2 (clustered ``ci="sandwich"``): the working model's expected (Fisher) information,
      the design rows a x_r + b e_eta of :meth:`_Design.working`, plus the prior's curvature
      (the strengths' part only without ``eta_prior``: a one-judge posterior mode, whose profile
      widening, :mod:`ratings.models.crowd.onejudge`, stands for eta's uncertainty, and the
      judges' own intervals) and the ridge: the
      sandwich of a penalised estimate (le Cessie & van Houwelingen 1992), the posterior mode's
      sampling variance to first order. The observed information of the Crowd-BT mixture is
      not the expected one on small boards, and the CR2 leverages are the working model's: with
      the observed Hessian the 6-model boards of ``benchmarks_perf/style_coverage.py`` covered
      0.87 where plain Crowd-BT covers 0.94.
    * CR1 / HC0 / model-based: the observed information with the strengths' prior only
      (:attr:`DesignFit.information`: the prior on eta keeps it off the boundary but is not
      information about it, as standard errors of bias-reduced estimates come from the
      likelihood's own information; Firth 1993, Kosmidis & Firth 2021).
    """
    if not design.crowd:
        return fit.hessian
    if ci != "sandwich" or design.clusters is None:
        return fit.information
    a, b = design.working(fit.params)
    info = design.quad(a * a, a * b, b * b)
    if ridge:
        at = design.m + np.arange(n_ridge)
        info[at, at] += ridge
    return info + (fit.prior_hessian if eta_prior else fit.bread_penalty)


def _pair_terms(family: Family, k, params, m: int, d: Comparisons) -> tuple:
    """A tie family's (score_d, score_x, info_dd, info_dx, info_xx) of each row of ``d`` (one
    slot): the terms depend on the pair of models alone, and its expected information on the
    verdicts' number alone, so they are computed once per pair met (one verdict of each
    outcome) and combined with the rows' counts."""
    key = d.ii * m + d.jj
    pairs = np.flatnonzero(np.bincount(key, minlength=m * m))
    one, zero = np.ones(pairs.size), np.zeros(pairs.size)
    slot = np.zeros(pairs.size, dtype=np.int64)
    unit = [family.row_terms(k, params[:m], params[m:], pairs // m, pairs % m, slot, *w, False)
            for w in ((one, zero, zero), (zero, one, zero), (zero, zero, one))]  # fmt: skip
    at = np.empty(m * m, dtype=np.int64)
    at[pairs] = np.arange(pairs.size)
    at = at[key]
    counts = (d.wi, d.wj, d.tt)
    score_d, score_x = (sum(w * t[c][at] for w, t in zip(counts, unit, strict=True))
                        for c in (1, 2))  # fmt: skip
    n = d.wi + d.wj + d.tt
    return score_d, score_x, *(n * unit[0][c][at] for c in (3, 4, 5))


def _cr2(params, free, bread, design: _Design) -> ClusterInference:
    """CR2 influences and the Satterthwaite pieces, as every clustered fit of the package gets
    them, from the working rows (:class:`ratings.inference.working.WorkingRows`): without
    covariate columns over ``design.pairs`` by
    :func:`ratings.inference.small.working_inference` (the sparse, exact or series path by
    cost); with them, with the covariate block (a tie model's from
    :func:`ratings.inference.ties.tie_working`) by the dense
    :func:`ratings.inference.cluster.cluster_inference`: exact (one eigen-decomposition of the
    whitened S_g = L^T H_g L per cluster) while that costs at most
    :data:`ratings.inference.EXACT_BUDGET`; past it, (I - M H_g)^(-1/2) M g_g by its binomial
    series (products H_g v for all clusters in one pass over the rows), clusters whose series
    does not settle decomposed exactly, and the degrees of freedom from each cluster's
    quadratic forms (the package's large-board approximation)."""
    from ratings.core.linalg import block
    from ratings.inference.cluster import cluster_inference
    from ratings.inference.small import working_inference
    from ratings.inference.ties import tie_working
    from ratings.inference.working import WorkingRows

    bread, d, m = block(bread, free), design.pairs, design.m
    r = design.rows if d is None else d  # the rows the working rows stand for
    x, style = (r.x, design.sk) if d is None else (None, None)
    if design.one_slot:  # a tie model: two working rows per row
        terms = (design.terms(params, False)[1:6] if d is None
                 else _pair_terms(design.family, design.k, params, m, d))  # fmt: skip
        working, residual = tie_working(r, terms[2:], None if d is None else terms[:2], x=x,
                                        style=style)  # fmt: skip
    else:
        a, b = design.working(params, d)
        working = WorkingRows(r.ii, r.jj, design.slots(r.judge), r.cluster, a, b, r.n_clusters,
                              design.n_params, m, x=x, style=style)  # fmt: skip
        if d is not None:  # row r's score is e_r x_r
            t = design.family.row_terms(design.k, params[:m], params[m:], d.ii, d.jj, d.judge,
                                        d.wi, d.wj, d.tt, False)  # fmt: skip
            with np.errstate(divide="ignore", invalid="ignore"):
                residual = np.where(a != 0, t.score_d / a,
                                    np.where(b != 0, t.score_x / b, 0.0))  # fmt: skip
    if d is not None:  # rows per cluster without covariates: the row residuals
        return working_inference(working, residual, free, bread, d)
    return cluster_inference(working, design.cluster_scores(params), free, clusters=r.clusters,
                             bread=bread)  # fmt: skip
