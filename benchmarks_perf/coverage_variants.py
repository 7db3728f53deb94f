"""The interval variants of ``validate_coverage.py`` for one board: every covariance from one fit
(model-based, HC0, CR1, the one-step and exact cluster jackknives), the cluster bootstrap, and
the covered flags and widths of each; :func:`one_board` simulates, fits and scores a board and
:func:`run_chunk` runs a few in a worker process."""

from __future__ import annotations

import warnings

import numpy as np
from coverage_cells import CELLS, DIVERGED, LEVEL, Cell, simulate, truth
from coverage_ranks import coverage_flags, cr2_coverage, rank_metrics
from scipy import stats

import ratings
from ratings.core.errors import ConvergenceWarning, NonIdentifiableError
from ratings.data.comparisons import Comparisons
from ratings.inference.builder import Scores, build
from ratings.inference.covariance import bootstrap_draws, inverse_free
from ratings.kernels import fit as K
from ratings.models.bt import fit_bt
from ratings.models.covariates import pair_built
from ratings.models.crowd.likelihood import fit_crowd_bt, fit_crowd_default
from ratings.models.existence import check_identifiable

__all__ = ["cluster_bootstrap", "fit_variants", "init_worker", "one_board", "run_chunk"]


# ----------------------------------------------------------------------------------------------
# Interval variants from one fit
# ----------------------------------------------------------------------------------------------


def _cluster_scores(data: Comparisons, p: int, gd: np.ndarray, ge: np.ndarray | None = None
                    ) -> np.ndarray:  # fmt: skip
    """Per-cluster summed score g_c, shape (G, P) (the layout of the builder's scores)."""
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
        g_c = _cluster_scores(data, m, score)
        scores = Scores(lambda: K.laplacian(m, data.ii, data.jj, meat_rows), lambda: g_c)
        cr1 = build(bread, "sandwich-z", scores, n_clusters=g)
        covs = {
            "model": bread,
            "hc0": build(bread, "sandwich", scores, n_clusters=None).cov,
            "cr1": cr1.cov,
        }
        infl = cr1.influence
        delta = _one_step_jackknife(res.hessian, _bt_cluster_hessians(data, info), g_c, free)
        theta = res.theta
    else:
        res = fit_crowd_default(data, ref=ref, clustered=True)  # as ratings.fit
        full = {
            "model": pair_built(res, data, "model", clustered=False).cov,
            "hc0": pair_built(res, data, "sandwich-z", clustered=False).cov,
            "cr1": pair_built(res, data, "sandwich-z", clustered=True).cov,
        }
        covs = {k: v[:m, :m] for k, v in full.items()}
        _, gd, ge, hdd, hde, hee, *_ = K.crowd_row_terms(
            res.theta, res.eta, data.ii, data.jj, data.judge, data.wi, data.wj, data.tt
        )
        p = m + len(data.judges)
        g_c = _cluster_scores(data, p, gd, ge)
        infl = g_c @ full["model"]
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
    (:func:`ratings.inference.covariance.bootstrap_draws`, same refits), except that a Crowd-BT
    resample
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


def init_worker(large_board_path: bool = False) -> None:
    ratings.warmup()
    if large_board_path:  # the CR2 series and one-direction df on every board
        from ratings.inference import cluster

        cluster.EXACT_BUDGET = 0.0
