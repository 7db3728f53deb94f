"""Which pairs have a task both models may play: the planner's feasibility as arrays.

A pick (:meth:`sampling.picks.picker.Picker.pick`) takes the best ranked pair that has a *fresh*
task (one the pair has not played in its current round, nor in this plan) that both models may play
at the strictest task level that allows any pair. Levels are per model (:func:`task_levels`):
they depend only on the model's own counts, so a pick of ``a`` and ``c`` changes the levels of
those two models only, and the fresh tasks of the pair ``(a, c)`` only.
:class:`PairFeasibility` keeps, per level, the boolean matrix of pairs with a task allowed for
both, and refreshes the rows and columns of the two picked models after each pick
(``O(L M T)``), so a pick finds its pair with a few vectorised passes over the ranked pairs
instead of a walk that tests the tasks of every pair in turn.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from sampling.board.pairs import PairCounts

__all__ = ["GONE_MAX_BYTES", "N_LEVELS", "PairFeasibility", "slack_levels", "task_levels"]

#: Task levels kept as matrices; looser levels (slack above the plan minimum) are rare and
#: evaluated on demand.
N_LEVELS = 3
_BIG = np.iinfo(np.int64).max // 4


def task_levels(
    usable: NDArray[np.bool_], task_n: NDArray[np.int64], plan_task_n: NDArray[np.int64]
) -> NDArray[np.bool_]:
    """Masks of the tasks each model may play at the three strict levels, strictest first.

    Parameters
    ----------
    usable : ndarray of bool, shape (K, T)
        The model's submission on the task can be played.
    task_n : ndarray of int, shape (K, T)
        The model's matches per task, history + plan.
    plan_task_n : ndarray of int, shape (K, T)
        The model's matches per task in this plan.

    Returns
    -------
    ndarray of bool, shape (3, K, T)
        1. the model's lowest count in history + plan and, among those, in this plan;
        2. its lowest count in this plan, at most one above its lowest overall;
        3. its lowest count in this plan.
        Rows are independent: each depends on that model's counts only.
    """
    total = np.where(usable, task_n, _BIG)
    total_min = total.min(axis=1, keepdims=True)
    plan = np.where(usable, plan_task_n, _BIG)
    plan_min = plan.min(axis=1, keepdims=True)
    at_min = total == total_min
    plan_at_min = np.where(at_min, plan, _BIG)
    out = np.empty((N_LEVELS, *total.shape), dtype=bool)
    np.logical_and(at_min, plan_at_min == plan_at_min.min(axis=1, keepdims=True), out=out[0])
    np.logical_and(plan == plan_min, total <= total_min + 1, out=out[1])
    np.equal(plan, plan_min, out=out[2])
    return out


_BIT = (1 << np.arange(8)).astype(np.uint8)  # bit t % 8 of a task's byte
#: Largest table of every pair's stale tasks (one bit per pair and task) kept between picks;
#: beyond it (e.g. 2,000 models on 4,000 tasks) each refreshed row's is built from its cells.
GONE_MAX_BYTES = 1 << 26


def slack_levels(usable: NDArray[np.bool_], plan_task_n: NDArray[np.int64]):
    """Masks (M, T) beyond the strict levels: one, two, ... above each model's lowest count in
    this plan, up to the largest spread."""
    plan = np.where(usable, plan_task_n, _BIG)
    plan_min = plan.min(axis=1, keepdims=True)
    spread = int(np.where(usable, plan_task_n - plan_min, 0).max())
    for slack in range(1, spread + 1):
        yield plan <= plan_min + slack


class PairFeasibility:
    """Per strict level, which pairs share a fresh task both models may play there.

    A task is *fresh* for a pair when both models can play it (``playable``), the pair has not
    played it more often than its current round (``pair_round``) and not in this plan. The
    pairs sharing a fresh task allowed by a level mask ``L`` are counted as
    ``L L^T`` (shared allowed tasks) minus the pair's *excluded* cells (history cells above the
    round, and the plan's cells) allowed for both, so no ``M x M x T`` table is formed.

    Parameters
    ----------
    levels : ndarray of bool, shape (3, M, T)
        :func:`task_levels` of every model.
    playable : ndarray of bool, shape (M, T)
        The model's submission on the task can be played (usable, and the model can be paired).
    counts : PairCounts
        Matches per pair and task, history + plan (read, not copied).
    pair_round : ndarray of int, shape (M, M)
        The round each pair is in (read, not copied).

    Attributes
    ----------
    pairs : ndarray of bool, shape (3, M, M)
        ``pairs[l, a, c]``: some fresh task of ``(a, c)`` is allowed at level ``l`` for both.
    """

    def __init__(self, levels: NDArray[np.bool_], playable: NDArray[np.bool_],
                 counts: PairCounts, pair_round: NDArray[np.int64]) -> None:  # fmt: skip
        self.playable, self.counts, self.pair_round = playable, counts, pair_round
        self._above: dict[int, NDArray[np.int64]] = {}  # per model: history cells above round
        self.levels = levels & playable[None]
        flt = self.levels.astype(np.float32)  # 0/1 sums are exact up to 2^24
        cells = self.excluded_all()  # the same for every level
        self.pairs = np.stack([self.matrix(self.levels[k], flt[k], cells)
                               for k in range(N_LEVELS)])  # fmt: skip
        # Bitsets (bit t of byte t // 8) for the row refreshes: each model's tasks per level,
        # and per pair the tasks that are not fresh (both orders: gone[x, y] == gone[y, x]).
        m, t = self.levels.shape[1:]
        n_bytes = (t + 63) // 64 * 8  # whole 64-bit words, read as such
        self._level_bits = np.zeros((N_LEVELS, m, n_bytes), dtype=np.uint8)
        self._level_bits[..., :(t + 7) // 8] = np.packbits(self.levels, axis=-1,
                                                           bitorder="little")  # fmt: skip
        self._gone: NDArray[np.uint8] | None = None  # too large: each row's, when refreshed
        if m * m * n_bytes <= GONE_MAX_BYTES:
            self._gone = np.zeros((m, m, n_bytes), dtype=np.uint8)
            lo, hi, task = cells
            for x, y in ((lo, hi), (hi, lo)):
                np.bitwise_or.at(self._gone, (x, y, task >> 3), _BIT[task & 7])
        self._synced = [len(keys) for keys in counts.plan_keys]  # plan cells in _gone

    def excluded_keys(self, x: int) -> NDArray[np.int64]:
        """Keys ``opponent * T + task`` of model ``x``'s cells that are not fresh (among those
        the history or the plan holds): above the pair's round, or planned."""
        c = self.counts
        above = self._above.get(x)
        if above is None:
            key, count = c.history_of(x)
            above = self._above[x] = key[count > self.pair_round[x, key // c.t]]
        # a planned cell was fresh when planned, so at most its round in the history: the two
        # sets are disjoint
        return np.concatenate([above, np.array(c.plan_keys[x], dtype=np.int64)])

    def excluded(self, x: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Opponents and tasks of model ``x``'s cells that are not fresh (:meth:`excluded_keys`)."""
        return np.divmod(self.excluded_keys(x), self.counts.t)

    def excluded_all(self) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        """Every pair's non-fresh cells ``(lo, hi, task)``, each cell once."""
        c = self.counts
        above = c.count > self.pair_round[c.lo, c.hi]
        cells = ((c.lo * c.m + c.hi) * c.t + c.task)[above]
        planned = [(lo * c.m + hi) * c.t + t for (lo, hi), ts in c.plan.items() for t in ts]
        cells = np.concatenate([cells, np.array(planned, dtype=np.int64)])  # disjoint
        pair, task = np.divmod(cells, c.t)
        lo, hi = np.divmod(pair, c.m)
        return lo, hi, task

    def matrix(self, mask: NDArray[np.bool_], flt: NDArray[np.float32] | None = None,
               cells: tuple[NDArray[np.int64], ...] | None = None,
               ) -> NDArray[np.bool_]:  # fmt: skip
        """``out[a, c]``: a fresh task of ``(a, c)`` is in ``mask`` (M, T) for both
        (``flt``: ``mask`` as float32; ``cells``: :meth:`excluded_all`, if known)."""
        mask = mask & self.playable
        flt = mask.astype(np.float32) if flt is None else flt
        m = mask.shape[0]
        shared = flt @ flt.T
        lo, hi, task = self.excluded_all() if cells is None else cells
        hit = mask[lo, task] & mask[hi, task]
        gone = np.bincount(lo[hit] * m + hi[hit], minlength=m * m).reshape(m, m)
        out = shared - (gone + gone.T) > 0.5
        np.fill_diagonal(out, False)
        return out

    def _rows(self, models: list[int]) -> NDArray[np.bool_]:
        """Rows ``models`` of :attr:`pairs` at every level, shape (3, len(models), M): some
        task both models have at the level and the pair has not made stale, as bitsets (a few
        bytes per pair)."""
        c, idx = self.counts, list(models)
        if self._gone is None:  # each row's stale tasks from its cells
            gone = np.zeros((len(idx), *self._level_bits.shape[1:]), dtype=np.uint8)
            for k, x in enumerate(idx):
                y, task = self.excluded(x)
                np.bitwise_or.at(gone[k], (y, task >> 3), _BIT[task & 7])
        else:
            for x in models:  # the plan's new cells of x (one a pick; its opponent's the same)
                for key in c.plan_keys[x][self._synced[x]:]:
                    y, task = divmod(key, c.t)
                    self._gone[x, y, task >> 3] |= _BIT[task & 7]
                    self._gone[y, x, task >> 3] |= _BIT[task & 7]
                self._synced[x] = len(c.plan_keys[x])
            gone = self._gone[idx]
        words = self._level_bits.view(np.uint64)
        both = words[:, idx, None, :] & words[:, None, :, :]
        both &= ~gone.view(np.uint64)[None]
        out = both.any(axis=-1)
        out[:, np.arange(len(idx)), idx] = False
        return out

    def new_round(self, a: int, c: int) -> None:
        """Forget the cached cells of ``a`` and ``c`` and redo the pair's stale tasks (call
        when their pair's round changed)."""
        self._above.pop(a, None)
        self._above.pop(c, None)
        if self._gone is None:
            return
        cnt = self.counts
        key, count = cnt.history_of(a)
        lo, hi = np.searchsorted(key, [c * cnt.t, (c + 1) * cnt.t])
        above = key[lo:hi][count[lo:hi] > self.pair_round[a, c]] - c * cnt.t
        tasks = np.concatenate([above, np.array(cnt.plan.get((min(a, c), max(a, c)), []),
                                                dtype=np.int64)])  # fmt: skip
        row = np.zeros(self._gone.shape[2], dtype=np.uint8)
        np.bitwise_or.at(row, tasks >> 3, _BIT[tasks & 7])
        self._gone[a, c] = row
        self._gone[c, a] = row

    def refresh(self, models: tuple[int, ...], levels: NDArray[np.bool_]) -> None:
        """Take the new level rows of ``models`` (shape (3, len(models), T)) and recompute
        their rows and columns (call after the counts and rounds are updated)."""
        idx = list(models)
        self.levels[:, idx, :] = levels & self.playable[None, idx]
        packed = np.packbits(self.levels[:, idx, :], axis=-1, bitorder="little")
        self._level_bits[:, idx, :packed.shape[-1]] = packed
        rows = self._rows(idx)
        for k, x in enumerate(models):
            self.pairs[:, x, :] = rows[:, k]
            self.pairs[:, :, x] = rows[:, k]

    def fresh(self, a: int, c: int) -> NDArray[np.bool_]:
        """The fresh tasks of ``(a, c)``, shape (T,)."""
        cnt = self.counts
        out = self.playable[a] & self.playable[c] & (cnt.row(a, c) == self.pair_round[a, c])
        out[cnt.plan.get((min(a, c), max(a, c)), [])] = False
        return out

    def tasks(self, level: int, a: int, c: int) -> NDArray[np.int64]:
        """The fresh tasks of ``(a, c)`` that both may play at strict ``level``."""
        return np.flatnonzero(self.levels[level, a] & self.levels[level, c] & self.fresh(a, c))
