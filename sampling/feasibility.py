"""Which pairs have a task both models may play: the planner's feasibility as arrays.

A pick (:meth:`sampling.picker.Picker.pick`) takes the best ranked pair that has a *fresh* task
(one the pair has not played in its current round, nor in this plan) that both models may play
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

__all__ = ["N_LEVELS", "PairFeasibility", "slack_levels", "task_levels"]

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

    Parameters
    ----------
    levels : ndarray of bool, shape (3, M, T)
        :func:`task_levels` of every model (kept and updated in place by :meth:`refresh`).
    fresh : ndarray of bool, shape (M, M, T)
        The fresh tasks of every pair (the picker's array, read, not copied).

    Attributes
    ----------
    pairs : ndarray of bool, shape (3, M, M)
        ``pairs[l, a, c]``: some task ``t`` has ``levels[l, a, t] & levels[l, c, t] &
        fresh[a, c, t]``.
    """

    def __init__(self, levels: NDArray[np.bool_], fresh: NDArray[np.bool_]) -> None:
        self.levels, self.fresh = levels, fresh
        m = fresh.shape[0]
        self.pairs = np.zeros((N_LEVELS, m, m), dtype=bool)
        for x in range(m):
            self.pairs[:, x, :] = self._row(x)

    def _row(self, x: int) -> NDArray[np.bool_]:
        both = self.levels[:, x, None, :] & self.levels  # (L, M, T)
        both &= self.fresh[x][None, :, :]
        return both.any(axis=2)

    def refresh(self, models: tuple[int, ...], levels: NDArray[np.bool_]) -> None:
        """Take the new level rows of ``models`` (shape (3, len(models), T)) and recompute
        their rows and columns (call after the picker updated ``fresh``)."""
        self.levels[:, list(models), :] = levels
        for x in models:
            row = self._row(x)
            self.pairs[:, x, :] = row
            self.pairs[:, :, x] = row

    def tasks(self, level: int, a: int, c: int) -> NDArray[np.int64]:
        """The fresh tasks of ``(a, c)`` that both may play at strict ``level``."""
        return np.flatnonzero(self.levels[level, a] & self.levels[level, c] & self.fresh[a, c])
