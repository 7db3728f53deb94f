"""The frozen, labelled result of a rating fit."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings._arrays import frozen, readonly_copy
from ratings._tdist import critical_value
from ratings.errors import close_matches, option

if TYPE_CHECKING:
    from ratings.crowd_prior import CrowdSummary

__all__ = ["CI_DESCRIPTIONS", "ELO_SCALE", "MODEL_NAMES", "Ratings", "check_level", "format_table"]

ELO_SCALE = 400.0 / np.log(10.0)

MODEL_NAMES = {"bt": "Bradley-Terry", "crowd-bt": "Crowd-BT", "combined": "combined headline"}

CI_DESCRIPTIONS = {
    "sandwich": "robust sandwich H^-1 B H^-1",
    "sandwich-z": "robust sandwich H^-1 B H^-1 (normal quantile)",
    "model": "model-based inverse Hessian H^-1",
    "bootstrap": "bootstrap percentile",
}


def _expit(x: float) -> float:
    return float(1.0 / (1.0 + np.exp(-x)))


def check_level(level: float) -> float:
    """``level`` as a float strictly between 0 and 1 (a confidence level), else ValueError."""
    if not (isinstance(level, int | float) and 0.0 < float(level) < 1.0):
        raise ValueError(f"{option('level')} must be a float strictly between 0 and 1; got "
                         f"{level!r}.")  # fmt: skip
    return float(level)


@dataclass(frozen=True, eq=False, repr=False)
class Ratings:
    """Elo ratings with covariance, labelled by model.

    ``strength`` holds natural-log strengths in the reported parametrisation: the anchor's is 0
    (anchored), or they sum to zero (centred). Elo = ``offset + scale * strength``, with
    ``scale = 400 / ln 10``. ``cov`` is the covariance of ``strength``; with an anchor, the
    anchor's row and column are zero, so every other interval is the interval of the difference
    to the anchor. For clustered fits, ``influence`` (clusters x models, labelled by
    ``influence_clusters``) holds each cluster's first-order effect on ``strength``; the
    clustered sandwich is ``G/(G-1) influence.T @ influence``, and :mod:`ratings.combine` stacks
    influences of several scopes by shared cluster.

    A combined headline (:func:`ratings.combine.combine`) also records how it was combined:
    ``scope_weights`` (scope -> weight, summing to 1), ``combine_method`` (``"joint"`` or
    ``"independent"``) and ``se_independent`` (the standard errors the independent method
    gives, for comparison); they are ``None`` for a fit.

    Use :meth:`to_frame` for the table, :meth:`conf_int`, :meth:`diff` and
    :meth:`win_probability` for intervals, and :meth:`summary` for a text report.
    """

    models: pd.Index
    strength: NDArray[np.float64]
    cov: NDArray[np.float64]
    counts: pd.DataFrame
    ci: str
    cluster: str | None
    n_clusters: int
    anchor: str | None
    offset: float
    loglik: float
    converged: bool
    n_iter: int
    max_grad: float
    model: str = "bt"
    level: float = 0.95
    scale: float = ELO_SCALE
    penalty: float = 0.0
    scope: str | None = None
    draws: NDArray[np.float64] | None = None
    judges: pd.DataFrame | None = None
    n_rejected: int = 0
    df: float | None = None
    influence: NDArray[np.float64] | None = None
    influence_clusters: pd.Index | None = None
    scope_weights: dict[str, float] | None = None
    combine_method: str | None = None
    se_independent: pd.Series | None = None
    #: ``fit(..., adjust=...)``: the judge effects estimated as nuisance parameters
    #: (:func:`ratings.judge_effects.effects_table`) and which ones.
    judge_effects: pd.DataFrame | None = None
    adjust: tuple[str, ...] = ()
    crowd: CrowdSummary | None = None  # Crowd-BT: etas' covariance, prior, two-step term

    def __post_init__(self) -> None:
        object.__setattr__(self, "strength", readonly_copy(self.strength))
        object.__setattr__(self, "cov", readonly_copy(self.cov))
        for name in ("draws", "influence"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, readonly_copy(getattr(self, name)))
        object.__setattr__(self, "level", check_level(self.level))

    @property
    def extra(self) -> dict:
        """A combined headline's ``scope_weights``, ``combine_method`` and ``se_independent``
        as one dict (keys ``"weights"``, ``"method"``, ``"se_independent"``); empty for a fit.
        Kept for code written against the older dict; read the fields."""
        if self.combine_method is None:
            return {}
        return {"weights": self.scope_weights, "method": self.combine_method,
                "se_independent": self.se_independent}  # fmt: skip

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
        return pd.Series(sd, index=self.models, name="se")

    @property
    def n_matches(self) -> int:
        """Number of verdicts fitted."""
        return int(self.counts["n_matches"].sum() // 2)

    @property
    def covariance(self) -> pd.DataFrame:
        """Covariance of the Elo ratings (Elo^2), labelled."""
        return pd.DataFrame(self.scale**2 * self.cov, index=self.models, columns=self.models)

    def _loc(self, name: str) -> int:
        try:
            return int(self.models.get_loc(name))
        except KeyError:
            raise KeyError(
                f"Model {name!r} is not in these ratings. {close_matches(name, self.models)}"
            ) from None

    def _interval(self, est: NDArray, se: NDArray, draws: NDArray | None, level: float):
        if draws is not None:
            a = (1.0 - level) / 2.0
            lo, hi = np.quantile(draws, [a, 1.0 - a], axis=0)
            return lo, hi
        z = critical_value(level, self.df)
        return est - z * se, est + z * se

    def conf_int(self, level: float | None = None) -> pd.DataFrame:
        """Interval of every Elo rating: a DataFrame with ``lower`` and ``upper``.

        Parameters
        ----------
        level : float, optional
            Confidence level; default the result's ``level`` (0.95).
        """
        level = self.level if level is None else check_level(level)
        draws = None if self.draws is None else self.offset + self.scale * self.draws
        lo, hi = self._interval(self.elo.to_numpy(), self.se.to_numpy(), draws, level)
        return pd.DataFrame({"lower": lo, "upper": hi}, index=self.models)

    def to_frame(self, level: float | None = None) -> pd.DataFrame:
        """The ratings table, best first.

        Columns: ``model, elo, se, lower, upper, rank, n_matches, wins, losses, ties,
        forfeits, level, df`` (``forfeits``: matches decided by a render failure, already
        counted in ``n_matches``; ``df``: degrees of freedom of the t quantile behind the
        intervals, NaN for a normal quantile), and ``scope`` first when the fit was for one
        scope.
        """
        ci = self.conf_int(level)
        out = pd.DataFrame(
            {"model": self.models, "elo": self.elo.to_numpy(), "se": self.se.to_numpy(),
             "lower": ci["lower"].to_numpy(), "upper": ci["upper"].to_numpy()}
        )  # fmt: skip
        out["rank"] = out["elo"].rank(ascending=False, method="min").astype(np.int64)
        for col in ("n_matches", "wins", "losses", "ties", "forfeits"):
            if col in self.counts:
                out[col] = self.counts[col].to_numpy()
        out["level"] = self.level if level is None else check_level(level)
        out["df"] = np.nan if self.df is None else float(self.df)
        if self.scope is not None:
            out.insert(0, "scope", self.scope)
        return out.sort_values(["rank", "model"], kind="stable").reset_index(drop=True)

    def diff(self, a: str, b: str, level: float | None = None) -> pd.Series:
        """Elo difference ``a - b`` with its standard error and interval.

        Returns a Series with ``estimate, se, lower, upper``.
        """
        level = self.level if level is None else check_level(level)
        i, j = self._loc(a), self._loc(b)
        est = self.scale * (self.strength[i] - self.strength[j])
        if self.draws is not None:
            d = self.scale * (self.draws[:, i] - self.draws[:, j])
            se = float(d.std(ddof=1))
            lo, hi = self._interval(est, se, d, level)
        else:
            var = self.cov[i, i] + self.cov[j, j] - 2.0 * self.cov[i, j]
            se = float(self.scale * np.sqrt(max(var, 0.0)))
            lo, hi = self._interval(est, se, None, level)
        return pd.Series(
            {"estimate": float(est), "se": se, "lower": float(lo), "upper": float(hi)},
            name=f"{a} - {b}",
        )

    def win_probability(self, a: str, b: str, level: float | None = None) -> pd.Series:
        """Predicted probability that ``a`` beats ``b`` (Bradley-Terry), with an interval.

        The interval maps the interval of the strength difference through the logistic function
        (monotone, so coverage carries over). For Crowd-BT this is the judge-free probability.
        """
        d = self.diff(a, b, level) / self.scale
        return pd.Series(
            {"probability": _expit(d["estimate"]), "lower": _expit(d["lower"]),
             "upper": _expit(d["upper"])},
            name=f"P({a} beats {b})",
        )  # fmt: skip

    def reanchor(self, anchor: str | None, rating: float = 1000.0) -> Ratings:
        """Return the same fit on another scale: ``anchor`` pinned at ``rating``, or centred.

        Differences between models and their intervals are unchanged.
        """
        k = None if anchor is None else self._loc(anchor)

        def shift(x: NDArray[np.float64]) -> NDArray[np.float64]:
            """x @ A.T for A = I - 1 e_k^T (anchor k) or I - 11^T / m (centred): O(size)."""
            ref = x.mean(axis=-1, keepdims=True) if k is None else x[..., k : k + 1]
            return frozen(x - ref)

        def shift_cov(cov: NDArray[np.float64]) -> NDArray[np.float64]:
            """A cov A^T for a symmetric cov: cov_ij - r_i - r_j + r_ref, r the reference row."""
            if not np.isfinite(cov).all():  # open intervals stay open (but the anchor's)
                out = np.where(np.eye(len(cov), dtype=bool), np.inf, 0.0)
                if k is not None:
                    out[k, k] = 0.0
                return frozen(out)
            row = cov.mean(axis=0) if k is None else cov[k].copy()
            out = cov - row
            out -= row[:, None]
            out += row.mean() if k is None else row[k]
            return frozen(out)

        draws = None if self.draws is None else shift(self.draws)
        infl = None if self.influence is None else shift(self.influence)
        crowd = None if self.crowd is None else self.crowd.shifted(shift)
        return dataclasses.replace(self, strength=shift(self.strength), cov=shift_cov(self.cov),
                                   anchor=anchor, offset=float(rating), draws=draws,
                                   influence=infl, crowd=crowd)  # fmt: skip

    # --- text ----------------------------------------------------------------------------
    def summary(self, max_rows: int | None = None) -> str:
        """A readable report: fit information, then the ratings table."""
        kind = CI_DESCRIPTIONS[self.ci]
        clus = (f"clustered by {self.cluster!r} ({self.n_clusters} clusters)"
                if self.cluster else "per verdict (HC0)")  # fmt: skip
        lines = [
            f"Ratings ({MODEL_NAMES.get(self.model, self.model)}"
            f"{', scope ' + repr(self.scope) if self.scope else ''}): "
            f"{len(self.models)} models, {self.n_matches} verdicts",
            f"Scale: Elo = {self.offset:g} + 400/ln(10) * (s - "
            + (f"s[{self.anchor!r}])" if self.anchor else "mean(s))"),
            f"Intervals: {self.level:.0%} {kind}"
            + (f", {clus}" if self.ci != "model" else "")
            + (f", t quantile with {self.df:g} df" if self.df is not None else ""),
        ]
        if self.combine_method is None:  # a headline combines fits; it has no likelihood
            lines.append(f"Converged: {self.converged} ({self.n_iter} iterations, max gradient "
                         f"{self.max_grad:.2e}); log-likelihood {self.loglik:.4f}"
                         + (f"; ridge penalty {self.penalty:g}" if self.penalty else ""))
        else:
            lines.append(f"Combined ({self.combine_method}) from scopes with weights "
                         + ", ".join(f"{k}={v:.3g}" for k, v in (self.scope_weights or {}).items()))
        if self.adjust:
            lines.append(f"Adjusted for judge effects: {', '.join(self.adjust)} (estimated "
                         "jointly; intervals include their uncertainty)")
        if self.n_rejected:
            lines.append(f"Rejected input rows: {self.n_rejected} (not fitted)")
        table = self.to_frame().drop(columns=["level", "df"])  # stated in the header above
        if max_rows is not None and len(table) > max_rows:
            table = table.head(max_rows)
        lines += ["", format_table(table)]
        if self.judges is not None:
            lines += ["", "Judges:", format_table(self.judges.reset_index())]
        if self.judge_effects is not None and len(self.judge_effects):
            cols = ["judge", "n", "position_bias_elo", "position_lower_elo",
                    "position_upper_elo", "self_preference_elo", "self_lower_elo",
                    "self_upper_elo"]  # fmt: skip
            lines += ["", f"Judge effects (Elo points, {self.level:.0%} intervals):",
                      self.judge_effects[cols].to_string(index=False, float_format="{:.1f}".format)]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"<Ratings {self.model} {len(self.models)} models, {self.n_matches} verdicts, "
                f"ci={self.ci!r}, anchor={self.anchor!r}>")  # fmt: skip


def format_table(frame: pd.DataFrame) -> str:
    """Format a ratings or judges table for a terminal (Elo to 1 decimal, eta to 3)."""
    digits = "{:.1f}" if "elo" in frame else "{:.3f}"  # Elo, or judge quality eta
    named = ("elo", "eta", "lower", "upper")
    fmt = {c: digits.format for c in frame if c in named or str(c).startswith("se")}
    return frame.to_string(index=False, formatters=fmt)
