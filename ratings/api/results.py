"""Every fit's estimate labelled into :class:`~ratings.result.Ratings` in one place: plain
Bradley-Terry, Crowd-BT and the tie models (:mod:`ratings.api.fitting`) and fits with
covariates (style features, judge effects: :mod:`ratings.api.covariates`) all hand an
:class:`~ratings.models.estimate.Estimate` to :func:`labelled`."""

from __future__ import annotations

import pandas as pd

from ratings.api.loading import LoadedLog
from ratings.data.soft import is_soft_table, soft_counts, soft_table_counts
from ratings.models.estimate import Estimate
from ratings.result import FitInfo, Ratings, Uncertainty

__all__ = ["labelled"]


def labelled(est: Estimate, loaded: LoadedLog, options, tie=None, *, df: float | None = None,
             model_based=None, source: object | None = None, ties: pd.DataFrame | None = None,
             **parts) -> Ratings:  # fmt: skip
    """``est`` over the models of the verdicts ``loaded`` as :class:`Ratings`, as the fit's
    checked ``options`` (:class:`~ratings.api.specs.FitOptions`) say: the interval kind and
    level, the anchor at its rating (or centred there), the penalty or Firth's reduction, and
    for soft outcomes the counts of the scores per model
    (:func:`ratings.data.soft.soft_counts`). Its name (``Ratings.kind``): its tie family's
    (``tie``, None without one), ``"bt-soft"`` for soft outcomes, else the model's. ``df`` a
    single t quantile's degrees of freedom (adjusted fits), ``model_based`` the contrasts that
    took the model-based variance (:func:`ratings.inference.degenerate.fill_collapsed`);
    ``source`` the verdicts read, kept for refits (``FitInfo.source``); ``ties`` a tie model's
    table (:func:`ratings.models.ties.tie_table`); ``parts`` the result's typed parts (``style``,
    ``judge_effects``)."""
    data, frame, bt = loaded.data, loaded.frame, options.bt
    m, clustered = data.n_models, data.clusters is not None
    kind = tie.name if tie is not None else "bt-soft" if bt.soft else options.model.name
    counts = data.collapsed().model_counts().copy()
    if bt.soft and frame is not None and ("score" in frame or is_soft_table(frame)):
        per_model = soft_counts if "score" in frame else soft_table_counts  # counts of scores
        counts = per_model(frame, data.models, counts["forfeits"].to_numpy())
    uncertainty = Uncertainty(
        ci=options.ci, cluster=data.cluster_name if clustered else None,
        n_clusters=data.n_clusters, draws=est.draws,
        influence=None if est.influence is None else est.influence[:, :m],
        influence_clusters=data.clusters if clustered else None, inference=est.inference,
        df=df, model_based=model_based)
    info = FitInfo(loglik=-est.nll, converged=est.converged, n_iter=est.n_iter,
                   max_grad=est.max_grad, n_rejected=loaded.n_rejected, penalty=bt.penalty,
                   firth=bt.firth, unbounded=est.unbounded, source=source, ties=ties)  # fmt: skip
    return Ratings(
        models=data.models, strength=est.theta[:m], cov=est.cov[:m, :m], counts=counts,
        uncertainty=uncertainty, offset=options.rating, kind=kind, level=options.level,
        scope=loaded.scope, fit_info=info, judges=est.judges, crowd=est.crowd, **parts,
    ).reanchor(options.anchor, options.rating)
