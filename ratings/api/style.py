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

import numpy as np
import pandas as pd

from ratings.api.loading import LoadedLog
from ratings.core.errors import option
from ratings.core.schema import require_columns
from ratings.data.slots import slot_counts
from ratings.kernels.engine import resolve as resolve_engine
from ratings.models.existence import check_identifiable
from ratings.models.style import fit_style, parse_style, style_features, style_rows, style_table
from ratings.result import FitInfo, Ratings, Uncertainty

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
                         f"{option('style_ridge')}).")  # fmt: skip
    if adjust:
        raise ValueError(f"{option('adjust')} together with {option('style')} is not "
                         "available yet: fit them separately.")  # fmt: skip
    if not (np.isfinite(ridge) and ridge >= 0):
        raise ValueError(f"{option('style_ridge')} must be a finite number >= 0; got {ridge!r}.")


def check_style_columns(columns, style: Sequence[str]) -> None:
    """Raise naming the ``NAME_a``/``NAME_b`` columns of ``style`` missing from ``columns``."""
    require_columns(sorted({str(c).strip() for c in columns}), style_columns(style),
                    "the verdicts", hint=f"{option('style')} {','.join(style)} needs the style "
                    "feature columns NAME_a and NAME_b of every feature (the two answers' "
                    "counts).")  # fmt: skip


def _judges(fit, data, level: float) -> pd.DataFrame:
    """The Crowd-BT judges table (eta with intervals) of a style fit."""
    from ratings.models.crowd.likelihood import CrowdFit
    from ratings.models.crowd.report import judge_table

    m, p = fit.n_models, fit.n_features
    keep = np.r_[np.arange(m), m + p + np.arange(fit.eta.size)]
    crowd = CrowdFit(theta=fit.strength, eta=fit.eta, ref=0, estimated=fit.eta_estimated,
                     boundary=fit.eta_boundary, hessian=fit.hessian[np.ix_(keep, keep)],
                     nll=fit.nll, converged=fit.converged, n_iter=fit.n_iter,
                     max_grad=fit.max_grad)  # fmt: skip
    df = None
    if fit.inference is not None:
        c = np.zeros((fit.eta.size, fit.cov.shape[0]))
        c[np.arange(fit.eta.size), m + p + np.arange(fit.eta.size)] = 1.0
        df = fit.inference.df(c)
    return judge_table(crowd, fit.cov[np.ix_(keep, keep)], data, level, df)


def fit_styled(loaded: LoadedLog, *, style: tuple[str, ...], transform: str = "normalized",
               ridge: float = 0.0, model: str = "bt", anchor: str | None = None,
               rating: float = 1000.0, ci: str = "sandwich", level: float = 0.95,
               engine: str = "auto", tol: float = 1e-10, max_iter: int = 100,
               prior=None) -> Ratings:  # fmt: skip
    """The body of :func:`ratings.fit` with ``style=`` (arguments as there)."""
    from ratings.models.bt import fit_bt
    from ratings.models.crowd.likelihood import fit_crowd_bt

    data, frame = loaded.data, loaded.frame
    if frame is None or "winner" not in frame.columns:
        raise TypeError("Style control needs one row per verdict with its features; pass the "
                        "verdict log (a path, DataFrame or VerdictLog).")  # fmt: skip
    x, scale = style_features(frame, style, transform)
    engine = resolve_engine(engine, data.n_verdicts)
    slots = slot_counts(frame, data, engine)
    collapsed = data.collapsed(engine=engine)
    check_identifiable(collapsed)
    ref = 0 if anchor is None else int(data.models.get_loc(anchor))
    rows = style_rows(slots, x)
    crowd = model == "crowd-bt"
    if crowd:
        start = fit_crowd_bt(collapsed, ref=ref, tol=1e-8, engine=engine)
        plain, eta0, eta_free = start.theta, start.eta, start.estimated
    else:
        plain = fit_bt(collapsed, ref=ref, tol=1e-10, engine=engine).theta
        eta0 = eta_free = None
    fit = fit_style(rows, plain, ref=ref, crowd=crowd, eta0=eta0, eta_free=eta_free, ci=ci,
                    ridge=ridge, engine=engine, tol=tol, max_iter=max_iter)  # fmt: skip
    table = style_table(fit, style, scale, level=level, ridge=ridge)
    table.attrs["transform"] = transform
    table.attrs["raw_rank"] = pd.Series(plain, index=data.models).rank(
        ascending=False, method="min").astype(np.int64)
    m = data.n_models
    clustered = data.clusters is not None
    judges = _judges(fit, data, level) if crowd else None
    uncertainty = Uncertainty(
        ci=ci, cluster=data.cluster_name if clustered else None, n_clusters=data.n_clusters,
        influence=None if fit.influence is None else fit.influence[:, :m],
        influence_clusters=data.clusters if clustered else None, inference=fit.inference)
    info = FitInfo(loglik=-fit.nll, converged=fit.converged, n_iter=fit.n_iter,
                   max_grad=fit.max_grad, n_rejected=loaded.n_rejected)
    return Ratings(
        models=data.models, strength=fit.strength, cov=fit.cov[:m, :m],
        counts=collapsed.model_counts().copy(), uncertainty=uncertainty, offset=rating,
        model=model, level=level, scope=loaded.scope, fit_info=info, judges=judges, style=table,
    ).reanchor(anchor, rating)
