"""The Crowd-BT fit policy: which estimate (plain maximum likelihood or the prior's posterior
mode), which intervals (CR2, CR1 / HC0, model-based or the bootstrap; widened for one judge;
the two-step term of reused etas), the judges table and when the intervals stay open.

:func:`estimate_crowd` is what :func:`ratings.fit` runs for ``model="crowd-bt"`` once the log
is aggregated and the judge-quality source resolved; its pieces are the likelihood
(:mod:`~ratings.models.crowd.likelihood`), the prior (:mod:`~ratings.models.crowd.prior`), the
one-judge widening (:mod:`~ratings.models.crowd.onejudge`) and the judges table
(:mod:`~ratings.models.crowd.judge_table`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.errors import ConvergenceWarning, NonIdentifiableError, option
from ratings.data.comparisons import Comparisons
from ratings.inference.builder import Built, with_two_step
from ratings.inference.cluster import ClusterInference
from ratings.inference.covariance import inverse_free
from ratings.models.covariates import DesignFit, pair_built, pair_design, unit_df
from ratings.models.crowd.judge_table import (
    coin_flip_test,
    judge_table,
    scale_identified,
    warn_weak_judges,
)
from ratings.models.crowd.likelihood import (
    crowd_covariance,
    fit_crowd_bt,
    fit_crowd_default,
    psd_root,
)
from ratings.models.crowd.onejudge import single_judge, widen_one_judge
from ratings.models.crowd.prior import CrowdSummary
from ratings.models.crowd.quality import ResolvedQuality
from ratings.models.crowd.reuse import design_eta_factor
from ratings.models.estimate import Estimate, bootstrap_refits

__all__ = [
    "CrowdIntervals",
    "crowd_intervals",
    "crowd_summary",
    "drawn_etas",
    "estimate_crowd",
    "judges_alone",
    "reused_factor",
    "with_reused",
]


@dataclass(frozen=True, eq=False)
class CrowdIntervals:
    """The covariance of a Crowd-BT fit over (theta, eta) for one interval kind.

    Attributes
    ----------
    cov : ndarray, shape (M + K, M + K)
        The covariance the intervals and the judges table use (with the two-step term of
        reused etas; infinite variances where the information is singular).
    inference : ClusterInference or None
        CR2's pieces (clustered ``ci="sandwich"`` with a positive definite bread), else None.
    influence : ndarray, shape (G, M + K), or None
        Per-cluster influences.
    eta_df : ndarray, shape (K,), or None
        CR2's degrees of freedom of each judge's eta.
    likelihood_only : ClusterInference or None
        CR2 without eta's prior in the bread where it was built (one judge, before widening).
    """

    cov: NDArray[np.float64]
    inference: ClusterInference | None = None
    influence: NDArray[np.float64] | None = None
    eta_df: NDArray[np.float64] | None = None
    likelihood_only: ClusterInference | None = None


def estimate_crowd(data: Comparisons, *, ref, quality: ResolvedQuality, prior, level, ci,
                   clustered, engine, tol, max_iter, n_boot, seed) -> Estimate:  # fmt: skip
    """Fit Crowd-BT to ``data`` and its intervals (see the module's docstring)."""
    m = data.n_models
    names = pd.Index(data.judges)
    res = fit_crowd_default(data, clustered=clustered, level=level, prior=prior, ref=ref,
                            fixed_eta=quality.eta, tol=tol, max_iter=max(max_iter, 200),
                            engine=engine)  # fmt: skip
    factor = reused_factor(res, quality, names)
    intervals = crowd_intervals(res, data, ci=ci, clustered=clustered, engine=engine,
                                factor=factor, level=level)  # fmt: skip
    full, inference = intervals.cov, intervals.inference
    influence = None if intervals.influence is None else intervals.influence[:, :m]
    reused = None if quality.cov is None else quality.table
    table = judge_table(res, full, data, level, intervals.eta_df, reused=reused)
    if inference is not None and res.prior is not None:
        table = judges_alone(res, data, engine, level, table, reused, intervals.likelihood_only)
    table = coin_flip_test(table, res.nll, m, level)
    warn_weak_judges(table, stacklevel=5)
    open_intervals = not (scale_identified(table) and np.isfinite(full[:m, :m]).all())
    cov = full[:m, :m]
    if open_intervals:  # the spread of the ratings is not identified: no finite interval
        cov = np.where(np.eye(m, dtype=bool), np.inf, 0.0)
        cov[ref, ref] = 0.0
        inference = None

    def refit(sample: Comparisons):
        return fit_crowd_bt(sample, ref=ref, fixed_eta=drawn_etas(quality, draws_rng),
                            prior=res.prior, tol=1e-8, engine=engine).theta  # fmt: skip

    draws_rng = np.random.default_rng([seed, 1])  # reused etas drawn per resample
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        draws = bootstrap_refits(data, refit, ci=ci, clustered=clustered, n_boot=n_boot,
                                 seed=seed)  # fmt: skip
    crowd = crowd_summary(replace(res, cov=full), names, prior, quality, factor,
                          open_intervals=open_intervals)
    return Estimate(
        theta=res.theta, cov=cov, nll=res.nll, converged=res.converged, n_iter=res.n_iter,
        max_grad=res.max_grad, draws=draws, judges=table, influence=influence, crowd=crowd,
        inference=inference,
        model_cov=lambda: inverse_free(res.information, res.free)[:m, :m])


def crowd_intervals(res: DesignFit, data: Comparisons, *, ci, clustered, engine,
                    factor: NDArray[np.float64] | None,
                    level: float = 0.95) -> CrowdIntervals:  # fmt: skip
    """The covariance of a Crowd-BT fit over (theta, eta), by the design's one interval path
    (:func:`ratings.models.covariates.pair_built`, open where the information is singular): CR2
    for a clustered ``ci="sandwich"`` (for a one-judge posterior mode its bread without eta's
    prior, then widened by eta's profile likelihood,
    :func:`~ratings.models.crowd.onejudge.widen_one_judge`), else the CR1 / HC0 sandwich or the
    model-based covariance; ``factor`` is the two-step term of reused etas
    (:func:`reused_factor`), added by :func:`with_reused`."""
    k = single_judge(res, data)
    built = pair_built(res, data, ci, clustered=clustered, eta_prior=k is None, engine=engine)
    if built.inference is None and clustered and ci == "sandwich":  # open: CR2 has no bread
        return CrowdIntervals(cov=built.cov)
    fit = replace(res, cov=built.cov, influence=built.influence, inference=built.inference)
    eta_df = None if fit.inference is None else unit_df(fit, fit.eta_at)
    lik = fit.inference if k is not None else None
    if k is not None:  # the profile counts the likelihood alone
        fit = widen_one_judge(fit, pair_design(data.collapsed(engine=engine), engine), k,
                              level=level, engine=engine, count_prior=False)  # fmt: skip
    fit = with_reused(fit, factor)
    return CrowdIntervals(cov=fit.cov, inference=fit.inference, influence=fit.influence,
                          eta_df=eta_df, likelihood_only=lik)  # fmt: skip


def reused_factor(fit: DesignFit, quality: ResolvedQuality, judges: pd.Index, *,
                  open_ok: bool = True) -> NDArray[np.float64] | None:  # fmt: skip
    """The two-step term of the etas ``fit`` reuses with a covariance
    (:func:`ratings.models.crowd.reuse.design_eta_factor`), None without one. Where the
    information is singular: None (``open_ok``: the intervals are open already), else
    :class:`~ratings.core.errors.NonIdentifiableError`."""
    if quality.cov is None:
        return None
    try:
        return design_eta_factor(fit, quality.cov, judges)
    except np.linalg.LinAlgError:
        if open_ok:
            return None
        raise NonIdentifiableError(
            "The information of the strengths, covariates and estimated etas is singular, so "
            f"the uncertainty of the etas reused from {option('judge_quality')} cannot be "
            f"carried into the intervals. Pass {option('eta_known', True)} to take them as "
            "known.") from None  # fmt: skip


def with_reused(fit: DesignFit, factor: NDArray[np.float64] | None) -> DesignFit:
    """``fit`` with the two-step term ``factor`` of reused etas in its covariance and CR2
    inference (:func:`ratings.inference.builder.with_two_step`)."""
    built = with_two_step(Built(fit.cov, fit.influence, fit.inference), factor)
    return replace(fit, cov=built.cov, influence=built.influence, inference=built.inference)


def judges_alone(res: DesignFit, data: Comparisons, engine, level: float, table: pd.DataFrame,
                 reused: pd.DataFrame | None,
                 lik: ClusterInference | None = None) -> pd.DataFrame:  # fmt: skip
    """The judges table of a posterior-mode fit from the verdicts alone: each estimated eta's
    CR2 interval with the likelihood's information (the strengths' prior only, not the one on
    eta) in the bread, and ``uninformative`` where it or the CR1 interval (observed
    information, normal quantile) reaches 1/2 (see
    :func:`ratings.models.crowd.judge_table.scale_identified`). ``table``: the table of the fit's
    own covariance, kept where that CR2 has no positive definite bread; ``lik``: that CR2 inference
    where the fit already built it (one judge), else it is built here."""
    if lik is None:
        lik = pair_built(res, data, "sandwich", clustered=True, eta_prior=False,
                         engine=engine).inference  # fmt: skip
    if lik is not None:
        eta_df = lik.df(np.eye(res.params.size)[res.eta_at])
        table = judge_table(res, lik.covariance(), data, level, eta_df, reused=reused)
    else:
        table = table.assign(uninformative=table["status"] == "estimated")
    cr1 = crowd_covariance(res, data, ci="sandwich", clustered=True, engine=engine)
    flips = np.asarray(judge_table(res, cr1, data, level)["uninformative"])
    return table.assign(uninformative=np.asarray(table["uninformative"]) | flips)


def crowd_summary(fit: DesignFit, judges: pd.Index, prior, quality: ResolvedQuality,
                  factor: NDArray[np.float64] | None, *,
                  open_intervals: bool = False) -> CrowdSummary:  # fmt: skip
    """The Crowd-BT summary (``Ratings.crowd``) of ``fit`` (plain or with covariates, with its
    covariance): the etas' covariance (the source's for reused etas), the two-step term of
    reused etas on the strengths (``factor``'s), whether the intervals were left open, and which
    estimate it is (:meth:`~ratings.models.crowd.prior.CrowdSummary.estimate_note`)."""
    at = fit.eta_at
    eta_cov = pd.DataFrame(fit.cov[np.ix_(at, at)], index=judges, columns=judges)
    if quality.cov is not None:  # reused etas: their covariance is the source's (two-step)
        eta_cov.loc[quality.cov.index, quality.cov.columns] = quality.cov.to_numpy()
    bound = fit.plain_on_bound
    on_bound = () if bound is None or not fit.plain_found else tuple(
        str(j) for j in judges[bound])  # fmt: skip
    return CrowdSummary(
        eta_cov=eta_cov, prior=prior,
        eta_influence=None if factor is None else factor[:, :fit.n_models],
        open_intervals=open_intervals, prior_used=fit.prior is not None,
        plain_on_bound=on_bound, plain_found=fit.plain_found, prior_shift=fit.prior_shift)


def drawn_etas(quality: ResolvedQuality, rng: np.random.Generator) -> dict[str, float]:
    """Reused etas for one bootstrap resample: drawn from N(eta, their covariance), clipped to
    [1/2, 1] (a parametric bootstrap of the first step); as given without a covariance."""
    if quality.cov is None or not len(quality.cov):
        return quality.eta
    names = list(quality.cov.index)
    mean = np.array([quality.eta[j] for j in names])
    draw = mean + psd_root(quality.cov.to_numpy()) @ rng.standard_normal(len(names))
    return quality.eta | dict(zip(names, np.clip(draw, 0.5, 1.0).tolist(), strict=True))
