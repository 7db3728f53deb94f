"""Etas reused from an earlier fit: the two-step term of their covariance, for every Crowd-BT fit.

A fit that reuses judge qualities (``judge_quality=``, CLI ``--judge-quality``) fixes each
reused eta at the source's estimate e. That estimate came from other verdicts, with its own
covariance V_e, and the strengths fitted at e inherit it: the two-step term
H_xx^-1 H_xe V_e H_ex H_xx^-1 of Murphy & Topel (1985), computed once for every fit by
:func:`ratings.inference.builder.two_step_factor` and added to the fit's covariance (and as a
known variance to CR2's degrees of freedom) by :func:`ratings.inference.builder.with_two_step`.

Every Crowd-BT fit, plain or with covariates (style features or judge effects), takes it from
here (:func:`design_eta_factor`, applied by :func:`ratings.models.crowd.policy.reused_factor`
in :func:`~ratings.models.crowd.policy.crowd_inference`). H is the likelihood's observed
information with the strengths' prior (and the style features' ridge), without the prior on
the estimated etas (:attr:`ratings.models.covariates.DesignFit.information`), and H_xe its
columns of the reused etas. ``eta_known=True`` (CLI ``--eta-known``) leaves the
term out: the reused etas are then taken as known.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.inference.builder import two_step_factor

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


def design_eta_factor(fit, eta_cov: pd.DataFrame,
                      judges: pd.Index) -> NDArray[np.float64] | None:  # fmt: skip
    """The two-step term of reused etas of a Crowd-BT fit, plain or with covariates, in factored
    form.

    Parameters
    ----------
    fit : ratings.models.covariates.DesignFit
        The fit, params (strengths, coefficients, etas) with the Hessian of its penalised
        objective; its :attr:`~ratings.models.covariates.DesignFit.information` (the prior on
        the estimated etas taken out) is H.
    eta_cov : DataFrame
        The reused etas' covariance (the judge-quality source's).
    judges : Index
        The fit's judges, in the order of its etas.

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
    return two_step_factor(fit.information, fit.free, fit.hessian[:, fit.eta_at[at]], v)
