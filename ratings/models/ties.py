"""Fitting the tie families (:mod:`ratings.models.families.ties`: Davidson, Rao-Kupper).

A tie model without covariates is the design of every fit (:func:`ratings.models.covariates.
fit_design`) on the rows summed over clusters, with no covariate columns: the family's one
parameter, the tie parameter on its unbounded scale phi, is parameter ``M`` (after the M
strengths), the design takes the collapsed-counts fast path
(:func:`ratings.models.design.pair_objective`, one slot for every row), and the one Newton
solver (:func:`ratings.models.newton.newton`) runs with the design's divergence bound.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ratings.core.errors import DegenerateBoardError, NonIdentifiableError
from ratings.data.comparisons import Comparisons
from ratings.kernels.engine import Engine, resolve
from ratings.models.bt import start as bt_start
from ratings.models.covariates import DesignFit, Remedy, fit_design, pair_design
from ratings.models.families.ties import TieFamily

__all__ = ["fit_ties", "remedy_of"]


def remedy_of(family: TieFamily) -> Remedy:
    """How a tie model's errors name it (:class:`ratings.models.covariates.Remedy`)."""
    return Remedy(f"{family.name.capitalize()} tie model", "the tie parameter",
                  "almost every verdict is a tie. Fit with ties as half wins.",
                  "some ratings are so far apart that their verdicts carry no information. "
                  "Add verdicts between the extreme models.")  # fmt: skip


def fit_ties(
    data: Comparisons,
    family: TieFamily,
    *,
    ref: int = 0,
    tol: float = 1e-10,
    max_iter: int = 200,
    engine: Engine = "auto",
    x0: NDArray[np.float64] | None = None,
) -> DesignFit:
    """Maximum likelihood of a tie model on the rows summed over clusters: a
    :class:`~ratings.models.covariates.DesignFit` without covariate columns (``phi`` its tie
    parameter; its intervals by :func:`ratings.models.covariates.pair_built`); the start of a
    tie model's fit with style features or judge effects, and a bootstrap resample's refit.

    Newton's method (Fisher scoring for Rao-Kupper, whose observed and expected information
    differ; the same thing for Davidson) from the half-win start of
    :func:`ratings.models.bt.start` and the tie parameter that gives two equal models the log's
    tie share (or from ``x0``: strengths, then phi). Raises :class:`DegenerateBoardError` where
    the tie parameter has no finite estimate: a log without ties or of ties only, or an
    estimate that diverges (almost every verdict a tie). Callers check existence first
    (:func:`ratings.models.existence.check_identifiable`).
    """
    engine = resolve(engine, data.n_verdicts)  # the engine of the log's size, not its rows'
    rows = data.collapsed(engine=engine)
    m, n_ties, n = rows.n_models, float(rows.tt.sum()), float(rows.n_verdicts)
    if n_ties >= n:
        raise DegenerateBoardError(
            f"Every verdict is a tie ({n:,.0f}): a tie model has no finite estimate (its tie "
            "parameter grows without bound) and the ratings are not identified by it. Fit "
            "with ties as half wins.")  # fmt: skip
    if not n_ties:  # (a log without ties fits plain Bradley-Terry: ratings.api.ties)
        raise DegenerateBoardError("No verdict is a tie: the tie parameter has no finite "
                                   "estimate (the model is plain Bradley-Terry).")
    if x0 is None:
        x0 = np.append(bt_start(rows), family.start_at(n_ties / max(n, 1)))
    x0 = np.array(x0, dtype=np.float64)
    try:
        return fit_design(pair_design(rows, engine), x0[:m] - x0[ref], ref=ref, family=family,
                          eta0=x0[m:], ci=None, engine=engine, tol=tol, max_iter=max_iter,
                          remedy=remedy_of(family))  # fmt: skip
    except NonIdentifiableError as error:  # worded by remedy_of: almost every verdict a tie
        raise DegenerateBoardError(str(error)) from None
