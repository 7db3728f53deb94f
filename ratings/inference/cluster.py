"""The CR2 sandwich and per-contrast degrees of freedom of one clustered fit (see
:mod:`ratings.inference`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property, partial

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.errors import option
from ratings.core.linalg import embed
from ratings.core.threads import CONCURRENT_ROWS, matmul, row_blocks, run, workers
from ratings.inference.batched import (
    Basis,
    basis,
    batched_df,
    dense_basis,
    exact_cost,
    pair_forms,
    terms,
)
from ratings.inference.satterthwaite import (
    DEGENERATE,
    one_direction,
    pair_contrasts,
    reference_contrasts,
    satterthwaite,
    with_known_variance,
)
from ratings.inference.working import CELLS_PER_VERDICT, WorkingRows, kernels, lifted

__all__ = [
    "EXACT_BUDGET",
    "ClusterInference",
    "Designs",
    "check_clusters",
    "cluster_inference",
    "cr2_plan",
    "decomposed",
    "loaded_kernel",
    "readonly",
    "use_small_path",
]

#: Flops (roughly) up to which the clusters' leverages are decomposed exactly and the degrees of
#: freedom of the models' contrasts are computed exactly.
EXACT_BUDGET = 3e8
#: Most series terms before a cluster is decomposed exactly instead.
SERIES_TERMS = 60
#: Series terms are summed until every cluster's next one is below this fraction of its
#: influence (measured, or predicted ten times below it from the last two terms' ratio).
SERIES_TOL = 1e-10
#: A series term predicted below this fraction of every cluster's influence is multiplied by
#: the bread in single precision (its relative rounding, about 1e-6 after a P-long sum, then
#: changes the influences by under SERIES_TOL; twice as fast as double on one core). At 1e-4
#: the covariance of a 7-model board moved by 1e-8 against the exact path.
SINGLE_BELOW = 1e-5
#: The sparse path's batched exact df's flops (BLAS products) allowed per unit of
#: :data:`EXACT_BUDGET` (:meth:`ClusterInference.df_plan`: 6e8, about 0.1 s on one core of a
#: 2-core machine, measured in ``bench_shapes.py``).
BATCHED_RATIO = 2.0
#: Most cells (3 x distinct designs x free coordinates^2) of the sparse path's exact df basis.
MAX_BASIS_CELLS = 20_000_000
#: Most cells (merged designs x contrasts) of the clusters' shares held for the one-direction
#: df (the ratings' and then the pairs', from one pass over the rows).
SHARED_SHARES_CELLS = 8_000_000
#: Most cells of the clusters' leverage blocks (sum of R_g^2) held by the sparse path.
MAX_BLOCK_CELLS = 50_000_000
#: Terms of the dense path's binomial series counted in its cost (it stops once the terms are
#: below 1e-10 of the influences; a few tens on boards where it runs).
SERIES_COST_TERMS = 20


@dataclass(frozen=True, eq=False)
class Designs:
    """The clusters' distinct designs (:func:`~ratings.inference.batched.distinct_designs`) on
    the sparse path: their ``rows``, ``weight`` (clusters per design), each cluster's design
    ``group_of``, and the designs' CR2 blocks ``f`` = (I - H_gg)^(-1/2) (flattened row-major,
    one design after another)."""

    rows: WorkingRows
    weight: NDArray[np.float64]
    group_of: NDArray[np.int64]
    f: NDArray[np.float64]


def _f(lam: NDArray[np.float64]) -> NDArray[np.float64]:
    """(1 - lambda)^(-1/2), with degenerate leverages (lambda -> 1) set to 1 (flagged apart)."""
    return np.where(lam < 1.0 - DEGENERATE, 1.0 / np.sqrt(np.clip(1.0 - lam, DEGENERATE, None)),
                    1.0)  # fmt: skip


def _eigen(w: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Nonzero eigenpairs (Q, lambda) of S = w^T w from the smaller Gram matrix of ``w``."""
    r, p = w.shape
    if r < p:
        lam, u = np.linalg.eigh(w @ w.T)
        keep = lam > 1e-12 * max(1.0, float(lam[-1]) if lam.size else 1.0)
        q = (w.T @ u[:, keep]) / np.sqrt(lam[keep])
        return q, lam[keep]
    lam, q = np.linalg.eigh(w.T @ w)
    keep = lam > 1e-12 * max(1.0, float(lam[-1]) if lam.size else 1.0)
    return q[:, keep], lam[keep]


@dataclass(frozen=True, eq=False)
class ClusterInference:
    """CR2 covariance and Satterthwaite degrees of freedom of one clustered fit, on whichever
    path its clusters' shape took (:attr:`shape`).

    Coordinates: ``n_params`` parameters (models, then Crowd-BT judge qualities), of which
    ``free`` have a covariance (the reference model and fixed etas are known). Contrasts are
    rows of an array over all ``n_params`` (or over the models only); they should sum to zero
    over the models (differences of ratings), which makes them independent of the reference.

    The dense paths hold the G x P CR2-adjusted influences (``influence_free``) and, when
    exact, the clusters' eigenpairs (``eig_q``, ``eig_lam``); the sparse path of many small
    clusters (:mod:`ratings.inference.small`) holds the covariance as ``meat`` (P x P, over
    ``free``), each row's CR2-adjusted working ``residual`` and the clusters' distinct
    ``designs`` with their CR2 blocks instead.

    ``extra`` (R x n_params, optional) is a variance term outside the clusters, added as
    ``extra.T @ extra`` to the covariance: the two-step term of Crowd-BT judge qualities reused
    from an earlier fit (:func:`ratings.inference.builder.two_step_factor`). It is treated
    as known (infinite degrees of freedom) in the Welch-Satterthwaite combination
    df = df_CR2 (1 + v_extra / v_CR2)^2 (Satterthwaite 1946). :meth:`influence` leaves it out.
    """

    n_params: int
    n_models: int
    free: NDArray[np.int64]
    bread: NDArray[np.float64]  # M = H^-1 (P x P) over the free coordinates
    rows: WorkingRows  # the fit's working rows (the one-direction df pass over them)
    clusters: pd.Index | None
    degenerate: NDArray[np.float64]  # k x P whitened directions of leverage 1
    influence_free: NDArray[np.float64] | None = None  # G x P CR2-adjusted influences (dense)
    eig_q: tuple | None = None  # per cluster Q_g (P x r_g) of S_g (dense exact path)
    eig_lam: tuple | None = None  # per cluster lambda_g
    meat: NDArray[np.float64] | None = None  # sum_g w_g w_g^T over ``free`` (sparse)
    residual: NDArray[np.float64] | None = None  # each row's CR2-adjusted residual (sparse)
    designs: Designs | None = None  # the distinct designs and their CR2 blocks (sparse)
    factor: NDArray[np.float64] | None = None  # ``chol`` when already computed
    extra: NDArray[np.float64] | None = None

    @property
    def shape(self) -> str:
        """The path the CR2 pieces took: ``"sparse"`` (many small clusters), ``"exact"`` (one
        eigen-decomposition per cluster) or ``"series"`` (past :data:`EXACT_BUDGET`)."""
        if self.designs is not None:
            return "sparse"
        return "series" if self.eig_q is None else "exact"

    @cached_property
    def chol(self) -> NDArray[np.float64]:
        """L (P x P) with M = L L^T: the whitening of the exact path and of degenerate
        directions (a large board without degenerate clusters never needs it)."""
        return np.linalg.cholesky(self.bread) if self.factor is None else self.factor

    @property
    def exact(self) -> bool:
        """Exact degrees of freedom of the ratings (False: the one-direction approximation)."""
        return self.df_plan(self.n_models)[0] == "exact"

    @property
    def n_clusters(self) -> int:
        return self.rows.n_clusters

    def covariance(self, known: bool = True) -> NDArray[np.float64]:
        """CR2 covariance over all parameters (zero outside ``free``), with :attr:`extra`
        unless ``known`` is false."""
        from ratings.inference.covariance import bread_meat_bread, gram_embedded

        if self.meat is None:  # the influences' Gram matrix mirrored where it is embedded
            out = gram_embedded(self.influence_free, self.free, self.n_params)
        else:
            out = embed(bread_meat_bread(self.bread, self.meat), self.free, self.n_params)
        if known and self.extra is not None:
            out += self.extra.T @ self.extra
        return out

    def with_extra(self, extra: NDArray[np.float64] | None) -> ClusterInference:
        """The same inference with the variance term ``extra`` (see the class notes)."""
        return self if extra is None else replace(self, extra=np.atleast_2d(extra))

    def _welch(self, df: NDArray[np.float64], variance) -> NDArray[np.float64]:
        """``df`` of contrasts combined with :attr:`extra` (Welch-Satterthwaite), ``variance``
        giving the contrasts' variances under a covariance over all n_params."""
        if self.extra is None:
            return df
        return with_known_variance(df, variance(self.covariance(known=False)),
                                   variance(self.extra.T @ self.extra))  # fmt: skip

    def influence(self) -> NDArray[np.float64] | None:
        """CR2-adjusted influence of each cluster on all parameters (G x n_params); the
        covariance is ``influence.T @ influence``. On the sparse path built on request, and
        None past :data:`ratings.core.memory.MAX_INFLUENCE_CELLS` (the covariance does not
        need them)."""
        from ratings.core.memory import MAX_INFLUENCE_CELLS

        if self.influence_free is not None:
            out = np.zeros((self.n_clusters, self.n_params))
            out[:, self.free] = self.influence_free
            return out
        if self.n_clusters * self.n_params > MAX_INFLUENCE_CELLS:
            return None
        return np.asarray(self._adjusted_scores() @ embed(self.bread, self.free, self.n_params))

    def scaled(self, factor: float) -> ClusterInference:
        """The same inference with the CR2 influences times ``factor`` (the covariance's
        clustered part times ``factor ** 2``; degrees of freedom unchanged)."""
        if self.meat is not None:
            return replace(self, meat=self.meat * factor**2, residual=self.residual * factor)
        return replace(self, influence_free=self.influence_free * factor)

    def contrasted_influence(self, contrasts) -> NDArray[np.float64]:
        """Each cluster's CR2-adjusted influence on each contrast, (G x C): ``influence() @
        contrasts.T`` (contrasts over all parameters or the models only; on the sparse path
        without the G x P influences)."""
        c = self._free_contrasts(contrasts)
        if self.influence_free is not None:
            return self.influence_free @ c.T
        return np.asarray(self._adjusted_scores() @ self._directions(c))

    def _adjusted_scores(self):
        """The sparse path's CR2-adjusted cluster scores X_g^T e*_g, a sparse G x n_params
        matrix (its influences are these times the bread)."""
        from scipy.sparse import csr_matrix

        rows = self.rows
        s = rows.a * self.residual
        at, cols, vals = [rows.cluster] * 2, [rows.ii, rows.jj], [s, -s]
        if rows.b.size:
            at, cols = [*at, rows.cluster], [*cols, rows.n_models + rows.judge]
            vals.append(rows.b * self.residual)
        return csr_matrix((np.concatenate(vals), (np.concatenate(at), np.concatenate(cols))),
                          shape=(rows.n_clusters, rows.n_params))  # duplicates summed

    def _free_contrasts(self, contrasts) -> NDArray[np.float64]:
        c = self._all_params(np.atleast_2d(np.asarray(contrasts, dtype=np.float64)))
        if c.shape[1] != self.n_params:
            raise ValueError(f"Contrasts need {self.n_params} (or {self.n_models}) columns; "
                             f"got {c.shape[1]}.")  # fmt: skip
        return c[:, self.free]

    def _all_params(self, c: NDArray[np.float64]) -> NDArray[np.float64]:
        """Contrasts over the models only, padded with zeros to all parameters."""
        if c.shape[1] != self.n_models or self.n_params == self.n_models:
            return c
        return np.hstack([c, np.zeros((c.shape[0], self.n_params - c.shape[1]))])

    def undefined(self, contrasts) -> NDArray[np.bool_]:
        """Contrasts along a direction that one cluster alone determines (no clustered
        variance)."""
        if not self.degenerate.size:
            return np.zeros(np.atleast_2d(contrasts).shape[0], dtype=bool)
        return _along(self._free_contrasts(contrasts) @ self.chol, self.degenerate)

    def _model_rows(self) -> NDArray[np.float64]:
        """``L^T e_m`` for each model m (as rows; zero for the reference), shape (M x P)."""
        lf = np.zeros((self.n_models, self.free.size))
        model_free = self.free[self.free < self.n_models]  # the free models come first
        lf[model_free] = self.chol[: model_free.size]
        return lf

    def _directions(self, c: NDArray[np.float64]) -> NDArray[np.float64]:
        """B c for contrasts ``c`` (rows, over ``free``), as columns over all parameters."""
        return lifted(matmul(self.bread, c.T), self.free, self.n_params)

    def omega(self, contrasts) -> NDArray[np.float64]:
        """Each cluster's share of each contrast's model-based variance,
        omega_g = c^T M H_g M c, shape (C x G)."""
        c = self._free_contrasts(contrasts)
        if self.eig_q is None:  # a pass over every row per contrast
            return self.rows.quadratic(self._directions(c)).T
        cbar = c @ self.chol  # rows: L^T c
        return np.column_stack([(cbar @ q) ** 2 @ lam if lam.size else np.zeros(c.shape[0])
                                for q, lam in zip(self.eig_q, self.eig_lam, strict=True)])

    def factors(self, contrasts) -> tuple:
        """``(omega, d, Y)`` of each contrast: omega, d (C x G) and Y (C x G x P) as in the
        module notes (exact df only), from the basis over the clusters' eigenpairs or their
        distinct designs (:func:`ratings.inference.batched.terms`)."""
        omega, d, y = terms(self._basis, self._free_contrasts(contrasts))
        if self.designs is None:
            return omega, d, y
        of = self.designs.group_of
        return omega[:, of], d[:, of], y[:, of]

    def df(self, contrasts) -> NDArray[np.float64]:
        """Satterthwaite degrees of freedom of each contrast (NaN where undefined): exact from
        the basis (:mod:`ratings.inference.batched`) where :meth:`df_plan` says so, else the
        one-direction approximation."""
        c = self._all_params(np.atleast_2d(np.asarray(contrasts, dtype=np.float64)))
        cf = self._free_contrasts(c)
        out = batched_df(self._basis, cf) if self._exact_for(c.shape[0]) else self._approx_df(cf)
        out = self._welch(out, lambda cov: np.sum((c @ cov) * c, axis=1))
        out[self.undefined(c)] = np.nan
        return out

    def df_plan(self, n_contrasts: int, pairs: bool = False) -> tuple[str, str]:
        """The df path of ``n_contrasts`` contrasts (``pairs``: every pair's) and why:
        ``"exact"`` (:mod:`ratings.inference.batched`) or ``"one-direction"``. The dense exact
        path stays exact while the pairs' cost is within :data:`EXACT_BUDGET`; the sparse path
        while the batched formula's (:func:`~ratings.inference.batched.exact_cost`, BLAS
        products over the distinct designs) is within :data:`BATCHED_RATIO` times it; the
        series path never is."""
        g, p = self.n_clusters, self.free.size
        if self.shape == "series":
            return ("one-direction", "series path: each cluster's share of omega from the rows "
                    "merged by design, the pairs' summed from the ratings' (streamed)")  # fmt: skip
        if self.shape == "exact":
            cost = n_contrasts * g * p * min(g, p)
            if not pairs or cost <= EXACT_BUDGET:
                return "exact", (f"dense path: the basis of {g:,} clusters' eigenpairs, "
                                 f"{n_contrasts:,} contrasts")  # fmt: skip
            return "one-direction", (f"dense path, pairs' ~{cost:.2g} flops past "
                                     f"{EXACT_BUDGET:.2g}: each pair's exact omega")
        d = self.designs.rows
        batched, budget = exact_cost(d.ii.size, d.n_clusters, p, n_contrasts), (
            BATCHED_RATIO * EXACT_BUDGET)
        what = (f"{d.n_clusters:,} designs of {g:,} clusters, {d.ii.size:,} rows, {p} free: "
                f"batched ~{batched:.2g} flops")  # fmt: skip
        if batched <= budget and 3 * d.n_clusters * p * p <= MAX_BASIS_CELLS:
            return "exact", f"{what}; within {budget:.2g}"
        return "one-direction", f"{what}; past {budget:.2g}"

    def _exact_for(self, n_contrasts: int, pairs: bool = False) -> bool:
        """Whether the df of ``n_contrasts`` contrasts (``pairs``: every pair) are exact."""
        return self.df_plan(n_contrasts, pairs)[0] == "exact"

    @cached_property
    def _basis(self) -> Basis:
        """The exact df's basis over the clusters' eigenpairs or distinct designs."""
        d = self.designs
        if d is None:
            return dense_basis(self.eig_q, self.eig_lam, self.chol, DEGENERATE)
        return basis(d.rows, d.weight, d.f, self.free, self.bread, self.chol)

    def _approx_df(self, c: NDArray[np.float64]) -> NDArray[np.float64]:
        """The one-direction approximation of contrasts ``c`` (rows over ``free``;
        :func:`satterthwaite` without ``y``) from each cluster's share, over the clusters
        merged by design (:attr:`~ratings.inference.working.WorkingRows.merged`: alike
        clusters have alike shares). The shares are held (for the pairs' df, which ask for the
        same contrasts) up to :data:`SHARED_SHARES_CELLS` or with covariates; else streamed,
        tr = sum_g omega_g = v^T H v from the information."""
        groups, weight, _ = self.rows.merged
        held = self._held_shares(c)  # the pairs' df (or the fit, ahead), read first, made them
        if held is not None:
            return satterthwaite(held[0].T, None, None, weight)
        if _holds_shares(groups, c.shape[0]):
            self.hold_shares(shares := _shares(groups, self.bread, self.free, self.n_params, c))
            return satterthwaite(shares[1].T, None, None, weight)
        v = self._directions(c)
        vf = v[self.free]
        tr = np.sum(vf * (self.information @ vf), axis=0)
        cells = groups.ii.size * max(c.shape[0], 1)
        k = kernels(cells // CELLS_PER_VERDICT)
        starts = groups.starts

        def part(lo: int, hi: int) -> NDArray[np.float64]:  # the sums add over clusters
            return k.small_shares(starts[lo:hi + 1], groups.ii, groups.jj, groups.judge,
                                  groups.a, groups.b, groups.n_models, v, tr, DEGENERATE,
                                  weight[lo:hi])  # fmt: skip

        split = workers() if cells >= CONCURRENT_ROWS * CELLS_PER_VERDICT else 1
        sums = sum(run([partial(part, lo, hi) for lo, hi in row_blocks(starts.size - 1, split)]))
        return one_direction(sums.T, tr)

    @cached_property
    def information(self) -> NDArray[np.float64]:
        """sum_g H_g over the free coordinates (from the merged rows: the same sum)."""
        groups, weight, _ = self.rows.merged
        return groups.information(weight[groups.cluster])[np.ix_(self.free, self.free)]

    def pair_df(self) -> NDArray[np.float64]:
        """Degrees of freedom of every difference of two models, (M x M), NaN on the diagonal.

        Exact while :meth:`df_plan` says so for every pair; beyond it the one-direction
        approximation (see the module notes) with each pair's exact omega where the ratings'
        df are exact, else with omega of s_j - s_k taken as the sum of omega of s_j - mean and
        s_k - mean (their cross term left out), streamed over the clusters.
        """
        m = self.n_models
        jj, kk = np.triu_indices(m, 1)
        out = np.full((m, m), np.nan)
        if self._exact_for(jj.size, pairs=True):
            out[jj, kk] = out[kk, jj] = self.df(pair_contrasts(m, jj, kk))
            return out
        if self.exact:
            out[jj, kk] = out[kk, jj] = satterthwaite(self._pair_omega(jj, kk), None, None,
                                                      self._basis.weight)  # fmt: skip
        else:
            from ratings.inference.pairdf import streamed_pairs_df

            c = _centred(self.n_models, self.n_params, self.free)
            if self._held_shares(c) is None and _holds_shares(self.rows.merged[0], c.shape[0]):
                self._approx_df(c)  # the ratings' shares, held for their df: one pass, not two
            out = streamed_pairs_df(self.rows, self._directions(c), self._held_shares(c))
            np.fill_diagonal(out, np.nan)
        if self.extra is not None:  # Welch-Satterthwaite with the extra term, pair by pair
            out[jj, kk] = out[kk, jj] = self._welch(out[jj, kk],
                                                    lambda v: _pair_variance(v, jj, kk))
        if self.degenerate.size:  # pairs along a direction one cluster alone determines
            lf = self._model_rows()
            und = np.concatenate([_along(lf[jj[lo:lo + 4096]] - lf[kk[lo:lo + 4096]],
                                         self.degenerate)
                                  for lo in range(0, jj.size, 4096)])  # fmt: skip
            out[jj[und], kk[und]] = out[kk[und], jj[und]] = np.nan
        return out

    def _held_shares(self, c: NDArray[np.float64]) -> tuple | None:
        """The merged designs' shares of contrasts ``c`` and their weights, when held
        (:meth:`hold_shares`), as :func:`~ratings.inference.pairdf.streamed_pairs_df` reads them."""
        for held, u in self._held():
            if np.array_equal(held, c):
                return u, self.rows.merged[1]
        return None

    def hold_shares(self, shares) -> None:
        """Keep the merged designs' shares ``(c, u)`` of contrasts ``c`` for the df that read
        them (:meth:`_held_shares`): the last two kept, the ratings' (anchored or centred)
        and the centred ones every pair's df are summed from. ``shares`` may still be being
        computed (a :class:`~ratings.core.threads.Pending`): then they are waited for when a
        df (or pickling) first needs them."""
        held = self._held()
        held[:] = [*held[-1:], shares]

    def _held(self) -> list:
        """The shares held (:meth:`hold_shares`), those still being computed waited for."""
        held = self.__dict__.setdefault("_shares_held", [])
        held[:] = [s if isinstance(s, tuple) else s.result() for s in held]
        return held

    def __getstate__(self) -> dict:
        self._held()  # (no job pickled)
        return self.__dict__

    def _pair_omega(self, jj: NDArray[np.int64], kk: NDArray[np.int64]) -> NDArray[np.float64]:
        """Exact omega (pairs x designs) of every s_j - s_k, entries of the basis' forms."""
        at = np.full(self.n_models, self.free.size)  # a fixed model: the forms' zero row
        models = self.free[self.free < self.n_models]
        at[models] = np.arange(models.size)
        return pair_forms(self._basis, at[jj], at[kk])[0].T


def _centred(n_models: int, n_params: int, free: NDArray[np.int64]) -> NDArray[np.float64]:
    """The centred contrasts e_m - mean of the models (the ratings' without an anchor, those
    every pair's df is summed from), over the ``free`` coordinates."""
    c = reference_contrasts(n_models, None)
    if n_params > n_models:
        c = np.hstack([c, np.zeros((n_models, n_params - n_models))])
    return c[:, free]


def _shares(groups: WorkingRows, bread: NDArray[np.float64], free: NDArray[np.int64],
            n_params: int, c: NDArray[np.float64]) -> tuple:  # fmt: skip
    """``(c, u)``: each merged design's share u (designs x contrasts) of the model-based
    variance of the contrasts ``c`` (rows over ``free``), omega = v^T H_g v with v = M c."""
    return c, groups.quadratic(lifted(matmul(bread, c.T), free, n_params))


def _start_shares(rows: WorkingRows, free: NDArray[np.int64], bread: NDArray[np.float64]):
    """The merged designs' shares of the centred contrasts (:func:`_centred`) started on the
    package's pool (:func:`ratings.core.threads.start`), or None: on one thread, or where the
    df would stream them rather than hold them. They need the bread and the working rows, not
    the CR2 influences, so they are computed beside the series (both mostly GIL-free NumPy);
    the ratings' df (centred) and every pair's then read them."""
    from ratings.core.threads import start
    from ratings.kernels.engine import resolve

    if workers() < 2 or rows.x is not None:
        return None
    groups = rows.merged[0]  # (made here, not beside the series' own passes over the rows)
    c = _centred(rows.n_models, rows.n_params, free)
    if not _holds_shares(groups, c.shape[0]) or resolve(
            "auto", groups.quadratic_size(c.shape[0])) == "numba":  # fmt: skip
        return None  # (numba's kernels are not loaded beside the series, which looks for them)
    return start(partial(_shares, groups, bread, free, rows.n_params, c))


def _holds_shares(groups: WorkingRows, n_contrasts: int) -> bool:
    """Are the merged designs' shares of ``n_contrasts`` contrasts held (one pass over the
    rows for the ratings' df and the pairs'), rather than streamed?"""
    return groups.x is not None or groups.n_clusters * n_contrasts <= SHARED_SHARES_CELLS


def _pair_variance(cov: NDArray[np.float64], jj, kk) -> NDArray[np.float64]:
    """Variance of s_j - s_k under ``cov`` for the pairs ``(jj, kk)``."""
    return np.diag(cov)[jj] + np.diag(cov)[kk] - 2.0 * cov[jj, kk]


def _along(cbar: NDArray[np.float64], degenerate: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Whitened contrasts (rows) with a component along a degenerate direction."""
    along = np.abs(cbar @ degenerate.T).max(axis=1)
    return along > 1e-6 * np.maximum(np.linalg.norm(cbar, axis=1), 1e-300)


def cluster_inference(rows: WorkingRows, score: NDArray[np.float64], free: NDArray[np.int64],
                      *, clusters: pd.Index | None = None, bread: NDArray[np.float64],
                      df_ahead: bool = False) -> ClusterInference:  # fmt: skip
    """CR2 pieces of a clustered fit on the dense path: exact (one eigen-decomposition per
    cluster) while :func:`cr2_plan` says so, else the series.

    Parameters
    ----------
    rows : WorkingRows
        Per-cluster rows of the working model at the estimate.
    score : ndarray, shape (G, n_params)
        Each cluster's summed score (log-likelihood gradient).
    free : ndarray of int
        Coordinates with a covariance.
    clusters : pandas.Index, optional
        The clusters' names.
    bread : ndarray, shape (P, P)
        The inverse of the (penalised) information over ``free``.
    df_ahead : bool, default=False
        On the series path, compute what the degrees of freedom of the ratings (centred) and
        of every pair read, the designs' shares of the centred contrasts, on the package's
        pool beside the series (:func:`_start_shares`), for a caller that will ask for them
        (they may still be computed when this returns: the df wait for them).
    """
    pieces = partial(ClusterInference, rows.n_params, rows.n_models, free, bread, rows, clusters)
    if cr2_plan(np.diff(rows.starts), free.size, sparse=False)[0] == "series":
        ahead = _start_shares(rows, free, bread) if df_ahead else None
        influence, degenerate, chol = _series(rows, score, free, bread)  # whitens where it must
        out = pieces(degenerate, influence, factor=chol)
        if ahead is not None:  # still on the pool, maybe: the df wait for them when read
            out.hold_shares(ahead)
        return out
    chol = np.linalg.cholesky(bread)
    qs, lams, influence, degenerate = decomposed(rows, free, chol, np.arange(rows.n_clusters),
                                                 score[:, free])  # fmt: skip
    return pieces(degenerate, influence, qs, lams, factor=chol)


def _decompose(rows, lf, lo: int, hi: int, gbar: NDArray[np.float64]) -> tuple:
    """The cluster of rows ``lo:hi``: eigenpairs (Q, lambda) of its whitened S_g (``lf``: the
    whitening as rows), its CR2-adjusted whitened score f(S_g) ``gbar`` and its directions of
    leverage 1 (rows)."""
    q, lam = _eigen(rows.design(lf, slice(lo, hi)))
    adjusted = gbar + q @ ((_f(lam) - 1.0) * (q.T @ gbar))
    return q, lam, adjusted, q[:, lam >= 1.0 - DEGENERATE].T


def decomposed(rows: WorkingRows, free: NDArray[np.int64], chol: NDArray[np.float64] | None,
               clusters: NDArray[np.int64], score: NDArray[np.float64] | None = None) -> tuple:
    """The ``clusters`` of ``rows`` decomposed exactly in whitened coordinates (``chol``: the
    bread's factor L; None when there are no clusters): the eigenpairs (Q_g, lambda_g) of
    their S_g (tuples), their CR2-adjusted influences L f(S_g) L^T g_g (rows over ``free``;
    ``score``: their summed scores g_g over ``free``, default zero) and their directions of
    leverage 1 (rows over ``free``)."""
    p = free.size
    if not clusters.size:
        return (), (), np.zeros((0, p)), np.zeros((0, p))
    lf, starts = lifted(chol, free, rows.n_params), rows.starts
    gbar = np.zeros((clusters.size, p)) if score is None else score @ chol  # L^T g_g
    qs, lams, adjusted, deg = zip(*(_decompose(rows, lf, starts[g], starts[g + 1], gbar[k])
                                    for k, g in enumerate(clusters)), strict=True)  # fmt: skip
    return qs, lams, np.vstack(adjusted) @ chol.T, np.vstack(deg)


def _series(rows, score, free, bread_free):
    """Adjusted influences f(M H_g) M g_g by the binomial series (large boards); also the
    degenerate directions and the whitening L (None when no cluster needed it).

    Each step carries its term times its coefficient (the products are linear in it, so the
    coefficients' ratio scales it) and is scaled, summed and measured in one pass
    (:func:`~ratings.kernels.inference.series_term`), a single-precision product into the last
    step's memory: on 1,000 models and 1,000 tasks the series is five G x P by P x P products
    (the last three in single precision) and four passes over the rows, little else."""
    g, q = score.shape
    bread = embed(bread_free, free, q)
    bread32 = None
    step = matmul(score, bread)  # influences M g_g, the first term
    total = step  # each later step is a new array: this one is written only as the sum
    scale = np.maximum(_row_norms(step), 1e-300)
    active, last = np.ones(g, dtype=bool), scale
    predicted = np.inf  # the next step's largest size relative to its cluster's influence
    times, add_term = _cluster_times(rows), _series_term(step.size)
    for k in range(1, SERIES_TERMS + 1):
        moved = times(step)
        ratio = (2.0 * k - 1.0) / (2.0 * k)  # of the coefficients: step k is c_k (M H_g)^k M g_g
        if predicted < SINGLE_BELOW:  # a small correction: single precision is exact enough
            bread32 = bread.astype(np.float32) if bread32 is None else bread32
            product = matmul(moved.astype(np.float32), bread32)
            if step is total:
                step = np.empty_like(total)
        else:
            product = step = matmul(moved, bread)
        size = add_term(product, ratio, total, step)  # step = ratio * product, in total
        active = size > SERIES_TOL * scale
        with np.errstate(divide="ignore", invalid="ignore"):
            ahead = np.where(size > 0.0, size * (size / last), 0.0)  # geometric next step
        if not active.any() or np.all(10.0 * ahead <= SERIES_TOL * scale):
            active[:] = False
            break
        predicted = float(np.max(ahead / scale))
        last = np.where(size > 0.0, size, 1.0)
        step[~active] = 0.0  # converged clusters stop contributing
    out = total[:, free]
    todo = np.flatnonzero(active)  # leverage near 1: decompose these clusters exactly
    chol = np.linalg.cholesky(bread_free) if todo.size else None
    _, _, out[todo], degenerate = decomposed(rows, free, chol, todo, score[todo][:, free])
    lone = _lone_directions(rows, free)
    if lone.size:  # the series never sees these: their score is zero in their only cluster
        chol = np.linalg.cholesky(bread_free) if chol is None else chol
        v = np.linalg.solve(chol, lone.T).T
        degenerate = np.vstack([degenerate, v / np.linalg.norm(v, axis=1, keepdims=True)])
    return out, degenerate, chol


def _cluster_times(rows: WorkingRows):
    """``rows.times`` (H_g v_g for every cluster) for the series' passes, or the compiled
    ``cluster_times`` where this process has loaded the inference kernels already (numba's
    start-up is paid then: the degrees of freedom of a large board load them) and that kernel
    runs without compiling, from :data:`~ratings.kernels.engine.AUTO_NUMBA_VERDICTS` rows, the
    engine's threshold once kernels are loaded (the twin is tested equal to it). On 1,000
    models and 1M rows a pass takes 2.8 ms compiled against 9.4 ms in the twin on an idle core,
    four passes a fit."""
    kernel = None if rows.x is not None else loaded_kernel("cluster_times", rows.ii.size)
    if kernel is None:
        return rows.times
    parts = _cluster_parts(rows)

    def part(v, out, c0: int, c1: int, kept: tuple) -> None:
        out[c0:c1] = kernel(*kept, rows.n_models, v[c0:c1])

    def times(v: NDArray[np.float64]) -> NDArray[np.float64]:
        v = np.ascontiguousarray(v)
        if len(parts) == 1:
            return kernel(*parts[0][2], rows.n_models, v)
        out = np.empty_like(v)
        run([partial(part, v, out, *p) for p in parts])
        return out

    return times


def _series_term(cells: int):
    """The series' :func:`~ratings.kernels.inference.series_term` for terms of ``cells``
    cells: compiled where this process has loaded the inference kernels (as
    :func:`_cluster_times`), else its twin (tested equal)."""
    from ratings.kernels import inference_ref

    kernel = loaded_kernel("series_term", cells)
    if kernel is None:
        return inference_ref.series_term

    def term(p, ratio, total, step):  # C-ordered arrays (matmul's): the compiled signatures
        return kernel(p, float(ratio), total, step)

    return term


def _cluster_parts(rows: WorkingRows) -> list[tuple[int, int, tuple]]:
    """Ranges of clusters ``(c0, c1)`` with about equal shares of the rows (rows are sorted
    by cluster), one a worker from :data:`~ratings.core.threads.CONCURRENT_ROWS` rows on, each
    with its rows' arrays as :func:`ratings.kernels.inference.cluster_times` reads them
    (clusters numbered from ``c0``): the pool's threads run the compiled kernel (no GIL) on
    ranges side by side, each cluster's sums as in one pass."""
    n, g = rows.ii.size, rows.n_clusters
    split = workers() if n >= CONCURRENT_ROWS else 1
    starts = rows.starts
    cuts = np.unique(np.searchsorted(starts, np.linspace(0, n, split + 1), side="left"))
    cuts[0], cuts[-1] = 0, g
    out = []
    for c0, c1 in zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True):
        r0, r1 = int(starts[c0]), int(starts[c1])
        b = rows.b[r0:r1] if rows.b.size else rows.b
        judge = rows.judge[r0:r1] if rows.judge.size == n else rows.judge
        cluster = rows.cluster[r0:r1]
        if c0:  # renumbered, read-only where the rows are (the kernel's compiled signature)
            cluster = cluster - c0
            cluster.flags.writeable = rows.cluster.flags.writeable
        out.append((c0, c1, (rows.ii[r0:r1], rows.jj[r0:r1], judge, cluster, rows.a[r0:r1], b)))
    return out if out else [(0, g, (rows.ii, rows.jj, rows.judge, rows.cluster, rows.a, rows.b))]


def loaded_kernel(name: str, size: int):
    """The compiled kernel ``name`` of :mod:`ratings.kernels.inference` for ``size`` rows from
    :data:`~ratings.kernels.engine.AUTO_NUMBA_VERDICTS` (the engine's threshold once kernels
    are loaded), when it runs without compiling, where this process has loaded that module
    already (numba's start-up is paid then: the degrees of freedom of a large board load it)
    or is refitting a large board (:func:`ratings.kernels.engine.refitting`: the second
    request loads it); else None (the caller takes its NumPy twin, tested equal)."""
    import sys

    from ratings.kernels import engine

    if size < engine.AUTO_NUMBA_VERDICTS:
        return None
    compiled = sys.modules.get("ratings.kernels.inference")
    if compiled is None:
        if not engine.refitting(name, size):
            return None
        from ratings.kernels import inference as compiled
    kernel = getattr(compiled, name)
    return kernel if _kernel_ready(kernel) else None


def readonly(*arrays: NDArray) -> tuple[NDArray, ...]:
    """``arrays`` as read-only, C-contiguous int64 or float64 arrays (views, copied only when
    of another type or layout): a compiled kernel then sees the one signature warm-up compiles
    (:func:`ratings.warmup`), whoever made the arrays, and never compiles in a fit."""
    out = []
    for a in arrays:
        a = np.ascontiguousarray(a, dtype=np.int64 if a.dtype.kind in "iub" else np.float64)
        a = a.view()
        a.flags.writeable = False
        out.append(a)
    return tuple(out)


def _kernel_ready(kernel) -> bool:
    """Can the numba ``kernel`` run without compiling (:func:`ratings.kernels.cache.ready`)?"""
    from ratings.kernels.cache import ready

    return ready(kernel)


def _row_norms(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """The Euclidean norm of each row of ``a``."""
    return np.sqrt(np.einsum("ij,ij->i", a, a))


def _lone_directions(rows: WorkingRows, free: NDArray[np.int64]) -> NDArray[np.float64]:
    """Directions u (over ``free``, as rows) with H u = H_g u for a cluster g, from the models
    whose rows all lie in one cluster (a model compared on one task only): e_m for such a free
    model, and the free models' sum for such a model that is not free (the reference), which
    the other clusters leave undetermined. Whitened (L^-1 u) they are leverage-1 directions of
    S_g, found without a decomposition; a contrast along one involves such a model.
    """
    from ratings.inference.working import kernels

    m = rows.n_models
    spans = loaded_kernel("model_clusters", rows.ii.size)
    if spans is None:  # the twin's passes only where some model's rows could fit one cluster
        per_model = np.bincount(rows.ii, minlength=m) + np.bincount(rows.jj, minlength=m)
        largest = int(np.diff(rows.starts).max(initial=0))
        if not np.any((per_model > 0) & (per_model <= largest)):  # each model's rows fill no
            return np.zeros((0, free.size))  # cluster: all in two clusters at least
        spans = kernels(rows.ii.size).model_clusters
    lo, hi = spans(*readonly(rows.ii, rows.jj, rows.cluster), m, rows.n_clusters)
    lone = lo == hi
    pos = np.full(rows.n_params, -1)
    pos[free] = np.arange(free.size)
    models = np.flatnonzero(lone & (pos[:m] >= 0))
    out = np.zeros((models.size, free.size))
    out[np.arange(models.size), pos[models]] = 1.0
    fixed = np.flatnonzero(pos[:m] < 0)
    if fixed.size == 1 and lone[fixed[0]]:
        out = np.vstack([out, (free < m).astype(np.float64)])
    return out


def use_small_path(sizes: NDArray[np.int64], n_free: int) -> bool:
    """Whether clusters of ``sizes`` rows take the sparse path (:func:`cr2_plan`)."""
    return cr2_plan(sizes, n_free)[0] == "sparse"


def cr2_plan(sizes: NDArray[np.int64], n_free: int, sparse: bool = True) -> tuple[str, str]:
    """The CR2 path clusters of ``sizes`` rows take and why: ``"sparse"`` (unless ``sparse`` is
    false) while its blocks' decompositions (sum R_g^3) cost less than the dense path and
    their cells stay within :data:`MAX_BLOCK_CELLS`; else the dense path: ``"exact"`` (one
    eigen-decomposition per cluster and the df's G x P products, sum R_g P min(R_g, P) +
    G P^2 min(G, P)) within :data:`EXACT_BUDGET`, past it ``"series"``
    (:data:`SERIES_COST_TERMS` passes of R P + G P^2)."""
    s, p, g = sizes.astype(np.float64), float(n_free), float(sizes.size)
    exact = float(np.sum(s * p * np.minimum(s, p))) + g * p * p * min(g, p)
    series = SERIES_COST_TERMS * (float(s.sum()) * p + g * p * p)
    cost = float(np.sum(s**3))
    dense = "exact" if exact <= EXACT_BUDGET else "series"
    what = (f"{sizes.size:,} clusters of {s.mean() if s.size else 0:.1f} rows on average, "
            f"{n_free} free: sparse ~{cost:.2g}, dense exact ~{exact:.2g}, series "
            f"~{series:.2g} flops")  # fmt: skip
    small = sparse and float(np.sum(s * s)) <= MAX_BLOCK_CELLS and cost <= (
        exact if dense == "exact" else min(exact, series))
    return ("sparse" if small else dense), what


def check_clusters(n_clusters: int, cluster_name: str | None = None) -> None:
    """Refuse clustered intervals over fewer than 2 clusters (of column ``cluster_name``)."""
    if n_clusters < 2:
        where = f" in `{cluster_name}`" if cluster_name else ""
        raise ValueError(f"Clustered intervals need at least 2 clusters{where}; got "
                         f"{n_clusters}. Use per-verdict intervals "
                         f"({option('cluster', None)}).")  # fmt: skip
