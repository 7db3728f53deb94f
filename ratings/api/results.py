"""Every fit's estimate labelled into :class:`~ratings.result.Ratings` in one place: plain
Bradley-Terry, Crowd-BT and the tie models (:mod:`ratings.api.fitting`) and fits with
covariates (style features, judge effects: :mod:`ratings.api.covariates`) all hand an
:class:`~ratings.models.estimate.Estimate` to :func:`labelled`."""

from __future__ import annotations

from ratings.data.comparisons import Comparisons
from ratings.models.estimate import Estimate
from ratings.result import FitInfo, Ratings, Uncertainty

__all__ = ["labelled"]


def labelled(est: Estimate, data: Comparisons, *, model: str, ci: str, level: float,
             scope: str | None, n_rejected: int, anchor: str | None, rating: float,
             penalty: float = 0.0, firth: bool = False, df: float | None = None,
             model_based=None, source: object | None = None, **parts) -> Ratings:  # fmt: skip
    """``est`` over ``data``'s models as :class:`Ratings` (``anchor`` at ``rating``, or centred
    there); ``df`` a single t quantile's degrees of freedom (adjusted fits), ``model_based`` the
    contrasts that took the model-based variance (:func:`ratings.inference.degenerate.
    fill_collapsed`); ``source`` the verdicts read, kept for refits (``FitInfo.source``);
    ``parts`` the result's typed parts (``style``, ``judge_effects``)."""
    m, clustered = data.n_models, data.clusters is not None
    uncertainty = Uncertainty(
        ci=ci, cluster=data.cluster_name if clustered else None, n_clusters=data.n_clusters,
        draws=est.draws, influence=None if est.influence is None else est.influence[:, :m],
        influence_clusters=data.clusters if clustered else None, inference=est.inference,
        df=df, model_based=model_based)
    info = FitInfo(loglik=-est.nll, converged=est.converged, n_iter=est.n_iter,
                   max_grad=est.max_grad, n_rejected=n_rejected, penalty=penalty, firth=firth,
                   unbounded=est.unbounded, source=source)  # fmt: skip
    return Ratings(
        models=data.models, strength=est.theta[:m], cov=est.cov[:m, :m],
        counts=data.collapsed().model_counts().copy(), uncertainty=uncertainty, offset=rating,
        kind=model, level=level, scope=scope, fit_info=info, judges=est.judges,
        crowd=est.crowd, **parts,
    ).reanchor(anchor, rating)
