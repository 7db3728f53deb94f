"""Pure-NumPy twins of :mod:`ratings._kernels`: same names, same signatures, same results.

Written for obviousness first: the tests check each kernel against its twin. Each is also
vectorised (no Python loop over rows), so ``engine="auto"`` runs these on small logs, where
they finish before numba could even be loaded (see :mod:`ratings.engine`).
"""

from __future__ import annotations

import numpy as np

__all__ = [  # the twin of each kernel of ratings._kernels, and the sigmoid helpers
    "aggregate_codes", "bt_row_terms", "bt_scores", "cluster_meat", "cluster_scores",
    "collapse_codes", "collapse_rows", "crowd_assemble", "crowd_row_terms", "expit", "laplacian",
    "log_expit", "scatter_diff", "verdict_cluster_scores",
]  # fmt: skip


def expit(d: np.ndarray) -> np.ndarray:
    """sigma(d) = 1 / (1 + e^-d), overflow-free (checked against scipy.special in the tests;
    not imported from it, which costs a small fit 0.15 s of start-up)."""
    e = np.exp(-np.abs(d))
    return np.where(d >= 0.0, 1.0 / (1.0 + e), e / (1.0 + e))


def log_expit(d: np.ndarray) -> np.ndarray:
    """log sigma(d) = min(d, 0) - log1p(e^-|d|)."""
    return np.minimum(d, 0.0) - np.log1p(np.exp(-np.abs(d)))


def _xlogy0(y: np.ndarray, logp: np.ndarray) -> np.ndarray:
    """y * log p with 0 * log 0 = 0 (a row without wins contributes nothing)."""
    return np.where(y > 0.0, y * logp, 0.0)


def bt_row_terms(theta, ii, jj, wi, wj, tt, with_meat=True):
    d = theta[ii] - theta[jj]
    yi, yj, n = wi + 0.5 * tt, wj + 0.5 * tt, wi + wj + tt
    p, q = expit(d), expit(-d)
    nll = -np.sum(_xlogy0(yi, log_expit(d)) + _xlogy0(yj, log_expit(-d)))
    meat = wi * q**2 + wj * p**2 + tt * (0.5 - p) ** 2 if with_meat else np.zeros(0)
    return float(nll), yi - n * p, n * p * q, meat


def _scatter(shape, rows, cols, w):
    """Dense matrix with ``w`` summed into cells (rows, cols)."""
    flat = np.bincount(rows * shape[1] + cols, w, shape[0] * shape[1])
    return flat.reshape(shape)


def laplacian(n_items, ii, jj, w):
    # sum_r w_r (e_i - e_j)(e_i - e_j)^T: +w on (i, i), (j, j) and -w on (i, j), (j, i)
    shape = (n_items, n_items)
    rows, cols = np.concatenate([ii, jj, ii, jj]), np.concatenate([ii, jj, jj, ii])
    return _scatter(shape, rows, cols, np.concatenate([w, w, -w, -w]))


def scatter_diff(n_items, ii, jj, w):
    return np.bincount(ii, w, minlength=n_items) - np.bincount(jj, w, minlength=n_items)


def bt_scores(theta, ii, jj, wi, wj, tt):
    return wi + 0.5 * tt - (wi + wj + tt) * expit(theta[ii] - theta[jj])


def cluster_meat(n_models, n_params, ii, jj, kk, sd, se, starts):
    cluster = np.repeat(np.arange(starts.size - 1), np.diff(starts))
    g = cluster_scores(starts.size - 1, n_params, ii, jj, kk, cluster, sd, se, n_models)
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


def crowd_row_terms(theta, eta, ii, jj, kk, wi, wj, tt, with_meat=True):
    d = theta[ii] - theta[jj]
    logp, logpc, ad, ae, bd, be, rdd_p, rde_p, rdd_c, rde_c = _crowd_parts(d, eta[kk])
    yi, yj = wi + 0.5 * tt, wj + 0.5 * tt
    nll = -np.sum(_xlogy0(yi, logp) + _xlogy0(yj, logpc))
    td, te = (ad + bd) / 2, (ae + be) / 2
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
    return (
        *terms,
        wi * ad**2 + wj * bd**2 + tt * td**2,
        wi * ad * ae + wj * bd * be + tt * td * te,
        wi * ae**2 + wj * be**2 + tt * te**2,
    )


def crowd_assemble(n_models, n_judges, ii, jj, kk, wdd, wde, wee):
    # x = e_i - e_j, e = e_{M+k}: wdd x x^T + wde (x e^T + e x^T) + wee e e^T
    p = n_models + n_judges
    k = n_models + kk
    dd = laplacian(p, ii, jj, wdd)
    de = _scatter((p, p), np.concatenate([ii, jj]), np.concatenate([k, k]),
                  np.concatenate([wde, -wde]))  # fmt: skip
    return dd + de + de.T + _scatter((p, p), k, k, wee)


def cluster_scores(n_clusters, n_params, ii, jj, kk, cluster, sd, se, n_models):
    out = np.zeros((n_clusters, n_params))
    np.add.at(out, (cluster, ii), sd)
    np.add.at(out, (cluster, jj), -sd)
    if se.size:
        np.add.at(out, (cluster, n_models + kk), se)
    return out


def _aggregate_rows(group, ii, jj, outcome, weight, n_models):
    """Unique (group, i, j) rows of oriented verdicts, sorted, with their counts."""
    weight = np.ones(group.size) if weight.size == 0 else weight  # empty: one per verdict
    key = (group * n_models + ii) * n_models + jj
    uniq, first, code = np.unique(key, return_index=True, return_inverse=True)
    r = uniq.size
    return (
        group[first], ii[first], jj[first],
        np.bincount(code, weight * (outcome == 0), r),
        np.bincount(code, weight * (outcome == 1), r),
        np.bincount(code, weight * (outcome == 2), r),
    )  # fmt: skip


def collapse_rows(judge, ii, jj, wi, wj, tt, n_judges, n_models):
    key = (judge * n_models + ii) * n_models + jj
    uniq, code = np.unique(key, return_inverse=True)
    r = uniq.size
    return (uniq // (n_models * n_models), (uniq // n_models) % n_models, uniq % n_models,
            np.bincount(code, wi, r), np.bincount(code, wj, r), np.bincount(code, tt, r))


def _orient_rows(ca, cb, amap, bmap, wc, wmap, jc, gc, fa, fb, det, n_models, n_judges):
    """Each verdict oriented (see ``ratings._kernels._codes_pass``): outer key, i, j, outcome,
    used model codes, unusable rows."""
    missing = (ca < 0) | (cb < 0) | (wc < 0) | (jc < 0) | (gc < 0)
    ia, ib = np.where(missing, 0, amap[ca]), np.where(missing, 0, bmap[cb])
    forfeit = fa | fb
    res = np.where(forfeit, np.where(fa & fb, 2, np.where(fa, 1, 0)), wmap[wc])
    judge = np.where(forfeit, det, jc)
    swap = ia > ib
    bad = missing | (ia < 0) | (ib < 0) | (ia == ib) | (res < 0)
    good = ~bad
    zero = np.zeros(ca.size, dtype=np.int64)
    used_m = np.zeros(n_models, dtype=bool)
    used_m[ia[good]] = True
    used_m[ib[good]] = True
    return (
        np.where(missing, zero, gc * n_judges + judge).astype(np.int64),
        np.where(missing, zero, np.where(swap, ib, ia)).astype(np.int64),
        np.where(missing, zero, np.where(swap, ia, ib)).astype(np.int64),
        np.where(missing, zero, np.where(swap & (res < 2), 1 - res, res)).astype(np.int64),
        used_m, int(bad.sum()),
    )


def aggregate_codes(ca, cb, amap, bmap, wc, wmap, jc, gc, fa, fb, det, n_models, n_judges,
                    n_clusters, weight, reuse=False):  # fmt: skip
    ca, cb, amap, bmap, wc, wmap, jc, gc, fa, fb = _full(
        (ca, cb, amap, bmap, wc, wmap, jc, gc, fa, fb), ca.size)  # fmt: skip
    outer, i, j, o, used_m, n_bad = _orient_rows(ca, cb, amap, bmap, wc, wmap, jc, gc, fa, fb,
                                                 det, n_models, n_judges)
    used_j = np.zeros(n_judges, dtype=bool)
    used_g = np.zeros(n_clusters, dtype=bool)
    if n_bad:
        e_i, e_f = np.zeros(0, dtype=np.int64), np.zeros(0)
        return e_i, e_i, e_i, e_i, e_f, e_f, e_f, used_m, used_j, used_g, None, n_bad
    used_j[jc] = True
    used_g[gc] = True
    key, ri, rj, wi, wj, tt = _aggregate_rows(outer, i, j, o, weight, n_models)
    return key // n_judges, key % n_judges, ri, rj, wi, wj, tt, used_m, used_j, used_g, None, 0


def _full(codes, n):
    """The codes as int64, the optional columns (judge, cluster, forfeits) full-length."""
    ca, cb, amap, bmap, wc, wmap, jc, gc, fa, fb = codes
    ca, cb, wc = (np.asarray(c, dtype=np.int64) for c in (ca, cb, wc))  # codes of any width
    jc = np.zeros(n, dtype=np.int64) if jc.size == 0 else np.asarray(jc, dtype=np.int64)
    gc = np.zeros(n, dtype=np.int64) if gc.size == 0 else np.asarray(gc, dtype=np.int64)
    fa = np.zeros(n, dtype=bool) if fa.size == 0 else fa
    fb = np.zeros(n, dtype=bool) if fb.size == 0 else fb
    return ca, cb, amap, bmap, wc, wmap, jc, gc, fa, fb


def collapse_codes(ca, cb, amap, bmap, wc, wmap, jc, gc, fa, fb, det, n_models, n_judges,
                   n_clusters, weight):  # fmt: skip
    # the per-cluster rows, summed over clusters, and each (judge, i, j) key's row
    *rows, used_m, used_j, used_g, _, n_bad = aggregate_codes(
        ca, cb, amap, bmap, wc, wmap, jc, gc, fa, fb, det, n_models, n_judges, n_clusters,
        weight)  # fmt: skip
    e_i, e_f = np.zeros(0, dtype=np.int64), np.zeros(0)
    if n_bad:
        return e_i, e_i, e_i, e_f, e_f, e_f, used_m, used_j, used_g, e_i, n_bad
    judge, ri, rj, wi, wj, tt = collapse_rows(*rows[1:], n_judges, n_models)
    slot = np.full(n_judges * n_models * n_models, -1, dtype=np.int64)
    slot[(judge * n_models + ri) * n_models + rj] = np.arange(judge.size)
    return judge, ri, rj, wi, wj, tt, used_m, used_j, used_g, slot, 0


def verdict_cluster_scores(ca, cb, amap, bmap, wc, wmap, jc, gc, fa, fb, det, n_models,
                           n_judges, n_clusters, weight, slot, tab_d, tab_e):  # fmt: skip
    n = ca.size
    ca, cb, amap, bmap, wc, wmap, jc, gc, fa, fb = _full(
        (ca, cb, amap, bmap, wc, wmap, jc, gc, fa, fb), n)  # fmt: skip
    outer, i, j, o, _, _ = _orient_rows(ca, cb, amap, bmap, wc, wmap, jc, gc, fa, fb, det,
                                        n_models, n_judges)  # fmt: skip
    # the callers pass usable verdicts only (aggregate found none unusable)
    judge = outer - gc * n_judges
    r = slot[(judge * n_models + i) * n_models + j]
    w = np.ones(n) if weight.size == 0 else weight
    n_cols = n_models + (n_judges if tab_e.size else 0)
    s = w * tab_d[3 * r + o]
    cells, at = n_clusters * n_cols, gc * n_cols
    out = np.bincount(at + i, s, cells) - np.bincount(at + j, s, cells)
    if tab_e.size:
        out += np.bincount(at + n_models + judge, w * tab_e[3 * r + o], cells)
    return out.reshape(n_clusters, n_cols)
