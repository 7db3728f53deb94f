#!/usr/bin/env python
"""Coverage of 95 % intervals for Bradley-Terry and Crowd-BT: which interval type to default to.

A seeded simulation study. Every board is drawn from known strengths and fitted once; every
interval variant below is computed from that one fit with the package's own pieces
(:func:`ratings.bt.fit_bt`, :func:`ratings.crowd.fit_crowd_bt`,
:func:`ratings.uncertainty.sandwich`, :func:`ratings.crowd.crowd_covariance`,
:func:`ratings.uncertainty.cluster_influence`, :func:`ratings.uncertainty.bootstrap_draws`),
so ``model``, ``hc0`` and ``cr1_z`` are exactly what ``ratings.fit`` reports
(``tests/test_coverage.py`` checks this). Coverage is counted for every model vs the anchor
(a mid-board model, strength 0) and for every pairwise difference.

Variants (columns)
------------------
* ``model``: model-based H^-1, normal quantile (``ci="model"``);
* ``hc0``: per-verdict sandwich H^-1 B H^-1, normal quantile (``ci="sandwich", cluster=None``);
* ``cr1_z``: task-clustered sandwich with the G/(G-1) factor and a normal quantile -- what
  ``ratings.fit(ci="sandwich")`` reports today;
* ``cr1_t``: the same covariance with a t quantile on G - 1 degrees of freedom;
* ``cr3_t``: cluster jackknife (CR3, the "CV3" of MacKinnon, Nielsen & Webb 2023),
  V = (G-1)/G sum_c delta_c delta_c^T, where delta_c = (H - H_c)^-1 g_c is the one-step
  leave-one-cluster-out change of the estimate (H the Hessian of the fit, H_c and g_c the
  Hessian and score of cluster c; over the free parameters, (theta, eta) for Crowd-BT), with a
  t quantile on G - 1 degrees of freedom;
* ``cr3_z``: the same jackknife covariance with a normal quantile (separates the two effects);
* ``cr3x_t``: the jackknife from exact leave-one-cluster-out refits (BT warm-started from the
  full fit), t(G - 1); on the first ``--exact-jk`` boards of each small cell (default 200);
* ``boot``: cluster bootstrap percentile interval, as ``ratings.fit(ci="bootstrap")``
  (:func:`ratings.uncertainty.bootstrap_draws`, same refits) with ``--n-boot`` resamples
  (default 200), on the first ``--boot-boards`` boards of each small cell (default 200) and
  ``--boot-boards-large`` of each large cell (default 0: about 13 s per large board).

Cells (rows)
------------
Boards are ``small`` (10 models, strengths evenly spaced on [-1.2, 1.2] (about +-500 Elo),
2,000 verdicts on 40 tasks) or ``large`` (30 models on [-1.5, 1.5], 200,000 verdicts on 400
tasks). Pairs and tasks are uniformly random, about 10 % ties (``tie_rate`` 0.12), anchor ``m05``
(small) / ``m15`` (large). Verdicts sharing a (model, task) submission are made dependent by

* ``rho``: the Gaussian copula of :func:`ratings.simulate.simulate_verdicts` (``task_corr``):
  every marginal win probability stays exactly sigma(s_a - s_b), so the truth is the
  Bradley-Terry parameter itself; or
* ``task_sd``: log-odds submission effects u ~ N(0, task_sd^2) (``task_sd`` of the same
  simulator). These attenuate the Bradley-Terry estimand, so the truth is the pseudo-true value:
  the Bradley-Terry fit of the population win probabilities E sigma(s_a - s_b + u_a - u_b)
  (Gauss-Hermite, equal weight per pair, as the design is uniform).

``bt-small-g20`` is a stress cell beyond the issue's grid: 20 tasks and rho = 0.8. Crowd-BT cells
use three judges in turn with eta = 0.95 / 0.80 / 0.65, estimated jointly with the strengths
(the default fit: weak priors, see :mod:`ratings.crowd_prior`); their ties occur at rate
``TIE_RATE`` whatever the pair, as the Crowd-BT likelihood (which leaves ties out) assumes.

``--crowd`` runs the study of the default Crowd-BT intervals at the edges instead
(``benchmarks_perf/coverage_crowd.py``: boundary boards, judge files, tie rates, weak and
single judges).

Boards without an estimate are counted as failed and left out: non-identifiable ones, Crowd-BT
fits with a singular Hessian (``LinAlgError`` from ``inverse_free``) and runaway Crowd-BT fits
(some |log-strength| > 20, accepted by the package up to 40).

Verdicts are drawn by a vectorised NumPy twin of :func:`ratings.simulate.random_matches` +
:func:`ratings.simulate.simulate_verdicts` (same model and formulas, its own random stream; the
package simulator spends about 0.7 s of a 200k-verdict board in pandas reindexing).
``--simulator package`` uses the package functions instead.

Output
------
``benchmarks_perf/results/validate_coverage.csv`` (one row per cell x target x variant: pooled
coverage, Monte-Carlo standard error from the per-board coverage fractions -- the intervals of
one board are dependent --, median interval width relative to ``cr1_z``, boards, failures) and
``benchmarks_perf/results/validate_coverage.md`` (the tables), both written atomically
(temp file + ``os.replace``).

Usage::

    python benchmarks_perf/validate_coverage.py             # default study (~15 min, 2 jobs)
    python benchmarks_perf/validate_coverage.py --quick     # smoke run (~1 min)
    python benchmarks_perf/validate_coverage.py --boards 2000 --cells bt-small-dep,bt-small-g20
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit, ndtr

import ratings
from ratings import _kernels as K
from ratings.bt import fit_bt
from ratings.crowd import crowd_covariance, fit_crowd_bt, fit_crowd_default
from ratings.data import Comparisons
from ratings.errors import ConvergenceWarning, NonIdentifiableError
from ratings.graph import check_identifiable
from ratings.uncertainty import bootstrap_draws, cluster_influence, inverse_free, sandwich

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE))  # the sibling coverage_ranks, also when loaded by path
from coverage_ranks import (  # noqa: E402
    coverage_flags,
    cr2_coverage,
    rank_markdown,
    rank_metrics,
    rank_rows,
)

OUT_CSV = RESULTS / "validate_coverage.csv"
OUT_MD = RESULTS / "validate_coverage.md"

LEVEL = 0.95
TIE_RATE = 0.12
JUDGE_ETA = {"j1": 0.95, "j2": 0.80, "j3": 0.65}
VARIANTS = ["model", "hc0", "cr1_z", "cr1_t", "cr2_t", "cr3_t", "cr3_z", "cr3x_t", "boot"]
VARIANT_NAMES = {
    "cr2_t": "CR2 with Satterthwaite df per contrast (the default, `ratings.fit`)",
    "model": "model-based H^-1",
    "hc0": "HC0 per verdict",
    "cr1_z": "CR1 G/(G-1), z (`ci=\"sandwich-z\"`)",
    "cr1_t": "CR1 G/(G-1), t(G-1)",
    "cr3_t": "CR3 jackknife (one-step), t(G-1)",
    "cr3_z": "CR3 jackknife (one-step), z",
    "cr3x_t": "CR3 jackknife (exact refits), t(G-1)",
    "boot": "cluster bootstrap percentile",
}
TARGETS = ("anchor", "pairs", "sparse", "sparse_pairs")
#: A fit with some |log-strength| above this is counted as failed ("diverged"): the true ones are
#: within +-1.5, and ``fit_crowd_bt`` accepts runaway fits up to |s| = 40 (see the report).
DIVERGED = 20.0


@dataclass(frozen=True)
class Size:
    n_models: int
    n_verdicts: int
    n_tasks: int
    spread: float  # strengths evenly spaced on [-spread, spread]

    @property
    def models(self) -> list[str]:
        return [f"m{k:02d}" for k in range(self.n_models)]

    @property
    def strengths(self) -> np.ndarray:
        return np.linspace(-self.spread, self.spread, self.n_models)

    @property
    def anchor(self) -> int:
        return self.n_models // 2


SIZES = {"small": Size(10, 2_000, 40, 1.2), "large": Size(30, 200_000, 400, 1.5),
         "sparse": Size(10, 6_000, 200, 1.2)}  # fmt: skip
#: Sparse cells: verdicts of the sparse model per task it is on, and its true strength.
SPARSE_PER_TASK, SPARSE_STRENGTH = 20, 0.45


@dataclass(frozen=True)
class Cell:
    model: str  # "bt" or "crowd-bt"
    size: str
    rho: float = 0.0  # copula task_corr
    task_sd: float = 0.0  # log-odds submission effects (pseudo-true truth)
    judges: dict = field(default_factory=dict)  # judge -> eta (Crowd-BT)
    n_tasks: int | None = None  # override the size's number of tasks
    sparse_tasks: int | None = None  # the last model plays on this many tasks only
    equal: bool = False  # all models equally strong (the least favourable board for ranks)
    extras: bool = True  # also the bootstrap and exact jackknife on some boards

    @property
    def dims(self) -> Size:
        size = SIZES[self.size]
        if self.n_tasks is None:
            return size
        return Size(size.n_models, size.n_verdicts, self.n_tasks, size.spread)

    @property
    def strengths(self) -> np.ndarray:
        """True log-strengths: evenly spaced, all 0 (``equal``), or evenly spaced for the dense
        models and :data:`SPARSE_STRENGTH` for the sparse one (the last)."""
        size = self.dims
        if self.equal:
            return np.zeros(size.n_models)
        if self.sparse_tasks is not None:
            dense = np.linspace(-size.spread, size.spread, size.n_models - 1)
            return np.append(dense, SPARSE_STRENGTH)
        return size.strengths

    @property
    def sparse(self) -> int | None:
        """Index of the sparse model, if any."""
        return None if self.sparse_tasks is None else self.dims.n_models - 1


CELLS: dict[str, Cell] = {
    "bt-small-indep": Cell("bt", "small"),
    "bt-small-dep": Cell("bt", "small", rho=0.5),
    "bt-small-strong": Cell("bt", "small", rho=0.8),
    "bt-small-taskfx": Cell("bt", "small", task_sd=0.5),
    "bt-small-g20": Cell("bt", "small", rho=0.8, n_tasks=20),
    "bt-large-indep": Cell("bt", "large"),
    "bt-large-dep": Cell("bt", "large", rho=0.5),
    "bt-large-strong": Cell("bt", "large", rho=0.8),
    "crowd-small-indep": Cell("crowd-bt", "small", judges=JUDGE_ETA),
    "crowd-small-dep": Cell("crowd-bt", "small", rho=0.5, judges=JUDGE_ETA),
    "crowd-large-dep": Cell("crowd-bt", "large", rho=0.5, judges=JUDGE_ETA),
    # small-sample cells: a model on 3, 6 or 12 of 200 tasks; 20-task boards; equal strengths
    "bt-sparse-3": Cell("bt", "sparse", rho=0.5, sparse_tasks=3, extras=False),
    "bt-sparse-6": Cell("bt", "sparse", rho=0.5, sparse_tasks=6, extras=False),
    "bt-sparse-12": Cell("bt", "sparse", rho=0.5, sparse_tasks=12, extras=False),
    "bt-sparse-6-taskfx": Cell("bt", "sparse", task_sd=0.5, sparse_tasks=6, extras=False),
    "bt-small-g20-dep": Cell("bt", "small", rho=0.5, n_tasks=20, extras=False),
    "crowd-small-g20": Cell("crowd-bt", "small", rho=0.5, judges=JUDGE_ETA, n_tasks=20,
                            extras=False),
    "bt-small-equal": Cell("bt", "small", rho=0.5, equal=True, extras=False),
}
DEFAULT_CELLS = list(CELLS)


# ----------------------------------------------------------------------------------------------
# Simulation
# ----------------------------------------------------------------------------------------------


def simulate(cell: Cell, rng: np.random.Generator, simulator: str = "numpy") -> pd.DataFrame:
    """One board's canonical verdicts: ``model_a, model_b, winner, task_id, judge``."""
    size = cell.dims
    m, n, t = size.n_models, size.n_verdicts, size.n_tasks
    judges = list(cell.judges) or ["judge"]
    if simulator == "package":
        from ratings.simulate import random_matches, simulate_verdicts

        if cell.sparse_tasks is not None or cell.equal:
            raise ValueError("--simulator package runs the original cells only")
        matches = random_matches(size.models, n, n_tasks=t, judges=judges,
                                 seed=int(rng.integers(2**63)))  # fmt: skip
        return simulate_verdicts(
            matches, pd.Series(size.strengths, index=size.models),
            judge_eta=cell.judges or None, task_sd=cell.task_sd, tie_rate=TIE_RATE,
            task_corr=cell.rho, seed=int(rng.integers(2**63)),
        )  # fmt: skip
    # NumPy twin of random_matches + simulate_verdicts (same model, one draw per submission).
    s = cell.strengths
    dense = m if cell.sparse_tasks is None else m - 1
    a = rng.integers(0, dense, n)
    b = (a + rng.integers(1, dense, n)) % dense
    task = rng.integers(0, t, n)
    if cell.sparse_tasks is not None:  # the sparse model on a few tasks, random sides
        k = cell.sparse_tasks * SPARSE_PER_TASK
        st = np.repeat(rng.choice(t, cell.sparse_tasks, replace=False), SPARSE_PER_TASK)
        opp = rng.integers(0, dense, k)
        left = rng.random(k) < 0.5
        a = np.concatenate([a, np.where(left, m - 1, opp)])
        b = np.concatenate([b, np.where(left, opp, m - 1)])
        task = np.concatenate([task, st])
        n = a.size
    judge = np.arange(n) % len(judges)
    d = s[a] - s[b]
    if cell.task_sd > 0:
        u = rng.normal(0.0, cell.task_sd, (t, m))  # one effect per (task, model) submission
        d = d + u[task, a] - u[task, b]
    p = expit(d)
    if cell.judges:
        eta = np.array([cell.judges[j] for j in judges])[judge]
        p = eta * p + (1.0 - eta) * (1.0 - p)
    p_tie = 4.0 * TIE_RATE * p * (1.0 - p)
    if cell.judges:  # Crowd-BT leaves ties out: here they are independent of the pair
        p_tie = np.full(n, TIE_RATE)
    if cell.rho > 0:
        v = rng.standard_normal((t, m))  # copula latent per (task, model) submission
        z = (np.sqrt(cell.rho) * (v[task, a] - v[task, b]) / np.sqrt(2.0)
             + np.sqrt(1.0 - cell.rho) * rng.standard_normal(n))  # fmt: skip
        u01 = ndtr(z)
    else:
        u01 = rng.random(n)
    if cell.judges:
        code = np.where(rng.random(n) < p_tie, 2, np.where(u01 < p, 0, 1))
    else:
        code = np.where(u01 < p - p_tie / 2, 0, np.where(u01 < p + p_tie / 2, 2, 1))
    names = np.asarray(size.models, dtype=object)
    return pd.DataFrame({
        "model_a": names[a], "model_b": names[b],
        "winner": np.array(["A", "B", "tie"], dtype=object)[code],
        "task_id": task, "judge": np.asarray(judges, dtype=object)[judge],
    })  # fmt: skip


def truth(cell: Cell) -> np.ndarray:
    """True (or pseudo-true) log-strengths, anchored at the mid-board model."""
    size = cell.dims
    s = cell.strengths
    if cell.task_sd == 0:
        return s - s[size.anchor]
    # Pseudo-true: BT fit of the population win probabilities under the submission effects,
    # P(a beats b) = E sigma(s_a - s_b + sqrt(2) task_sd Z), equal weight per pair.
    x, w = np.polynomial.hermite_e.hermegauss(80)
    w = w / w.sum()
    m = size.n_models
    ii, jj = np.triu_indices(m, 1)
    pbar = expit(s[ii, None] - s[jj, None] + np.sqrt(2.0) * cell.task_sd * x[None, :]) @ w
    big = 1e4 * _pair_weights(cell, ii, jj)  # expected verdicts per pair (the design)
    data = Comparisons(
        pd.Index(size.models, dtype=object), pd.Index(["judge"], dtype=object), None, None,
        ii, jj, np.zeros(ii.size), np.zeros(ii.size), big * pbar, big * (1 - pbar),
        np.zeros(ii.size),
    )  # fmt: skip
    return fit_bt(data, ref=size.anchor, tol=1e-12).theta


def _pair_weights(cell: Cell, ii: np.ndarray, jj: np.ndarray) -> np.ndarray:
    """Expected share of verdicts per pair: uniform, or for a sparse cell the dense pairs
    sharing the dense verdicts and the sparse model's pairs sharing its own."""
    if cell.sparse_tasks is None:
        return np.ones(ii.size)
    size, sp = cell.dims, cell.sparse
    dense = size.n_models - 1
    with_sparse = (ii == sp) | (jj == sp)
    return np.where(with_sparse, cell.sparse_tasks * SPARSE_PER_TASK / dense,
                    size.n_verdicts / (dense * (dense - 1) / 2)) / size.n_verdicts


# ----------------------------------------------------------------------------------------------
# Interval variants from one fit
# ----------------------------------------------------------------------------------------------


def _cluster_scores(data: Comparisons, p: int, gd: np.ndarray, ge: np.ndarray | None = None
                    ) -> np.ndarray:  # fmt: skip
    """Per-cluster summed score g_c, shape (G, P) (same layout as ``cluster_influence``)."""
    g, m = data.n_clusters, data.n_models
    out = np.zeros(g * p)
    np.add.at(out, data.cluster * p + data.ii, gd)
    np.add.at(out, data.cluster * p + data.jj, -gd)
    if ge is not None:
        np.add.at(out, data.cluster * p + m + data.judge, ge)
    return out.reshape(g, p)


def _bt_cluster_hessians(data: Comparisons, info: np.ndarray) -> np.ndarray:
    """Per-cluster Hessians of the BT negative log-likelihood, shape (G, M, M)."""
    g, m = data.n_clusters, data.n_models
    base = data.cluster * m * m
    idx = np.concatenate(
        [
            base + data.ii * m + data.ii,
            base + data.jj * m + data.jj,
            base + data.ii * m + data.jj,
            base + data.jj * m + data.ii,
        ]
    )
    w = np.concatenate([info, info, -info, -info])
    return np.bincount(idx, w, g * m * m).reshape(g, m, m)


def _crowd_cluster_hessians(data: Comparisons, hdd, hde, hee) -> np.ndarray:
    """Per-cluster Hessians over (theta, eta), shape (G, P, P)."""
    starts = data.cluster_starts
    m, nj = data.n_models, len(data.judges)
    out = np.empty((data.n_clusters, m + nj, m + nj))
    for c in range(data.n_clusters):
        sl = slice(starts[c], starts[c + 1])
        out[c] = K.crowd_assemble(m, nj, data.ii[sl], data.jj[sl], data.judge[sl], hdd[sl],
                                  hde[sl], hee[sl])  # fmt: skip
    return out


def _one_step_jackknife(hessian, h_c, g_c, free) -> np.ndarray:
    """Leave-one-cluster-out changes delta_c = (H - H_c)^-1 g_c over ``free``, shape (G, P)."""
    hf = hessian[np.ix_(free, free)]
    a = hf[None, :, :] - h_c[:, free][:, :, free]
    delta = np.zeros_like(g_c)
    delta[:, free] = np.linalg.solve(a, g_c[:, free][:, :, None])[:, :, 0]
    return delta


def _jackknife_cov(delta: np.ndarray) -> np.ndarray:
    g = delta.shape[0]
    return (g - 1) / g * delta.T @ delta


def fit_variants(cell: Cell, data: Comparisons, ref: int, *, exact_jk: bool = False) -> dict:
    """Estimate and the covariance of every variant (strengths only, anchored at ``ref``)."""
    m, g = data.n_models, data.n_clusters
    if cell.model == "bt":
        res = fit_bt(data, ref=ref)
        free = np.delete(np.arange(m), ref)
        bread = inverse_free(res.hessian, free)
        _, score, info, meat_rows = K.bt_row_terms(res.theta, data.ii, data.jj, data.wi,
                                                   data.wj, data.tt)  # fmt: skip
        covs = {
            "model": bread,
            "hc0": sandwich(bread, data, score, meat_rows, clustered=False, k=K),
            "cr1": sandwich(bread, data, score, meat_rows, clustered=True, k=K),
        }
        infl = cluster_influence(data, bread, score)
        g_c = _cluster_scores(data, m, score)
        delta = _one_step_jackknife(res.hessian, _bt_cluster_hessians(data, info), g_c, free)
        theta = res.theta
    else:
        res = fit_crowd_default(data, ref=ref, clustered=True)  # as ratings.fit
        full = {
            "model": crowd_covariance(res, data, ci="model", clustered=False),
            "hc0": crowd_covariance(res, data, ci="sandwich", clustered=False),
            "cr1": crowd_covariance(res, data, ci="sandwich", clustered=True),
        }
        covs = {k: v[:m, :m] for k, v in full.items()}
        _, gd, ge, hdd, hde, hee, *_ = K.crowd_row_terms(
            res.theta, res.eta, data.ii, data.jj, data.judge, data.wi, data.wj, data.tt
        )
        p = m + len(data.judges)
        infl = cluster_influence(data, full["model"], gd, ge)
        g_c = _cluster_scores(data, p, gd, ge)
        delta = _one_step_jackknife(res.hessian, _crowd_cluster_hessians(data, hdd, hde, hee),
                                    g_c, res.free)[:, :m]  # fmt: skip
        theta = res.theta
        infl = infl[:, :m]
    covs["cr3"] = _jackknife_cov(delta)
    # Self-check: the package's clustered sandwich is G/(G-1) influence^T influence.
    cr1_from_infl = g / (g - 1) * infl[:, :m].T @ infl[:, :m]
    check = float(np.max(np.abs(cr1_from_infl - covs["cr1"])) / np.max(np.abs(covs["cr1"])))
    out = {
        "theta": theta,
        "covs": covs,
        "check": check,
        "g": g,
        "eta_boundary": bool(cell.model != "bt" and res.boundary.any()),
    }
    if exact_jk:
        try:
            out["covs"]["cr3x"] = _jackknife_cov(_exact_loo(cell, data, ref, theta) - theta)
        except (NonIdentifiableError, np.linalg.LinAlgError):
            pass  # some leave-one-out fit has no estimate: no exact jackknife for this board
    return out


def _exact_loo(cell: Cell, data: Comparisons, ref: int, theta: np.ndarray) -> np.ndarray:
    """Leave-one-cluster-out refits, shape (G, M)."""
    out = np.empty((data.n_clusters, data.n_models))
    for c in range(data.n_clusters):
        sub = data.subset(data.cluster != c)
        if cell.model == "bt":
            out[c] = fit_bt(sub, ref=ref, theta0=theta, tol=1e-9).theta
        else:
            out[c] = fit_crowd_bt(sub, ref=ref, tol=1e-9).theta
    return out


def _pair_index(m: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(m, 1)


def _coverage(est, true, cov, q, ref, sparse: int | None = None) -> dict[str, np.ndarray]:
    """Covered flags and widths for models vs the anchor and for all pairs (and the sparse
    model's: vs the anchor, and its pairs)."""
    m = est.size
    others = np.delete(np.arange(m), ref)
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    ii, jj = _pair_index(m)
    var_p = cov[ii, ii] + cov[jj, jj] - 2.0 * cov[ii, jj]
    se_p = np.sqrt(np.clip(var_p, 0.0, None))
    return coverage_flags(est, true, ref, q * se[others], q * se_p, sparse)


def _boot_coverage(draws, true, ref) -> dict[str, np.ndarray]:
    m = draws.shape[1]
    others = np.delete(np.arange(m), ref)
    ii, jj = _pair_index(m)
    a = (1 - LEVEL) / 2
    lo, hi = np.quantile(draws, [a, 1 - a], axis=0)
    d = draws[:, ii] - draws[:, jj]
    lo_p, hi_p = np.quantile(d, [a, 1 - a], axis=0)
    tp = true[ii] - true[jj]
    return {"anchor": ((lo <= true) & (true <= hi))[others], "pairs": (lo_p <= tp) & (tp <= hi_p),
            "w_anchor": (hi - lo)[others], "w_pairs": hi_p - lo_p}  # fmt: skip


def one_board(cell_name: str, seed: int, *, boot: bool, n_boot: int, exact_jk: bool,
              simulator: str) -> dict:  # fmt: skip
    """Simulate, fit and score one board; ``{"failed": reason}`` if there is no estimate (a
    non-identifiable board, or a Crowd-BT fit whose Hessian is singular)."""
    cell = CELLS[cell_name]
    size = cell.dims
    rng = np.random.default_rng(seed)
    verdicts = simulate(cell, rng, simulator)
    data = ratings.aggregate(verdicts, cluster="task_id")
    ref = size.anchor
    true = truth(cell)
    try:
        check_identifiable(data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fv = fit_variants(cell, data, ref, exact_jk=exact_jk)
            # the default: what ratings.fit reports (CR2, Satterthwaite df per contrast)
            default = ratings.fit(data, model=cell.model, anchor=size.models[ref])
    except (NonIdentifiableError, np.linalg.LinAlgError) as e:
        return {"failed": type(e).__name__}
    if np.max(np.abs(fv["theta"])) > DIVERGED:
        return {"failed": f"diverged (|s| > {DIVERGED:g})"}
    g = fv["g"]
    z = stats.norm.ppf(0.5 + LEVEL / 2)
    t = stats.t.ppf(0.5 + LEVEL / 2, g - 1)
    covs = fv["covs"]
    quant = {"model": ("model", z), "hc0": ("hc0", z), "cr1_z": ("cr1", z), "cr1_t": ("cr1", t),
             "cr3_t": ("cr3", t), "cr3_z": ("cr3", z), "cr3x_t": ("cr3x", t)}  # fmt: skip
    out: dict = {"check": fv["check"], "ties": float(np.mean(verdicts["winner"] == "tie")),
                 "g": g, "eta_boundary": fv["eta_boundary"]}  # fmt: skip
    for name, (key, q) in quant.items():
        if key in covs:
            out[name] = _coverage(fv["theta"], true, covs[key], q, ref, cell.sparse)
    out["cr2_t"] = cr2_coverage(default, true, ref, LEVEL, cell.sparse)
    out["ranks"] = rank_metrics(default, true, LEVEL, seed % 2**32)
    if boot:
        out["boot"] = _boot_coverage(cluster_bootstrap(cell, data, ref, fv["theta"], n_boot,
                                                       seed % 2**32), true, ref)  # fmt: skip
    return out


def cluster_bootstrap(cell: Cell, data: Comparisons, ref: int, theta: np.ndarray, n_boot: int,
                      seed: int) -> np.ndarray:  # fmt: skip
    """Cluster-bootstrap draws, shape (n_boot, M): what ``ratings.fit(ci="bootstrap")`` does
    (:func:`ratings.uncertainty.bootstrap_draws`, same refits), except that a Crowd-BT resample
    whose estimate diverges is skipped like a non-identifiable one (``ratings.fit`` raises
    ``NonIdentifiableError`` there instead)."""

    def refit(sample: Comparisons) -> np.ndarray | None:
        try:
            check_identifiable(sample)
            if cell.model == "bt":
                return fit_bt(sample, ref=ref, tol=1e-8, theta0=theta).theta
            return fit_crowd_bt(sample, ref=ref, tol=1e-8).theta
        except NonIdentifiableError:
            return None

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # skipped resamples
        warnings.simplefilter("ignore", ConvergenceWarning)
        return bootstrap_draws(data, refit, n_boot=n_boot, seed=seed, clustered=True,
                               progress=False)  # fmt: skip


def run_chunk(args: tuple) -> list[dict]:
    cell_name, seeds, n_boot_boards, n_boot, n_exact, simulator = args
    return [one_board(cell_name, s, boot=b < n_boot_boards, n_boot=n_boot,
                      exact_jk=b < n_exact, simulator=simulator)
            for b, s in seeds]  # fmt: skip


def _init_worker(large_board_path: bool = False) -> None:
    ratings.warmup()
    if large_board_path:  # the CR2 series and one-direction df on every board
        from ratings.inference import cluster

        cluster.EXACT_BUDGET = 0.0


# ----------------------------------------------------------------------------------------------
# Summary and output
# ----------------------------------------------------------------------------------------------


def summarise(cell_name: str, boards: list[dict]) -> list[dict]:
    cell = CELLS[cell_name]
    size = cell.dims
    ok = [b for b in boards if "failed" not in b]
    failed = pd.Series([b["failed"] for b in boards if "failed" in b], dtype=object)
    rows = []
    for target in TARGETS:
        for v in VARIANTS:
            have = [b for b in ok if v in b and target in b[v]]
            if not have:
                continue
            per_board = np.array([b[v][target].mean() for b in have])
            pooled = float(np.concatenate([b[v][target] for b in have]).mean())
            # Width relative to cr1_z on the same boards and intervals.
            with np.errstate(divide="ignore", invalid="ignore"):
                rel = np.concatenate(
                    [b[v]["w_" + target] / b["cr1_z"]["w_" + target] for b in have]
                )
            rows.append({
                "cell": cell_name, "model": cell.model, "size": cell.size,
                "n_models": size.n_models, "n_verdicts": size.n_verdicts,
                "n_tasks": size.n_tasks, "rho": cell.rho, "task_sd": cell.task_sd,
                "judges": ",".join(f"{k}={e:g}" for k, e in cell.judges.items()) or "exact",
                "target": target, "variant": v, "coverage": pooled,
                "mcse": float(per_board.std(ddof=1) / np.sqrt(len(have))) if len(have) > 1
                else float("nan"),
                "rel_width": float(np.nanmedian(rel)), "n_boards": len(have),
                "n_failed": len(boards) - len(ok),
                "failures": "; ".join(f"{k}: {v}" for k, v in failed.value_counts().items()),
                "eta_boundary_share": float(np.mean([b["eta_boundary"] for b in ok])),
                "n_intervals": int(sum(b[v][target].size for b in have)),
                "tie_share": float(np.mean([b["ties"] for b in ok])),
                "clusters": float(np.mean([b["g"] for b in ok])),
                "max_check": float(max(b["check"] for b in ok)),
            })  # fmt: skip
    for row in rank_rows(cell_name, ok):
        rows.append({**rows[0], **row, "rel_width": np.nan} if rows else row)
    return rows


def write_atomic(text: str, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _describe(cell: Cell) -> str:
    size = cell.dims
    dep = (
        f"copula rho={cell.rho:g}"
        if cell.rho
        else f"task_sd={cell.task_sd:g} (pseudo-true)"
        if cell.task_sd
        else "independent"
    )
    judges = "3 noisy judges" if cell.judges else "exact judge"
    name = "BT" if cell.model == "bt" else "Crowd-BT"
    extra = ""
    if cell.sparse_tasks is not None:
        extra = (f"; model m{size.n_models - 1:02d} (strength {SPARSE_STRENGTH}) only on "
                 f"{cell.sparse_tasks} tasks, {SPARSE_PER_TASK} verdicts on each")
    if cell.equal:
        extra = "; all models equally strong"
    return (
        f"{name}, {size.n_verdicts // 1000}k verdicts / {size.n_tasks} tasks / "
        f"{size.n_models} models, {dep}, {judges}{extra}"
    )


#: Run settings stored in every CSV row, so that ``--render`` can rebuild the Markdown.
META = ("seed", "n_boot", "simulator", "jobs", "seconds")
BAND = (0.93, 0.97)


def _inside(c: float) -> bool:
    return BAND[0] <= c <= BAND[1]


def markdown(table: pd.DataFrame) -> str:
    """The Markdown report of a results table (as written to the CSV)."""
    full = table
    table = table[table["target"].isin(TARGETS)]
    present = [v for v in VARIANTS if v in set(table["variant"])]
    meta = table.iloc[0]
    size = table["size"]
    n_small = table.loc[size == "small", "n_boards"].max()
    n_large = table.loc[size == "large", "n_boards"].max()
    n_sparse = table.loc[size == "sparse", "n_boards"].max()
    boot = table[table["variant"] == "boot"]
    exact = table[table["variant"] == "cr3x_t"]
    lines = [
        "# Coverage of 95 % intervals (`benchmarks_perf/validate_coverage.py`)",
        "",
        f"Seed {meta['seed']}; up to {n_small} boards per small cell, {n_large} per large cell"
        + (f" and {n_sparse} per sparse-model cell" if n_sparse == n_sparse else "")
        + (f"; cluster bootstrap (`boot`, {meta['n_boot']} resamples) on the first "
           f"{boot['n_boards'].max()} boards of the cells listed with it" if len(boot) else "")
        + (f"; exact-refit jackknife (`cr3x_t`) on the first {exact['n_boards'].max()} boards of "
           "the cells listed with it" if len(exact) else "")
        + f"; simulator `{meta['simulator']}`; {meta['seconds'] / 60:.1f} min with "
        f"{meta['jobs']} jobs.",
        "",
        "Each entry: empirical coverage of the 95 % interval (Monte-Carlo standard error in units "
        "of 0.001, from the per-board coverage fractions, as the intervals of one board are "
        "dependent). `anchor`: every model vs the mid-board anchor; `pairs`: every pairwise "
        "difference; `sparse`: the sparse model vs the anchor (one interval per board); "
        "`sparse_pairs`: its differences to every other model. Entries outside "
        f"[{BAND[0]}, {BAND[1]}] are in bold.",
        "",
        "| cell | target | " + " | ".join(f"`{v}`" for v in present) + " | boards | ties |",
        "|---|---|" + "---:|" * len(present) + "---:|---:|",
    ]  # fmt: skip
    for cell_name in dict.fromkeys(table["cell"]):
        for target in TARGETS:
            sub = table[(table["cell"] == cell_name) & (table["target"] == target)]
            sub = sub.set_index("variant")
            if sub.empty:
                continue
            cells = []
            for v in present:
                if v not in sub.index:
                    cells.append("")
                    continue
                c, e = sub.at[v, "coverage"], sub.at[v, "mcse"]
                txt = f"{c:.3f} ({1000 * e:.0f})"
                cells.append(txt if _inside(c) else f"**{txt}**")
            nb = sub["n_boards"]
            extra = [f"{sub.at[v, 'n_boards']} {v}" for v in ("cr3x_t", "boot") if v in sub.index]
            boards = f"{nb.max()}" + (f" ({', '.join(extra)})" if extra else "")
            if sub["n_failed"].iloc[0]:
                boards += f", {sub['n_failed'].iloc[0]} failed"
            label = f"`{cell_name}`" if target == "anchor" else ""
            lines.append(f"| {label} | {target} | " + " | ".join(cells)
                         + f" | {boards} | {sub['tie_share'].iloc[0]:.3f} |")  # fmt: skip
    n_cells = table.groupby("variant")["cell"].nunique()
    all_cells = table["cell"].nunique()
    worst = table.groupby("variant")["coverage"].agg(["min", "max"])
    good = [v for v in present if n_cells[v] == all_cells
            and _inside(worst.at[v, "min"]) and _inside(worst.at[v, "max"])]  # fmt: skip
    lines += ["", "Coverage range of each variant over the cells it was run on:", ""]
    for v in present:
        tag = " -- every cell inside the band" if v in good else ""
        part = "" if n_cells[v] == all_cells else f" ({n_cells[v]} of {all_cells} cells)"
        lines.append(f"- `{v}`{part}: {worst.at[v, 'min']:.3f} to {worst.at[v, 'max']:.3f}{tag}")
    default = table[table["variant"] == "cr2_t"]
    if len(default):
        lo, hi = default["coverage"].min(), default["coverage"].max()
        inside = default["coverage"].between(0.94, 0.96)
        lines += ["", f"The default (`cr2_t`) covers {lo:.3f} to {hi:.3f} over every cell and "
                  f"target; {int(inside.sum())} of {len(default)} entries in [0.94, 0.96]"
                  + ("." if inside.all() else "; outside: " + ", ".join(
                      f"`{r.cell}` {r.target} {r.coverage:.3f} ({1000 * r.mcse:.0f})"
                      for r in default[~inside].itertuples()) + ".")]  # fmt: skip
    lines += rank_markdown(full)
    lines += ["", "Cells:", ""]
    for cell_name in dict.fromkeys(table["cell"]):
        row = table[table["cell"] == cell_name].iloc[0]
        text = f"- `{cell_name}`: {_describe(CELLS[cell_name])}"
        if row["model"] != "bt":
            share = row["eta_boundary_share"]
            text += f"; a judge's eta estimated on its bound on {share:.0%} of boards"
        if row["n_failed"]:
            text += f"; failed boards: {row['failures']}"
        lines.append(text)
    lines += ["", "Variants:", ""]
    for v in present:
        lines.append(f"- `{v}`: {VARIANT_NAMES[v]}")
    lines += [
        "",
        "Median interval width relative to `cr1_z` (same intervals):",
        "",
        "| cell | target | " + " | ".join(f"`{v}`" for v in present) + " |",
        "|---|---|" + "---:|" * len(present),
    ]
    for cell_name in dict.fromkeys(table["cell"]):
        for target in TARGETS:
            sub = table[(table["cell"] == cell_name) & (table["target"] == target)]
            sub = sub.set_index("variant")
            if sub.empty:
                continue
            vals = [f"{sub.at[v, 'rel_width']:.3f}" if v in sub.index else "" for v in present]
            label = f"`{cell_name}`" if target == "anchor" else ""
            lines.append(f"| {label} | {target} | " + " | ".join(vals) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--crowd" in argv:  # the Crowd-BT edge study takes every other option itself
        from coverage_crowd import main as crowd_main

        return crowd_main([a for a in argv if a != "--crowd"])
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--boards", type=int, default=1000, help="boards per small cell (1000)")
    p.add_argument(
        "--boards-large",
        type=int,
        default=None,
        help="boards per large cell (default: 400, or --boards if smaller)",
    )
    p.add_argument(
        "--boot-boards",
        type=int,
        default=None,
        help="small boards per cell that also get the cluster bootstrap (200)",
    )
    p.add_argument(
        "--boot-boards-large",
        type=int,
        default=0,
        help="large boards per cell that also get the bootstrap (0: ~13 s each)",
    )
    p.add_argument("--n-boot", type=int, default=200, help="bootstrap resamples (200)")
    p.add_argument(
        "--exact-jk",
        type=int,
        default=None,
        help="small boards per cell that also get the exact-refit jackknife (200)",
    )
    p.add_argument(
        "--cells",
        default=",".join(DEFAULT_CELLS),
        help=f"comma-separated cells among {list(CELLS)} (default: all)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 40 small / 10 large boards, 20 with bootstrap (n_boot 50)",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="worker processes (default 2; at most 2 on a shared machine)",
    )
    p.add_argument(
        "--simulator",
        choices=["numpy", "package"],
        default="numpy",
        help="verdict simulator: NumPy twin (default) or ratings.simulate",
    )
    p.add_argument("--seed", type=int, default=20261129, help="base seed")
    p.add_argument("--large-board-path", action="store_true",
                   help="force the large-board shortcuts of ratings.inference (the CR2 series, "
                        "one-direction df) on every board, to measure their coverage")
    p.add_argument("--csv", type=Path, default=OUT_CSV, help=f"CSV output ({OUT_CSV})")
    p.add_argument("--md", type=Path, default=OUT_MD, help=f"Markdown output ({OUT_MD})")
    p.add_argument(
        "--render",
        type=Path,
        metavar="CSV",
        help="only rebuild the Markdown (--md) from a results CSV of an earlier run",
    )
    p.add_argument("--crowd", action="store_true",
                   help="run the Crowd-BT edge study instead (coverage_crowd.py; every other "
                        "option is passed to it: --boards, --boards-large, --cells, --jobs, ...)")
    args = p.parse_args(argv)
    if args.render is not None:
        write_atomic(markdown(pd.read_csv(args.render, keep_default_na=False,
                                          na_values=[""])), args.md)  # fmt: skip
        print(f"wrote {args.md}")
        return 0
    if args.quick:
        args.boards, args.n_boot = min(args.boards, 40), min(args.n_boot, 50)
        args.boards_large = 10 if args.boards_large is None else args.boards_large
        args.boot_boards = 20 if args.boot_boards is None else args.boot_boards
    if args.boards_large is None:
        args.boards_large = min(400, args.boards)
    if args.boot_boards is None:
        args.boot_boards = min(200, args.boards)
    if args.exact_jk is None:
        args.exact_jk = 10 if args.quick else min(200, args.boards)
    cells = [c.strip() for c in args.cells.split(",") if c.strip()]
    unknown = [c for c in cells if c not in CELLS]
    if unknown:
        p.error(f"unknown cell(s) {unknown}; choose from {list(CELLS)}")
    if min(args.boards, args.boards_large) < 2 or args.n_boot < 2:
        p.error("--boards, --boards-large and --n-boot must be >= 2")

    _init_worker(args.large_board_path)
    t0 = time.perf_counter()
    rows = []
    pool = (ProcessPoolExecutor(args.jobs, initializer=_init_worker,
                                initargs=(args.large_board_path,)) if args.jobs > 1 else None)
    try:
        for c_idx, name in enumerate(cells):
            cell = CELLS[name]
            large = cell.size == "large"
            n = args.boards_large if large else args.boards
            nb = args.boot_boards_large if large else args.boot_boards
            nx = 0 if large else args.exact_jk
            if not cell.extras:
                nb = nx = 0
            base = args.seed + 1_000_003 * list(CELLS).index(name)
            seeds = [(b, base + b) for b in range(n)]
            # Bootstrap boards are costly: deal them out first, in small chunks.
            size = 2 if (nb or nx) else max(1, -(-n // (8 * max(args.jobs, 1))))
            chunks = [(name, seeds[k:k + size], nb, args.n_boot, nx, args.simulator)
                      for k in range(0, n, size)]  # fmt: skip
            if pool is not None:
                boards = [b for part in pool.map(run_chunk, chunks) for b in part]
            else:
                boards = [b for ch in chunks for b in run_chunk(ch)]
            rows += summarise(name, boards)
            print(
                f"[{time.perf_counter() - t0:7.1f}s] {c_idx + 1}/{len(cells)} {name}: "
                f"{sum('failed' not in b for b in boards)}/{n} boards",
                flush=True,
            )
    finally:
        if pool is not None:
            pool.shutdown()
    seconds = time.perf_counter() - t0
    table = pd.DataFrame(rows)
    for key, value in zip(META, (args.seed, args.n_boot, args.simulator, args.jobs, seconds),
                          strict=True):  # fmt: skip
        table[key] = value
    wide = table[table["target"].isin(TARGETS)].pivot_table(
        index=["cell", "target"], columns="variant", values="coverage", sort=False)
    print(wide[[v for v in VARIANTS if v in wide.columns]].to_string(float_format="%.3f"))
    print(f"max |CR1 - G/(G-1) IF'IF| / max|CR1| over boards: {table['max_check'].max():.2e}")
    write_atomic(table.to_csv(index=False, float_format="%.6g"), args.csv)
    write_atomic(markdown(table), args.md)
    print(f"\nwrote {args.csv} and {args.md} ({seconds:.1f}s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
