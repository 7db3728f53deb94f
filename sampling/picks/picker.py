"""The pick-by-pick state of one plan: balanced picks, active picks and the rules they obey.

:class:`Picker` is driven by :func:`sampling.plan_matches`, which documents the rules; the
counts live in the :class:`~sampling.board.inputs.Board` and are updated with every pick.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

import ratings
from ratings.kit import one_blas_thread
from sampling.board.feasibility import N_LEVELS, PairFeasibility, slack_levels, task_levels
from sampling.board.inputs import Board
from sampling.board.pairs import PairCounts
from sampling.judges.assign import JudgeTurns
from sampling.picks.criteria import centred, comparison_weight, pair_reduction, record_comparison

__all__ = ["Objective", "Picker", "ladder_point", "lexmin", "share_cap"]

Objective = Literal["pairwise", "anchored"]


def ladder_point(k: int) -> float:
    """The ``k``-th point (k >= 1) of the base-2 van der Corput sequence: 1/2, 1/4, 3/4, 1/8, ...

    Each new point falls in the largest gap left by the earlier ones, so the first ``k`` points
    spread over (0, 1) whatever ``k`` is.
    """
    out, denom = 0.0, 1.0
    while k:
        denom *= 2.0
        k, bit = divmod(k, 2)
        out += bit / denom
    return out


def share_cap(max_share: float | None, n: int, n_models: int) -> int | None:
    """Most matches a model may have in a batch of ``n``: ``max_share`` times its fair share.

    A match involves two models, so a model's fair share of ``n`` matches among ``n_models``
    is ``2 n / n_models``; the cap is that times ``max_share``, rounded up (``None``: no cap).
    """
    if max_share is None or math.isinf(max_share) or n_models < 2:
        return None
    return max(1, math.ceil(max_share * 2.0 * n / n_models - 1e-9))


def first_rounds(counts: PairCounts, playable: NDArray[np.bool_],
                 shared: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Each pair's round before the plan, and how many of its shared tasks are above it.

    A pair's round is the fewest times it has played one of the tasks both models can play:
    0 unless the history holds every one of them. Returns two (M, M) symmetric arrays.
    """
    m = playable.shape[0]
    lo, hi, task, count = counts.lo, counts.hi, counts.task, counts.count
    both = playable[lo, task] & playable[hi, task]
    pair = lo[both] * m + hi[both]
    held = np.bincount(pair, minlength=m * m).reshape(m, m)
    low = np.full(m * m, np.iinfo(np.int64).max)
    np.minimum.at(low, pair, count[both])
    upper = np.where((held == np.triu(shared, 1)) & (held > 0), low.reshape(m, m), 0)
    round_ = upper + upper.T
    above = both.copy()
    above[both] = count[both] > round_[lo[both], hi[both]]
    n_up = np.bincount(lo[above] * m + hi[above], minlength=m * m).reshape(m, m)
    return round_, n_up + n_up.T


class Picker:
    """Greedy pick-by-pick state of one plan (counts live in the :class:`Board`).

    Parameters
    ----------
    board : Board
    rng : numpy.random.Generator
    min_matches : int
        A model's exposure target: it leaves the balanced phase with ``min_matches`` matches on
        at least ``min(min_matches, its tasks)`` distinct tasks.
    turns : JudgeTurns
        Hands out judges pick by pick.
    objective : {"pairwise", "anchored"}, default="pairwise"
        Active picks reduce the mean variance of all pairwise differences, or the sum of the
        variances relative to the fit's anchor.
    cap : int, optional
        Most matches a model may have in this plan (relaxed only when no pair is left).
    allowed : ndarray of bool, shape (T, J), optional
        Judges allowed per task (routing).
    """

    def __init__(self, board: Board, rng: np.random.Generator,
                 min_matches: int, turns: JudgeTurns, *, objective: Objective = "pairwise",
                 cap: int | None = None,
                 allowed: NDArray[np.bool_] | None = None) -> None:  # fmt: skip
        self.board, self.rng, self.k, self.turns = board, rng, min_matches, turns
        self.objective, self.cap, self.allowed = objective, cap, allowed
        m, t = board.task_n.shape
        self.iu = np.triu_indices(m, 1)
        self.flat = self.iu[0] * m + self.iu[1]  # the pairs' positions in an (M, M) array
        self.plan_task_n = np.zeros((m, t), dtype=np.int64)
        self.n_usable = board.usable.sum(axis=1)
        self.playable = board.playable
        shared = board.shared()
        # Each pair plays its shared tasks in rounds: a task is fresh for the pair while the
        # pair has played it only as often as its round, and not in this plan.
        self.pair_round, n_above = first_rounds(board.pairs, self.playable, shared)
        self.has_fresh = shared > n_above
        self.plan_n = np.zeros(m, dtype=np.int64)  # matches of each model in this plan
        self._feasible: PairFeasibility | None = None  # built at first use (see feasible)
        _, self.comp = connected_components(csr_matrix(board.meet > 0), directed=False)
        self.cold = np.array([self._is_cold(i) for i in range(m)])
        # Rated models: out of the balanced phase before this plan. The others are new, and
        # are linked to rated ones across the ladder before they play each other.
        self.rated = board.plannable & ~self.cold & (board.meet.sum(axis=1) > 0)
        self.rung = np.full(m, np.nan)  # rank of each rated model in (0, 1), from the fit
        self.fit: ratings.Ratings | None = None
        self.fitted = np.zeros(m, dtype=bool)
        self._candidates: dict[bool, tuple[NDArray[np.int64], ...]] = {}  # see candidates

    # --- state ----------------------------------------------------------------------------
    def set_fit(self, fit: ratings.Ratings) -> None:
        """Take the strengths and covariance of ``fit`` (models outside the board ignored)."""
        b = self.board
        m = len(b.models)
        idx = b.models.get_indexer(fit.models.astype(str))
        keep = np.flatnonzero(idx >= 0)
        cov = np.zeros((m, m))
        cov[np.ix_(idx[keep], idx[keep])] = fit.cov[np.ix_(keep, keep)]
        strength = np.zeros(m)
        strength[idx[keep]] = fit.strength[keep]
        self.fitted = np.zeros(m, dtype=bool)
        self.fitted[idx[keep]] = True
        self._candidates.clear()
        self.weight = comparison_weight(strength) * np.outer(self.fitted, self.fitted)
        self.scale2 = float(fit.scale) ** 2
        if self.objective == "pairwise":  # mean over pairs of Var(s_i - s_j) = 2 tr(PCP)/(M-1)
            self.cov = centred(cov, self.fitted)
            self.scale2 *= 2.0 / max(int(self.fitted.sum()) - 1, 1)
        else:
            self.cov = cov
        with one_blas_thread():  # the same bits on any number of cores; no thread left spinning
            self.gram = self.cov @ self.cov  # kept up to date by record_comparison
        ladder = np.flatnonzero(self.rated & self.fitted)
        order = ladder[np.lexsort((ladder, strength[ladder]))]  # weakest first
        self.rung[:] = np.nan
        self.rung[order] = np.arange(order.size) / max(order.size - 1, 1)
        self.fit = fit

    @property
    def feasible(self) -> PairFeasibility:
        """The pairs with a fresh task per strict level, kept up to date by :meth:`record`;
        built at first use (the compiled loop of :meth:`run_active` keeps its own)."""
        if self._feasible is None:
            b = self.board
            self._feasible = PairFeasibility(task_levels(b.usable, b.task_n, self.plan_task_n),
                                             self.playable, b.pairs, self.pair_round)  # fmt: skip
        return self._feasible

    def _is_cold(self, i: int) -> bool:
        """Below its exposure target: fewer than ``k`` matches, or on fewer than
        ``min(k, its tasks)`` distinct tasks."""
        b = self.board
        if not b.usable[i].any():
            return False
        tasks = int((b.task_n[i] > 0)[b.usable[i]].sum())
        return bool(b.meet[i].sum() < self.k or tasks < min(self.k, self.n_usable[i]))

    def exposure(self) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Each model's matches and distinct tasks played (history + plan so far)."""
        b = self.board
        return b.meet.sum(axis=1), ((b.task_n > 0) & b.usable).sum(axis=1)

    def any_cold(self) -> bool:
        return bool(self.cold.any())

    def needs_ladder(self) -> bool:
        """Some new model is still in the balanced phase while rated models exist."""
        return bool(self.rated.any() and (self.cold & ~self.rated).any())

    def record(self, a: int, b: int, t: int, judged: bool = True) -> None:
        """Count a pick and update the rounds, components, warm-up and covariance.

        ``judged=False`` (a forfeit) gives the match no judge.
        """
        feasible = self.feasible  # built (if not yet) from the counts before this pick
        self.board.add(a, b, t)
        if judged:
            self.turns.take(a, b, None if self.allowed is None else self.allowed[t])
        self.plan_task_n[a, t] += 1
        self.plan_task_n[b, t] += 1
        self.plan_n[[a, b]] += 1
        fresh = feasible.fresh(a, b)
        if not fresh.any():  # the pair played all its shared tasks: a new round
            counts = self.board.pairs.row(a, b)
            shared = self.playable[a] & self.playable[b]
            self.pair_round[a, b] = self.pair_round[b, a] = counts[shared].min()
            feasible.new_round(a, b)
            fresh = feasible.fresh(a, b)  # never twice in one plan
            self.has_fresh[a, b] = self.has_fresh[b, a] = fresh.any()
            self._candidates.clear()
        two = [a, b]
        feasible.refresh((a, b), task_levels(self.board.usable[two], self.board.task_n[two],
                                                  self.plan_task_n[two]))  # fmt: skip
        self.comp[self.comp == self.comp[b]] = self.comp[a]
        for m in (a, b):  # warm-up only ever ends
            if self.cold[m]:
                self.cold[m] = self._is_cold(m)
        if self.fitted[a] and self.fitted[b]:
            record_comparison(self.cov, self.gram, a, b, self.weight[a, b])

    def run_active(self, n: int) -> tuple[NDArray, ...] | None:
        """Pick active matches until ``n`` are judged in one compiled loop, or ``None``.

        The same picks, scores and judge turns as :meth:`pick` and :meth:`record` would make
        in turn (:mod:`sampling.picks.picker_numba`), drawn from the same generator. Returns the
        picks as columns ``(a, c, task, score, phase, judged)`` (``phase`` all ``"active"``) and
        sets :attr:`JudgeTurns.given`; the
        board and this picker are left as they were (a plan ends after its picks). ``None``
        when the loop stops before (no active pair allowed, or too many forfeits), with the
        generator restored: the caller then picks with :meth:`pick` from the start.
        """
        from sampling.picks import (  # numba: imported only when a plan needs it
            pcg64_numba,
            picker_numba,
        )

        if not isinstance(self.rng.bit_generator, np.random.PCG64):
            return None  # the loop draws PCG64's stream itself
        b, turns = self.board, self.turns
        ok_model = b.plannable & self.fitted
        key, count, start = b.pairs.by_model()
        allowed = np.ones((1, 1), dtype=bool) if self.allowed is None else self.allowed
        capacity = n + min(int(b.failed.sum()) * 4, 100_000) + 16
        state = pcg64_numba.state_words(self.rng.bit_generator)
        status, k, a, c, t, judge, score = picker_numba.active_picks(
            n, state, self.cov.copy(), self.gram.copy(), self.weight,
            float(self.scale2), ok_model, self.has_fresh.copy(), self.pair_round.copy(),
            b.usable, self.playable, b.failed, b.task_n.copy(), self.plan_task_n.copy(),
            self.plan_n.copy(), -1 if self.cap is None else self.cap,
            key, count, start, turns.total.copy(), turns.left.copy(), turns.plan.copy(),
            allowed, self.allowed is not None, capacity,
        )  # fmt: skip
        if status != picker_numba.DONE:  # the generator is left as it was
            return None
        pcg64_numba.set_state_words(self.rng.bit_generator, state)
        judged = judge[:k] >= 0
        turns.given = judge[:k][judged].tolist()
        return a[:k], c[:k], t[:k], score[:k], np.full(k, "active", dtype=object), judged

    # --- picking --------------------------------------------------------------------------
    def _ladder_distance(self, i: NDArray[np.int64], j: NDArray[np.int64]) -> NDArray[np.int64]:
        """Per pair, how far (in ranks of rated models) a rated opponent is from the rung the
        new model of the pair should play next; 0 for other pairs."""
        new = self.cold & ~self.rated
        n_rated = int(np.isfinite(self.rung).sum())
        out = np.zeros(i.size, dtype=np.int64)
        if n_rated < 2:
            return out
        played = self.board.meet[:, self.rated].sum(axis=1)  # matches against rated models
        target = np.array([ladder_point(int(k) + 1) for k in played])
        for new_side, rated_side in ((i, j), (j, i)):
            sel = new[new_side] & np.isfinite(self.rung[rated_side])
            gap = np.abs(self.rung[rated_side[sel]] - target[new_side[sel]]) * (n_rated - 1)
            out[sel] = np.floor(gap + 0.5).astype(np.int64)
        return out

    def ranking(self, mode: str) -> tuple[NDArray[np.int64], tuple[NDArray, ...],
                                          NDArray[np.float64]]:  # fmt: skip
        """Pairs (indices into ``iu``) with a fresh task, their sort keys and scores.

        Returns
        -------
        pairs : ndarray of int
            Candidate pairs in index order (not ranked).
        keys : tuple of ndarray
            Keys in :func:`numpy.lexsort` order (last is primary): the pairs' ranking is
            ``pairs[np.lexsort(keys)]``, best first. Active picks: the largest score, then a
            seeded random tie-break; balanced picks: the keys listed in
            :func:`sampling.plan_matches`.
        score : ndarray of float
            Expected reduction of the objective per pair (``NaN`` for balanced picks).
        """
        b = self.board
        tie = self.rng.random(self.flat.size)
        idx, i, j, flat = self.candidates(mode)
        if mode == "active":
            score = pair_reduction(self.cov, self.gram, self.weight, i, j, flat) * self.scale2
            return idx, (tie[idx], -score), score
        played = b.meet.sum(axis=1)
        new = ~self.rated
        keys = (
            tie[idx],
            b.meet[i, j],
            played[i] + played[j],
            self._ladder_distance(i, j),
            -(self.cold[i].astype(np.int64) + self.cold[j]),
            new[i] & new[j] & self.rated.any(),
            self.comp[i] == self.comp[j],
        )
        return idx, keys, np.full(idx.size, np.nan)

    def candidates(self, mode: str) -> tuple[NDArray[np.int64], ...]:
        """The pairs with a fresh task whose models may play in ``mode`` (both fitted for
        active picks): positions into ``iu``, the two models and the pairs' positions in an
        (M, M) array. Kept until a fit or a new round of some pair changes them."""
        active = mode == "active"
        out = self._candidates.get(active)
        if out is None:
            i, j = self.iu
            ok_models = self.board.plannable & self.fitted if active else self.board.plannable
            idx = np.flatnonzero(ok_models[i] & ok_models[j] & np.take(self.has_fresh, self.flat))
            out = self._candidates[active] = (idx, i[idx], j[idx], self.flat[idx])
        return out

    def pick(self, mode: str) -> tuple[int, int, int, float] | None:
        """Best allowed ``(a, b, task, score)`` for ``mode``; ``None`` if no pair is allowed.

        The pair is the best ranked (:meth:`ranking`) among the allowed ones at the first of
        these steps that allows any: both models under the share cap (relaxed last); a fresh
        task both models may play (:func:`sampling.board.feasibility.task_levels`, strictest level
        first, then one, two, ... above each model's lowest count in this plan); at each level,
        pairs for which a judge both models have used least is left (:meth:`JudgeTurns.fits`)
        first. Each step is a vectorised pass over the candidate pairs (the strict levels read
        from :class:`PairFeasibility`, the looser ones, rare, tested on the spot), and the
        best allowed pair is a lexicographic minimum of the keys, not a sort.
        """
        pairs, keys, score = self.ranking(mode)
        if pairs.size == 0:
            return None
        idx, ia, ic, flat = self.candidates(mode)
        if pairs is not idx:  # a ranking of other pairs (a subclass's)
            ia, ic, flat = self.iu[0][pairs], self.iu[1][pairs], self.flat[pairs]
        fits = np.take(self.turns.fits(), flat)
        caps = [None] if self.cap is None else [self.plan_n < self.cap, None]
        for under in caps:
            base = np.ones(pairs.size, dtype=bool) if under is None else under[ia] & under[ic]
            for level in range(N_LEVELS):
                has_task = np.take(self.feasible.pairs[level], flat)
                for allowed in (base & fits, base):  # prefer pairs a judge can take evenly
                    hit = allowed & has_task
                    if hit.any():
                        k = lexmin(keys, hit)
                        a, c = int(ia[k]), int(ic[k])
                        tasks = self.feasible.tasks(level, a, c)
                        return a, c, self._task(a, c, tasks), float(score[k])
            for ok in slack_levels(self.board.usable, self.plan_task_n):
                for allowed in (base & fits, base):
                    hit = self._with_task(ia, ic, allowed, ok)
                    if hit.any():
                        k = lexmin(keys, hit)
                        a, c = int(ia[k]), int(ic[k])
                        tasks = np.flatnonzero(ok[a] & ok[c] & self.feasible.fresh(a, c))
                        return a, c, self._task(a, c, tasks), float(score[k])
        return None

    def _with_task(self, ia: NDArray[np.int64], ic: NDArray[np.int64],
                   allowed: NDArray[np.bool_], ok: NDArray[np.bool_]) -> NDArray[np.bool_]:
        """Which ``allowed`` pairs have a fresh task in ``ok`` (M, T) for both models."""
        return allowed & self.feasible.matrix(ok)[ia, ic]

    def _task(self, a: int, c: int, tasks: NDArray[np.int64]) -> int:
        """Among allowed ``tasks``: fewest matches of the two models in this plan, then
        overall, then random."""
        b = self.board
        tie = self.rng.random(tasks.size)
        keys = (tie, b.task_n[a, tasks] + b.task_n[c, tasks],
                self.plan_task_n[a, tasks] + self.plan_task_n[c, tasks])  # fmt: skip
        return int(tasks[np.lexsort(keys)[0]])


def lexmin(keys: tuple[NDArray, ...], mask: NDArray[np.bool_]) -> int:
    """Position of the first of the ``mask`` rows in ``np.lexsort(keys)`` order, without sorting.

    Keys are filtered from the primary (last) one down: only the rows at each key's minimum
    stay; among rows equal on every key the lowest position wins, as in a stable sort. ``NaN``
    sorts last, as in :func:`numpy.lexsort`.
    """
    rows = np.flatnonzero(mask)
    for key in reversed(keys):
        if rows.size == 1:
            break
        values = key[rows]
        if values.dtype.kind == "f":
            values = np.where(np.isnan(values), np.inf, values)
        rows = rows[values == values.min()]
    return int(rows[0])
