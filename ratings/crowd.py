"""Crowd-BT: Bradley-Terry with one quality parameter per judge (Chen et al. 2013).

Judge k reports the true order with probability eta_k:
P(i beats j | k) = eta_k sigma(s_i - s_j) + (1 - eta_k) sigma(s_j - s_i), a tie counting as one
observation with outcome 1/2. eta_k = 1 is Bradley-Terry; eta_k = 1/2 is a coin flip.

Parametrisation: eta is kept in its natural units and constrained to the box [1/2, 1] by a
projected Newton method, with no prior. We chose the box over a logit with a weak prior because
(i) the likelihood is unchanged under (s, eta) -> (-s, 1 - eta), and the box removes the mirror
branch outright; (ii) a prior would bias eta for judges with few verdicts, which then biases every
strength they touch; (iii) a judge that never errs has its MLE on the boundary eta = 1, which the
box reports as such (``status="boundary"``, no standard error) instead of pushing a logit towards
infinity. Strengths start from the Bradley-Terry fit, which lies on the eta > 1/2 branch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings._tdist import critical_value
from ratings.bt import fit_bt
from ratings.data import Comparisons
from ratings.engine import Engine, kernels
from ratings.errors import NonIdentifiableError, option
from ratings.optim import newton
from ratings.schema import DETERMINISTIC_JUDGE
from ratings.uncertainty import cluster_sandwich, inverse_free

__all__ = [
    "DIVERGED",
    "ETA_START",
    "CrowdFit",
    "crowd_covariance",
    "crowd_covariance_and_influence",
    "crowd_terms",
    "fit_crowd_bt",
    "judge_table",
]

ETA_START = 0.85
DIVERGED = 30.0  # |log-strength| beyond which a fit is taken to diverge (an Elo gap of ~5200)


@dataclass(frozen=True, eq=False)
class CrowdFit:
    """Raw Crowd-BT fit. ``hessian`` is over (theta, eta), shape (M + K, M + K)."""

    theta: NDArray[np.float64]
    eta: NDArray[np.float64]
    ref: int
    estimated: NDArray[np.bool_]  # eta_k was a free parameter
    boundary: NDArray[np.bool_]  # estimated, but held at 1/2 or 1 at the solution
    hessian: NDArray[np.float64]
    nll: float
    converged: bool
    n_iter: int
    max_grad: float

    @property
    def free(self) -> NDArray[np.int64]:
        """Coordinates of (theta, eta) with a covariance: strengths but the reference, and the
        estimated etas that are not on a bound."""
        m = self.theta.size
        s = np.delete(np.arange(m), self.ref)
        return np.concatenate([s, m + np.flatnonzero(self.estimated & ~self.boundary)])


def crowd_terms(x: NDArray[np.float64], data: Comparisons, k) -> tuple:
    """Negative log-likelihood, gradient and Hessian over x = (theta, eta)."""
    m, nj = data.n_models, len(data.judges)
    theta, eta = x[:m], x[m:]
    nll, gd, ge, hdd, hde, hee, *_ = k.crowd_row_terms(
        theta, eta, data.ii, data.jj, data.judge, data.wi, data.wj, data.tt, False
    )
    grad = -np.concatenate([k.scatter_diff(m, data.ii, data.jj, gd),
                            np.bincount(data.judge, ge, nj)])  # fmt: skip
    hess = k.crowd_assemble(m, nj, data.ii, data.jj, data.judge, hdd, hde, hee)
    return nll, grad, hess


def fit_crowd_bt(
    data: Comparisons,
    *,
    ref: int = 0,
    fixed_eta: dict[str, float] | None = None,
    tol: float = 1e-10,
    max_iter: int = 200,
    engine: Engine = "auto",
) -> CrowdFit:
    """Fit strengths and judge qualities jointly by maximum likelihood.

    Parameters
    ----------
    data : Comparisons
    ref : int
        Model pinned at strength 0.
    fixed_eta : dict, optional
        Judges whose eta is known (from an earlier fit); judge ``"deterministic"`` is always 1.
        Every other judge's eta is estimated.
    """
    k = kernels(engine, data.n_verdicts)
    m, nj = data.n_models, len(data.judges)
    fixed = dict(fixed_eta or {})
    fixed[DETERMINISTIC_JUDGE] = 1.0  # judge-free comparisons are never noisy
    estimated = np.array([j not in fixed for j in data.judges], dtype=bool)
    eta0 = np.array([fixed.get(j, ETA_START) for j in data.judges], dtype=np.float64)
    rows = data.collapsed(engine=engine)  # same likelihood on one row per (judge, i, j)
    start = fit_bt(rows, ref=ref, tol=1e-6, max_iter=50, engine=engine).theta
    # The BT fit of noisy verdicts is attenuated by about (2 eta - 1); undo that for the start.
    attenuation = float(np.average(2 * eta0 - 1, weights=np.bincount(rows.judge, rows.wi + rows.wj
                                                                     + rows.tt, nj)))  # fmt: skip
    x0 = np.concatenate([start / max(attenuation, 0.2), eta0])
    free = np.concatenate([np.delete(np.arange(m), ref), m + np.flatnonzero(estimated)])
    lower = np.concatenate([np.full(m, -np.inf), np.full(nj, 0.5)])
    upper = np.concatenate([np.full(m, np.inf), np.ones(nj)])
    try:
        res = newton(lambda x: crowd_terms(x, rows, k), x0, free, lower=lower, upper=upper,
                     tol=tol, max_iter=max_iter, what="Crowd-BT", bound=DIVERGED)  # fmt: skip
        diverged = False
    except FloatingPointError:
        diverged = True
    if diverged:
        raise NonIdentifiableError(
            "The Crowd-BT estimate does not exist: the likelihood keeps increasing as strengths "
            "spread without bound and some judge's eta goes to 1 (a judge whose verdicts never "
            "contradict one ordering of the models). Fix eta from past judgments "
            f"({option('judge_quality')}) or fit with {option('model', 'bt')}."
        )
    boundary = res.active[m:] & estimated
    return CrowdFit(theta=res.x[:m], eta=res.x[m:], ref=ref, estimated=estimated,
                    boundary=boundary, hessian=res.hessian, nll=res.f, converged=res.converged,
                    n_iter=res.n_iter, max_grad=res.max_grad)  # fmt: skip


def crowd_covariance(
    fit: CrowdFit, data: Comparisons, *, ci: str, clustered: bool, engine: Engine = "auto"
) -> NDArray[np.float64]:
    """Covariance over (theta, eta), shape (M + K, M + K), zero outside ``fit.free``.

    ``ci="model"``: inverse Hessian; ``"sandwich"``: H^-1 B H^-1 with per-verdict or clustered
    meat (factor G/(G-1)). When eta is estimated the strengths' block accounts for its
    uncertainty; fixed or boundary etas are treated as known.
    """
    return crowd_covariance_and_influence(fit, data, ci=ci, clustered=clustered,
                                          engine=engine)[0]  # fmt: skip


def crowd_covariance_and_influence(
    fit: CrowdFit, data: Comparisons, *, ci: str, clustered: bool, engine: Engine = "auto"
) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
    """:func:`crowd_covariance`, and for clustered data (whatever ``ci``) the per-cluster
    influences over (theta, eta), G x (M + K), from the same pass (``None`` otherwise, or above
    :data:`ratings.uncertainty.MAX_INFLUENCE_CELLS`)."""
    k = kernels(engine, data.n_verdicts)
    m, nj = data.n_models, len(data.judges)
    try:
        bread = inverse_free(fit.hessian, fit.free)
    except np.linalg.LinAlgError:
        raise NonIdentifiableError(
            "The Crowd-BT information matrix is singular at the estimate: the judges' qualities "
            "and the spread of the ratings cannot be told apart on these verdicts. Fix eta from "
            f"past judgments ({option('judge_quality')}) or fit with {option('model', 'bt')}."
        ) from None
    if ci == "model" and not clustered:
        return bread, None
    if clustered:
        def row_scores(rows: Comparisons, wi, wj, tt):
            _, gd, ge, *_ = k.crowd_row_terms(fit.theta, fit.eta, rows.ii, rows.jj, rows.judge,
                                              wi, wj, tt, False)  # fmt: skip
            return gd, ge

        cov, influence = cluster_sandwich(bread, data, k=k, row_scores=row_scores)
        return (bread if ci == "model" else cov), influence
    _, _, _, _, _, _, mdd, mde, mee = k.crowd_row_terms(
        fit.theta, fit.eta, data.ii, data.jj, data.judge, data.wi, data.wj, data.tt, True)
    meat = k.crowd_assemble(m, nj, data.ii, data.jj, data.judge, mdd, mde, mee)
    return bread @ meat @ bread, None


def judge_table(fit: CrowdFit, cov: NDArray[np.float64], data: Comparisons,
                level: float, df: float | None = None) -> pd.DataFrame:  # fmt: skip
    """The judge report: eta, se, interval (clipped to [1/2, 1]), verdicts, status, flag.

    ``status`` is ``estimated``, ``boundary`` (the MLE sits on eta = 1 or 1/2: no standard
    error and no interval, NaN), ``fixed`` (from a judge-quality file; the interval is the point)
    or ``deterministic``. ``uninformative`` flags a
    judge whose interval reaches 1/2 (its verdicts cannot be told from coin flips).
    """
    m = data.n_models
    z = critical_value(level, df)
    var = np.diag(cov)[m:]
    se = np.where(fit.estimated & ~fit.boundary, np.sqrt(np.clip(var, 0.0, None)), np.nan)
    lower = np.clip(fit.eta - z * se, 0.5, 1.0)
    upper = np.clip(fit.eta + z * se, 0.5, 1.0)
    fixed_lower = np.where(fit.estimated, lower, fit.eta)
    status = np.where(~fit.estimated, "fixed", np.where(fit.boundary, "boundary", "estimated"))
    status = np.where(np.asarray(data.judges) == DETERMINISTIC_JUDGE, "deterministic", status)
    rows = data.collapsed()  # the same totals per judge, without per-cluster rows
    n = np.bincount(rows.judge, rows.wi + rows.wj + rows.tt, len(data.judges))
    out = pd.DataFrame(
        {"eta": fit.eta, "se": se, "lower": fixed_lower,
         "upper": np.where(fit.estimated, upper, fit.eta), "n": n.round().astype(np.int64),
         "status": status},
        index=pd.Index(data.judges, name="judge"),
    )  # fmt: skip
    boundary_half = fit.boundary & (fit.eta <= 0.5)
    out["uninformative"] = (fit.estimated & ~fit.boundary & (lower <= 0.5)) | boundary_half
    return out
