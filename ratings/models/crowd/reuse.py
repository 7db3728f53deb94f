"""Etas reused from an earlier fit: the two-step term of their covariance, for every Crowd-BT fit.

A fit that reuses judge qualities (``judge_quality=``, CLI ``--judge-quality``) fixes each
reused eta at the source's estimate e. That estimate came from other verdicts, with its own
covariance V_e, and the strengths fitted at e inherit it: the two-step term
H_xx^-1 H_xe V_e H_ex H_xx^-1 of Murphy & Topel (1985), computed once for every fit by
:func:`ratings.inference.builder.two_step_factor` and added to the fit's covariance (and as a
known variance to CR2's degrees of freedom) by :func:`ratings.inference.builder.with_two_step`.

Every Crowd-BT fit, plain or with covariates (style features or judge effects), takes it from
here (:func:`reused_factor`, applied in
:func:`~ratings.models.crowd.policy.crowd_inference`). H is the likelihood's observed
information with the strengths' prior (and the style features' ridge), without the prior on
the estimated etas (:attr:`ratings.models.covariates.DesignFit.information`), and H_xe its
columns of the reused etas. ``eta_known=True`` (CLI ``--eta-known``) leaves the
term out: the reused etas are then taken as known.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.errors import NonIdentifiableError, option
from ratings.inference.builder import two_step_factor
from ratings.models.crowd.quality import ResolvedQuality

__all__ = ["reused_factor"]


def reused_factor(fit, quality: ResolvedQuality, judges: pd.Index, *,
                  open_ok: bool = True) -> NDArray[np.float64] | None:  # fmt: skip
    """The two-step term of the etas a Crowd-BT fit, plain or with covariates, reuses with a
    covariance, in factored form.

    Parameters
    ----------
    fit : ratings.models.covariates.DesignFit
        The fit, params (strengths, coefficients, etas) with the Hessian of its penalised
        objective; its :attr:`~ratings.models.covariates.DesignFit.information` (the prior on
        the estimated etas taken out) is H.
    quality : ResolvedQuality
        The reused etas; their covariance ``quality.cov`` is the judge-quality source's.
    judges : Index
        The fit's judges, in the order of its etas.
    open_ok : bool, default=True
        Where the information is not positive definite over the estimated parameters: None
        (the intervals are open already), else
        :class:`~ratings.core.errors.NonIdentifiableError`.

    Returns
    -------
    ndarray, shape (K_e, P), or None
        F with ``F.T @ F`` the term over all params (:func:`ratings.inference.builder.
        two_step_factor`); None where no reused eta of ``judges`` has a covariance, or it is
        zero (the etas are then as good as known).
    """
    if quality.cov is None:
        return None
    names = [j for j in quality.cov.index if j in set(judges)]
    v = quality.cov.loc[names, names].to_numpy(dtype=np.float64)
    if not names or not np.any(v):
        return None
    at = fit.eta_at[judges.get_indexer(names)]
    try:
        return two_step_factor(fit.information, fit.free, fit.hessian[:, at], v)
    except np.linalg.LinAlgError:
        if open_ok:
            return None
        raise NonIdentifiableError(
            "The information of the strengths, covariates and estimated etas is singular, so "
            f"the uncertainty of the etas reused from {option('judge_quality')} cannot be "
            f"carried into the intervals. Pass {option('eta_known', True)} to take them as "
            "known.") from None  # fmt: skip
