"""Intervals of a one-judge Crowd-BT posterior mode: eta's uncertainty from its profile likelihood.

With a single judge, eta and the spread of the ratings are told apart only by the shape of the
win curve. Where the plain estimate is irregular and the default fit is the posterior mode
(:func:`ratings.models.crowd.likelihood.fit_crowd_default`; a quarter of 2,000-verdict one-judge
boards, whose
plain eta sits on 1), the CR2 sandwich is a linearisation at an eta that is typically too high:
the ratings sit on a compressed scale and their sandwich variances, which grow like
1 / (2 eta - 1)^2, are evaluated where they are smallest. Measured on those boards
(``benchmarks_perf/coverage_crowd.py``, cell ``c2k-one``) the CR2 intervals covered 0.904.

The sandwich's bread leaves out the Beta prior's curvature on that eta (the likelihood's own
information, as for the judges' intervals): with one judge the prior's curvature is a sizeable
part of eta's information and counting it understates how far eta, and with it the scale, can
move. Two further corrections, both driven by eta's **profile likelihood** (the likelihood
at the strengths fitted with their prior at each fixed eta: that prior only keeps them finite,
and counting it would narrow the profile; its 95% lower limit ``eta_lo`` solves
2 (l_max - l(eta_lo)) = chi2_1(0.95), Venzon & Moolgavkar 1988), which on these boards
reaches about twice as far below the estimate as the Wald interval:

* the strengths' shift along the profile, ``d = x(eta_lo) - x_hat``, enters as a two-step
  term (Murphy & Topel 1985) with eta's variance taken as ``((eta_hat - eta_lo) / z)^2``
  rather than the sandwich's: ``d d^T / z^2`` less what the sandwich already carries in that
  direction;
* where the plain estimate put eta on its bound (or had none), the sandwich itself is rescaled
  as if evaluated one profile standard error below the estimate,
  ``e1 = eta_hat - (eta_hat - eta_lo) / z``: every cluster influence times
  ``(2 eta_hat - 1) / (2 e1 - 1)``, the factor by which the ratings' sampling sd grows there (a
  conservative plug-in of the nuisance parameter). There the posterior mode's eta is pushed up
  by a likelihood whose maximum is at 1 (0.922 against 0.883 on the ``c2k-one`` boundary
  boards). Where the plain estimate is inside (1/2, 1) but its interval reaches a bound, the
  mode sits at or below it (0.878) and the rescaling over-covered (0.964 / 0.964 on those
  boards, 0.954 / 0.953 without it).

Only the one-judge posterior mode is widened: with several judges the others pin the scale
(their cells cover 0.95-0.97 without it), and a regular plain estimate keeps its sandwich. The
profile costs about 15 refits of the board with eta fixed.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import replace
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from ratings.core.errors import NonIdentifiableError
from ratings.core.schema import DETERMINISTIC_JUDGE
from ratings.core.tdist import normal_quantile
from ratings.data.comparisons import Comparisons
from ratings.data.slots import SlotCounts
from ratings.kernels.engine import Engine
from ratings.models.covariates import DesignFit, fit_design
from ratings.models.crowd.prior import CrowdPrior
from ratings.models.families import CROWD_BT

__all__ = ["OneJudgeWidening", "profile_lower_limit", "profile_widening", "single_judge",
           "widen_one_judge"]

_EPS_PRIOR = 1e-9  # Beta pseudo-counts of the profile's top: keep eta = 1 reachable but finite
_MAX_SCALE = 1e3  # the profile reaches a coin flip within one of its standard errors
#: Low ends tried for eta's profile: near a coin flip the unpenalised style coefficients of a
#: refit run off (the strengths have their prior), so the bracket starts at the first that fits.
_PROFILE_LOWS = (0.501, 0.51, 0.53, 0.56, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)


class OneJudgeWidening(NamedTuple):
    """What :func:`profile_widening` adds: ``scale`` multiplies the cluster influences,
    ``extra`` (1 x n_params) is the profile's two-step term; ``eta_lo`` its lower limit."""

    scale: float
    extra: NDArray[np.float64] | None
    eta_lo: float


def single_judge(fit: DesignFit, data: Comparisons) -> int | None:
    """Index of the only judge (besides forfeit rows) when its eta was estimated inside the
    box by the posterior mode, else None."""
    judged = [k for k, j in enumerate(data.judges) if j != DETERMINISTIC_JUDGE]
    if fit.prior is None or len(judged) != 1:
        return None
    k = judged[0]
    return k if fit.estimated[k] and not fit.boundary[k] else None


def profile_widening(fit: DesignFit, rows: SlotCounts, k: int, eta_var: float, *,
                     plain_on_bound: bool, ridge: float = 0.0, n_ridge: int | None = None,
                     level: float = 0.95, engine: Engine = "auto",
                     count_prior: bool = True) -> OneJudgeWidening | None:  # fmt: skip
    """The one-judge widening of a Crowd-BT posterior mode, plain or with covariates (see the
    module notes): judge ``k``'s eta (CR2 variance ``eta_var``) profiled by refits of the
    design on ``rows`` (strengths and coefficients refitted at each fixed eta, started from the
    fit, under the strengths' prior and the ridge); the profile's top is the better of the refit
    at eta = 1 and the fit with eta free. ``count_prior``: whether the profile's values include
    the strengths' prior (the fits with covariates count it; plain Crowd-BT counts the
    likelihood alone). From eta's profile limit ``eta_lo`` and the move of all parameters to
    the profile's fit there: the sandwich rescaled only where the plain estimate put eta on its
    bound (``plain_on_bound``), and the two-step term less what the sandwich's ``eta_var``
    carries. None where the profile cannot be computed: its limit is not below the estimate, or
    a refit fails (their warnings are a trial's, silenced)."""
    # the refits' prior: the strengths' part, eta = 1 reachable but finite (the profile's top)
    prior = CrowdPrior(_EPS_PRIOR, _EPS_PRIOR, fit.prior.strength_sd)
    kw = {"ref": fit.ref, "family": CROWD_BT, "ci": None, "ridge": ridge, "n_ridge": n_ridge,
          "engine": engine, "prior": prior}  # fmt: skip

    def refit(eta_free: NDArray[np.bool_], e: float | None = None) -> DesignFit:
        eta0 = fit.eta.copy()
        if e is not None:
            eta0[k] = e
        out = fit_design(rows, fit.strength, beta0=fit.beta, eta0=eta0, eta_free=eta_free, **kw)
        return out if count_prior else replace(out, nll=out.likelihood_nll())

    fixed = fit.estimated.copy()
    fixed[k] = False
    fits: dict[float, DesignFit] = {}

    def nll(e: float) -> float:  # the profile at eta = e: a refit at fixed eta, kept
        fits[e] = refit(fixed, e)
        return float(fits[e].nll)

    eta_hat = float(fit.eta[k])
    try:
        with warnings.catch_warnings():  # refits of a trial: divergence is caught below
            warnings.simplefilter("ignore")
            top_nll, top_eta = nll(1.0), 1.0  # the profile's top: eta free, else on 1
            try:
                free_fit = refit(fit.estimated)
                if free_fit.nll < top_nll:
                    top_nll, top_eta = free_fit.nll, float(free_fit.eta[k])
            except NonIdentifiableError:  # diverges as eta runs to 1 under the weak prior
                pass
            eta_lo = profile_lower_limit(nll, top_nll, top_eta, eta_hat, level, _PROFILE_LOWS)
            if eta_hat - eta_lo <= 0:
                return None
            lower = fits.get(eta_lo) or refit(fixed, eta_lo)
    except (NonIdentifiableError, FloatingPointError, ValueError, np.linalg.LinAlgError):
        return None
    gap = eta_hat - eta_lo
    z = normal_quantile(level)
    e1 = eta_hat - gap / z
    scale = _MAX_SCALE if e1 <= 0.5 else min(_MAX_SCALE, max(1.0, (2 * eta_hat - 1) / (2 * e1 - 1)))
    if not plain_on_bound:
        scale = 1.0  # the plain estimate is interior: the mode's eta is not pushed up
    shrink = 1.0 - z**2 * eta_var / gap**2  # the part the sandwich at the estimate carries
    shift = lower.params - fit.params
    extra = (np.sqrt(shrink) / z * shift)[None, :] if shrink > 0 else None
    return OneJudgeWidening(float(scale), extra, float(eta_lo))


def profile_lower_limit(nll: Callable[[float], float], top_nll: float, top_eta: float,
                        eta_hat: float, level: float = 0.95,
                        lows: tuple[float, ...] = (0.5 + 1e-3,)) -> float:  # fmt: skip
    """eta's profile-likelihood lower limit at ``level``: the eta in (1/2, ``eta_hat``) where
    ``nll`` (the profile: the negative log-likelihood refitted at that eta) rises chi2_1(level)
    / 2 above its minimum (``top_nll``, at ``top_eta``, the fit with eta free); the bracket's
    low end where it never does (eta cannot be told from a coin flip). The low end is the first
    of ``lows`` whose refit exists (one that diverges, e.g. a style coefficient without a prior
    near a coin flip, tries the next); ``ValueError`` if none does. Raises what a refit raises
    at ``eta_hat``."""
    from scipy.optimize import brentq  # only here: scipy.optimize costs a one-shot BT fit 0.1 s

    z = normal_quantile(level)  # two-sided
    hi = min(top_eta, eta_hat)
    best = min(top_nll, nll(hi))
    crit = z * z / 2.0  # chi2_1(level) / 2
    for lo in (e for e in lows if e < hi):
        try:
            at_lo = nll(lo)
        except (NonIdentifiableError, FloatingPointError):
            continue
        if at_lo - best < crit:  # eta cannot be told from a coin flip at this level
            return lo
        return float(brentq(lambda e: nll(e) - best - crit, lo, hi, xtol=1e-4))
    raise ValueError("eta's profile has no refit below its estimate.")


def widen_one_judge(fit: DesignFit, rows: SlotCounts, k: int, *, ridge: float = 0.0,
                    n_ridge: int | None = None, level: float = 0.95, engine: Engine = "auto",
                    count_prior: bool = True) -> DesignFit:  # fmt: skip
    """A one-judge Crowd-BT posterior mode, plain or with covariates (its rows ``rows``), its CR2
    intervals widened by judge ``k``'s profile likelihood (:func:`profile_widening`; the
    sandwich rescaled where the plain estimate put eta on its bound, or had none). ``fit``
    unchanged where it has no CR2 inference or the profile fails."""
    from ratings.inference.builder import OnRequest

    if fit.inference is None or fit.prior is None or not fit.estimated[k] or fit.boundary[k]:
        return fit
    at = fit.eta_at[k]
    on_bound = fit.plain_on_bound is None or bool(fit.plain_on_bound[k])
    wide = profile_widening(fit, rows, k, float(fit.cov[at, at]), plain_on_bound=on_bound,
                            ridge=ridge, n_ridge=n_ridge, level=level, engine=engine,
                            count_prior=count_prior)  # fmt: skip
    if wide is None:
        return fit
    inference = fit.inference.scaled(wide.scale).with_extra(wide.extra)
    return replace(fit, cov=inference.covariance(), influence=OnRequest(inference.influence),
                   inference=inference)
