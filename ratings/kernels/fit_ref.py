"""Pure-NumPy twins of :mod:`ratings.kernels.fit`: same names, same signatures, same results.

Written for obviousness first: the tests check each kernel against its twin (argument names
as described in :mod:`ratings.kernels.fit` and :class:`ratings.core.rows.VerdictCodes`). Each is
also
vectorised (no Python loop over rows), so ``engine="auto"`` runs these on small logs, where
they finish before numba could even be loaded (see :mod:`ratings.kernels.engine`).
"""

from __future__ import annotations

import weakref
from functools import partial

import numpy as np

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
from ratings.kernels.ties_ref import davidson_row_terms, rao_kupper_row_terms

_DENSE_EXTRA = 65536  # (group, i, j) slots beyond 2 per verdict up to which counts go dense
#: Verdicts up to which the aggregation twins share one orientation of the same read-only codes
#: (see :func:`_oriented`); larger logs take the numba kernels, which orient on the fly.
_SHARE_ORIENTED = 2_000_000
#: The last shared orientation: [weak references to the codes' columns, their maps and sizes,
#: the oriented codes, the codes they use (:class:`UsedCodes`, once :func:`collapse_codes`
#: has found them; else None)], or empty.
_ORIENTED: list = []

__all__ = [  # the twin of each kernel of ratings.kernels.fit, and the sigmoid helpers
    "aggregate_codes", "bt_row_terms", "bt_scores", "cluster_meat", "cluster_scores",
    "collapse_codes", "collapse_rows", "count_rows", "crowd_assemble", "crowd_row_terms",
    "crowd_weights", "davidson_row_terms", "expit", "laplacian", "log_expit",
    "rao_kupper_row_terms", "scatter_diff", "slot_cluster_scores", "slot_collapse",
    "slot_missing", "slot_order", "slot_outcomes", "verdict_cluster_scores",
]  # fmt: skip


def expit(d: np.ndarray) -> np.ndarray:
    """sigma(d) = 1 / (1 + e^-d), overflow-free (checked against scipy.special in the tests;
    not imported from it, which costs a small fit 0.15 s of start-up)."""
    e = np.asarray(np.abs(d), dtype=np.float64)  # a new array (0-d for a number)
    np.negative(e, out=e)
    np.exp(e, out=e)  # e^-|d|: sigma(d) = 1 / (1 + e) for d >= 0, else e / (1 + e)
    out = np.where(d >= 0.0, 1.0, e)
    e += 1.0
    out /= e
    return out


def log_expit(d: np.ndarray) -> np.ndarray:
    """log sigma(d) = min(d, 0) - log1p(e^-|d|)."""
    return np.minimum(d, 0.0) - np.log1p(np.exp(-np.abs(d)))


def _xlogy0(y: np.ndarray, logp: np.ndarray) -> np.ndarray:
    """y * log p with 0 * log 0 = 0 (a row without wins contributes nothing)."""
    return np.where(y > 0.0, y * logp, 0.0)


def bt_row_terms(theta, ii, jj, wi, wj, tt, with_meat=True):
    # as the kernel: one exp and one log1p per row, e = exp(-|d|), sigma(|d|) = 1 / (1 + e),
    # log sigma(+-d) = min(+-d, 0) - log1p(e) (finite, so 0 log 0 never arises)
    d = theta[ii] - theta[jj]
    e = np.exp(-np.abs(d))
    big = 1.0 / (1.0 + e)
    small = e * big
    p = np.where(d > 0.0, big, small)  # P(i beats j)
    yi, yj = wi + 0.5 * tt, wj + 0.5 * tt
    n = yi + yj
    l1p = np.log1p(e)
    nll = -(yi @ (np.minimum(d, 0.0) - l1p) + yj @ (np.minimum(-d, 0.0) - l1p))
    if with_meat:
        q = np.where(d > 0.0, small, big)
        meat = wi * q**2 + wj * p**2 + tt * (0.5 - p) ** 2
    else:
        meat = np.zeros(0)
    small *= big
    small *= n
    return float(nll), yi - n * p, small, meat


def _scatter(shape, rows, cols, w):
    """Dense matrix with ``w`` summed into cells (rows, cols)."""
    flat = np.bincount(rows * shape[1] + cols, w, shape[0] * shape[1])
    return flat.reshape(shape)


def laplacian(n_items, ii, jj, weight):
    # sum_r w_r (e_i - e_j)(e_i - e_j)^T: the weights summed into (i, j) once, then
    # -(A + A^T) off the diagonal and each item's total weight on it
    cell = ii.astype(np.int64)
    cell *= n_items
    cell += jj
    a = np.bincount(cell, weight, n_items * n_items).reshape(n_items, n_items)
    out = a + a.T
    np.negative(out, out=out)
    out.flat[:: n_items + 1] += (np.bincount(ii, weight, n_items)
                                 + np.bincount(jj, weight, n_items))  # fmt: skip
    return out


def scatter_diff(n_items, ii, jj, weight):
    return (np.bincount(ii, weight, minlength=n_items)
            - np.bincount(jj, weight, minlength=n_items))


def bt_scores(theta, ii, jj, wi, wj, tt):
    m = theta.size
    if ii.size > m * m:  # as the kernel: sigma tabulated once per pair, one gather per row
        at = ii.astype(np.int64)
        at *= m
        at += jj
        p = expit(theta[:, None] - theta[None, :]).ravel()[at]
    else:
        p = expit(theta[ii] - theta[jj])
    out = wi + 0.5 * tt
    out -= (wi + wj + tt) * p
    return out


def cluster_meat(n_models, n_params, ii, jj, judge, score_d, score_eta, starts):
    cluster = np.repeat(np.arange(starts.size - 1), np.diff(starts))
    g = cluster_scores(starts.size - 1, n_params, ii, jj, judge, cluster, score_d,
                       score_eta, n_models)
    return g.T @ g


def _crowd_parts(d, e):
    """(log p, log pc, p_d/p, p_e/p, -p_d/pc, -p_e/pc, p_dd/p, p_de/p, p_dd/pc, p_de/pc)."""
    s, sq = expit(d), expit(-d)
    bt = e >= 1.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a = 2.0 * e - 1.0
        p = e * s + (1.0 - e) * sq
        pc = e * sq + (1.0 - e) * s
        p_d, p_e = a * s * sq, s - sq
        p_dd, p_de = p_d * (sq - s), 2.0 * s * sq
        mixed = (np.log(p), np.log(pc), p_d / p, p_e / p, -p_d / pc, -p_e / pc,
                 p_dd / p, p_de / p, p_dd / pc, p_de / pc)  # fmt: skip
        cap = 1e150  # as in the kernel: keep 0 * score = 0 where e^|d| overflows
        limit = (log_expit(d), log_expit(-d), sq, np.maximum(-np.expm1(-d), -cap), -s,
                 np.minimum(-np.expm1(d), cap),
                 sq * (sq - s), 2.0 * sq, s * (sq - s), 2.0 * s)  # eta = 1: Bradley-Terry
    return tuple(np.where(bt, lim, mix) for lim, mix in zip(limit, mixed, strict=True))


def crowd_row_terms(theta, eta, ii, jj, judge, wi, wj, tt, with_meat=True):
    # decisive verdicts only: ties are not part of the Crowd-BT likelihood
    d = theta[ii] - theta[jj]
    logp, logpc, ad, ae, bd, be, rdd_p, rde_p, rdd_c, rde_c = _crowd_parts(d, eta[judge])
    yi, yj = wi, wj
    nll = -np.sum(_xlogy0(yi, logp) + _xlogy0(yj, logpc))
    # far out (a line search's trial point) the squares overflow, as in the kernel: no warning
    with np.errstate(over="ignore", invalid="ignore"):
        terms = (
            float(nll),
            yi * ad + yj * bd,
            yi * ae + yj * be,
            yi * (ad**2 - rdd_p) + yj * (bd**2 + rdd_c),
            yi * (ad * ae - rde_p) + yj * (bd * be + rde_c),
            yi * ae**2 + yj * be**2,
        )
        if not with_meat:
            return (*terms, np.zeros(0), np.zeros(0), np.zeros(0))
        return (*terms, yi * ad**2 + yj * bd**2, yi * ad * ae + yj * bd * be,
                yi * ae**2 + yj * be**2)


def crowd_weights(d, eta, n):
    s = expit(d)
    sq = s * (1.0 - s)
    p = eta * s + (1.0 - eta) * (1.0 - s)
    pq = p * (1.0 - p)
    bt = eta >= 1.0  # p = sigma(d): the ratio p_d / sqrt(p q) is sqrt(s (1 - s)) exactly
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(bt, np.sqrt(n * sq), np.sqrt(n / pq) * (2.0 * eta - 1.0) * sq)
        b = np.sqrt(n / pq) * (2.0 * s - 1.0)
    return np.nan_to_num(a), np.nan_to_num(b)


def crowd_assemble(n_models, n_judges, ii, jj, judge, w_dd, w_deta, w_etaeta):
    # x = e_i - e_j, e = e_{M+k}: w_dd x x^T + w_deta (x e^T + e x^T) + w_etaeta e e^T
    p = n_models + n_judges
    k = n_models + judge
    dd = laplacian(p, ii, jj, w_dd)
    de = _scatter((p, p), np.concatenate([ii, jj]), np.concatenate([k, k]),
                  np.concatenate([w_deta, -w_deta]))  # fmt: skip
    return dd + de + de.T + _scatter((p, p), k, k, w_etaeta)


def cluster_scores(n_clusters, n_params, ii, jj, judge, cluster, score_d,
                   score_eta, n_models):  # fmt: skip
    out = np.zeros((n_clusters, n_params))
    np.add.at(out, (cluster, ii), score_d)
    np.add.at(out, (cluster, jj), -score_d)
    if score_eta.size:
        np.add.at(out, (cluster, n_models + judge), score_eta)
    return out



def _int_for(top: int):
    """The narrowest signed integer dtype holding every value in ``-1 .. top``."""
    for dtype in (np.int8, np.int16, np.int32):
        if top <= np.iinfo(dtype).max:
            return dtype
    return np.int64


def _keys(group, row_i, row_j, n_models, top, unsigned: bool = False):
    """``(group * n_models + row_i) * n_models + row_j`` in the narrowest signed type holding
    ``top`` (the oriented codes come in narrow types: the key is widened first, never wrapped);
    ``unsigned``: in 32 unsigned bits where ``top`` needs more than 31 and fits 32 (the codes
    widened to them: each step then works on 4 bytes a verdict, not 8)."""
    dtype = _int_for(top)
    if unsigned and dtype == np.int64 and top < 2**32:
        dtype = np.uint32
        row_i, row_j = row_i.astype(dtype), row_j.astype(dtype)
    key = group.astype(dtype)
    key *= n_models
    key += row_i
    key *= n_models
    key += row_j
    return key


def _aggregate_rows(group, row_i, row_j, outcome, weight, n_models):
    """Unique (group, i, j) rows of oriented verdicts, sorted, with their counts: a count per
    (group, i, j, outcome) cell when that table is small (no sort), else a sort (an empty
    ``weight``: one per verdict, counted without weights). With weights, a row whose weights
    are all 0 is a row still."""
    groups = int(group.max()) + 1 if group.size else 0
    space = groups * n_models * n_models
    dense = space <= 2 * group.size + _DENSE_EXTRA
    if dense and not weight.size:
        return _count_cells(group, row_i, row_j, outcome, n_models, groups)
    if dense:
        key = _keys(group, row_i, row_j, n_models, 3 * space)
        seen = np.zeros(space, dtype=bool)
        seen[key] = True
        uniq = np.flatnonzero(seen)
        key *= 3
        key += outcome
        counts = np.bincount(key, weight, 3 * space).reshape(space, 3)[uniq]
        return (*_split_keys(uniq, n_models),
                *np.ascontiguousarray(counts.T, dtype=np.float64))  # fmt: skip
    if not weight.size:
        cell = _keys(group, row_i, row_j, n_models, 4 * space, unsigned=True)  # 32 bits sort
        cell <<= 2  # (key, outcome) cells: key * 4 + outcome
        cell |= outcome.astype(cell.dtype)
        uniq, counts = _sorted_cells(cell)
        return (*_split_keys(uniq, n_models), *counts)
    key = _keys(group, row_i, row_j, n_models, space)
    uniq, code = np.unique(key, return_inverse=True)  # (no first index: a stable sort, 4x)
    uniq = uniq.astype(np.int64)
    r = uniq.size
    return (
        *_split_keys(uniq, n_models),
        np.bincount(code, weight * (outcome == 0), r),
        np.bincount(code, weight * (outcome == 1), r),
        np.bincount(code, weight * (outcome == 2), r),
    )  # fmt: skip


def _count_cells(group, row_i, row_j, outcome, n_models, groups):
    """:func:`_aggregate_rows`' dense case without weights: one count per (outcome, group, i,
    j) cell, the table outcome-major, so a key occurs where any outcome counted it and each
    outcome's counts are one gather from its contiguous third (no mark per verdict, no
    transposed copy)."""
    space = groups * n_models * n_models
    cell = np.multiply(outcome, space, dtype=np.intp)
    if groups > 1:
        cell += np.multiply(group, n_models * n_models, dtype=np.intp)
    cell += np.multiply(row_i, n_models, dtype=np.intp)
    cell += row_j
    counts = np.bincount(cell, minlength=3 * space).reshape(3, space)
    del cell
    uniq = np.flatnonzero(counts.any(axis=0))
    wi, wj, tt = np.take(counts, uniq, axis=1).astype(np.float64)
    if groups > 1:
        return (*_split_keys(uniq, n_models), wi, wj, tt)
    i, j = np.divmod(uniq, n_models)
    return np.zeros_like(uniq), i, j, wi, wj, tt


def _sorted_cells(cell):
    """Distinct keys ``cell >> 2`` (sorted, in the cells' type) and the count of each (key,
    outcome ``cell & 3``) cell, (3 x keys) float64: one sort (of the cells' own type, 32-bit
    when they fit, in place: ``cell`` is the caller's temporary, and is overwritten), no
    argsort. A key's first cell counts 1 at its outcome by comparison; the cells after it
    (repeated verdicts: few where the keys far outnumber the verdicts, as on 1,000 tasks of
    1,000 models) are added apart, so no pass counts over every cell (1M cells: 13 against
    24 ms by one cumulative sum and one count of every cell)."""
    s = cell
    s.sort()
    k = s >> 2
    later = np.flatnonzero(k[1:] == k[:-1])  # the cells after the first of their key
    later += 1
    outcome = s & 3
    first = np.delete(outcome, later) if later.size else outcome
    uniq = np.delete(k, later) if later.size else k
    counts = np.empty((3, uniq.size))
    for o in range(3):
        np.equal(first, o, out=counts[o], casting="unsafe")
    if later.size:  # a later cell's key is row (its place - the later cells up to it)
        np.add.at(counts, (outcome.take(later), later - np.arange(1, later.size + 1)), 1.0)
    return uniq, counts


def _split_keys(key, n_models):
    """``(group, i, j)`` (int64) of keys ``(group * n_models + i) * n_models + j``: two
    divisions, the group written over their first quotient (no temporaries of the keys' size
    beyond the three results); 32-bit keys divided as such and widened after (1M keys: 4
    against 7 ms)."""
    if key.dtype.itemsize <= 4 and n_models <= np.iinfo(key.dtype).max:
        m = key.dtype.type(n_models)
        rest = key // m
        j = key - rest * m
        group = rest // m
        rest -= group * m
        return group.astype(np.int64), rest.astype(np.int64), j.astype(np.int64)
    key = key.astype(np.int64, copy=False)
    rest, j = np.divmod(key, n_models)
    i = np.empty_like(rest)
    np.divmod(rest, n_models, out=(rest, i))
    return rest, i, j


def collapse_rows(judge, ii, jj, wi, wj, tt, n_judges, n_models):
    # a dense table of the (judge, i, j) keys when it is small next to the rows, else a sort
    key = (judge.astype(np.int64) * n_models + ii) * n_models + jj
    space = n_judges * n_models * n_models
    if space <= max(2 * key.size, 1 << 20):
        seen = np.zeros(space, dtype=bool)
        seen[key] = True
        uniq = np.flatnonzero(seen)
        sums = [np.bincount(key, w, space)[uniq] for w in (wi, wj, tt)]
    else:
        uniq, code = np.unique(key, return_inverse=True)
        sums = [np.bincount(code, w, uniq.size) for w in (wi, wj, tt)]
    return (uniq // (n_models * n_models), (uniq // n_models) % n_models, uniq % n_models,
            *sums)


def count_rows(model_a, model_b, model_a_map, model_b_map, judge, cluster, wins_a, wins_b, ties,
               n_models, n_judges, n_clusters) -> AggregatedRows:  # fmt: skip
    """Rows of a counts table oriented, summed per (cluster, judge, i, j) and sorted by that
    key: a dense table when the key space is small next to the rows, else a sort."""
    n = model_a.shape[0]
    a = np.append(model_a_map, -1)[model_a]  # code -1 (missing) takes the appended -1
    b = np.append(model_b_map, -1)[model_b]
    judge = judge.astype(np.int64) if judge.size else np.zeros(n, dtype=np.int64)
    cluster = cluster.astype(np.int64) if cluster.size else np.zeros(n, dtype=np.int64)
    bad = (a < 0) | (b < 0) | (a == b) | (judge < 0) | (cluster < 0)
    for w in (wins_a, wins_b, ties):  # counts of verdicts: whole numbers in [0, 2^53]
        with np.errstate(invalid="ignore"):
            bad |= ~((w >= 0) & (w <= MAX_COUNT) & (w == np.floor(w)))
    ok = ~bad
    used = UsedCodes(*(np.bincount(c[ok], minlength=size).astype(bool) | np.bincount(
        d[ok], minlength=size).astype(bool) for c, d, size in ((a, b, n_models),
        (judge, judge, n_judges), (cluster, cluster, n_clusters))))  # fmt: skip
    if bad.any():
        return AggregatedRows(no_rows(), used, None, int(bad.sum()))
    swap = a > b
    i, j = np.where(swap, b, a), np.where(swap, a, b)
    wi, wj = np.where(swap, wins_b, wins_a), np.where(swap, wins_a, wins_b)
    key = ((cluster * n_judges + judge) * n_models + i) * n_models + j
    space = n_clusters * n_judges * n_models * n_models
    if space <= max(4 * key.size, 1 << 20):
        uniq = np.flatnonzero(np.bincount(key, minlength=space))
        sums = [np.bincount(key, w, space)[uniq] for w in (wi, wj, ties)]
    else:
        uniq, code = np.unique(key, return_inverse=True)
        sums = [np.bincount(code, w, uniq.size) for w in (wi, wj, ties)]
    rest, j = np.divmod(uniq, n_models)
    rest, i = np.divmod(rest, n_models)
    g, k = np.divmod(rest, n_judges)
    return AggregatedRows(PairRows(g, k, i, j, *(np.asarray(w, dtype=np.float64) for w in sums)),
                          used, None, 0)


def _orient(c: VerdictCodes):
    """Each verdict oriented (see :mod:`ratings.kernels.aggregate`; ``c`` full-length, as
    :func:`_full` gives it) -> (outer key, i, j, outcome, judge, used model codes, unusable).
    Outputs are 0 where a code is missing; each comes in the narrowest integer type that holds
    its values (model codes, outer keys, judges; outcomes int8). The used models are None when
    every verdict is usable: they are then the models of the caller's rows
    (:func:`_used_models`, a pass over the rows instead of two over the verdicts)."""
    codes = (c.model_a, c.model_b, c.winner, c.judge, c.cluster)
    # a missing code is rare: the mask only where some column's least code is below 0
    any_missing = any(a.size and int(a.min()) < 0 for a in codes)
    if any_missing:  # look codes up at 0 there (the outputs are zeroed at the end)
        missing = (c.model_a < 0) | (c.model_b < 0) | (c.winner < 0) | (c.judge < 0) | (
            c.cluster < 0)
        c = c._replace(**{f: np.where(missing, 0, getattr(c, f))
                          for f in ("model_a", "model_b", "winner", "judge", "cluster")})
    m_type = _int_for(c.n_models)
    ia = _mapped(c.model_a, c.model_a_map, m_type)  # maps hold -1 .. n_models - 1
    ib = _mapped(c.model_b, c.model_b_map, m_type)
    res, judge = _mapped(c.winner, c.winner_map, np.int8), c.judge  # outcomes -1 .. 2
    if c.failed_a.any() or c.failed_b.any():
        forfeit = c.failed_a | c.failed_b
        res = np.where(forfeit, np.where(c.failed_a & c.failed_b, 2, np.where(c.failed_a, 1, 0)),
                       res).astype(np.int8)  # fmt: skip
        judge = np.where(forfeit, c.forfeit_judge, judge)
    judge = judge.astype(_int_for(c.n_judges), copy=False)
    i, j = np.minimum(ia, ib), np.maximum(ia, ib)
    bad = i == j
    if min(int(c.model_a_map.min(initial=0)), int(c.model_b_map.min(initial=0))) < 0:
        bad |= i < 0  # a name left out of the models
    if int(res.min(initial=0)) < 0:
        bad |= res < 0  # a winner that is not A, B or tie
    if any_missing:
        bad |= missing
    n_bad = int(np.count_nonzero(bad))
    used_m = None
    if n_bad:
        used_m = np.zeros(c.n_models, dtype=bool)
        used_m[i[~bad]] = True
        used_m[j[~bad]] = True
    outer = c.cluster.astype(_int_for(c.n_clusters * c.n_judges), copy=c.n_judges > 1)
    if c.n_judges > 1:
        outer *= c.n_judges
        outer += judge
    swap = ia > ib  # a swap turns 0 <-> 1 (i won <-> j won), not ties
    swap &= res < 2
    res ^= swap
    out = [outer, i, j, res, judge]
    if any_missing:
        out = [np.where(missing, 0, a).astype(a.dtype, copy=False) for a in out]
    return (*out, used_m, n_bad)


def _used_models(used_m, ri, rj, n_models: int):
    """``used_m`` from :func:`_orient`, or where it is None (every verdict usable) the models
    of the rows ``ri``, ``rj`` (every verdict is in a row)."""
    if used_m is None:
        used_m = np.zeros(n_models, dtype=bool)
        used_m[ri] = True
        used_m[rj] = True
    return used_m


def _mark(used, codes) -> None:
    """``used[codes] = True`` for valid codes; one code (a single judge or cluster: every code
    0) without a pass over them."""
    if used.size == 1:
        used[0] = used[0] or codes.size > 0
    else:
        used[codes] = True


def _mapped(codes, table, dtype):
    """``table[codes]`` as a new array of ``dtype`` (codes at least 0); where the table is
    the identity (a log read by :func:`ratings.io.read_verdicts`: its categories are the
    models, sorted) the codes are copied instead of gathered (1M codes: 0.3 against 2 ms)."""
    if np.array_equal(table, np.arange(table.size)):
        return codes.astype(dtype)
    return table.astype(dtype)[codes]


def _full(c: VerdictCodes) -> VerdictCodes:
    """The optional columns (judge, cluster, forfeits) full-length; codes keep their width."""
    n = c.model_a.size

    def full(a, dtype):
        return np.zeros(n, dtype=dtype) if a.size == 0 else np.asarray(a)

    return c._replace(judge=full(c.judge, np.int8), cluster=full(c.cluster, np.int8),
                      failed_a=full(c.failed_a, bool), failed_b=full(c.failed_b, bool))


def _oriented(raw: VerdictCodes, *, last: bool = False):
    """``(_full(raw), _orient(_full(raw)), used)``, the orientation shared by the twins called
    in turn on the same verdict codes (a clustered fit's log: :func:`collapse_codes`,
    :func:`verdict_cluster_scores`, then :func:`aggregate_codes`, which passes ``last`` and
    lets it go); ``used``: the codes those verdicts use, as :func:`collapse_codes` found them
    (:func:`_remember_used`; copies), or None.

    Shared only when every per-verdict column is read-only (a categorical's codes) and the log
    is within :data:`_SHARE_ORIENTED` verdicts: the same column objects, maps and sizes then mean
    the same verdicts. The oriented arrays (narrow: about 8 bytes a verdict) are read-only; they
    are dropped with the codes, once ``last`` has used them, or for the next codes oriented.
    """
    columns = (raw.model_a, raw.model_b, raw.winner, raw.judge, raw.cluster, raw.failed_a,
               raw.failed_b)  # fmt: skip
    rest = (raw.model_a_map, raw.model_b_map, raw.winner_map, raw.forfeit_judge, raw.n_models,
            raw.n_judges, raw.n_clusters)  # fmt: skip
    shared = (raw.model_a.size <= _SHARE_ORIENTED
              and not any(a.flags.writeable for a in columns if a.size))  # fmt: skip
    c = _full(raw)
    for refs, known, out, found in _ORIENTED[:1] if shared else ():  # (a copy: fits on threads)
        same = all(r() is a for r, a in zip(refs, columns, strict=True))
        if same and all(np.array_equal(k, v) for k, v in zip(known, rest, strict=True)):
            if last:
                _ORIENTED.clear()
            used = None if out[5] is None else out[5].copy()  # the used models: the caller's
            return c, (*out[:5], used, out[6]), _copied(found)
    _ORIENTED.clear()
    out = _orient(c)
    if shared and not last:
        for a in out[:5]:
            a.setflags(write=False)
        # weak references: the entry goes when the codes do (it holds no model or winner codes)
        refs = [weakref.ref(a, lambda _: _ORIENTED.clear()) for a in columns]
        _ORIENTED[:] = [[refs, tuple(np.copy(v) for v in rest), out, None]]
        out = (*out[:5], None if out[5] is None else out[5].copy(), out[6])
    return c, out, None


def _remember_used(used: UsedCodes) -> None:
    """Keep ``used`` (copies) with the shared orientation of the codes just oriented, for the
    next twin over them (the same verdicts use the same models, judges and clusters: the
    per-cluster rows need not mark them again, a pass over every verdict and row)."""
    if _ORIENTED:
        _ORIENTED[0][3] = _copied(used)


def _copied(used: UsedCodes | None) -> UsedCodes | None:
    return None if used is None else UsedCodes(*(a.copy() for a in used))


def aggregate_codes(model_a, model_b, model_a_map, model_b_map, winner, winner_map, judge,
                    cluster, failed_a, failed_b, forfeit_judge, n_models, n_judges, n_clusters,
                    weight, reuse=False, collapse=True) -> AggregatedRows:  # fmt: skip
    # ``collapse``: sum the rows over clusters too, where a count per (judge, i, j, outcome)
    # cell of the verdicts is cheaper than collapsing the rows later (:func:`_collapses`)
    raw = VerdictCodes(model_a, model_b, model_a_map, model_b_map, winner, winner_map, judge,
                       cluster, failed_a, failed_b, forfeit_judge, n_models, n_judges,
                       n_clusters)  # fmt: skip
    c, oriented, found = _oriented(raw, last=True)
    outer, i, j, o, _, used_m, n_bad = oriented
    used_j = np.zeros(n_judges, dtype=bool)
    used_g = np.zeros(n_clusters, dtype=bool)
    if n_bad:
        return AggregatedRows(no_rows(), UsedCodes(used_m, used_j, used_g), None, n_bad)
    if found is None:
        _mark(used_j, c.judge)
        _mark(used_g, c.cluster)
    jobs = [partial(_aggregate_rows, outer, i, j, o, weight, n_models)]
    if collapse and _collapses(i.size, n_clusters, n_judges, n_models, weight):  # side by side
        jobs.append(partial(_aggregate_rows, oriented[4], i, j, o, weight, n_models))
    done = _threads.run(jobs) if i.size >= _threads.CONCURRENT_ROWS else [f() for f in jobs]
    key, ri, rj, wi, wj, tt = done[0]
    summed = summed_rows(*done[1]) if len(done) > 1 else None
    # one judge: zeros from calloc, whose pages a pass that never reads them never touches
    cluster, judge = ((key, np.zeros(key.size, dtype=key.dtype)) if n_judges == 1
                      else np.divmod(key, n_judges))  # fmt: skip
    pairs = (ri, rj) if summed is None else (summed.ii, summed.jj)  # the same models, fewer
    used = found or UsedCodes(_used_models(used_m, *pairs, n_models), used_j, used_g)
    return AggregatedRows(PairRows(cluster, judge, ri, rj, wi, wj, tt), used, summed, 0)


def _collapses(n: int, n_clusters: int, n_judges: int, n_models: int, weight) -> bool:
    """Does :func:`aggregate_codes` sum its rows over clusters from the ``n`` verdicts (one
    count per (judge, i, j, outcome) cell), beside its per-cluster rows? Where the clusters'
    (cluster, judge, i, j) keys are too many for :func:`_aggregate_rows`' dense table (its sort
    path: the rows are then most of the verdicts, 63 % or more where verdicts fall on keys
    uniformly; 999k rows of 1M verdicts on 1,000 models and 1,000 tasks, whose count takes
    21 ms against 32 ms for :func:`collapse_rows` of the rows), the (judge, i, j) table is
    dense and the verdicts are unweighted (the sums are then the same counts, exactly)."""
    limit = 2 * n + _DENSE_EXTRA  # the keys' limit of the dense table
    return (n_clusters > 1 and not weight.size and n_clusters * n_judges * n_models**2 > limit
            and n_judges * n_models**2 <= limit)


def collapse_codes(model_a, model_b, model_a_map, model_b_map, winner, winner_map, judge,
                   cluster, failed_a, failed_b, forfeit_judge, n_models, n_judges, n_clusters,
                   weight) -> CollapsedRows:  # fmt: skip
    # the rows summed over clusters (one per (judge, i, j)) and each key's row
    raw = VerdictCodes(model_a, model_b, model_a_map, model_b_map, winner, winner_map, judge,
                       cluster, failed_a, failed_b, forfeit_judge, n_models, n_judges,
                       n_clusters)  # fmt: skip
    c, oriented, _ = _oriented(raw)
    _, i, j, o, row_judge, used_m, n_bad = oriented
    used_j = np.zeros(n_judges, dtype=bool)
    used_g = np.zeros(n_clusters, dtype=bool)
    if n_bad:
        return CollapsedRows(no_rows(), UsedCodes(used_m, used_j, used_g),
                             np.zeros(0, dtype=np.int64), n_bad)  # fmt: skip
    _mark(used_j, c.judge)
    _mark(used_g, c.cluster)
    row_judge, ri, rj, wi, wj, tt = _aggregate_rows(row_judge, i, j, o, weight, n_models)
    slot = np.full(n_judges * n_models * n_models, -1, dtype=np.int64)
    slot[(row_judge * n_models + ri) * n_models + rj] = np.arange(row_judge.size)
    used = UsedCodes(_used_models(used_m, ri, rj, n_models), used_j, used_g)
    _remember_used(used)
    return CollapsedRows(summed_rows(row_judge, ri, rj, wi, wj, tt), used, slot, 0)


def verdict_cluster_scores(model_a, model_b, model_a_map, model_b_map, winner, winner_map,
                           judge, cluster, failed_a, failed_b, forfeit_judge, n_models, n_judges,
                           n_clusters, weight, slot, tab_d, tab_e):  # fmt: skip
    raw = VerdictCodes(model_a, model_b, model_a_map, model_b_map, winner, winner_map, judge,
                       cluster, failed_a, failed_b, forfeit_judge, n_models, n_judges,
                       n_clusters)  # fmt: skip
    c, oriented, _ = _oriented(raw)
    # the callers pass usable verdicts only (aggregate found none unusable)
    _, i, j, o, row_judge, _, _ = oriented
    at3 = slot[_keys(row_judge, i, j, n_models, n_judges * n_models * n_models)]
    at3 *= 3
    at3 += o  # each verdict's cell 3 r + o of its collapsed row r
    n_cols = n_models + (n_judges if tab_e.size else 0)

    def weighted(tab):  # an empty weight is one per verdict
        return tab[at3] if weight.size == 0 else tab[at3] * weight

    s = weighted(tab_d)
    cells, at = n_clusters * n_cols, c.cluster.astype(np.int64)
    at *= n_cols
    at += i
    out = np.bincount(at, s, cells)
    at -= i
    at += j
    out -= np.bincount(at, s, cells)
    if tab_e.size:
        at -= j
        at += n_models
        at += row_judge
        out += np.bincount(at, weighted(tab_e), cells)
    return out.reshape(n_clusters, n_cols)


def slot_collapse(judge, a, b, wins_a, wins_b, ties, n_judges, n_models):
    key = (judge * n_models + a) * n_models + b
    uniq, row = np.unique(key, return_inverse=True)
    rest, row_b = np.divmod(uniq, n_models)
    row_judge, row_a = np.divmod(rest, n_models)
    sums = (np.bincount(row, w, uniq.size) for w in (wins_a, wins_b, ties))
    return (row_judge, row_a, row_b, *sums, row.reshape(-1))


def slot_outcomes(winner, failed_a, failed_b, wins_a, wins_b, ties, forfeit):
    """Wins of A, wins of B and ties per verdict from winner codes (0 A, 1 B, 2 tie), with
    render forfeits (the submission that rendered wins, two failures tie), written into
    ``wins_a``, ``wins_b``, ``ties`` and ``forfeit``."""
    forfeit[:] = failed_a | failed_b
    w = np.where(failed_a & failed_b, 2, np.where(failed_a, 1, np.where(failed_b, 0, winner)))
    wins_a[:], wins_b[:], ties[:] = w == 0, w == 1, w == 2


def slot_missing(a, b, judge, cluster):
    """How many verdicts have a code below 0 in any of the four."""
    return int(np.sum((a < 0) | (b < 0) | (judge < 0) | (cluster < 0)))


def slot_order(row_cluster, n_clusters, order, rank):
    """The row numbers ordered by cluster, keeping their order within a cluster, into
    ``order``, and each row's place in that order into ``rank``; False (both untouched) when
    the rows are in cluster order already."""
    if np.all(row_cluster[1:] >= row_cluster[:-1]):
        return False
    order[:] = np.argsort(row_cluster, kind="stable")
    rank[order] = np.arange(order.size)
    return True


def slot_cluster_scores(n_clusters, n_models, n_judges, cluster, judge, a, b, d_own, score,
                        score_eta):  # fmt: skip
    p = n_models + 3 * n_judges
    cells, at = n_clusters * p, cluster * p
    out = (np.bincount(at + a, score, cells) - np.bincount(at + b, score, cells)
           + np.bincount(at + n_models + judge, score, cells)
           + np.bincount(at + n_models + n_judges + judge, score * d_own, cells))  # fmt: skip
    if score_eta.size:
        out += np.bincount(at + n_models + 2 * n_judges + judge, score_eta, cells)
    return out.reshape(n_clusters, p)
