"""What the estimators share: their typed result (:class:`Estimate`) and refits on bootstrap
resamples that skip resamples without an estimate."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.errors import DegenerateBoardError, NonIdentifiableError
from ratings.data.comparisons import Comparisons
from ratings.inference.builder import Built
from ratings.inference.cluster import ClusterInference
from ratings.inference.covariance import bootstrap_draws
from ratings.models.crowd.prior import CrowdSummary
from ratings.models.existence import check_identifiable

__all__ = ["Estimate", "bootstrap_refits"]


@dataclass(frozen=True, eq=False)
class Estimate:
    """One fit of strengths with its intervals' pieces, as an estimator hands it to
    :func:`ratings.fit` (which labels it into :class:`~ratings.result.Ratings`).

    Attributes
    ----------
    theta : ndarray, shape (M,)
        Log-strengths, the reference's at 0.
    cov : ndarray, shape (M, M)
        Covariance of ``theta`` for the interval kind asked for (infinite variances: open
        intervals).
    nll, converged, n_iter, max_grad
        The negative log-likelihood at ``theta`` (penalised where a penalty was used) and
        Newton's convergence.
    model_cov : ndarray or callable
        The model-based covariance, or (Crowd-BT, where it costs one more inversion) a function
        computing it when asked: what robust intervals of zero width are checked against.
    draws : ndarray, shape (n_boot, M), or None
        Bootstrap draws of ``theta``.
    influence : ndarray, shape (G, M), OnRequest or None
        Per-cluster influences (their cross-product is the clustered sandwich); CR2's as a
        :class:`~ratings.inference.builder.OnRequest`, computed when the result's are read.
    inference : ClusterInference or None
        The CR2 pieces giving each contrast its degrees of freedom.
    judges : DataFrame or None
        Crowd-BT's judges table.
    crowd : CrowdSummary or None
        What a Crowd-BT fit carries beside its strengths.
    unbounded : DataFrame or None
        Penalised and Firth fits: the models the penalty alone rates
        (:func:`ratings.models.separation.flag_unbounded`).
    """

    theta: NDArray[np.float64]
    cov: NDArray[np.float64]
    nll: float
    converged: bool
    n_iter: int
    max_grad: float
    model_cov: NDArray[np.float64] | Callable[[], NDArray[np.float64]] | None = None
    draws: NDArray[np.float64] | None = None
    influence: NDArray[np.float64] | None = None
    inference: ClusterInference | None = None
    judges: pd.DataFrame | None = None
    crowd: CrowdSummary | None = None
    unbounded: pd.DataFrame | None = None

    @classmethod
    def of(cls, fit, built: Built | None = None, **parts) -> Estimate:
        """A fit as the estimate of its strengths ``fit.theta``: their block of the covariance
        and influences, and the CR2 inference, of ``built`` (the fit's intervals) or else of
        the fit (a :class:`~ratings.models.covariates.DesignFit`: Crowd-BT, a tie model, a fit
        with covariates), and ``parts`` (``draws``, ``judges``, ``crowd``, ``model_cov``)."""
        m = fit.theta.size
        held = fit if built is None else built  # where the covariance and influences are
        return cls(theta=fit.theta, cov=held.cov[:m, :m], nll=fit.nll, converged=fit.converged,
                   n_iter=fit.n_iter, max_grad=fit.max_grad, inference=held.inference,
                   influence=None if held.influence is None else held.influence[:, :m],
                   **parts)  # fmt: skip


def bootstrap_refits(
    data: Comparisons,
    refit: Callable[[Comparisons], NDArray[np.float64]],
    *,
    ci: str,
    clustered: bool,
    n_boot: int,
    seed: int,
    always_finite: bool = False,
) -> NDArray[np.float64] | None:
    """The bootstrap draws of ``refit`` (:func:`ratings.inference.covariance.bootstrap_draws`)
    when ``ci == "bootstrap"``, else None. A resample whose win graph is not strongly connected
    (checked unless ``always_finite``, as for Firth's fit) or whose refit finds no finite
    estimate is skipped and counted."""
    if ci != "bootstrap":
        return None

    def safe(sample: Comparisons):
        try:
            if not always_finite:
                check_identifiable(sample.collapsed())
            return refit(sample)
        except (NonIdentifiableError, DegenerateBoardError):  # no finite estimate: skipped
            return None

    return bootstrap_draws(data, safe, n_boot=n_boot, seed=seed, clustered=clustered)
