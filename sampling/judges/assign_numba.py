"""The weighted judge repair of large plans as one compiled loop.

:func:`sampling.judges.assign._weighted_repair` recolours alternating two-judge paths (a
breadth-first search per candidate move) in Python; at 5,000 matches its searches take most of a
second. :func:`weighted_repair` runs the same sweeps, moves and searches in the same order over
arrays (the incidence lists as CSR in edge order, the search's states as arrays), so it
recolours the same paths; the Python function is its twin (tested equal).
"""

from __future__ import annotations

import numba
import numpy as np
from numpy.typing import NDArray

__all__ = ["weighted_repair"]


@numba.njit(cache=True, inline="always")
def _unit(los, his, ws, v, j, value):
    out = 0
    for s in range(ws.size):
        out += ws[s] * (max(value - his[s, v, j], 0) + max(los[s, v, j] - value, 0))
    return out


@numba.njit(cache=True)
def _delta(x, los, his, ws, v, give, take):
    xg, xt = x[v, give], x[v, take]
    return (_unit(los, his, ws, v, give, xg - 1) - _unit(los, his, ws, v, give, xg)
            + _unit(los, his, ws, v, take, xt + 1) - _unit(los, his, ws, v, take, xt))  # fmt: skip


@numba.njit(cache=True)
def _cost_path(m, p, q, a, b, col, start_at, inc, x, los, his, ws, g, glo, ghi, allowed,
               seen, stamp, par_v, par_e, queue, path, edge_mark):  # fmt: skip
    """:func:`sampling.judges.assign._cost_path` over arrays; the path in ``path``, its length
    returned (-1: none). ``seen`` holds ``stamp`` for the states seen in this search."""
    start = _delta(x, los, his, ws, m, p, q)
    panel_ok_odd = True
    for j in range(g.size):
        gj = g[j] - (j == p) + (j == q)
        if gj < glo[j] or gj > ghi[j]:
            panel_ok_odd = False
    seen[m, 0] = stamp
    head, tail = 0, 0
    queue[tail] = m * 2
    tail += 1
    while head < tail:
        state = queue[head]
        head += 1
        v, parity = state // 2, state % 2
        want = p if parity == 0 else q
        for k in range(start_at[v], start_at[v + 1]):
            e = inc[k]
            if col[e] != want or not (allowed[e, p] and allowed[e, q]):
                continue
            w = b[e] if a[e] == v else a[e]
            wp = 1 - parity
            if seen[w, wp] == stamp:
                continue
            seen[w, wp] = stamp
            par_v[w, wp] = state
            par_e[w, wp] = e
            queue[tail] = w * 2 + wp
            tail += 1
            odd = wp == 1
            if w == m or (odd and not panel_ok_odd):
                continue
            end = _delta(x, los, his, ws, w, p, q) if odd else _delta(x, los, his, ws, w, q, p)
            if start + end < 0:
                length = 0
                s = w * 2 + wp
                while s != m * 2:
                    sv, sp = s // 2, s % 2
                    path[length] = par_e[sv, sp]
                    length += 1
                    s = par_v[sv, sp]
                path[:length] = path[:length][::-1].copy()
                distinct = True
                for i in range(length):
                    if edge_mark[path[i]] == stamp:
                        distinct = False
                    edge_mark[path[i]] = stamp
                if distinct:
                    return length
    return -1


@numba.njit(cache=True)
def weighted_repair(a, b, col, x, los, his, ws, floor, glo, ghi, allowed, max_sweeps):
    """Recolour alternating two-judge paths while that lowers the weighted cost (in place).

    Parameters
    ----------
    a, b : ndarray of int64, shape (n,)
        Model codes of the matches.
    col : ndarray of int64, shape (n,)
        Judge codes, repaired in place.
    x : ndarray of int64, shape (M, J)
        Plan counts per model and judge (kept equal to ``col``).
    los, his : ndarray of int64, shape (S, M, J)
        Soft bounds, each of weight ``ws[s]`` per unit of violation.
    ws : ndarray of int64, shape (S,)
    floor : ndarray of int64, shape (M,)
        Lower bounds of each model's cost (models at theirs are not started from).
    glo, ghi : ndarray of int64, shape (J,)
        Hard panel bounds.
    allowed : ndarray of bool, shape (n, J)
    max_sweeps : int
    """
    n, n_models, n_judges = a.size, x.shape[0], x.shape[1]
    start_at = np.zeros(n_models + 1, dtype=np.int64)  # incidence lists (CSR, edge order)
    for e in range(n):
        start_at[a[e] + 1] += 1
        start_at[b[e] + 1] += 1
    for v in range(n_models):
        start_at[v + 1] += start_at[v]
    fill = start_at[:-1].copy()
    inc = np.empty(2 * n, dtype=np.int64)
    for e in range(n):
        inc[fill[a[e]]] = e
        fill[a[e]] += 1
        inc[fill[b[e]]] = e
        fill[b[e]] += 1
    g = np.zeros(n_judges, dtype=np.int64)
    for e in range(n):
        g[col[e]] += 1
    seen = np.zeros((n_models, 2), dtype=np.int64)
    par_v = np.zeros((n_models, 2), dtype=np.int64)
    par_e = np.zeros((n_models, 2), dtype=np.int64)
    queue = np.empty(2 * n_models, dtype=np.int64)
    path = np.empty(2 * n_models, dtype=np.int64)
    edge_mark = np.zeros(n, dtype=np.int64)
    stamp = 0
    over = np.empty(n_models, dtype=np.int64)
    moves = np.empty((n_judges * n_judges, 2), dtype=np.int64)
    for _ in range(max_sweeps):
        improved = False
        n_over = 0
        for v in range(n_models):
            cost = 0
            for s in range(ws.size):
                for j in range(n_judges):
                    cost += ws[s] * (max(x[v, j] - his[s, v, j], 0)
                                     + max(los[s, v, j] - x[v, j], 0))  # fmt: skip
            if cost > floor[v]:
                over[n_over] = v
                n_over += 1
        for i in range(n_over):
            m = over[i]
            n_moves = 0
            for p in range(n_judges):
                for q in range(n_judges):
                    if p != q and x[m, p] > 0 and _delta(x, los, his, ws, m, p, q) < 0:
                        moves[n_moves, 0], moves[n_moves, 1] = p, q
                        n_moves += 1
            for k in range(n_moves):
                p, q = moves[k, 0], moves[k, 1]
                stamp += 1
                length = _cost_path(m, p, q, a, b, col, start_at, inc, x, los, his, ws, g, glo,
                                    ghi, allowed, seen, stamp, par_v, par_e, queue, path,
                                    edge_mark)  # fmt: skip
                if length >= 0:
                    for r in range(length):
                        e = path[r]
                        old, new = (p, q) if r % 2 == 0 else (q, p)
                        col[e] = new
                        x[a[e], old] -= 1
                        x[a[e], new] += 1
                        x[b[e], old] -= 1
                        x[b[e], new] += 1
                        g[old] -= 1
                        g[new] += 1
                    improved = True
                    break
        if not improved:
            return


def as_arrays(soft) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """``soft`` (``(lo, hi, weight), ...``) as the stacked arrays of :func:`weighted_repair`."""
    los = np.ascontiguousarray(np.stack([lo for lo, _, _ in soft]), dtype=np.int64)
    his = np.ascontiguousarray(np.stack([hi for _, hi, _ in soft]), dtype=np.int64)
    return los, his, np.array([w for _, _, w in soft], dtype=np.int64)
