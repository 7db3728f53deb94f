"""Numba kernels of the small-sample cluster inference (:mod:`ratings.inference`).

Private, self-contained (numba's cache does not follow edits into other files). Each function
has a twin of the same name and signature in :mod:`ratings.kernels.inference_ref`, tested equal.

Rows are the per-cluster rows of the working linear model
(:class:`ratings.inference.working.WorkingRows`): row r adds the design vector
``a_r (e_ii - e_jj) + b_r e_{n_models + judge}`` to cluster ``cluster[r]`` (``b`` empty: no
judge columns, Bradley-Terry).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["bt_cluster_scores", "cluster_quadratic", "cluster_times", "model_clusters",
           "series_term", "small_blocks", "small_meat",
           "small_shares"]  # each has a twin of the same name

_JIT = {"cache": True, "nogil": True}


@njit(**_JIT)
def cluster_times(ii, jj, judge, cluster, a, b, n_models, v):
    """H_g v_g for every cluster g: v f8[G, Q] -> f8[G, Q], H_g = sum_{r in g} x_r x_r^T."""
    out = np.zeros(v.shape)
    with_eta = b.shape[0] > 0
    for r in range(ii.shape[0]):
        c, i, j = cluster[r], ii[r], jj[r]
        x = a[r] * (v[c, i] - v[c, j])
        if with_eta:
            k = n_models + judge[r]
            x += b[r] * v[c, k]
            out[c, k] += b[r] * x
        out[c, i] += a[r] * x
        out[c, j] -= a[r] * x
    return out


@njit(**_JIT)
def series_term(p, ratio, total, step):
    """One term of the CR2 binomial series in one pass: ``step = ratio * p`` (``p`` f4 or
    f8[G, Q], read as double; ``step`` f8[G, Q], which may be ``p`` itself) added to ``total``
    (f8[G, Q]); returns each row's Euclidean norm of ``step`` (f8[G])."""
    g, q = p.shape
    size = np.empty(g)
    for r in range(g):
        acc = 0.0
        for c in range(q):
            x = np.float64(p[r, c]) * ratio
            step[r, c] = x
            total[r, c] += x
            acc += x * x
        size[r] = np.sqrt(acc)
    return size


@njit(**_JIT)
def bt_cluster_scores(theta, ii, jj, wi, wj, tt, cluster, n_clusters):
    """Bradley-Terry's working rows at ``theta`` in one pass: each row's weight
    a = sqrt(n p q) (n = wi + wj + tt, p = sigma(theta_i - theta_j), q = 1 - p) and each
    cluster's summed score (G x M), row r adding wi + tt / 2 - n p at i and its negative at j
    (rows of weight 0 add nothing)."""
    a = np.empty(ii.shape[0])
    w = np.zeros((n_clusters, theta.shape[0]))
    for r in range(ii.shape[0]):
        i, j = ii[r], jj[r]
        d = theta[i] - theta[j]
        e = np.exp(-abs(d))
        one_e = 1.0 + e
        p = (1.0 if d >= 0.0 else e) / one_e
        n = wi[r] + wj[r] + tt[r]
        a[r] = np.sqrt(n * (e / (one_e * one_e)))
        if a[r] > 0.0:
            s = wi[r] + 0.5 * tt[r]
            s -= n * p
            w[cluster[r], i] += s
            w[cluster[r], j] -= s
    return a, w


@njit(**_JIT)
def model_clusters(ii, jj, cluster, n_models, n_clusters):
    """The lowest and highest cluster of each model's rows (``n_clusters`` and -1 for a model
    without rows)."""
    lo = np.full(n_models, n_clusters, dtype=np.int64)
    hi = np.full(n_models, -1, dtype=np.int64)
    for r in range(ii.shape[0]):
        c = cluster[r]
        for i in (ii[r], jj[r]):
            lo[i] = min(lo[i], c)
            hi[i] = max(hi[i], c)
    return lo, hi


@njit(**_JIT)
def cluster_quadratic(n_clusters, ii, jj, judge, cluster, a, b, n_models, n):
    """n_c^T H_g n_c for every cluster g and column c of n f8[Q, C] -> f8[G, C]."""
    n_cols = n.shape[1]
    out = np.zeros((n_clusters, n_cols))
    with_eta = b.shape[0] > 0
    for r in range(ii.shape[0]):
        c, i, j, ar = cluster[r], ii[r], jj[r], a[r]
        k, br = (n_models + judge[r], b[r]) if with_eta else (0, 0.0)
        for col in range(n_cols):
            x = ar * (n[i, col] - n[j, col])
            if with_eta:
                x += br * n[k, col]
            out[c, col] += x * x
    return out


@njit(**_JIT)
def _xv(r, ii, jj, judge, a, b, n_models, v, col):
    """x_r^T v[:, col] for row r's design vector x_r."""
    x = a[r] * (v[ii[r], col] - v[jj[r], col])
    if b.shape[0] > 0:
        x += b[r] * v[n_models + judge[r], col]
    return x


@njit(**_JIT)
def _xbx(r, s, ii, jj, judge, a, b, n_models, bread):
    """x_r^T B x_s for rows r and s."""
    i, j = ii[s], jj[s]
    x = a[r] * a[s] * (bread[ii[r], i] - bread[ii[r], j] - bread[jj[r], i] + bread[jj[r], j])
    if b.shape[0] > 0:
        kr, ks = n_models + judge[r], n_models + judge[s]
        x += a[r] * b[s] * (bread[ii[r], ks] - bread[jj[r], ks])
        x += b[r] * a[s] * (bread[kr, i] - bread[kr, j])
        x += b[r] * b[s] * bread[kr, ks]
    return x


@njit(**_JIT)
def _add_outer(out, r, s, w, ii, jj, judge, a, b, n_models):
    """out += w x_r x_s^T."""
    i, j = ii[s], jj[s]
    for t in range(3 if b.shape[0] > 0 else 2):
        if t == 0:
            row, cr = ii[r], a[r]
        elif t == 1:
            row, cr = jj[r], -a[r]
        else:
            row, cr = n_models + judge[r], b[r]
        x = w * cr
        out[row, i] += x * a[s]
        out[row, j] -= x * a[s]
        if b.shape[0] > 0:
            out[row, n_models + judge[s]] += x * b[s]


#: Most Newton-Schulz steps of :func:`_inverse_sqrt` (as the twin's).
_INV_SQRT_STEPS = 12
#: Frobenius distance of a step's factor T from the identity at which it has converged.
_INV_SQRT_TOL = 1e-8


@njit(**_JIT)
def _inverse_sqrt(h):
    """(I - h)^(-1/2) of one leverage block by the coupled Newton-Schulz iteration (the twin's
    ``_inverse_sqrt``: BLAS products only), and whether it converged."""
    n = h.shape[0]
    t = h * 0.5  # the first step from Z = I: T = I + H / 2
    y = -h
    for i in range(n):
        t[i, i] += 1.0
        y[i, i] += 1.0
    y = y @ t
    z = t
    for _ in range(_INV_SQRT_STEPS - 1):
        t = z @ y
        t *= -0.5
        for i in range(n):
            t[i, i] += 1.5
        y = y @ t
        z = t @ z
        err = 0.0
        for i in range(n):
            for j in range(n):
                d = t[i, j] - 1.0 if i == j else t[i, j]
                err += d * d
        if err < _INV_SQRT_TOL * _INV_SQRT_TOL:
            return z, True
    return z, False


@njit(**_JIT)
def small_blocks(starts, ii, jj, judge, a, b, n_models, bread, degenerate):
    """Each cluster's leverage block H_gg = X_g B X_g^T and CR2 block F_g = (I - H_gg)^(-1/2)
    (by :func:`_inverse_sqrt`, else from the eigen-decomposition with eigenvalues at or above
    1 - ``degenerate`` mapped to 1), flattened row-major one cluster after another
    -> (f8[sum R_g^2], f8[sum R_g^2], b1[G]: a leverage at 1 - degenerate)."""
    g = starts.shape[0] - 1
    off = np.zeros(g + 1, dtype=np.int64)
    for c in range(g):
        n = starts[c + 1] - starts[c]
        off[c + 1] = off[c] + n * n
    h = np.empty(off[g])
    f = np.empty(off[g])
    deg = np.zeros(g, dtype=np.bool_)
    for c in range(g):
        r0, n, o = starts[c], starts[c + 1] - starts[c], off[c]
        if n == 1:
            lev = _xbx(r0, r0, ii, jj, judge, a, b, n_models, bread)
            h[o] = lev
            if lev >= 1.0 - degenerate:
                deg[c] = True
                f[o] = 1.0
            else:
                f[o] = 1.0 / np.sqrt(1.0 - lev)
            continue
        blk = np.empty((n, n))
        for r in range(n):
            for s in range(r + 1):
                x = _xbx(r0 + r, r0 + s, ii, jj, judge, a, b, n_models, bread)
                blk[r, s] = x
                blk[s, r] = x
        fb, done = _inverse_sqrt(blk)
        if not done:  # a leverage near 1: the eigen-decomposition
            lam, vec = np.linalg.eigh(blk)
            fl = np.ones(n)
            for t in range(n):
                if lam[t] >= 1.0 - degenerate:
                    deg[c] = True
                else:
                    fl[t] = 1.0 / np.sqrt(1.0 - lam[t])
            fb = (vec * fl) @ vec.T  # one BLAS product, not a loop of n^3 steps
        for r in range(n):
            for s in range(n):
                f[o + r * n + s] = fb[r, s]
                h[o + r * n + s] = blk[r, s]
    return h, f, deg


@njit(**_JIT)
def small_meat(starts, ii, jj, judge, a, b, n_models, n_params, e):
    """sum_g w_g w_g^T with w_g = X_g^T e_g (e f8[N], one value a row) -> f8[P, P]."""
    out = np.zeros((n_params, n_params))
    for c in range(starts.shape[0] - 1):
        for r in range(starts[c], starts[c + 1]):
            for s in range(starts[c], starts[c + 1]):
                _add_outer(out, r, s, e[r] * e[s], ii, jj, judge, a, b, n_models)
    return out


@njit(cache=True, nogil=True, error_model="numpy")  # x / 0 is inf or NaN, as in the twin
def small_shares(starts, ii, jj, judge, a, b, n_models, v, tr, floor, weight):
    """Per contrast (columns of v f8[P, C], tr f8[C] = sum_g omega_g) the sums over clusters
    of weight_g pi_g^2, weight_g a_g and weight_g a_g^2 with pi_g = omega_g / tr,
    omega_g = |X_g v|^2, a_g = pi_g^2 / max(1 - pi_g, floor) and weight f8[G] (clusters
    standing for several alike) -> f8[C, 3]."""
    n_cols = v.shape[1]
    out = np.zeros((3, n_cols))  # by statistic: the loops over contrasts are SIMD on rows
    om = np.zeros(n_cols)
    with_eta = b.shape[0] > 0
    for c in range(starts.shape[0] - 1):
        r0, r1, w = starts[c], starts[c + 1], weight[c]
        if r1 - r0 == 1 and not with_eta:  # one row, no judge column: an arena's clusters
            i, j, ar = ii[r0], jj[r0], a[r0]
            for col in range(n_cols):
                x = ar * (v[i, col] - v[j, col])
                pi = x * x / tr[col]
                s = pi * pi / max(1.0 - pi, floor)
                out[0, col] += w * (pi * pi)
                out[1, col] += w * s
                out[2, col] += w * (s * s)
            continue
        om[:] = 0.0
        for r in range(r0, r1):
            for col in range(n_cols):
                x = _xv(r, ii, jj, judge, a, b, n_models, v, col)
                om[col] += x * x
        for col in range(n_cols):
            pi = om[col] / tr[col]
            s = pi * pi / max(1.0 - pi, floor)
            out[0, col] += w * (pi * pi)
            out[1, col] += w * s
            out[2, col] += w * (s * s)
    return out.T.copy()
