"""Matches per (unordered pair, task) without an M x M x T table.

A history fills few of a board's ``M (M - 1) / 2 x T`` cells (200k verdicts fill at most 200k
of the 45M cells of 300 models x 1,000 tasks), so the counts are kept as the sorted cells the
history holds, indexed from each model's side, plus the cells the plan adds. Memory is linear
in the history and the plan, not in ``M^2 T``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["PairCounts"]


class PairCounts:
    """Matches of each unordered pair on each task, history + plan (mutable: :meth:`add`).

    Parameters
    ----------
    n_models, n_tasks : int
    a, b, task : ndarray of int, shape (n,)
        Model and task codes of the history's matches (``a != b``).

    Attributes
    ----------
    lo, hi, task, count : ndarray of int
        The history's cells (``lo < hi``), sorted, and their counts.
    """

    def __init__(self, n_models: int, n_tasks: int, a: NDArray[np.int64], b: NDArray[np.int64],
                 task: NDArray[np.int64]) -> None:  # fmt: skip
        m, t = int(n_models), int(n_tasks)
        self.m, self.t = m, t
        lo, hi = np.minimum(a, b).astype(np.int64), np.maximum(a, b).astype(np.int64)
        cell, count = np.unique((lo * m + hi) * t + np.asarray(task, dtype=np.int64),
                                return_counts=True)  # fmt: skip
        pair, self.task = np.divmod(cell, t)
        self.lo, self.hi = np.divmod(pair, m)
        self.count = count.astype(np.int64)
        # each model's side: (opponent * T + task) keys, sorted, with their counts
        self._key, self._count, self._start = _by_model(m, t, self.lo, self.hi, self.task,
                                                        self.count)  # fmt: skip
        self.plan: dict[tuple[int, int], list[int]] = {}  # (lo, hi) -> tasks planned, in order
        self.plan_keys: list[list[int]] = [[] for _ in range(m)]  # per model: opp * T + task

    def history_of(self, x: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """The history's cells of model ``x``: keys ``opponent * T + task`` (sorted), counts."""
        s, e = self._start[x], self._start[x + 1]
        return self._key[s:e], self._count[s:e]

    def by_model(self) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        """Every model's history cells: keys ``opponent * T + task`` and counts, model ``x``'s
        at ``start[x]:start[x + 1]`` (keys sorted), as ``(key, count, start)``."""
        return self._key, self._count, self._start

    def row(self, a: int, c: int) -> NDArray[np.int64]:
        """Matches of ``a`` and ``c`` on every task, history + plan, shape (T,)."""
        out = np.zeros(self.t, dtype=np.int64)
        key, count = self.history_of(a)
        s, e = np.searchsorted(key, [c * self.t, (c + 1) * self.t])
        out[key[s:e] - c * self.t] = count[s:e]
        np.add.at(out, self.plan.get((min(a, c), max(a, c)), []), 1)
        return out

    def add(self, a: int, c: int, task: int) -> None:
        """Record a planned match of ``a`` and ``c`` on ``task``."""
        self.plan.setdefault((min(a, c), max(a, c)), []).append(task)
        self.plan_keys[a].append(c * self.t + task)
        self.plan_keys[c].append(a * self.t + task)


def _by_model(m: int, t: int, lo: NDArray[np.int64], hi: NDArray[np.int64],
              task: NDArray[np.int64], count: NDArray[np.int64],
              ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:  # fmt: skip
    """Every model's cells as ``(key, count, start)`` (:meth:`PairCounts.by_model`) from the
    cells sorted by ``(lo, hi, task)``, with stable sorts by model only.

    Model ``x``'s keys ``opponent * T + task`` are its cells as ``hi`` (opponents below ``x``),
    in ``(lo, task)`` order, then its cells as ``lo`` (opponents above), in ``(hi, task)``
    order: a stable sort by ``hi`` keeps the first in that order, and a stable sort by model of
    those followed by the sorted cells puts each model's two runs in place.
    """
    small = np.int16 if m <= np.iinfo(np.int16).max else np.int64  # radix sorts when small
    by_hi = np.argsort(hi.astype(small), kind="stable")
    side = np.concatenate([hi[by_hi], lo]).astype(small)
    order = np.argsort(side, kind="stable")
    key = np.concatenate([lo[by_hi] * t + task[by_hi], hi * t + task])[order]
    out = np.concatenate([count[by_hi], count])[order]
    start = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(np.bincount(side, minlength=m), out=start[1:])
    return key, out, start
