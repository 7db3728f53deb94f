"""Tie models as outcome families: Davidson (1970) and Rao & Kupper (1967).

A family says how one aggregated row's outcomes (wins of i, wins of j, ties) depend on the
linear predictor d = s_i - s_j and on the family's one extra parameter, the tie parameter,
estimated on an unbounded scale ``phi``:

* ``"davidson"``: P(i beats j) = pi_i / D, P(tie) = nu sqrt(pi_i pi_j) / D,
  D = pi_i + pi_j + nu sqrt(pi_i pi_j), nu > 0; ``phi = log(nu)``.
* ``"rao-kupper"``: P(i beats j) = pi_i / (pi_i + theta pi_j), theta >= 1;
  ``phi = log(theta - 1)``.

Both scales put the boundary "no ties" (nu = 0, theta = 1) at phi = -infinity, where the tie
probability vanishes linearly in nu and in theta - 1 (between equal models it is nu / (2 + nu)
and (theta - 1) / (theta + 1)): on the log scale the likelihood of a small tie rate is close to
quadratic, as a binomial rate's is on its logit, and every value of phi is a model. A log with
no ties has its maximum at that boundary; the fit is then plain Bradley-Terry (no tie
parameter), which :func:`ratings.fit` says. With at least one tie and one decisive verdict the
maximum is interior.

The per-row terms are kernels (:mod:`ratings.kernels.ties`, NumPy twins in
:mod:`ratings.kernels.ties_ref`); the Hessian and gradient are assembled with the tie
parameter as parameter ``M`` (after the M strengths) by the assembly kernels Crowd-BT's judge
qualities use, and minimised by the package's Newton solver (:func:`ratings.models.newton.newton`).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import numpy as np
from numpy.typing import NDArray

from ratings.data.comparisons import Comparisons
from ratings.kernels.engine import Engine, kernels, resolve
from ratings.models.bt import start as bt_start
from ratings.models.newton import newton

__all__ = ["FAMILIES", "TieFamily", "TieFit", "family_of", "fit_ties", "tie_kernels",
           "tie_terms"]

#: Largest |phi| before the fit is called divergent (nu or theta - 1 beyond e^30).
PHI_BOUND = 30.0


@dataclass(frozen=True)
class TieFamily:
    """One tie model: its name, its parameter's name, and its kernel."""

    name: str  #: ``"davidson"`` or ``"rao-kupper"``
    parameter: str  #: ``"nu"`` or ``"theta"``
    kernel: str  #: row-terms kernel in :mod:`ratings.kernels.ties`
    scale: str  #: the unbounded scale, as text

    def value(self, phi):
        """The tie parameter (nu, or theta) at ``phi``."""
        return np.exp(phi) if self.parameter == "nu" else 1.0 + np.exp(phi)

    def tie_at_equal(self, phi):
        """P(tie) between two models of equal strength: nu / (2 + nu), (theta - 1) / (theta + 1);
        both are sigma(phi - log 2) on the unbounded scale."""
        return 1.0 / (1.0 + 2.0 * np.exp(-np.asarray(phi, dtype=np.float64)))

    def start(self, tie_share: float) -> float:
        """phi where two equal models tie at ``tie_share``: log(2 t / (1 - t)) for both."""
        t = min(max(tie_share, 1e-6), 1.0 - 1e-6)
        return float(np.log(2.0 * t / (1.0 - t)))

    def probabilities(self, d, phi) -> tuple:
        """(P(i beats j), P(j beats i), P(tie)) at linear predictors ``d``."""
        d = np.asarray(d, dtype=np.float64)
        if self.parameter == "nu":
            u = 0.5 * d
            z = np.exp(u) + np.exp(-u) + np.exp(phi)
            return np.exp(u) / z, np.exp(-u) / z, np.exp(phi) / z
        eta = np.logaddexp(0.0, phi)
        pi, pj = 1.0 / (1.0 + np.exp(eta - d)), 1.0 / (1.0 + np.exp(eta + d))
        return pi, pj, 1.0 - pi - pj


FAMILIES = {
    "davidson": TieFamily("davidson", "nu", "davidson_row_terms", "log(nu)"),
    "rao-kupper": TieFamily("rao-kupper", "theta", "rao_kupper_row_terms", "log(theta - 1)"),
}


def family_of(name: str) -> TieFamily:
    """The family called ``name`` (``"davidson"`` or ``"rao-kupper"``)."""
    return FAMILIES[name]


def tie_kernels(engine: Engine, size: int) -> ModuleType:
    """:mod:`ratings.kernels.ties` (numba) or its twins, as :func:`ratings.kernels.engine.kernels`
    chooses for ``size`` rows."""
    if resolve(engine, size) == "numba":
        from ratings.kernels import ties

        return ties
    from ratings.kernels import ties_ref

    return ties_ref


@dataclass(frozen=True, eq=False)
class TieFit:
    """A tie model's estimate: strengths ``theta`` (``theta[ref] == 0``), the tie parameter on
    its unbounded scale ``phi``, and the (M + 1)-square expected information ``hessian`` of the
    negative log-likelihood at them (the tie parameter last)."""

    theta: NDArray[np.float64]
    phi: float
    ref: int
    hessian: NDArray[np.float64]
    nll: float
    converged: bool
    n_iter: int
    max_grad: float
    family: TieFamily


def tie_terms(x: NDArray[np.float64], rows: Comparisons, family: TieFamily, tk, k,
              with_meat: bool = False) -> tuple:  # fmt: skip
    """Negative log-likelihood, gradient and expected information (M + 1 parameters, the tie
    parameter last) at ``x``, and the meat (per-verdict score products) when asked."""
    m = rows.n_models
    theta, phi = x[:m], float(x[m])
    nll, sd, sp, idd, idp, ipp, mdd, mdp, mpp = getattr(tk, family.kernel)(
        theta, phi, rows.ii, rows.jj, rows.wi, rows.wj, rows.tt, with_meat)
    zero = np.zeros(rows.ii.size, dtype=np.int64)
    grad = -np.append(k.scatter_diff(m, rows.ii, rows.jj, sd), sp.sum())
    info = k.crowd_assemble(m, 1, rows.ii, rows.jj, zero, idd, idp, ipp)
    if not with_meat:
        return nll, grad, info
    return nll, grad, info, k.crowd_assemble(m, 1, rows.ii, rows.jj, zero, mdd, mdp, mpp)


def fit_ties(
    data: Comparisons,
    family: TieFamily,
    *,
    ref: int = 0,
    tol: float = 1e-10,
    max_iter: int = 200,
    engine: Engine = "auto",
    x0: NDArray[np.float64] | None = None,
) -> TieFit:
    """Maximum likelihood of a tie model on the rows summed over clusters.

    Newton's method (Fisher scoring for Rao-Kupper, whose observed and expected information
    differ; the same thing for Davidson) from the half-win start of
    :func:`ratings.models.bt.start` and the tie parameter that gives two equal models the log's
    tie share. Raises ``FloatingPointError`` when the estimate diverges (every verdict a tie).
    Callers check existence first (:func:`ratings.models.existence.check_identifiable`) and
    that the log has ties and decisive verdicts.
    """
    rows = data.collapsed(engine=engine)
    k = kernels(engine, rows.n_verdicts)
    tk = tie_kernels(engine, rows.n_verdicts)
    m = rows.n_models
    if x0 is None:
        share = float(rows.tt.sum() / max(rows.n_verdicts, 1))
        x0 = np.append(bt_start(rows), family.start(share))
    x0 = np.array(x0, dtype=np.float64)
    x0[:m] -= x0[ref]
    free = np.delete(np.arange(m + 1), ref)
    res = newton(lambda x: tie_terms(x, rows, family, tk, k), x0, free, tol=tol,
                 max_iter=max_iter, what=f"{family.name.capitalize()} tie model",
                 bound=max(PHI_BOUND, 1e3))  # fmt: skip
    if abs(res.x[m]) > PHI_BOUND:
        raise FloatingPointError("the tie parameter diverges")
    return TieFit(theta=res.x[:m].copy(), phi=float(res.x[m]), ref=ref, hessian=res.hessian,
                  nll=res.f, converged=res.converged, n_iter=res.n_iter,
                  max_grad=res.max_grad, family=family)
