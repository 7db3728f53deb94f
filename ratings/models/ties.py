"""The tie families (:mod:`ratings.models.families.ties`: Davidson, Rao-Kupper) fitted, and what
``ratings.BT(ties="davidson" | "rao-kupper")`` reports of them.

A tie model without covariates is the design of every fit (:func:`ratings.models.covariates.
fit_design`) on the rows summed over clusters, with no covariate columns: the family's one
parameter, the tie parameter on its unbounded scale phi, is parameter ``M`` (after the M
strengths), the design takes the collapsed-counts fast path
(:func:`ratings.models.design.pair_objective`, one slot for every row), and the one Newton
solver (:func:`ratings.models.newton.newton`) runs with the design's divergence bound
(:func:`fit_ties`).

The intervals treat the tie parameter as one more parameter of the vector (strengths, phi),
through the design's one interval path (:func:`ratings.models.covariates.pair_built`, as plain
Crowd-BT's): the CR2 sandwich with Satterthwaite degrees of freedom per contrast when clustered
(the working rows of :func:`ratings.inference.ties.tie_working`), the per-verdict HC0 sandwich
otherwise, CR1 (``"sandwich-z"``), the model-based inverse information or the bootstrap, as for
half wins; :func:`tie_table` reports the tie parameter. A log without ties has its maximum at
the boundary "no ties" (nu = 0, theta = 1): the fit is then plain Bradley-Terry
(:func:`tie_family_of` None), and a :class:`DataWarning` and the table say so.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.errors import DataWarning, DegenerateBoardError, NonIdentifiableError, option
from ratings.core.tdist import critical_value
from ratings.data.comparisons import Comparisons
from ratings.kernels.engine import Engine, resolve
from ratings.models.bt import start as bt_start
from ratings.models.covariates import DesignFit, Remedy, fit_design, pair_design, unit_df
from ratings.models.existence import check_identifiable
from ratings.models.families.ties import TieFamily, tie_family

__all__ = ["check_identified", "fit_ties", "remedy_of", "tie_family_of", "tie_table"]


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
    if not n_ties:  # (a log without ties fits plain Bradley-Terry: tie_family_of)
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


def tie_table(fit: DesignFit | None, ties: str, family: TieFamily | None, *, level: float,
              df: float | None = None, draws: NDArray[np.float64] | None = None,
              bias: float = 0.0, stacklevel: int = 2) -> pd.DataFrame | None:  # fmt: skip
    """``Ratings.ties`` of a fit asked for tie model ``ties`` (None for half wins): the tie
    parameter (``nu`` or ``theta``; the last of ``fit``, a
    :class:`~ratings.models.covariates.DesignFit` with its covariance, covariate columns or
    not) with its interval, from an interval on the unbounded scale phi (a t quantile with the
    fit's CR2 degrees of freedom of the contrast e_phi where it has them, else ``df``'s or
    normal; bootstrap percentiles of that column of ``draws``), its delta-method standard
    error, and the probability of a tie between two equal models with its interval. The
    analytic interval is centred on the bias-reduced phi - ``bias`` (``bias_phi``: the MLE's
    first-order bias, :func:`ratings.inference.ties.phi_bias`; Cox & Snell 1968, Firth
    1993); ``estimate`` and ``phi`` stay the maximum-likelihood estimate, the likelihood's.
    ``family`` None is a log without ties: the boundary nu = 0 / theta = 1, where the model is
    plain Bradley-Terry, with the :class:`DataWarning` that says so."""
    if ties == "half":
        return None
    if family is None:
        family, phi = tie_family(ties), -np.inf
        warnings.warn(f"The log has no ties: the {family.name} model's tie parameter is at its "
                      f"boundary ({family.parameter} = {float(family.value(phi)):g}, no ties), "
                      "where the model is plain Bradley-Terry; that is the fit returned.",
                      DataWarning, stacklevel=stacklevel + 1)  # fmt: skip
        lo = hi = phi
        se_phi = df = bias = np.nan
    else:
        at = fit.params.size - 1
        phi, se_phi = float(fit.params[at]), float(np.sqrt(max(float(fit.cov[at, at]), 0.0)))
        df = float(np.ravel(unit_df(fit, np.array([at]), np.nan if df is None else df))[0])
        if draws is not None and draws[:, at].size:
            lo, hi = np.quantile(draws[:, at], [(1 - level) / 2, (1 + level) / 2])
        else:
            q = critical_value(level, df if np.isfinite(df) else None)
            lo, hi = phi - bias - q * se_phi, phi - bias + q * se_phi
    row = {"estimate": float(family.value(phi)), "lower": float(family.value(lo)),
           "upper": float(family.value(hi)),
           # d value / d phi = e^phi for both scales; zero at the boundary
           "se": float(np.exp(phi)) * se_phi if np.isfinite(phi) else 0.0,
           "p_tie_equal": float(family.tie_at_equal(phi)),
           "p_tie_lower": float(family.tie_at_equal(lo)),
           "p_tie_upper": float(family.tie_at_equal(hi)),
           "phi": phi, "se_phi": se_phi, "bias_phi": float(bias), "df": df,
           "scale": family.scale,
           "model": family.name if np.isfinite(phi) else "bt (no ties)"}  # fmt: skip
    out = pd.DataFrame([row], index=pd.Index([family.parameter], name="parameter"))
    out.attrs["level"] = level
    return out


def tie_family_of(rows: Comparisons, ties: str) -> TieFamily | None:
    """The tie family ``ties`` names where ``rows`` hold ties; None for half wins, and for a
    log without ties (the tie model's boundary: plain Bradley-Terry, :func:`tie_table` of
    ``-inf``)."""
    return None if ties == "half" or not rows.tt.sum() else tie_family(ties)


def check_identified(rows: Comparisons, ties: str) -> None:
    """:func:`ratings.models.existence.check_identifiable` of ``rows``; for a tie model the
    same diagnosis without the remedies it does not have (a penalty and Firth's reduction fit
    ties as half wins)."""
    check_identifiable(rows, None if ties == "half" else (
        f"Add matches that connect them or drop them; the {ties} tie model has no penalised or "
        f"bias-reduced fit ({option('penalty')} and {option('firth', True)} need "
        f"{option('ties', 'half')}, ties as half wins, which also gives these models open "
        "intervals)."))  # fmt: skip
