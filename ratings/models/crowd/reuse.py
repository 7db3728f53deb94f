"""Etas reused from an earlier fit: the two-step term of their covariance, for every Crowd-BT fit.

A fit that reuses judge qualities (``judge_quality=``, CLI ``--judge-quality``) fixes each
reused eta at the source's estimate e. That estimate came from other verdicts, with its own
covariance V_e, and the strengths fitted at e inherit it: the two-step term
H_xx^-1 H_xe V_e H_ex H_xx^-1 of Murphy & Topel (1985), computed once for every fit by
:func:`ratings.inference.builder.two_step_factor` and added to the fit's covariance (and as a
known variance to CR2's degrees of freedom) by :func:`ratings.inference.builder.with_two_step`.

Both Crowd-BT fits take it from here: plain Crowd-BT
(:func:`ratings.models.crowd.likelihood.reused_eta_factor`) and a fit with covariates, style
features or judge effects (:func:`design_eta_factor`). In both H is the likelihood's observed
information with the strengths' prior (and the style features' ridge), without the prior on
the estimated etas (what :attr:`ratings.models.crowd.likelihood.CrowdFit.information` counts),
and H_xe its columns of the reused etas. ``eta_known=True`` (CLI ``--eta-known``) leaves the
term out: the reused etas are then taken as known.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.inference.builder import two_step_factor
from ratings.models.crowd.prior import CrowdPrior, prior_terms

__all__ = ["design_eta_factor", "reused_block"]


def reused_block(eta_cov: pd.DataFrame, judges: pd.Index,
                 ) -> tuple[NDArray[np.int64], NDArray[np.float64]] | None:  # fmt: skip
    """The reused etas of the fit's ``judges`` that have a covariance: their positions among
    ``judges`` and their covariance V_e (from ``eta_cov``, the source's); None where there are
    none or V_e is zero (the etas are then as good as known)."""
    names = [j for j in eta_cov.index if j in set(judges)]
    if not names:
        return None
    v = eta_cov.loc[names, names].to_numpy(dtype=np.float64)
    if not np.any(v):
        return None
    return judges.get_indexer(names).astype(np.int64), v


def design_eta_factor(fit, eta_cov: pd.DataFrame, judges: pd.Index, *, ref: int,
                      prior: CrowdPrior | None) -> NDArray[np.float64] | None:  # fmt: skip
    """The two-step term of reused etas of a Crowd-BT fit with covariates, in factored form.

    Parameters
    ----------
    fit : ratings.models.covariates.DesignFit
        The fit, params (strengths, coefficients, etas) with the Hessian of its penalised
        objective.
    eta_cov : DataFrame
        The reused etas' covariance (the judge-quality source's).
    judges : Index
        The fit's judges, in the order of its etas.
    ref : int
        The model pinned at strength 0.
    prior : CrowdPrior or None
        The prior of the fit (a posterior mode's), None for the maximum-likelihood estimate:
        its part on the estimated etas is taken out of the information.

    Returns
    -------
    ndarray, shape (K_e, P), or None
        F with ``F.T @ F`` the term over all params (:func:`ratings.inference.builder.
        two_step_factor`); None where no reused eta has a covariance.

    Raises
    ------
    numpy.linalg.LinAlgError
        The information is not positive definite over the estimated parameters.
    """
    block = reused_block(eta_cov, judges)
    if block is None:
        return None
    at, v = block
    m, p = fit.n_models, fit.n_features
    estimated = np.asarray(fit.estimated, dtype=bool)
    live = estimated & ~np.asarray(fit.boundary, dtype=bool)
    free = np.concatenate([np.delete(np.arange(m), ref), m + np.arange(p),
                           m + p + np.flatnonzero(live)]).astype(np.int64)  # fmt: skip
    info = np.array(fit.hessian, dtype=np.float64)
    if prior is not None:  # the prior on the estimated etas is not information
        on_eta = m + p + np.arange(fit.eta.size)
        info[np.ix_(on_eta, on_eta)] -= prior_terms(fit.strength, fit.eta, estimated,
                                                    prior)[2][m:, m:]  # fmt: skip
    return two_step_factor(info, free, fit.hessian[:, m + p + at], v)
