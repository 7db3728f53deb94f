"""NumPy twins of :mod:`ratings.kernels.style` (same names and signatures), written for
obviousness; the tests compare the two.

Rows are design rows (:func:`ratings.models.covariates.design_rows`): row r compares slot A model
``row_a[r]`` with slot B model ``row_b[r]`` under judge ``row_judge[r]`` with features
``x[r]`` (P features). Its design vector over the parameters (strengths (M), coefficients
(P)[, etas (K)]) is ``u_r = e_a - e_b + x_r`` on d = s_a - s_b + beta . x_r and ``e_{M+P+k}`` on
its judge's eta (Crowd-BT).
"""

from __future__ import annotations

import numpy as np

from ratings.kernels.fit_ref import bt_row_terms, expit

__all__ = ["style_assemble", "style_bt_newton", "style_bt_rows", "style_cluster_quadratic",
           "style_cluster_scores", "style_cluster_times", "style_compact", "style_gradient",
           "style_interleave", "style_merge", "style_transform"]  # fmt: skip


def style_gradient(n_models, n_judges, row_a, row_b, row_judge, x, s_d, s_eta):
    """sum_r s_d[r] u_r + s_eta[r] e_{judge} -> float64[M + P (+ K)] (no etas when ``s_eta`` is
    empty)."""
    m = n_models
    out = [np.bincount(row_a, s_d, m) - np.bincount(row_b, s_d, m), x.T @ s_d]
    if s_eta.size:
        out.append(np.bincount(row_judge, s_eta, n_judges))
    return np.concatenate(out)


def style_assemble(n_models, n_judges, row_a, row_b, row_judge, x, w_dd, w_deta, w_etaeta):
    """sum_r w_dd u u^T + w_deta (u e^T + e u^T) + w_etaeta e e^T, dense (no etas when
    ``w_deta`` is empty)."""
    m, p, nj = n_models, x.shape[1], n_judges if w_deta.size else 0
    n = m + p + nj
    out = np.zeros((n, n))
    diag = np.bincount(row_a, w_dd, m) + np.bincount(row_b, w_dd, m)
    off = np.bincount(row_a * m + row_b, w_dd, m * m).reshape(m, m)
    out[:m, :m] = np.diag(diag) - off - off.T
    wx = w_dd[:, None] * x
    cross = np.column_stack([np.bincount(row_a, wx[:, k], m) - np.bincount(row_b, wx[:, k], m)
                             for k in range(p)]) if p else np.zeros((m, 0))  # fmt: skip
    out[:m, m:m + p] = cross
    out[m:m + p, :m] = cross.T
    out[m:m + p, m:m + p] = x.T @ wx
    if nj:
        e = m + p
        se = (np.bincount(row_a * nj + row_judge, w_deta, m * nj)
              - np.bincount(row_b * nj + row_judge, w_deta, m * nj)).reshape(m, nj)
        out[:m, e:] = se
        out[e:, :m] = se.T
        fe = np.column_stack([np.bincount(row_judge, w_deta * x[:, k], nj) for k in range(p)])
        out[m:e, e:] = fe.T
        out[e:, m:e] = fe
        out[e:, e:] = np.diag(np.bincount(row_judge, w_etaeta, nj))
    return out


def style_cluster_scores(n_clusters, n_params, n_models, row_a, row_b, row_judge, row_cluster, x,
                         s_d, s_eta):  # fmt: skip
    """Each cluster's summed score over all parameters -> float64[G, n_params]."""
    g, q, m, p = n_clusters, n_params, n_models, x.shape[1]
    at = row_cluster * q
    out = np.bincount(at + row_a, s_d, g * q) - np.bincount(at + row_b, s_d, g * q)
    out = out.reshape(g, q)
    for k in range(p):
        out[:, m + k] += np.bincount(row_cluster, s_d * x[:, k], g)
    if s_eta.size:
        out += np.bincount(at + m + p + row_judge, s_eta, g * q).reshape(g, q)
    return out


def _dot(n_models, row_a, row_b, row_judge, row_cluster, x, a, b, v):
    """z_r = a_r u_r . v_{c(r)} + b_r v_{c(r), judge} for v (G x n_params); or with
    ``row_cluster`` None, v (n_params x C) shared by every row -> (R x C)."""
    m, p = n_models, x.shape[1]
    if row_cluster is None:
        z = v[row_a] - v[row_b] + x @ v[m:m + p]
        z *= a[:, None]
        if b.size:
            z += b[:, None] * v[m + p + row_judge]
        return z
    z = v[row_cluster, row_a] - v[row_cluster, row_b] + np.einsum("rk,rk->r", x, v[row_cluster,
                                                                                  m:m + p])
    z *= a
    if b.size:
        z += b * v[row_cluster, m + p + row_judge]
    return z


def style_cluster_times(n_models, row_a, row_b, row_judge, row_cluster, x, a, b, v):
    """``H_g v_g`` for every cluster g: H_g = sum_{r in g} w_r w_r^T with w_r = a_r u_r + b_r
    e_judge; ``v`` and the result are (G x n_params)."""
    g, q = v.shape
    m, p = n_models, x.shape[1]
    z = _dot(n_models, row_a, row_b, row_judge, row_cluster, x, a, b, v)
    az = a * z
    at = row_cluster * q
    out = np.bincount(at + row_a, az, g * q) - np.bincount(at + row_b, az, g * q)
    out = out.reshape(g, q)
    for k in range(p):
        out[:, m + k] += np.bincount(row_cluster, az * x[:, k], g)
    if b.size:
        out += np.bincount(at + m + p + row_judge, b * z, g * q).reshape(g, q)
    return out


def style_cluster_quadratic(n_clusters, n_models, row_a, row_b, row_judge, row_cluster, x, a, b,
                            n):  # fmt: skip
    """``n_c^T H_g n_c`` for every cluster g and column c of ``n`` (n_params x C) -> (G x C)."""
    z = _dot(n_models, row_a, row_b, row_judge, None, x, a, b, n)
    out = np.zeros((n_clusters, n.shape[1]))
    np.add.at(out, row_cluster, z * z)
    return out


def _lin(params, n_models, row_a, row_b, x):
    """d_r = s_a - s_b + beta . x_r."""
    m, p = n_models, x.shape[1]
    return params[row_a] - params[row_b] + x @ params[m:m + p]


def style_bt_newton(params, n_models, row_a, row_b, x, wa, wb, tt, score, info):
    """Bradley-Terry with style at ``params`` (s (M), beta (P)) -> (negative log-likelihood,
    its gradient float64[M + P], its Hessian float64[M + P, M + P]); ties as half wins. Each
    row's score on d and information n p (1 - p) are written into ``score`` and ``info``."""
    r = np.arange(row_a.size)
    nll, score[:], info[:], _ = bt_row_terms(
        np.append(_lin(params, n_models, row_a, row_b, x), 0.0), r, np.full(r.size, r.size), wa,
        wb, tt, False)
    e = np.zeros(0)
    j = np.zeros(0, dtype=np.int64)
    grad = style_gradient(n_models, 0, row_a, row_b, j, x, score, e)
    return nll, -grad, style_assemble(n_models, 0, row_a, row_b, j, x, info, e, e)


def style_bt_rows(params, n_models, row_a, row_b, x, wa, wb, tt):
    """Per row (its summed score on d, its working weight sqrt(n p (1 - p)))."""
    d = _lin(params, n_models, row_a, row_b, x)
    s = expit(d)
    return wa + 0.5 * tt - (wa + wb + tt) * s, np.sqrt((wa + wb + tt) * (s * (1.0 - s)))


def style_transform(a, b, kind, out):
    """One feature per verdict from the two answers' counts, written into ``out``: (a - b) /
    (a + b) (kind 0; 0 where both are 0), a - b (1), (a - b) / max(a, b) (2; 0 where both are
    0) or log(1 + a) - log(1 + b) (3). Returns the sum of their squares and the number of
    verdicts with a negative count (their values are not to be used)."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    negative = int(np.sum((a < 0) | (b < 0)))
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == 0:
            out[:] = np.where(a + b > 0, (a - b) / (a + b), 0.0)
        elif kind == 1:
            out[:] = a - b
        elif kind == 2:
            out[:] = np.where(np.maximum(a, b) > 0, (a - b) / np.maximum(a, b), 0.0)
        else:
            out[:] = np.log1p(a) - np.log1p(b)
    return float(np.dot(out, out)), negative


def style_interleave(xt, scale, rank, out):
    """``out[t, k] = xt[k, r] / scale[k]``: features by row from features by column, row r
    written to ``t = rank[r]`` (to ``t = r`` when ``rank`` is empty)."""
    rows = (xt / scale[:, None]).T
    if rank.size:
        out[rank] = rows
    else:
        out[:] = rows


def style_merge(cl, judge, a, b, x, n_models, n_judges, lead):
    """Rows sorted by cluster: ``lead[t]`` set to the first row equal to row t in (cluster,
    judge, a, b, x) (-0.0 equal to 0.0); returns the number of rows that are not their own
    first. (``n_models``, ``n_judges``: at least the largest codes plus one.)"""
    if not a.size:
        return 0
    keys = np.column_stack([c.astype(np.float64) for c in (cl, judge, a, b)]
                           + [x + 0.0])  # + 0.0 turns -0.0 into 0.0
    _, first, inv = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    lead[:] = first[inv.ravel()]
    return int(np.sum(lead != np.arange(a.size)))


def style_compact(cl, judge, a, b, x, wa, wb, tt, lead):
    """One row per group of ``lead`` (the group's first row, in row order) with the group's
    summed wa, wb, tt."""
    firsts = np.flatnonzero(lead == np.arange(lead.size))
    rank = np.zeros(lead.size, dtype=np.int64)
    rank[firsts] = np.arange(firsts.size)
    group = rank[lead]
    return (*(np.ascontiguousarray(c[firsts]) for c in (cl, judge, a, b, x)),
            *(np.bincount(group, w, firsts.size) for w in (wa, wb, tt)))
