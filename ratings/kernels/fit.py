"""Numba kernels over aggregated comparison rows: the likelihood terms of the fits.

Private. Kernels take only C-contiguous float64/int64 arrays and scalars and never validate; the
callers in :mod:`ratings.models.bt`, :mod:`ratings.models.crowd.likelihood` and
:mod:`ratings.inference.covariance` do. This is the
module :func:`ratings.kernels.engine.kernels` hands out for ``engine="numba"``: it also carries the
aggregation kernels of :mod:`ratings.kernels.aggregate` (verdict codes to rows). Every function
here has a twin of the same name and signature in :mod:`ratings.kernels.fit_ref`, written with
vectorised NumPy for obviousness; the tests compare the two.

Arguments, by name (R rows, M models, K judges, G clusters, P parameters):

* ``theta`` float64[M]: log-strengths; ``eta`` float64[K]: judge qualities (Crowd-BT);
* ``ii``, ``jj`` int64[R]: the models of each row (``ii < jj``); ``judge``, ``cluster``
  int64[R]: its judge and cluster codes; ``wi``, ``wj``, ``tt`` float64[R]: its wins of ``ii``,
  wins of ``jj`` and ties (a tie is one observation with outcome 1/2): the aggregated-row
  layout :class:`ratings.core.rows.PairRows`;
* ``score_d`` float64[R]: a row's summed score on d = theta_i - theta_j; ``score_eta``
  float64[R]: on its judge's eta (empty for Bradley-Terry);
* ``weight`` float64[R]: a per-row weight (a Laplacian's edge weights, a scatter's values).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ratings.kernels.aggregate import (
    aggregate_codes,
    collapse_codes,
    collapse_rows,
    count_rows,
    verdict_cluster_scores,
)
from ratings.kernels.slots import (
    slot_cluster_scores,
    slot_collapse,
    slot_missing,
    slot_order,
    slot_outcomes,
)
from ratings.kernels.ties import davidson_row_terms, rao_kupper_row_terms

__all__ = [  # each kernel has a twin of the same name in ratings.kernels.fit_ref
    "aggregate_codes", "bt_row_terms", "bt_scores", "cluster_meat",
    "cluster_scores", "collapse_codes", "collapse_rows", "count_rows", "crowd_assemble",
    "crowd_row_terms", "crowd_weights", "davidson_row_terms", "laplacian", "rao_kupper_row_terms",
    "scatter_diff", "slot_cluster_scores", "slot_collapse", "slot_missing", "slot_order",
    "slot_outcomes", "verdict_cluster_scores",
]  # fmt: skip

_JIT = {"cache": True, "nogil": True}  # no fastmath: the likelihood relies on inf/NaN semantics
_SCORE_CAP = 1e150  # |score| bound where it would overflow; its square still fits in a double
_DOUBLE_MAX = float(np.finfo(np.float64).max)


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
    """Bradley-Terry terms per row -> (nll float, score float64[R], info float64[R],
    meat float64[R]).

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
        p = big if d > 0.0 else small  # P(i beats j)
        q = small if d > 0.0 else big  # P(j beats i)
        l1p = np.log1p(e)
        half = 0.5 * tt[r]
        yi = wi[r] + half  # outcomes for i (a tie counts 1/2)
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
    """Bradley-Terry summed score per row, ``wi + tt / 2 - n sigma(theta_i - theta_j)``
    -> float64[R].

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
def laplacian(n_items, ii, jj, weight):
    """Weighted graph Laplacian sum_r weight_r (e_i - e_j)(e_i - e_j)^T
    -> float64[n_items, n_items]."""
    out = np.zeros((n_items, n_items))
    for r in range(ii.shape[0]):
        i = ii[r]
        j = jj[r]
        out[i, i] += weight[r]
        out[j, j] += weight[r]
        out[i, j] -= weight[r]
        out[j, i] -= weight[r]
    return out


@njit(**_JIT)
def scatter_diff(n_items, ii, jj, weight):
    """sum_r weight_r (e_i - e_j) -> float64[n_items]."""
    out = np.zeros(n_items)
    for r in range(ii.shape[0]):
        out[ii[r]] += weight[r]
        out[jj[r]] -= weight[r]
    return out


@njit(**_JIT)
def cluster_meat(n_models, n_params, ii, jj, judge, score_d, score_eta, starts):
    """Sum over clusters of g_c g_c^T -> float64[n_params, n_params], with
    g_c = sum_{r in c} score_d_r (e_i - e_j), plus score_eta_r e_{n_models + judge} when
    ``score_eta`` is non-empty (Crowd-BT's eta block).

    Rows must be grouped by cluster: cluster c owns rows ``starts[c]:starts[c + 1]``
    (``starts`` int64[G + 1]). Cost is sum over clusters of (parameters touched)^2; used when
    the G x P matrix of :func:`cluster_scores` would be too large to hold.
    """
    out = np.zeros((n_params, n_params))
    g = np.zeros(n_params)
    seen = np.zeros(n_params, dtype=np.bool_)
    touched = np.empty(n_params, dtype=np.int64)
    with_eta = score_eta.shape[0] > 0
    for c in range(starts.shape[0] - 1):
        cnt = 0
        for r in range(starts[c], starts[c + 1]):
            i = ii[r]
            j = jj[r]
            k = n_models + judge[r] if with_eta else i
            for idx in (i, j, k):
                if not seen[idx]:
                    seen[idx] = True
                    touched[cnt] = idx
                    cnt += 1
            g[i] += score_d[r]
            g[j] -= score_d[r]
            if with_eta:
                g[k] += score_eta[r]
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
def _sigmoids(d):
    """(sigma(d), sigma(-d)) from one exp: the values of ``_sigmoid(d)`` and ``_sigmoid(-d)``."""
    if d > 0.0:
        e = np.exp(-d)
        return 1.0 / (1.0 + e), e / (1.0 + e)
    e = np.exp(d)
    return e / (1.0 + e), 1.0 / (1.0 + e)


@njit(**_JIT)
def _crowd_point(d, eta):
    """Probabilities and derivative ratios at one (d, eta).

    -> (p, pc, p_d/p, p_e/p, -p_d/pc, -p_e/pc, p_dd/p, p_de/p, p_dd/pc, p_de/pc) with
    p = eta sigma(d) + (1 - eta) sigma(-d), pc = 1 - p (their logs: :func:`_crowd_log`). For
    eta < 1, p and pc are at least (1 - eta) / 2, so the ratios are safe; eta = 1 uses the
    Bradley-Terry limits, which stay finite where sigma(d) underflows.
    """
    s, sq = _sigmoids(d)
    if eta >= 1.0:  # eta-scores grow like e^|d|; capped so that 0 counts times them stay 0
        ae = max(-np.expm1(-d), -_SCORE_CAP)
        be = min(-np.expm1(d), _SCORE_CAP)
        return (s, sq, sq, ae, -s, be, sq * (sq - s), 2.0 * sq, s * (sq - s), 2.0 * s)
    a = 2.0 * eta - 1.0
    p = eta * s + (1.0 - eta) * sq
    pc = eta * sq + (1.0 - eta) * s
    p_d = a * s * sq  # dp/dd
    p_e = s - sq  # dp/deta = 2 sigma(d) - 1
    p_dd = p_d * (sq - s)
    p_de = 2.0 * s * sq
    return (p, pc, p_d / p, p_e / p, -p_d / pc, -p_e / pc,
            p_dd / p, p_de / p, p_dd / pc, p_de / pc)


@njit(**_JIT)
def _crowd_log(d, eta, p):
    """log p of :func:`_crowd_point`'s ``p`` at (d, eta) (its ``pc``'s at (-d, eta)): at
    eta = 1 log sigma(d), finite where sigma(d) underflows."""
    return _log_sigmoid(d) if eta >= 1.0 else np.log(p)


@njit(**_JIT)
def crowd_row_terms(theta, eta, ii, jj, judge, wi, wj, tt, with_meat=True):
    """Crowd-BT terms per row (judge ``judge[r]`` with quality ``eta[judge[r]]``).

    A decisive verdict has probability p = eta sigma(d) + (1 - eta) sigma(-d) (i wins) or
    1 - p; ``tt`` are not part of the likelihood (it conditions on decisive verdicts, see
    :mod:`ratings.models.crowd.likelihood`) and are taken only so every row kernel has the same
    arguments.

    -> (nll float, then float64[R] each: ``grad_d``, ``grad_eta`` (summed scores of the
    log-likelihood w.r.t. d = theta_i - theta_j and eta_k); ``hess_dd``, ``hess_deta``,
    ``hess_etaeta`` (summed negative second derivatives); ``meat_dd``, ``meat_deta``,
    ``meat_etaeta`` (sums over the row's verdicts of products of per-verdict scores, for the
    per-verdict sandwich; empty when ``with_meat`` is false, as in Newton's iterations)).
    """
    n_rows = ii.shape[0]
    grad_d = np.empty(n_rows)
    grad_eta = np.empty(n_rows)
    hess_dd = np.empty(n_rows)
    hess_deta = np.empty(n_rows)
    hess_etaeta = np.empty(n_rows)
    n_meat = n_rows if with_meat else 0
    meat_dd = np.empty(n_meat)
    meat_deta = np.empty(n_meat)
    meat_etaeta = np.empty(n_meat)
    nll = 0.0
    for r in range(n_rows):
        d = theta[ii[r]] - theta[jj[r]]
        e = eta[judge[r]]
        # per-verdict scores of "i won" (ad on d, ae on eta) and "j won" (bd, be), and the
        # second-derivative ratios of p (rdd_p, rde_p) and of pc = 1 - p (rdd_c, rde_c)
        p, pc, ad, ae, bd, be, rdd_p, rde_p, rdd_c, rde_c = _crowd_point(d, e)
        yi = wi[r]
        yj = wj[r]
        if yi > 0.0:  # a log only where it counts (a row of one verdict needs one)
            nll -= yi * _crowd_log(d, e, p)
        if yj > 0.0:
            nll -= yj * _crowd_log(-d, e, pc)
        grad_d[r] = yi * ad + yj * bd
        grad_eta[r] = yi * ae + yj * be
        # -d2/dxdy [yi log p + yj log pc] = yi (px py/p^2 - pxy/p) + yj (px py/pc^2 + pxy/pc)
        hess_dd[r] = yi * (ad * ad - rdd_p) + yj * (bd * bd + rdd_c)
        hess_deta[r] = yi * (ad * ae - rde_p) + yj * (bd * be + rde_c)
        hess_etaeta[r] = yi * ae * ae + yj * be * be
        if with_meat:
            meat_dd[r] = yi * ad * ad + yj * bd * bd
            meat_deta[r] = yi * ad * ae + yj * bd * be
            meat_etaeta[r] = yi * ae * ae + yj * be * be
    return (nll, grad_d, grad_eta, hess_dd, hess_deta, hess_etaeta, meat_dd, meat_deta,
            meat_etaeta)


@njit(**_JIT)
def crowd_assemble(n_models, n_judges, ii, jj, judge, w_dd, w_deta, w_etaeta):
    """sum_r of the (M + K)-square block built from x = e_i - e_j and e = e_{M + k}:
    w_dd x x^T + w_deta (x e^T + e x^T) + w_etaeta e e^T -> float64[M + K, M + K]
    (a Hessian or a meat from :func:`crowd_row_terms`' columns)."""
    out = np.zeros((n_models + n_judges, n_models + n_judges))
    for r in range(ii.shape[0]):
        i = ii[r]
        j = jj[r]
        k = n_models + judge[r]
        out[i, i] += w_dd[r]
        out[j, j] += w_dd[r]
        out[i, j] -= w_dd[r]
        out[j, i] -= w_dd[r]
        out[i, k] += w_deta[r]
        out[k, i] += w_deta[r]
        out[j, k] -= w_deta[r]
        out[k, j] -= w_deta[r]
        out[k, k] += w_etaeta[r]
    return out


@njit(cache=True, nogil=True, error_model="numpy")  # NaN and inf as NumPy gives them
def crowd_weights(d, eta, n):
    """Crowd-BT's working weights per row (CR2's working model), from its linear predictor
    ``d``, its judge's quality ``eta`` (per row) and its ``n`` decisive verdicts (float64[R]
    each) -> (a, b) float64[R]: ``a = sqrt(n / (p pc)) dp/dd`` (at eta >= 1, where p = sigma(d),
    ``sqrt(n s (1 - s))`` exactly) and ``b = sqrt(n / (p pc)) dp/deta``, NaN as 0 and +-inf
    as the largest doubles (as ``np.nan_to_num``), with s = sigma(d) and
    p = eta s + (1 - eta) (1 - s)."""
    n_rows = d.shape[0]
    a = np.empty(n_rows)
    b = np.empty(n_rows)
    for r in range(n_rows):
        x = d[r]
        t = np.exp(-abs(x))  # s as the twin's expit: (1 or t) / (1 + t)
        s = (1.0 if x >= 0.0 else t) / (t + 1.0)
        sq = s * (1.0 - s)
        e = eta[r]
        p = e * s + (1.0 - e) * (1.0 - s)
        root = np.sqrt(n[r] / (p * (1.0 - p)))
        a[r] = _finite(np.sqrt(n[r] * sq) if e >= 1.0 else root * (2.0 * e - 1.0) * sq)
        b[r] = _finite(root * (2.0 * s - 1.0))
    return a, b


@njit(**_JIT)
def _finite(x):
    """``np.nan_to_num`` of one number: NaN as 0, +-inf as the largest doubles."""
    if x != x:
        return 0.0
    if x == np.inf:
        return _DOUBLE_MAX
    if x == -np.inf:
        return -_DOUBLE_MAX
    return x


@njit(**_JIT)
def cluster_scores(n_clusters, n_params, ii, jj, judge, cluster, score_d,
                   score_eta, n_models):  # fmt: skip
    """Summed score of each cluster, float64[G, P]: row c is sum_{r in c} score_d_r
    (e_i - e_j), plus score_eta_r e_{n_models + judge} when ``score_eta`` is non-empty
    (Crowd-BT's eta block)."""
    out = np.zeros((n_clusters, n_params))
    with_eta = score_eta.shape[0] > 0
    for r in range(ii.shape[0]):
        c = cluster[r]
        out[c, ii[r]] += score_d[r]
        out[c, jj[r]] -= score_d[r]
        if with_eta:
            out[c, n_models + judge[r]] += score_eta[r]
    return out
