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
from collections.abc import Callable
from dataclasses import replace
from typing import NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.errors import ConvergenceWarning, NonIdentifiableError
from ratings.data.comparisons import Comparisons
from ratings.data.slots import SlotCounts
from ratings.inference.builder import Built, with_two_step
from ratings.inference.cluster import ClusterInference
from ratings.inference.covariance import inverse_free
from ratings.kernels.engine import Engine
from ratings.models.covariates import DesignFit, design_builder, pair_design, unit_df
from ratings.models.crowd.judge_table import (
    coin_flip_test,
    judge_table,
    scale_identified,
    warn_weak_judges,
)
from ratings.models.crowd.likelihood import fit_crowd_bt, fit_crowd_default, psd_root
from ratings.models.crowd.onejudge import single_judge, widen_one_judge
from ratings.models.crowd.prior import CrowdSummary
from ratings.models.crowd.quality import ResolvedQuality
from ratings.models.crowd.reuse import reused_factor
from ratings.models.estimate import Estimate, bootstrap_refits

__all__ = [
    "Builder",
    "CrowdInference",
    "crowd_inference",
    "crowd_summary",
    "drawn_etas",
    "estimate_crowd",
    "judges_alone",
]


class CrowdInference(NamedTuple):
    """What :func:`crowd_inference` gives a Crowd-BT fit: the fit with its final covariance and
    CR2 inference, the judges table and its :class:`CrowdSummary` (:func:`crowd_summary`)."""

    fit: DesignFit
    judges: pd.DataFrame
    summary: CrowdSummary


#: How a fit's intervals are built: ``built(fit, ci, eta_prior)``
#: (:func:`~ratings.models.covariates.design_builder`'s, with covariates or not).
Builder = Callable[[DesignFit, str, bool], Built]


def estimate_crowd(data: Comparisons, options, quality: ResolvedQuality, *, ref: int,
                   engine: Engine) -> Estimate:  # fmt: skip
    """Fit Crowd-BT to ``data`` and its intervals (see the module's docstring), as the fit's
    checked ``options`` say (:class:`ratings.api.specs.FitOptions`: the prior, the interval
    kind and level, the bootstrap, the solver), with the etas of ``quality`` fixed, the model
    ``ref`` pinned and the kernels of ``engine``."""
    m, clustered, ci, level = data.n_models, data.clusters is not None, options.ci, options.level
    prior, solver, boot = options.crowd.prior, options.solver, options.bootstrap
    res = fit_crowd_default(data, clustered=clustered, level=level, prior=prior, ref=ref,
                            fixed_eta=quality.eta, tol=solver.tol,
                            max_iter=max(solver.max_iter, 200), engine=engine)  # fmt: skip
    rows = pair_design(data.collapsed(engine=engine), engine)
    out = crowd_inference(res, data, rows, design_builder(rows, engine=engine, remedy=None,
                                                          pairs=data, clustered=clustered),
                          quality, ci=ci, level=level, engine=engine, prior=prior)  # fmt: skip

    def refit(sample: Comparisons):
        return fit_crowd_bt(sample, ref=ref, fixed_eta=drawn_etas(quality, draws_rng),
                            prior=res.prior, tol=1e-8, engine=engine).theta  # fmt: skip

    draws_rng = np.random.default_rng([boot.seed, 1])  # reused etas drawn per resample
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        draws = bootstrap_refits(data, refit, ci=ci, clustered=clustered, n_boot=boot.n,
                                 seed=boot.seed)  # fmt: skip
    return Estimate.of(out.fit, draws=draws, judges=out.judges, crowd=out.summary,
                       model_cov=lambda: inverse_free(res.information, res.free)[:m, :m])


def crowd_inference(fit: DesignFit, data: Comparisons, rows: SlotCounts, built: Builder,
                    quality: ResolvedQuality, *, ci: str, level: float,
                    engine: Engine = "auto", ridge: float = 0.0, n_ridge: int | None = None,
                    df: float | None = None, open_ok: bool = True, count_prior: bool = False,
                    nll: float | None = None, prior=...) -> CrowdInference:  # fmt: skip
    """The intervals and judges table of a Crowd-BT estimate ``fit``, plain or with covariates
    (its rows ``rows``, on the clustered aggregate ``data``): the one path of both.

    The covariance of kind ``ci`` by ``built`` (CR2 when clustered ``ci="sandwich"``: for a
    one-judge posterior mode its bread without eta's prior, then widened by eta's profile
    likelihood, :func:`~ratings.models.crowd.onejudge.widen_one_judge`, refitting with the
    style ``ridge`` on the first ``n_ridge`` coefficients; ``count_prior``: the profile also
    counts the strengths' prior), plus the two-step term of reused etas
    (:func:`~ratings.models.crowd.reuse.reused_factor`;
    ``open_ok``: None where the information is singular, the intervals being open already,
    else :class:`~ratings.core.errors.NonIdentifiableError`). The judges table
    (:func:`~ratings.models.crowd.judge_table.judge_table`) takes each eta's CR2 degrees of
    freedom from the inference its variance comes from, after the widening and the reused term
    (``df`` without CR2: None, the normal). Then, for every fit: the judges' intervals from
    the verdicts alone (:func:`judges_alone`), the coin-flip test (``nll`` the likelihood's
    value, the fit's by default), the weak-judge warnings and, where the scale is not
    identified, open intervals of the strengths and the coefficients (infinite variances, no
    CR2 inference); and the summary with the prior asked for, ``prior`` (the fit's by default).
    """
    names, m = pd.Index(data.judges), fit.n_models
    k = single_judge(fit, data)
    b = built(fit, ci, k is None)
    fit = replace(fit, cov=b.cov, influence=b.influence, inference=b.inference)
    lik = fit.inference if k is not None else None
    if k is not None:
        fit = widen_one_judge(fit, rows, k, ridge=ridge, n_ridge=n_ridge, level=level,
                              engine=engine, count_prior=count_prior)  # fmt: skip
    factor = reused_factor(fit, quality, names, open_ok=open_ok)
    b = with_two_step(Built(fit.cov, fit.influence, fit.inference), factor)
    fit = replace(fit, cov=b.cov, influence=b.influence, inference=b.inference)
    reused = None if quality.cov is None else quality.table
    table = judge_table(fit, fit.cov, data, level, unit_df(fit, fit.eta_at, df), reused=reused)
    if fit.inference is not None and fit.prior is not None:
        table = judges_alone(fit, data, built, level, table, reused, lik)
    table = coin_flip_test(table, fit.nll if nll is None else nll, m + fit.n_features, level)
    warn_weak_judges(table, stacklevel=6)  # the caller of ratings.fit
    prior = fit.prior if prior is ... else prior
    if scale_identified(table) and np.isfinite(fit.cov[:m, :m]).all():
        return CrowdInference(fit, table, crowd_summary(fit, names, prior, quality, factor))
    q = m + fit.n_features  # the scale of the ratings (and coefficients) is not identified
    cov = fit.cov.copy()
    cov[:q], cov[:, :q] = 0.0, 0.0
    cov[:q, :q] = np.where(np.eye(q, dtype=bool), np.inf, 0.0)
    cov[fit.ref, fit.ref] = 0.0
    fit = replace(fit, cov=cov, inference=None)
    return CrowdInference(fit, table, crowd_summary(fit, names, prior, quality, factor,
                                                    open_intervals=True))  # fmt: skip


def judges_alone(fit: DesignFit, data: Comparisons, built: Builder, level: float,
                 table: pd.DataFrame, reused: pd.DataFrame | None,
                 lik: ClusterInference | None = None) -> pd.DataFrame:  # fmt: skip
    """The judges table of a posterior-mode fit from the verdicts alone: each estimated eta's
    CR2 interval with the likelihood's information (the strengths' prior only, not the one on
    eta) in the bread, and ``uninformative`` where it or the CR1 interval (observed
    information, normal quantile) reaches 1/2 (see
    :func:`ratings.models.crowd.judge_table.scale_identified`); both by ``built``. ``table``:
    the table of the fit's own covariance, kept where that CR2 has no positive definite bread;
    ``lik``: that CR2 inference where the fit already built it (one judge), else it is built
    here."""
    def cov_of(kind: str, eta_prior: bool) -> Built | None:  # None: the bread is singular
        try:
            return built(fit, kind, eta_prior)
        except NonIdentifiableError:
            return None

    if lik is None:
        lik = getattr(cov_of("sandwich", False), "inference", None)
    if lik is not None:
        eta_df = lik.df(np.eye(fit.params.size)[fit.eta_at])
        table = judge_table(fit, lik.covariance(), data, level, eta_df, reused=reused)
    else:
        table = table.assign(uninformative=table["status"] == "estimated")
    cr1 = cov_of("sandwich-z", True)
    flips = np.asarray(judge_table(fit, np.full_like(fit.cov, np.inf) if cr1 is None
                                   else cr1.cov, data, level)["uninformative"])  # fmt: skip
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
