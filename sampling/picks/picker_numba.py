"""The active phase of a plan as one compiled loop: every pick from scores to judge turn.

:meth:`sampling.picks.picker.Picker.pick` and :meth:`~sampling.picks.picker.Picker.record` are the
NumPy form of the rule, a few dozen vectorised calls per pick; at 100 models their overhead is most
of a millisecond per pick. :func:`active_picks` runs the same rule, pick after pick, in one
numba kernel over the same arrays, and the planner falls back to the :class:`Picker` (the
kernel's NumPy twin, tested pick for pick equal) for anything the kernel does not do:

* scores: :func:`sampling.picks.criteria.pair_reduction` of the candidate pairs, and the rank-one
  update of the covariance and its square (:func:`sampling.picks.criteria.record_comparison`,
  same operations in the same order, the dot product through the same BLAS call);
* feasibility: per model and strict task level a bitset of the tasks (:func:`task_levels`);
  the pairs matrices of :class:`sampling.board.feasibility.PairFeasibility` are one (M, M) matrix
  of each pair's lowest level, with the number of pairs per level, refreshed for the two
  picked models from the bitsets and each pair's non-fresh cells (history cells as bitset
  words, :func:`_history_words`); a pick scores only the pairs at the lowest level of its cap
  pass, a row at a time, and walks only the rows that may hold a better pair;
* the choice of the pair (share cap, task levels, judge fits, then the slack levels), of the
  task and of the judge (:class:`sampling.judges.assign.JudgeTurns`), each with its random tie-break
  from the plan's generator in the same order and number as the :class:`Picker`, so a seed
  gives the same plan, and leaves the generator in the same state, on either path. The loop
  keeps the PCG64 state itself (:mod:`sampling.picks.pcg64_numba`): a pick's tie-breaks of the
  pairs are skipped over in one jump and computed only when two scores are equal.

The kernel stops with a status instead of deciding what only the :class:`Picker` decides: no
active pair left (a balanced pick would follow), or more forfeit rows than its buffers hold.
"""

from __future__ import annotations

import numba
import numpy as np

from sampling.picks.pcg64_numba import advance, draw_at, next_double

__all__ = ["DONE", "FULL", "NO_PAIR", "active_picks", "task_bitsets"]

DONE, NO_PAIR, FULL = 0, 1, 2  # statuses of active_picks
_BIG = np.iinfo(np.int64).max // 4
_MAXINT = np.iinfo(np.int64).max
_LAZY_TIES = 64  # tie-breaks of a pick computed one by one; past that, all of them


@numba.njit(cache=True)
def _set_levels(bits, x, usable, playable, task_n, plan_task_n):
    """Bitsets of model ``x``'s tasks at the three strict levels (``task_levels`` & playable).

    Branch-free passes (minima, then the bits of each word as OR-sums), which vectorise."""
    t_count = usable.shape[1]
    total_min = _BIG
    plan_min = _BIG
    for t in range(t_count):
        u = usable[x, t]
        total_min = min(total_min, task_n[x, t] if u else _BIG)
        plan_min = min(plan_min, plan_task_n[x, t] if u else _BIG)
    pam_min = _BIG  # lowest plan count among the tasks at the lowest total
    for t in range(t_count):
        at_min = usable[x, t] and task_n[x, t] == total_min
        pam_min = min(pam_min, plan_task_n[x, t] if at_min else _BIG)
    zero = np.uint64(0)
    for w in range(bits.shape[2]):
        b0 = b1 = b2 = zero
        first = w * 64
        for k in range(min(t_count - first, 64)):
            t = first + k
            total, plan = task_n[x, t], plan_task_n[x, t]  # usable where playable
            bit = np.uint64(1) << np.uint64(k)
            low = playable[x, t] and plan == plan_min
            b2 |= bit if low else zero
            b1 |= bit if low and total <= total_min + 1 else zero
            b0 |= bit if playable[x, t] and total == total_min and plan == pam_min else zero
        bits[0, x, w], bits[1, x, w], bits[2, x, w] = b0, b1, b2


@numba.njit(cache=True)
def task_bitsets(usable, playable, task_n, plan_task_n):
    """Level bitsets of every model, shape (3, M, ceil(T / 64)) (see :func:`active_picks`)."""
    m, t_count = usable.shape
    bits = np.zeros((3, m, (t_count + 63) // 64), dtype=np.uint64)
    for x in range(m):
        _set_levels(bits, x, usable, playable, task_n, plan_task_n)
    return bits


@numba.njit(cache=True)
def _fresh(out, cnt, planned, a, c, playable, pair_round, h_key, h_count, h_start, p_head,
           p_opp, p_task, p_next):  # fmt: skip
    """``out[t]``: task ``t`` is fresh for the pair ``(a, c)`` (``PairFeasibility.fresh``);
    ``cnt[t]``: the pair's matches on ``t``, history + plan (``planned``: scratch space)."""
    t_count = out.size
    cnt[:] = 0
    planned[:] = False
    lo, hi = _segment(h_key, h_start, a, c, t_count)
    for s in range(lo, hi):
        cnt[h_key[s] - c * t_count] = h_count[s]
    e = p_head[a]
    while e >= 0:
        if p_opp[e] == c:
            cnt[p_task[e]] += 1
            planned[p_task[e]] = True
        e = p_next[e]
    r = pair_round[a, c]
    for t in range(t_count):
        out[t] = playable[a, t] and playable[c, t] and cnt[t] == r and not planned[t]


@numba.njit(cache=True)
def _segment(h_key, h_start, x, y, t_count):
    """The history cells of model ``x`` against ``y``: ``range(lo, hi)`` into ``h_key``."""
    keys = h_key[h_start[x]:h_start[x + 1]]
    lo = np.searchsorted(keys, y * t_count) + h_start[x]
    hi = np.searchsorted(keys, (y + 1) * t_count) + h_start[x]
    return lo, hi


@numba.njit(cache=True)
def _history_words(h_key, h_count, h_start, pair_round, t_count, n_words):
    """Each model's history cells as bitset words: per model ``x`` (at ``w_start[x]:
    w_start[x + 1]``), the words ``y * W + t // 64`` its cells against ``y`` fall in, in
    order, and the bits of the cells above the pair's round (not fresh) in each."""
    m = h_start.size - 1
    w_pos = np.empty(h_key.size, dtype=np.int64)
    w_start = np.zeros(m + 1, dtype=np.int64)
    k = -1
    for x in range(m):
        last = -1
        for s in range(h_start[x], h_start[x + 1]):
            y = h_key[s] // t_count
            word = y * n_words + ((h_key[s] - y * t_count) >> 6)
            if word != last:
                k += 1
                last = word
            w_pos[s] = k
        w_start[x + 1] = k + 1
    w_word = np.empty(k + 1, dtype=np.int64)
    w_bits = np.zeros(k + 1, dtype=np.uint64)
    for x in range(m):
        for s in range(h_start[x], h_start[x + 1]):
            y = h_key[s] // t_count
            t = h_key[s] - y * t_count
            w_word[w_pos[s]] = y * n_words + (t >> 6)
            if h_count[s] > pair_round[x, y]:
                w_bits[w_pos[s]] |= np.uint64(1) << np.uint64(t & 63)
    return w_pos, w_start, w_word, w_bits


@numba.njit(cache=True)
def _mark_above(w_bits, w_pos, x, y, r, h_key, h_count, h_start, t_count):
    """Redo ``w_bits`` of the history cells of ``x`` against ``y`` for the pair's round ``r``."""
    lo, hi = _segment(h_key, h_start, x, y, t_count)
    for s in range(lo, hi):
        w_bits[w_pos[s]] = 0
    for s in range(lo, hi):
        if h_count[s] > r:
            w_bits[w_pos[s]] |= np.uint64(1) << np.uint64((h_key[s] - y * t_count) & 63)


@numba.njit(cache=True)
def _refresh_row(level, counts, under, bits, x, ok_model, w_start, w_word, w_bits, p_head,
                 p_opp, p_task, p_next, gone, words):  # fmt: skip
    """Recompute row and column ``x`` of ``level`` (the lowest strict level at which a pair
    has a fresh task both may play, 3 for none; ``PairFeasibility.pairs``) and the pairs
    per level ``counts`` (2, 4): of all pairs, and of pairs of models ``under`` the cap.

    ``gone`` (M * W) is scratch space: per opponent, the bitset of the pair's non-fresh cells
    (history cells above the pair's round, ``w_bits`` at word ``w_word``, and the plan's
    cells); a pair has a fresh task at a level when the two models' level bitsets share a bit
    outside it, tested on the words where ``x`` has a bit (``words`` (3, W): scratch).
    """
    n_levels, m, n_words = bits.shape
    gone[:] = 0
    for s in range(w_start[x], w_start[x + 1]):
        gone[w_word[s]] = w_bits[s]
    e = p_head[x]
    while e >= 0:
        t = p_task[e]
        gone[p_opp[e] * n_words + (t >> 6)] |= np.uint64(1) << np.uint64(t & 63)
        e = p_next[e]
    n_nonzero = np.zeros(n_levels, dtype=np.int64)  # x's nonzero words per level
    for k in range(n_levels):
        for w in range(n_words):
            if bits[k, x, w]:
                words[k, n_nonzero[k]] = w
                n_nonzero[k] += 1
    for y in range(m):
        if y == x:
            continue
        lev = n_levels
        if ok_model[x] and ok_model[y]:
            for k in range(n_levels):
                for i in range(n_nonzero[k]):
                    w = words[k, i]
                    if bits[k, x, w] & bits[k, y, w] & ~gone[y * n_words + w]:
                        lev = k
                        break
                if lev == k:
                    break
        old = level[x, y]
        if old != lev:
            level[x, y] = lev
            level[y, x] = lev
            counts[0, old] -= 1
            counts[0, lev] += 1
            if under[x] and under[y]:
                counts[1, old] -= 1
                counts[1, lev] += 1


@numba.njit(cache=True)
def _better(neg, tie, best_neg, best_tie):
    """``(neg, tie)`` sorts strictly before the best so far (NaN scores last)."""
    if np.isnan(neg):
        neg = np.inf
    if neg != best_neg:
        return neg < best_neg
    return tie < best_tie


@numba.njit(cache=True)
def _tie(p, ties):
    """Tie-break ``p`` of this pick: computed alone from the pick's start state, or read once
    all are drawn. ``ties`` is ``(start, buf, info, scratch)``: the generator's state before
    the pick's tie-breaks, the tie-breaks once drawn (``info[0]``), the ones read so far
    (``info[1]``) and four words of scratch space."""
    start, buf, info, scratch = ties
    if info[0]:
        return buf[p]
    info[1] += 1
    if info[1] <= _LAZY_TIES:
        return draw_at(start, p, scratch)
    _fill_ties(ties)
    return buf[p]


@numba.njit(cache=True)
def _fill_ties(ties):
    """Draw all of this pick's tie-breaks into ``buf`` (when many are read)."""
    start, buf, info, scratch = ties
    if info[0]:
        return
    scratch[:] = start
    for p in range(buf.size):
        buf[p] = next_double(scratch)
    info[0] = 1


@numba.njit(cache=True, error_model="numpy")  # no ZeroDivisionError test: denominators >= 1
def _best_at(lev, under_only, n_at, level, under, ties, d, gd, cov, gram, weight, scale2, least,
             judge_left, row_score):  # fmt: skip
    """The best pair at strict level ``lev`` (among pairs of models under the share cap if
    ``under_only``; ``n_at`` of them): the best a judge fits if any, else the best, as
    ``(a, c, score)``.

    Best: the largest score (NaN last), then the lowest tie-break (:func:`_tie` of the pair's
    index in ``numpy.triu_indices`` order), then the lowest index. When many pairs are at the
    level, each row's scores are computed in one vectorised pass (``row_score``: scratch; the
    same arithmetic as :func:`_pair_score`).
    """
    m = level.shape[0]
    dense = 8 * n_at > m * (m - 1) // 2
    a_fit = c_fit = a_any = c_any = -1  # the best that a judge fits, the best of all
    p_fit = p_any = -1
    neg_fit = neg_any = np.inf
    tie_fit = tie_any = -1.0  # their tie-breaks, once read
    score_fit = score_any = 0.0
    base = -1  # index of the pair (i, i) if it were one
    for i in range(m):
        if i > 0:
            base += m - i
        if under_only and not under[i]:
            continue
        if dense:  # the row's scores as _pair_score's, in one vectorised pass
            di, gdi = d[i], gd[i]
            for k in range(m - i - 1):  # a count from 0: indices known >= 0
                j = i + 1 + k
                quad = max(di + d[j] - 2.0 * cov[i, j], 0.0)
                norm2 = max(gdi + gd[j] - 2.0 * gram[i, j], 0.0)
                w = weight[i, j]
                row_score[j] = w * norm2 / (1.0 + w * quad) * scale2
            if a_fit >= 0 and neg_fit < np.inf:  # skip the row if no pair can reach the best
                least_score = -neg_fit
                reach = 0  # a count, not a maximum: an integer sum runs on vector registers
                if under_only:
                    for k in range(m - i - 1):
                        j = i + 1 + k
                        reach += (level[i, j] == lev) & under[j] & (row_score[j] >= least_score)
                else:
                    for k in range(m - i - 1):
                        j = i + 1 + k
                        reach += (level[i, j] == lev) & (row_score[j] >= least_score)
                if reach == 0:
                    continue
        for j in range(i + 1, m):
            if level[i, j] != lev or (under_only and not under[j]):
                continue
            score = row_score[j] if dense else _pair_score(i, j, d, gd, cov, gram, weight,
                                                           scale2)  # fmt: skip
            neg = -score
            if np.isnan(neg):
                neg = np.inf
            p = base + j - i
            # The two comparisons below (with the best a judge fits, with the best of all)
            # are written out: as a shared numba function returning the tie-break it read,
            # the pick took 0.095 ms instead of 0.055 (5,000 matches, 100 models).
            if a_fit >= 0:  # only a better pair that a judge fits can still win
                if neg > neg_fit:
                    continue
                if neg == neg_fit:
                    if tie_fit < 0.0:
                        tie_fit = _tie(p_fit, ties)
                    if not _tie(p, ties) < tie_fit:
                        continue
                if _judge_fits(i, j, least, judge_left):
                    a_fit, c_fit, p_fit, score_fit, neg_fit, tie_fit = i, j, p, score, neg, -1.0
                continue
            if _judge_fits(i, j, least, judge_left):  # the first pair a judge fits
                a_fit, c_fit, p_fit, score_fit, neg_fit, tie_fit = i, j, p, score, neg, -1.0
                continue
            if a_any >= 0:
                if neg > neg_any:
                    continue
                if neg == neg_any:
                    if tie_any < 0.0:
                        tie_any = _tie(p_any, ties)
                    if not _tie(p, ties) < tie_any:
                        continue
            a_any, c_any, p_any, score_any, neg_any, tie_any = i, j, p, score, neg, -1.0
    if a_fit >= 0:
        return a_fit, c_fit, score_fit
    return a_any, c_any, score_any


@numba.njit(cache=True)
def active_picks(n, state, cov, gram, weight, scale2, ok_model, has_fresh, pair_round, usable,
                 playable, failed, task_n, plan_task_n, plan_n, cap, h_key, h_count, h_start,
                 judge_total, judge_left, judge_plan, allowed, routed, capacity):  # fmt: skip
    """Pick active matches until ``n`` of them are judged (:meth:`Picker.pick` and ``record``).

    Every array is updated in place, as the :class:`~sampling.picks.picker.Picker` updates its own:
    ``cov``, ``gram`` (M, M) float; ``has_fresh``, ``pair_round`` (M, M); ``task_n``,
    ``plan_task_n`` (M, T); ``plan_n`` (M,); ``judge_total``, ``judge_plan`` (M, J) and
    ``judge_left`` (J,) (:class:`JudgeTurns`). Read only: ``weight`` (M, M), ``scale2``,
    ``ok_model`` (M,) (plannable and fitted), ``usable``, ``playable``, ``failed`` (M, T),
    ``cap`` (-1: none), the history's cells per model ``h_key``, ``h_count``, ``h_start``
    (:class:`sampling.board.pairs.PairCounts`), ``allowed`` (T, J) with ``routed``.

    The pairs matrices of :class:`~sampling.board.feasibility.PairFeasibility` are kept as one
    (M, M) matrix of each pair's lowest strict level (rows of the two picked models refreshed
    per pick), so a pick reads the lowest level of each cap pass in one pass over the pairs
    and scores only the pairs at that level.

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
    ties = (np.empty(4, dtype=np.uint64), np.empty(n_pairs), np.zeros(2, dtype=np.int64),
            np.empty(4, dtype=np.uint64))  # see _tie
    task_ties = np.empty(t_count)
    judge_ties = np.empty(n_judges)
    bits = task_bitsets(usable, playable, task_n, plan_task_n)
    n_words = bits.shape[2]
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
    cnt = np.zeros(t_count, dtype=np.int64)
    planned = np.zeros(t_count, dtype=np.bool_)
    task_ok = np.zeros(t_count, dtype=np.bool_)
    gone = np.zeros(m * n_words, dtype=np.uint64)
    words = np.empty((3, n_words), dtype=np.int64)
    d = np.empty(m)
    gd = np.empty(m)
    u = np.empty(m)
    v = np.empty(m)
    row_score = np.empty(m)
    w_pos, w_start, w_word, w_bits = _history_words(h_key, h_count, h_start, pair_round,
                                                    t_count, n_words)  # fmt: skip
    under = np.zeros(m, dtype=np.bool_)  # below the share cap
    for i in range(m):
        under[i] = cap >= 0 and plan_n[i] < cap
    level = np.full((m, m), 3, dtype=np.int8)
    counts = np.zeros((2, 4), dtype=np.int64)  # pairs per level: all, and both under the cap
    counts[0, 3] = n_pairs
    for i in range(m):
        for j in range(i + 1, m):
            counts[1, 3] += under[i] and under[j]
    for x in range(m):
        _refresh_row(level, counts, under, bits, x, ok_model, w_start, w_word, w_bits, p_head,
                     p_opp, p_task, p_next, gone, words)  # fmt: skip
    n_cand = 0  # pairs of scored models with a fresh task
    for i in range(m):
        for j in range(i + 1, m):
            n_cand += ok_model[i] and ok_model[j] and has_fresh[i, j]
    least = np.zeros((m, n_judges), dtype=np.bool_)  # the judges of each model's lowest count
    for i in range(m):
        _least_row(least, judge_total, i)
    n_judged = 0
    k = 0
    while n_judged < n:
        if k == capacity:
            return FULL, k, out_a, out_c, out_t, out_j, out_s
        # --- candidates and their scores (Picker.ranking) --------------------------------
        ties[0][:] = state  # this pick's tie-breaks: the next n_pairs draws
        ties[2][:] = 0
        advance(state, n_pairs)
        if n_cand == 0:
            return NO_PAIR, k, out_a, out_c, out_t, out_j, out_s
        for i in range(m):
            d[i] = cov[i, i]
            gd[i] = gram[i, i]
        # --- the first step that allows a pair (Picker.pick) ------------------------------
        a = -1
        c = -1
        score = 0.0
        for ps in range(1 if cap < 0 else 0, 2):
            lev = 0  # the lowest level of the pass's pairs
            while lev < 3 and counts[1 - ps, lev] == 0:
                lev += 1
            if lev < 3:
                a, c, score = _best_at(lev, ps == 0, counts[1 - ps, lev], level, under, ties, d,
                                       gd, cov, gram, weight, scale2, least, judge_left,
                                       row_score)  # fmt: skip
                _fresh(fresh, cnt, planned, a, c, playable, pair_round, h_key, h_count,
                       h_start, p_head, p_opp, p_task, p_next)  # fmt: skip
                for t in range(t_count):
                    word, bit = t >> 6, np.uint64(1) << np.uint64(t & 63)
                    task_ok[t] = fresh[t] and (bits[lev, a, word] & bits[lev, c, word]
                                               & bit) != 0  # fmt: skip
                break
            _fill_ties(ties)
            a, c, score = _slack_pick(task_ok, ps, cap, ties[1], cov, gram, weight, scale2, d,
                                      gd, ok_model, has_fresh, least, judge_left, plan_n,
                                      usable, playable, plan_task_n, pair_round, h_key,
                                      h_count, h_start, p_head, p_opp, p_task,
                                      p_next)  # fmt: skip
            if a >= 0:
                _fresh(fresh, cnt, planned, a, c, playable, pair_round, h_key, h_count,
                       h_start, p_head, p_opp, p_task, p_next)  # fmt: skip
                break
        if a < 0:
            return NO_PAIR, k, out_a, out_c, out_t, out_j, out_s
        # --- the task (Picker._task) ------------------------------------------------------
        n_task = 0
        for t in range(t_count):
            n_task += task_ok[t]
        for s in range(n_task):
            task_ties[s] = next_double(state)
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
            if (k1 < key1 or (k1 == key1 and (k2 < key2 or (k2 == key2 and task_ties[s] < key3)))):
                best_t, key1, key2, key3 = t, k1, k2, task_ties[s]
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
            out_j[k] = _take(a, c, t, state, judge_ties, judge_total, judge_left, judge_plan,
                             allowed, routed)  # fmt: skip
            _least_row(least, judge_total, a)
            _least_row(least, judge_total, c)
            n_judged += 1
        plan_task_n[a, t] += 1
        plan_task_n[c, t] += 1
        plan_n[a] += 1
        plan_n[c] += 1
        for x in (a, c):
            if under[x] and plan_n[x] >= cap:  # at the cap: its pairs leave the first pass
                for y in range(m):
                    if y != x and under[y]:
                        counts[1, level[x, y]] -= 1
                under[x] = False
        fresh[t] = False  # fresh and cnt of (a, c) before the pick, now with t planned
        cnt[t] += 1
        if not fresh.any():  # a new round for the pair
            r = _MAXINT
            for tt in range(t_count):
                if playable[a, tt] and playable[c, tt]:
                    r = min(r, cnt[tt])
            pair_round[a, c] = r
            pair_round[c, a] = r
            _mark_above(w_bits, w_pos, a, c, r, h_key, h_count, h_start, t_count)
            _mark_above(w_bits, w_pos, c, a, r, h_key, h_count, h_start, t_count)
            _fresh(fresh, cnt, planned, a, c, playable, pair_round, h_key, h_count, h_start,
                   p_head, p_opp, p_task, p_next)  # fmt: skip
            had = has_fresh[a, c]
            has_fresh[a, c] = fresh.any()
            has_fresh[c, a] = has_fresh[a, c]
            if ok_model[a] and ok_model[c]:
                n_cand += has_fresh[a, c] - had
        _set_levels(bits, a, usable, playable, task_n, plan_task_n)
        _set_levels(bits, c, usable, playable, task_n, plan_task_n)
        for x in (a, c):
            _refresh_row(level, counts, under, bits, x, ok_model, w_start, w_word, w_bits,
                         p_head, p_opp, p_task, p_next, gone, words)  # fmt: skip
        if ok_model[a] and ok_model[c]:
            _rank_one(cov, gram, a, c, weight[a, c], u, v)
        out_a[k], out_c[k], out_t[k], out_s[k] = a, c, t, score
        k += 1
    return DONE, k, out_a, out_c, out_t, out_j, out_s


@numba.njit(cache=True)
def _least_row(least, judge_total, i):
    """``least[i, j]``: judge ``j`` has model ``i``'s lowest count (``JudgeTurns.fits``)."""
    lo_j = judge_total[i, 0]
    for j in range(1, judge_total.shape[1]):
        lo_j = min(lo_j, judge_total[i, j])
    for j in range(judge_total.shape[1]):
        least[i, j] = judge_total[i, j] == lo_j


@numba.njit(cache=True)
def _take(a, c, t, state, r, total, left, plan, allowed, routed):
    """``JudgeTurns.take``: the judge of the match, counted (ties ``r`` drawn from ``state``)."""
    n_judges = left.size
    ta_min, tc_min = total[a].min(), total[c].min()
    pa_min, pc_min = plan[a].min(), plan[c].min()
    for j in range(n_judges):
        r[j] = next_double(state)
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
    cnt = np.zeros(t_count, dtype=np.int64)
    planned = np.zeros(t_count, dtype=np.bool_)
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
                _fresh(fresh, cnt, planned, i, j, playable, pair_round, h_key, h_count,
                       h_start, p_head, p_opp, p_task, p_next)  # fmt: skip
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
                _fresh(fresh, cnt, planned, a, c, playable, pair_round, h_key, h_count,
                       h_start, p_head, p_opp, p_task, p_next)  # fmt: skip
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

