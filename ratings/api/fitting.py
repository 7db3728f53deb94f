"""The public entry point: :func:`fit` a verdict log into :class:`~ratings.result.Ratings`."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Literal

import numpy as np
import pandas as pd

from ratings.api.adjust import check_adjust_options, fit_adjusted, parse_adjust
from ratings.api.loading import (
    LoadedLog,
    Source,
    is_counts_source,
    load_comparisons,
    load_log,
)
from ratings.api.style import check_style_options, fit_styled, parse_style, style_columns
from ratings.core.bounds import MAX_ANCHOR_RATING, MAX_PENALTY, check_number
from ratings.core.errors import (
    ConvergenceWarning,
    DegenerateBoardError,
    NonIdentifiableError,
    close_matches,
    option,
)
from ratings.core.memory import MaxMemory, check_memory, fit_memory, parse_size
from ratings.core.threads import one_blas_thread
from ratings.data.comparisons import Comparisons
from ratings.data.slots import Families
from ratings.inference import bt_inference, crowd_inference
from ratings.inference.covariance import (
    bootstrap_draws,
    cluster_sandwich,
    collapsed_contrasts,
    inverse_free,
    sandwich,
)
from ratings.kernels.engine import Engine, kernels
from ratings.kernels.engine import resolve as resolve_engine
from ratings.models.bt import fit_bt
from ratings.models.crowd.likelihood import (
    crowd_covariance_and_influence,
    fit_crowd_bt,
    fit_crowd_default,
    reused_eta_factor,
)
from ratings.models.crowd.onejudge import single_judge, widened
from ratings.models.crowd.prior import CrowdSummary, PriorArg, check_prior
from ratings.models.crowd.quality import JudgeQuality, ResolvedQuality, resolve_judge_quality
from ratings.models.crowd.report import (
    coin_flip_test,
    judge_table,
    scale_identified,
    warn_weak_judges,
)
from ratings.models.existence import check_identifiable
from ratings.models.firth import check_firth_option, fit_firth
from ratings.result import Ratings, check_level

__all__ = [
    "CIKind",
    "LoadedLog",
    "Source",
    "check_fit_options",
    "fit",
    "is_counts_source",
    "load_comparisons",
    "load_log",
    "parse_anchor",
]

CIKind = Literal["sandwich", "sandwich-z", "model", "bootstrap"]


def parse_anchor(text: str) -> tuple[str, float]:
    """Parse ``"NAME=RATING"`` (the last ``=`` separates; the name may contain ``=``)."""
    name, sep, value = str(text).rpartition("=")
    try:
        rating = float(value)
    except ValueError:
        rating = float("nan")
    if not sep or not name.strip() or not np.isfinite(rating):
        raise ValueError(f"{option('anchor')} must look like 'NAME=RATING', e.g. 'GPT-5.5 "
                         f"(medium)=1000'; got {text!r}.")  # fmt: skip
    return name.strip(), check_number(rating, "anchor", minimum=-MAX_ANCHOR_RATING,
                                      maximum=MAX_ANCHOR_RATING)  # fmt: skip


def fit(
    verdicts: Source,
    *,
    model: Literal["bt", "crowd-bt"] = "bt",
    judge_quality: JudgeQuality = None,
    fit_new_judges: bool = False,
    eta_known: bool = False,
    prior: PriorArg = "default",
    anchor: str | None = None,
    anchor_rating: float | None = None,
    scope: str | None = None,
    cluster: str | None = "auto",
    ci: CIKind = "sandwich",
    level: float = 0.95,
    penalty: float = 0.0,
    firth: bool = False,
    n_boot: int = 1000,
    seed: int = 0,
    errors: Literal["raise", "report"] = "raise",
    columns: Mapping[str, str] | None = None,
    winner_map: Mapping[object, str] | None = None,
    engine: Engine = "auto",
    tol: float = 1e-10,
    max_iter: int = 100,
    adjust: str | Sequence[str] | None = None,
    families: Families = None,
    max_memory: MaxMemory = None,
    style: str | Sequence[str] | None = None,
    style_transform: str = "normalized",
    style_ridge: float = 0.0,
) -> Ratings:
    """Fit Bradley-Terry Elo ratings with confidence intervals.

    Parameters
    ----------
    verdicts : path, DataFrame, VerdictLog or Comparisons
        A verdict log (CSV, Parquet or JSON Lines path, or a DataFrame; see
        :func:`ratings.read_verdicts`); a pre-aggregated counts table (path or DataFrame with
        ``model_a, model_b, wins_a, wins_b, ties`` and optionally ``judge``, ``task_id``,
        ``scope``; see :func:`ratings.data.comparisons.from_counts`); or
        :class:`~ratings.data.comparisons.Comparisons`.
    model : {"bt", "crowd-bt"}, default="bt"
        Bradley-Terry, or Crowd-BT with one quality eta in [1/2, 1] per judge (see
        :mod:`ratings.models.crowd.likelihood`); judge ``"deterministic"`` always has eta = 1.
    judge_quality : path, Ratings, DataFrame or mapping, optional
        Crowd-BT only: fix eta from an earlier fit (a JSON file written by
        :func:`ratings.scopes.judge_files.save_judge_quality`, a Crowd-BT fit, a judges table, or
        ``{judge: eta}``). A file (format ``/2``) or a fit carries the etas' covariance, which
        the strengths' intervals include (a two-step variance, see
        :func:`ratings.models.crowd.likelihood.reused_eta_factor`); tables, mappings and older
        files give etas
        treated as known.
    fit_new_judges : bool, default=False
        With ``judge_quality``: estimate eta for judges missing from it instead of raising.
    eta_known : bool, default=False
        With ``judge_quality``: treat its etas as known (their uncertainty is left out of the
        intervals, which are then too narrow unless the etas were fitted on far more verdicts).
    prior : "default", CrowdPrior or None, default="default"
        Crowd-BT only: the weak priors of :mod:`ratings.models.crowd.prior` (Beta on judge quality,
        Gaussian on strengths), fitted as a penalised likelihood; they keep every eta inside
        (1/2, 1) and every strength finite, and their effect shrinks like 1/N. ``None`` fits
        the plain maximum-likelihood estimate, which may not exist or sit on eta = 1.
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
        Robust sandwich H^-1 B H^-1; clustered, the bias-reduced CR2 sandwich with a Student t
        quantile whose Satterthwaite degrees of freedom belong to each contrast (the ``df``
        column; :mod:`ratings.inference`), for Bradley-Terry and Crowd-BT alike (Crowd-BT:
        ``docs/crowd.md``); per verdict, HC0 with a normal quantile. ``"sandwich-z"`` is the
        textbook cluster sandwich (CR1, factor G/(G-1)) with a normal quantile.
        ``"model"``: model-based H^-1, which under-covers when verdicts on a task are dependent;
        ``"bootstrap"``: a seeded cluster (or verdict) bootstrap, percentile intervals.
    level : float, default=0.95
        Confidence level of the reported intervals.
    penalty : float, default=0.0
        Opt-in ridge penalty ``penalty / 2 * sum (s - mean s)^2`` on the log-strengths, which
        makes the estimate finite when some model never lost or never won (a MAP estimate: it
        shrinks ratings towards the mean, and intervals are then approximate).
    firth : bool, default=False
        Bradley-Terry only: Firth's bias-reduced estimate (:mod:`ratings.models.firth`), which is
        finite on every board and shrinks the maximum likelihood's O(1/n) bias away; intervals
        as for the plain fit at that estimate. Models outside the anchor's strongly connected
        group (e.g. one that never lost) get open intervals and a
        :class:`~ratings.core.errors.PenaltyOnlyWarning`, as with ``penalty``. Not with ``penalty``,
        ``adjust`` or Crowd-BT.
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
        this process, where they finish before numba could be (see :mod:`ratings.kernels.engine`;
        :func:`ratings.warmup` loads it).
    tol, max_iter : float, int
        Newton stops when the largest step, or the next one as its quadratic convergence
        predicts it, is below ``tol``.
    adjust : str or list of str, optional
        Judge effects to estimate as nuisance parameters: ``"position"`` (each judge's bias
        towards slot A) and/or ``"self-preference"`` (towards models of its own family; needs
        ``families``), e.g. ``"position,self-preference"``. Ratings are then corrected for
        them and intervals include their uncertainty; ``ratings.models.judge_effects`` holds the
        effects. Not with ``ci="bootstrap"`` or a penalty. See :mod:`ratings.api.adjust` for when
        adjusting is appropriate and :func:`ratings.audit.report` for the report.
    families : path, DataFrame or mapping, optional
        Family of each model and judge (a CSV with columns ``name,family``); names not listed
        have none.
    max_memory : int or str, optional
        Stop before the fit's dense model x model matrices would need more memory than this
        (bytes, or a size such as ``"8GB"``); default half the memory available (see
        :mod:`ratings.core.memory`). The error says how much the fit needs.
    style : str or list of str, optional
        Style control: feature names (e.g. ``["tokens", "headers"]``) whose per-side columns
        ``NAME_a`` and ``NAME_b`` the verdict log carries. Each feature enters the linear
        predictor as (a - b) / (a + b) scaled to unit root-mean-square with one shared
        coefficient; the ratings are then those of answers of equal style, with intervals
        joint with the coefficients (``Ratings.style``; ``rank_change`` in
        :meth:`~ratings.result.Ratings.to_frame`). See :mod:`ratings.models.style`.
    style_transform : {"normalized", "diff", "ratio", "log-ratio"}, default="normalized"
        How a feature's two sides become one number (see :mod:`ratings.models.style`).
    style_ridge : float, default=0.0
        Optional ridge ``style_ridge / 2 |beta|^2`` on the style coefficients only (stated in
        ``Ratings.style.attrs["ridge"]``).

    Returns
    -------
    Ratings

    Raises
    ------
    InvalidVerdictsError
        Unreadable rows or columns (the message names rows and values).
    NonIdentifiableError
        The win graph is not strongly connected and ``penalty == 0``.
    DegenerateBoardError
        A robust (sandwich or bootstrap) interval would have zero width while the model-based
        variance of that contrast is not zero: every residual of its verdicts is zero (e.g. a
        board of ties only). ``ci="model"`` gives the model-based intervals.
    MemoryLimitError
        The fit would need more memory than ``max_memory``.

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
                fit_new_judges=fit_new_judges, eta_known=eta_known, prior=prior, anchor=anchor,
                anchor_rating=anchor_rating, scope=scope, cluster=cluster, ci=ci, level=level,
                penalty=penalty, firth=firth, n_boot=n_boot, seed=seed, errors=errors,
                columns=columns, winner_map=winner_map, engine=engine, tol=tol, max_iter=max_iter,
                adjust=adjust, families=families, max_memory=max_memory, style=style,
                style_transform=style_transform, style_ridge=style_ridge)  # fmt: skip


def check_fit_options(*, ci: str = "sandwich", model: str = "bt", penalty: float = 0.0,
                      firth: bool = False, level: float = 0.95, n_boot: int = 1000,
                      seed: int = 0, tol: float = 1e-10, max_iter: int = 100,
                      anchor: str | None = None, anchor_rating: float | None = None,
                      max_memory: MaxMemory = None, **_: object) -> None:  # fmt: skip
    """Check :func:`fit`'s options before any data is read: unknown choices, and numbers that
    are not finite or out of range, are refused by name (other keyword arguments are ignored).
    """
    if ci not in ("sandwich", "sandwich-z", "model", "bootstrap"):
        raise ValueError(
            f"{option('ci')} must be 'sandwich', 'sandwich-z', 'model' or 'bootstrap'; got {ci!r}."
        )
    if model not in ("bt", "crowd-bt"):
        raise ValueError(f"{option('model')} must be 'bt' or 'crowd-bt'; got {model!r}.")
    check_number(penalty, "penalty", minimum=0.0, maximum=MAX_PENALTY)
    if model == "crowd-bt" and penalty:
        raise ValueError(f"{option('penalty')} is only available with {option('model', 'bt')}.")
    check_firth_option(firth, model=model, penalty=penalty)
    check_level(level)
    check_number(n_boot, "n_boot", minimum=2, maximum=10_000_000, integer=True)
    check_number(seed, "seed", minimum=0, integer=True)
    check_number(tol, "tol", above=0.0, maximum=1.0)
    check_number(max_iter, "max_iter", minimum=1, integer=True)
    if anchor is not None and anchor_rating is None and "=" in str(anchor):
        parse_anchor(anchor)
    if anchor_rating is not None:
        check_number(anchor_rating, "anchor_rating", minimum=-MAX_ANCHOR_RATING,
                     maximum=MAX_ANCHOR_RATING)  # fmt: skip
    parse_size(max_memory)


def _fit(verdicts, *, model, judge_quality, fit_new_judges, eta_known, prior, anchor,
         anchor_rating, scope,
         cluster, ci, level, penalty, firth, n_boot, seed, errors, columns, winner_map, engine,
         tol, max_iter, adjust, families, max_memory, style=None, style_transform="normalized",
         style_ridge=0.0) -> Ratings:  # fmt: skip
    check_fit_options(ci=ci, model=model, penalty=penalty, firth=firth, level=level,
                      n_boot=n_boot, seed=seed, tol=tol, max_iter=max_iter, anchor=anchor,
                      anchor_rating=anchor_rating, max_memory=max_memory)  # fmt: skip
    prior = check_prior(prior)
    if anchor is not None and anchor_rating is None and "=" in str(anchor):
        anchor, anchor_rating = parse_anchor(anchor)
    rating0 = 1000.0 if anchor_rating is None else check_number(
        anchor_rating, "anchor_rating", minimum=-MAX_ANCHOR_RATING, maximum=MAX_ANCHOR_RATING)
    adjust = parse_adjust(adjust)
    if adjust:  # before reading: option errors first
        check_adjust_options(adjust, families, ci=ci, penalty=penalty)
        check_firth_option(firth, adjust=adjust)

    style = parse_style(style)
    if style:
        check_style_options(style, ci=ci, penalty=penalty, firth=firth, adjust=adjust,
                            ridge=style_ridge)  # fmt: skip
        _check_style_source(verdicts, style, columns)
    loaded = load_log(verdicts, scope=scope, cluster=cluster, errors=errors, columns=columns,
                      winner_map=winner_map, engine=engine,
                      keep=style_columns(style))  # fmt: skip
    data, n_rejected, scope = loaded.data, loaded.n_rejected, loaded.scope
    if anchor is not None and anchor not in data.models:
        raise ValueError(f"Anchor model {anchor!r} is not in the verdicts. "
                         f"{close_matches(anchor, data.models)}")  # fmt: skip
    n_params = data.n_models + (len(data.judges) if model == "crowd-bt" else 0)
    check_memory(fit_memory(n_params, n_clusters=data.n_clusters if data.clusters is not None
                            else 0, n_boot=n_boot if ci == "bootstrap" else 0),
                 f"a fit of {data.n_models:,} models", max_memory)  # fmt: skip
    with one_blas_thread():
        if style:  # style features as covariates (ratings.api.style)
            return fit_styled(loaded, style=style, transform=style_transform, ridge=style_ridge,
                              model=model, anchor=anchor, rating=rating0, ci=ci, level=level,
                              engine=engine, tol=tol, max_iter=max_iter)  # fmt: skip
        if adjust:  # judge effects as nuisance parameters (ratings.api.adjust)
            return fit_adjusted(loaded, adjust=adjust, families=families, model=model,
                                judge_quality=judge_quality, fit_new_judges=fit_new_judges,
                                anchor=anchor, rating=rating0, ci=ci, level=level,
                                engine=engine, tol=tol, max_iter=max_iter)  # fmt: skip
        engine = resolve_engine(engine, data.n_verdicts)  # one engine for every later stage
        rows = data.collapsed(engine=engine)  # one row per (judge, i, j): likelihood, counts
        if penalty == 0.0 and not firth:
            check_identifiable(rows)
        ref = 0 if anchor is None else int(data.models.get_loc(anchor))
        clustered = data.clusters is not None
        opts = {"ref": ref, "ci": ci, "clustered": clustered, "engine": engine, "tol": tol,
                "max_iter": max_iter, "n_boot": n_boot, "seed": seed, "rows": rows}  # fmt: skip
        if model == "bt":
            est = _estimate_bt(data, penalty=penalty, firth=firth, **opts)
            if penalty or firth:  # ratings the penalty alone makes finite: open intervals
                from ratings.models.separation import flag_unbounded, warn_unbounded

                est["unbounded"] = flag_unbounded(rows, est["theta"],
                                                  None if anchor is None else ref, level)
                if est["unbounded"] is not None:
                    warn_unbounded(est["unbounded"], stacklevel=4,
                                   what="Firth's penalty" if firth else "the penalty")
        else:
            quality = resolve_judge_quality(judge_quality, data.judges, scope=scope,
                                            fit_new_judges=fit_new_judges,
                                            eta_known=eta_known)  # fmt: skip
            est = _estimate_crowd(data, quality=quality, prior=prior, level=level, **opts)
        if ci != "model":
            _check_not_collapsed(est, data.models, ci)
        out = Ratings(
            models=data.models, strength=est["theta"], cov=est["cov"],
            counts=rows.model_counts().copy(),
            ci=ci, cluster=data.cluster_name if clustered else None, n_clusters=data.n_clusters,
            anchor=None, offset=rating0, loglik=-est["nll"], converged=est["converged"],
            n_iter=est["n_iter"], max_grad=est["max_grad"], model=model, level=level,
            penalty=penalty, firth=firth, scope=scope, draws=est["draws"], judges=est["judges"],
            n_rejected=n_rejected, influence=est["influence"],
            influence_clusters=data.clusters if clustered else None, crowd=est.get("crowd"),
            inference=est.get("inference"), unbounded=est.get("unbounded"),
        )  # fmt: skip
        return out.reanchor(anchor, rating0)


def _check_style_source(verdicts, style: tuple[str, ...], columns) -> None:
    """Name missing style columns before reading (a DataFrame's or a file's header)."""
    import os

    from ratings.api.style import check_style_columns
    from ratings.io import peek_columns

    if isinstance(verdicts, pd.DataFrame):
        have = list(verdicts.columns)
    elif isinstance(verdicts, str | os.PathLike) and os.path.isfile(verdicts):
        have = peek_columns(verdicts)
    else:
        return
    rename = dict(columns or {})
    check_style_columns([rename.get(str(c), c) for c in have], style)


def _bootstrap(data: Comparisons, refit, *, ci: str, clustered: bool, n_boot: int, seed: int,
               always_finite: bool = False):
    if ci != "bootstrap":
        return None

    def safe(sample: Comparisons):
        try:
            if not always_finite:
                check_identifiable(sample.collapsed())
            return refit(sample)
        except NonIdentifiableError:  # no finite estimate in this resample: skipped, counted
            return None

    return bootstrap_draws(data, safe, n_boot=n_boot, seed=seed, clustered=clustered)


def _estimate_bt(data: Comparisons, *, ref, penalty, firth, ci, clustered, engine, tol,
                 max_iter, n_boot, seed, rows) -> dict:  # fmt: skip
    k = kernels(engine, data.n_verdicts)
    estimator = fit_firth if firth else partial(fit_bt, penalty=penalty)
    res = estimator(rows, ref=ref, tol=tol, max_iter=max_iter, engine=engine)
    try:
        bread = inverse_free(res.hessian, np.delete(np.arange(data.n_models), ref))
    except np.linalg.LinAlgError:
        raise NonIdentifiableError(
            "The information matrix is singular at the estimate (numerically: some ratings "
            "are so far apart that their verdicts carry no information), so no interval can be "
            f"computed. Add verdicts between the extreme models, or pass {option('penalty')}."
        ) from None
    influence = inference = None
    if clustered and ci == "sandwich":  # CR2 with degrees of freedom per contrast
        inference = bt_inference(res.theta, data, ref=ref, k=k, bread=bread)
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
        return estimator(sample, ref=ref, tol=1e-8, max_iter=max_iter, engine=engine,
                         theta0=res.theta).theta  # fmt: skip

    draws = _bootstrap(data, refit, ci=ci, clustered=clustered, n_boot=n_boot, seed=seed,
                       always_finite=firth)
    return {"theta": res.theta, "cov": cov, "nll": res.nll, "converged": res.converged,
            "n_iter": res.n_iter, "max_grad": res.max_grad, "draws": draws, "judges": None,
            "influence": influence, "model_cov": bread,
            "inference": inference}


def _estimate_crowd(data: Comparisons, *, ref, quality: ResolvedQuality, prior, level, ci,
                    clustered, engine, tol, max_iter, n_boot, seed, rows) -> dict:  # fmt: skip
    m = data.n_models
    names = pd.Index(data.judges)
    res = fit_crowd_default(data, clustered=clustered, level=level, prior=prior, ref=ref,
                            fixed_eta=quality.eta, tol=tol, max_iter=max(max_iter, 200),
                            engine=engine)  # fmt: skip
    factor = None if quality.cov is None else reused_eta_factor(res, quality.cov, names)
    inference, full, influence, eta_full, eta_df, lik = _crowd_intervals(
        res, data, ci=ci, clustered=clustered, engine=engine, factor=factor, level=level)
    influence = None if influence is None else influence[:, :m]
    eta_full = full if eta_full is None else eta_full
    eta_cov = pd.DataFrame(eta_full[m:, m:], index=names, columns=names)
    reused = None
    if quality.cov is not None:  # reused etas: their covariance is the file's (two-step)
        eta_cov.loc[quality.cov.index, quality.cov.columns] = quality.cov.to_numpy()
        reused = quality.table
    table = judge_table(res, eta_full, data, level, eta_df, reused=reused)
    if inference is not None and res.prior is not None:
        table = _judges_alone(res, data, engine, level, table, reused, lik)
    table = coin_flip_test(table, res.nll, m, level)
    warn_weak_judges(table, stacklevel=5)
    open_intervals = not (scale_identified(table) and np.isfinite(full[:m, :m]).all())
    cov = full[:m, :m]
    if open_intervals:  # the spread of the ratings is not identified: no finite interval
        cov = np.where(np.eye(m, dtype=bool), np.inf, 0.0)
        cov[ref, ref] = 0.0
        inference = None

    def refit(sample: Comparisons):
        return fit_crowd_bt(sample, ref=ref, fixed_eta=_drawn(quality, draws_rng),
                            prior=res.prior, tol=1e-8, engine=engine).theta  # fmt: skip

    draws_rng = np.random.default_rng([seed, 1])  # reused etas drawn per resample
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        draws = _bootstrap(data, refit, ci=ci, clustered=clustered, n_boot=n_boot, seed=seed)
    bound = () if res.plain_on_bound is None or not res.plain_found else tuple(
        str(j) for j in names[res.plain_on_bound])  # fmt: skip
    crowd = CrowdSummary(eta_cov, prior, None if factor is None else factor[:, :m],
                         open_intervals, res.prior is not None, bound, res.plain_found,
                         res.prior_shift)  # fmt: skip
    return {"theta": res.theta, "cov": cov, "nll": res.nll, "converged": res.converged,
            "n_iter": res.n_iter, "max_grad": res.max_grad, "draws": draws, "judges": table,
            "influence": influence, "crowd": crowd, "inference": inference,
            "model_cov": lambda: inverse_free(res.information, res.free)[:m, :m]}  # fmt: skip



def _crowd_intervals(res, data: Comparisons, *, ci, clustered, engine, factor,
                     level: float = 0.95) -> tuple:  # fmt: skip
    """``(inference, cov, influence, eta_cov, eta_df, likelihood_only)`` of a Crowd-BT fit over
    (theta, eta): CR2 for a clustered ``ci="sandwich"`` (``inference`` None and infinite
    variances when the information is singular), else the CR1 / HC0 sandwich or the
    model-based covariance; ``factor`` is the two-step term of reused etas;
    ``likelihood_only`` the CR2 inference without eta's prior in the bread where it was built
    (see :func:`_crowd_cr2`), else None."""
    if clustered and ci == "sandwich":  # CR2 with degrees of freedom per contrast
        inference, eta_full, eta_df, lik = _crowd_cr2(res, data, engine, factor, level)
        if inference is None:
            from ratings.models.crowd.likelihood import open_covariance

            full = open_covariance(res)
            return None, full, None, full, None, None
        return inference, inference.covariance(), inference.influence(), eta_full, eta_df, lik
    full, influence = crowd_covariance_and_influence(
        res, data, ci="model" if ci == "model" else "sandwich", clustered=clustered,
        engine=engine)  # fmt: skip
    if factor is not None:
        full = full + factor.T @ factor
    return None, full, influence, full, None, None


def _crowd_cr2(res, data: Comparisons, engine, factor, level: float = 0.95):
    """CR2 of a Crowd-BT fit: the inference (bread with the prior's curvature: the sandwich of
    the posterior mode, plus the two-step term ``factor`` of reused etas, widened by eta's
    profile likelihood for a one-judge posterior mode, :mod:`ratings.models.crowd.onejudge`), its
    covariance, the judges' df and, for one judge, the inference before widening (its bread
    has no eta prior: what :func:`_judges_alone` reports); ``(None, None, None, None)`` when
    the verdicts cannot tell judge quality from the spread of the ratings (the likelihood's
    observed or expected information is not positive definite: open intervals). See
    :func:`ratings.inference.crowd_inference`."""
    from ratings.models.crowd.likelihood import likelihood_identified

    if not likelihood_identified(res):
        return None, None, None, None
    k = kernels(engine, data.n_verdicts)
    one = single_judge(res, data) is not None  # bread without eta's prior: crowd_onejudge
    inference = crowd_inference(res, data, k=k, prior_information=not one)
    if inference is None:
        return None, None, None, None
    m = data.n_models
    eta_df = inference.df(np.eye(m + len(data.judges))[m:])
    lik = inference if one else None
    inference = widened(inference, res, data, factor=factor, level=level, engine=engine)
    return inference, inference.covariance(), eta_df, lik


def _judges_alone(res, data: Comparisons, engine, level: float, table: pd.DataFrame,
                  reused, lik=None) -> pd.DataFrame:  # fmt: skip
    """The judges table of a posterior-mode fit from the verdicts alone: each estimated eta's
    CR2 interval with the likelihood's information (the strengths' prior only, not the one on
    eta) in the bread, and ``uninformative`` where it or the CR1 interval (observed
    information, normal quantile) reaches 1/2 (see
    :func:`ratings.models.crowd.report.scale_identified`). ``table``: the table of the fit's own
    covariance, kept where that CR2 has no positive definite bread; ``lik``: that CR2 inference
    where the fit already built it (one judge), else it is built here."""
    from ratings.models.crowd.likelihood import crowd_covariance

    m = data.n_models
    if lik is None:
        lik = crowd_inference(res, data, k=kernels(engine, data.n_verdicts),
                              prior_information=False)  # fmt: skip
    if lik is not None:
        eta_df = lik.df(np.eye(m + len(data.judges))[m:])
        table = judge_table(res, lik.covariance(), data, level, eta_df, reused=reused)
    else:
        table = table.assign(uninformative=table["status"] == "estimated")
    cr1 = crowd_covariance(res, data, ci="sandwich", clustered=True, engine=engine)
    flips = np.asarray(judge_table(res, cr1, data, level)["uninformative"])
    return table.assign(uninformative=np.asarray(table["uninformative"]) | flips)


def _check_not_collapsed(est: dict, models: pd.Index, ci: str) -> None:
    """Refuse robust intervals that collapse to zero width where the model-based variance says
    the contrast is barely known (see :func:`ratings.inference.covariance.collapsed_contrasts`)."""
    draws = est["draws"]
    robust = est["cov"] if draws is None else np.atleast_2d(np.cov(draws, rowvar=False))
    if not np.isfinite(robust).all():  # open intervals (Crowd-BT's unidentified scale)
        return
    model_cov = est["model_cov"]
    if callable(model_cov):  # Crowd-BT: the model-based covariance costs one more inversion
        sd = np.sort(np.sqrt(np.clip(np.diag(robust), 0.0, None)))  # the reference's is 0
        # Structural collapses (zero residuals) leave two robust SDs equal to rounding.
        if sd[-1] > 0 and np.diff(sd).min(initial=np.inf) > 1e-6 * sd[-1]:
            return
        model_cov = model_cov()
    pairs = collapsed_contrasts(robust, model_cov)
    if len(pairs) == 0:
        return
    named = [(str(models[i]), str(models[j])) for i, j in pairs]
    kind = "bootstrap draws do not vary" if draws is not None else "sandwich variance is zero"
    shown = ", ".join(f"{a!r} - {b!r}" for a, b in named[:5])
    raise DegenerateBoardError(
        f"The {ci} interval of {len(named)} rating difference(s) would have zero width ({shown}"
        f"{', ...' if len(named) > 5 else ''}): the {kind} there while the model-based variance "
        "is not, because every residual of their verdicts is zero (e.g. a board of ties only, "
        "or a model that only ever tied one opponent). Such an interval would claim certainty "
        f"the verdicts do not give. Use model-based intervals ({option('ci', 'model')}), or "
        "add decisive verdicts for these models.", pairs=named)  # fmt: skip


def _drawn(quality: ResolvedQuality, rng: np.random.Generator) -> dict[str, float]:
    """Reused etas for one bootstrap resample: drawn from N(eta, their covariance), clipped to
    [1/2, 1] (a parametric bootstrap of the first step); as given without a covariance."""
    if quality.cov is None or not len(quality.cov):
        return quality.eta
    names = list(quality.cov.index)
    mean = np.array([quality.eta[j] for j in names])
    v = quality.cov.to_numpy()
    vals, vecs = np.linalg.eigh((v + v.T) / 2.0)
    draw = mean + (vecs * np.sqrt(np.clip(vals, 0.0, None))) @ rng.standard_normal(len(names))
    return quality.eta | dict(zip(names, np.clip(draw, 0.5, 1.0).tolist(), strict=True))
