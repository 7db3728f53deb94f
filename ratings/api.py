"""The public entry point: :func:`fit` a verdict log into :class:`~ratings.result.Ratings`."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from typing import Literal

import numpy as np
import pandas as pd

from ratings._threads import BLAS_THREADS_FROM, blas_threads
from ratings.bt import fit_bt
from ratings.crowd import crowd_covariance_and_influence, fit_crowd_bt, judge_table
from ratings.data import Comparisons, aggregate, from_counts, is_counts_frame
from ratings.engine import Engine, kernels
from ratings.engine import resolve as resolve_engine
from ratings.errors import (
    ConvergenceWarning,
    InvalidVerdictsError,
    NonIdentifiableError,
    close_matches,
)
from ratings.graph import check_identifiable
from ratings.inference import bt_inference, crowd_inference
from ratings.io import VerdictLog, peek_columns, read_counts, read_verdicts
from ratings.judges import JudgeQuality, resolve_judge_quality
from ratings.result import Ratings
from ratings.uncertainty import (
    bootstrap_draws,
    cluster_sandwich,
    inverse_free,
    sandwich,
)

__all__ = [
    "BLAS_THREADS_FROM",
    "CIKind",
    "Source",
    "fit",
    "is_counts_source",
    "load_comparisons",
    "parse_anchor",
]

CIKind = Literal["sandwich", "sandwich-z", "model", "bootstrap"]
Source = str | os.PathLike | pd.DataFrame | VerdictLog | Comparisons


def parse_anchor(text: str) -> tuple[str, float]:
    """Parse ``"NAME=RATING"`` (the last ``=`` separates; the name may contain ``=``)."""
    name, sep, value = str(text).rpartition("=")
    try:
        rating = float(value)
    except ValueError:
        rating = float("nan")
    if not sep or not name.strip() or not np.isfinite(rating):
        raise ValueError(f"`anchor` must look like 'NAME=RATING', e.g. 'GPT-5.5 (medium)=1000'; "
                         f"got {text!r}.")  # fmt: skip
    return name.strip(), rating


def _select_scope(log: VerdictLog, scope: str | None) -> tuple[pd.DataFrame, str | None]:
    """The verdicts of one scope, and that scope (the log's only one when not given)."""
    v = log.verdicts
    if "scope" not in v.columns:
        if scope is not None:
            raise InvalidVerdictsError(
                f"`scope={scope!r}` was given but the verdicts have no `scope` column. Available "
                f"columns: {v.columns.tolist()}."
            )
        return v, None
    scopes = pd.unique(v["scope"])
    if scope is None:
        if len(scopes) > 1:
            raise InvalidVerdictsError(
                f"The verdicts hold {len(scopes)} scopes {sorted(map(str, scopes))[:8]}; ratings "
                "from different scopes must not be pooled. Pass `scope=` (CLI `--scope`)."
            )
        return v, str(scopes[0])
    if scope not in set(scopes):
        raise InvalidVerdictsError(
            f"Scope {scope!r} not in the verdicts. {close_matches(scope, scopes)}"
        )
    return v[v["scope"] == scope], scope


def is_counts_source(source) -> bool:
    """Pre-aggregated counts (wins_a, wins_b, ties) rather than verdicts?"""
    if isinstance(source, pd.DataFrame):
        return is_counts_frame(source)
    if isinstance(source, str | os.PathLike) and os.path.exists(source):
        return is_counts_frame(pd.DataFrame(columns=peek_columns(source)))
    return False


def load_comparisons(
    verdicts: Source,
    *,
    scope: str | None = None,
    cluster: str | None = "auto",
    errors: Literal["raise", "report"] = "raise",
    columns: Mapping[str, str] | None = None,
    winner_map: Mapping[object, str] | None = None,
    engine: Engine = "auto",
) -> tuple[Comparisons, int, str | None]:
    """Read (if needed), select the scope and aggregate.

    Returns the data, the number of rejected rows and the scope fitted.
    """
    if isinstance(verdicts, Comparisons):
        return verdicts, 0, scope
    if is_counts_source(verdicts):
        counts = read_counts(verdicts)
        if "scope" in counts.columns:
            counts, scope = _select_scope(VerdictLog(counts, counts.iloc[:0], None), scope)
        if cluster == "auto":
            cluster = "task_id" if "task_id" in counts.columns else None
        return from_counts(counts, cluster=cluster), 0, scope
    if isinstance(verdicts, VerdictLog):
        log = verdicts
    else:
        log = read_verdicts(verdicts, columns=columns, winner_map=winner_map, errors=errors)
    frame, scope = _select_scope(log, scope)
    if cluster == "auto":
        cluster = "task_id" if "task_id" in frame.columns else None
    return aggregate(frame, cluster=cluster, engine=engine), len(log.rejected), scope


def fit(
    verdicts: Source,
    *,
    model: Literal["bt", "crowd-bt"] = "bt",
    judge_quality: JudgeQuality = None,
    fit_new_judges: bool = False,
    anchor: str | None = None,
    anchor_rating: float | None = None,
    scope: str | None = None,
    cluster: str | None = "auto",
    ci: CIKind = "sandwich",
    level: float = 0.95,
    penalty: float = 0.0,
    n_boot: int = 1000,
    seed: int = 0,
    errors: Literal["raise", "report"] = "raise",
    columns: Mapping[str, str] | None = None,
    winner_map: Mapping[object, str] | None = None,
    engine: Engine = "auto",
    tol: float = 1e-10,
    max_iter: int = 100,
) -> Ratings:
    """Fit Bradley-Terry Elo ratings with confidence intervals.

    Parameters
    ----------
    verdicts : path, DataFrame, VerdictLog or Comparisons
        A verdict log (CSV, Parquet or JSON Lines path, or a DataFrame; see
        :func:`ratings.read_verdicts`); a pre-aggregated counts table (path or DataFrame with
        ``model_a, model_b, wins_a, wins_b, ties`` and optionally ``judge``, ``task_id``,
        ``scope``; see :func:`ratings.data.from_counts`); or :class:`~ratings.data.Comparisons`.
    model : {"bt", "crowd-bt"}, default="bt"
        Bradley-Terry, or Crowd-BT with one quality eta in [1/2, 1] per judge (see
        :mod:`ratings.crowd`); judge ``"deterministic"`` always has eta = 1.
    judge_quality : path, DataFrame or mapping, optional
        Crowd-BT only: fix eta from an earlier fit (a JSON file written by
        :func:`ratings.judges.save_judge_quality`, a judges table, or ``{judge: eta}``). Strength
        intervals then treat eta as known.
    fit_new_judges : bool, default=False
        With ``judge_quality``: estimate eta for judges missing from it instead of raising.
    anchor : str, optional
        Model pinned at ``anchor_rating``; also accepts ``"NAME=RATING"``. Its interval has zero
        width and every other interval is that of the difference to it. Without an anchor the
        ratings are centred at a mean of ``anchor_rating`` (default 1000).
    anchor_rating : float, optional
        Default 1000 (or the value in ``"NAME=RATING"``).
    scope : str, optional
        Fit only verdicts of this scope; required when the log holds several.
    cluster : str or None, default="auto"
        Column whose values cluster verdicts for the sandwich (``"auto"``: ``task_id`` when
        present); ``None`` treats verdicts as independent (HC0). Ignored for pre-aggregated
        ``Comparisons``, whose clusters were fixed by :func:`ratings.aggregate`.
    ci : {"sandwich", "sandwich-z", "model", "bootstrap"}, default="sandwich"
        Robust sandwich H^-1 B H^-1; clustered, its meat carries the factor G/(G-1) and the
        intervals use a Student t quantile with G - 1 degrees of freedom (small-sample aware:
        95% intervals cover 0.947-0.962 in `benchmarks_perf/validate_coverage.py`, also with
        20-40 tasks). ``"sandwich-z"`` is the textbook cluster sandwich with a normal quantile
        (covers about 0.93-0.94 with 20-40 tasks). ``"model"``: model-based H^-1, which
        under-covers when verdicts on a task are dependent; ``"bootstrap"``: a seeded cluster
        (or verdict) bootstrap, percentile intervals.
    level : float, default=0.95
        Confidence level of the reported intervals.
    penalty : float, default=0.0
        Opt-in ridge penalty ``penalty / 2 * sum (s - mean s)^2`` on the log-strengths, which
        makes the estimate finite when some model never lost or never won (a MAP estimate: it
        shrinks ratings towards the mean, and intervals are then approximate).
    n_boot, seed : int
        Bootstrap resamples and seed (``ci="bootstrap"`` only).
    errors : {"raise", "report"}, default="raise"
        ``"report"`` fits the readable rows; rejected rows are counted in the result and can be
        read with :func:`ratings.read_verdicts` (CLI ``--rejected FILE`` writes them).
    columns, winner_map : mapping, optional
        Passed to :func:`ratings.read_verdicts`.
    engine : {"auto", "numba", "numpy"}, default="auto"
        Kernels: numba's compiled ones, or their NumPy twins (tested equal). ``"auto"`` uses
        the twins below 200,000 verdicts, and below 2,000,000 while numba is not loaded in
        this process, where they finish before numba could be (see :mod:`ratings.engine`;
        :func:`ratings.warmup` loads it).
    tol, max_iter : float, int
        Newton stops when the largest step, or the next one as its quadratic convergence
        predicts it, is below ``tol``.

    Returns
    -------
    Ratings

    Raises
    ------
    InvalidVerdictsError
        Unreadable rows or columns (the message names rows and values).
    NonIdentifiableError
        The win graph is not strongly connected and ``penalty == 0``.

    Notes
    -----
    P(i beats j) = sigma(s_i - s_j), a tie is one observation with outcome 1/2, and
    Elo_i = anchor_rating + 400 / ln(10) * (s_i - s_anchor) (Bradley & Terry 1952).

    Examples
    --------
    >>> import pandas as pd, ratings
    >>> log = pd.DataFrame({"model_a": ["x", "y", "z", "x"], "model_b": ["y", "z", "x", "z"],
    ...                     "winner": ["A", "A", "A", "tie"]})
    >>> r = ratings.fit(log, anchor="x=1000")
    >>> round(r.elo["x"], 6)
    1000.0
    """
    return _fit(verdicts, model=model, judge_quality=judge_quality,
                fit_new_judges=fit_new_judges, anchor=anchor, anchor_rating=anchor_rating,
                scope=scope, cluster=cluster, ci=ci, level=level, penalty=penalty,
                n_boot=n_boot, seed=seed, errors=errors, columns=columns,
                winner_map=winner_map, engine=engine, tol=tol, max_iter=max_iter)  # fmt: skip


def _fit(verdicts, *, model, judge_quality, fit_new_judges, anchor, anchor_rating, scope,
         cluster, ci, level, penalty, n_boot, seed, errors, columns, winner_map, engine, tol,
         max_iter) -> Ratings:  # fmt: skip
    if ci not in ("sandwich", "sandwich-z", "model", "bootstrap"):
        raise ValueError(
            f"`ci` must be 'sandwich', 'sandwich-z', 'model' or 'bootstrap'; got {ci!r}."
        )
    if model not in ("bt", "crowd-bt"):
        raise ValueError(f"`model` must be 'bt' or 'crowd-bt'; got {model!r}.")
    if not (np.isfinite(penalty) and penalty >= 0):
        raise ValueError(f"`penalty` must be a finite float >= 0; got {penalty!r}.")
    if model == "crowd-bt" and penalty:
        raise ValueError("`penalty` is only available with model='bt'.")
    if anchor is not None and anchor_rating is None and "=" in str(anchor):
        anchor, anchor_rating = parse_anchor(anchor)
    rating0 = 1000.0 if anchor_rating is None else float(anchor_rating)

    data, n_rejected, scope = load_comparisons(
        verdicts, scope=scope, cluster=cluster, errors=errors, columns=columns,
        winner_map=winner_map, engine=engine,
    )  # fmt: skip
    if anchor is not None and anchor not in data.models:
        raise ValueError(f"Anchor model {anchor!r} is not in the verdicts. "
                         f"{close_matches(anchor, data.models)}")  # fmt: skip
    with blas_threads(data.n_models):
        engine = resolve_engine(engine, data.n_verdicts)  # one engine for every later stage
        rows = data.collapsed(engine=engine)  # one row per (judge, i, j): likelihood, counts
        if penalty == 0.0:
            check_identifiable(rows)
        ref = 0 if anchor is None else int(data.models.get_loc(anchor))
        clustered = data.clusters is not None
        df = None  # clustered ci="sandwich": CR2, degrees of freedom per contrast (inference)
        opts = {"ref": ref, "ci": ci, "clustered": clustered, "engine": engine, "tol": tol,
                "max_iter": max_iter, "n_boot": n_boot, "seed": seed, "rows": rows}  # fmt: skip
        if model == "bt":
            est = _estimate_bt(data, penalty=penalty, **opts)
            if penalty:  # ratings the penalty alone makes finite: open intervals
                from ratings.separation import flag_unbounded, warn_unbounded

                est["unbounded"] = flag_unbounded(rows, est["theta"],
                                                  None if anchor is None else ref, level)
                if est["unbounded"] is not None:
                    warn_unbounded(est["unbounded"], stacklevel=4)
        else:
            fixed = resolve_judge_quality(judge_quality, data.judges, scope=scope,
                                          fit_new_judges=fit_new_judges)  # fmt: skip
            est = _estimate_crowd(data, fixed_eta=fixed, level=level, **opts)
        out = Ratings(
            models=data.models, strength=est["theta"], cov=est["cov"],
            counts=rows.model_counts().copy(),
            ci=ci, cluster=data.cluster_name if clustered else None, n_clusters=data.n_clusters,
            anchor=None, offset=rating0, loglik=-est["nll"], converged=est["converged"],
            n_iter=est["n_iter"], max_grad=est["max_grad"], model=model, level=level,
            penalty=penalty, scope=scope, draws=est["draws"], judges=est["judges"],
            n_rejected=n_rejected, influence=est["influence"], df=df,
            influence_clusters=data.clusters if clustered else None,
            inference=est["inference"], unbounded=est.get("unbounded"),
        )  # fmt: skip
        return out.reanchor(anchor, rating0)


def _bootstrap(data: Comparisons, refit, *, ci: str, clustered: bool, n_boot: int, seed: int):
    if ci != "bootstrap":
        return None

    def safe(sample: Comparisons):
        try:
            check_identifiable(sample.collapsed())
            return refit(sample)
        except NonIdentifiableError:  # no finite estimate in this resample: skipped, counted
            return None

    return bootstrap_draws(data, safe, n_boot=n_boot, seed=seed, clustered=clustered)


def _estimate_bt(data: Comparisons, *, ref, penalty, ci, clustered, engine, tol, max_iter,
                 n_boot, seed, rows) -> dict:  # fmt: skip
    k = kernels(engine, data.n_verdicts)
    res = fit_bt(rows, ref=ref, penalty=penalty, tol=tol, max_iter=max_iter, engine=engine)
    bread = inverse_free(res.hessian, np.delete(np.arange(data.n_models), ref))
    influence = inference = None
    if clustered and ci == "sandwich":  # CR2 with degrees of freedom per contrast
        inference = bt_inference(res.theta, data, ref=ref, penalty=penalty, k=k)
        cov, influence = inference.covariance(), inference.influence()
    elif clustered:  # the influences serve the joint combination of scopes whatever `ci` is
        def row_scores(rows: Comparisons, wi, wj, tt):
            return k.bt_scores(res.theta, rows.ii, rows.jj, wi, wj, tt), None

        cov, influence = cluster_sandwich(bread, data, k=k, row_scores=row_scores)
    elif ci != "model":
        _, score, _, meat = k.bt_row_terms(res.theta, data.ii, data.jj, data.wi, data.wj, data.tt)
        cov = sandwich(bread, data, score, meat, clustered=False, k=k)
    if ci == "model":
        cov = bread

    def refit(sample: Comparisons):
        return fit_bt(sample, ref=ref, penalty=penalty, tol=1e-8, max_iter=max_iter,
                      engine=engine, theta0=res.theta).theta  # fmt: skip

    draws = _bootstrap(data, refit, ci=ci, clustered=clustered, n_boot=n_boot, seed=seed)
    return {"theta": res.theta, "cov": cov, "nll": res.nll, "converged": res.converged,
            "n_iter": res.n_iter, "max_grad": res.max_grad, "draws": draws, "judges": None,
            "influence": influence, "inference": inference}


def _estimate_crowd(data: Comparisons, *, ref, fixed_eta, level, ci, clustered, engine,
                    tol, max_iter, n_boot, seed, rows) -> dict:  # fmt: skip
    res = fit_crowd_bt(rows, ref=ref, fixed_eta=fixed_eta, tol=tol, max_iter=max(max_iter, 200),
                       engine=engine)  # fmt: skip
    m, inference, df = data.n_models, None, None
    if clustered and ci == "sandwich":  # CR2 with degrees of freedom per contrast
        inference = crowd_inference(res, data, k=kernels(engine, data.n_verdicts))
        full, influence = inference.covariance(), inference.influence()
        df = inference.df(np.eye(inference.n_params)[m:])  # each judge's eta
    else:
        full, influence = crowd_covariance_and_influence(
            res, data, ci="model" if ci == "model" else "sandwich", clustered=clustered,
            engine=engine)  # fmt: skip
    influence = None if influence is None else influence[:, :m]

    def refit(sample: Comparisons):
        return fit_crowd_bt(sample, ref=ref, fixed_eta=fixed_eta, tol=1e-8,
                            engine=engine).theta  # fmt: skip

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        draws = _bootstrap(data, refit, ci=ci, clustered=clustered, n_boot=n_boot, seed=seed)
    return {"theta": res.theta, "cov": full[:m, :m], "nll": res.nll, "converged": res.converged,
            "n_iter": res.n_iter, "max_grad": res.max_grad, "draws": draws,
            "judges": judge_table(res, full, data, level, df), "influence": influence,
            "inference": inference}  # fmt: skip
