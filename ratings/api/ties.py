"""Bradley-Terry with a tie model (``ratings.BT(ties="davidson" | "rao-kupper")``): the
estimate, its intervals and the tie parameter's table.

The fit is :func:`ratings.models.ties.fit_ties`; the intervals treat the tie parameter as one
more parameter of the vector (strengths, phi): the CR2 sandwich with Satterthwaite degrees of
freedom per contrast when clustered (:func:`ratings.inference.ties.tie_inference`), the
per-verdict HC0 sandwich otherwise, CR1 (``"sandwich-z"``), the model-based inverse information
or the bootstrap, as for half wins. A log without ties has its maximum at the boundary "no
ties" (nu = 0, theta = 1): the fit is then plain Bradley-Terry, and a :class:`DataWarning` and
the table say so.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.errors import DataWarning, DegenerateBoardError, NonIdentifiableError, option
from ratings.core.tdist import critical_value
from ratings.data.comparisons import Comparisons
from ratings.models.ties import TieFamily, TieFit, fit_ties

__all__ = ["TIE_COLUMNS", "no_ties_table", "not_identified", "tie_refit", "tie_start",
           "tie_table", "with_ties"]

#: Columns of ``Ratings.ties``.
TIE_COLUMNS = ("estimate", "lower", "upper", "se", "p_tie_equal", "p_tie_lower", "p_tie_upper",
               "phi", "se_phi", "bias_phi", "df", "scale", "model")  # fmt: skip


def tie_start(rows: Comparisons, family: TieFamily, *, ref: int, engine, tol: float = 1e-8,
              max_iter: int = 200) -> TieFit:  # fmt: skip
    """The tie model's fit on the rows summed over clusters (without covariates: the start of
    a fit with style features or judge effects), or :class:`DegenerateBoardError` where the
    tie parameter has no finite estimate."""
    n_ties, n = float(rows.tt.sum()), float(rows.n_verdicts)
    if n_ties >= n:
        raise DegenerateBoardError(
            f"Every verdict is a tie ({n:,.0f}): a tie model has no finite estimate (its tie "
            "parameter grows without bound) and the ratings are not identified by it. Fit "
            "with ties as half wins.")  # fmt: skip
    try:
        return fit_ties(rows, family, ref=ref, tol=tol, max_iter=max_iter, engine=engine)
    except FloatingPointError:
        raise DegenerateBoardError(
            f"The {family.name} tie parameter has no finite estimate on this log (almost every "
            "verdict is a tie). Fit with ties as half wins.") from None  # fmt: skip


def with_ties(out, params: NDArray[np.float64], cov: NDArray[np.float64], inference,
              family: TieFamily | None, rows: Comparisons, *, level: float, at: int,
              df: float | None = None, stacklevel: int = 2):  # fmt: skip
    """``out`` (a :class:`~ratings.result.Ratings` of a fit with covariates) with the tie
    parameter's table: parameter ``at`` of ``params`` and ``cov`` (the last; its quantile from
    ``inference``'s df, else ``df``'s, else normal), or, on a log
    without ties, the boundary's (:func:`no_ties_table`). ``out`` as it is without a tie
    model (``family`` None)."""
    from dataclasses import replace

    if family is None:
        return out
    if rows.tt.sum() == 0:
        table = no_ties_table(family, level=level, stacklevel=stacklevel + 1)
    else:
        table = tie_table(family, float(params[at]), float(cov[at, at]), level=level,
                          inference=inference, m=at, df=np.nan if df is None else df)
    return replace(out, fit_info=replace(out.fit_info, ties=table))


def tie_refit(sample: Comparisons, family, ref, max_iter, engine, x0) -> tuple:
    """A bootstrap resample's (strengths, phi), from ``x0``; a resample without ties or of
    ties only is skipped (:class:`NonIdentifiableError`)."""
    rows = sample.collapsed()
    if rows.tt.sum() == 0 or rows.tt.sum() >= rows.n_verdicts:
        raise NonIdentifiableError("no tie parameter in this resample")  # skipped, counted
    try:
        fit = fit_ties(rows, family, ref=ref, tol=1e-8, max_iter=max_iter, engine=engine, x0=x0)
    except FloatingPointError:
        raise NonIdentifiableError("no finite estimate in this resample") from None
    return fit.theta, fit.phi


def tie_table(family: TieFamily, phi: float, var_phi: float, *, level: float, inference=None,
              draws: NDArray[np.float64] | None = None, m: int = 0,
              df: float = np.nan, bias: float = 0.0) -> pd.DataFrame:  # fmt: skip
    """``Ratings.ties``: the tie parameter (``nu`` or ``theta``) with its interval, from an
    interval on the unbounded scale phi (a t quantile with the CR2 degrees of freedom of the
    contrast e_phi when clustered, else ``df``'s or normal; bootstrap percentiles from
    ``draws``), its delta-method standard error, and the probability of a tie between two equal
    models with its interval. The analytic interval is centred on the bias-reduced phi - ``bias``
    (``bias_phi``: the MLE's first-order bias, :func:`ratings.inference.tie_bias.phi_bias`;
    Cox & Snell 1968, Firth 1993); ``estimate`` and ``phi`` stay the maximum-likelihood
    estimate, the likelihood's."""
    se_phi = float(np.sqrt(max(var_phi, 0.0)))
    df = float(df)
    if inference is not None:
        c = np.zeros((1, m + 1))
        c[0, m] = 1.0
        df = float(inference.df(c)[0])
    if draws is not None and draws.size:
        lo, hi = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2])
    else:
        q = critical_value(level, df if np.isfinite(df) else None)
        centre = phi - bias
        lo, hi = centre - q * se_phi, centre + q * se_phi
    value = float(family.value(phi))
    row = {"estimate": value, "lower": float(family.value(lo)), "upper": float(family.value(hi)),
           "se": float(np.exp(phi)) * se_phi,  # d value / d phi = e^phi for both scales
           "p_tie_equal": float(family.tie_at_equal(phi)),
           "p_tie_lower": float(family.tie_at_equal(lo)),
           "p_tie_upper": float(family.tie_at_equal(hi)),
           "phi": phi, "se_phi": se_phi, "bias_phi": float(bias), "df": df,
           "scale": family.scale, "model": family.name}
    out = pd.DataFrame([row], index=pd.Index([family.parameter], name="parameter"))
    out.attrs["level"] = level
    return out


def no_ties_table(family: TieFamily, *, level: float, stacklevel: int = 2) -> pd.DataFrame:
    """The table of a log without ties (the boundary nu = 0 / theta = 1: plain Bradley-Terry),
    with the :class:`DataWarning` that says so."""
    warnings.warn(f"The log has no ties: the {family.name} model's tie parameter is at its "
                  f"boundary ({family.parameter} = {float(family.value(-np.inf)):g}, no ties), "
                  "where the model is plain Bradley-Terry; that is the fit returned.",
                  DataWarning, stacklevel=stacklevel + 1)  # fmt: skip
    value = float(family.value(-np.inf))
    row = {"estimate": value, "lower": value, "upper": value, "se": 0.0, "p_tie_equal": 0.0,
           "p_tie_lower": 0.0, "p_tie_upper": 0.0, "phi": -np.inf, "se_phi": np.nan,
           "bias_phi": np.nan, "df": np.nan, "scale": family.scale, "model": "bt (no ties)"}
    out = pd.DataFrame([row], index=pd.Index([family.parameter], name="parameter"))
    out.attrs["level"] = level
    return out


def not_identified(error: NonIdentifiableError, ties: str) -> NonIdentifiableError:
    """The existence check's error for a tie model: the same diagnosis, without the remedies a
    tie model does not have (a penalty and Firth's reduction fit ties as half wins)."""
    head = str(error).split(" Add matches")[0]
    return NonIdentifiableError(
        f"{head} Add matches that connect them or drop them; the {ties} tie model has no "
        f"penalised or bias-reduced fit ({option('penalty')} and {option('firth', True)} need "
        f"{option('ties', 'half')}, ties as half wins, which also gives these models open "
        "intervals).", never_lost=error.never_lost, never_won=error.never_won,
        groups=error.groups)  # fmt: skip
