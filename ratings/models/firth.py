"""Firth's bias-reduced Bradley-Terry fit (``fit(..., firth=True)``, CLI ``--firth``).

The estimate maximises the penalised log-likelihood

    l*(s) = l(s) + 1/2 log det I(s),

``I`` the Fisher information of the anchored log-strengths (Firth 1993; the Jeffreys-prior
penalty). For a logistic model it removes the O(1/n) bias of the maximum-likelihood estimate
and is finite on every board, also where some model never lost or never won (the estimate of
``BradleyTerry2::BTm(..., br = TRUE)`` through ``brglm``; Kosmidis & Firth 2021 prove finiteness
for binomial-response GLMs). With ties as half wins (as in the plain fit), each aggregated row
(judge, i, j) with n verdicts, outcome y = wins_i + ties/2 and p = sigma(s_i - s_j) gives the
modified score

    U*(s) = sum_rows (e_i - e_j) (y - n p + h (1/2 - p)),

with ``h = n p (1 - p) (e_i - e_j)^T I^-1 (e_i - e_j)`` the row's hat value (its leverage in
the working model, summed over its verdicts). :func:`fit_firth` solves U* = 0 by Fisher scoring
s <- s + I^-1 U* with step-halving on l* (the iteration of Heinze & Schemper 2002, R's
``logistf``), vectorised over the aggregated rows: one pass over the rows and one M x M
factorisation per step, as a Newton step of the plain fit.

Intervals (:func:`ratings.fit`) are those of the plain fit evaluated at the Firth estimate
(likelihood scores and information: the bias-reduced estimate has the maximum likelihood's
asymptotic distribution, Firth 1993 section 3; Kosmidis & Firth 2021), so clustered fits get
CR2 with degrees of freedom per contrast. A model outside the anchor's strongly connected
group of the win graph (e.g. one that never lost) has a finite estimate but its Wald interval
does not cover: 0.79 and 0.38 on the small boards of ``benchmarks_perf/firth_study.py``
(``docs/coverage.md``). As in penalised fits, its interval is open on the side the data leave
unbounded (:mod:`ratings.models.separation`; 0.96-1.00 there) and a
:class:`~ratings.core.errors.PenaltyOnlyWarning` names it. A model one or two losses away from
separation keeps its Wald interval, which under-covers mildly there (0.92-0.945, where the
maximum likelihood's covers 0.97-0.98): prefer the plain fit's intervals when it exists.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ratings.core.linalg import block, embed
from ratings.data.comparisons import Comparisons
from ratings.kernels.engine import Engine, kernels
from ratings.models.bt import NO_SLOT, NONE, BTFit, start
from ratings.models.families import BRADLEY_TERRY
from ratings.models.newton import newton

__all__ = ["firth_terms", "fit_firth"]

#: Largest change of any log-strength in one scoring step (R's ``logistf`` caps it at 5 as
#: well): far from the estimate, where a model's information is nearly zero, a full step
#: would overshoot by orders of magnitude.
MAX_STEP = 5.0


def _factor(info_free: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
    """log det and inverse of a positive definite matrix (one Cholesky factorisation)."""
    from scipy.linalg.lapack import dpotrf, dpotri

    from ratings.core.linalg import mirror_upper

    factor, err = dpotrf(info_free.T, lower=False, clean=True)
    if err == 0:
        logdet = 2.0 * float(np.log(np.diag(factor)).sum())
        inv, err = dpotri(factor, lower=False, overwrite_c=False)
    if err != 0:
        raise np.linalg.LinAlgError("the information matrix is not positive definite")
    return logdet, mirror_upper(inv)


def firth_terms(theta: NDArray[np.float64], rows: Comparisons, free: NDArray[np.int64], k):
    """Penalised negative log-likelihood -l*(s), the modified score U*(s) and the information.

    Returns
    -------
    f : float
        ``-l(s) - 1/2 log det I(s)``.
    score : ndarray, shape (M,)
        The modified score U* (zero at the reference).
    info : ndarray, shape (M, M)
        The likelihood's Fisher information (the Laplacian of the row weights).
    cov : ndarray, shape (M, M)
        Its inverse on the free coordinates, embedded with zeros.
    """
    m = rows.n_models
    nll, score, _, w, *_ = BRADLEY_TERRY.row_terms(k, theta, NONE, rows.ii, rows.jj, NO_SLOT,
                                                   rows.wi, rows.wj, rows.tt, False)
    info = k.laplacian(m, rows.ii, rows.jj, w)
    logdet, inv = _factor(block(info, free))
    cov = embed(inv, free, m)
    # hat value of each row: w (e_i - e_j)^T I^-1 (e_i - e_j)
    hat = w * (cov[rows.ii, rows.ii] + cov[rows.jj, rows.jj] - 2.0 * cov[rows.ii, rows.jj])
    p = 1.0 / (1.0 + np.exp(theta[rows.jj] - theta[rows.ii]))
    modified = k.scatter_diff(m, rows.ii, rows.jj, score + hat * (0.5 - p))
    modified[np.setdiff1d(np.arange(m), free)] = 0.0
    return nll - 0.5 * logdet, modified, info, cov


def fit_firth(
    data: Comparisons,
    *,
    ref: int = 0,
    tol: float = 1e-10,
    max_iter: int = 100,
    engine: Engine = "auto",
    theta0: NDArray[np.float64] | None = None,
) -> BTFit:
    """Fit Bradley-Terry log-strengths by Firth's penalised likelihood (see the module notes).

    Fisher scoring with step-halving on the penalised log-likelihood; stops when the largest
    step is below ``tol`` (the iteration converges linearly, at a rate of order 1/n, so a few
    more steps than the plain Newton fit). The result's ``hessian`` is the likelihood's Fisher
    information at the estimate (the bread of its intervals); ``nll`` is -l*; ``penalty`` is 0.
    At least ``max(max_iter, 200)`` steps are allowed; :class:`ConvergenceWarning` after them.
    """
    k = kernels(engine, data.n_verdicts)
    m = data.n_models
    free = np.delete(np.arange(m), ref)
    rows = data.collapsed(engine=engine)
    x = start(rows) if theta0 is None else np.array(theta0, dtype=np.float64)
    x = x - x[ref]

    def scoring(theta: NDArray[np.float64]) -> tuple:  # -l*, -U* and I: Fisher scoring
        f, modified, info, _ = firth_terms(theta, rows, free, k)
        return f, -modified, info

    try:
        res = newton(scoring, x, free, tol=tol, max_iter=max(max_iter, 200), max_step=MAX_STEP,
                     quadratic=False, what="Firth's bias-reduced", iterations="iterations",
                     gradient="modified score")  # fmt: skip
    except np.linalg.LinAlgError:
        raise np.linalg.LinAlgError(
            "Firth's fit lost the information matrix's positive definiteness; the board's "
            "information is too small to fit (check for models with almost no verdicts)."
        ) from None
    return BTFit(theta=res.x, ref=ref, hessian=res.hessian, nll=res.f, converged=res.converged,
                 n_iter=res.n_iter, max_grad=res.max_grad, penalty=0.0)  # fmt: skip
