"""Numba kernels of the small-sample cluster inference (:mod:`ratings.inference`).

Private, self-contained (numba's cache does not follow edits into other files). Each function
has a twin of the same name and signature in :mod:`ratings._kernels_inference_ref`, tested equal.

Rows are the per-cluster rows of the working linear model: row r adds the design vector
``a_r (e_i - e_j) + b_r e_{n_models + k}`` to cluster ``cluster[r]`` (``b`` empty: no judge
columns, Bradley-Terry).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["cluster_quadratic", "cluster_times", "pair_max"]  # each has a twin of the same name

_JIT = {"cache": True, "nogil": True}


@njit(**_JIT)
def cluster_times(ii, jj, kk, cluster, a, b, n_models, v):
    """H_g v_g for every cluster g: v f8[G, Q] -> f8[G, Q], H_g = sum_{r in g} x_r x_r^T."""
    out = np.zeros(v.shape)
    with_eta = b.shape[0] > 0
    for r in range(ii.shape[0]):
        c, i, j = cluster[r], ii[r], jj[r]
        x = a[r] * (v[c, i] - v[c, j])
        if with_eta:
            k = n_models + kk[r]
            x += b[r] * v[c, k]
            out[c, k] += b[r] * x
        out[c, i] += a[r] * x
        out[c, j] -= a[r] * x
    return out


@njit(**_JIT)
def cluster_quadratic(n_clusters, ii, jj, kk, cluster, a, b, n_models, n):
    """n_c^T H_g n_c for every cluster g and column c of n f8[Q, C] -> f8[G, C]."""
    n_cols = n.shape[1]
    out = np.zeros((n_clusters, n_cols))
    with_eta = b.shape[0] > 0
    for r in range(ii.shape[0]):
        c, i, j, ar = cluster[r], ii[r], jj[r], a[r]
        k, br = (n_models + kk[r], b[r]) if with_eta else (0, 0.0)
        for col in range(n_cols):
            x = ar * (n[i, col] - n[j, col])
            if with_eta:
                x += br * n[k, col]
            out[c, col] += x * x
    return out


@njit(**_JIT)
def pair_max(z, w_out, w_in):
    """Max over ordered pairs of weighted differences, per draw.

    z f4[D, M] draws; w_out f4[M, M] -> f8[D, 1]: max(0, max_{j,k} (z_j - z_k) w_out[j, k]);
    with w_in f4[M, M] non-empty -> f8[D, M]: per model j, the max of (z_j - z_k) w_out[j, k]
    and (z_k - z_j) w_in[j, k] over k (and 0).
    """
    n_draws, m = z.shape
    per_model = w_in.shape[0] > 0
    out = np.zeros((n_draws, m if per_model else 1))
    for d in range(n_draws):
        best = 0.0
        for j in range(m):
            zj = z[d, j]
            rj = 0.0
            for k in range(m):
                t = (zj - z[d, k]) * w_out[j, k]
                if t > rj:
                    rj = t
                if per_model:
                    t = (z[d, k] - zj) * w_in[j, k]
                    if t > rj:
                        rj = t
            if per_model:
                out[d, j] = rj
            elif rj > best:
                best = rj
        if not per_model:
            out[d, 0] = best
    return out
