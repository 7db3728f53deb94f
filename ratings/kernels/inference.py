"""Numba kernels of the small-sample cluster inference (:mod:`ratings.inference`).

Private, self-contained (numba's cache does not follow edits into other files). Each function
has a twin of the same name and signature in :mod:`ratings.kernels.inference_ref`, tested equal.

Rows are the per-cluster rows of the working linear model: row r adds the design vector
``a_r (e_i - e_j) + b_r e_{n_models + k}`` to cluster ``cluster[r]`` (``b`` empty: no judge
columns, Bradley-Terry).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["cluster_quadratic", "cluster_times"]  # each has a twin of the same name

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
