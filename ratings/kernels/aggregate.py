"""Numba kernels from verdict codes to aggregated comparison rows.

Private; reached through :mod:`ratings.kernels.fit` (the module
:func:`ratings.kernels.engine.kernels`
hands out), with twins of the same names and signatures in :mod:`ratings.kernels.fit_ref`. The
verdict codes (:class:`ratings.core.rows.VerdictCodes`, passed as the kernels' leading arguments)
are taken as they come, a categorical's int8 or int16 codes, read-only, rather than copied to
int64: numba compiles one specialisation per code width, cached on disk. Each pass orients
every verdict: its models ``a = model_a_map[model_a]`` and ``b = model_b_map[model_b]``, its
outcome ``winner_map[winner]`` (0 A won, 1 B won, 2 tie), a forfeit (``failed_a`` or
``failed_b``) winning for the other side (a tie if both) under ``forfeit_judge``; then
``i = min(a, b)``, ``j = max(a, b)`` and the outcome as seen from ``i``. The outer key of a
verdict is ``cluster * n_judges + judge``. Large logs split each pass across threads
(:mod:`ratings.core.threads`), one piece of the verdicts each.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
from numba import njit

from ratings.core import threads as _threads
from ratings.core.bounds import MAX_COUNT
from ratings.core.rows import (
    AggregatedRows,
    CollapsedRows,
    PairRows,
    UsedCodes,
    VerdictCodes,
    no_rows,
    summed_rows,
)

__all__ = ["FIRST_GROUPS", "TWIN_SLOTS", "aggregate_codes", "collapse_codes", "collapse_rows",
           "count_rows", "verdict_cluster_scores"]

_JIT = {"cache": True, "nogil": True}
# Aggregation uses a dense (group, i, j) table while it has at most N / 2 + _DENSE_EXTRA slots.
_DENSE_EXTRA = 65536
#: Cells of the G x P score matrix up to which the verdict pass runs on threads (one matrix
#: per thread, added up afterwards).
_SPLIT_SCORES = 1 << 22
#: (judge, i, j) slots up to which the dedupe also sums the rows per (judge, i, j).
_COLLAPSE_ON_THE_WAY = 1 << 18
#: Dense tables up to this many slots are filled on threads, one table per piece (summed).
_SPLIT_DENSE = 1 << 20

#: Groups of at least FIRST_GROUPS x n_models verdicts on average (an unclustered log's
#: judges) are deduplicated in order of their first model (:func:`_first_dedupe`, whose work
#: per group includes passes over n_models cells). Measured on one core: 1,000 models' 1M
#: unclustered verdicts 40 -> 14 ms. Tasks of up to 50 x n_models verdicts lose (1M verdicts
#: over 200 models, 1,000 to 100 tasks: the fit 0.190 -> 0.211 s of CPU at 1,000 tasks, 0.174
#: -> 0.177 s at 100) and keep the slot table; at 125 x they gain (0.173 -> 0.168 s).
FIRST_GROUPS = 64
#: A clustered log of one judge is summed over clusters by :func:`whole_collapse` while its
#: models' pairs are at most WHOLE_SCAN x its verdicts (each run's partners are read off
#: marks in order: about n_models^2 / 2 reads).
WHOLE_SCAN = 4
#: A run of first model i with at least 1 / SCAN_RUNS of the models after i as partners emits
#: them in order (a scan of those models' marks); sparser runs in order of first occurrence.
SCAN_RUNS = 32
#: Unweighted logs of more than sqrt(TWIN_SLOTS) models are aggregated by the twin
#: (:func:`ratings.kernels.fit_ref.aggregate_codes`: NumPy counts into a dense table, or a sort of
#: 32-bit cells, its per-cluster and collapsed rows side by side), whose passes measured faster
#: where the (i, j) slot table no longer fits a core's cache: 1M verdicts over 1,000 models, one
#: core, 42 -> 27 ms unclustered and 69 -> 54 ms over 1,000 tasks (with the rows summed over
#: clusters); wall on 2 cores 41 -> 31 and 74 -> 41 ms, over 4,000 tasks 89 -> 72 ms (57 -> 64
#: on one core); 600 models over 1,000 tasks 78 -> 56 ms (47 -> 46 on one core).
TWIN_SLOTS = 1 << 18

_COUNT, _DENSE, _SCATTER, _SCORES = 0, 1, 2, 3  # what one pass of :func:`_codes_pass` does


@njit(**_JIT)
def _codes_pass(mode, model_a, model_b, model_a_map, model_b_map, winner, winner_map, judge,
                cluster, failed_a, failed_b, forfeit_judge, n_models, n_judges, n_clusters,
                group_of, weight, count, used_m, used_j, used_g, acc, seen, fill, sorted_key,
                sorted_weight, scores):  # fmt: skip
    """One pass over the verdict codes (arguments ``model_a`` to ``n_clusters``: a
    :class:`~ratings.core.rows.VerdictCodes`; ``weight``: one per verdict, or empty for 1 each).

    Every mode returns the number of unusable verdicts (a missing code, a map giving -1, or
    ``a == b``) and, when ``used_*`` are not empty, marks the model, judge and cluster codes
    usable verdicts name. ``_COUNT``: verdicts per outer key into ``count``. ``_DENSE``: counts
    into the dense (group, i, j, outcome) table ``acc`` / ``seen``, the group of an outer key
    being ``group_of[outer]``. ``_SCATTER``: ``(i * n_models + j) * 3 + outcome`` (and the
    weight) into each group's block of ``sorted_key`` (``sorted_weight``), ``fill`` holding the
    blocks' next positions.

    ``_SCORES``: each verdict's score into its cluster's row of the G x P matrix ``out``
    (flattened; G the cluster codes, P = ``n_cols``), with ``scores = (slot, tab_d, tab_e,
    n_cols, out)``: the verdict is row ``r = slot[(judge * n_models + i) * n_models + j]`` of
    the collapsed (judge, i, j) rows; its score on d = theta_i - theta_j, ``weight tab_d[3 r +
    outcome]``, is added at column ``i`` and subtracted at ``j``; with ``tab_e`` not empty,
    ``weight tab_e[3 r + outcome]`` is added at ``n_models + judge`` (Crowd-BT's eta block).
    Columns and clusters are the codes' own (the caller drops unused ones).
    """
    m2 = n_models * n_models
    weighted = weight.shape[0] > 0
    track = used_m.shape[0] > 0
    slot, tab_d, tab_e, n_cols, out = scores
    with_eta = tab_e.shape[0] > 0
    n_bad = 0
    for v in range(model_a.shape[0]):
        k = judge[v] if judge.shape[0] else 0
        g = cluster[v] if cluster.shape[0] else 0
        if model_a[v] < 0 or model_b[v] < 0 or winner[v] < 0 or k < 0 or g < 0:
            n_bad += 1
            continue
        a = model_a_map[model_a[v]]
        b = model_b_map[model_b[v]]
        f_a = failed_a[v] if failed_a.shape[0] else False
        f_b = failed_b[v] if failed_b.shape[0] else False
        if track:
            used_j[k] = True
            used_g[g] = True
        if f_a or f_b:
            res = 2 if (f_a and f_b) else (1 if f_a else 0)
            k = forfeit_judge
        else:
            res = winner_map[winner[v]]
        if a < 0 or b < 0 or a == b or res < 0:
            n_bad += 1
            continue
        if a > b:
            a, b = b, a
            res = 1 - res if res < 2 else res
        outer = g * n_judges + k
        if track:
            used_m[a] = True
            used_m[b] = True
        if mode == _COUNT:
            count[outer] += 1
        elif mode == _DENSE:
            key = group_of[outer] * m2 + a * n_models + b
            acc[3 * key + res] += weight[v] if weighted else 1.0
            seen[key] = True
        elif mode == _SCORES:
            w = weight[v] if weighted else 1.0
            r = slot[k * m2 + a * n_models + b]
            at = g * n_cols
            sc = w * tab_d[3 * r + res]
            out[at + a] += sc
            out[at + b] -= sc
            if with_eta:
                out[at + n_models + k] += w * tab_e[3 * r + res]
        else:
            q = group_of[outer]
            p = fill[q]
            fill[q] = p + 1
            sorted_key[p] = (a * n_models + b) * 3 + res
            if weighted:
                sorted_weight[p] = weight[v]
    return n_bad


_I8, _F8, _B1 = np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.bool_)
_I4 = np.zeros(0, dtype=np.int32)
_NO_SCORES = (_I8, _F8, _F8, 0, _F8)  # the ``scores`` of the passes that do not use it


def _pass(mode, codes: VerdictCodes, weight, *, group_of=_I8, count=_I8, used=(_B1,) * 3,
          acc=_F8, seen=_B1, fill=_I8, sorted_key=_I4,
          sorted_weight=_F8, scores=_NO_SCORES) -> int:
    """:func:`_codes_pass` with the buffers its ``mode`` does not use left empty."""
    return _codes_pass(mode, *codes, group_of, weight, count, *used, acc, seen, fill,
                       sorted_key, sorted_weight, scores)  # fmt: skip


def verdict_cluster_scores(model_a, model_b, model_a_map, model_b_map, winner, winner_map,
                           judge, cluster, failed_a, failed_b, forfeit_judge, n_models, n_judges,
                           n_clusters, weight, slot, tab_d, tab_e):  # fmt: skip
    """Summed score of each cluster straight from the verdict codes -> float64[n_clusters, P]
    with P = n_models (+ n_judges with ``tab_e``), in the codes' own numbering (``slot`` from
    :func:`collapse_codes`; see :func:`_codes_pass`'s ``_SCORES`` mode): the matrix
    :func:`ratings.kernels.fit.cluster_scores` gives from per-cluster rows, without building them.
    The verdicts are split across threads while the matrix is small."""
    codes = VerdictCodes(model_a, model_b, model_a_map, model_b_map, winner, winner_map, judge,
                         cluster, failed_a, failed_b, forfeit_judge, n_models, n_judges,
                         n_clusters)  # fmt: skip
    n = model_a.shape[0]
    n_cols = n_models + (n_judges if tab_e.shape[0] else 0)
    pieces = _pieces(n, _chunks(n) if n_clusters * n_cols <= _SPLIT_SCORES else 1)

    def job(lo, hi):
        part, w = _part(codes, weight, lo, hi)
        out = np.zeros(n_clusters * n_cols)
        _pass(_SCORES, part, w, scores=(slot, tab_d, tab_e, n_cols, out))
        return out

    parts = _threads.run([functools.partial(job, lo, hi) for lo, hi in pieces])
    out = parts[0]
    for p in parts[1:]:
        out += p
    return out.reshape(n_clusters, n_cols)


@njit(**_JIT)
def _dense_rows(acc, seen, n_models):
    """Rows of a dense (group, i, j) table, sorted by that key -> (group, i, j, wins_i,
    wins_j, ties)."""
    m2 = n_models * n_models
    r = 0
    for key in range(seen.shape[0]):
        r += seen[key]
    row_group = np.empty(r, dtype=np.int64)
    row_i = np.empty(r, dtype=np.int64)
    row_j = np.empty(r, dtype=np.int64)
    wins_i = np.empty(r)
    wins_j = np.empty(r)
    ties = np.empty(r)
    r = 0
    for key in range(seen.shape[0]):
        if seen[key]:
            row_group[r] = key // m2
            row_i[r] = (key % m2) // n_models
            row_j[r] = key % n_models
            wins_i[r] = acc[3 * key]
            wins_j[r] = acc[3 * key + 1]
            ties[r] = acc[3 * key + 2]
            r += 1
    return row_group, row_i, row_j, wins_i, wins_j, ties


@njit(**_JIT)
def collapse_rows(judge, ii, jj, wi, wj, tt, n_judges, n_models):
    """Sum rows' counts per (judge, ii, jj) over a dense table -> rows sorted by that key:
    (judge, ii, jj int64[R']; wi, wj, tt float64[R']). For ``n_judges * n_models^2``
    small enough."""
    m2 = n_models * n_models
    space = n_judges * m2
    acc = np.zeros(3 * space)
    seen = np.zeros(space, dtype=np.bool_)
    for r in range(ii.shape[0]):
        key = judge[r] * m2 + ii[r] * n_models + jj[r]
        acc[3 * key] += wi[r]
        acc[3 * key + 1] += wj[r]
        acc[3 * key + 2] += tt[r]
        seen[key] = True
    return _dense_rows(acc, seen, n_models)


@njit(**_JIT)
def _count_pass(model_a, model_b, model_a_map, model_b_map, judge, cluster, wins_a, wins_b, ties,
                n_judges, count, used_m, used_j, used_g):  # fmt: skip
    """Counts-table rows per outer key (``cluster * n_judges + judge``) into ``count``, the
    codes they use flagged -> the number of unusable rows (a missing code, a map giving -1,
    ``a == b``, or a count that is not a whole number in [0, ``MAX_COUNT``])."""
    n_bad = 0
    for r in range(model_a.shape[0]):
        k = judge[r] if judge.shape[0] else 0
        g = cluster[r] if cluster.shape[0] else 0
        a = model_a_map[model_a[r]] if model_a[r] >= 0 else -1
        b = model_b_map[model_b[r]] if model_b[r] >= 0 else -1
        if a < 0 or b < 0 or a == b or k < 0 or g < 0 or not (
                _whole(wins_a[r]) and _whole(wins_b[r]) and _whole(ties[r])):
            n_bad += 1
            continue
        count[g * n_judges + k] += 1
        used_m[a] = True
        used_m[b] = True
        used_j[k] = True
        used_g[g] = True
    return n_bad


@njit(**_JIT)
def _whole(x):
    """A count of verdicts: a whole number in [0, MAX_COUNT] (NaN is not)."""
    return x >= 0.0 and x <= MAX_COUNT and x == np.floor(x)


@njit(**_JIT)
def _count_scatter(model_a, model_b, model_a_map, model_b_map, judge, cluster, wins_a, wins_b,
                   ties, n_judges, n_models, fill, pair, moved):  # fmt: skip
    """Each (usable) row's pair key ``i * n_models + j`` and counts oriented ``i < j`` (wins
    swapped where ``a > b``) into its outer key's block of ``pair`` / ``moved``, at the block's
    next position ``fill[outer]``: a stable counting sort, sequential writes per block."""
    for r in range(model_a.shape[0]):
        k = judge[r] if judge.shape[0] else 0
        o = (cluster[r] if cluster.shape[0] else 0) * n_judges + k
        a = model_a_map[model_a[r]]
        b = model_b_map[model_b[r]]
        p = fill[o]
        fill[o] = p + 1
        if a < b:
            pair[p] = a * n_models + b
            moved[p, 0] = wins_a[r]
            moved[p, 1] = wins_b[r]
        else:
            pair[p] = b * n_models + a
            moved[p, 0] = wins_b[r]
            moved[p, 1] = wins_a[r]
        moved[p, 2] = ties[r]


@njit(**_JIT)
def _count_dedupe(starts, first_outer, pair, moved, n_judges, n_models, slot, out_g, out_k,
                  out_i, out_j, out_w):  # fmt: skip
    """Sum the sorted rows of outer keys ``first_outer, first_outer + 1, ...`` (key o + t owns
    ``starts[t]:starts[t + 1]``) per pair, one output row per distinct pair within each key in
    order of first occurrence -> the number of output rows (``out_*`` from 0; ``out_w``
    zeroed, shape (3, n); ``slot``: -1 throughout, left so)."""
    rows = 0
    for t in range(starts.shape[0] - 1):
        o = first_outer + t
        first = rows
        for p in range(starts[t], starts[t + 1]):
            key = pair[p]
            s = slot[key]
            if s < 0:
                s = rows
                slot[key] = s
                out_g[s] = o // n_judges
                out_k[s] = o % n_judges
                out_i[s] = key // n_models
                out_j[s] = key % n_models
                rows += 1
            out_w[0, s] += moved[p, 0]
            out_w[1, s] += moved[p, 1]
            out_w[2, s] += moved[p, 2]
        for s in range(first, rows):
            slot[out_i[s] * n_models + out_j[s]] = -1
    return rows


def count_rows(model_a, model_b, model_a_map, model_b_map, judge, cluster, wins_a, wins_b, ties,
               n_models, n_judges, n_clusters) -> AggregatedRows:  # fmt: skip
    """The rows of a counts table in the aggregated-row layout: each row oriented ``i < j`` (its
    wins swapped where ``model_a > model_b``), rows of one (cluster, judge, i, j) summed,
    ordered by cluster, rows within one (cluster, judge) in order of first occurrence.

    ``model_a``, ``model_b``: the rows' name codes (any integer width, -1 where missing) and
    ``model_a_map``, ``model_b_map`` (int64) their models (-1: none); ``judge``, ``cluster``:
    codes (-1 where missing), or empty for 0 throughout; ``wins_a``, ``wins_b``, ``ties``:
    float64[N]. A row with a missing code, no model, ``a == b`` or a count that is not a
    whole number in [0, 2^53] is unusable: then only their number (``n_unusable``) and
    ``used`` are returned. ``collapsed`` is None.

    One counting pass, a stable counting sort by (cluster, judge) moving each row's pair key
    and counts (sequential writes into each key's block), then one (i, j) slot table per
    range of keys. Large tables split each step across threads (pieces of the rows, then
    ranges of keys of about equal rows); the rows come out as on one thread.
    """
    n = model_a.shape[0]
    n_outer = n_clusters * n_judges
    codes = (model_a, model_b, model_a_map, model_b_map, judge, cluster)
    pieces = _pieces(n, _chunks(n))

    def cut(a, lo, hi):
        return a[lo:hi] if a.shape[0] else a

    def piece(lo, hi):
        return tuple(cut(a, lo, hi) if k in (0, 1, 4, 5) else a for k, a in enumerate(codes))

    parts = [(np.zeros(n_outer, dtype=np.int64), _zeros((n_models, n_judges, n_clusters)))
             for _ in pieces]  # fmt: skip
    bad = _threads.run([functools.partial(_count_pass, *piece(lo, hi), cut(wins_a, lo, hi),
                                          cut(wins_b, lo, hi), cut(ties, lo, hi), n_judges,
                                          count, *used)
                        for (lo, hi), (count, used) in zip(pieces, parts, strict=True)])
    used = UsedCodes(*_or_flags([u for _, u in parts]))
    if sum(bad):
        return AggregatedRows(no_rows(), used, None, int(sum(bad)))
    starts = np.zeros(n_outer + 1, dtype=np.int64)
    np.cumsum(sum(c for c, _ in parts), out=starts[1:])
    pair = np.empty(n, dtype=np.int64)
    moved = np.empty((n, 3))
    fill = starts[:-1].copy()  # each piece writes its rows after the earlier pieces' ones
    jobs = []
    for (lo, hi), (count, _) in zip(pieces, parts, strict=True):
        jobs.append(functools.partial(_count_scatter, *piece(lo, hi), cut(wins_a, lo, hi),
                                      cut(wins_b, lo, hi), cut(ties, lo, hi), n_judges,
                                      n_models, fill.copy(), pair, moved))  # fmt: skip
        fill += count
    _threads.run(jobs)
    out_g, out_k, out_i, out_j = (np.empty(n, dtype=np.int64) for _ in range(4))
    out_w = np.zeros((3, n))
    cuts = np.searchsorted(starts, np.linspace(0, n, len(pieces) + 1)[1:-1])
    ranges = np.unique(np.concatenate([[0], np.clip(cuts, 0, n_outer), [n_outer]]))
    slot_type = np.int32 if n < 2**31 else np.int64

    def dedupe(o0, o1):
        at = starts[o0]
        return _count_dedupe(starts[o0:o1 + 1] - at, o0, pair[at:], moved[at:], n_judges,
                             n_models, np.full(n_models * n_models, -1, dtype=slot_type),
                             out_g[at:], out_k[at:], out_i[at:], out_j[at:], out_w[:, at:])

    sizes = _threads.run([functools.partial(dedupe, o0, o1)
                          for o0, o1 in itertools.pairwise(ranges)])  # fmt: skip
    out = (out_g, out_k, out_i, out_j, *out_w)
    rows = sizes[0] if sizes else 0
    for o0, size in zip(ranges[1:], sizes[1:], strict=False):  # close the gaps
        at = starts[o0]
        for a in out:
            a[rows:rows + size] = a[at:at + size]
        rows += size
    return AggregatedRows(PairRows(*(a[:rows] for a in out)), used, None, 0)


def _dense_fits(space: int, n: int) -> bool:
    """Is a dense table of ``space`` (group, i, j) slots worth it for ``n`` verdicts?"""
    return space <= n // 2 + _DENSE_EXTRA


def aggregate_codes(model_a, model_b, model_a_map, model_b_map, winner, winner_map, judge,
                    cluster, failed_a, failed_b, forfeit_judge, n_models, n_judges, n_clusters,
                    weight, reuse=False, collapse=True) -> AggregatedRows:  # fmt: skip
    """Verdict codes straight to unique (cluster, judge, i, j) rows, rows ordered by cluster.

    No N-row intermediates: one pass into a dense table when the whole (cluster, judge, i, j)
    key space is small; else a counting pass, then a dense table over the keys that occur or a
    counting sort and per-group slot table (an unclustered log's few large groups, its judges:
    each one's verdicts in order of their first model, summed per partner in a table of
    ``n_models`` cells, :func:`_first_dedupe`; its rows then in order of (judge, i), and of j
    where models meet many partners, as the fit's pair table takes them without a sort).
    ``weight``: one per verdict, or empty for 1 each; unweighted logs of many models go to the
    twin (:data:`TWIN_SLOTS`).
    ``collapsed`` (see :class:`~ratings.core.rows.AggregatedRows`) is filled when the counting
    sort ran, unless ``collapse=False`` (the caller has them). ``reuse=True`` lets the rows
    overwrite ``cluster``, ``model_a``, ``model_b`` and ``winner`` once they are read (the
    caller's own int64 copies).
    """
    if not weight.shape[0] and n_models * n_models > TWIN_SLOTS:  # see TWIN_SLOTS
        from ratings.kernels import fit_ref

        return fit_ref.aggregate_codes(model_a, model_b, model_a_map, model_b_map, winner,
                                       winner_map, judge, cluster, failed_a, failed_b,
                                       forfeit_judge, n_models, n_judges, n_clusters, weight,
                                       reuse=reuse, collapse=collapse)  # fmt: skip
    codes = VerdictCodes(model_a, model_b, model_a_map, model_b_map, winner, winner_map, judge,
                         cluster, failed_a, failed_b, forfeit_judge, n_models, n_judges,
                         n_clusters)  # fmt: skip
    n = model_a.shape[0]
    sizes = (n_models, n_judges, n_clusters)
    n_outer = n_clusters * n_judges
    space = n_outer * n_models * n_models
    if _dense_fits(space, n):  # small enough for every outer key: one pass
        n_bad, used, acc, seen = _dense_pass(codes, weight, np.arange(n_outer), space, sizes)
        if n_bad:
            return AggregatedRows(no_rows(), UsedCodes(*used), None, n_bad)
        outer, ri, rj, wi, wj, tt = _dense_rows(acc, seen, n_models)
        rows = PairRows(outer // n_judges, outer % n_judges, ri, rj, wi, wj, tt)
        return AggregatedRows(rows, UsedCodes(*used), None, 0)
    parts = [(_part(codes, weight, lo, hi), np.zeros(n_outer, dtype=np.int64), _zeros(sizes))
             for lo, hi in _pieces(n, _chunks(n))]  # fmt: skip
    bad = _threads.run([functools.partial(_pass, _COUNT, part, w, count=count, used=used)
                        for (part, w), count, used in parts])  # fmt: skip
    count = sum(c for _, c, _ in parts)
    used = _or_flags([u for _, _, u in parts])
    if sum(bad):
        return AggregatedRows(no_rows(), UsedCodes(*used), None, int(sum(bad)))
    outer_keys = np.flatnonzero(count)
    group_of = np.cumsum(count > 0) - 1
    n_groups = outer_keys.size
    space = n_groups * n_models * n_models
    if _dense_fits(space, n):
        _, _, acc, seen = _dense_pass(codes, weight, group_of, space, None)
        group, ri, rj, wi, wj, tt = _dense_rows(acc, seen, n_models)
        outer = outer_keys[group]
        rows = PairRows(outer // n_judges, outer % n_judges, ri, rj, wi, wj, tt)
        return AggregatedRows(rows, UsedCodes(*used), None, 0)
    starts = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(count[outer_keys], out=starts[1:])
    sorted_key = np.empty(n, dtype=np.int32)
    sorted_weight = np.empty(n if weight.shape[0] else 0)
    fill = starts[:-1].copy()  # each piece writes its verdicts after the earlier pieces' ones
    jobs = []
    for (part, w), piece, _ in parts:
        jobs.append(functools.partial(_pass, _SCATTER, part, w, group_of=group_of,
                                      fill=fill.copy(), sorted_key=sorted_key,
                                      sorted_weight=sorted_weight))  # fmt: skip
        fill += piece[outer_keys]
    _threads.run(jobs)
    spare = (cluster, model_a, model_b, winner) if reuse else ()
    # Large groups are deduplicated in order of their first model (FIRST_GROUPS). Otherwise,
    # with clusters, the fit's rows (summed over clusters per (judge, i, j)) come from the
    # same pass when their dense table is small; larger tables, one per thread, cost more to
    # clear and add up than Comparisons.collapsed's own pass afterwards.
    by_first = FIRST_GROUPS * n_groups * n_models <= n
    collapse = collapse and not by_first and n_clusters > 1
    # one judge's rows over too many (i, j) for the dense table: summed over clusters after,
    # as one group in order of first model (whole_collapse), from the same sorted keys
    whole = collapse and n_judges == 1 and n_models * n_models > _COLLAPSE_ON_THE_WAY and \
        n_models * n_models <= WHOLE_SCAN * n
    collapse = collapse and n_judges * n_models * n_models <= _COLLAPSE_ON_THE_WAY
    group_judge = outer_keys % n_judges if collapse else None
    if n_judges == 1:  # the outer key is the cluster: rows get it directly, judges are all 0
        (row_cluster, ri, rj, wi, wj, tt), collapsed = _dedupe_rows(
            starts, sorted_key, sorted_weight, n_models, outer_keys, spare, group_judge,
            n_judges, by_first)  # fmt: skip
        row_judge = np.zeros(ri.shape[0], dtype=np.int64)
        rows = PairRows(row_cluster, row_judge, ri, rj, wi, wj, tt)
        if whole:
            collapsed = whole_collapse(sorted_key, sorted_weight, n_models)
        return AggregatedRows(rows, UsedCodes(*used), _summed(collapsed), 0)
    (group, ri, rj, wi, wj, tt), collapsed = _dedupe_rows(
        starts, sorted_key, sorted_weight, n_models, np.arange(n_groups, dtype=np.int64), spare,
        group_judge, n_judges, by_first)  # fmt: skip
    row_cluster, row_judge = (outer_keys // n_judges)[group], (outer_keys % n_judges)[group]
    rows = PairRows(row_cluster, row_judge, ri, rj, wi, wj, tt)
    return AggregatedRows(rows, UsedCodes(*used), _summed(collapsed), 0)


def whole_collapse(sorted_key, sorted_weight, n_models):
    """One judge's verdict keys (``sorted_key``, ``(i * n_models + j) * 3 + outcome``, in
    any order; ``sorted_weight`` theirs or empty) summed per (i, j) as one group of
    :func:`_first_dedupe`, every run read off its marks -> (judge, i, j, wins_i, wins_j,
    ties), sorted by (i, j) as :func:`collapse_rows` gives them. The partners are put in
    order of first model by a counting sort and summed in a table of ``n_models`` cells,
    where a dense (i, j) table takes a cache miss a row (1,000 models, 1M verdicts over
    1,000 tasks: 51 -> 18 ms on one core)."""
    n = sorted_key.shape[0]
    size = min(n, n_models * (n_models - 1) // 2)
    ints = [np.empty(size, dtype=np.int64) for _ in range(3)]
    out = (*ints, np.empty(size), np.empty(size), np.empty(size))
    r = _first_dedupe(np.array([0, n], dtype=np.int64), sorted_key, sorted_weight, n_models,
                      np.zeros(1, dtype=np.int64), *out, True)  # fmt: skip
    return tuple(a[:r] for a in out)


def _summed(collapsed) -> PairRows | None:
    return None if collapsed is None else summed_rows(*collapsed)


def collapse_codes(model_a, model_b, model_a_map, model_b_map, winner, winner_map, judge,
                   cluster, failed_a, failed_b, forfeit_judge, n_models, n_judges, n_clusters,
                   weight) -> CollapsedRows:  # fmt: skip
    """Verdict codes straight to the rows summed over clusters, one per (judge, i, j), in one
    pass over a dense table (arguments as :func:`aggregate_codes`, whose ``collapsed`` rows
    these are). With :func:`verdict_cluster_scores` this is all a clustered fit needs."""
    codes = VerdictCodes(model_a, model_b, model_a_map, model_b_map, winner, winner_map, judge,
                         cluster, failed_a, failed_b, forfeit_judge, n_models, n_judges,
                         n_clusters)  # fmt: skip
    group_of = np.arange(n_clusters * n_judges, dtype=np.int64) % n_judges
    space = n_judges * n_models * n_models
    n_bad, used, acc, seen = _dense_pass(codes, weight, group_of, space,
                                         (n_models, n_judges, n_clusters))  # fmt: skip
    if n_bad:
        return CollapsedRows(no_rows(), UsedCodes(*used), _I8, n_bad)
    rows = summed_rows(*_dense_rows(acc, seen, n_models))
    slot = np.cumsum(seen, dtype=np.int64) - 1  # read only at keys that occur
    return CollapsedRows(rows, UsedCodes(*used), slot, 0)


def _dense_pass(codes: VerdictCodes, weight, group_of, space, sizes):
    """A ``_DENSE`` pass into a (group, i, j) table of ``space`` slots -> (unusable rows, used
    codes (tracked when ``sizes`` is given), acc, seen); large logs with small tables run it
    on threads, one table per piece, then add the tables up."""
    n = codes.model_a.shape[0]

    def job(lo, hi):
        part, w = _part(codes, weight, lo, hi)
        used = _zeros(sizes)
        acc, seen = np.zeros(3 * space), np.zeros(space, dtype=np.bool_)
        bad = _pass(_DENSE, part, w, group_of=group_of, used=used, acc=acc, seen=seen)
        return bad, used, acc, seen

    pieces = _pieces(n, _chunks(n) if space <= _SPLIT_DENSE else 1)
    out = _threads.run([functools.partial(job, lo, hi) for lo, hi in pieces])
    acc, seen = _add_tables([(a, sn) for _, _, a, sn in out])
    return sum(bad for bad, *_ in out), _or_flags([u for _, u, _, _ in out]), acc, seen


@njit(**_JIT)
def _group_dedupe(starts, sorted_key, sorted_weight, n_models, group_value, row_group, row_i,
                  row_j, wins_i, wins_j, ties, group_judge, acc, seen):  # fmt: skip
    """One row per distinct key within each group: fills ``row_group`` (``group_value[g]`` for
    a row of group g), ``row_i``, ``row_j`` and adds counts into the zeroed ``wins_i``,
    ``wins_j``, ``ties`` -> the number of rows. ``sorted_key`` holds ``(i * n_models + j) * 3 +
    outcome`` per verdict, grouped (group g owns ``starts[g]:starts[g + 1]``);
    ``sorted_weight`` their weights, or empty for one each. When ``acc`` is not empty, the
    counts also go into the dense (judge, i, j, outcome) table ``acc`` / ``seen``, group g's
    judge being ``group_judge[g]``: the rows collapsed over groups, on the way."""
    weighted = sorted_weight.shape[0] > 0
    collapse = acc.shape[0] > 0
    m2 = n_models * n_models
    slot = np.full(m2, -1, dtype=np.int32)
    r = 0
    for g in range(starts.shape[0] - 1):
        first = r
        base = group_judge[g] * m2 if collapse else 0
        for pos in range(starts[g], starts[g + 1]):
            k3 = sorted_key[pos]
            key = k3 // 3
            if collapse:
                acc[3 * base + k3] += sorted_weight[pos] if weighted else 1.0
                seen[base + key] = True
            s = slot[key]
            if s < 0:
                s = r
                slot[key] = r
                row_group[r] = group_value[g]
                row_i[r] = key // n_models
                row_j[r] = key - row_i[r] * n_models
                r += 1
            w = sorted_weight[pos] if weighted else 1.0
            o = k3 - 3 * key
            if o == 0:
                wins_i[s] += w
            elif o == 1:
                wins_j[s] += w
            else:
                ties[s] += w
        for s in range(first, r):
            slot[row_i[s] * n_models + row_j[s]] = -1
    return r


@njit(inline="always", **_JIT)  # called once a run: no call (nor reference counts) each time
def _emit_run(i, n_touched, touched, seen, acc, n_models, value, row_group, row_i, row_j,
              wins_i, wins_j, ties, r, ordered):  # fmt: skip
    """Rows ``r, r + 1, ...`` from the sums ``acc`` (3 per j) of one run of first model ``i``
    over the ``n_touched`` partners ``touched`` (``seen`` marks them), each with group
    ``value``; clears ``acc`` and ``seen`` after itself -> the next row. Where the partners
    are many (:data:`SCAN_RUNS`: of the n_models - i - 1 models after i, every partner is one)
    or ``ordered`` is true they are read off the marks, in increasing order of j; else taken
    in order of first occurrence (a sort here, even one never run, slows every run)."""
    if ordered or SCAN_RUNS * n_touched >= n_models - i - 1:
        t = 0
        for j in range(i + 1, n_models):
            if seen[j]:
                touched[t] = j
                t += 1
    for t in range(n_touched):
        j = touched[t]
        row_group[r] = value
        row_i[r] = i
        row_j[r] = j
        wins_i[r] = acc[3 * j]
        wins_j[r] = acc[3 * j + 1]
        ties[r] = acc[3 * j + 2]
        acc[3 * j] = 0.0
        acc[3 * j + 1] = 0.0
        acc[3 * j + 2] = 0.0
        seen[j] = 0
        r += 1
    return r


@njit(**_JIT)
def _quotient(k, d, inv):
    """``k // d`` for 0 <= k < 2^31 and d > 0, ``inv`` = 1 / d: a product corrected by one
    step where rounding put it off (an integer division takes several times as long)."""
    q = int(k * inv)
    if q * d > k:
        q -= 1
    elif (q + 1) * d <= k:
        q += 1
    return q


@njit(**_JIT)
def _first_dedupe(starts, sorted_key, sorted_weight, n_models, group_value, row_group, row_i,
                  row_j, wins_i, wins_j, ties, ordered):  # fmt: skip
    """:func:`_group_dedupe` for large groups (:data:`FIRST_GROUPS`): each group's keys put in
    order of their first model by a stable counting sort, then each first model's run summed
    per partner in a table of ``n_models`` cells (a core's cache holds it, where one slot
    table over every (i, j) takes a cache miss a verdict) -> the number of rows, in order of
    (group, i) and, within the dense runs of :func:`_emit_run` (every run when ``ordered``),
    of j (an unclustered board of many verdicts a model: every run). Within a row the weights
    add in the verdicts' order, as there."""
    weighted = sorted_weight.shape[0] > 0
    m = n_models
    n_groups = starts.shape[0] - 1
    largest = 0
    for g in range(n_groups):
        largest = max(largest, starts[g + 1] - starts[g])
    first = np.empty(largest, dtype=np.int32)  # each key's i (one division a key)
    key = np.empty(largest, dtype=np.int32)  # 3 j + outcome, in order of i
    weight = np.empty(largest if weighted else 0)
    end = np.empty(m, dtype=np.int64)
    acc = np.zeros(3 * m)
    seen = np.zeros(m, dtype=np.uint8)
    touched = np.empty(m, dtype=np.int64)
    inv = 1.0 / (3 * m) if m else 0.0
    r = 0
    for g in range(n_groups):
        lo, hi = starts[g], starts[g + 1]
        end[:] = 0
        for pos in range(lo, hi):
            i = _quotient(sorted_key[pos], 3 * m, inv)
            first[pos - lo] = i
            end[i] += 1
        at = 0
        for i in range(m):  # end[i]: where run i starts, then (after the scatter) ends
            c = end[i]
            end[i] = at
            at += c
        for pos in range(lo, hi):
            i = first[pos - lo]
            key[end[i]] = sorted_key[pos] - 3 * m * i
            if weighted:
                weight[end[i]] = sorted_weight[pos]
            end[i] += 1
        b = 0
        for i in range(m):
            e = end[i]
            n_touched = 0
            for t in range(b, e):  # no branch on the marks: new partners are unforeseeable
                k3 = key[t]
                j = k3 // 3
                touched[n_touched] = j
                n_touched += 1 - seen[j]
                seen[j] = 1
                acc[k3] += weight[t] if weighted else 1.0
            if n_touched:
                r = _emit_run(i, n_touched, touched, seen, acc, m, group_value[g], row_group,
                              row_i, row_j, wins_i, wins_j, ties, r, ordered)  # fmt: skip
            b = e
    return r


def _dedupe_rows(starts, sorted_key, sorted_weight, n_models, group_value, spare=(),
                 group_judge=None, n_judges=0, by_first=False):  # fmt: skip
    """Run :func:`_group_dedupe` on NumPy-allocated buffers -> ((group, i, j, wins_i, wins_j,
    ties), collapsed), ``group`` holding ``group_value[g]``; ``collapsed`` is None, or with
    ``group_judge`` (each group's judge) the rows summed per (judge, i, j), sorted.
    ``by_first`` (large groups, :data:`FIRST_GROUPS`; no ``group_judge``):
    :func:`_first_dedupe` instead.

    ``spare``: N-sized int64 arrays the caller no longer needs, used (in order) for ``group``,
    ``i``, ``j`` and, viewed as float64 and zeroed, ``wins_i``; fresh memory costs page faults that
    dominate this pass on large logs. The rows are views of N-sized buffers, copied down only
    when they fill less than half. Large logs split the groups into ranges of about equal
    verdicts, deduplicated on threads, each into its own stretch of the buffers (a range never
    has more rows than verdicts), then moved together in order.
    """
    n = sorted_key.shape[0]
    spare = [a for a in spare if a.shape[0] == n and a.dtype == np.int64 and a.flags.writeable]
    ints = [spare.pop(0) if spare else np.empty(n, dtype=np.int64) for _ in range(3)]
    wi = spare.pop(0).view(np.float64) if spare else np.empty(n)
    wi.fill(0.0)
    out = (*ints, wi, np.zeros(n), np.zeros(n))
    space = n_judges * n_models * n_models if group_judge is not None else 0
    gj = group_judge if group_judge is not None else np.zeros(0, dtype=np.int64)
    n_groups = starts.shape[0] - 1
    cuts = np.searchsorted(starts, np.linspace(0, n, _chunks(n) + 1)[1:-1])
    ranges = np.unique(np.concatenate([[0], np.clip(cuts, 0, n_groups), [n_groups]]))
    if ranges.size < 2:  # no groups: one empty range
        ranges = np.array([0, 0])

    def dedupe(g0, g1):
        acc, seen = np.zeros(3 * space), np.zeros(space, dtype=np.bool_)
        views = tuple(a[starts[g0]:] for a in out)
        if by_first:
            return _first_dedupe(starts[g0:g1 + 1], sorted_key, sorted_weight, n_models,
                                 group_value[g0:g1], *views, False), acc, seen  # fmt: skip
        r = _group_dedupe(starts[g0:g1 + 1], sorted_key, sorted_weight, n_models,
                          group_value[g0:g1], *views, gj[g0:g1] if space else gj, acc,
                          seen)  # fmt: skip
        return r, acc, seen

    parts = _threads.run([functools.partial(dedupe, g0, g1)
                          for g0, g1 in itertools.pairwise(ranges)])  # fmt: skip
    r = parts[0][0]
    for g0, (size, _, _) in zip(ranges[1:], parts[1:], strict=False):  # close the gaps
        for a in out:
            a[r:r + size] = a[starts[g0]:starts[g0] + size]
        r += size
    shrink = 2 * r < n
    rows = tuple(a[:r].copy() if shrink else a[:r] for a in out)
    if not space:
        return rows, None
    return rows, _dense_rows(*_add_tables([(a, sn) for _, a, sn in parts]), n_models)




def _chunks(n: int) -> int:
    """Pieces a pass over ``n`` verdicts is split into: one per worker thread on large logs."""
    return _threads.workers() if n >= _threads.CONCURRENT_ROWS else 1


def _pieces(n: int, pieces: int) -> list[tuple[int, int]]:
    """``pieces`` consecutive (start, stop) ranges of about equal length covering ``0:n``."""
    return list(itertools.pairwise(np.linspace(0, n, pieces + 1).astype(np.int64).tolist()))


def _add_tables(tables):
    """Sum per-piece (acc, seen) dense tables into the first -> (acc, seen)."""
    acc, seen = tables[0]
    for a, sn in tables[1:]:
        acc += a
        seen |= sn
    return acc, seen


def _or_flags(flags):
    """Per-piece used-code flags (models, judges, clusters) combined."""
    return tuple(np.logical_or.reduce([f[k] for f in flags]) for k in range(3))


def _zeros(sizes):
    """Fresh used-code flags (models, judges, clusters), or empty ones (not tracked)."""
    if sizes is None:
        return (np.zeros(0, dtype=np.bool_),) * 3
    return tuple(np.zeros(k, dtype=np.bool_) for k in sizes)


def _part(codes: VerdictCodes, weight, lo, hi) -> tuple[VerdictCodes, np.ndarray]:
    """The verdicts ``lo:hi`` of the codes (views; absent columns stay empty) and weights."""
    def cut(a):
        return a[lo:hi] if a.shape[0] else a

    return codes._replace(model_a=cut(codes.model_a), model_b=cut(codes.model_b),
                          winner=cut(codes.winner), judge=cut(codes.judge),
                          cluster=cut(codes.cluster), failed_a=cut(codes.failed_a),
                          failed_b=cut(codes.failed_b)), cut(weight)  # fmt: skip
