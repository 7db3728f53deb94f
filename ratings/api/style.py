"""Ratings controlled for answer style: ``ratings.fit(..., style=[...])``.

The strengths are fitted jointly with one shared coefficient per style feature
(:mod:`ratings.models.style`), so the ratings are those of answers of equal style (x = 0), and
their intervals (CR2 by task with Satterthwaite df per contrast by default) include the
coefficients' uncertainty. The result carries the coefficients table (``Ratings.style``) and the
plain fit's ranks, from which :meth:`ratings.result.Ratings.to_frame` reports ``rank_change``
(plain rank minus controlled rank).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ratings.api.loading import LoadedLog
from ratings.api.results import labelled
from ratings.api.ties import tie_start, with_ties
from ratings.core.errors import option
from ratings.core.schema import DETERMINISTIC_JUDGE, require_columns
from ratings.data.slots import slot_counts
from ratings.kernels.engine import resolve as resolve_engine
from ratings.models.crowd.prior import CrowdSummary
from ratings.models.estimate import Estimate
from ratings.models.existence import check_identifiable
from ratings.models.families import CROWD_BT
from ratings.models.families.ties import tie_family
from ratings.models.style import (
    StyleFit,
    check_ridge,
    fit_style,
    parse_style,
    ridge_option,
    style_rows,
    style_table,
    widen_one_judge,
)
from ratings.result import Ratings

__all__ = ["check_style_columns", "check_style_options", "fit_styled", "parse_style",
           "style_columns"]


def style_columns(style: Sequence[str]) -> list[str]:
    """The verdict-log columns a style fit reads: ``NAME_a, NAME_b`` per feature."""
    return [f"{n}_{s}" for n in style for s in ("a", "b")]


def check_style_options(style: tuple[str, ...], *, ci: str, penalty: float, firth: bool,
                        adjust: tuple[str, ...], ridge: float) -> None:  # fmt: skip
    """Raise for options a style fit does not take (before any data is read)."""
    if ci == "bootstrap":
        raise ValueError(f"{option('ci')} 'bootstrap' is not available with {option('style')}; "
                         "use 'sandwich', 'sandwich-z' or 'model'.")  # fmt: skip
    if penalty or firth:
        raise ValueError(f"{option('penalty')} and {option('firth')} are not available with "
                         f"{option('style')} (a ridge on the coefficients: "
                         f"{ridge_option()}).")  # fmt: skip
    check_ridge(ridge)


def check_style_columns(columns, style: Sequence[str]) -> None:
    """Raise naming the ``NAME_a``/``NAME_b`` columns of ``style`` missing from ``columns``."""
    require_columns(sorted({str(c).strip() for c in columns}), style_columns(style),
                    "the verdicts", hint=f"{option('style')} {','.join(style)} needs the style "
                    "feature columns NAME_a and NAME_b of every feature (the two answers' "
                    "counts).")  # fmt: skip


def _judges(fit, data, level: float) -> pd.DataFrame:
    """The Crowd-BT judges table (eta with intervals) of a style fit."""
    from ratings.models.crowd.judge_table import joint_judges

    m, p = fit.n_models, fit.n_features
    keep = np.r_[np.arange(m), m + p + np.arange(fit.eta.size)]
    df = None
    if fit.inference is not None:
        c = np.zeros((fit.eta.size, fit.cov.shape[0]))
        c[np.arange(fit.eta.size), m + p + np.arange(fit.eta.size)] = 1.0
        df = fit.inference.df(c)
    return joint_judges(fit.strength, fit.eta, fit.eta_estimated, fit.eta_boundary,
                        fit.hessian[np.ix_(keep, keep)], fit.cov[np.ix_(keep, keep)], data,
                        level, df)  # fmt: skip


def _effect_columns(slots, data, adjust: tuple[str, ...], families):
    """The plan of judge effects (:func:`ratings.models.judge_effects.plan_effects`, with its
    checks) and one covariate column per estimated effect, per verdict."""
    from ratings.api.adjust import checked_families, identified_plan
    from ratings.models.judge_effects import effect_columns

    plan = identified_plan(slots, checked_families(families, adjust, data), adjust)
    return plan, effect_columns(slots, plan)


class _EffectsView:
    """The judge effects of a joint style fit as :func:`~ratings.models.judge_effects.
    effects_table` reads them: per judge estimates and standard errors (NaN where not
    estimated) of ``"beta"`` (position) and ``"gamma"`` (self-preference)."""

    def __init__(self, fit, plan, n_style: int) -> None:
        k = len(plan.judges)
        se = np.sqrt(np.clip(np.diag(fit.cov), 0.0, None))
        at = fit.n_models + n_style
        self.values = {}
        for name, mask in (("beta", plan.position), ("gamma", plan.self_preference)):
            est, err = np.full(k, np.nan), np.full(k, np.nan)
            idx = at + np.arange(int(mask.sum()))
            est[mask], err[mask] = fit.params[idx], se[idx]
            self.values[name] = (est, err)
            at += int(mask.sum())

    def estimate(self, name: str):
        return self.values[name][0]

    def se(self, name: str):
        return self.values[name][1]


def _effects(fit, plan, n_style: int, *, level: float, df, adjust):
    from ratings.models.judge_effects import effects_table
    from ratings.result import JudgeEffects

    return JudgeEffects(effects_table(_EffectsView(fit, plan, n_style), plan, level=level,
                                      df=df), adjust)  # fmt: skip


@dataclass(frozen=True)
class _CrowdChoice:
    """Which Crowd-BT estimate the style fit is, as :class:`ratings.models.crowd.likelihood.
    CrowdFit` records it: the fit, whether it is the posterior mode, the etas the plain estimate
    put on a bound (all where it had none), whether the plain fit converged and, for a posterior
    mode chosen over a regular plain estimate, how far the prior moved it."""

    fit: StyleFit
    prior_used: bool
    plain_on_bound: np.ndarray | None = None
    plain_found: bool = True
    prior_shift: float = float("nan")


def _crowd_default(rows, start, prior, *, level: float, one_judge: bool = False,
                   **opts) -> _CrowdChoice:  # fmt: skip
    """Crowd-BT with style as :func:`ratings.models.crowd.likelihood.fit_crowd_default` fits
    Crowd-BT: the maximum-likelihood estimate where it is regular (converged, every estimated
    eta inside (1/2, 1) with its Wald interval) and the prior would move it by at most
    :data:`~ratings.models.crowd.likelihood.PRIOR_SHIFT_LIMIT` standard errors (with two or
    more estimated etas), else the posterior mode under ``prior``, whose curvature enters the
    bread. ``prior=None`` always fits the maximum-likelihood estimate."""
    from ratings.models.crowd.likelihood import (
        PRIOR_SHIFT_LIMIT,
        etas_inside,
        moved_in_ses,
        trial_fit,
    )

    common = {"family": CROWD_BT, "eta_free": start.estimated, **opts}
    if prior is None:
        return _CrowdChoice(fit_style(rows, start.theta, eta0=start.eta, **common), False)
    plain = trial_fit(lambda: fit_style(rows, start.theta, eta0=start.eta, **common))
    regular = plain is not None and plain.converged and not plain.eta_boundary.any()
    if regular:
        m, p = plain.n_models, plain.n_features
        on = m + p + np.flatnonzero(start.estimated)
        regular = etas_inside(plain.params[on], np.diag(plain.cov)[on], level)
    if regular and on.size < 2:  # one judge: the regular plain estimate (as without style)
        return _CrowdChoice(plain, False)
    post0 = (start.theta, None, start.eta) if plain is None else (plain.strength, plain.beta,
                                                                   plain.eta)  # fmt: skip
    post = fit_style(rows, post0[0], beta0=post0[1], eta0=post0[2], prior=prior,
                     one_judge=one_judge, **common)  # fmt: skip
    if not regular:
        bound = start.estimated.copy() if plain is None else plain.eta_boundary.copy()
        return _CrowdChoice(post, True, bound, plain is not None and plain.converged)
    keep = np.r_[np.arange(m), on]
    shift = moved_in_ses((post.params - plain.params)[keep], plain.cov[np.ix_(keep, keep)], m)
    if shift <= PRIOR_SHIFT_LIMIT:
        return _CrowdChoice(plain, False)
    return _CrowdChoice(post, True, np.zeros_like(start.estimated), True, shift)


def _crowd_summary(choice: _CrowdChoice, data, prior) -> CrowdSummary:
    """The Crowd-BT summary of a style fit (``Ratings.crowd``): the etas' covariance and which
    estimate it is (:meth:`~ratings.models.crowd.prior.CrowdSummary.estimate_note`)."""
    fit = choice.fit
    names = pd.Index(data.judges)
    at = fit.n_models + fit.n_features + np.arange(names.size)
    bound = choice.plain_on_bound
    on_bound = () if bound is None or not choice.plain_found else tuple(
        str(j) for j in names[bound])  # fmt: skip
    return CrowdSummary(
        eta_cov=pd.DataFrame(fit.cov[np.ix_(at, at)], index=names, columns=names), prior=prior,
        prior_used=choice.prior_used, plain_on_bound=on_bound, plain_found=choice.plain_found,
        prior_shift=choice.prior_shift)


def _features_and_slots(frame: pd.DataFrame, data, style: tuple[str, ...], transform: str,
                        engine: str) -> tuple:  # fmt: skip
    """(features, their scales, slot codes), the rows of both in cluster order: the features
    are written in that order as they are scaled, the slot codes taken in it. On a long log in
    two rounds on the package's threads: the features' columns beside the cluster order, then
    the slot codes beside blocks of the features."""
    from ratings.core.threads import CONCURRENT_ROWS, run
    from ratings.data.slots import verdict_cluster_order
    from ratings.models.style import feature_columns, feature_jobs

    resolved = resolve_engine(engine, data.n_verdicts)
    together = run if len(frame) >= CONCURRENT_ROWS else (lambda jobs: [job() for job in jobs])
    (xt, scale), order = together([
        lambda: feature_columns(frame, style, transform, engine, concurrent=False),
        lambda: verdict_cluster_order(frame, data, resolved)])  # fmt: skip
    x, jobs = feature_jobs(xt, scale, order.rank, engine)
    slots = together([lambda: slot_counts(frame, data, resolved, by_cluster=order), *jobs])[0]
    return x, scale, slots


def fit_styled(loaded: LoadedLog, *, style: tuple[str, ...], transform: str = "normalized",
               ridge: float = 0.0, model: str = "bt", anchor: str | None = None,
               rating: float = 1000.0, ci: str = "sandwich", level: float = 0.95,
               engine: str = "auto", tol: float = 1e-10, max_iter: int = 100,
               prior=None, adjust: tuple[str, ...] = (), families=None,
               ties: str = "half") -> Ratings:  # fmt: skip
    """The body of :func:`ratings.fit` with ``style=`` (arguments as there).

    With ``adjust`` the judge effects of :mod:`ratings.models.judge_effects` join the same fit:
    judge k's position bias is the coefficient of a column that is 1 on its verdicts, its
    self-preference that of own_k(A) - own_k(B) on its verdicts (unscaled, beside the style
    features), so strengths, style coefficients and judge effects share one covariance. The
    effects table (``Ratings.judge_effects``) takes its standard errors from it, with G - 1
    degrees of freedom when clustered (as :func:`ratings.api.adjust.fit_adjusted`).

    With a tie model (``ties="davidson"`` or ``"rao-kupper"``) the tie parameter is one more
    parameter of the same design (:mod:`ratings.models.families.ties`), a tie row contributes
    its tie likelihood, and the result carries the tie parameter's table (``Ratings.ties``).
    """
    from ratings.models.bt import fit_bt
    from ratings.models.crowd.likelihood import fit_crowd_bt

    data, frame = loaded.data, loaded.frame
    if frame is None or "winner" not in frame.columns:
        raise TypeError("Style control needs one row per verdict with its features; pass the "
                        "verdict log (a path, DataFrame or VerdictLog).")  # fmt: skip
    x, scale, slots = _features_and_slots(frame, data, style, transform, engine)
    engine = resolve_engine(engine, data.n_verdicts)
    collapsed = data.collapsed(engine=engine)
    check_identifiable(collapsed)
    ref = 0 if anchor is None else int(data.models.get_loc(anchor))
    plan = None
    if adjust:
        plan, extra = _effect_columns(slots, data, adjust, families)
        x = np.column_stack([x, extra])
    rows = style_rows(slots, x, engine)
    crowd = model == "crowd-bt"
    family = None if ties == "half" else tie_family(ties)
    summary = None
    opts = {"ref": ref, "ci": ci, "ridge": ridge, "engine": engine, "tol": tol,
            "max_iter": max_iter, "n_ridge": len(style)}  # fmt: skip
    if crowd:
        start = fit_crowd_bt(collapsed, ref=ref, tol=1e-8, engine=engine)
        plain = start.theta
        judged = [j for j in data.judges if j != DETERMINISTIC_JUDGE]
        choice = _crowd_default(rows, start, prior, level=level, one_judge=len(judged) == 1,
                                **opts)  # fmt: skip
        fit = choice.fit
        if choice.prior_used and len(judged) == 1:  # one judge: eta's profile widening
            k = list(data.judges).index(judged[0])
            fit = widen_one_judge(fit, rows, k, prior=prior, ref=ref, ridge=ridge,
                                  n_ridge=len(style), level=level, engine=engine,
                                  plain_on_bound=bool(choice.plain_on_bound[k]))  # fmt: skip
        summary = _crowd_summary(replace(choice, fit=fit), data, prior)
    elif family is not None and collapsed.tt.sum() > 0:  # a tie model (ratings.api.ties)
        start = tie_start(collapsed, family, ref=ref, engine=engine)
        plain = start.theta
        fit = fit_style(rows, plain, family=family, eta0=np.array([start.phi]), **opts)
    else:
        plain = fit_bt(collapsed, ref=ref, tol=1e-10, engine=engine).theta
        fit = fit_style(rows, plain, **opts)
    table = style_table(fit, style, scale, level=level, ridge=ridge)
    effects = None
    if plan is not None:
        effects = _effects(fit, plan, len(style), level=level,
                           df=float(data.n_clusters - 1) if (data.clusters is not None
                                                             and ci == "sandwich") else None,
                           adjust=adjust)  # fmt: skip
    table.attrs["transform"] = transform
    table.attrs["raw_rank"] = pd.Series(plain, index=data.models).rank(
        ascending=False, method="min").astype(np.int64)
    est = Estimate(theta=fit.strength, cov=fit.cov, nll=fit.nll, converged=fit.converged,
                   n_iter=fit.n_iter, max_grad=fit.max_grad, influence=fit.influence,
                   inference=fit.inference, judges=_judges(fit, data, level) if crowd else None,
                   crowd=summary)  # fmt: skip
    tied = family is not None and collapsed.tt.sum() > 0
    out = labelled(est, data, model=ties if tied else model, ci=ci, level=level, scope=loaded.scope,
                   n_rejected=loaded.n_rejected, anchor=anchor, rating=rating, style=table,
                   judge_effects=effects)  # fmt: skip
    return with_ties(out, fit.params, fit.cov, fit.inference, family, collapsed, level=level,
                     at=fit.params.size - 1, stacklevel=4)
