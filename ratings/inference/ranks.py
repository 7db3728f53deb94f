"""Rank intervals and the pairwise table, from the joint covariance of the ratings.

Rank intervals follow Mogstad, Romano, Shaikh & Wilhelm (2024). Every ordered pair (j, k) is a
one-sided hypothesis "model j is not better than model k", rejected when
t_jk = (s_j - s_k) / se_jk exceeds a critical value; model j's rank is then at least
1 + #{k proven better than j} and at most n - #{k proven worse than j}. With a critical value
that bounds the maximum of the t statistics over all pairs *jointly* (max-|t|), all models' rank
intervals hold simultaneously with probability >= ``level``; a step-down (Romano & Wolf 2005)
recomputes the critical value over the hypotheses not yet rejected, which only narrows the
intervals and keeps the joint level. The joint distribution of the t statistics comes from the
covariance of the ratings: seeded draws of N(0, V) (4,000; fewer past 300 models). As it uses the
correlation between pairs, the critical value is below Bonferroni's. ``kind="marginal"`` bounds
each model's own rank with the pairs that involve it (valid per model, not jointly).

Adjusted p-values (:func:`pairwise_table`, ``correction="max-t"``) are single step: each pair's
p-value is the probability that the largest |t| over all pairs reaches its own, simulated from
the same draws, or the Bonferroni bound where that is smaller (beyond the draws' reach, where
it is exact to first order). Rank intervals step down: once the clearest pairs are rejected,
the critical value is recomputed over the pairs left, which is lower, so they can separate a
pair whose single-step adjusted p-value is above ``1 - level``.

Small samples: each pair has its own degrees of freedom (CR2 fits, :mod:`ratings.inference`).
The Gaussian max-|t| critical value c fixes a per-comparison error rate 1 - Phi(c); each pair is
then tested at that rate with its own Student t quantile. With many degrees of freedom this is
the Gaussian procedure; with few it widens the pairs that rest on few tasks.

Models without a finite interval (a penalised fit's models whose rating exists only because of
the penalty; a model compared on one task only) are never proven better or worse than another:
they widen the other models' rank intervals and get no rank interval of their own (NaN).

References
----------
Mogstad, M., Romano, J. P., Shaikh, A. M. & Wilhelm, D. (2024). Inference for ranks with
applications to mobility across neighbourhoods and academic achievement across countries.
Review of Economic Studies 91(1), 476-518.
Romano, J. P. & Wolf, M. (2005). Exact and approximate stepdown methods for multiple hypothesis
testing. Journal of the American Statistical Association 100(469), 94-108.
Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of
Statistics 6(2), 65-70.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from statistics import NormalDist
from typing import Literal, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.memory import check_memory, pairs_memory
from ratings.core.tdist import CORNISH_FISHER_FROM, critical_values, t_quantiles, t_upper
from ratings.core.threads import one_blas_thread

__all__ = [
    "DRAWS",
    "DRAW_CELLS",
    "FirstStep",
    "PairStats",
    "default_draws",
    "first_step",
    "pair_max",
    "pair_stats",
    "pairwise_table",
    "rank_intervals",
    "with_df",
]

#: Draws of N(0, V) behind the joint critical values (fewer on large boards: see
#: :func:`default_draws`).
DRAWS = 4000
#: (draw, ordered pair) cells per step of the step-down up to which all :data:`DRAWS` are used.
DRAW_CELLS = 400_000_000
#: Cells (draws x models) per batch of draws (16 MB of float32).
_BATCH_CELLS = 4_000_000
#: Cells (draws x models^2) per pass of :func:`pair_max` (its work array stays in cache).
_PASS_CELLS = 1 << 20
#: Pairs compared with their tail probability from which those clearly beyond their quantile
#: are found first from the quantiles of a few degrees of freedom (:func:`_clearly_beyond`).
_BOUND_FROM = 256
#: Degrees of freedom whose quantiles bound the others' (:func:`_clearly_beyond`).
_BOUND_POINTS = 16
#: Relative margin above a bounding quantile: far beyond the rounding of the tail probability
#: (1e-13) and of the quantile (5e-12).
_BOUND_MARGIN = 1e-9
#: Least rate for the bound: the quantile's tail target is the rate within 1e-16 (absolute),
#: so within 1e-9 of it (relative) from here on.
_BOUND_RATE = 1e-7


@dataclass(frozen=True, eq=False)
class PairStats:
    """Every pair's t statistic and degrees of freedom, and the draws' covariance factor."""

    estimate: NDArray[np.float64]  # (M,) strengths
    se: NDArray[np.float64]  # (M, M) standard error of s_j - s_k (inf: undecidable)
    df: NDArray[np.float64] | None  # (M, M) degrees of freedom (inf: normal; None: not yet)
    factor: NDArray[np.float64]  # (M, K): draws are factor @ N(0, I_K)
    decidable: NDArray[np.bool_]  # (M,) models with a finite interval

    @property
    def t(self) -> NDArray[np.float64]:
        with np.errstate(invalid="ignore", divide="ignore"):
            t = (self.estimate[:, None] - self.estimate[None, :]) / self.se
        return np.where(np.isfinite(t), t, 0.0)


def pair_stats(strength: NDArray[np.float64], se: NDArray[np.float64], cov: NDArray[np.float64],
               pair_df: NDArray[np.float64] | None, *,
               draws: NDArray[np.float64] | None = None,
               unbounded: NDArray[np.bool_] | None = None) -> PairStats:  # fmt: skip
    """The pairwise quantities of a fit (:attr:`ratings.Ratings.pair_stats` keeps them).

    Parameters
    ----------
    strength, se : ndarray (M,)
        Log-strengths and their standard errors (a model with an infinite one is never
        decided either way).
    cov : ndarray (M, M)
        Covariance of the log-strengths.
    pair_df : ndarray (M, M) or None
        Degrees of freedom of every difference (inf: normal); None: not known yet (given
        later by :func:`with_df`; the draws and :func:`first_step` do not need them).
    draws : ndarray (B, M), optional
        Bootstrap draws of the log-strengths; their covariance replaces ``cov``.
    unbounded : ndarray (M,) of bool, optional
        Models whose rating only the penalty makes finite (never decided either way).
    """
    strength = np.asarray(strength, dtype=np.float64)
    m = len(strength)
    check_memory(pairs_memory(m, default_draws(m)),
                 f"every pair's statistics for rank intervals ({m:,} models)")  # fmt: skip
    cov = np.asarray(cov) if draws is None else np.atleast_2d(np.cov(draws, rowvar=False))
    ok = np.isfinite(np.asarray(se, dtype=np.float64))
    if unbounded is not None:
        ok &= ~np.asarray(unbounded, dtype=bool)
    var = np.diag(cov)
    with np.errstate(invalid="ignore"):
        se = np.sqrt(np.clip(var[:, None] + var[None, :] - 2.0 * cov, 0.0, None))
    se[~ok, :] = np.inf
    se[:, ~ok] = np.inf
    se[~(se > 0)] = np.inf  # no variance (a degenerate fit): never decided either way
    np.fill_diagonal(se, np.inf)
    df = None if pair_df is None else np.asarray(pair_df, dtype=np.float64)
    sub = cov[np.ix_(ok, ok)]
    with one_blas_thread():  # one thread: a second gains nothing on 1000 models (0.24 vs 0.26 s)
        lam, u = np.linalg.eigh((sub + sub.T) / 2.0)  # and stalls when others share the cores (5 s)
    keep = lam > 1e-12 * max(float(lam.max(initial=0.0)), 1e-300)
    factor = np.zeros((m, int(keep.sum())))
    factor[ok] = u[:, keep] * np.sqrt(lam[keep])
    return PairStats(strength, se, df, factor, ok)


def with_df(ps: PairStats, pair_df: NDArray[np.float64]) -> PairStats:
    """``ps`` with every pair's degrees of freedom ``pair_df`` (M x M; inf: normal)."""
    return replace(ps, df=np.asarray(pair_df, dtype=np.float64))


class FirstStep(NamedTuple):
    """The first step of the simultaneous step-down (:func:`first_step`): the draws of the
    strengths and each draw's max over every decidable pair with the pair attaining it."""

    factor: NDArray[np.float64]  # the factor of the PairStats the draws came from
    n_draws: int
    seed: int
    z: NDArray[np.float32]
    maxes: NDArray[np.float64]
    arg: NDArray[np.int64]


def first_step(ps: PairStats, n_draws: int, seed: int) -> FirstStep:
    """The draws and their maxes over every decidable pair, which the simultaneous step-down
    starts from: they need the pairs' standard errors and the covariance's factor, not their
    degrees of freedom, so they can be computed while those are (``ps.df`` may be None)."""
    z = _draws(ps, n_draws, seed)
    maxes, arg = _draw_argmax(ps, np.isfinite(ps.se), z)
    return FirstStep(ps.factor, n_draws, seed, z, maxes, arg)


def _draws(ps: PairStats, n_draws: int, seed: int) -> NDArray[np.float32]:
    """Seeded draws Z ~ N(0, V) of the strengths, shape (n_draws, M)."""
    rng = np.random.default_rng(seed)
    m, k = ps.factor.shape
    factor = ps.factor.T.astype(np.float32)
    batch = max(1, _BATCH_CELLS // max(m, 1))
    with one_blas_thread():  # see _pair_stats (1000 models: 0.05 s, or 3.9 s on 2 busy threads)
        return np.concatenate([rng.standard_normal((min(batch, n_draws - lo), k),
                                                   dtype=np.float32) @ factor
                               for lo in range(0, n_draws, batch)]
                              or [np.zeros((0, m), np.float32)])  # fmt: skip


def _weights(ps: PairStats, allowed: NDArray[np.bool_]) -> NDArray[np.float32]:
    """1 / se_jk on the allowed ordered pairs, 0 elsewhere."""
    finite = np.isfinite(ps.se)
    inv = np.where(finite, 1.0 / np.where(finite, ps.se, 1.0), 0.0)
    return (inv * allowed).astype(np.float32)


def _draw_max(ps: PairStats, allowed: NDArray[np.bool_], z: NDArray[np.float32],
              inward: NDArray[np.bool_] | None = None) -> NDArray[np.float64]:  # fmt: skip
    """Max over the allowed ordered pairs (j, k) of (Z_j - Z_k) / se_jk for the draws ``z``
    (:func:`_draws`), shape (n_draws,). With ``inward`` (marginal intervals), one max per model
    j instead, shape (n_draws, M): over (j, k) where ``allowed[j, k]`` and over (k, j) where
    ``inward[j, k]``.

    Pairs left out count as 0 instead of -inf: the upper quantiles used here are at least
    1.645 (that of any one allowed pair), so this changes none of them, and it saves a pass.
    """
    w_in = np.zeros((0, 0), np.float32) if inward is None else _weights(ps, inward)
    out = pair_max(np.ascontiguousarray(z), _weights(ps, allowed), w_in)
    return out[:, 0] if inward is None else out


def _draw_argmax(ps: PairStats, allowed: NDArray[np.bool_],
                 z: NDArray[np.float32]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """:func:`_draw_max` (jointly, no ``inward``) and each draw's maximising pair, as its flat
    index j M + k (-1 where the max is 0: no allowed pair is positive)."""
    if not z.size:
        return np.zeros(z.shape[0]), np.full(z.shape[0], -1, dtype=np.int64)
    return _bounded_max(np.ascontiguousarray(z), _weights(ps, allowed), with_arg=True)


def pair_max(z: NDArray[np.float32], w_out: NDArray[np.float32],
             w_in: NDArray[np.float32]) -> NDArray[np.float64]:  # fmt: skip
    """Max over ordered pairs of weighted differences, per draw.

    z f4[D, M] draws; w_out f4[M, M] -> f8[D, 1]: max(0, max_{j,k} (z_j - z_k) w_out[j, k]);
    with w_in f4[M, M] non-empty -> f8[D, M]: per model j, the max of (z_j - z_k) w_out[j, k]
    and (z_k - z_j) w_in[j, k] over k (and 0).

    Without ``w_in``, over the pairs that can attain each draw's max (:func:`_bounded_max`;
    4,000 draws x 200 models: 0.01 s against 0.06 s for every pair). Every pair: broadcast in
    place over cache-sized passes of draws, faster than a compiled loop over the pairs
    (measured: 4,000 draws x 200 models 0.05 s against 0.08 s, 500 x 1,000 0.16 against
    0.29 s), so there is no numba kernel.
    """
    if not w_in.shape[0] and z.size:
        return _bounded_max(z, w_out)[:, None]
    return _full_pass(z, w_out, w_in)


def _full_pass(z: NDArray[np.float32], w_out: NDArray[np.float32], w_in: NDArray[np.float32],
               with_arg: bool = False):  # fmt: skip
    """:func:`pair_max` over every pair. ``with_arg`` (without ``w_in``): also each draw's
    maximising pair (flat j M + k, the first in that order; -1 where the max is 0), as
    ``(maxes, pairs)``."""
    n_draws, m = z.shape
    per_model = w_in.shape[0] > 0
    out = np.empty((n_draws, m if per_model else 1))
    arg = np.empty(n_draws, dtype=np.int64) if with_arg else None
    step = max(1, _PASS_CELLS // max(m * m, 1))
    diff = np.empty((min(step, n_draws), m, m), np.float32)
    buf = np.empty_like(diff) if per_model else None
    for lo in range(0, n_draws, step):
        zz = z[lo:lo + step]
        dd = diff[:zz.shape[0]]
        np.subtract(zz[:, :, None], zz[:, None, :], out=dd)  # dd[:, j, k] = z_j - z_k
        if per_model:
            bb = buf[:zz.shape[0]]
            np.multiply(dd, w_out, out=bb)
            row = bb.max(axis=2)
            np.multiply(dd, -w_in, out=bb)  # (z_k - z_j) w_in[j, k]
            out[lo:lo + step] = np.maximum(np.maximum(row, bb.max(axis=2)), 0.0)
            continue
        np.multiply(dd, w_out, out=dd)
        flat = dd.reshape(dd.shape[0], -1)
        if with_arg:
            at = flat.argmax(axis=1)
            top = flat[np.arange(at.size), at]
            arg[lo:lo + step] = np.where(top > 0.0, at, -1)
        else:
            top = flat.max(axis=1)
        out[lo:lo + step, 0] = np.maximum(top, 0.0)
    return (out[:, 0], arg) if with_arg else out


def _bounded_max(z: NDArray[np.float32], w: NDArray[np.float32],
                 with_arg: bool = False):  # fmt: skip
    """:func:`pair_max` without ``w_in``, over the pairs that can attain each draw's max.

    A lower bound of a draw's max, ``low``, is its best pair against its lowest ``z`` or
    against its highest. A pair (j, k) is at most (z_j - min z) max_k w[j, k] and at most
    (max z - z_k) max_j w[j, k] (rounding is monotone, so in float32 too): pairs whose j or k
    bound is below ``low`` cannot attain the max. The others (a few dozen of the 40,000 pairs
    of 200 models, typically) are computed as the full pass computes them, so the values are
    the same; draws where the bounds leave over an eighth of the pairs take the full pass.
    ``with_arg``: also each draw's maximising pair (as :func:`_full_pass`), as ``(maxes,
    pairs)``.
    """
    n, m = z.shape
    rows = np.arange(n)
    hi, lo = z.argmax(axis=1), z.argmin(axis=1)
    above = z - z[rows, lo][:, None]  # z_j - min z
    below = z[rows, hi][:, None] - z  # max z - z_k
    to_lo = np.take(w.T, lo, axis=0)  # w[j, lo] per draw
    to_lo *= above
    from_hi = np.take(w, hi, axis=0)
    from_hi *= below
    low = np.maximum(to_lo.max(axis=1), from_hi.max(axis=1))[:, None]
    above *= w.max(axis=1)
    below *= w.max(axis=0)
    j_ok, k_ok = above >= low, below >= low
    cells = np.count_nonzero(j_ok, axis=1) * np.count_nonzero(k_ok, axis=1)
    full = cells > m * m // 8
    out = np.empty(n)
    arg = np.empty(n, dtype=np.int64) if with_arg else None
    if full.any():
        if with_arg:
            out[full], arg[full] = _full_pass(z[full], w, np.zeros((0, 0), np.float32), True)
        else:
            out[full] = _full_pass(z[full], w, np.zeros((0, 0), np.float32))[:, 0]
    few = np.flatnonzero(~full)
    total = np.cumsum(cells[few])
    start = 0
    while start < few.size:  # passes of at most _PASS_CELLS candidate pairs (or one draw)
        done = total[start] - cells[few[start]]
        stop = max(start + 1, int(np.searchsorted(total, done + _PASS_CELLS, side="right")))
        part = few[start:stop]
        got = _candidates_max(z[part], w, j_ok[part], k_ok[part], cells[part], with_arg)
        if with_arg:
            out[part], arg[part] = got
        else:
            out[part] = got
        start = stop
    return (out, arg) if with_arg else out


def _candidates_max(z: NDArray[np.float32], w: NDArray[np.float32], j_ok: NDArray[np.bool_],
                    k_ok: NDArray[np.bool_], cells: NDArray[np.int64],
                    with_arg: bool = False):  # fmt: skip
    """Per draw (row of ``z``), max(0, (z_j - z_k) w[j, k]) over j in ``j_ok``, k in ``k_ok``:
    one row per (draw, j), its k the draw's run of ``k_ok``, all gathered from the flat
    arrays (a 2-d ``nonzero`` costs three times the flat one). ``with_arg``: also each draw's
    maximising pair j M + k (the first in that order; -1 where the max is 0)."""
    m = z.shape[1]
    dj, jj = np.divmod(np.flatnonzero(j_ok), m)  # by draw (row-major)
    nk = np.count_nonzero(k_ok, axis=1)
    kk = np.flatnonzero(k_ok) % m
    reps = nk[dj]
    # row (d, j) takes kk[first_k[d]:first_k[d] + nk[d]]: each cell's position there
    shift = np.repeat((np.cumsum(nk) - nk)[dj] - (np.cumsum(reps) - reps), reps)
    k = kk[np.arange(int(reps.sum())) + shift]
    flat_z = z.ravel()
    vals = np.repeat(flat_z[dj * m + jj], reps)
    vals -= flat_z[np.repeat(dj * m, reps) + k]
    pair = np.repeat(jj * m, reps) + k
    vals *= w.ravel()[pair]
    top = np.maximum.reduceat(vals, np.cumsum(cells) - cells)
    if not with_arg:
        return np.maximum(top, 0.0)
    at = np.flatnonzero(vals == np.repeat(top, cells))  # the cells attaining their draw's max
    draw = np.repeat(np.arange(cells.size), cells)[at]
    first = np.ones(at.size, dtype=bool)
    first[1:] = draw[1:] != draw[:-1]
    return np.maximum(top, 0.0), np.where(top > 0.0, pair[at[first]], -1)


def default_draws(n_models: int) -> int:
    """:data:`DRAWS`, or on boards with more than 300 models fewer (at least 500) so that a
    step of the step-down stays within :data:`DRAW_CELLS`: with 1000 models (a million ordered
    pairs) 500 draws put the Monte-Carlo error of the critical value near 1%."""
    return int(min(DRAWS, max(500, DRAW_CELLS // max(n_models * n_models, 1))))


def _beyond(c: NDArray[np.float64] | float, df: NDArray[np.float64],
            t: NDArray[np.float64], open_: NDArray[np.bool_]) -> NDArray[np.bool_]:  # fmt: skip
    """Which pairs ``open_`` (those a step can still reject in the direction of their ``t``)
    have ``|t|`` beyond their own critical value: at the one-sided rate 1 - Phi(c) of the
    Gaussian critical value ``c``, each pair's Student t quantile.

    A t quantile is at least the normal one, so only those with ``|t|`` above ``c`` (less a
    rounding margin) can be. Of these, a pair with a normal quantile (infinite df) is compared
    with it, one with 1000 df or more with its Cornish-Fisher quantile
    (:func:`~ratings.core.tdist.critical_values`), and one with fewer by its upper tail
    probability: ``|t|`` lies beyond the quantile exactly when P(T > |t|) is below the rate
    (one continued fraction per pair instead of the quantile's Newton steps). NaN df: never.
    """
    c = np.asarray(c, dtype=np.float64)
    rate = np.broadcast_to(1.0 - np.vectorize(NormalDist().cdf)(c), df.shape)
    maybe = open_ & (np.abs(t) > np.broadcast_to(c * (1.0 - 1e-6), df.shape))
    maybe &= (rate > 0.0) & (rate < 0.5)
    out = np.zeros(df.shape, dtype=bool)
    tail = maybe & (df > 0.0) & (df < CORNISH_FISHER_FROM)
    if tail.any():
        size, nu, rate_t = np.abs(t[tail]), df[tail], rate[tail]
        sure = (_clearly_beyond(size, nu, float(rate_t[0]))
                if c.ndim == 0 and nu.size >= _BOUND_FROM and rate_t[0] >= _BOUND_RATE
                else np.zeros(nu.size, dtype=bool))  # fmt: skip
        rest = ~sure
        sure[rest] = t_upper(size[rest], nu[rest]) < rate_t[rest]
        out[tail] = sure
    quantile = maybe & ~tail & ~np.isnan(df)
    level = 1.0 - 2.0 * rate
    for lv in np.unique(level[quantile]):
        sel = quantile & (level == lv)
        out[sel] = np.abs(t[sel]) > critical_values(float(lv), df[sel])
    return out


def _clearly_beyond(size: NDArray[np.float64], df: NDArray[np.float64],
                    rate: float) -> NDArray[np.bool_]:  # fmt: skip
    """Which ``size`` (|t| of pairs with finite, positive ``df``) lie beyond the Student t
    quantile of their ``df`` at the one-sided ``rate``, shown by a bound: the quantile
    falls as the degrees of freedom rise, so that of :data:`_BOUND_POINTS` of the ``df`` (the
    lowest among them) bounds each pair's with the closest of them below its own. ``False``
    leaves a pair undecided (:func:`_beyond` then computes its tail probability); a pair of a
    well-separated board is typically far beyond."""
    points = np.unique(np.quantile(df, np.linspace(0.0, 1.0, _BOUND_POINTS), method="lower"))
    bound = t_quantiles(points, 1.0 - rate)  # its tail target 1 - p is ``rate`` within 1e-16
    below = np.searchsorted(points, df, side="right") - 1  # points[0] is the lowest df
    return size > bound[below] * (1.0 + _BOUND_MARGIN)


def _stepdown(ps: PairStats, level: float, n_draws: int, seed: int, marginal: bool,
              first: FirstStep | None = None) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Rejections ``(better, worse)``: ``better[j, k]`` proves model j better than model k,
    ``worse[j, k]`` proves k better than j (each for model j's own interval when marginal;
    jointly, ``worse`` is ``better.T``). ``first``: the simultaneous step-down's first step
    (:func:`first_step`) of the same draws, when computed already."""
    t, finite = ps.t, np.isfinite(ps.se)
    better = np.zeros(t.shape, dtype=bool)
    worse = np.zeros(t.shape, dtype=bool)
    maxes, arg = None, None
    if marginal:
        z = _draws(ps, n_draws, seed)
    else:
        if first is None or first.factor is not ps.factor or (first.n_draws, first.seed) != (
                n_draws, seed):  # fmt: skip
            first = first_step(ps, n_draws, seed)
        z, maxes, arg = first.z, first.maxes, first.arg
    while True:
        if marginal:  # model j: the pairs (j, k) and (k, j) not yet rejected
            maxes = _draw_max(ps, finite & ~better, z, inward=finite & ~worse)
            beyond = _beyond(np.quantile(maxes, level, axis=0)[:, None], ps.df, t,
                             finite & ((~better & (t > 0)) | (~worse & (t < 0))))  # fmt: skip
            new_b = finite & ~better & (t > 0) & beyond
            new_w = finite & ~worse & (t < 0) & beyond
        else:  # (j, k) and (k, j) are one test: its t > 0 side, until rejected
            new_b = _beyond(float(np.quantile(maxes, level)), ps.df, t,
                            finite & ~better & (t > 0))  # fmt: skip
            new_w = new_b.T
        if not (new_b.any() or new_w.any()):
            return better, worse
        better |= new_b
        worse |= new_w
        if not marginal:
            maxes, arg = _fewer_pairs(ps, finite & ~better, z, maxes, arg, new_b)


def _fewer_pairs(ps: PairStats, allowed: NDArray[np.bool_], z: NDArray[np.float32],
                 maxes: NDArray[np.float64], arg: NDArray[np.int64],
                 removed: NDArray[np.bool_]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """The draws' maxes over ``allowed`` and their maximising pairs, from their maxes over the
    pairs before ``removed`` left them and the pairs ``arg`` attaining those: a draw's max
    changes only if a removed pair attained it (``allowed`` lies within the pairs before), so
    only those draws are recomputed (on the 200-model board, 45% of them after the first
    step). Same values as a full pass."""
    redo = arg >= 0
    redo[redo] = removed.ravel()[arg[redo]]
    out, at = maxes.copy(), arg.copy()
    if redo.any():
        out[redo], at[redo] = _draw_argmax(ps, allowed, z[redo])
    return out, at


def rank_intervals(ps: PairStats, models: pd.Index, level: float, *,
                   kind: Literal["simultaneous", "marginal"] = "simultaneous",
                   n_draws: int | None = None, seed: int = 0,
                   first: FirstStep | None = None) -> pd.DataFrame:  # fmt: skip
    """Confidence intervals for every model's rank (1 = best).

    Parameters
    ----------
    ps : PairStats
        Every pair's statistics (:func:`pair_stats`).
    models : pandas.Index
        The models' names, in the order of ``ps``.
    level : float
        Confidence level.
    kind : {"simultaneous", "marginal"}, default="simultaneous"
        All models' intervals jointly (Mogstad et al. 2024, step-down), or each model's alone.
    n_draws, seed : int
        Draws of the ratings' joint normal distribution behind the critical values (default
        :func:`default_draws`).
    first : FirstStep, optional
        The simultaneous step-down's first step (:func:`first_step` of ``ps``, or of the same
        statistics before their degrees of freedom were known), when computed already; used
        when it holds these draws.

    Returns
    -------
    pandas.DataFrame
        ``rank_lower``, ``rank_upper`` indexed by model (NaN for models without a finite
        interval, which widen the others').
    """
    level = float(level)
    if kind not in ("simultaneous", "marginal"):
        raise ValueError(f"`kind` must be 'simultaneous' or 'marginal'; got {kind!r}.")
    n_draws = default_draws(len(models)) if n_draws is None else int(n_draws)
    better, worse = _stepdown(ps, level, n_draws, seed, marginal=kind == "marginal",
                              first=first)
    m = len(models)
    lower = 1 + worse.sum(axis=1)  # models proven better than j
    upper = m - better.sum(axis=1)  # models proven worse than j
    out = pd.DataFrame({"rank_lower": lower.astype(np.float64),
                        "rank_upper": upper.astype(np.float64)}, index=models)  # fmt: skip
    out.loc[~ps.decidable] = np.nan
    return out


def pairwise_table(ps: PairStats, models: pd.Index, level: float, *,
                   rank_order: NDArray[np.int64], scale: float,
                   draws: NDArray[np.float64] | None = None,
                   correction: Literal["max-t", "holm"] = "max-t", n_draws: int | None = None,
                   seed: int = 0) -> pd.DataFrame:  # fmt: skip
    """Every pair's Elo difference, interval, win probability and adjusted p-value.

    ``ps`` from :func:`pair_stats`; ``rank_order`` the models' positions best first (ties by
    name); ``scale`` Elo points per log unit; ``draws`` bootstrap draws of the log-strengths
    (percentile intervals). See :meth:`ratings.Ratings.pairwise`.
    """
    from scipy.special import expit, stdtr

    level = float(level)
    if correction not in ("max-t", "holm"):
        raise ValueError(f"`correction` must be 'max-t' or 'holm'; got {correction!r}.")
    m = len(models)
    check_memory(pairs_memory(m, default_draws(m) if n_draws is None else int(n_draws),
                              table=True),
                 f"the pairwise table of {m * (m - 1) // 2:,} pairs")  # fmt: skip
    order = np.asarray(rank_order)  # better model first (ties by name)
    rank = np.empty(m, dtype=np.int64)
    rank[order] = np.arange(m)
    jj, kk = np.triu_indices(m, 1)
    swap = rank[jj] > rank[kk]
    a, b = np.where(swap, kk, jj), np.where(swap, jj, kk)
    est = ps.estimate[a] - ps.estimate[b]
    se, df = ps.se[a, b], ps.df[a, b]
    if draws is not None:  # bootstrap: percentile intervals of the differences
        d = draws[:, a] - draws[:, b]
        lo, hi = np.quantile(d, [(1 - level) / 2, (1 + level) / 2], axis=0)
    else:
        z = critical_values(level, df)
        lo, hi = est - z * se, est + z * se
    t = np.abs(ps.t[a, b])  # 0 where undecidable
    dfx = np.where(np.isnan(df), np.inf, df)
    p = np.where(np.isfinite(se), 2.0 * stdtr(dfx, -t), 1.0)
    if correction == "holm":
        padj = _holm(p)
    else:  # single-step max-|t| on the normal scale of each pair's own p-value
        n_draws = default_draws(m) if n_draws is None else int(n_draws)
        padj = _max_t_adjusted(ps, p, np.isfinite(se), n_draws, seed)
    names = np.asarray(models, dtype=object)
    out = pd.DataFrame({
        "model_a": names[a], "model_b": names[b], "elo_diff": scale * est,
        "se": scale * se, "lower": scale * lo, "upper": scale * hi, "df": df,
        "p_win": expit(est), "p_win_lower": expit(lo), "p_win_upper": expit(hi),
        "p_value": p, "p_adjusted": padj,
    })  # fmt: skip
    out["level"] = level
    out = out.iloc[np.lexsort((rank[b], rank[a]))]  # by the better model's rank, then the other
    return out.reset_index(drop=True)


def _max_t_adjusted(ps: PairStats, p: NDArray[np.float64], finite: NDArray[np.bool_],
                    n_draws: int, seed: int) -> NDArray[np.float64]:  # fmt: skip
    """Single-step max-|t| adjusted p-values of pairs with two-sided p-values ``p``: the
    probability that the largest |t| of all K decidable pairs reaches each pair's own, under
    the joint normal law of the ratings.

    The simulated share of draws reaching it, ``(above + 1) / (D + 1)``, cannot go below
    ``1 / (D + 1)`` (0.00025 with 4,000 draws) and has a Monte-Carlo standard error of about
    ``sqrt(P (1 - P) / D)``. The Bonferroni bound ``K p`` bounds the same probability from above
    (the union of the K events ``|t_i| >= |t|``) and is exact to first order in the tail: what
    it overstates is the chance that two pairs exceed together, of a smaller order there since
    no two pairs' statistics are perfectly correlated. The smaller of the two is reported, so
    a pair beyond the draws' reach gets ``K p`` instead of the floor, and never less than
    ``p``.
    """
    zeq = -np.vectorize(NormalDist().inv_cdf)(np.clip(p / 2.0, 1e-300, 0.5))
    maxes = np.sort(_draw_max(ps, np.isfinite(ps.se), _draws(ps, n_draws, seed)))
    above = maxes.size - np.searchsorted(maxes, zeq, side="left")
    simulated = (above + 1.0) / (maxes.size + 1.0)
    bonferroni = int(finite.sum()) * p
    padj = np.maximum(np.minimum(simulated, bonferroni), p)
    return np.where(finite, np.minimum(padj, 1.0), 1.0)


def _holm(p: NDArray[np.float64]) -> NDArray[np.float64]:
    """Holm's step-down adjusted p-values."""
    n = p.size
    order = np.argsort(p, kind="stable")
    adj = np.maximum.accumulate((n - np.arange(n)) * p[order])
    out = np.empty(n)
    out[order] = np.minimum(adj, 1.0)
    return out
