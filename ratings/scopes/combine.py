"""Per-scope fits and the combined headline Elo with a joint interval.

A benchmark's headline Elo is a weighted mean of its scopes' Elos (analytical quality,
presentation, rubric; or five video axes with equal weights). Scopes judged on the same tasks are
correlated, so the headline interval uses a joint covariance: each scope's estimate is, to first
order, a sum of per-task influences ``H_s^-1 g_{s,c}``; stacking them by shared task c gives

    Var(sum_s w_s theta_s) = sum_c D_c D_c^T,   D_c = sum_s w_s k_s H_s^-1 g_{s,c},

the clustered sandwich of the stacked estimating equations. For the default CR2 scope fits
(``ci="sandwich"``) the per-task influences are already bias-adjusted (k_s = 1) and each
headline contrast gets Satterthwaite degrees of freedom from the scopes' working models stacked
by shared task (:class:`ratings.inference.StackedInference`); for ``ci="sandwich-z"`` (CR1)
k_s = sqrt(G_s / (G_s - 1)). Either way a single scope reproduces its own interval exactly.
``method="independent"`` ignores the cross-scope terms (sum_s w_s^2 V_s), which understates the
variance when scopes agree on which tasks a model did well on, and overstates it when they disagree.
A scope fitted with a tie model (``ratings.BT(ties=...)``) has its tie parameter as a nuisance
parameter: its influences are the strength rows of the full inverse information times each
task's score over (strengths, tie parameter), so the tie parameter's uncertainty is in them.
A Crowd-BT scope whose etas come from a judge-quality file adds its two-step term
w_s^2 F_s^T F_s (:attr:`ratings.models.crowd.prior.CrowdSummary.eta_influence`; files of different
scopes are taken as fitted on different verdicts).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Literal

import numpy as np
import pandas as pd

from ratings.api.fitting import fit, fit_with
from ratings.api.loading import Source
from ratings.api.specs import BT, CrowdBT, FitOptions, Read
from ratings.core.bounds import MAX_WEIGHT, check_number
from ratings.core.errors import option
from ratings.core.schema import COMBINED_SCOPE, DETERMINISTIC_JUDGE
from ratings.inference import StackedInference
from ratings.inference.builder import cluster_factor
from ratings.io import VerdictLog, read_verdicts
from ratings.models.crowd.quality import JudgeQuality
from ratings.result import Combination, Ratings, Uncertainty
from ratings.scopes.scale import board_info

__all__ = ["combine", "fit_scopes", "scopes_frame"]

Method = Literal["joint", "independent"]


def fit_scopes(
    verdicts: Source,
    *,
    scopes: list[str] | None = None,
    model: Literal["auto", "bt", "crowd-bt"] | BT | CrowdBT = "auto",
    judge_quality: Mapping[str, JudgeQuality] | JudgeQuality = None,
    options: FitOptions | None = None,
    **fit_kwargs,
) -> dict[str, Ratings]:
    """Fit every scope of a verdict log with the same anchor and options.

    Parameters
    ----------
    verdicts : path, DataFrame or VerdictLog
        A log with a ``scope`` column.
    scopes : list of str, optional
        Scopes to fit (default: all, sorted).
    model : {"auto", "bt", "crowd-bt"}, ratings.BT or ratings.CrowdBT, default="auto"
        ``"auto"``: Bradley-Terry for scopes whose verdicts are all ``deterministic`` (rubric
        matches, render forfeits), Crowd-BT for judged scopes; a spec is used as it is for
        the scopes of its kind (``"auto"`` with ``options``: ``options.model`` for the scopes
        of its kind, the other kind's defaults for the rest). A Bradley-Terry tie model
        (``ratings.BT(ties="davidson" | "rao-kupper")``, here or as ``options.model``) fits
        every judged scope, each with its own tie parameter, while deterministic scopes keep
        ties as half wins: their ties are equal pass rates of synthetic matches, not verdicts
        a judge could call either way. Soft outcomes (``ratings.BT(soft=True)``) likewise fit
        every judged scope (the log is read with ``winner`` as A's score).
    judge_quality : mapping of scope to judge-quality source, or one source
        Crowd-BT scopes only: each scope's etas (replacing the spec's ``judge_quality``).
    options : FitOptions, optional
        Checked options (:func:`ratings.api.specs.options_of`), e.g. from the command line;
        not with ``fit_kwargs``.
    **fit_kwargs
        ``anchor``, ``cluster``, ``ci``, ``level``, ... as for :func:`ratings.fit`.

    Returns
    -------
    dict of str to Ratings
    """
    if options is not None and fit_kwargs:
        raise TypeError(f"pass {sorted(fit_kwargs)} inside `options`, not beside it.")
    read = options.read if options is not None else fit_kwargs.get("read") or Read()
    soft = any(isinstance(m, BT) and m.soft for m in (model, options and options.model))
    log = verdicts if isinstance(verdicts, VerdictLog) else read_verdicts(
        verdicts, columns=read.columns, winner_map=read.winner_map, errors=read.errors,
        soft=soft)  # `winner` as A's score (ratings.BT(soft=True))
    if "scope" not in log.verdicts.columns:
        raise ValueError("Per-scope fits need a `scope` column in the verdicts.")
    available = sorted(pd.unique(log.verdicts["scope"]).tolist())
    scopes = available if scopes is None else list(scopes)
    unknown = [s for s in scopes if s not in available]
    if unknown:
        raise ValueError(f"Scope(s) {unknown} not in the verdicts; available: {available}.")
    given = options.model if options is not None else None
    out = {}
    for scope in scopes:
        spec = _scope_model(log, scope, model, given)
        if isinstance(spec, CrowdBT):
            quality = judge_quality if judge_quality is not None else spec.judge_quality
            if isinstance(quality, Mapping):  # per scope
                quality = quality.get(scope)
            spec = dataclasses.replace(spec, judge_quality=quality)
        if options is not None:
            out[scope] = fit_with(log, dataclasses.replace(options, scope=scope, model=spec))
        else:
            out[scope] = fit(log, scope=scope, model=spec, **fit_kwargs)
    return out


def _scope_model(log: VerdictLog, scope: str, model, given) -> BT | CrowdBT:
    """The model spec of one scope (see :func:`fit_scopes`)."""
    judges = set(log.verdicts.loc[log.verdicts["scope"] == scope, "judge"]) if (
        "judge" in log.verdicts.columns) else {"unspecified"}  # fmt: skip
    deterministic = judges <= {DETERMINISTIC_JUDGE}
    tied = model if isinstance(model, BT) else given if (
        model in ("auto", "bt") and isinstance(given, BT)) else None  # fmt: skip
    if tied is not None and (tied.ties != "half" or tied.soft):  # judged scopes only
        return dataclasses.replace(tied, ties="half", soft=False) if deterministic else tied
    if isinstance(model, BT | CrowdBT):
        return model
    kind = model
    if model == "auto":
        kind = "bt" if deterministic else "crowd-bt"
    if kind not in ("bt", "crowd-bt"):
        raise ValueError(f"`model` must be 'auto', 'bt', 'crowd-bt' or a spec; got {model!r}.")
    if given is not None and given.name == kind:
        return given
    return BT() if kind == "bt" else CrowdBT()


def scopes_frame(results: Mapping[str, Ratings], combined: Ratings | None = None) -> pd.DataFrame:
    """One table with a ``scope`` column: every scope's ratings, then the combined headline;
    each row also records its board (:data:`ratings.scopes.scale.BOARD_COLUMNS`: anchor, rating,
    method, scopes and weights)."""
    frames = [r.to_frame().assign(scope=s, **board_info(r)) for s, r in results.items()]
    if combined is not None:
        frames.append(combined.to_frame().assign(scope=COMBINED_SCOPE, **board_info(combined)))
    table = pd.concat(frames, ignore_index=True)
    return table[["scope", *[c for c in table.columns if c != "scope"]]]


def combine(
    results: Mapping[str, Ratings],
    *,
    weights: Mapping[str, float] | None = None,
    method: Method = "joint",
    missing: Literal["error", "drop"] = "error",
) -> Ratings:
    """Combine per-scope ratings into the headline Elo = sum_s w_s Elo_s with an interval.

    Parameters
    ----------
    results : mapping of scope to Ratings
        Fits on one scale (same anchor and anchor rating), e.g. from :func:`fit_scopes`.
    weights : mapping of scope to float, optional
        Non-negative weights, normalised to sum to 1; default equal weights (the mean).
    method : {"joint", "independent"}, default="joint"
        Joint covariance from per-task influences stacked across scopes (needs task-clustered
        fits), or independent scopes.
    missing : {"error", "drop"}, default="error"
        A model missing from some scope has no headline Elo: raise, or drop it from the headline
        (it keeps its per-scope ratings).

    Returns
    -------
    Ratings
        ``scope="combined"``; its table adds nothing new but ``se`` reflects ``method``. The
        weights and method are in ``scope_weights`` and ``combine_method``, and the independent
        standard errors in ``se_independent``, for comparison.
    """
    if not results:
        raise ValueError("`results` is empty: nothing to combine.")
    if method not in ("joint", "independent"):
        raise ValueError(f"{option('method')} must be 'joint' or 'independent'; got {method!r}.")
    scopes = list(results)
    try:
        w = pd.Series({s: 1.0 for s in scopes} if weights is None else dict(weights), dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{option('weights')} must be numbers; got {dict(weights)!r}.") from None
    if set(w.index) != set(scopes):
        raise ValueError(f"{option('weights')} must name exactly the scopes {scopes}; got "
                         f"{list(w.index)}.")  # fmt: skip
    for value in w.to_numpy():
        check_number(value, "weights", minimum=0.0, maximum=MAX_WEIGHT)
    if not w.sum() > 0:
        raise ValueError(f"{option('weights')} must be finite, >= 0 and not all 0; got "
                         f"{w.to_dict()}.")  # fmt: skip
    w = w[scopes] / w.sum()
    first = results[scopes[0]]
    for s in scopes[1:]:
        r = results[s]
        if (r.anchor, r.offset) != (first.anchor, first.offset):
            raise ValueError(
                f"Scopes are on different scales: {scopes[0]!r} has anchor {first.anchor!r} at "
                f"{first.offset:g}, {s!r} has {r.anchor!r} at {r.offset:g}. Fit them with the "
                "same anchor."
            )
        if (r.cluster, r.level) != (first.cluster, first.level):
            raise ValueError(
                f"Scopes were fitted differently: {scopes[0]!r} clustered by {first.cluster!r} at "
                f"level {first.level:g}, {s!r} by {r.cluster!r} at {r.level:g}. Fit every scope "
                "with the same cluster column and level."
            )
    if method == "joint":
        other = [s for s in scopes if results[s].ci not in ("sandwich", "sandwich-z")]
        if other:
            raise ValueError(
                f"{option('method', 'joint')} stacks sandwich influences, but scope(s) {other} "
                f"were fitted with {option('ci', results[other[0]].ci)}. Fit with "
                f"{option('ci', 'sandwich')} or use {option('method', 'independent')}."
            )
    models = _common_models(results, missing)
    idx = {s: results[s].models.get_indexer(models) for s in scopes}
    strength = sum(w[s] * results[s].strength[idx[s]] for s in scopes)
    cov_ind = sum(w[s] ** 2 * _cov(results[s])[np.ix_(idx[s], idx[s])] for s in scopes)
    if any(r.crowd is not None and r.crowd.open_intervals for r in results.values()):
        # a Crowd-BT scope's spread is unknown: open wherever its intervals are
        cov, clusters = np.diag(np.where(np.isinf(np.diag(cov_ind)), np.inf, 0.0)), None
    elif method == "joint":
        cov, clusters = _joint_cov(results, w, idx, len(models))
    else:
        cov, clusters = cov_ind, None
    counts = sum(results[s].counts.iloc[idx[s]].to_numpy() for s in scopes)
    dfs = [results[s].df for s in scopes]
    inference = _stacked(results, w, idx, clusters, len(models))
    if inference is not None:
        df = None  # CR2 scopes: degrees of freedom per contrast of the stacked fits
    elif any(d is None for d in dfs):
        df = None  # a normal quantile in some scope: keep it
    elif method == "joint" and clusters is not None:
        df = float(len(clusters) - 1)  # the joint sandwich is clustered over the shared tasks
    else:
        df = float(min(dfs))
    uncertainty = Uncertainty(
        ci="sandwich", cluster=first.cluster if method == "joint" else None,
        n_clusters=0 if clusters is None else len(clusters), inference=inference, df=df)
    se_independent = pd.Series(first.scale * np.sqrt(np.diag(cov_ind)), index=models,
                               name="se_independent")
    return Ratings(
        models=models, strength=strength, cov=cov,
        counts=pd.DataFrame(counts, index=models, columns=first.counts.columns),
        uncertainty=uncertainty, anchor=first.anchor, offset=first.offset, kind="combined",
        level=first.level, scope="combined",
        combination=Combination(w.to_dict(), method, se_independent),
    )


def _cov(r: Ratings) -> np.ndarray:
    """A scope's covariance of strengths as reported (bootstrap: the draws' covariance)."""
    return r.cov if r.draws is None else np.atleast_2d(np.cov(r.draws, rowvar=False))


def _common_models(results: Mapping[str, Ratings], missing: str) -> pd.Index:
    union = sorted(set().union(*[set(r.models) for r in results.values()]))
    absent = {s: [m for m in union if m not in set(r.models)] for s, r in results.items()}
    absent = {s: a for s, a in absent.items() if a}
    if absent and missing == "error":
        detail = "; ".join(f"{s}: {a[:5]}" for s, a in absent.items())
        raise ValueError(
            f"Some models are missing from some scopes ({detail}); they have no headline Elo. "
            f"Add their verdicts, or pass {option('missing', 'drop')} to leave them out of the "
            "headline."
        )
    if missing not in ("error", "drop"):
        raise ValueError(f"{option('missing')} must be 'error' or 'drop'; got {missing!r}.")
    return pd.Index([m for m in union if all(m in set(r.models) for r in results.values())],
                    dtype=object)  # fmt: skip


def _joint_cov(results, w, idx, m) -> tuple[np.ndarray, pd.Index]:
    """D^T D with D the weighted per-cluster influences stacked by cluster label.

    Each scope's influences carry its own small-sample adjustment (CR2's, or CR1's factor
    sqrt(G_s / (G_s - 1))), so one scope
    alone, or scopes on disjoint tasks, reproduce their own clustered covariances exactly.
    """
    missing = [s for s, r in results.items() if r.influence is None]
    if missing:
        raise ValueError(
            f"Scope(s) {missing} were not fitted with clustered intervals, so their per-task "
            f"influences are unknown. Fit with a task column ({option('cluster', 'task_id')}), "
            f"or use {option('method', 'independent')}."
        )
    clusters = pd.Index(sorted(set().union(*[set(r.influence_clusters)
                                             for r in results.values()])))  # fmt: skip
    d = np.zeros((len(clusters), m))
    for s, r in results.items():
        rows = clusters.get_indexer(r.influence_clusters)
        g = r.influence.shape[0]
        factor = cluster_factor(g, cr2=r.inference is not None)
        d[rows] += w[s] * factor * r.influence[:, idx[s]]
    cov = d.T @ d
    for s, r in results.items():  # etas reused from judge files: their own, independent term
        if r.crowd is not None and r.crowd.eta_influence is not None:
            f = r.crowd.eta_influence[:, idx[s]]
            cov += w[s] ** 2 * (f.T @ f)
    return cov, clusters


def _stacked(results, w, idx, clusters: pd.Index | None, m: int) -> StackedInference | None:
    """Degrees of freedom of the headline when every scope is a CR2 fit: shared clusters
    (``clusters``, joint) or each scope's own (independent)."""
    if any(r.inference is None for r in results.values()):
        return None
    at, offset = [], 0
    for r in results.values():
        if clusters is not None:
            at.append(clusters.get_indexer(r.influence_clusters))
        else:
            at.append(offset + np.arange(r.inference.n_clusters))
            offset += r.inference.n_clusters
    total = len(clusters) if clusters is not None else offset
    return StackedInference(tuple(r.inference for r in results.values()),
                            tuple(float(w[s]) for s in results), tuple(idx[s] for s in results),
                            tuple(at), m, total)  # fmt: skip

