"""The frozen, labelled result of a rating fit."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, partial
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.arrays import frozen, readonly_copy
from ratings.core.bounds import check_level
from ratings.core.deprecation import warn_deprecated
from ratings.core.errors import close_matches
from ratings.core.hooks import fragility_analysis, html_renderer, register_fragility, register_html
from ratings.core.schema import ELO_SCALE
from ratings.core.tdist import critical_values
from ratings.core.threads import one_blas_thread
from ratings.inference import ClusterInference, StackedInference, reference_contrasts
from ratings.inference.builder import OnRequest

if TYPE_CHECKING:
    from ratings.models.crowd.prior import CrowdSummary

__all__ = [
    "CI_DESCRIPTIONS",
    "ELO_SCALE",
    "MODEL_NAMES",
    "Combination",
    "FitInfo",
    "JudgeEffects",
    "Placement",
    "Ratings",
    "Uncertainty",
    "check_level",
    "format_table",
    "register_fragility",
    "register_html",
    "style_note",
    "tie_note",
]


MODEL_NAMES = {"bt": "Bradley-Terry", "crowd-bt": "Crowd-BT", "combined": "combined headline",
               "davidson": "Bradley-Terry, Davidson ties",
               "rao-kupper": "Bradley-Terry, Rao-Kupper ties",
               "bt-soft": "Bradley-Terry, soft outcomes (quasi-likelihood)"}

CI_DESCRIPTIONS = {
    "sandwich": "robust sandwich H^-1 B H^-1",
    "cr2": "cluster-robust CR2 sandwich, Satterthwaite df per contrast (column df)",
    "cr1": "cluster-robust CR1 sandwich H^-1 B H^-1 (factor G/(G-1))",
    "sandwich-z": "robust sandwich H^-1 B H^-1 (normal quantile)",
    "model": "model-based inverse Hessian H^-1",
    "bootstrap": "bootstrap percentile",
}


def style_note(style: pd.DataFrame | None, *, long: bool = True) -> str:
    """What a style-controlled fit controls for, to follow the model's name: ``", style-controlled:
    tokens, headers"`` (``long=False``: ``" (style: tokens, headers)"``, the ``method`` column's
    spelling); empty without style control."""
    if style is None or "feature" not in style:
        return ""
    names = ", ".join(map(str, style["feature"]))
    return f", style-controlled: {names}" if long else f" (style: {names})"


def _expit(x: float) -> float:
    return float(1.0 / (1.0 + np.exp(-x)))


class _ComputedWhenRead:
    """A dataclass field that may be given an :class:`~ratings.inference.builder.OnRequest`:
    the array is computed (read-only) when the field is first read, then kept."""

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return None  # the field's default
        value = obj.__dict__[self.name]
        if isinstance(value, OnRequest):
            value = value()
            value = None if value is None else frozen(value)  # fresh: nobody else writes it
            obj.__dict__[self.name] = value
        return value

    def __set__(self, obj, value) -> None:
        obj.__dict__[self.name] = value


@dataclass(frozen=True, eq=False)
class Uncertainty:
    """How a fit's intervals are made.

    ``ci`` is the interval kind; ``cluster`` the clustering column (None: per verdict) and
    ``n_clusters`` its clusters; ``draws`` the bootstrap draws of ``strength``; ``influence``
    (clusters x models, rows labelled by ``influence_clusters``) the per-cluster influences
    whose cross-product is the clustered sandwich (CR2's computed when first read: the
    intervals and their df do not need them); ``inference`` the CR2 pieces that give
    every contrast its degrees of freedom; ``df`` one degrees of freedom for every interval
    (None: the normal quantile, or per contrast from ``inference``).
    """

    ci: str
    cluster: str | None = None
    n_clusters: int = 0
    draws: NDArray[np.float64] | None = None
    influence: NDArray[np.float64] | None = _ComputedWhenRead()  # type: ignore[assignment]
    influence_clusters: pd.Index | None = None
    inference: ClusterInference | StackedInference | None = None
    df: float | None = None
    model_based: NDArray[np.float64] | None = None

    def held_influence(self) -> NDArray[np.float64] | OnRequest | None:
        """``influence`` as held, without computing it (an :class:`OnRequest` not yet read)."""
        return self.__dict__["influence"]


@dataclass(frozen=True, eq=False)
class Placement:
    """How new models were placed against a frozen board (:func:`ratings.place`): the models
    estimated (``new``; the others keep the reference's published strengths), whether the
    intervals carry the reference's covariance (``reference_cov``, the two-step term), the
    verdicts between two reference models (which cannot move a frozen board) and where the
    reference came from."""

    new: tuple[str, ...]
    reference_cov: bool
    n_reference_only: int = 0
    source: str | None = None


@dataclass(frozen=True, eq=False)
class FitInfo:
    """How the estimate was found: the likelihood at it, Newton's convergence, the rows left
    out, the penalty or Firth's correction, and the models a penalty alone rates
    (``unbounded``: ``direction`` +1 unbounded above, -1 below, 0 both, and ``bound``, the
    other side as a strength in the result's parametrisation; :mod:`ratings.models.separation`),
    how new models were placed against a frozen board (``placement``) and the verdicts a plain
    fit read (``source``, for refits).
    """

    loglik: float
    converged: bool
    n_iter: int
    max_grad: float
    n_rejected: int = 0
    penalty: float = 0.0
    firth: bool = False
    unbounded: pd.DataFrame | None = None
    #: :func:`ratings.place`: which models were placed against a frozen board.
    placement: Placement | None = None
    #: The verdicts a plain fit read (``ratings.api.loading.LoadedLog``), for refits
    #: (:meth:`Ratings.fragility`); None for other results.
    source: object | None = None
    #: ``ratings.BT(ties=...)``: the tie parameter (``nu`` or ``theta``) with its interval and
    #: the probability of a tie between equal models (:func:`ratings.models.ties.tie_table`).
    ties: pd.DataFrame | None = None


@dataclass(frozen=True, eq=False)
class JudgeEffects:
    """``fit(..., adjust=...)``: the judge effects estimated as nuisance parameters (one row
    per judge, :func:`ratings.models.judge_effects.effects_table`) and which ones."""

    table: pd.DataFrame
    adjust: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class Combination:
    """How a combined headline was made: scope weights (summing to 1), the method
    (``"joint"`` or ``"independent"``) and the standard errors the independent method gives."""

    weights: dict[str, float]
    method: str
    se_independent: pd.Series | None = None


def _part_field(part: str, name: str, doc: str) -> property:
    """A property reading ``name`` of the typed part ``part``; None when the result has no such
    part (a combined headline has no ``fit_info``, a fit without ``adjust=`` no
    ``judge_effects``)."""

    def read(self):
        found = getattr(self, part)
        return None if found is None else getattr(found, name)

    return property(read, doc=f"{doc} (``{part}.{name}``; None without ``{part}``)")


def _shifted(x: NDArray[np.float64], k: int | None) -> NDArray[np.float64]:
    """x @ A.T for A = I - 1 e_k^T (anchor k) or I - 11^T / m (centred, k None): O(size)."""
    ref = x.mean(axis=-1, keepdims=True) if k is None else x[..., k : k + 1]
    return frozen(x - ref)


@dataclass(frozen=True, eq=False, repr=False)
class Ratings:
    """Elo ratings with covariance, labelled by model.

    ``strength`` holds natural-log strengths in the reported parametrisation: the anchor's is 0
    (anchored), or they sum to zero (centred). Elo = ``offset + scale * strength``, with
    ``scale = 400 / ln 10``. ``cov`` is the covariance of ``strength``; with an anchor, the
    anchor's row and column are zero, so every other interval is the interval of the difference
    to the anchor. For clustered fits, ``influence`` (clusters x models, labelled by
    ``influence_clusters``) holds each cluster's first-order effect on ``strength``; the
    clustered sandwich is ``influence.T @ influence`` (CR2, the default ``ci="sandwich"``, whose
    influences are bias-adjusted) or ``G/(G-1) influence.T @ influence`` (otherwise), and
    :mod:`ratings.scopes.combine` stacks influences of several scopes by shared cluster.

    A small core (models, strengths, covariance, counts, the scale and anchor, the level) and
    typed parts: ``uncertainty`` (:class:`Uncertainty`: the interval kind, clustering, draws,
    influences and the CR2 pieces that give every contrast its own degrees of freedom),
    ``fit_info`` (:class:`FitInfo`: likelihood, convergence, penalty, the models a penalty
    alone rates; None for a combined headline), ``crowd`` (Crowd-BT), ``judge_effects``
    (:class:`JudgeEffects`) and ``combination`` (:class:`Combination`, a combined headline's
    weights and method). The parts' fields read through as attributes (``r.ci``,
    ``r.cluster``, ``r.influence``, ``r.unbounded``, ``r.loglik``, ...).

    Use :meth:`to_frame` for the table, :meth:`conf_int`, :meth:`diff` and
    :meth:`win_probability` for intervals, and :meth:`summary` for a text report.
    """

    models: pd.Index
    strength: NDArray[np.float64]
    cov: NDArray[np.float64]
    counts: pd.DataFrame
    uncertainty: Uncertainty
    anchor: str | None = None
    offset: float = 1000.0
    level: float = 0.95
    #: "bt", "crowd-bt", "combined", or a Bradley-Terry variant: "davidson", "rao-kupper" (tie
    #: models), "bt-soft" (soft outcomes); the models' names are ``models``
    kind: str = "bt"
    scope: str | None = None
    fit_info: FitInfo | None = None  # None for a combined headline (it has no likelihood)
    judges: pd.DataFrame | None = None
    crowd: CrowdSummary | None = None  # Crowd-BT: etas' covariance, prior, two-step term
    judge_effects: JudgeEffects | None = None  # ``fit(..., adjust=...)``
    combination: Combination | None = None  # a combined headline: how it was combined
    #: ``fit(..., style=...)``: the style coefficients (:func:`ratings.models.style.style_table`;
    #: ``attrs["raw_rank"]`` holds the plain fit's ranks behind ``rank_change``).
    style: pd.DataFrame | None = None
    def __post_init__(self) -> None:
        object.__setattr__(self, "strength", readonly_copy(self.strength))
        object.__setattr__(self, "cov", readonly_copy(self.cov))
        u = self.uncertainty
        infl = u.held_influence()  # computed when read (CR2's): not copied
        if u.draws is not None or infl is not None or u.model_based is not None:
            object.__setattr__(self, "uncertainty", dataclasses.replace(
                u, draws=None if u.draws is None else readonly_copy(u.draws),
                influence=infl if infl is None or isinstance(infl, OnRequest)
                else readonly_copy(infl),
                model_based=None if u.model_based is None else readonly_copy(u.model_based)))
        object.__setattr__(self, "level", check_level(self.level))

    #: Elo points per unit of log-strength (400 / ln 10), the same for every fit.
    scale: ClassVar[float] = ELO_SCALE

    # --- the parts' fields, read through: a field of a part the result lacks is None -----
    placement = _part_field("fit_info", "placement",
                            "How new models were placed against a frozen board.")
    source = _part_field("fit_info", "source", "The verdicts a plain fit read, for refits.")
    ci = _part_field("uncertainty", "ci", "Interval kind.")
    cluster = _part_field("uncertainty", "cluster", "Clustering column, or None.")
    n_clusters = _part_field("uncertainty", "n_clusters", "Number of clusters.")
    draws = _part_field("uncertainty", "draws", "Bootstrap draws of ``strength``.")
    influence = _part_field("uncertainty", "influence", "Per-cluster influences.")
    influence_clusters = _part_field("uncertainty", "influence_clusters",
                                     "Labels of the influences' rows.")
    inference = _part_field("uncertainty", "inference", "CR2 degrees of freedom per contrast.")
    df = _part_field("uncertainty", "df", "One degrees of freedom for every interval.")
    loglik = _part_field("fit_info", "loglik", "Log-likelihood at the estimate.")
    converged = _part_field("fit_info", "converged", "Did Newton converge?")
    n_iter = _part_field("fit_info", "n_iter", "Newton iterations.")
    max_grad = _part_field("fit_info", "max_grad", "Largest final gradient.")
    n_rejected = _part_field("fit_info", "n_rejected", "Input rows rejected.")
    penalty = _part_field("fit_info", "penalty", "Ridge penalty.")
    firth = _part_field("fit_info", "firth", "Firth's bias-reduced estimate?")
    unbounded = _part_field("fit_info", "unbounded", "Models rated only because of a penalty.")
    ties = _part_field("fit_info", "ties", "A tie model's parameter table (``FitInfo.ties``).")
    adjust = _part_field("judge_effects", "adjust", "Judge effects adjusted for.")
    scope_weights = _part_field("combination", "weights", "A headline's scope weights.")
    combine_method = _part_field("combination", "method", "A headline's method.")
    se_independent = _part_field("combination", "se_independent",
                                 "A headline's standard errors under independent scopes.")

    # --- labelled views -------------------------------------------------------------------
    @property
    def elo(self) -> pd.Series:
        """Elo ratings, labelled by model."""
        return pd.Series(self.offset + self.scale * self.strength, index=self.models, name="elo")

    @property
    def se(self) -> pd.Series:
        """Standard errors on the Elo scale (bootstrap: standard deviation of the draws)."""
        if self.draws is not None:
            sd = self.scale * self.draws.std(axis=0, ddof=1)
        else:
            sd = self.scale * np.sqrt(np.clip(np.diag(self.cov), 0.0, None))
        sd = np.where(self._undefined | self.unbounded_mask, np.inf, sd)
        return pd.Series(sd, index=self.models, name="se")

    @property
    def unbounded_mask(self) -> NDArray[np.bool_]:
        """Models whose rating exists only because of the penalty (open intervals)."""
        if self.unbounded is None:
            return np.zeros(len(self.models), dtype=bool)
        return np.asarray(self.models.isin(self.unbounded.index))

    @cached_property
    def _contrasts(self) -> NDArray[np.float64]:
        anchor = None if self.anchor is None else self._loc(self.anchor)
        return reference_contrasts(len(self.models), anchor)

    @cached_property
    def model_based_mask(self) -> NDArray[np.bool_]:
        """Ratings whose interval uses the model-based variance (in part) because the
        sandwich collapsed there (:mod:`ratings.inference.degenerate`)."""
        mb = self.uncertainty.model_based
        if mb is None:
            return np.zeros(len(self.models), dtype=bool)
        from ratings.inference.degenerate import model_based_flags

        return model_based_flags(mb, self.cov, self._contrasts)

    def _pairs_model_based(self, a: NDArray[np.int64], b: NDArray[np.int64]) -> NDArray:
        """Is the interval of each difference ``s_a - s_b`` (partly) model-based?"""
        from ratings.inference.degenerate import model_based_flags

        c = np.zeros((len(a), len(self.models)))
        c[np.arange(len(a)), a] += 1.0
        c[np.arange(len(a)), b] -= 1.0
        return model_based_flags(self.uncertainty.model_based, self.cov, c)

    @cached_property
    def _undefined(self) -> NDArray[np.bool_]:
        """Ratings with no cluster-robust variance (a model compared on one task only)."""
        if self.inference is None:
            return np.zeros(len(self.models), dtype=bool)
        return self.inference.undefined(self._contrasts)

    @cached_property
    def model_df(self) -> NDArray[np.float64]:
        """Degrees of freedom of each rating's interval (inf: normal quantile; NaN: none)."""
        if self.inference is not None:
            with one_blas_thread():
                return self.inference.df(self._contrasts)
        return np.full(len(self.models), np.inf if self.df is None else float(self.df))

    def pair_df(self) -> NDArray[np.float64]:
        """Degrees of freedom of every difference of two ratings, (M x M)."""
        if self.inference is not None:
            return self._pair_df
        m = len(self.models)
        return np.full((m, m), np.inf if self.df is None else float(self.df))

    @cached_property
    def _pair_df(self) -> NDArray[np.float64]:
        with one_blas_thread():
            return self.inference.pair_df()

    @cached_property
    def _rank_cache(self) -> dict:
        """Rank intervals computed so far, by (level, kind, seed)."""
        return {}

    @cached_property
    def _bounds_cache(self) -> dict:
        """Elo bounds computed so far, by level."""
        return {}

    @cached_property
    def pair_stats(self):
        """Every pair's t statistic and df, and the draws' covariance factor, computed once
        (:func:`ratings.inference.ranks.pair_stats`; rank intervals and the pairwise table)."""
        from ratings.inference.ranks import with_df

        return with_df(self._pair_geometry, self.pair_df())

    @cached_property
    def _pair_geometry(self):
        """:attr:`pair_stats` without the pairs' degrees of freedom (which the draws and the
        step-down's first step do not need)."""
        from ratings.inference.ranks import pair_stats

        args, keywords = self._pair_inputs()
        return pair_stats(*args, None, **keywords)

    def _pair_inputs(self) -> tuple:
        """The arguments of :func:`ratings.inference.ranks.pair_stats` but the pairs' df."""
        return (np.asarray(self.strength), self.se.to_numpy(), self.cov), {
            "draws": self.draws, "unbounded": self.unbounded_mask}

    @cached_property
    def _first_steps(self) -> dict:
        """Simultaneous step-downs' first steps started on the pool, by seed
        (:meth:`_start_first_step`)."""
        return {}

    def _start_first_step(self, level: float, seed: int = 0) -> None:
        """Start, on the package's pool, what the simultaneous rank intervals at ``level`` need
        before the pairs' degrees of freedom: every pair's standard error, the covariance's
        factor, the draws and their maxes over the pairs (the step-down's first step,
        :func:`ratings.inference.ranks.first_step`). The caller computes the degrees of
        freedom meanwhile (a CR2 fit's: a pass over the rows, partly on one core) and holds
        :func:`~ratings.core.threads.one_blas_thread` until :meth:`rank_intervals` has read
        the result (the job's BLAS runs on one thread within it). Nothing is started when
        the intervals are known, being computed, or the pairs' statistics are known."""
        if ((level, "simultaneous", seed) in self._rank_cache or seed in self._first_steps
                or "pair_stats" in self.__dict__):  # fmt: skip
            return
        from ratings.core.threads import start
        from ratings.inference.ranks import default_draws

        args, keywords = self._pair_inputs()  # read here: the job touches no attribute
        self._first_steps[seed] = start(partial(_first_step, args, keywords,
                                                default_draws(len(self.models)), seed))

    def _df_of(self, i: int, j: int) -> float:
        if self.inference is None:
            return np.inf if self.df is None else float(self.df)
        c = np.zeros(len(self.models))
        c[i] += 1.0
        c[j] -= 1.0
        return float(self.inference.df(c)[0])

    @property
    def n_verdicts(self) -> int:
        """Number of verdicts fitted."""
        return int(self.counts["n_matches"].sum() // 2)

    def cov_params(self, scale: str = "elo") -> pd.DataFrame:
        """Covariance of the ratings, labelled by model (as statsmodels' ``cov_params``).

        Parameters
        ----------
        scale : {"elo", "log"}, default="elo"
            ``"elo"``: of the Elo ratings (Elo^2); ``"log"``: of the log-strengths ``strength``
            (the array ``cov``).
        """
        if scale not in ("elo", "log"):
            raise ValueError(f"`scale` must be 'elo' or 'log'; got {scale!r}.")
        factor = self.scale**2 if scale == "elo" else 1.0
        return pd.DataFrame(factor * self.cov, index=self.models, columns=self.models)

    @property
    def n_matches(self) -> int:
        """Deprecated: :attr:`n_verdicts` (the table's ``n_matches`` column stays)."""
        warn_deprecated("Ratings.n_matches", "Ratings.n_verdicts")
        return self.n_verdicts

    @property
    def covariance(self) -> pd.DataFrame:
        """Deprecated: :meth:`cov_params` (``cov_params()``, Elo^2)."""
        warn_deprecated("Ratings.covariance", "Ratings.cov_params()")
        return self.cov_params()

    def _loc(self, name: str) -> int:
        try:
            return int(self.models.get_loc(name))
        except KeyError:
            raise KeyError(
                f"Model {name!r} is not in these ratings. {close_matches(name, self.models)}"
            ) from None

    def _interval(self, est, se, draws: NDArray | None, level: float, df=None):
        """Percentile interval of ``draws``, or est -+ t_df se (a zero se gives the point, an
        infinite or undefined one the whole line)."""
        if draws is not None:
            a = (1.0 - level) / 2.0
            lo, hi = np.quantile(draws, [a, 1.0 - a], axis=0)
            return lo, hi
        est, se = np.asarray(est, dtype=np.float64), np.asarray(se, dtype=np.float64)
        z = critical_values(level, np.broadcast_to(np.inf if df is None else df, est.shape))
        with np.errstate(invalid="ignore"):
            half = np.where(se == 0.0, 0.0, np.where(np.isfinite(se), z * se, np.inf))
        half = np.where(np.isnan(half), np.inf, half)
        return est - half, est + half

    @cached_property
    def rank_order(self) -> NDArray[np.int64]:
        """Positions of the models best first (ties by name): the row order of
        :meth:`to_frame`, :meth:`conf_int`, :meth:`rank_intervals` and :meth:`pairwise`."""
        names = np.asarray(self.models.astype(str), dtype=object)
        return np.lexsort((names, -self.elo.to_numpy())).astype(np.int64)

    @cached_property
    def ranked_models(self) -> pd.Index:
        """The models best first: the index of :meth:`to_frame`, :meth:`conf_int` and
        :meth:`rank_intervals` (as statsmodels keeps ``params`` and ``conf_int`` on one index)."""
        return pd.Index(self.models[self.rank_order], name=None)

    def conf_int(self, level: float | None = None) -> pd.DataFrame:
        """Interval of every Elo rating: a DataFrame with ``lower`` and ``upper``, best first,
        indexed by model (:attr:`ranked_models`).

        Parameters
        ----------
        level : float, optional
            Confidence level; default the result's ``level`` (0.95).
        """
        lo, hi = self._bounds(self.level if level is None else check_level(level))
        order = self.rank_order
        return pd.DataFrame({"lower": lo[order], "upper": hi[order]}, index=self.ranked_models)

    def _bounds(self, level: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Lower and upper Elo bounds in the order of ``models`` (computed once per level:
        ``to_frame`` and ``summary`` each need them)."""
        if level not in self._bounds_cache:
            self._bounds_cache[level] = self._bounds_at(level)
        lo, hi = self._bounds_cache[level]
        return lo.copy(), hi.copy()

    def _bounds_at(self, level: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        draws = None if self.draws is None else self.offset + self.scale * self.draws
        lo, hi = self._interval(self.elo.to_numpy(), self.se.to_numpy(), draws, level,
                                self.model_df)  # fmt: skip
        if self.unbounded is not None:  # open on the side the penalty alone closed
            from ratings.models.separation import open_bounds

            lo, hi = open_bounds(self.unbounded, self.models, self.offset, self.scale, lo, hi)
        return np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)

    def to_frame(self, level: float | None = None) -> pd.DataFrame:
        """The ratings table, best first (ties by name), indexed by model
        (:attr:`ranked_models`, the index of :meth:`conf_int` and :meth:`rank_intervals`).

        Columns: ``model, elo, se, lower, upper, rank, rank_lower, rank_upper, n_matches,
        wins, losses, ties, forfeits, level, df`` and ``scope`` first when the fit was for one
        scope. ``rank_lower`` and ``rank_upper`` bound every model's rank (1 = best) jointly at
        the level (:func:`ratings.inference.ranks.rank_intervals`); ``forfeits``: matches
        decided by a render failure, already counted in ``n_matches``; ``df`` is the degrees of
        freedom of the t quantile behind each interval (NaN: a normal quantile, or no interval).
        ``model_based`` (only where the sandwich collapsed, :mod:`ratings.inference.degenerate`)
        is True for the intervals that use the model-based variance.
        """
        level = self.level if level is None else check_level(level)
        with one_blas_thread():  # held while the rank intervals' first step runs beside
            if self.inference is not None and "model_df" not in self.__dict__:
                self._start_first_step(level)  # on the pool while the df are computed
            try:
                lo, hi = self._bounds(level)
                ranks = self.rank_intervals(level).reindex(self.models)
            finally:  # read by the rank intervals; dropped (never pickled) if they failed
                self._first_steps.clear()
        elo, se = self.elo.to_numpy(), self.se.to_numpy()
        # the columns gathered first, the frame made once (a column added to a frame re-makes
        # its column index each time: 25 of them cost pandas 3 about 20 ms)
        cols = {"model": self.models, "elo": elo, "se": se, "lower": lo, "upper": hi,
                "rank": pd.Series(elo).rank(ascending=False, method="min").astype(np.int64)
                .to_numpy()}  # fmt: skip
        for col in ("rank_lower", "rank_upper"):  # NaN: no rank interval (open rating)
            cols[col] = ranks[col].array
        for col in ("n_matches", "wins", "losses", "ties", "forfeits"):
            if col in self.counts:
                cols[col] = self.counts[col].to_numpy()
        cols["level"] = np.full(len(self.models), level, dtype=np.float64)
        df = np.asarray(self.model_df, dtype=np.float64)
        cols["df"] = np.where(np.isfinite(df) & (se > 0), df, np.nan)
        if self.style is not None and "raw_rank" in self.style.attrs:
            raw = self.style.attrs["raw_rank"].reindex(self.models).to_numpy()
            cols["rank_change"] = raw - cols["rank"]
        if self.uncertainty.model_based is not None:
            cols["model_based"] = self.model_based_mask
        if self.placement is not None:  # which models were placed, and on what intervals
            cols["placed"] = np.asarray(self.models.isin(self.placement.new))
            cols["reference_cov"] = self.placement.reference_cov
        out = pd.DataFrame(cols)
        if self.scope is not None:
            out.insert(0, "scope", self.scope)
        out = out.iloc[self.rank_order]
        out.index = self.ranked_models
        return out

    def diff(self, a: str, b: str, level: float | None = None) -> pd.Series:
        """Elo difference ``a - b`` with its standard error and interval.

        Returns a Series with ``estimate, se, lower, upper, df`` (``df``: degrees of freedom of
        the t quantile; NaN for a normal quantile or no interval).
        """
        level = self.level if level is None else check_level(level)
        i, j = self._loc(a), self._loc(b)
        est = self.scale * (self.strength[i] - self.strength[j])
        if self.draws is not None:
            d = self.scale * (self.draws[:, i] - self.draws[:, j])
            se = float(d.std(ddof=1))
            lo, hi = self._interval(est, se, d, level)
            df = np.nan
        else:
            var = self.cov[i, i] + self.cov[j, j] - 2.0 * self.cov[i, j]
            se = float(self.scale * np.sqrt(max(var, 0.0)))
            if self.unbounded_mask[[i, j]].any() or self._undefined[[i, j]].any():
                se = np.inf
            df = self._df_of(i, j) if i != j else np.nan
            lo, hi = self._interval(est, se, None, level, df)
        return pd.Series(
            {"estimate": float(est), "se": se, "lower": float(lo), "upper": float(hi),
             "df": float(df) if np.isfinite(df) else np.nan},
            name=f"{a} - {b}",
        )

    def win_probability(self, a: str, b: str, level: float | None = None) -> pd.Series:
        """Predicted probability that ``a`` beats ``b`` (Bradley-Terry), with an interval.

        The interval maps the interval of the strength difference through the logistic function
        (monotone, so coverage carries over). For Crowd-BT this is the judge-free probability.
        """
        d = self.diff(a, b, level)
        e = d[["estimate", "lower", "upper"]] / self.scale
        return pd.Series(
            {"probability": _expit(e["estimate"]), "lower": _expit(e["lower"]),
             "upper": _expit(e["upper"]), "df": d["df"]},
            name=f"P({a} beats {b})",
        )  # fmt: skip

    def rank_intervals(self, level: float | None = None, *, kind: str = "simultaneous",
                       seed: int = 0) -> pd.DataFrame:  # fmt: skip
        """Confidence intervals for every model's rank (1 = best): ``rank_lower``,
        ``rank_upper`` (integers; <NA> for a model without one), best first, indexed by model
        (:attr:`ranked_models`).

        ``kind="simultaneous"`` (default, the columns of :meth:`to_frame`): all models' ranks
        lie in their intervals jointly with probability >= ``level``; ``"marginal"``: each
        model's own. See :mod:`ratings.inference.ranks` (Mogstad, Romano, Shaikh & Wilhelm 2024).
        """
        level = self.level if level is None else check_level(level)
        key = (level, kind, seed)
        cache = self._rank_cache
        if key not in cache:
            from ratings.inference.ranks import rank_intervals

            first = None
            if kind == "simultaneous" and seed in self._first_steps:  # started beforehand
                geometry, first = self._first_steps.pop(seed).result()
                self.__dict__.setdefault("_pair_geometry", geometry)
            with one_blas_thread():
                ranks = rank_intervals(self.pair_stats, self.models, level, kind=kind,
                                       seed=seed, first=first)  # fmt: skip
            ranks = ranks.iloc[self.rank_order].astype("Int64")
            ranks.index = self.ranked_models
            cache[key] = ranks
        return cache[key].copy()

    def pairwise(self, level: float | None = None, *, correction: str = "max-t",
                 seed: int = 0, adjust: str | None = None) -> pd.DataFrame:  # fmt: skip
        """Every pair of models: Elo difference with its interval and degrees of freedom, the
        win probability with its interval, and a p-value for "no difference" adjusted for
        the M (M - 1) / 2 comparisons.

        Columns ``model_a, model_b`` (the better-rated first), ``elo_diff, se, lower, upper,
        df, p_win, p_win_lower, p_win_upper, p_value, p_adjusted, level`` (and
        ``model_based``, as in :meth:`to_frame`). Rows by the rank of ``model_a``, then of
        ``model_b`` (:attr:`rank_order`), indexed by the pair ``(model_a, model_b)``.
        The multiple-testing ``correction``: ``"max-t"`` (default) uses the joint
        distribution of all pairs' t statistics (single step; beyond the simulation's
        resolution, the Bonferroni bound, which is exact there to first order); ``"holm"``
        Holm's step-down, which ignores it. See :mod:`ratings.inference.ranks`. ``adjust`` is
        the deprecated name of ``correction`` (``adjust`` elsewhere means judge effects).
        """
        from ratings.inference.ranks import pairwise_table

        if adjust is not None:
            warn_deprecated("Ratings.pairwise(adjust=...)", "Ratings.pairwise(correction=...)")
            correction = adjust
        level = self.level if level is None else check_level(level)
        with one_blas_thread():
            out = pairwise_table(self.pair_stats, self.models, level,
                                 rank_order=self.rank_order, scale=self.scale,
                                 draws=self.draws, correction=correction,
                                 seed=seed)  # fmt: skip
        if self.uncertainty.model_based is not None:
            a = self.models.get_indexer(out["model_a"])
            b = self.models.get_indexer(out["model_b"])
            out["model_based"] = self._pairs_model_based(a, b)
        out.index = pd.MultiIndex.from_arrays([out["model_a"], out["model_b"]],
                                              names=[None, None])  # fmt: skip
        return out

    def tied_with_leader(self, level: float | None = None) -> list[str]:
        """Models not shown to be worse than any other: those whose simultaneous rank
        interval contains 1 (a confidence set for the best model), best first."""
        ranks = self.rank_intervals(level)
        tied = ranks.index[ranks["rank_lower"] == 1]
        return [str(m) for m in self.elo[tied].sort_values(ascending=False).index]

    def reanchor(self, anchor: str | None, rating: float = 1000.0) -> Ratings:
        """Return the same fit on another scale: ``anchor`` pinned at ``rating``, or centred.

        Differences between models and their intervals are unchanged.
        """
        k = None if anchor is None else self._loc(anchor)
        shift = partial(_shifted, k=k)

        def shift_cov(cov: NDArray[np.float64]) -> NDArray[np.float64]:
            """A cov A^T for a symmetric cov: cov_ij - r_i - r_j + r_ref, r the reference row."""
            # a column holding inf or nan sums to one (the sums also give the centred row)
            sums = cov.sum(axis=0)
            if not np.isfinite(sums).all() and not np.isfinite(cov).all():
                out = np.where(np.eye(len(cov), dtype=bool), np.inf, 0.0)
                if k is not None:  # open intervals stay open (but the anchor's)
                    out[k, k] = 0.0
                return frozen(out)
            row = sums / len(cov) if k is None else cov[k].copy()
            out = cov - row
            out -= (row - (row.mean() if k is None else row[k]))[:, None]
            return frozen(out)

        draws = None if self.draws is None else shift(self.draws)
        infl = self.uncertainty.held_influence()  # computed when read: shifted then
        infl = infl.and_then(shift) if isinstance(infl, OnRequest) else (
            None if infl is None else shift(infl))
        mb = self.uncertainty.model_based
        mb = None if mb is None else shift(mb)
        strength, unbounded = shift(self.strength), self.unbounded
        if unbounded is not None:  # bounds move with the ratings
            if anchor is not None and self.unbounded_mask[k]:
                raise ValueError(f"Cannot anchor on {anchor!r}: its rating exists only because "
                                 "of the penalty.")  # fmt: skip
            unbounded = unbounded.assign(bound=unbounded["bound"] + (strength[0]
                                                                     - self.strength[0]))
        info = None if self.fit_info is None else dataclasses.replace(self.fit_info,
                                                                       unbounded=unbounded)
        return dataclasses.replace(
            self, strength=strength, cov=shift_cov(self.cov), anchor=anchor,
            offset=float(rating), fit_info=info,
            uncertainty=dataclasses.replace(self.uncertainty, draws=draws, influence=infl,
                                            model_based=mb),
            crowd=None if self.crowd is None else self.crowd.shifted(shift))

    # --- text ----------------------------------------------------------------------------
    def summary(self, max_rows: int | None = None) -> str:
        """A readable report: fit information, then the ratings table."""
        cr1 = self.ci == "sandwich" and self.cluster and self.df is not None  # judge effects
        kind = CI_DESCRIPTIONS["cr2" if self.inference is not None else "cr1" if cr1 else self.ci]
        clus = (f"clustered by {self.cluster!r} ({self.n_clusters} clusters)"
                if self.cluster else "per verdict (HC0)")  # fmt: skip
        lines = [
            f"Ratings ({MODEL_NAMES.get(self.kind, self.kind)}{style_note(self.style)}"
            f"{', scope ' + repr(self.scope) if self.scope else ''}): "
            f"{len(self.models)} models, {self.n_verdicts} verdicts",
            f"Scale: Elo = {self.offset:g} + 400/ln(10) * (s - "
            + (f"s[{self.anchor!r}])" if self.anchor else "mean(s))"),
            f"Intervals: {self.level:.0%} {kind}"
            + (f", {clus}" if self.ci != "model" else "")
            + (f", t quantile with {self.df:g} df" if self.df is not None else ""),
        ]
        if self.combination is None:  # a headline combines fits; it has no likelihood
            lines.append(f"Converged: {self.converged} ({self.n_iter} iterations, max gradient "
                         f"{self.max_grad:.2e}); log-likelihood {self.loglik:.4f}"
                         + (f"; ridge penalty {self.penalty:g}" if self.penalty else "")
                         + ("; Firth's bias-reduced estimate (penalised log-likelihood)"
                            if self.firth else ""))  # fmt: skip
        else:
            lines.append(f"Combined ({self.combination.method}) from scopes with weights "
                         + ", ".join(f"{k}={v:.3g}" for k, v in self.combination.weights.items()))
        if self.crowd is not None:
            lines.append("Estimate: " + self.crowd.estimate_note())
        if self.ties is not None:
            lines.append("Ties: " + tie_note(self.ties))
        if self.adjust:
            lines.append(f"Adjusted for judge effects: {', '.join(self.adjust)} (estimated "
                         "jointly; intervals include their uncertainty)")
        if self.n_rejected:
            lines.append(f"Rejected input rows: {self.n_rejected} (not fitted)")
        if self.placement is not None:
            p = self.placement
            lines.append(f"Placed against a frozen board: {len(p.new)} new model(s) (column "
                         "placed); the others keep their published Elo; intervals "
                         + ("include the board's own uncertainty (two-step)" if p.reference_cov
                            else "ignore the board's uncertainty (no covariance given)"))
        best = self.tied_with_leader()
        leader = (f"leader {best[0]}, statistically tied with it: "
                  + (", ".join(best[1:]) if len(best) > 1 else "none (ahead of every other model)")
                  if best else "no leader (no model's rank interval contains 1)")  # fmt: skip
        lines.append(f"Rank intervals: simultaneous {self.level:.0%} (rank_lower..rank_upper); "
                     + leader)
        if self.model_based_mask.any():
            lines.append("Model-based variance where the sandwich is zero (every residual of "
                         "their verdicts is zero; column model_based): "
                         + ", ".join(map(str, self.models[self.model_based_mask])))  # fmt: skip
        if self.unbounded is not None:
            lines.append("Not estimable without the penalty (open intervals, no rank interval): "
                         + ", ".join(map(str, self.unbounded.index)))  # fmt: skip
        table = self.to_frame().drop(columns=["level"])
        if self.inference is None:
            table = table.drop(columns=["df"])  # one quantile, stated in the header above
        if max_rows is not None and len(table) > max_rows:
            table = table.head(max_rows)
        lines += ["", format_table(table)]
        if self.judges is not None:
            lines += ["", "Judges:", format_table(self.judges.reset_index())]
        if self.style is not None:
            lines += ["", f"Style coefficients (log-odds per root-mean-square of the feature, "
                          f"transform {self.style.attrs.get('transform', 'normalized')!r}; "
                          f"{self.level:.0%} intervals):",
                      self.style[["feature", "coef", "coef_elo", "se", "lower", "upper",
                                  "p_value"]].to_string(index=False,
                                                        float_format="{:.4g}".format)]
        if self.judge_effects is not None and len(self.judge_effects.table):
            cols = ["judge", "n", "position_bias_elo", "position_lower_elo",
                    "position_upper_elo", "self_preference_elo", "self_lower_elo",
                    "self_upper_elo"]  # fmt: skip
            lines += ["", f"Judge effects (Elo points, {self.level:.0%} intervals):",
                      self.judge_effects.table[cols].to_string(index=False,
                                                               float_format="{:.1f}".format)]
        return "\n".join(lines)

    # --- HTML ----------------------------------------------------------------------------
    def to_html(self, path: str | os.PathLike[str] | None = None, *, title: str | None = None,
                charts: bool = True) -> str:  # fmt: skip
        """A self-contained HTML page of this board (:func:`ratings.report.to_html`): the table with
        rank intervals, interval bands and the pairwise heatmap as inline SVG, the judges and
        the method; written to ``path`` (atomically) when given.

        Returns
        -------
        str
            The page's HTML.
        """
        return _html_renderer("page")(self, path, title=title, charts=charts)

    def fragility(self, **options) -> object:
        """How fragile the order of neighbours is: the fewest verdicts (and tasks) whose
        removal reverses each pair, leave-one-judge-out and leave-one-scope-out changes, and
        the verdicts that would separate pairs the rank intervals do not. See
        :func:`ratings.stability.fragility.fragility` (``options`` go there; registered by
        :mod:`ratings.stability`, which ``import ratings`` imports when this runs)."""
        analysis = fragility_analysis()
        if analysis is None:
            raise RuntimeError("No fragility analysis is registered; `import ratings.stability` "
                               "registers it.")
        return analysis(self, **options)

    def _repr_html_(self) -> str:
        """A compact table for notebooks (the best 30 models; a plain table when no renderer
        is registered)."""
        notebook = html_renderer("notebook")
        return notebook(self) if notebook is not None else self.to_frame().head(30).to_html()

    def __repr__(self) -> str:
        return (f"<Ratings {self.kind} {len(self.models)} models, {self.n_verdicts} verdicts, "
                f"ci={self.ci!r}, anchor={self.anchor!r}>")  # fmt: skip


def _old_model(self: Ratings) -> str:
    """Deprecated: :attr:`Ratings.kind` (``models`` holds the models' names)."""
    warn_deprecated("Ratings.model", "Ratings.kind")
    return self.kind


Ratings.model = property(_old_model)


def _first_step(args: tuple, keywords: dict, n_draws: int, seed: int) -> tuple:
    """Every pair's statistics but their df, and the simultaneous step-down's first step from
    them (:meth:`Ratings._start_first_step`'s job)."""
    from ratings.inference.ranks import first_step, pair_stats

    geometry = pair_stats(*args, None, **keywords)
    return geometry, first_step(geometry, n_draws, seed)


def _html_renderer(kind: str) -> Callable[..., str]:
    renderer = html_renderer(kind)
    if renderer is None:
        raise RuntimeError("No HTML renderer is registered; `import ratings.report` registers "
                           "it (`ratings.report.to_html(r)` renders a page).")  # fmt: skip
    return renderer


def tie_note(ties: pd.DataFrame) -> str:
    """One line on a tie model's parameter (``Ratings.ties``)."""
    name, row = ties.index[0], ties.iloc[0]
    if not np.isfinite(row["phi"]):
        return (f"no ties in the log: {name} = {row['estimate']:g} (the boundary), plain "
                "Bradley-Terry")
    level = ties.attrs.get("level", 0.95)
    return (f"{row['model']} {name} = {row['estimate']:.4g} ({level:.0%} interval "
            f"{row['lower']:.4g} to {row['upper']:.4g}); P(tie) between equal models "
            f"{row['p_tie_equal']:.3f} ({row['p_tie_lower']:.3f} to {row['p_tie_upper']:.3f})")


def format_table(frame: pd.DataFrame) -> str:
    """Format a ratings or judges table for a terminal (Elo to 1 decimal, eta to 3)."""
    digits = "{:.1f}" if "elo" in frame else "{:.3f}"  # Elo, or judge quality eta
    named = ("elo", "eta", "lower", "upper", "df")
    fmt = {c: digits.format for c in frame if c in named or str(c).startswith("se")}
    return frame.to_string(index=False, formatters=fmt)
