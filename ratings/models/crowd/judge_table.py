"""The judges table of a Crowd-BT fit, and the warnings where Crowd-BT cannot say much.

Crowd-BT tells a judge's quality eta from the spread of the ratings only through the shape of
the win curve (how often clearly weaker models still win: the judge's flips); a judge whose
verdicts are few, or a log judged by one judge only, leaves that split to the prior. The
functions here measure it per judge (``prior_share``: the share of the information on eta_k
that comes from its prior, with every other parameter estimated alongside) and warn, naming the
judges and the remedy: fit eta on past judgments and reuse it, or use Bradley-Terry.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.errors import JudgeWarning, option
from ratings.core.schema import DETERMINISTIC_JUDGE
from ratings.core.tdist import critical_value
from ratings.data.comparisons import Comparisons
from ratings.inference.covariance import inverse_free
from ratings.models.covariates import DesignFit
from ratings.models.crowd.likelihood import fix_eta

__all__ = [
    "MIN_DECISIVE",
    "coin_flip_test",
    "judge_table",
    "prior_share",
    "scale_identified",
    "warn_weak_judges",
]

#: Decisive verdicts below which a judge's eta is reported as resting on very few verdicts.
MIN_DECISIVE = 100


def prior_share(fit: DesignFit) -> NDArray[np.float64]:
    """Per judge, the share of the (profiled) information on eta_k that its prior supplies.

    With I_k = 1 / [H^-1]_kk the information on eta_k of the penalised objective once every
    other free parameter is estimated too (H over ``fit.free``) and P_kk the curvature of eta_k's
    Beta prior, the share is P_kk / I_k, clipped to [0, 1]: near 0 when the verdicts pin eta_k
    down, near 1 when only the prior does. NaN for judges whose eta is not estimated; 0 for a
    fit without prior.
    """
    out = np.full(fit.eta.size, np.nan)
    est = fit.live
    if fit.prior is None:
        out[fit.estimated] = 0.0
        return out
    try:
        inv = inverse_free(fit.hessian, fit.free)
    except np.linalg.LinAlgError:
        out[est] = 1.0
        return out
    at = fit.eta_at[est]
    out[est] = np.clip(np.diag(fit.prior_hessian)[at] * np.diag(inv)[at], 0.0, 1.0)
    return out


def judge_table(fit: DesignFit, cov: NDArray[np.float64], data: Comparisons, level: float,
                df: float | NDArray[np.float64] | None = None, *,
                reused: pd.DataFrame | None = None) -> pd.DataFrame:  # fmt: skip
    """The judge report: eta, se, interval (clipped to [1/2, 1]), verdicts, ties, status, flags.

    ``df``: the t quantile's degrees of freedom, one for all judges or one per judge (CR2's
    Satterthwaite df of each eta; NaN or None: normal quantile).

    ``status`` is ``estimated``; ``boundary`` (plain maximum likelihood only: the estimate sits
    on eta = 1 or 1/2, no standard error and no interval, NaN); ``reused`` (from a
    judge-quality file whose covariance is carried into the intervals; ``se`` and the
    interval are the file's); ``fixed`` (treated as known: the interval is the point) or
    ``deterministic``. ``n`` counts the judge's verdicts, ``ties`` its ties (not fitted).
    ``uninformative`` flags a judge whose interval reaches 1/2 (its verdicts cannot be told
    from coin flips); ``prior_share`` is :func:`prior_share`.
    """
    if df is not None and np.ndim(df):
        df = np.where(np.isnan(df), np.inf, df)
    z = critical_value(level, df)
    var = np.diag(cov)[fit.eta_at]
    se = np.where(fit.live, np.sqrt(np.clip(var, 0.0, None)), np.nan)
    names = pd.Index(data.judges, name="judge")
    rows = data.collapsed()  # the same totals per judge, without per-cluster rows
    ties = np.bincount(rows.judge, rows.tt, len(names))
    n = np.bincount(rows.judge, rows.wi + rows.wj, len(names)) + ties
    status = np.where(~fit.estimated, "fixed", np.where(fit.boundary, "boundary", "estimated"))
    if reused is not None:
        back = np.asarray(names.isin(reused.index) & ~fit.estimated)
        status = np.where(back, "reused", status)
        se = np.where(back, reused["se"].reindex(names).to_numpy(dtype=np.float64), se)
    status = np.where(np.asarray(names) == DETERMINISTIC_JUDGE, "deterministic", status)
    with_se = (status == "estimated") | (status == "reused")
    lower = np.where(with_se, np.clip(fit.eta - z * se, 0.5, 1.0), fit.eta)
    upper = np.where(with_se, np.clip(fit.eta + z * se, 0.5, 1.0), fit.eta)
    lower = np.where(status == "boundary", np.nan, lower)
    upper = np.where(status == "boundary", np.nan, upper)
    out = pd.DataFrame(
        {"eta": fit.eta, "se": se, "lower": lower, "upper": upper,
         "n": n.round().astype(np.int64), "ties": ties.round().astype(np.int64),
         "status": status},
        index=names,
    )  # fmt: skip
    boundary_half = fit.boundary & (fit.eta <= 0.5)
    out["uninformative"] = ((status == "estimated") & (lower <= 0.5)) | boundary_half
    out["prior_share"] = prior_share(fit)
    return out


def coin_flip_test(table: pd.DataFrame, nll: float, n_models: int,
                   level: float = 0.95) -> pd.DataFrame:  # fmt: skip
    """``table`` with every estimated judge flagged ``uninformative`` when the verdicts, all
    judges together, cannot be told from coin flips.

    The test: the likelihood ratio of the fit (negative log-likelihood ``nll`` of the decisive
    verdicts) against every decisive verdict being a fair coin, LR = 2 (D log 2 - nll). Under
    that null the strengths are not identified, so Wilks' chi2 with M - 1 + K degrees of
    freedom does not apply (Davies 1987; simulated with three judges on 30 models and 2,000
    verdicts the null LR averages 37.6, above its 32 parameters, and exceeds that chi2's 95%
    point 16% of the time). The reference is the fit with each judge its own strengths and eta,
    in which the joint fit is nested, so its LR is at least as large: one judge's null LR is
    close to chi2 with M degrees of freedom (simulated: mean 29.3 on 30 models, 3% above its
    95% point), K independent judges' to chi2 with K M. The test is conservative: it leaves
    informative boards alone (LR 217-450 on the study's 2,000-verdict three-judge and one-judge
    boards against a critical value of 113 and 44) and opens boards of coin-like judges whose
    etas the prior would otherwise place. Not applied when a judge of known quality
    (fixed, reused or deterministic) has decisive verdicts: it anchors the scale.
    """
    from scipy import stats

    known, est = _judged(table)
    if known.any() or not est.any():
        return table
    lr = 2.0 * (float((table["n"] - table["ties"]).sum()) * np.log(2.0) - nll)
    if lr >= stats.chi2.ppf(level, int(est.sum()) * n_models):
        return table
    return table.assign(uninformative=np.asarray(table["uninformative"]) | np.asarray(est))


def scale_identified(table: pd.DataFrame) -> bool:
    """Can the data tell the judges' quality from the spread of the ratings?

    False when every judge with decisive verdicts has an estimated eta whose interval reaches
    1/2 (the verdicts cannot tell it from a coin flip, so the spread of the ratings has no upper
    bound) or is open, and no judge of known quality (fixed, reused or deterministic) has
    decisive verdicts to anchor the scale.
    """
    known, est = _judged(table)
    return bool(known.any() or not est.any() or not table["uninformative"][est].all())


def _judged(table: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """The judges with decisive verdicts whose quality is known (fixed, reused or
    deterministic), and those whose eta was estimated (on a bound or not)."""
    decisive = table["n"] - table["ties"] > 0
    return (table["status"].isin(["fixed", "reused", "deterministic"]) & decisive,
            table["status"].isin(["estimated", "boundary"]) & decisive)  # fmt: skip


def warn_weak_judges(table: pd.DataFrame, *, stacklevel: int = 3) -> None:
    """Warn (:class:`~ratings.core.errors.JudgeWarning`) where Crowd-BT cannot say much.

    Three cases, each naming the judges and the remedy: the scale is not identified (every
    judge's eta rests on its prior or on coin-flip verdicts; the ratings' intervals are then
    left open); one judge decides every judged verdict; a judge has fewer than
    :data:`MIN_DECISIVE` decisive verdicts.
    """
    est = table.index[table["status"].isin(["estimated", "boundary"])]
    if not len(est):
        return
    decisive = table["n"] - table["ties"]
    remedy = f"{fix_eta()}, or fit with {option('model', 'bt')}."
    if not scale_identified(table):
        _warn(
            f"No judge's quality is pinned down by these verdicts (judge(s) {list(est)}: their "
            "eta intervals reach 1/2, or together their verdicts cannot be told from coin "
            "flips by a likelihood-ratio test), so the "
            "spread of the ratings is not identified and their intervals are left open "
            f"(infinite). {remedy}", stacklevel)  # fmt: skip
        return
    judged = table.index[(table["status"] != "deterministic") & (decisive > 0)]
    if len(est) == 1 and len(judged) == 1:
        _warn(
            f"Only one judge ({est[0]!r}) decides these verdicts: Crowd-BT then tells its "
            "quality from the spread of the ratings only through the shape of the win curve, "
            f"so eta and the scale are weakly identified (eta {table.loc[est[0], 'eta']:.3f}, "
            f"prior share {table.loc[est[0], 'prior_share']:.2f}). {remedy}", stacklevel)
    few = [j for j in est if decisive[j] < MIN_DECISIVE]
    if few:
        counts = {j: int(decisive[j]) for j in few}
        _warn(
            f"Judge(s) {few} have very few decisive verdicts ({counts}; fewer than "
            f"{MIN_DECISIVE}): their eta rests mostly on the prior. {remedy}", stacklevel)


def _warn(message: str, stacklevel: int) -> None:
    warnings.warn(message, JudgeWarning, stacklevel=stacklevel + 1)
