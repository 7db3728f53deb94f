"""Numba kernels of the style-controlled fit (:mod:`ratings.models.style`): the Newton
assembly over style rows and the clustered products of its CR2 sandwich.

Private; every function has a twin of the same name and signature in
:mod:`ratings.kernels.style_ref` (which documents the arguments), tested equal. One pass over the
rows each, no temporaries of the rows' size.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["style_assemble", "style_cluster_quadratic", "style_cluster_scores",
           "style_cluster_times", "style_gradient", "style_groups", "style_row_keys"]  # fmt: skip

_JIT = {"cache": True, "nogil": True}


@njit(**_JIT)
def style_gradient(n_models, n_judges, row_a, row_b, row_judge, x, s_d, s_eta):
    m, p = n_models, x.shape[1]
    crowd = s_eta.shape[0] > 0
    out = np.zeros(m + p + (n_judges if crowd else 0))
    for r in range(row_a.shape[0]):
        s = s_d[r]
        out[row_a[r]] += s
        out[row_b[r]] -= s
        for k in range(p):
            out[m + k] += s * x[r, k]
        if crowd:
            out[m + p + row_judge[r]] += s_eta[r]
    return out


@njit(**_JIT)
def style_assemble(n_models, n_judges, row_a, row_b, row_judge, x, w_dd, w_deta, w_etaeta):
    m, p = n_models, x.shape[1]
    crowd = w_deta.shape[0] > 0
    n = m + p + (n_judges if crowd else 0)
    out = np.zeros((n, n))
    for r in range(row_a.shape[0]):
        i, j, w = row_a[r], row_b[r], w_dd[r]
        out[i, i] += w
        out[j, j] += w
        out[i, j] -= w
        out[j, i] -= w
        for k in range(p):
            wk = w * x[r, k]
            out[i, m + k] += wk
            out[j, m + k] -= wk
            for t in range(k + 1):
                out[m + k, m + t] += wk * x[r, t]
        if crowd:
            e = m + p + row_judge[r]
            v = w_deta[r]
            out[i, e] += v
            out[j, e] -= v
            for k in range(p):
                out[m + k, e] += v * x[r, k]
            out[e, e] += w_etaeta[r]
    for a in range(n):  # mirror the upper triangle's cells filled above
        for b in range(a):
            if a >= m and a < m + p and b >= m:
                out[b, a] = out[a, b]
            elif b < m and a >= m:
                out[a, b] = out[b, a]
            elif a >= m + p and b >= m and b < m + p:
                out[a, b] = out[b, a]
    return out


@njit(**_JIT)
def style_cluster_scores(n_clusters, n_params, n_models, row_a, row_b, row_judge, row_cluster, x,
                         s_d, s_eta):  # fmt: skip
    m, p = n_models, x.shape[1]
    crowd = s_eta.shape[0] > 0
    out = np.zeros((n_clusters, n_params))
    for r in range(row_a.shape[0]):
        c, s = row_cluster[r], s_d[r]
        out[c, row_a[r]] += s
        out[c, row_b[r]] -= s
        for k in range(p):
            out[c, m + k] += s * x[r, k]
        if crowd:
            out[c, m + p + row_judge[r]] += s_eta[r]
    return out


@njit(**_JIT)
def style_cluster_times(n_models, row_a, row_b, row_judge, row_cluster, x, a, b, v):
    m, p = n_models, x.shape[1]
    crowd = b.shape[0] > 0
    out = np.zeros(v.shape)
    for r in range(row_a.shape[0]):
        c = row_cluster[r]
        z = v[c, row_a[r]] - v[c, row_b[r]]
        for k in range(p):
            z += x[r, k] * v[c, m + k]
        z *= a[r]
        if crowd:
            z += b[r] * v[c, m + p + row_judge[r]]
        az = a[r] * z
        out[c, row_a[r]] += az
        out[c, row_b[r]] -= az
        for k in range(p):
            out[c, m + k] += az * x[r, k]
        if crowd:
            out[c, m + p + row_judge[r]] += b[r] * z
    return out


@njit(**_JIT)
def style_cluster_quadratic(n_clusters, n_models, row_a, row_b, row_judge, row_cluster, x, a, b,
                            n):  # fmt: skip
    m, p = n_models, x.shape[1]
    crowd = b.shape[0] > 0
    cols = n.shape[1]
    out = np.zeros((n_clusters, cols))
    for r in range(row_a.shape[0]):
        c = row_cluster[r]
        for t in range(cols):
            z = n[row_a[r], t] - n[row_b[r], t]
            for k in range(p):
                z += x[r, k] * n[m + k, t]
            z *= a[r]
            if crowd:
                z += b[r] * n[m + p + row_judge[r], t]
            out[c, t] += z * z
    return out


_SEED, _MUL = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9)


@njit(**_JIT)
def style_row_keys(row_cluster, row_judge, row_a, row_b, x, hash_bits):
    n, p = row_a.shape[0], x.shape[1]
    bits = x.view(np.int64) if x.shape[0] else np.zeros((0, p), dtype=np.int64)
    out = np.empty(n, dtype=np.uint64)
    hb = np.uint64(hash_bits)
    low = np.uint64(64) - hb
    s31 = np.uint64(31)
    for r in range(n):
        h = _SEED
        h = ((h ^ np.uint64(row_judge[r])) * _MUL)
        h ^= h >> s31
        h = ((h ^ np.uint64(row_a[r])) * _MUL)
        h ^= h >> s31
        h = ((h ^ np.uint64(row_b[r])) * _MUL)
        h ^= h >> s31
        for k in range(p):
            h = ((h ^ np.uint64(bits[r, k])) * _MUL)
            h ^= h >> s31
        out[r] = (np.uint64(row_cluster[r]) << hb) | (h >> low)
    return out


@njit(**_JIT)
def style_groups(key, row_cluster, n_clusters):
    n = key.shape[0]
    size = 1
    while size < 2 * n:
        size *= 2
    mask = np.uint64(size - 1)
    table_key = np.empty(size, dtype=np.uint64)
    table_gid = np.full(size, -1, dtype=np.int64)
    gid = np.empty(n, dtype=np.int64)
    first = np.empty(n, dtype=np.int64)
    ng = 0
    for r in range(n):  # open addressing on the (already hashed) key
        h = key[r] * _MUL
        idx = np.int64((h ^ (h >> np.uint64(29))) & mask)
        while True:
            g = table_gid[idx]
            if g < 0:
                table_gid[idx] = ng
                table_key[idx] = key[r]
                first[ng] = r
                gid[r] = ng
                ng += 1
                break
            if table_key[idx] == key[r]:
                gid[r] = g
                break
            idx = (idx + 1) & (size - 1)
    start = np.zeros(n_clusters + 1, dtype=np.int64)
    for g in range(ng):  # groups by cluster, keeping first appearance (a counting sort)
        start[row_cluster[first[g]] + 1] += 1
    for c in range(n_clusters):
        start[c + 1] += start[c]
    new = np.empty(ng, dtype=np.int64)
    reps = np.empty(ng, dtype=np.int64)
    for g in range(ng):
        c = row_cluster[first[g]]
        new[g] = start[c]
        reps[start[c]] = first[g]
        start[c] += 1
    inv = np.empty(n, dtype=np.int64)
    for r in range(n):
        inv[r] = new[gid[r]]
    return inv, reps
