"""Pure-NumPy twins of :mod:`ratings._kernels_inference`: same names, signatures, results."""

from __future__ import annotations

import numpy as np

__all__ = ["cluster_quadratic", "cluster_times", "pair_max"]  # each has a twin of the same name


def cluster_times(ii, jj, kk, cluster, a, b, n_models, v):
    g, q = v.shape
    flat, at = v.ravel(), cluster * q
    x = a * (flat[at + ii] - flat[at + jj])
    if b.size:
        x = x + b * flat[at + n_models + kk]
    cells = g * q
    out = np.bincount(at + ii, a * x, cells) - np.bincount(at + jj, a * x, cells)
    if b.size:
        out += np.bincount(at + n_models + kk, b * x, cells)
    return out.reshape(g, q)


def cluster_quadratic(n_clusters, ii, jj, kk, cluster, a, b, n_models, n):
    x = a[:, None] * (n[ii] - n[jj])
    if b.size:
        x = x + b[:, None] * n[n_models + kk]
    out = np.zeros((n_clusters, n.shape[1]))
    np.add.at(out, cluster, x * x)
    return out


def pair_max(z, w_out, w_in):
    diff = z[:, :, None] - z[:, None, :]  # diff[:, j, k] = z_j - z_k
    row = np.maximum((diff * w_out).max(axis=2), 0.0)
    if not w_in.shape[0]:
        return row.max(axis=1, keepdims=True).astype(np.float64)
    return np.maximum(row, (-diff * w_in).max(axis=2)).astype(np.float64)
