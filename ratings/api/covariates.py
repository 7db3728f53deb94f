"""Fits with covariates: ``ratings.fit(..., style=[...])`` and ``ratings.fit(..., adjust=...)``.

Style features and judge effects are covariate columns of one design, d = s_A - s_B + x'beta
(:mod:`ratings.models.covariates`): each style feature a column (x = (a - b) / (a + b) scaled
to unit root-mean-square), judge k's position bias a column that is 1 on its verdicts, its
self-preference one that is own_k(A) - own_k(B) on its verdicts
(:func:`ratings.models.judge_effects.effect_columns`). One fit of that design estimates the
strengths, the coefficients and the outcome family's own parameters (Crowd-BT's etas, a tie
model's tie parameter) jointly with any family, so the strengths' intervals include the
coefficients' uncertainty. :func:`fit_covariates` is that fit for :func:`ratings.fit`; the
judge audit (:func:`ratings.audit`) runs it with its own plan of effects.

Intervals: with style features, CR2 by task with Satterthwaite df per contrast by default
(the effects table with G - 1 df when clustered); judge effects alone keep the textbook
cluster sandwich (CR1, G - 1 df), as the audit reports them. The result carries the style
coefficients (``Ratings.style``, with the plain fit's ranks for ``rank_change``), the judge
effects (``Ratings.judge_effects``), Crowd-BT's judges and the tie parameter (``Ratings.ties``).
Etas reused from a judge-quality source are fixed at its values, and their covariance enters
the intervals by the two-step term plain Crowd-BT adds (:mod:`ratings.models.crowd.reuse`),
unless ``eta_known`` (the etas are then taken as known).
Crowd-BT's estimate is plain Crowd-BT's default (:func:`ratings.models.crowd.likelihood.
choose_estimate`; with judge effects alone, the plain estimate wherever it exists), with open
intervals where the information is singular as plain Crowd-BT's (with style: an error).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ratings.api.adjust import identified_plan
from ratings.api.loading import LoadedLog
from ratings.api.options import spelled
from ratings.api.results import labelled
from ratings.api.specs import FitOptions, Style
from ratings.data.slots import SlotCounts, slot_counts
from ratings.data.soft import is_graded, soft_weights
from ratings.kernels.engine import resolve as resolve_engine
from ratings.models.covariates import (
    DesignFit,
    design_builder,
    design_rows,
    fit_design,
    side_by_side,
)
from ratings.models.crowd.policy import crowd_inference
from ratings.models.estimate import Estimate
from ratings.models.families import BRADLEY_TERRY, CROWD_BT
from ratings.models.judge_effects import (
    EffectPlan,
    effect_columns,
    effects_remedy,
    effects_table,
)
from ratings.models.style import style_remedy, style_table
from ratings.models.ties import check_identified, fit_ties, tie_family_of, tie_table
from ratings.result import JudgeEffects, Ratings

__all__ = ["fit_covariates"]


def fit_covariates(loaded: LoadedLog, options: FitOptions, *, plan: EffectPlan | None = None,
                   slots: SlotCounts | None = None) -> Ratings:  # fmt: skip
    """The body of :func:`ratings.fit` with ``style=`` or ``adjust=``: ``loaded`` is the
    verdicts read by :func:`ratings.api.loading.load_log`, ``options`` the fit's checked
    options (its style features, judge effects and their families, model, interval and
    solver); ``plan`` the audit's own plan of judge effects
    (:func:`ratings.models.judge_effects.plan_effects`) instead of the checked one, ``slots``
    the verdicts by slot if already counted. Soft outcomes (``ratings.BT(soft=True)``):
    ``winner`` is A's score (``loaded.frame["score"]``), each verdict's row counts those of
    the Bernoulli quasi-likelihood (:func:`ratings.data.soft.soft_weights`), so the
    Bradley-Terry row terms of the design, per-verdict meat included, are the
    quasi-likelihood's.

    Raises
    ------
    TypeError
        ``loaded`` has no verdict rows (a counts table: the slots and features are unknown).
    NonIdentifiableError
        The win graph is not strongly connected, or a requested effect has no finite,
        identified estimate (the message names the judge and why).
    """
    from ratings.models.bt import fit_bt
    from ratings.models.crowd.likelihood import choose_estimate, fit_crowd_bt
    from ratings.models.crowd.quality import resolve_judge_quality

    bt, crowd, style, solver = options.bt, options.crowd, options.style, options.solver
    model, ci, level, anchor, ties = options.model.name, options.ci, options.level, \
        options.anchor, bt.ties  # fmt: skip
    features, ridge = (style.features, style.ridge) if style is not None else ((), 0.0)
    data, frame = loaded.data, loaded.frame
    styled = bool(features)
    if frame is None or (styled and "winner" not in frame.columns):
        need = ("Style control needs one row per verdict with its features" if styled else
                "Judge effects need to know which model was in slot A, which `Comparisons` "
                "do not keep")  # fmt: skip
        raise TypeError(f"{need}; pass the verdict log (a path, DataFrame or VerdictLog).")
    x, scale, slots = _features_and_slots(frame, data, style, solver.engine, slots)
    if bt.soft and "score" in frame.columns:
        slots = _soft_slots(slots, frame["score"].to_numpy(dtype=np.float64))
    engine = resolve_engine(solver.engine, data.n_verdicts)
    collapsed = data.collapsed(engine=engine)
    check_identified(collapsed, ties)
    if plan is None and options.adjust:
        plan = identified_plan(slots, options.families, options.adjust, data)
    if plan is not None:
        x = np.column_stack([x, effect_columns(slots, plan)])
    rows = design_rows(slots, x, engine)
    ref = 0 if anchor is None else int(data.models.get_loc(anchor))
    clustered = data.clusters is not None
    # judge effects alone: the cluster sandwich (CR1) with one t quantile of G - 1 df
    df = float(data.n_clusters - 1) if clustered and ci == "sandwich" else None
    opts = {"ref": ref, "ci": ci if styled or ci != "sandwich" else "sandwich-z",
            "ridge": ridge, "engine": engine, "tol": solver.tol, "max_iter": solver.max_iter,
            "n_ridge": len(features),
            "remedy": style_remedy(spelled("style_ridge")) if styled
            else effects_remedy()}  # fmt: skip
    family = tie_family_of(collapsed, ties)
    summary = judges = None
    if model == "crowd-bt":
        quality = resolve_judge_quality(crowd.judge_quality, data.judges, scope=loaded.scope,
                                        fit_new_judges=crowd.fit_new_judges,
                                        eta_known=crowd.eta_known)  # fmt: skip
        start = fit_crowd_bt(collapsed, ref=ref, fixed_eta=quality.eta, tol=1e-8,
                             engine=engine)  # fmt: skip
        plain = start.theta
        kind, remedy = opts.pop("ci"), opts.pop("remedy")  # the intervals: crowd_inference's
        # judge effects alone: open intervals where the information is singular (the plan has
        # left out the effects the strengths span)
        built = design_builder(rows, ridge=ridge, n_ridge=len(features), engine=engine,
                               remedy=remedy if styled else None)  # fmt: skip

        def crowd_fit(prior, plain: DesignFit | None) -> DesignFit:  # started from plain's
            s0, b0, e0 = (start.theta, None, start.eta) if plain is None else (
                plain.strength, plain.beta, plain.eta)  # fmt: skip
            return fit_design(rows, s0, beta0=b0, eta0=e0, prior=prior, family=CROWD_BT,
                              eta_free=start.estimated, ci=None, remedy=remedy, **opts)

        # the default-estimate rule of plain Crowd-BT (judge effects alone: the plain estimate
        # wherever it exists), the regularity and the prior's move read from the CR1 / HC0
        # sandwich; without intervals: crowd_inference builds them
        fit = choose_estimate(crowd_fit, prior=crowd.prior, level=level, keep_plain=not styled,
                              covariance=lambda fit: built(fit, "sandwich-z", True).cov)
        out = crowd_inference(fit, data, rows, built, quality, ci=kind, level=level,
                              engine=engine, ridge=ridge, n_ridge=len(features), df=df,
                              open_ok=False, count_prior=True,
                              nll=fit.likelihood_nll(ridge, len(features)),
                              prior=crowd.prior)  # fmt: skip
        fit, judges, summary = out
    else:  # a tie model's parameter is one more of the design
        start = fit_ties(collapsed, family, ref=ref, tol=1e-8, engine=engine) if family else None
        plain = fit_bt(collapsed, ref=ref, tol=1e-10, engine=engine).theta if start is None \
            else start.theta
        fit = fit_design(rows, plain, family=family or BRADLEY_TERRY,
                         eta0=None if start is None else np.array([start.phi]), **opts)
    table = None
    if styled:
        table = style_table(fit, features, scale, level=level, ridge=ridge)
        table.attrs["transform"] = style.transform
        table.attrs["raw_rank"] = pd.Series(plain, index=data.models).rank(
            ascending=False, method="min").astype(np.int64)
    effects = None
    if plan is not None:
        effects = JudgeEffects(effects_table(fit.params, fit.cov, plan,
                                             at=fit.n_models + len(features), level=level,
                                             df=df), options.adjust)  # fmt: skip
    est = Estimate.of(fit, crowd=summary, judges=judges)
    return labelled(est, loaded, options, family, df=None if styled else df,
                    style=table, judge_effects=effects,
                    ties=tie_table(fit, ties, family, level=level, df=df, stacklevel=4))


def _soft_slots(slots, score: np.ndarray):
    """``slots`` with each verdict of a graded score counted as the quasi-likelihood's
    (wins of A, wins of B, ties) (:func:`ratings.data.soft.soft_weights`); scores 0, 1/2 and 1
    (and forfeits) as they are."""
    if slots.order is not None and slots.order.size:
        score = score[slots.order]
    graded = is_graded(score)
    wa, wb, tt = soft_weights(np.where(graded, score, 0.0))
    return replace(slots, wi=np.where(graded, wa, slots.wi), wj=np.where(graded, wb, slots.wj),
                   tt=np.where(graded, tt, slots.tt))


def _features_and_slots(frame: pd.DataFrame, data, style: Style | None, engine: str,
                        slots=None) -> tuple:  # fmt: skip
    """(features, their scales, slot codes), the rows of both in cluster order: the features
    are written in that order as they are scaled, the slot codes taken in it. On a long log in
    two rounds on the package's threads: the features' columns beside the cluster order, then
    the slot codes beside blocks of the features. Without style features, no columns (and the
    slot codes as counted, or ``slots``)."""
    from ratings.core.threads import CONCURRENT_ROWS
    from ratings.data.slots import verdict_cluster_order
    from ratings.models.style import feature_columns, feature_jobs

    resolved = resolve_engine(engine, data.n_verdicts)
    if style is None:
        slots = slot_counts(frame, data, resolved) if slots is None else slots
        return np.zeros((slots.n_rows, 0)), np.zeros(0), slots
    def together(jobs: list) -> list:  # on the package's threads on a long log
        return side_by_side(lambda job: job(), jobs, len(frame) >= CONCURRENT_ROWS)

    (xt, scale), order = together([
        lambda: feature_columns(frame, style.features, style.transform, engine,
                                concurrent=False),
        lambda: verdict_cluster_order(frame, data, resolved)])  # fmt: skip
    x, jobs = feature_jobs(xt, scale, order.rank, engine)
    slots = together([lambda: slot_counts(frame, data, resolved, by_cluster=order), *jobs])[0]
    return x, scale, slots
