"""Fitting the tie families (:mod:`ratings.models.families.ties`: Davidson, Rao-Kupper).

The family gives each row's terms in the linear predictor d = s_i - s_j and its one parameter,
the tie parameter on its unbounded scale phi; here they are assembled with the tie parameter as
parameter ``M`` (after the M strengths) by the core's collapsed-counts design
(:func:`ratings.models.design.pair_objective`, one slot for every row), and minimised by the
package's Newton solver (:func:`ratings.models.newton.newton`) on the rows summed over clusters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ratings.data.comparisons import Comparisons
from ratings.kernels.engine import Engine, kernels
from ratings.models.bt import start as bt_start
from ratings.models.design import pair_objective
from ratings.models.families.ties import TieFamily, tie_family
from ratings.models.newton import newton

__all__ = ["PHI_BOUND", "TieFamily", "TieFit", "family_of", "fit_ties"]

#: Largest |phi| before the fit is called divergent (nu or theta - 1 beyond e^30).
PHI_BOUND = 30.0
family_of = tie_family  # the tie family called ``name`` ("davidson" or "rao-kupper")


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
    m = rows.n_models
    if x0 is None:
        share = float(rows.tt.sum() / max(rows.n_verdicts, 1))
        x0 = np.append(bt_start(rows), family.start_at(share))
    x0 = np.array(x0, dtype=np.float64)
    x0[:m] -= x0[ref]
    free = np.delete(np.arange(m + 1), ref)
    slot = np.zeros(rows.ii.size, dtype=np.int64)  # one tie parameter for every row
    res = newton(lambda x: pair_objective(family, k, x[:m], x[m:], rows, 1, slot), x0, free,
                 tol=tol, max_iter=max_iter, what=f"{family.name.capitalize()} tie model",
                 bound=max(PHI_BOUND, 1e3))  # fmt: skip
    if abs(res.x[m]) > PHI_BOUND:
        raise FloatingPointError("the tie parameter diverges")
    return TieFit(theta=res.x[:m].copy(), phi=float(res.x[m]), ref=ref, hessian=res.hessian,
                  nll=res.f, converged=res.converged, n_iter=res.n_iter,
                  max_grad=res.max_grad, family=family)
