"""The public entry point: :func:`fit` a verdict log into :class:`~ratings.result.Ratings`."""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Literal

import numpy as np
import pandas as pd

from ratings.api.covariates import fit_covariates
from ratings.api.loading import (
    LoadedLog,
    Source,
    is_counts_source,
    load_comparisons,
    load_log,
    load_with,
    source_columns,
    warn_unclustered,
)
from ratings.api.options import document_fit
from ratings.api.results import labelled
from ratings.api.specs import (
    BT,
    Adjust,
    Bootstrap,
    CIKind,
    CrowdBT,
    FitOptions,
    Read,
    Solver,
    Style,
    options_of,
    parse_anchor,
)
from ratings.core.errors import (
    NonIdentifiableError,
    close_matches,
    option,
)
from ratings.core.memory import check_memory, fit_memory, limit_scope
from ratings.core.threads import one_blas_thread
from ratings.data.comparisons import Comparisons
from ratings.data.soft import check_soft_bootstrap
from ratings.inference import bt_inference
from ratings.inference.builder import build, row_scores_of
from ratings.inference.covariance import ready, start_bread
from ratings.inference.degenerate import fill_collapsed
from ratings.inference.ties import phi_bias
from ratings.kernels.engine import kernels
from ratings.kernels.engine import resolve as resolve_engine
from ratings.models.bt import PairTable, fit_bt
from ratings.models.covariates import pair_built
from ratings.models.crowd.policy import estimate_crowd
from ratings.models.crowd.quality import resolve_judge_quality
from ratings.models.estimate import Estimate, bootstrap_refits
from ratings.models.existence import connected
from ratings.models.families.ties import TieFamily
from ratings.models.firth import fit_firth
from ratings.models.style import check_style_columns, style_columns
from ratings.models.ties import check_identified, fit_ties, remedy_of, tie_family_of, tie_table
from ratings.result import Ratings

__all__ = [
    "CIKind",
    "LoadedLog",
    "Source",
    "check_style_source",
    "fit",
    "fit_with",
    "is_counts_source",
    "load_comparisons",
    "load_log",
    "parse_anchor",
]



def fit(
    verdicts: Source,
    *,
    model: Literal["bt", "crowd-bt"] | BT | CrowdBT = "bt",
    ci: CIKind | Bootstrap = "sandwich",
    anchor: str | tuple[str, float] | Mapping[str, float] | None = None,
    scope: str | None = None,
    cluster: str | None = "auto",
    level: float = 0.95,
    read: Read | None = None,
    adjust: str | Sequence[str] | Adjust | None = None,
    solver: Solver | None = None,
    style: Sequence[str] | Style | None = None,
    **legacy: object,
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
    **legacy
        The flat keywords of earlier releases (``anchor_rating`` and those the list of options
        under Notes names) still work, with a :class:`DeprecationWarning`;
        any other keyword is a ``TypeError``, and so is a flat keyword beside the spec that
        holds it (``ci=ratings.Bootstrap(...)`` with ``n_boot=``).

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
        A bootstrap interval would have zero width while the model-based variance of that
        contrast is not zero: every residual of its verdicts is zero (e.g. a board of ties
        only). ``ci="model"`` or the sandwich give intervals there.
    MemoryLimitError
        The fit would need more memory than ``max_memory``.

    Warns
    -----
    DataWarning
        The sandwich variance of some contrasts is zero while the model-based one is not (a
        board of ties only, a model that only ever tied one opponent): those intervals use the
        model-based variance, flagged in the column ``model_based`` of the tables.

    Notes
    -----
    P(i beats j) = sigma(s_i - s_j), a tie is one observation with outcome 1/2 (or, with
    ``model=ratings.BT(ties=...)``, the outcome of a tie model: :mod:`ratings.models.ties`), and
    Elo_i = anchor_rating + 400 / ln(10) * (s_i - s_anchor) (Bradley & Terry 1952).

    Examples
    --------
    >>> import pandas as pd, ratings
    >>> log = pd.DataFrame({"model_a": ["x", "y", "z", "x"], "model_b": ["y", "z", "x", "z"],
    ...                     "winner": ["A", "A", "A", "tie"]})
    >>> r = ratings.fit(log, anchor="x=1000")
    >>> round(float(r.elo["x"]), 6)
    1000.0
    """
    options = options_of(model=model, ci=ci, anchor=anchor, scope=scope, cluster=cluster,
                         level=level, read=read, adjust=adjust, solver=solver, style=style,
                         legacy=legacy)  # fmt: skip
    return fit_with(verdicts, options)


fit.__doc__ = document_fit(fit.__doc__, list(inspect.signature(fit).parameters))


def fit_with(verdicts: Source, options: FitOptions) -> Ratings:
    """:func:`fit` with its options already checked and resolved (:func:`options_of`): the
    entry of the command line and of per-scope fits, which build the options once."""
    boot, read, solver, style = options.bootstrap, options.read, options.solver, options.style
    model, ci, level, anchor = options.model.name, options.ci, options.level, options.anchor
    bt, crowd = options.bt, options.crowd  # each model's options, or their defaults
    features = style_columns(style.features) if style is not None else []
    if style is not None:
        check_style_source(verdicts, style.features, read.columns, read.format)
    loaded = load_with(verdicts, options, keep=features, as_numbers=features)
    data, scope = loaded.data, loaded.scope
    if bt.soft and ci == "bootstrap":
        check_soft_bootstrap(loaded.frame, clustered=data.clusters is not None)
    if anchor is not None and anchor not in data.models:
        raise ValueError(f"Anchor model {anchor!r} is not in the verdicts. "
                         f"{close_matches(anchor, data.models)}")  # fmt: skip
    if options.cluster == "auto" and data.clusters is None and loaded.frame is not None \
            and ci != "model":  # per verdict by default only: say so
        warn_unclustered(verdicts, scope, stacklevel=3)
    n_params = data.n_models + (len(data.judges) if model == "crowd-bt" else 0)
    check_memory(fit_memory(n_params, n_clusters=data.n_clusters if data.clusters is not None
                            else 0, n_boot=boot.n if ci == "bootstrap" else 0),
                 f"a fit of {data.n_models:,} models", solver.max_memory)  # fmt: skip
    with one_blas_thread(), limit_scope(solver.max_memory):
        if style is not None or options.adjust:  # style features, judge effects as covariates
            return fit_covariates(loaded, options)
        engine = resolve_engine(solver.engine, data.n_verdicts)  # one engine for every stage
        rows = data.collapsed(engine=engine)  # one row per (judge, i, j): likelihood, counts
        penalised = bool(bt.penalty or bt.firth)
        ties, tie = None, tie_family_of(rows, bt.ties)  # a tie family (ratings.models.ties)
        # Bradley-Terry's pair totals, built once: its fit, and the usual case of existence
        # (two models or more, a connected win graph) from their adjacency; the rows'
        # diagnosis otherwise
        table = PairTable(rows) if model == "bt" and tie is None and not bt.firth else None
        if not penalised and not (table is not None and table.m > 1
                                  and connected(table.win_matrix())):  # fmt: skip
            check_identified(rows, bt.ties)
        ref = 0 if anchor is None else int(data.models.get_loc(anchor))
        if model == "bt":
            est, ties = _estimate(data, options, tie, rows=rows, ref=ref, engine=engine,
                                  table=table)  # fmt: skip
            if penalised:  # ratings the penalty alone makes finite: open intervals
                from ratings.models.separation import flag_unbounded, warn_unbounded

                unbounded = flag_unbounded(rows, est.theta, None if anchor is None else ref,
                                           level)  # fmt: skip
                if unbounded is not None:
                    est = replace(est, unbounded=unbounded)
                    warn_unbounded(unbounded, stacklevel=4,
                                   what="Firth's penalty" if bt.firth else "the penalty")
        else:
            quality = resolve_judge_quality(crowd.judge_quality, data.judges, scope=scope,
                                            fit_new_judges=crowd.fit_new_judges,
                                            eta_known=crowd.eta_known)  # fmt: skip
            est = estimate_crowd(data, options, quality, ref=ref, engine=engine)
        model_based = None
        if ci != "model":  # the model-based variance where the sandwich collapsed
            cov, inference, model_based = fill_collapsed(est, data.models, ci, stacklevel=4)
            est = replace(est, cov=cov, inference=inference)
        plain = model == "bt" and tie is None and not (bt.soft or penalised)
        return labelled(est, loaded, options, tie, model_based=model_based, ties=ties,
                        # refits (fragility) redo this maximum likelihood fit
                        source=loaded if plain else None)


def check_style_source(verdicts: Source, style: tuple[str, ...], columns=None,
                       format: object = None) -> None:  # fmt: skip
    """Name the style columns ``style`` reads that are missing from ``verdicts`` (a frame's or
    a file's header, ``columns`` renaming them) before reading it."""
    have = source_columns(verdicts, format)
    if have is not None:
        rename = dict(columns or {})
        check_style_columns([rename.get(str(c), c) for c in have], style)


def _estimate(data: Comparisons, options: FitOptions, tie: TieFamily | None, *, rows, ref: int,
              engine: str, table: PairTable | None = None,
              ) -> tuple[Estimate, pd.DataFrame | None]:  # fmt: skip
    """One estimator for Bradley-Terry and the tie families (``tie``, None for Bradley-Terry),
    as the fit's checked ``options`` say: the fit (the collapsed-counts fast path of
    Bradley-Terry, with its penalty or Firth's reduction; a tie family's parameter as parameter
    M), the bread (inverse information on the free parameters), the interval kind's covariance
    (:func:`ratings.inference.builder.build` with the verdicts' and clusters' scores and the CR2
    inference), the seeded bootstrap refits and the strengths' :class:`Estimate`, with the table
    of the tie model (:func:`ratings.models.ties.tie_table`: None for half wins); ``table``:
    Bradley-Terry's :class:`~ratings.models.bt.PairTable` of ``rows`` when the caller built it."""
    ci, clustered, solver, bt = options.ci, data.clusters is not None, options.solver, options.bt
    k, m = kernels(engine, data.n_verdicts), data.n_models
    if tie is not None:  # the tie parameter after the strengths (parameter M)
        res = fit_ties(rows, tie, ref=ref, tol=solver.tol, max_iter=solver.max_iter, engine=engine)

        def refit(sample: Comparisons):
            return fit_ties(sample.collapsed(), tie, ref=ref, tol=1e-8, max_iter=solver.max_iter,
                            engine=engine, x0=res.params).params  # fmt: skip

        built = pair_built(res, data, ci, clustered=clustered, family=tie, engine=engine,
                           remedy=remedy_of(tie))  # fmt: skip
    else:
        estimator = fit_firth if bt.firth else partial(fit_bt, penalty=bt.penalty)
        res = estimator(rows, ref=ref, tol=solver.tol, max_iter=solver.max_iter, engine=engine,
                        **({} if table is None else {"table": table}))  # fmt: skip

        def row_scores(rows: Comparisons, wi, wj, tt):
            return k.bt_scores(res.theta, rows.ii, rows.jj, wi, wj, tt), None

        def verdict_meat():  # the fit's pairs (the same totals as data's), built once
            return (res.table or PairTable(data)).meat(res.theta)

        def refit(sample: Comparisons):
            return estimator(sample, ref=ref, tol=1e-8, max_iter=solver.max_iter, engine=engine,
                             theta0=res.theta).theta  # fmt: skip

        # the bread on the pool beside the passes that do not need it (the meat, the CR2 rows)
        bread = start_bread(res.hessian, np.delete(np.arange(m), ref))
        try:
            built = build(bread, ci, row_scores_of(data, m, k, row_scores, verdict_meat),
                          n_clusters=data.n_clusters if clustered else None,
                          cr2=lambda: bt_inference(res.theta, data, ref=ref, k=k, bread=bread,
                                                   df_ahead=True),
                          cluster_name=data.cluster_name)  # fmt: skip
        except Exception:
            try:  # a singular bread is reported first, whatever else failed beside it
                ready(bread)
            except np.linalg.LinAlgError:
                raise NonIdentifiableError(
                    "The information matrix is singular at the estimate (numerically: some "
                    "ratings are so far apart that their verdicts carry no information), so no "
                    "interval can be computed. Add verdicts between the extreme models, or pass "
                    f"{option('penalty')}.") from None  # fmt: skip
            raise
    bread = built.bread
    draws = bootstrap_refits(data, refit, ci=ci, clustered=clustered, n_boot=options.bootstrap.n,
                             seed=options.bootstrap.seed, always_finite=bt.firth)  # fmt: skip
    bias = 0.0 if draws is not None or tie is None else phi_bias(
        tie.probabilities, res.theta, res.phi, rows, bread)  # fmt: skip
    tie_tab = tie_table(replace(res, cov=built.cov, inference=built.inference) if tie else None,
                        bt.ties, tie, level=options.level, draws=draws, bias=bias, stacklevel=4)
    est = Estimate.of(res, built, model_cov=bread[:m, :m],
                      draws=None if draws is None else draws[:, :m])  # fmt: skip
    return est, tie_tab
