"""Numba kernels over verdict codes and aggregated comparison rows.

Private. Kernels take only C-contiguous float64/int64 arrays and scalars and never validate; the
callers in :mod:`ratings.data`, :mod:`ratings.bt` and :mod:`ratings.uncertainty` do. The one
exception are the verdict codes of the aggregation passes (``ca``, ``cb``, ``wc``, ``jc``,
``gc``), taken as they come (a categorical's int8 or int16 codes, read-only) rather than copied
to int64: numba compiles one specialisation per code width, cached on disk. Every
function here has a twin of the same name and signature in :mod:`ratings._kernels_ref`, written
with vectorised NumPy for obviousness; the tests compare the two.

Row layout (one row per unique (i, j, judge, cluster)): ``ii``, ``jj`` int64[R] model codes,
``wi``, ``wj``, ``tt`` float64[R] wins of i, wins of j and ties. A tie is one observation with
outcome 1/2 for i.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
from numba import njit

from ratings import _threads

__all__ = [  # each kernel has a twin of the same name in ratings._kernels_ref
    "aggregate_codes", "bt_row_terms", "bt_scores", "cluster_meat",
    "cluster_scores", "collapse_codes", "collapse_rows", "crowd_assemble", "crowd_row_terms",
    "laplacian", "scatter_diff", "verdict_cluster_scores",
]  # fmt: skip

_JIT = {"cache": True, "nogil": True}  # no fastmath: the likelihood relies on inf/NaN semantics
_SCORE_CAP = 1e150  # |score| bound where it would overflow; its square still fits in a double
# Aggregation uses a dense (group, i, j) table while it has at most N / 2 + _DENSE_EXTRA slots.
_DENSE_EXTRA = 65536


@njit(**_JIT)
def _log_sigmoid(d):
    """log(sigma(d)), overflow-safe."""
    if d > 0.0:
        return -np.log1p(np.exp(-d))
    return d - np.log1p(np.exp(d))


@njit(**_JIT)
def _sigmoid(d):
    if d > 0.0:
        return 1.0 / (1.0 + np.exp(-d))
    e = np.exp(d)
    return e / (1.0 + e)


@njit(**_JIT)
def bt_row_terms(theta, ii, jj, wi, wj, tt, with_meat=True):
    """Bradley-Terry terms per row.

    theta f8[M]; ii, jj i8[R]; wi, wj, tt f8[R] ->
    (nll f8, score f8[R], info f8[R], meat f8[R]):
    ``score`` is d loglik / d(theta_i - theta_j) summed over the row's verdicts, ``info`` the
    matching negative second derivative n p (1 - p), and ``meat`` the sum over the row's
    verdicts of the squared per-verdict score (for the per-verdict sandwich; empty when
    ``with_meat`` is false, as in Newton's iterations).
    """
    n_rows = ii.shape[0]
    score = np.empty(n_rows)
    info = np.empty(n_rows)
    meat = np.empty(n_rows if with_meat else 0)
    nll = 0.0
    for r in range(n_rows):
        d = theta[ii[r]] - theta[jj[r]]
        # One exp and one log1p per row: with e = exp(-|d|), sigma(|d|) = 1 / (1 + e) and
        # log sigma(+-d) = min(+-d, 0) - log1p(e). Selects, not branches, so the loop runs
        # without mispredicted jumps on the random outcomes.
        e = np.exp(-abs(d))
        big = 1.0 / (1.0 + e)
        small = e * big
        p = big if d > 0.0 else small
        q = small if d > 0.0 else big
        l1p = np.log1p(e)
        half = 0.5 * tt[r]
        yi = wi[r] + half
        yj = wj[r] + half
        li = yi * (min(d, 0.0) - l1p)
        lj = yj * (min(-d, 0.0) - l1p)
        nll -= (li if yi > 0.0 else 0.0) + (lj if yj > 0.0 else 0.0)  # 0 log 0 = 0
        score[r] = yi - (yi + yj) * p
        info[r] = (yi + yj) * big * small
        if with_meat:
            meat[r] = wi[r] * q * q + wj[r] * p * p + tt[r] * (0.5 - p) * (0.5 - p)
    return nll, score, info, meat


@njit(**_JIT)
def bt_scores(theta, ii, jj, wi, wj, tt):
    """Bradley-Terry summed score per row, ``wi + tt / 2 - n sigma(theta_i - theta_j)`` -> f8[R].

    The score column of :func:`bt_row_terms` alone (what the clustered sandwich needs). When
    there are more rows than model pairs, sigma is tabulated once per pair.
    """
    n_rows = ii.shape[0]
    m = theta.shape[0]
    score = np.empty(n_rows)
    if n_rows > m * m:
        table = np.empty(m * m)
        for i in range(m):
            for j in range(m):
                table[i * m + j] = _sigmoid(theta[i] - theta[j])
        for r in range(n_rows):
            p = table[ii[r] * m + jj[r]]
            score[r] = wi[r] + 0.5 * tt[r] - (wi[r] + wj[r] + tt[r]) * p
    else:
        for r in range(n_rows):
            p = _sigmoid(theta[ii[r]] - theta[jj[r]])
            score[r] = wi[r] + 0.5 * tt[r] - (wi[r] + wj[r] + tt[r]) * p
    return score


@njit(**_JIT)
def laplacian(n_items, ii, jj, w):
    """Weighted graph Laplacian sum_r w_r (e_i - e_j)(e_i - e_j)^T -> f8[n_items, n_items]."""
    out = np.zeros((n_items, n_items))
    for r in range(ii.shape[0]):
        i = ii[r]
        j = jj[r]
        out[i, i] += w[r]
        out[j, j] += w[r]
        out[i, j] -= w[r]
        out[j, i] -= w[r]
    return out


@njit(**_JIT)
def scatter_diff(n_items, ii, jj, w):
    """sum_r w_r (e_i - e_j) -> f8[n_items]."""
    out = np.zeros(n_items)
    for r in range(ii.shape[0]):
        out[ii[r]] += w[r]
        out[jj[r]] -= w[r]
    return out


@njit(**_JIT)
def cluster_meat(n_models, n_params, ii, jj, kk, sd, se, starts):
    """Sum over clusters of g_c g_c^T -> f8[n_params, n_params], with
    g_c = sum_{r in c} sd_r (e_i - e_j), plus se_r e_{n_models + k} when ``se`` is non-empty
    (Crowd-BT's eta block).

    Rows must be grouped by cluster: cluster c owns rows ``starts[c]:starts[c + 1]``
    (``starts`` i8[G + 1]). Cost is sum over clusters of (parameters touched)^2; used when the
    G x P matrix of :func:`cluster_scores` would be too large to hold.
    """
    out = np.zeros((n_params, n_params))
    g = np.zeros(n_params)
    seen = np.zeros(n_params, dtype=np.bool_)
    touched = np.empty(n_params, dtype=np.int64)
    with_eta = se.shape[0] > 0
    for c in range(starts.shape[0] - 1):
        cnt = 0
        for r in range(starts[c], starts[c + 1]):
            i = ii[r]
            j = jj[r]
            k = n_models + kk[r] if with_eta else i
            for idx in (i, j, k):
                if not seen[idx]:
                    seen[idx] = True
                    touched[cnt] = idx
                    cnt += 1
            g[i] += sd[r]
            g[j] -= sd[r]
            if with_eta:
                g[k] += se[r]
        for a in range(cnt):
            ta = touched[a]
            ga = g[ta]
            for b in range(cnt):
                out[ta, touched[b]] += ga * g[touched[b]]
        for a in range(cnt):
            g[touched[a]] = 0.0
            seen[touched[a]] = False
    return out


# --- Crowd-BT -------------------------------------------------------------------------------
# p = eta sigma(d) + (1 - eta) sigma(-d), the probability that judge k says i beat j.


@njit(**_JIT)
def _crowd_point(d, eta):
    """Log-probabilities and derivative ratios at one (d, eta).

    -> (log p, log pc, p_d/p, p_e/p, -p_d/pc, -p_e/pc, p_dd/p, p_de/p, p_dd/pc, p_de/pc) with
    p = eta sigma(d) + (1 - eta) sigma(-d), pc = 1 - p. For eta < 1, p and pc are at least
    (1 - eta) / 2, so the ratios are safe; eta = 1 uses the Bradley-Terry limits, which stay
    finite where sigma(d) underflows.
    """
    s = _sigmoid(d)
    sq = _sigmoid(-d)
    if eta >= 1.0:  # eta-scores grow like e^|d|; capped so that 0 counts times them stay 0
        ae = max(-np.expm1(-d), -_SCORE_CAP)
        be = min(-np.expm1(d), _SCORE_CAP)
        return (_log_sigmoid(d), _log_sigmoid(-d), sq, ae, -s, be,
                sq * (sq - s), 2.0 * sq, s * (sq - s), 2.0 * s)
    a = 2.0 * eta - 1.0
    p = eta * s + (1.0 - eta) * sq
    pc = eta * sq + (1.0 - eta) * s
    p_d = a * s * sq  # dp/dd
    p_e = s - sq  # dp/deta = 2 sigma(d) - 1
    p_dd = p_d * (sq - s)
    p_de = 2.0 * s * sq
    return (np.log(p), np.log(pc), p_d / p, p_e / p, -p_d / pc, -p_e / pc,
            p_dd / p, p_de / p, p_dd / pc, p_de / pc)


@njit(**_JIT)
def crowd_row_terms(theta, eta, ii, jj, kk, wi, wj, tt, with_meat=True):
    """Crowd-BT terms per row (judge ``kk[r]`` with quality ``eta[kk[r]]``).

    theta f8[M]; eta f8[K]; ii, jj, kk i8[R]; wi, wj, tt f8[R] -> (nll f8, then f8[R] each:
    gd, ge (summed scores of the log-likelihood w.r.t. d = theta_i - theta_j and eta_k),
    hdd, hde, hee (summed negative second derivatives), mdd, mde, mee (sums over the row's
    verdicts of products of per-verdict scores, for the per-verdict sandwich; empty when
    ``with_meat`` is false, as in Newton's iterations)).
    """
    n_rows = ii.shape[0]
    gd = np.empty(n_rows)
    ge = np.empty(n_rows)
    hdd = np.empty(n_rows)
    hde = np.empty(n_rows)
    hee = np.empty(n_rows)
    n_meat = n_rows if with_meat else 0
    mdd = np.empty(n_meat)
    mde = np.empty(n_meat)
    mee = np.empty(n_meat)
    nll = 0.0
    for r in range(n_rows):
        d = theta[ii[r]] - theta[jj[r]]
        logp, logpc, ad, ae, bd, be, rdd_p, rde_p, rdd_c, rde_c = _crowd_point(d, eta[kk[r]])
        yi = wi[r] + 0.5 * tt[r]
        yj = wj[r] + 0.5 * tt[r]
        if yi > 0.0:
            nll -= yi * logp
        if yj > 0.0:
            nll -= yj * logpc
        # per-verdict scores: i wins (log p), j wins (log(1 - p)), tie (average)
        td, te = 0.5 * (ad + bd), 0.5 * (ae + be)
        gd[r] = yi * ad + yj * bd
        ge[r] = yi * ae + yj * be
        # -d2/dxdy [yi log p + yj log pc] = yi (px py/p^2 - pxy/p) + yj (px py/pc^2 + pxy/pc)
        hdd[r] = yi * (ad * ad - rdd_p) + yj * (bd * bd + rdd_c)
        hde[r] = yi * (ad * ae - rde_p) + yj * (bd * be + rde_c)
        hee[r] = yi * ae * ae + yj * be * be
        if with_meat:
            mdd[r] = wi[r] * ad * ad + wj[r] * bd * bd + tt[r] * td * td
            mde[r] = wi[r] * ad * ae + wj[r] * bd * be + tt[r] * td * te
            mee[r] = wi[r] * ae * ae + wj[r] * be * be + tt[r] * te * te
    return nll, gd, ge, hdd, hde, hee, mdd, mde, mee


@njit(**_JIT)
def crowd_assemble(n_models, n_judges, ii, jj, kk, wdd, wde, wee):
    """sum_r of the (M + K)-square block built from x = e_i - e_j and e_{M + k}:
    wdd x x^T + wde (x e_k^T + e_k x^T) + wee e_k e_k^T -> f8[M + K, M + K]."""
    out = np.zeros((n_models + n_judges, n_models + n_judges))
    for r in range(ii.shape[0]):
        i = ii[r]
        j = jj[r]
        k = n_models + kk[r]
        out[i, i] += wdd[r]
        out[j, j] += wdd[r]
        out[i, j] -= wdd[r]
        out[j, i] -= wdd[r]
        out[i, k] += wde[r]
        out[k, i] += wde[r]
        out[j, k] -= wde[r]
        out[k, j] -= wde[r]
        out[k, k] += wee[r]
    return out


@njit(**_JIT)
def cluster_scores(n_clusters, n_params, ii, jj, kk, cluster, sd, se, n_models):
    """Summed score of each cluster, f8[G, P]: row c is sum_{r in c} sd_r (e_i - e_j), plus
    se_r e_{n_models + k} when ``se`` is non-empty (Crowd-BT's eta block)."""
    out = np.zeros((n_clusters, n_params))
    with_eta = se.shape[0] > 0
    for r in range(ii.shape[0]):
        c = cluster[r]
        out[c, ii[r]] += sd[r]
        out[c, jj[r]] -= sd[r]
        if with_eta:
            out[c, n_models + kk[r]] += se[r]
    return out


@njit(**_JIT)
def _group_dedupe(starts, s_key, s_w, n_models, group_value, row_group, row_i, row_j, wi, wj,
                  tt, group_judge, acc, seen):  # fmt: skip
    """One row per distinct key within each group: fills ``row_group`` (``group_value[g]`` for
    a row of group g), ``row_i``, ``row_j`` and adds counts into the zeroed ``wi``, ``wj``,
    ``tt`` -> the number of rows. ``s_key`` holds ``(i * n_models + j) * 3 + outcome`` per
    verdict, grouped (group g owns ``starts[g]:starts[g + 1]``); ``s_w`` their weights, or
    empty for one each. When ``acc`` is not empty, the counts also go into the dense
    (judge, i, j, outcome) table ``acc`` / ``seen``, group g's judge being ``group_judge[g]``:
    the rows collapsed over groups, on the way."""
    weighted = s_w.shape[0] > 0
    collapse = acc.shape[0] > 0
    m2 = n_models * n_models
    slot = np.full(m2, -1, dtype=np.int32)
    r = 0
    for g in range(starts.shape[0] - 1):
        first = r
        base = group_judge[g] * m2 if collapse else 0
        for pos in range(starts[g], starts[g + 1]):
            k3 = s_key[pos]
            key = k3 // 3
            if collapse:
                acc[3 * base + k3] += s_w[pos] if weighted else 1.0
                seen[base + key] = True
            s = slot[key]
            if s < 0:
                s = r
                slot[key] = r
                row_group[r] = group_value[g]
                row_i[r] = key // n_models
                row_j[r] = key - row_i[r] * n_models
                r += 1
            w = s_w[pos] if weighted else 1.0
            o = k3 - 3 * key
            if o == 0:
                wi[s] += w
            elif o == 1:
                wj[s] += w
            else:
                tt[s] += w
        for s in range(first, r):
            slot[row_i[s] * n_models + row_j[s]] = -1
    return r


def _dedupe_rows(starts, s_key, s_w, n_models, group_value, spare=(), group_judge=None,
                 n_judges=0):  # fmt: skip
    """Run :func:`_group_dedupe` on NumPy-allocated buffers -> ((group, i, j, wi, wj, tt),
    collapsed), ``group`` holding ``group_value[g]``; ``collapsed`` is None, or with
    ``group_judge`` (each group's judge) the rows summed per (judge, i, j), sorted.

    ``spare``: N-sized int64 arrays the caller no longer needs, used (in order) for ``group``,
    ``i``, ``j`` and, viewed as float64 and zeroed, ``wi``; fresh memory costs page faults that
    dominate this pass on large logs. The rows are views of N-sized buffers, copied down only
    when they fill less than half. Large logs split the groups into ranges of about equal
    verdicts, deduplicated on threads, each into its own stretch of the buffers (a range never
    has more rows than verdicts), then moved together in order.
    """
    n = s_key.shape[0]
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
        r = _group_dedupe(starts[g0:g1 + 1], s_key, s_w, n_models, group_value[g0:g1], *views,
                          gj[g0:g1] if space else gj, acc, seen)  # fmt: skip
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


@njit(**_JIT)
def collapse_rows(judge, ii, jj, wi, wj, tt, n_judges, n_models):
    """Sum rows' counts per (judge, i, j) over a dense table -> rows sorted by that key:
    (judge, i, j i8[R']; wi, wj, tt f8[R']). For ``n_judges * n_models^2`` small enough."""
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


_COUNT, _DENSE, _SCATTER, _SCORES = 0, 1, 2, 3  # what one pass of :func:`_codes_pass` does


@njit(**_JIT)
def _codes_pass(mode, ca, cb, amap, bmap, wc, wmap, jc, gc, fa, fb, det, n_judges, n_models,
                group_of, weight, count, used_m, used_j, used_g, acc, seen, fill, s_key,
                s_w, scores):  # fmt: skip
    """One pass over the verdict codes.

    Each verdict is oriented: ``a = amap[ca]``, ``b = bmap[cb]`` (model codes in
    [0, n_models) or -1), ``res = wmap[wc]`` (0 A, 1 B, 2 tie); a forfeit (``fa`` or ``fb``)
    wins for the other side (tie if both) under judge ``det``, else the judge is ``jc``. Then
    ``i = min(a, b)``, ``j = max(a, b)``, the outcome 0 (i won) / 1 (j won) / 2 (tie) as seen
    from ``i``, and the outer key ``gc * n_judges + judge``. A row is unusable where a code or
    mapped value is negative or ``a == b``; the caller finds out which and why.

    Every mode returns the number of unusable rows and, when ``used_*`` are not empty, marks
    the codes usable rows use. ``_COUNT``: verdicts per outer key into ``count``. ``_DENSE``:
    counts into the dense (group, i, j, outcome) table ``acc`` and ``seen``. ``_SCATTER``:
    ``(i * n_models + j) * 3 + outcome`` (and weight) into each group's block of ``s_key``
    (``s_w``), ``fill`` holding the blocks' next positions.

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
    for v in range(ca.shape[0]):
        judge = jc[v] if jc.shape[0] else 0
        g = gc[v] if gc.shape[0] else 0
        if ca[v] < 0 or cb[v] < 0 or wc[v] < 0 or judge < 0 or g < 0:
            n_bad += 1
            continue
        a = amap[ca[v]]
        b = bmap[cb[v]]
        f_a = fa[v] if fa.shape[0] else False
        f_b = fb[v] if fb.shape[0] else False
        if track:
            used_j[judge] = True
            used_g[g] = True
        if f_a or f_b:
            res = 2 if (f_a and f_b) else (1 if f_a else 0)
            judge = det
        else:
            res = wmap[wc[v]]
        if a < 0 or b < 0 or a == b or res < 0:
            n_bad += 1
            continue
        if a > b:
            a, b = b, a
            res = 1 - res if res < 2 else res
        outer = g * n_judges + judge
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
            r = slot[judge * m2 + a * n_models + b]
            at = g * n_cols
            sc = w * tab_d[3 * r + res]
            out[at + a] += sc
            out[at + b] -= sc
            if with_eta:
                out[at + n_models + judge] += w * tab_e[3 * r + res]
        else:
            q = group_of[outer]
            p = fill[q]
            fill[q] = p + 1
            s_key[p] = (a * n_models + b) * 3 + res
            if weighted:
                s_w[p] = weight[v]
    return n_bad


#: Cells of the G x P score matrix up to which the verdict pass runs on threads (one matrix
#: per thread, added up afterwards).
_SPLIT_SCORES = 1 << 22


def verdict_cluster_scores(ca, cb, amap, bmap, wc, wmap, jc, gc, fa, fb, det, n_models,
                           n_judges, n_clusters, weight, slot, tab_d, tab_e):  # fmt: skip
    """Summed score of each cluster straight from the verdict codes -> f8[n_clusters, P] with
    P = n_models (+ n_judges with ``tab_e``), in the codes' own numbering (the arguments up
    to ``weight`` are those of :func:`aggregate_codes`; see :func:`_codes_pass`'s ``_SCORES``
    mode for the rest): the matrix :func:`cluster_scores` gives from per-cluster rows, without
    building them. The verdicts are split across threads while the matrix is small."""
    codes = (ca, cb, amap, bmap, wc, wmap, jc, gc, fa, fb, det, n_judges, n_models)
    n = ca.shape[0]
    n_cols = n_models + (n_judges if tab_e.shape[0] else 0)
    pieces = _pieces(n, _chunks(n) if n_clusters * n_cols <= _SPLIT_SCORES else 1)
    i8, f8, b1 = np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.bool_)

    def job(lo, hi):
        part, w = _part(codes, weight, lo, hi)
        out = np.zeros(n_clusters * n_cols)
        _codes_pass(_SCORES, *part, i8, w, i8, b1, b1, b1, f8, b1, i8,
                    np.zeros(0, dtype=np.int32), f8, (slot, tab_d, tab_e, n_cols, out))  # fmt: skip
        return out

    parts = _threads.run([functools.partial(job, lo, hi) for lo, hi in pieces])
    out = parts[0]
    for p in parts[1:]:
        out += p
    return out.reshape(n_clusters, n_cols)


def _no_scores():
    """The ``scores`` argument of :func:`_codes_pass` in the modes that do not use it."""
    return (np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0), 0, np.zeros(0))


@njit(**_JIT)
def _dense_rows(acc, seen, n_models):
    """Rows of a dense (group, i, j) table, sorted by that key."""
    m2 = n_models * n_models
    r = 0
    for key in range(seen.shape[0]):
        r += seen[key]
    row_group = np.empty(r, dtype=np.int64)
    row_i = np.empty(r, dtype=np.int64)
    row_j = np.empty(r, dtype=np.int64)
    wi = np.empty(r)
    wj = np.empty(r)
    tt = np.empty(r)
    r = 0
    for key in range(seen.shape[0]):
        if seen[key]:
            row_group[r] = key // m2
            row_i[r] = (key % m2) // n_models
            row_j[r] = key % n_models
            wi[r] = acc[3 * key]
            wj[r] = acc[3 * key + 1]
            tt[r] = acc[3 * key + 2]
            r += 1
    return row_group, row_i, row_j, wi, wj, tt


def _dense_fits(space: int, n: int) -> bool:
    """Is a dense table of ``space`` (group, i, j) slots worth it for ``n`` verdicts?"""
    return space <= n // 2 + _DENSE_EXTRA


def aggregate_codes(ca, cb, amap, bmap, wc, wmap, jc, gc, fa, fb, det, n_models, n_judges,
                    n_clusters, weight, reuse=False):  # fmt: skip
    """Verdict codes straight to unique (cluster, judge, i, j) rows, rows ordered by cluster.

    No N-row intermediates: one pass into a dense table when the whole (cluster, judge, i, j)
    key space is small; else a counting pass, then a dense table over the keys that occur or a
    counting sort and per-group slot table (see :func:`_codes_pass` for the orientation).
    -> (cluster, judge, i, j i8[R]; wi, wj, tt f8[R]; used models bool[n_models], used judge
    codes, used cluster codes; collapsed; unusable rows); when rows are unusable only that
    count is meaningful (the caller explains them). ``collapsed`` is None or, when the counting
    sort ran, the rows summed over clusters per (judge, i, j) as :func:`collapse_rows` gives
    them. ``reuse=True`` lets the rows overwrite ``gc``, ``ca``, ``cb`` and ``wc`` once they are
    read (the caller's own copies).
    """
    n = ca.shape[0]
    i8, f8, b1 = np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.bool_)
    codes = (ca, cb, amap, bmap, wc, wmap, jc, gc, fa, fb, det, n_judges, n_models)
    sizes = (n_models, n_judges, n_clusters)
    n_outer = n_clusters * n_judges
    space = n_outer * n_models * n_models
    if _dense_fits(space, n):  # small enough for every outer key: one pass
        n_bad, used, acc, seen = _dense_pass(codes, weight, np.arange(n_outer), space, sizes)
        if n_bad:
            return i8, i8, i8, i8, f8, f8, f8, *used, None, n_bad
        outer, ri, rj, wi, wj, tt = _dense_rows(acc, seen, n_models)
        return outer // n_judges, outer % n_judges, ri, rj, wi, wj, tt, *used, None, 0
    parts = [(_part(codes, weight, lo, hi), np.zeros(n_outer, dtype=np.int64), _zeros(sizes))
             for lo, hi in _pieces(n, _chunks(n))]  # fmt: skip
    bad = _threads.run([functools.partial(
        _codes_pass, _COUNT, *part, i8, w, count, *used, f8, b1, i8, np.zeros(0, dtype=np.int32),
        f8, _no_scores()) for (part, w), count, used in parts])  # fmt: skip
    count = sum(c for _, c, _ in parts)
    used = _or_flags([u for _, _, u in parts])
    if sum(bad):
        return i8, i8, i8, i8, f8, f8, f8, *used, None, int(sum(bad))
    outer_keys = np.flatnonzero(count)
    group_of = np.cumsum(count > 0) - 1
    n_groups = outer_keys.size
    space = n_groups * n_models * n_models
    if _dense_fits(space, n):
        _, _, acc, seen = _dense_pass(codes, weight, group_of, space, None)
        group, ri, rj, wi, wj, tt = _dense_rows(acc, seen, n_models)
        outer = outer_keys[group]
        return outer // n_judges, outer % n_judges, ri, rj, wi, wj, tt, *used, None, 0
    starts = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(count[outer_keys], out=starts[1:])
    s_key = np.empty(n, dtype=np.int32)
    s_w = np.empty(n if weight.shape[0] else 0)
    fill = starts[:-1].copy()  # each piece writes its verdicts after the earlier pieces' ones
    jobs = []
    for (part, w), piece, _ in parts:
        jobs.append(functools.partial(_codes_pass, _SCATTER, *part, group_of, w, i8, b1, b1, b1,
                                      f8, b1, fill.copy(), s_key, s_w, _no_scores()))  # fmt: skip
        fill += piece[outer_keys]
    _threads.run(jobs)
    spare = (gc, ca, cb, wc) if reuse else ()
    # With clusters, the fit's rows (summed over clusters per (judge, i, j)) come from the
    # same pass when their dense table is small; larger tables, one per thread, cost more to
    # clear and add up than Comparisons.collapsed's own pass afterwards.
    collapse = n_clusters > 1 and n_judges * n_models * n_models <= _COLLAPSE_ON_THE_WAY
    group_judge = outer_keys % n_judges if collapse else None
    if n_judges == 1:  # the outer key is the cluster: rows get it directly, judges are all 0
        (cluster, ri, rj, wi, wj, tt), collapsed = _dedupe_rows(
            starts, s_key, s_w, n_models, outer_keys, spare, group_judge, n_judges)  # fmt: skip
        judge = np.zeros(ri.shape[0], dtype=np.int64)
        return cluster, judge, ri, rj, wi, wj, tt, *used, collapsed, 0
    (group, ri, rj, wi, wj, tt), collapsed = _dedupe_rows(
        starts, s_key, s_w, n_models, np.arange(n_groups, dtype=np.int64), spare, group_judge,
        n_judges)  # fmt: skip
    cluster, judge = (outer_keys // n_judges)[group], (outer_keys % n_judges)[group]
    return cluster, judge, ri, rj, wi, wj, tt, *used, collapsed, 0


def collapse_codes(ca, cb, amap, bmap, wc, wmap, jc, gc, fa, fb, det, n_models, n_judges,
                   n_clusters, weight):  # fmt: skip
    """Verdict codes straight to the rows summed over clusters, one per (judge, i, j), in one
    pass over a dense table (arguments as :func:`aggregate_codes`, whose ``collapsed`` rows
    these are).

    -> (judge, i, j i8[R]; wi, wj, tt f8[R]; used models, judge codes, cluster codes; slot
    i8[n_judges * n_models^2]: the row of each (judge, i, j) key that occurs, ``(judge *
    n_models + i) * n_models + j``; unusable rows). With :func:`verdict_cluster_scores` this is
    all a clustered fit needs.
    """
    codes = (ca, cb, amap, bmap, wc, wmap, jc, gc, fa, fb, det, n_judges, n_models)
    group_of = np.arange(n_clusters * n_judges, dtype=np.int64) % n_judges
    space = n_judges * n_models * n_models
    n_bad, used, acc, seen = _dense_pass(codes, weight, group_of, space,
                                         (n_models, n_judges, n_clusters))  # fmt: skip
    if n_bad:
        i8, f8 = np.zeros(0, dtype=np.int64), np.zeros(0)
        return i8, i8, i8, f8, f8, f8, *used, i8, n_bad
    rows = _dense_rows(acc, seen, n_models)
    slot = np.cumsum(seen, dtype=np.int64) - 1  # read only at keys that occur
    return (*rows, *used, slot, 0)


def _or_flags(flags):
    """Per-piece used-code flags (models, judges, clusters) combined."""
    return tuple(np.logical_or.reduce([f[k] for f in flags]) for k in range(3))


def _zeros(sizes):
    """Fresh used-code flags (models, judges, clusters), or empty ones (not tracked)."""
    if sizes is None:
        return (np.zeros(0, dtype=np.bool_),) * 3
    return tuple(np.zeros(k, dtype=np.bool_) for k in sizes)


def _part(codes, weight, lo, hi):
    """The verdicts ``lo:hi`` of the codes (views; absent columns stay empty) and weights."""
    def cut(a):
        return a[lo:hi] if a.shape[0] else a

    ca, cb, amap, bmap, wc, wmap, jc, gc, fa, fb, det, n_judges, n_models = codes
    return (cut(ca), cut(cb), amap, bmap, cut(wc), wmap, cut(jc), cut(gc), cut(fa), cut(fb),
            det, n_judges, n_models), cut(weight)  # fmt: skip


#: (judge, i, j) slots up to which the dedupe also sums the rows per (judge, i, j).
_COLLAPSE_ON_THE_WAY = 1 << 18
#: Dense tables up to this many slots are filled on threads, one table per piece (summed).
_SPLIT_DENSE = 1 << 20


def _dense_pass(codes, weight, group_of, space, sizes):
    """A ``_DENSE`` pass into a (group, i, j) table of ``space`` slots -> (unusable rows, used
    codes (tracked when ``sizes`` is given), acc, seen); large logs with small tables run it
    on threads, one table per piece, then add the tables up."""
    n = codes[0].shape[0]

    def job(lo, hi):
        part, w = _part(codes, weight, lo, hi)
        used = _zeros(sizes)
        acc, seen = np.zeros(3 * space), np.zeros(space, dtype=np.bool_)
        i8 = np.zeros(0, dtype=np.int64)
        bad = _codes_pass(_DENSE, *part, group_of, w, i8, *used, acc, seen, i8,
                          np.zeros(0, dtype=np.int32), np.zeros(0), _no_scores())  # fmt: skip
        return bad, used, acc, seen

    pieces = _pieces(n, _chunks(n) if space <= _SPLIT_DENSE else 1)
    out = _threads.run([functools.partial(job, lo, hi) for lo, hi in pieces])
    acc, seen = _add_tables([(a, sn) for _, _, a, sn in out])
    return sum(bad for bad, *_ in out), _or_flags([u for _, u, _, _ in out]), acc, seen
