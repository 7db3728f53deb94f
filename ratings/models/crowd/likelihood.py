"""Crowd-BT: Bradley-Terry with one quality parameter per judge (Chen et al. 2013).

Judge k reports the true order of a decisive verdict with probability eta_k:
P(i beats j | k, decisive) = eta_k sigma(s_i - s_j) + (1 - eta_k) sigma(s_j - s_i).
eta_k = 1 is Bradley-Terry; eta_k = 1/2 is a coin flip.

Ties. The likelihood conditions on the verdict being decisive: a tie carries no information on
the strengths or on the judge. This is the full likelihood when each judge declares ties at its
own rate whatever the pair, and a conditional likelihood (consistent, it only leaves out what
the tie counts say) when ties are more frequent between close models as in Davidson's (1970)
model, as long as a judge's flip acts on decisive verdicts. Either way eta and the strengths
mean the same at any tie rate. The alternatives do not: a tie inside the judge's probability as
an outcome of 1/2 pulls eta towards 1/2 by the factor 1 - tau on logs with a tie share tau
independent of the pair, and a tie as a Bradley-Terry half-win without a flip pulls the
strengths together, which the fit then undoes by raising eta (on a 30-model board with 10%
random ties, judges of quality 0.95 / 0.88 / 0.80 are estimated at 1.0 / 1.0 / 0.92).
Consequences: ties are counted in the tables but not fitted; a Crowd-BT scope is not pulled
together by ties as a Bradley-Terry scope is (where a tie is half a win), and with eta = 1
Crowd-BT is Bradley-Terry on the decisive verdicts.

Parametrisation: eta is kept in its natural units inside the box [1/2, 1] (a projected Newton
method), which removes the mirror solution (s, eta) -> (-s, 1 - eta). The default fit adds the
weak priors of :mod:`ratings.models.crowd.prior`, which keep eta strictly inside the box and every
strength finite; ``prior=None`` gives the plain maximum-likelihood estimate, whose etas may sit
on a bound (``status="boundary"``, no standard error). Strengths start from the Bradley-Terry
fit, which lies on the eta > 1/2 branch.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from ratings.core.errors import ConvergenceWarning, NonIdentifiableError, option
from ratings.core.schema import DETERMINISTIC_JUDGE
from ratings.data.comparisons import Comparisons
from ratings.inference.builder import psd_root
from ratings.kernels.engine import Engine
from ratings.models.bt import fit_bt
from ratings.models.covariates import (
    DIVERGED,
    DesignFit,
    Remedy,
    fit_design,
    pair_built,
    pair_design,
)
from ratings.models.crowd.prior import DEFAULT_PRIOR, CrowdPrior, prior_terms
from ratings.models.families import CROWD_BT

__all__ = [
    "DIVERGED",
    "ETA_START",
    "PRIOR_SHIFT_LIMIT",
    "SCREEN",
    "choose_estimate",
    "etas_inside",
    "first_order_move",
    "fit_crowd_bt",
    "fit_crowd_default",
    "fix_eta",
    "in_ses",
    "psd_root",
    "trial_fit",
]

ETA_START = CROWD_BT.start
_Tried = TypeVar("_Tried")
_CROWD = Remedy("Crowd-BT", "etas", "", "")  # plain Crowd-BT words its own errors
#: A regular plain estimate is the default only while the prior would move none of its
#: strengths (against their mean) or etas by more than this many standard errors.
PRIOR_SHIFT_LIMIT = 0.5
#: Below this share of the limit the first-order move decides alone (no posterior-mode fit).
SCREEN = 0.8


def fix_eta() -> str:
    """The remedy where Crowd-BT cannot tell judge quality apart: reuse eta from past logs."""
    return f"Fix eta from past judgments ({option('judge_quality')})"


def fit_crowd_bt(
    data: Comparisons,
    *,
    ref: int = 0,
    fixed_eta: dict[str, float] | None = None,
    prior: CrowdPrior | None = DEFAULT_PRIOR,
    tol: float = 1e-10,
    max_iter: int = 200,
    engine: Engine = "auto",
) -> DesignFit:
    """Fit strengths and judge qualities jointly: the posterior mode under ``prior``, or the
    maximum-likelihood estimate (``prior=None``).

    Parameters
    ----------
    data : Comparisons
    ref : int
        Model pinned at strength 0.
    fixed_eta : dict, optional
        Judges whose eta is known (from an earlier fit); judge ``"deterministic"`` is always 1.
        Every other judge's eta is estimated.
    prior : CrowdPrior or None, default=DEFAULT_PRIOR
        See :mod:`ratings.models.crowd.prior`.
    """
    nj = len(data.judges)
    fixed = dict(fixed_eta or {})
    fixed[DETERMINISTIC_JUDGE] = 1.0  # judge-free comparisons are never noisy
    estimated = np.array([j not in fixed for j in data.judges], dtype=bool)
    eta0 = np.array([fixed.get(j, ETA_START) for j in data.judges], dtype=np.float64)
    rows = data.collapsed(engine=engine)  # same likelihood on one row per (judge, i, j)
    start = fit_bt(rows, ref=ref, tol=1e-6, max_iter=50, engine=engine,
                   penalty=0.0 if prior is None else prior.ridge).theta  # fmt: skip
    # The BT fit of noisy verdicts is attenuated by about (2 eta - 1); undo that for the start.
    decisive = np.bincount(rows.judge, rows.wi + rows.wj, nj)
    attenuation = float(np.average(2 * eta0 - 1, weights=decisive)) if decisive.sum() else 1.0
    try:
        fit = fit_design(pair_design(rows, engine), start / max(attenuation, 0.2), ref=ref,
                         family=CROWD_BT, eta0=eta0, eta_free=estimated, ci=None, prior=prior,
                         engine=engine, tol=tol, max_iter=max_iter, remedy=_CROWD)  # fmt: skip
    except NonIdentifiableError:
        raise NonIdentifiableError(
            "The Crowd-BT maximum-likelihood estimate does not exist: the likelihood keeps "
            "increasing as strengths spread without bound (a judge's eta going to 1, or a "
            "model whose losses are all explained as judge flips). Fit with the default prior "
            f"({option('prior', 'default')}), which keeps it finite; "
            f"{fix_eta()[0].lower()}{fix_eta()[1:]}; or fit with {option('model', 'bt')}."
        ) from None
    return replace(fit, nll=fit.likelihood_nll())


def fit_crowd_default(data: Comparisons, *, clustered: bool, level: float = 0.95,
                      prior: CrowdPrior | None = DEFAULT_PRIOR, **kwargs) -> DesignFit:
    """The default Crowd-BT estimate: the plain maximum-likelihood estimate where it is
    regular and the prior would hardly move it, the posterior mode under ``prior`` otherwise.

    Regular: it exists, converged, its information is positive definite, and every estimated
    eta lies inside (1/2, 1) with its Wald interval at ``level`` (the task-clustered sandwich
    when ``clustered``, else per verdict; normal quantile). On or near the boundary, where the
    MLE's intervals fail (Self & Liang 1987), the prior keeps eta and the strengths off it.
    A regular plain estimate is still replaced by the posterior mode where the prior moves it
    by more than :data:`PRIOR_SHIFT_LIMIT` of its standard errors (:func:`in_ses`): on
    small boards a plain estimate can look regular because its etas happened to read low, and
    then its ratings are spread too wide (docs/crowd.md). With a single estimated eta this is
    left out: there the regular plain estimates cover, and the posterior mode's intervals,
    widened by eta's profile likelihood (:mod:`ratings.models.crowd.onejudge`), would over-cover.
    The posterior mode is fitted for this check only where the move to first order
    (:func:`first_order_move`) exceeds :data:`SCREEN` of the limit.
    Away from the boundary and with enough data neither applies and the estimate is the MLE
    itself (for a judge of quality 0.95, on most boards from about 100,000 verdicts;
    docs/crowd.md). The posterior mode records which etas the plain estimate put on a bound
    (``plain_on_bound``; all where it had none): the one-judge widening rescales only there
    (:mod:`ratings.models.crowd.onejudge`).
    ``kwargs`` go to :func:`fit_crowd_bt` (``data`` is aggregated rows with clusters).
    """
    def covariance(plain: DesignFit) -> NDArray[np.float64]:
        return pair_built(plain, data, "sandwich-z", clustered=clustered,
                          engine=kwargs.get("engine", "auto")).cov  # fmt: skip

    return choose_estimate(lambda prior, plain: fit_crowd_bt(data, prior=prior, **kwargs),
                           covariance=covariance, prior=prior, level=level)


def choose_estimate(fit: Callable[[CrowdPrior | None, DesignFit | None], DesignFit], *,
                    covariance: Callable[[DesignFit], NDArray[np.float64]],
                    prior: CrowdPrior | None, level: float,
                    keep_plain: bool = False) -> DesignFit:  # fmt: skip
    """Crowd-BT's default-estimate rule (:func:`fit_crowd_default`), for any fit of it (a
    :class:`~ratings.models.covariates.DesignFit`, plain or with covariates): ``fit(prior,
    plain)`` is the fit under ``prior`` (None: the plain maximum-likelihood estimate) started
    from ``plain`` where given; ``prior=None`` fits the plain estimate alone. Otherwise the
    plain estimate ``fit(None, None)`` where it is regular (converged, a finite covariance
    ``covariance(plain)``, infinite where its information is singular, and every estimated eta
    inside (1/2, 1) with its Wald interval at ``level`` from it, normal quantile) and, with two
    or more estimated etas, ``prior`` would move it by at most :data:`PRIOR_SHIFT_LIMIT` of its
    standard errors (:func:`in_ses`; the first-order move, :func:`first_order_move`, decides
    alone below :data:`SCREEN` of the limit), else the posterior mode ``fit(prior, plain)``
    (``plain`` None where it has no estimate: :class:`NonIdentifiableError` from the fit, or
    from ``covariance(plain)`` where that raises on a singular information), with
    ``plain_on_bound``, ``plain_found`` and ``prior_shift`` saying why. ``keep_plain`` (judge
    effects without style features, whose intervals were measured on plain estimates): the
    plain estimate wherever it exists (converged, a finite covariance), on a bound or not, the
    posterior mode (``plain_found`` and ``plain_on_bound`` as above) only where it does not."""
    if prior is None:
        return fit(None, None)

    def plain_fit() -> tuple[DesignFit, NDArray[np.float64]]:
        plain = fit(None, None)
        return plain, covariance(plain)  # may raise on a singular information: no estimate

    tried = trial_fit(plain_fit)
    plain, cov = (None, None) if tried is None else tried
    found = plain is not None and plain.converged and bool(np.isfinite(cov).all())
    if found and keep_plain:
        return plain
    regular = found and not plain.boundary.any()
    if regular:
        on = plain.eta_at[plain.live]
        regular = etas_inside(plain.params[on], np.diag(cov)[on], level)
    if regular:
        if int(plain.estimated.sum()) < 2:
            return plain  # one judge: the widened posterior mode over-covers
        step = first_order_move(plain, prior)
        if step is not None and in_ses(plain, step, cov) <= SCREEN * PRIOR_SHIFT_LIMIT:
            return plain  # the move clearly smaller to first order
        post = fit(prior, plain)
        moved = in_ses(plain, post.params - plain.params, cov)
        if moved <= PRIOR_SHIFT_LIMIT:
            return plain
        return replace(post, plain_on_bound=np.zeros_like(post.estimated), prior_shift=moved)
    post = fit(prior, plain)
    bound = post.estimated if plain is None else plain.boundary
    return replace(post, plain_on_bound=bound.copy(),
                   plain_found=plain is not None and plain.converged)


def trial_fit(fit: Callable[[], _Tried]) -> _Tried | None:
    """The plain estimate the default estimate tries first (with what else ``fit`` computes
    from it): ``fit()`` with its overflow and non-convergence warnings silenced (the fit's
    ``converged`` says it), None where no estimate exists (:class:`NonIdentifiableError`)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            warnings.simplefilter("ignore", ConvergenceWarning)
            return fit()
    except NonIdentifiableError:
        return None


def first_order_move(plain: DesignFit, prior: CrowdPrior) -> NDArray[np.float64] | None:
    """The posterior mode's move from the plain estimate to first order: one Newton step of
    the penalised objective from the plain maximum, ``-(H + P)^-1 g`` over ``plain.free`` (H
    the likelihood's Hessian, P and g the negative log-prior's Hessian and gradient there).
    None where that Hessian is singular."""
    _, g, h = prior_terms(plain.theta, plain.eta, plain.estimated, prior, plain.n_features)
    free = plain.free
    move = np.zeros(g.size)
    try:
        move[free] = -np.linalg.solve((plain.hessian + h)[np.ix_(free, free)], g[free])
    except np.linalg.LinAlgError:
        return None
    return move


def in_ses(plain, move: NDArray[np.float64], cov: NDArray[np.float64]) -> float:
    """The largest component of ``move`` (over ``plain.params``) in standard errors from
    ``cov``: strengths against their mean (so whatever the reference), and the estimated etas
    off a bound. How far the prior moves a fit (:data:`PRIOR_SHIFT_LIMIT`)."""
    keep = np.r_[np.arange(plain.n_models), plain.eta_at[plain.live]]
    move, cov, m = move[keep], cov[np.ix_(keep, keep)], plain.n_models
    s = cov[:m, :m]
    var = np.concatenate([np.diag(s) - 2.0 * s.mean(axis=1) + s.mean(),  # of s_i - mean(s)
                          np.diag(cov)[m:]])  # fmt: skip
    d = np.concatenate([move[:m] - move[:m].mean(), move[m:]])
    ok = var > 0
    return float(np.max(np.abs(d[ok]) / np.sqrt(var[ok]), initial=0.0))


def etas_inside(eta: NDArray[np.float64], var: NDArray[np.float64], level: float) -> bool:
    """Whether every estimated eta's Wald interval at ``level`` (normal quantile) lies inside
    (1/2, 1): the regularity the default estimate asks of the plain maximum likelihood."""
    from ratings.core.tdist import critical_value

    half = critical_value(level) * np.sqrt(var)
    return bool(np.all(np.isfinite(half)) and np.all(eta - half > 0.5)
                and np.all(eta + half < 1.0))  # fmt: skip
