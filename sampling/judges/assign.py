"""Judge assignment: judges in turn, balanced overall and within each model's matches.

Every model (and the panel as a whole) gets per-judge bounds for the plan: the history plus the
plan should be level (counts differ by at most one), and so should the plan alone when both can
hold. Colouring the planned matches (edges) with judges within those bounds is a constrained
edge colouring, which has no solution for some plans (a triangle with two judges). The search is:

1. a greedy pass in pick order within exact panel quotas (:class:`JudgeTurns`; the planner
   hands judges out while it picks, and prefers pairs whose two models both still need one
   judge);
2. repairs along alternating two-judge paths (Kempe chains): recolouring a path changes the
   counts of its two end models only;
3. if the weighted violation is still above its lower bound (each model's best split of its
   own matches, ignoring the others: :func:`_floor`; at the bound the assignment is optimal and
   the search stops), a small integer programme (HiGHS via :func:`scipy.optimize.milp`,
   deterministic node limit) that minimises it, for plans of up to ``_MILP_MAX_VARS`` (1,500)
   match x judge variables. Larger plans (more than 500 matches for three judges) skip 2 and
   3 and repair along alternating paths on the weighted violation itself
   (:func:`_weighted_repair`, run as one compiled loop, :mod:`sampling.judges.assign_numba`, once
   numba is loaded): the integer programme took seconds there and stopped at its node limit without
   proving optimality. The problem is an edge colouring with per-vertex bounds, not a flow:
   with bounds of one match per judge it decides whether a graph's edges can be coloured with
   J colours, which is NP-complete, so no exact method is fast on every plan.

With routing (some tasks allow only some judges, :mod:`sampling.judges.routing`), each match carries
its allowed judges: the panel's counts are the best levels the routing allows
(:func:`sampling.judges.routing.panel_targets`), the greedy pass fills them group by group (matches
with the same allowed judges), and repairs and the integer programme never give a match a judge
it does not allow. Each model's per-judge bounds stay those of an unrouted panel; where the
routing makes them unreachable, the violation is only minimised.

The result is deterministic for a given generator state.
"""

from __future__ import annotations

import sys
from collections import deque

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import coo_matrix, hstack, identity

from ratings.kit import kernel_ready
from sampling.judges.routing import panel_targets

__all__ = ["JudgeTurns", "assign_judges", "level_bounds", "repair_ready"]

_MAX_SWEEPS = 20
_MILP_NODES = 500
_MILP_MAX_VARS = 1_500  # larger plans: repairs on the weighted cost instead (see assign_judges)
_TOTAL_WEIGHT = 10  # a unit of history + plan imbalance costs as much as 10 within the plan


def _water_level(h: NDArray[np.int64], d: NDArray[np.int64]) -> NDArray[np.int64]:
    """Per row, the largest level F with ``sum_j max(0, F - h_j) <= d``.

    That sum is the largest of ``k F - S_k`` over ``k >= 0``, with ``S_k`` the sum of the ``k``
    lowest counts, so F is the least of ``(d + S_k) // k`` over ``k >= 1``.
    """
    low = np.cumsum(np.sort(h, axis=1), axis=1)
    k = np.arange(1, h.shape[1] + 1)
    return ((np.asarray(d)[:, None] + low) // k).min(axis=1)


def level_bounds(
    h: NDArray[np.int64], d: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Bounds on per-judge plan counts that keep counts level.

    Parameters
    ----------
    h : ndarray of int, shape (K, J)
        Counts so far per row (a model, or the panel) and judge.
    d : ndarray of int, shape (K,)
        Matches planned per row.

    Returns
    -------
    lo, hi, lo_total, hi_total : ndarray of int, shape (K, J)
        With ``F`` the water level, ``h + x`` is level (spread at most one) for
        ``lo_total = max(0, F - h) <= x <= hi_total = max(0, F + 1 - h)``. ``lo, hi`` also
        keep the plan itself level (``d // J <= x <= d // J + 1``) in the rows where both fit.
    """
    h = np.asarray(h, dtype=np.int64)
    d = np.asarray(d, dtype=np.int64)
    level = _water_level(h, d)[:, None]
    lo_t = np.maximum(level - h, 0)
    hi_t = np.maximum(level + 1 - h, 0)
    q = (d // h.shape[1])[:, None]
    lo2, hi2 = np.maximum(lo_t, q), np.minimum(hi_t, q + 1)
    ok = (lo2 <= hi2).all(axis=1) & (lo2.sum(axis=1) <= d) & (hi2.sum(axis=1) >= d)
    return np.where(ok[:, None], lo2, lo_t), np.where(ok[:, None], hi2, hi_t), lo_t, hi_t


class JudgeTurns:
    """Judges handed out match by match: exact panel quotas, each model's least-used judges.

    Parameters
    ----------
    judge_n : ndarray of int, shape (M, J)
        Matches per model and judge so far (history).
    judge_total : ndarray of int, shape (J,)
        Matches per judge so far (history).
    n : int
        Matches to plan; the quotas level the panel over history + plan (and within the plan).
    rng : numpy.random.Generator
        Breaks ties.
    routed : bool, default=False
        Some tasks allow only some judges: the panel's counts depend on the tasks picked, so
        no quotas are set here (:func:`assign_judges` levels the panel at the end).
    """

    def __init__(self, judge_n, judge_total, n: int, rng: np.random.Generator,
                 routed: bool = False) -> None:  # fmt: skip
        lo, hi = (x[0] for x in level_bounds(judge_total[None, :], np.array([n]))[:2])
        bump = [j for j in rng.permutation(lo.size) if hi[j] > lo[j]][: n - int(lo.sum())]
        self.left = np.full(lo.size, n, dtype=np.int64) if routed else lo.copy()
        if not routed:
            self.left[bump] += 1
        self.total = np.array(judge_n, dtype=np.int64, copy=True)
        self.plan = np.zeros_like(self.total)
        self.rng = rng
        self.given: list[int] = []

    def fits(self) -> NDArray[np.bool_]:
        """``fits[a, c]``: a judge with quota left is among the least used by both models."""
        least = (self.total == self.total.min(axis=1, keepdims=True)).astype(np.float64)
        return (least * (self.left > 0)) @ least.T > 0.5

    def take(self, a: int, c: int, allowed: NDArray[np.bool_] | None = None) -> int:
        """Give the next match (``a`` vs ``c``) a judge (one of ``allowed``) and count it."""
        ta, tc, pa, pc = self.total[a], self.total[c], self.plan[a], self.plan[c]
        ok = self.left > 0 if allowed is None else (self.left > 0) & allowed
        over = np.where(ok, (ta - ta.min()) + (tc - tc.min()), np.iinfo(np.int64).max)
        plan_over = (pa - pa.min()) + (pc - pc.min())
        j = int(np.lexsort((self.rng.random(self.left.size), -self.left, plan_over, over))[0])
        self.left[j] -= 1
        for m in (a, c):
            self.total[m, j] += 1
            self.plan[m, j] += 1
        self.given.append(j)
        return j


def _violation(x: NDArray, lo: NDArray, hi: NDArray) -> NDArray:
    return (np.maximum(x - hi, 0) + np.maximum(lo - x, 0)).sum(axis=-1)


def assign_judges(
    a: NDArray[np.int64],
    b: NDArray[np.int64],
    judge_n: NDArray[np.int64],
    judge_total: NDArray[np.int64],
    rng: np.random.Generator,
    initial: NDArray[np.int64] | None = None,
    allowed: NDArray[np.bool_] | None = None,
) -> NDArray[np.int64]:
    """Give each match ``(a[k], b[k])`` a judge code.

    Parameters
    ----------
    a, b : ndarray of int, shape (n,)
        Model codes of the planned matches.
    judge_n : ndarray of int, shape (M, J)
        Matches per model and judge so far (history).
    judge_total : ndarray of int, shape (J,)
        Matches per judge so far (history).
    rng : numpy.random.Generator
        Breaks ties between judges.
    initial : ndarray of int, shape (n,), optional
        A first assignment within the panel bounds (e.g. :attr:`JudgeTurns.given`) to repair
        instead of the greedy pass (ignored with ``allowed``).
    allowed : ndarray of bool, shape (n, J), optional
        The judges each match may go to (routing); default: any.

    Returns
    -------
    ndarray of int, shape (n,)
        Judge codes in ``[0, J)``.
    """
    n, n_judges = a.size, judge_total.size
    deg = np.bincount(a, minlength=judge_n.shape[0]) + np.bincount(b, minlength=judge_n.shape[0])
    lo, hi, lo_t, hi_t = level_bounds(judge_n, deg)
    q = np.repeat((deg // n_judges)[:, None], n_judges, axis=1)
    if allowed is None:
        glo, ghi = (x[0] for x in level_bounds(judge_total[None, :], np.array([n]))[:2])
        group, gq_lo, gq_hi = np.zeros(n, dtype=np.int64), glo[None, :], ghi[None, :]
        ok = np.ones((n, n_judges), dtype=bool)
    else:
        ok = np.asarray(allowed, dtype=bool)
        target = panel_targets(ok, judge_total, rng)
        glo = ghi = target.plan
        group, gq_lo, gq_hi = target.group, target.quota, target.quota
        initial = None

    def cost(col: NDArray[np.int64]) -> int:  # overall balance first, then within the plan
        x = np.zeros_like(lo)
        np.add.at(x, (a, col), 1)
        np.add.at(x, (b, col), 1)
        return int(_TOTAL_WEIGHT * _violation(x, lo_t, hi_t).sum() + _violation(x, q, q + 1).sum())

    if initial is None:
        col = _greedy(a, b, lo, hi, gq_lo, gq_hi, rng.permutation(n_judges), group)
    else:
        col = np.array(initial, dtype=np.int64, copy=True)
    x = np.zeros_like(lo)
    np.add.at(x, (a, col), 1)
    np.add.at(x, (b, col), 1)
    soft = ((lo_t, hi_t, _TOTAL_WEIGHT), (q, q + 1, 1))
    floor = _floor(deg, soft)
    if n * n_judges > _MILP_MAX_VARS:  # large plans: repairs on the weighted cost itself
        if _compiled_repair():
            from sampling.judges import assign_numba  # numba: imported only once it is loaded

            assign_numba.weighted_repair(a, b, col, x, *assign_numba.as_arrays(soft), floor,
                                    np.asarray(glo, dtype=np.int64),
                                    np.asarray(ghi, dtype=np.int64), ok, _MAX_SWEEPS)  # fmt: skip
        else:
            _weighted_repair(a, b, col, x, soft, floor, glo, ghi, ok)
        return col
    first = col.copy()
    _kempe_repair(a, b, col, x, lo, hi, glo, ghi, ok)  # works on the combined bounds
    if cost(first) < cost(col):
        col = first
    if cost(col) <= floor.sum():  # every model at its own optimum: nothing can do better
        return col
    alt = _milp(a, b, ok, *soft, glo, ghi)
    if alt is not None and cost(alt) < cost(col):
        col = alt
    return col


def _compiled_repair() -> bool:
    """Whether large plans are repaired by the compiled loop (:mod:`sampling.judges.assign_numba`,
    the same paths as :func:`_weighted_repair`): once numba is loaded (large plans load it for
    their picks), so a plan never pays numba's start-up for its judges alone, and only when the
    loop runs without compiling (:func:`repair_ready`)."""
    return "numba" in sys.modules and repair_ready()


def repair_ready() -> bool:
    """Is the compiled repair compiled in this process or in numba's on-disk cache
    (:func:`ratings.kit.kernel_ready`)? Imports numba."""
    from sampling.judges import assign_numba

    return kernel_ready(assign_numba.weighted_repair)


def _model_cost(x: NDArray, soft) -> NDArray:
    """Weighted violation of the soft bounds per row of ``x`` (K, J)."""
    return sum(w * _violation(x, lo, hi) for lo, hi, w in soft)


def _floor(deg: NDArray[np.int64], soft) -> NDArray[np.int64]:
    """Per model, the least weighted violation of its own bounds over every split of its
    ``deg`` matches among the judges (ignoring the other models and the panel): a lower bound
    on its cost in any assignment. The cost is separable and convex in each judge's count, so
    adding one match at a time to the judge of least marginal cost is optimal."""
    x = np.zeros_like(soft[0][0])
    rows = np.arange(x.shape[0])

    def unit(value):  # weighted violation per model and judge at counts ``value``
        return sum(w * (np.maximum(value - hi, 0) + np.maximum(lo - value, 0))
                   for lo, hi, w in soft)  # fmt: skip

    for _ in range(int(deg.max(initial=0))):
        need = x.sum(axis=1) < deg
        j = (unit(x + 1) - unit(x)).argmin(axis=1)  # the judge of least marginal cost
        x[rows[need], j[need]] += 1
    return _model_cost(x, soft)


def _greedy(a, b, lo, hi, glo, ghi, order, group) -> NDArray[np.int64]:
    """Each match in turn takes the judge that keeps both models (and the panel) in bounds.

    ``glo``, ``ghi`` (G, J) bound each group's per-judge counts; ``group`` (n,) gives each
    match's group (one group without routing).
    """
    n = a.size
    x = np.zeros_like(lo)
    g = np.zeros_like(glo)
    left = np.bincount(group, minlength=glo.shape[0])
    col = np.empty(n, dtype=np.int64)
    eye = np.eye(glo.shape[1], dtype=np.int64)
    for k in range(n):
        i, j, s = a[k], b[k], group[k]
        left[s] -= 1
        g_next = g[s][None, :] + eye  # row c: counts if c is chosen
        feasible = (g[s] < ghi[s]) & (np.maximum(glo[s][None, :] - g_next, 0).sum(axis=1)
                                      <= left[s])  # fmt: skip
        over = (x[i] + 1 > hi[i]).astype(np.int64) + (x[j] + 1 > hi[j])
        need = (lo[i] - x[i]) + (lo[j] - x[j])
        cost = np.where(feasible, over, np.iinfo(np.int64).max)
        c = np.lexsort((order, g[s] - glo[s], -need, cost))[0]
        col[k] = c
        x[i, c] += 1
        x[j, c] += 1
        g[s, c] += 1
    return col


def _kempe_repair(a, b, col, x, lo, hi, glo, ghi, allowed) -> None:
    """Recolour alternating two-judge paths while that lowers the violation (in place)."""
    n_models = x.shape[0]
    inc: list[list[int]] = [[] for _ in range(n_models)]
    for e in range(a.size):
        inc[a[e]].append(e)
        inc[b[e]].append(e)
    for _ in range(_MAX_SWEEPS):
        improved = False
        for m in np.flatnonzero(_violation(x, lo, hi) > 0):
            over = np.flatnonzero(x[m] > lo[m])  # judges m can give up
            under = np.flatnonzero(x[m] < hi[m])  # judges m can take
            moves = [(p, q) for p in over for q in under if p != q]
            # most useful first: give up the most excess, take the most needed
            moves.sort(key=lambda pq: (hi[m, pq[0]] - x[m, pq[0]], x[m, pq[1]] - lo[m, pq[1]]))
            for p, q in moves:
                path = _alternating_path(m, p, q, a, b, col, inc, x, lo, hi, glo, ghi,
                                         allowed)  # fmt: skip
                if path is not None:
                    for k, e in enumerate(path):
                        old, new = (p, q) if k % 2 == 0 else (q, p)
                        col[e] = new
                        x[a[e], old] -= 1
                        x[b[e], old] -= 1
                        x[a[e], new] += 1
                        x[b[e], new] += 1
                    improved = True
                    break
        if not improved:
            return


def _alternating_path(m, p, q, a, b, col, inc, x, lo, hi, glo, ghi,
                      allowed) -> list[int] | None:  # fmt: skip
    """Shortest path from ``m`` recolouring p -> q, q -> p, ... that lowers the violation.

    Only the two ends change counts: ``m`` gives up one ``p`` and takes one ``q``; the far end
    does the same after an odd number of edges, the reverse after an even number. A path of
    odd length also moves one match from judge ``p`` to ``q`` in the panel totals. Only
    matches that allow both judges are recoloured.
    """
    g = np.bincount(col, minlength=glo.size)

    def delta(v: int, give: int, take: int) -> int:
        xv = x[v].copy()
        before = _violation(xv, lo[v], hi[v])
        xv[give] -= 1
        xv[take] += 1
        return int(_violation(xv, lo[v], hi[v]) - before)

    return _cost_path(m, p, q, a, b, col, inc, delta, g, glo, ghi, allowed)


def _weighted_repair(a, b, col, x, soft, floor, glo, ghi, allowed) -> None:
    """Recolour alternating two-judge paths while that lowers the weighted cost (in place).

    Like :func:`_kempe_repair`, on the cost that :func:`assign_judges` minimises rather than on
    one set of bounds; models already at their :func:`_floor` are not started from.
    """
    n_models, n_judges = x.shape
    bounds = [(lo.tolist(), hi.tolist(), w) for lo, hi, w in soft]

    def unit(v: int, j: int, value: int) -> int:
        return sum(w * (max(value - hi[v][j], 0) + max(lo[v][j] - value, 0))
                   for lo, hi, w in bounds)  # fmt: skip

    xl = x.tolist()  # kept equal to x

    def delta(v: int, give: int, take: int) -> int:
        xg, xt = xl[v][give], xl[v][take]
        return (unit(v, give, xg - 1) - unit(v, give, xg)
                + unit(v, take, xt + 1) - unit(v, take, xt))  # fmt: skip

    al, bl, ok = a.tolist(), b.tolist(), allowed.tolist()  # Python scalars for the searches
    cl = col.tolist()
    inc: list[list[int]] = [[] for _ in range(n_models)]
    for e in range(a.size):
        inc[al[e]].append(e)
        inc[bl[e]].append(e)
    g = np.bincount(col, minlength=n_judges)
    for _ in range(_MAX_SWEEPS):
        improved = False
        over = np.flatnonzero(_model_cost(x, soft) > floor)
        for m in over:
            moves = [(p, q) for p in range(n_judges) for q in range(n_judges)
                     if p != q and x[m, p] > 0 and delta(m, p, q) < 0]  # fmt: skip
            for p, q in moves:
                path = _cost_path(m, p, q, al, bl, cl, inc, delta, g, glo, ghi, ok)
                if path is not None:
                    for k, e in enumerate(path):
                        old, new = (p, q) if k % 2 == 0 else (q, p)
                        col[e] = cl[e] = new
                        for v in (al[e], bl[e]):
                            x[v, old] -= 1
                            x[v, new] += 1
                            xl[v][old] -= 1
                            xl[v][new] += 1
                        g[old] -= 1
                        g[new] += 1
                    improved = True
                    break
        if not improved:
            return


def _cost_path(m, p, q, a, b, col, inc, delta, g, glo, ghi, allowed) -> list[int] | None:
    """Shortest path from ``m`` recolouring p -> q, q -> p, ... that lowers ``delta``'s cost
    (see :func:`_alternating_path`; ``a``, ``b``, ``col`` and ``allowed`` as lists or arrays,
    ``allowed`` read as ``allowed[e][j]``)."""
    start = delta(m, p, q)
    gmove = g.copy()
    gmove[p] -= 1
    gmove[q] += 1
    panel_ok_odd = bool((gmove >= glo).all() and (gmove <= ghi).all())
    parent: dict[tuple[int, int], tuple[tuple[int, int], int]] = {}
    seen = {(m, 0)}
    queue = deque([(m, 0)])
    while queue:
        v, parity = queue.popleft()
        want = p if parity == 0 else q
        for e in inc[v]:
            if col[e] != want or not (allowed[e][p] and allowed[e][q]):
                continue
            w = b[e] if a[e] == v else a[e]
            state = (w, 1 - parity)
            if state in seen:
                continue
            seen.add(state)
            parent[state] = ((v, parity), e)
            queue.append(state)
            odd = state[1] == 1
            if w == m or (odd and not panel_ok_odd):
                continue
            end = delta(w, p, q) if odd else delta(w, q, p)
            if start + end < 0:
                path, s = [], state
                while s != (m, 0):
                    s, edge = parent[s]
                    path.append(edge)
                path.reverse()
                if len(set(path)) == len(path):
                    return path
    return None


def _milp(a, b, allowed, *bounds_and_panel) -> NDArray[np.int64] | None:
    """Minimise the weighted bound violations exactly (or up to the node limit).

    ``allowed`` (n, J) are the judges each match may take; ``bounds_and_panel`` is
    ``(lo, hi, weight), ..., glo, ghi``: soft per-model bounds, each with the weight of a unit
    of violation, then the hard panel bounds.
    """
    *soft, glo, ghi = bounds_and_panel
    n, n_judges = a.size, glo.size
    models = np.unique(np.concatenate([a, b]))
    ia, ib = np.searchsorted(models, a), np.searchsorted(models, b)
    nx, k = n * n_judges, models.size * n_judges
    n_slack = 2 * k * len(soft)
    edge = np.repeat(np.arange(n), n_judges)
    judge = np.tile(np.arange(n_judges), n)
    var = np.arange(nx)
    one = coo_matrix((np.ones(nx), (edge, var)), shape=(n, nx))
    panel = coo_matrix((np.ones(nx), (judge, var)), shape=(n_judges, nx))
    rows = np.concatenate([ia[edge] * n_judges + judge, ib[edge] * n_judges + judge])
    inc = coo_matrix((np.ones(2 * nx), (rows, np.concatenate([var, var]))), shape=(k, nx))
    eye = identity(k, format="coo")
    cons = [
        LinearConstraint(hstack([one, coo_matrix((n, n_slack))]), 1, 1),
        LinearConstraint(hstack([panel, coo_matrix((n_judges, n_slack))]), glo, ghi),
    ]
    cost = [np.zeros(nx)]
    for s, (lo, hi, weight) in enumerate(soft):  # A x + under - over in [lo, hi]
        blocks = [inc] + [coo_matrix((k, 2 * k))] * s + [hstack([eye, -eye])]
        blocks += [coo_matrix((k, 2 * k))] * (len(soft) - s - 1)
        cons.append(LinearConstraint(hstack(blocks), lo[models].ravel(), hi[models].ravel()))
        cost.append(np.full(2 * k, float(weight)))
    upper = np.concatenate([allowed.ravel().astype(np.float64), np.full(n_slack, np.inf)])
    res = milp(
        np.concatenate(cost), constraints=cons,
        integrality=np.concatenate([np.ones(nx), np.zeros(n_slack)]),
        bounds=Bounds(np.zeros(nx + n_slack), upper), options={"node_limit": _MILP_NODES},
    )  # fmt: skip
    if res.x is None:
        return None
    return res.x[:nx].reshape(n, n_judges).argmax(axis=1).astype(np.int64)
