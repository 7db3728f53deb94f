"""The Crowd-BT prior, and what a Crowd-BT fit carries beyond the strengths.

Crowd-BT as Chen et al. (2013) formulate it is Bayesian: Gaussian priors on the objects' scores
and Beta priors on the annotators' quality. Where the plain maximum-likelihood estimate is not
regular (on or near the boundary, or missing;
:func:`ratings.models.crowd.likelihood.fit_crowd_default`) the
default fit is the posterior mode of that model with weak, fixed priors (a penalised
likelihood):

* judge quality: Beta(1 + ``agree``, 1 + ``flip``) on u = 2 eta - 1 in (0, 1), i.e. the
  negative log-prior ``-(agree log u + flip log(1 - u))``. It keeps eta strictly inside
  (1/2, 1), where the likelihood is smooth. At the bound eta = 1 the maximum-likelihood
  estimate is not asymptotically normal and intervals built on it fail (Self & Liang 1987):
  there the judge's eta is treated as known, so the strengths' intervals shrink and centre on
  a compressed scale. The pull towards the middle (``flip`` a little above ``agree``) is what
  keeps a judge that made no visible error on a small board from reading eta = 1.
* strengths: a Gaussian prior with standard deviation ``strength_sd`` on the log-strengths
  around their mean (a ridge ``(s - mean s)^2 / (2 sd^2)``), which keeps every estimate finite.
  Without it, a model that wins most of its decisive verdicts can run off to infinity with the
  judges' etas lowered to explain its losses as flips, even on boards whose Bradley-Terry
  estimate exists.

The default intervals are the CR2 sandwich of that estimate with both priors' curvature in the
bread (:func:`ratings.models.covariates.pair_built`: the posterior mode's sampling variance);
the judges' own intervals, the open-interval rule and the CR1 / HC0 / model-based intervals use
the likelihood's information with the strengths' prior only
(:attr:`ratings.models.covariates.DesignFit.information`).
Both priors are fixed, and used only where the plain estimate is irregular, which on growing
boards it stops being: the default then is the plain estimate. ``prior=None`` (CLI
``--prior none``) always fits the plain maximum-likelihood estimate. The default values come
from the coverage study in ``docs/coverage.md``, which also says where they fall short.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.errors import option

__all__ = ["DEFAULT_PRIOR", "CrowdPrior", "CrowdSummary", "PriorArg", "check_prior", "prior_terms"]


class CrowdPrior(NamedTuple):
    """Pseudo-counts of the Beta prior on u = 2 eta - 1 and the prior sd of log-strengths."""

    agree: float = 1.0
    flip: float = 1.5
    strength_sd: float = float(np.sqrt(5.0))  # 388 Elo

    @property
    def ridge(self) -> float:
        """The Gaussian prior's precision, 1 / strength_sd^2."""
        return 1.0 / self.strength_sd**2

    @property
    def strengths_only(self) -> CrowdPrior:
        """This prior without its Beta part on eta (the strengths' Gaussian part alone)."""
        return CrowdPrior(0.0, 0.0, self.strength_sd)


#: The default prior: Beta(2, 2.5) on u = 2 eta - 1 (mode eta = 0.70, 90% of its mass on
#: eta in [0.56, 0.90]) and a normal prior with sd sqrt(5) = 2.24 (388 Elo) on the strengths.
DEFAULT_PRIOR = CrowdPrior()

PriorArg = CrowdPrior | tuple | Literal["default"] | None


def check_prior(prior: PriorArg) -> CrowdPrior | None:
    """Normalise a ``prior`` argument; raises ``ValueError`` naming what is wrong."""
    if prior is None or (isinstance(prior, str) and prior.lower() == "none"):
        return None
    bad = (f"{option('prior')} must be 'default', 'none' or AGREE,FLIP,SD (in Python also None "
           f"or CrowdPrior(agree, flip, strength_sd)); got {prior!r}.")  # fmt: skip
    if isinstance(prior, str):
        if prior.lower() != "default":
            raise ValueError(bad)
        return DEFAULT_PRIOR
    try:
        out = CrowdPrior(*(float(v) for v in prior))
    except (TypeError, ValueError):
        raise ValueError(bad) from None
    if not (min(out.agree, out.flip) >= 0 and np.isfinite(out.agree + out.flip)
            and out.strength_sd > 0):  # fmt: skip
        raise ValueError(
            f"{option('prior')} needs agree >= 0, flip >= 0 and strength_sd > 0 (finite); got "
            f"{out}."
        )
    return out


def prior_terms(
    theta: NDArray[np.float64], eta: NDArray[np.float64], estimated: NDArray[np.bool_],
    prior: CrowdPrior | None, gap: int = 0,
) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:  # fmt: skip
    """Negative log-prior, its gradient and Hessian over x = (theta, ``gap`` coefficients
    without a prior (a design's covariates), eta).

    The Beta part applies to the ``estimated`` etas only; it is +inf at eta = 1/2 or 1 (when
    its pseudo-counts are positive), which the line search of the fit never accepts.
    """
    m, k = theta.size, eta.size
    grad, hess = np.zeros(m + gap + k), np.zeros((m + gap + k, m + gap + k))
    if prior is None:
        return 0.0, grad, hess
    lam = prior.ridge
    c = theta - theta.mean()
    value = 0.5 * lam * float(c @ c)
    grad[:m] = lam * c
    hess[:m, :m] = lam * (np.eye(m) - 1.0 / m)
    if estimated.any():
        a, b = prior.agree, prior.flip
        u = 2.0 * eta[estimated] - 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            parts = -(a * np.log(u) if a else 0.0) - (b * np.log1p(-u) if b else 0.0)
            g = -2.0 * (a / u - b / (1.0 - u))
            h = 4.0 * (a / u**2 + b / (1.0 - u) ** 2)
        value += float(np.sum(parts))
        idx = m + gap + np.flatnonzero(estimated)
        grad[idx] = g
        hess[idx, idx] = h
    return value, grad, hess


@dataclass(frozen=True, eq=False)
class CrowdSummary:
    """What a Crowd-BT fit carries beside its strengths and judges table.

    Attributes
    ----------
    eta_cov : pandas.DataFrame
        Covariance of the judges' etas (labelled by judge): the sandwich of the fit for
        estimated judges, the judge-quality file's covariance for reused ones, zero otherwise.
    prior : CrowdPrior or None
        The prior of the fit (None: plain maximum likelihood).
    eta_influence : ndarray, shape (K_reused, M), or None
        The two-step term of reused etas in factored form: ``eta_influence.T @ eta_influence``
        is the covariance the reused etas' uncertainty adds to the strengths (already included
        in ``Ratings.cov``). Labelled like ``Ratings.strength`` and shifted with it.
    open_intervals : bool
        True when the data cannot tell the judges' quality from the spread of the ratings, and
        the strengths' intervals were left open (infinite).
    prior_used : bool
        False when the fit is the plain maximum-likelihood estimate although ``prior`` was
        given: it was regular (see :func:`ratings.models.crowd.likelihood.fit_crowd_default`:
        converged, every
        estimated eta and its interval inside (1/2, 1)), so the prior was not needed; with
        judge effects and no style features, it existed.
    plain_on_bound : tuple of str
        Where the prior was used: the judges whose eta the plain maximum-likelihood fit put on
        a bound (1/2 or 1), the boards whose intervals are the least reliable
        (``docs/crowd.md``); empty otherwise.
    plain_found : bool
        False where the prior was used because the plain fit had no estimate or did not
        converge.
    prior_shift : float
        Where the prior was used over a regular plain estimate because it moved that estimate
        by more than ``ratings.models.crowd.likelihood.PRIOR_SHIFT_LIMIT`` standard errors: the
        largest such move
        (``ratings.models.crowd.likelihood.in_ses``); NaN otherwise.
    """

    eta_cov: pd.DataFrame
    prior: CrowdPrior | None
    eta_influence: NDArray[np.float64] | None = None
    open_intervals: bool = False
    prior_used: bool = True
    plain_on_bound: tuple[str, ...] = ()
    plain_found: bool = True
    prior_shift: float = float("nan")

    def estimate_note(self) -> str:
        """Which estimate the fit is, and why: a line of the fit's summary."""
        if not (self.prior_used and self.prior is not None):
            return "plain maximum likelihood"
        if not self.plain_found:
            why = "the plain maximum-likelihood fit has no estimate here or did not converge"
        elif self.plain_on_bound:
            names = ", ".join(repr(j) for j in self.plain_on_bound)
            why = (f"the plain estimate puts eta of {names} on its bound; see docs/crowd.md, "
                   "'When to distrust a Crowd-BT interval'")  # fmt: skip
        elif not math.isnan(self.prior_shift):
            why = (f"the prior moves the plain estimate by {self.prior_shift:.1f} standard "
                   "errors: too small a board for it; see docs/crowd.md")  # fmt: skip
        else:
            why = ("the plain estimate is not regular here: an eta's interval reaches 1/2 or 1, "
                   "or its information is singular")  # fmt: skip
        return f"posterior mode under the weak priors ({why})"

    def shifted(self, shift) -> CrowdSummary:
        """The same summary with ``eta_influence`` passed through ``shift`` (a re-anchoring)."""
        if self.eta_influence is None:
            return self
        return replace(self, eta_influence=shift(self.eta_influence))
