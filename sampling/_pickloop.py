"""The active phase of a plan as one compiled loop: every pick from scores to judge turn.

:meth:`sampling.picker.Picker.pick` and :meth:`~sampling.picker.Picker.record` are the NumPy
form of the rule, a few dozen vectorised calls per pick; at 100 models their overhead is most
of a millisecond per pick. :func:`active_picks` runs the same rule, pick after pick, in one
numba kernel over the same arrays, and the planner falls back to the :class:`Picker` (the
kernel's NumPy twin, tested pick for pick equal) for anything the kernel does not do:

* scores: :func:`sampling.criteria.pair_reduction` of every candidate pair, and the rank-one
  update of the covariance and its square (:func:`sampling.criteria.record_comparison`,
  same operations in the same order, the dot product through the same BLAS call);
* feasibility: per model and strict task level a bitset of the tasks (:func:`task_levels`);
  the pairs matrices of :class:`sampling.feasibility.PairFeasibility` are refreshed for the
  two picked models from the bitsets and each pair's non-fresh cells;
* the choice of the pair (share cap, task levels, judge fits, then the slack levels), of the
  task and of the judge (:class:`sampling.judges.JudgeTurns`), each with its random tie-break
  drawn from the plan's generator in the same order and number as the :class:`Picker`, so a
  seed gives the same plan on either path.

The kernel stops with a status instead of deciding what only the :class:`Picker` decides: no
active pair left (a balanced pick would follow), or more forfeit rows than its buffers hold.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["DONE", "FULL", "NO_PAIR", "active_picks", "task_bitsets"]

DONE, NO_PAIR, FULL = 0, 1, 2  # statuses of active_picks
_BIG = np.iinfo(np.int64).max // 4
_MAXINT = np.iinfo(np.int64).max


@numba.njit(cache=True)
def _set_levels(bits, x, usable, playable, task_n, plan_task_n):
    """Bitsets of model ``x``'s tasks at the three strict levels (``task_levels`` & playable)."""
    t_count = usable.shape[1]
    total_min = _BIG
    plan_min = _BIG
    for t in range(t_count):
        if usable[x, t]:
            total_min = min(total_min, task_n[x, t])
            plan_min = min(plan_min, plan_task_n[x, t])
    pam_min = _BIG  # lowest plan count among the tasks at the lowest total
    for t in range(t_count):
        total = task_n[x, t] if usable[x, t] else _BIG
        if total == total_min:
            pam_min = min(pam_min, plan_task_n[x, t] if usable[x, t] else _BIG)
    bits[:, x, :] = 0
    for t in range(t_count):
        if not playable[x, t]:
            continue
        total, plan = task_n[x, t], plan_task_n[x, t]  # usable here
        word, bit = t >> 6, np.uint64(1) << np.uint64(t & 63)
        if total == total_min and plan == pam_min:
            bits[0, x, word] |= bit
        if plan == plan_min and total <= total_min + 1:
            bits[1, x, word] |= bit
        if plan == plan_min:
            bits[2, x, word] |= bit


@numba.njit(cache=True)
def task_bitsets(usable, playable, task_n, plan_task_n):
    """Level bitsets of every model, shape (3, M, ceil(T / 64)) (see :func:`active_picks`)."""
    m, t_count = usable.shape
    bits = np.zeros((3, m, (t_count + 63) // 64), dtype=np.uint64)
    for x in range(m):
        _set_levels(bits, x, usable, playable, task_n, plan_task_n)
    return bits


@numba.njit(cache=True)
def _fresh(out, a, c, playable, pair_round, h_key, h_count, h_start, p_head, p_opp, p_task,
           p_next):  # fmt: skip
    """``out[t]``: task ``t`` is fresh for the pair ``(a, c)`` (``PairFeasibility.fresh``)."""
    t_count = out.size
    cnt = np.zeros(t_count, dtype=np.int64)
    lo = np.searchsorted(h_key[h_start[a]:h_start[a + 1]], c * t_count) + h_start[a]
    hi = np.searchsorted(h_key[h_start[a]:h_start[a + 1]], (c + 1) * t_count) + h_start[a]
    for s in range(lo, hi):
        cnt[h_key[s] - c * t_count] = h_count[s]
    planned = np.zeros(t_count, dtype=np.bool_)
    e = p_head[a]
    while e >= 0:
        if p_opp[e] == c:
            cnt[p_task[e]] += 1
            planned[p_task[e]] = True
        e = p_next[e]
    r = pair_round[a, c]
    for t in range(t_count):
        out[t] = playable[a, t] and playable[c, t] and cnt[t] == r and not planned[t]
    return cnt


@numba.njit(cache=True)
def _refresh_row(pairs, bits, x, pair_round, h_opp, h_task, h_count, h_start, p_head, p_opp,
                 p_task, p_next, gone):  # fmt: skip
    """Recompute row and column ``x`` of the pairs matrices (``PairFeasibility._row``).

    ``gone`` (M, W) is scratch space: per opponent, the bitset of the pair's non-fresh cells
    (history cells above the pair's round, and the plan's cells); a pair has a fresh task at
    a level when the two models' level bitsets share a bit outside it.
    """
    n_levels, m, n_words = bits.shape
    gone[:, :] = 0
    for s in range(h_start[x], h_start[x + 1]):
        y = h_opp[s]
        if h_count[s] > pair_round[x, y]:
            t = h_task[s]
            gone[y, t >> 6] |= np.uint64(1) << np.uint64(t & 63)
    e = p_head[x]
    while e >= 0:
        t = p_task[e]
        gone[p_opp[e], t >> 6] |= np.uint64(1) << np.uint64(t & 63)
        e = p_next[e]
    for lev in range(n_levels):
        for y in range(m):
            hit = np.uint64(0)
            for w in range(n_words):
                hit |= bits[lev, x, w] & bits[lev, y, w] & ~gone[y, w]
            v = hit != 0 and y != x
            pairs[lev, x, y] = v
            pairs[lev, y, x] = v


@numba.njit(cache=True)
def _better(neg, tie, best_neg, best_tie):
    """``(neg, tie)`` sorts strictly before the best so far (NaN scores last)."""
    if np.isnan(neg):
        neg = np.inf
    if neg != best_neg:
        return neg < best_neg
    return tie < best_tie


@numba.njit(cache=True)
def active_picks(n, rng, cov, gram, weight, scale2, ok_model, has_fresh, pair_round, pairs,
                 usable, playable, failed, task_n, plan_task_n, plan_n, cap, h_key, h_count,
                 h_start, judge_total, judge_left, judge_plan, allowed, routed,
                 capacity):  # fmt: skip
    """Pick active matches until ``n`` of them are judged (:meth:`Picker.pick` and ``record``).

    Every array is updated in place, as the :class:`~sampling.picker.Picker` updates its own:
    ``cov``, ``gram`` (M, M) float; ``has_fresh``, ``pair_round`` (M, M); ``pairs`` (3, M, M)
    bool (:attr:`PairFeasibility.pairs`); ``task_n``, ``plan_task_n`` (M, T); ``plan_n`` (M,);
    ``judge_total``, ``judge_plan`` (M, J) and ``judge_left`` (J,) (:class:`JudgeTurns`).
    Read only: ``weight`` (M, M), ``scale2``, ``ok_model`` (M,) (plannable and fitted),
    ``usable``, ``playable``, ``failed`` (M, T), ``cap`` (-1: none), the history's cells per
    model ``h_key``, ``h_count``, ``h_start`` (:class:`sampling.pairs.PairCounts`), ``allowed``
    (T, J) with ``routed``.

    Returns
    -------
    status : int
        ``DONE``, ``NO_PAIR`` (no active pair is allowed: the next pick is balanced) or
        ``FULL`` (``capacity`` picks made, forfeits included).
    n_picks : int
    a, c, task, judge : ndarray of int, shape (capacity,)
        The picks in order (``judge`` -1 for forfeits).
    score : ndarray of float, shape (capacity,)
    """
    m, t_count = usable.shape
    n_judges = judge_left.size
    n_pairs = m * (m - 1) // 2
    h_opp = h_key // t_count
    h_task = h_key - h_opp * t_count
    bits = task_bitsets(usable, playable, task_n, plan_task_n)
    out_a = np.empty(capacity, dtype=np.int64)
    out_c = np.empty(capacity, dtype=np.int64)
    out_t = np.empty(capacity, dtype=np.int64)
    out_j = np.full(capacity, -1, dtype=np.int64)
    out_s = np.empty(capacity, dtype=np.float64)
    p_head = np.full(m, -1, dtype=np.int64)  # planned cells per model, as linked lists
    p_opp = np.empty(2 * capacity, dtype=np.int64)
    p_task = np.empty(2 * capacity, dtype=np.int64)
    p_next = np.empty(2 * capacity, dtype=np.int64)
    fresh = np.zeros(t_count, dtype=np.bool_)
    gone = np.zeros((m, bits.shape[2]), dtype=np.uint64)
    least = np.zeros((m, n_judges), dtype=np.bool_)
    d = np.empty(m)
    gd = np.empty(m)
    u = np.empty(m)
    v = np.empty(m)
    n_judged = 0
    k = 0
    while n_judged < n:
        if k == capacity:
            return FULL, k, out_a, out_c, out_t, out_j, out_s
        # --- candidates and their scores (Picker.ranking) --------------------------------
        tie = rng.random(n_pairs)
        for i in range(m):
            d[i] = cov[i, i]
            gd[i] = gram[i, i]
            lo_j = judge_total[i, 0]
            for j in range(1, n_judges):
                lo_j = min(lo_j, judge_total[i, j])
            for j in range(n_judges):
                least[i, j] = judge_total[i, j] == lo_j
        # best per (cap pass, step): step 2 * level + (0 if a judge fits else 1)
        best = np.full((2, 6), -1, dtype=np.int64)
        best_neg = np.full((2, 6), np.inf)
        best_tie = np.full((2, 6), np.inf)
        best_score = np.zeros((2, 6))
        best_a = np.zeros((2, 6), dtype=np.int64)
        best_c = np.zeros((2, 6), dtype=np.int64)
        any_pair = False
        min_step = np.array([6, 6])  # per pass, the lowest step seen: only it can win
        p = -1
        for i in range(m):
            for j in range(i + 1, m):
                p += 1
                if not (ok_model[i] and ok_model[j] and has_fresh[i, j]):
                    continue
                any_pair = True
                level = -1
                for lev in range(3):
                    if pairs[lev, i, j]:
                        level = lev
                        break
                if level < 0:
                    continue
                under = cap >= 0 and plan_n[i] < cap and plan_n[j] < cap
                if 2 * level > min_step[1] and (not under or 2 * level > min_step[0]):
                    continue  # a lower step allows some pair in each pass it is in
                step = 2 * level + (0 if _judge_fits(i, j, least, judge_left) else 1)
                if step > min_step[1] and (not under or step > min_step[0]):
                    continue
                score = _pair_score(i, j, d, gd, cov, gram, weight, scale2)
                for ps in range(2):
                    if (ps == 0 and not under) or step > min_step[ps]:
                        continue
                    min_step[ps] = step
                    if best[ps, step] < 0 or _better(-score, tie[p], best_neg[ps, step],
                                                     best_tie[ps, step]):  # fmt: skip
                        neg = -score
                        best[ps, step] = p
                        best_neg[ps, step] = np.inf if np.isnan(neg) else neg
                        best_tie[ps, step] = tie[p]
                        best_score[ps, step] = score
                        best_a[ps, step] = i
                        best_c[ps, step] = j
        if not any_pair:
            return NO_PAIR, k, out_a, out_c, out_t, out_j, out_s
        # --- the first step that allows a pair (Picker.pick) ------------------------------
        a = -1
        c = -1
        score = 0.0
        n_task = 0
        task_ok = np.zeros(t_count, dtype=np.bool_)
        for ps in range(1 if cap < 0 else 0, 2):
            for step in range(6):
                if best[ps, step] >= 0:
                    a, c, score = best_a[ps, step], best_c[ps, step], best_score[ps, step]
                    _fresh(fresh, a, c, playable, pair_round, h_key, h_count, h_start,
                           p_head, p_opp, p_task, p_next)  # fmt: skip
                    lev = step // 2
                    for t in range(t_count):
                        word, bit = t >> 6, np.uint64(1) << np.uint64(t & 63)
                        task_ok[t] = fresh[t] and (bits[lev, a, word] & bits[lev, c, word]
                                                   & bit) != 0  # fmt: skip
                    break
            if a >= 0:
                break
            a, c, score = _slack_pick(task_ok, ps, cap, tie, cov, gram, weight, scale2, d,
                                      gd, ok_model, has_fresh, least, judge_left, plan_n,
                                      usable, playable, plan_task_n, pair_round, h_key,
                                      h_count, h_start, p_head, p_opp, p_task,
                                      p_next)  # fmt: skip
            if a >= 0:
                break
        if a < 0:
            return NO_PAIR, k, out_a, out_c, out_t, out_j, out_s
        # --- the task (Picker._task) ------------------------------------------------------
        for t in range(t_count):
            n_task += task_ok[t]
        ties = rng.random(n_task)
        best_t = -1
        key1 = _MAXINT
        key2 = _MAXINT
        key3 = np.inf
        s = -1
        for t in range(t_count):
            if not task_ok[t]:
                continue
            s += 1
            k1 = plan_task_n[a, t] + plan_task_n[c, t]
            k2 = task_n[a, t] + task_n[c, t]
            if (k1 < key1 or (k1 == key1 and (k2 < key2 or (k2 == key2 and ties[s] < key3)))):
                best_t, key1, key2, key3 = t, k1, k2, ties[s]
        t = best_t
        # --- record (Picker.record) -------------------------------------------------------
        task_n[a, t] += 1
        task_n[c, t] += 1
        for side in range(2):
            x, y = (a, c) if side == 0 else (c, a)
            e = 2 * k + side
            p_opp[e], p_task[e], p_next[e] = y, t, p_head[x]
            p_head[x] = e
        judged = not (failed[a, t] or failed[c, t])
        if judged:
            out_j[k] = _take(a, c, t, rng, judge_total, judge_left, judge_plan, allowed, routed)
            n_judged += 1
        plan_task_n[a, t] += 1
        plan_task_n[c, t] += 1
        plan_n[a] += 1
        plan_n[c] += 1
        cnt = _fresh(fresh, a, c, playable, pair_round, h_key, h_count, h_start, p_head, p_opp,
                     p_task, p_next)  # fmt: skip
        if not fresh.any():  # a new round for the pair
            r = _MAXINT
            for tt in range(t_count):
                if playable[a, tt] and playable[c, tt]:
                    r = min(r, cnt[tt])
            pair_round[a, c] = r
            pair_round[c, a] = r
            _fresh(fresh, a, c, playable, pair_round, h_key, h_count, h_start, p_head, p_opp,
                   p_task, p_next)  # fmt: skip
            has_fresh[a, c] = fresh.any()
            has_fresh[c, a] = has_fresh[a, c]
        _set_levels(bits, a, usable, playable, task_n, plan_task_n)
        _set_levels(bits, c, usable, playable, task_n, plan_task_n)
        for x in (a, c):
            _refresh_row(pairs, bits, x, pair_round, h_opp, h_task, h_count, h_start, p_head,
                         p_opp, p_task, p_next, gone)  # fmt: skip
        if ok_model[a] and ok_model[c]:
            _rank_one(cov, gram, a, c, weight[a, c], u, v)
        out_a[k], out_c[k], out_t[k], out_s[k] = a, c, t, score
        k += 1
    return DONE, k, out_a, out_c, out_t, out_j, out_s


@numba.njit(cache=True)
def _take(a, c, t, rng, total, left, plan, allowed, routed):
    """``JudgeTurns.take``: the judge of the match, counted (ties drawn from ``rng``)."""
    n_judges = left.size
    ta_min, tc_min = total[a].min(), total[c].min()
    pa_min, pc_min = plan[a].min(), plan[c].min()
    r = rng.random(n_judges)
    best = -1
    k1 = k2 = k3 = _MAXINT
    k4 = np.inf
    for j in range(n_judges):
        ok = left[j] > 0 and (not routed or allowed[t, j])
        over = (total[a, j] - ta_min) + (total[c, j] - tc_min) if ok else _MAXINT
        plan_over = (plan[a, j] - pa_min) + (plan[c, j] - pc_min)
        neg_left = -left[j]
        if best < 0 or over < k1 or (over == k1 and (
                plan_over < k2 or (plan_over == k2 and (
                    neg_left < k3 or (neg_left == k3 and r[j] < k4))))):  # fmt: skip
            best, k1, k2, k3, k4 = j, over, plan_over, neg_left, r[j]
    left[best] -= 1
    total[a, best] += 1
    total[c, best] += 1
    plan[a, best] += 1
    plan[c, best] += 1
    return best


@numba.njit(cache=True)
def _rank_one(cov, gram, i, j, weight, u, v):
    """``record_comparison`` in place, with the same operations in the same order."""
    m = cov.shape[0]
    for p in range(m):
        u[p] = cov[p, i] - cov[p, j]
        v[p] = gram[p, i] - gram[p, j]
    quad = max(u[i] - u[j], 0.0)
    alpha = weight / (1.0 + weight * quad)
    s = alpha * alpha * np.dot(u, u)
    for p in range(m):
        for q in range(m):
            uu = u[p] * u[q]
            cov[p, q] -= alpha * uu
            gram[p, q] -= alpha * (v[p] * u[q] + v[q] * u[p]) - s * uu


@numba.njit(cache=True)
def _slack_pick(task_ok, ps, cap, tie, cov, gram, weight, scale2, d, gd, ok_model, has_fresh,
                least, judge_left, plan_n, usable, playable, plan_task_n, pair_round, h_key,
                h_count, h_start, p_head, p_opp, p_task, p_next):  # fmt: skip
    """The slack levels of ``Picker.pick`` (rare): one, two, ... above each model's lowest
    count in this plan, for cap pass ``ps``; ``(-1, -1, 0.0)`` if none allows a pair."""
    m, t_count = usable.shape
    plan_min = np.full(m, _BIG, dtype=np.int64)
    spread = 0
    for x in range(m):
        for t in range(t_count):
            if usable[x, t]:
                plan_min[x] = min(plan_min[x], plan_task_n[x, t])
    for x in range(m):
        for t in range(t_count):
            if usable[x, t]:
                spread = max(spread, plan_task_n[x, t] - plan_min[x])
    fresh = np.zeros(t_count, dtype=np.bool_)
    for slack in range(1, spread + 1):
        best_a = np.full(2, -1, dtype=np.int64)  # [fits, any]
        best_c = np.zeros(2, dtype=np.int64)
        best_neg = np.full(2, np.inf)
        best_tie = np.full(2, np.inf)
        best_score = np.zeros(2)
        p = -1
        for i in range(m):
            for j in range(i + 1, m):
                p += 1
                if not (ok_model[i] and ok_model[j] and has_fresh[i, j]):
                    continue
                if ps == 0 and not (plan_n[i] < cap and plan_n[j] < cap):
                    continue
                _fresh(fresh, i, j, playable, pair_round, h_key, h_count, h_start, p_head,
                       p_opp, p_task, p_next)  # fmt: skip
                hit = False
                for t in range(t_count):
                    if fresh[t] and _slack_ok(i, t, slack, usable, plan_task_n, plan_min) \
                            and _slack_ok(j, t, slack, usable, plan_task_n, plan_min):
                        hit = True
                        break
                if not hit:
                    continue
                score = _pair_score(i, j, d, gd, cov, gram, weight, scale2)
                fits = _judge_fits(i, j, least, judge_left)
                for f in range(2):
                    if f == 0 and not fits:
                        continue
                    if best_a[f] < 0 or _better(-score, tie[p], best_neg[f], best_tie[f]):
                        neg = -score
                        best_a[f], best_c[f], best_score[f] = i, j, score
                        best_neg[f] = np.inf if np.isnan(neg) else neg
                        best_tie[f] = tie[p]
        for f in range(2):
            if best_a[f] >= 0:
                a, c = best_a[f], best_c[f]
                _fresh(fresh, a, c, playable, pair_round, h_key, h_count, h_start, p_head,
                       p_opp, p_task, p_next)  # fmt: skip
                for t in range(t_count):
                    task_ok[t] = fresh[t] and _slack_ok(a, t, slack, usable, plan_task_n,
                                                        plan_min) and _slack_ok(
                        c, t, slack, usable, plan_task_n, plan_min)  # fmt: skip
                return a, c, best_score[f]
    return -1, -1, 0.0


@numba.njit(cache=True, inline="always")
def _pair_score(i, j, d, gd, cov, gram, weight, scale2):
    """``Picker.ranking``'s score of pair ``(i, j)`` from the covariance and its square
    (``d``, ``gd``: their diagonals)."""
    quad = max(d[i] + d[j] - 2.0 * cov[i, j], 0.0)
    norm2 = max(gd[i] + gd[j] - 2.0 * gram[i, j], 0.0)
    w = weight[i, j]
    return w * norm2 / (1.0 + w * quad) * scale2


@numba.njit(cache=True, inline="always")
def _judge_fits(i, j, least, judge_left):
    """Has some judge with turns left the lowest count of both ``i`` and ``j``?"""
    for jj in range(judge_left.size):
        if judge_left[jj] > 0 and least[i, jj] and least[j, jj]:
            return True
    return False


@numba.njit(cache=True, inline="always")
def _slack_ok(x, t, slack, usable, plan_task_n, plan_min):
    """``slack_levels``'s mask at ``(x, t)``: the plan count within ``slack`` of the lowest."""
    plan = plan_task_n[x, t] if usable[x, t] else _BIG
    return plan <= plan_min[x] + slack

