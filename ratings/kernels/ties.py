"""Numba kernels of the tie models over aggregated rows: Davidson and Rao-Kupper.

Each has a twin of the same name and signature in :mod:`ratings.kernels.ties_ref`, whose
docstring gives the models, the tie parameter's scale and the outputs; the tests compare the
two. One pass over the rows, no temporaries per outcome.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["davidson_row_terms", "rao_kupper_row_terms"]

_JIT = {"cache": True, "nogil": True}


@njit(**_JIT)
def _log_sigmoid(x):
    if x > 0.0:
        return -np.log1p(np.exp(-x))
    return x - np.log1p(np.exp(x))


@njit(**_JIT)
def _sigmoid(x):
    if x > 0.0:
        return 1.0 / (1.0 + np.exp(-x))
    e = np.exp(x)
    return e / (1.0 + e)


@njit(**_JIT)
def _accumulate(r, w, p, g0, g1, score_d, score_p, i_dd, i_dp, i_pp, m_dd, m_dp, m_pp,
                with_meat):  # fmt: skip
    """Row ``r``'s scores, expected information and meat from its three outcomes' counts
    ``w``, probabilities ``p`` and per-verdict scores ``g0`` (on d), ``g1`` (on phi)."""
    n = w[0] + w[1] + w[2]
    sd = 0.0
    sp = 0.0
    edd = 0.0
    edp = 0.0
    epp = 0.0
    mdd = 0.0
    mdp = 0.0
    mpp = 0.0
    for k in range(3):
        sd += w[k] * g0[k]
        sp += w[k] * g1[k]
        edd += p[k] * g0[k] * g0[k]
        edp += p[k] * g0[k] * g1[k]
        epp += p[k] * g1[k] * g1[k]
        mdd += w[k] * g0[k] * g0[k]
        mdp += w[k] * g0[k] * g1[k]
        mpp += w[k] * g1[k] * g1[k]
    score_d[r] = sd
    score_p[r] = sp
    i_dd[r] = n * edd
    i_dp[r] = n * edp
    i_pp[r] = n * epp
    if with_meat:
        m_dd[r] = mdd
        m_dp[r] = mdp
        m_pp[r] = mpp


@njit(**_JIT)
def davidson_row_terms(theta, phi, ii, jj, wi, wj, tt, with_meat=True):
    """Davidson row terms (see :mod:`ratings.kernels.ties_ref`), ``phi = log(nu)``."""
    n_rows = ii.shape[0]
    out = [np.empty(n_rows) for _ in range(5)]
    n_meat = n_rows if with_meat else 0
    meat = [np.empty(n_meat) for _ in range(3)]
    w = np.empty(3)
    p = np.empty(3)
    g0 = np.empty(3)
    g1 = np.empty(3)
    nll = 0.0
    for r in range(n_rows):
        u = 0.5 * (theta[ii[r]] - theta[jj[r]])
        au = abs(u)
        log_z = au + np.log1p(np.exp(-2.0 * au) + np.exp(phi - au))
        lp0 = u - log_z
        lp1 = -u - log_z
        lp2 = phi - log_z
        w[0] = wi[r]
        w[1] = wj[r]
        w[2] = tt[r]
        if w[0] > 0.0:
            nll -= w[0] * lp0
        if w[1] > 0.0:
            nll -= w[1] * lp1
        if w[2] > 0.0:
            nll -= w[2] * lp2
        p[0] = np.exp(lp0)
        p[1] = np.exp(lp1)
        p[2] = np.exp(lp2)
        diff = p[0] - p[1]
        g0[0] = 0.5 * (1.0 - diff)
        g0[1] = 0.5 * (-1.0 - diff)
        g0[2] = -0.5 * diff
        g1[0] = -p[2]
        g1[1] = -p[2]
        g1[2] = 1.0 - p[2]
        _accumulate(r, w, p, g0, g1, out[0], out[1], out[2], out[3], out[4], meat[0], meat[1],
                    meat[2], with_meat)  # fmt: skip
    return nll, out[0], out[1], out[2], out[3], out[4], meat[0], meat[1], meat[2]


@njit(**_JIT)
def rao_kupper_row_terms(theta, phi, ii, jj, wi, wj, tt, with_meat=True):
    """Rao-Kupper row terms (see :mod:`ratings.kernels.ties_ref`), ``phi = log(theta - 1)``."""
    n_rows = ii.shape[0]
    out = [np.empty(n_rows) for _ in range(5)]
    n_meat = n_rows if with_meat else 0
    meat = [np.empty(n_meat) for _ in range(3)]
    w = np.empty(3)
    p = np.empty(3)
    g0 = np.empty(3)
    g1 = np.empty(3)
    eta = max(phi, 0.0) + np.log1p(np.exp(-abs(phi)))  # log(1 + e^phi)
    s = _sigmoid(phi)
    log_gap = np.log(-np.expm1(-2.0 * eta))
    c = 2.0 / np.expm1(2.0 * eta)
    nll = 0.0
    for r in range(n_rows):
        d = theta[ii[r]] - theta[jj[r]]
        a = d - eta
        b = -d - eta
        lp0 = _log_sigmoid(a)
        lp1 = _log_sigmoid(b)
        lp2 = _log_sigmoid(-a) + _log_sigmoid(-b) + log_gap
        w[0] = wi[r]
        w[1] = wj[r]
        w[2] = tt[r]
        if w[0] > 0.0:
            nll -= w[0] * lp0
        if w[1] > 0.0:
            nll -= w[1] * lp1
        if w[2] > 0.0:
            nll -= w[2] * lp2
        p[0] = _sigmoid(a)
        p[1] = _sigmoid(b)
        p[2] = np.exp(lp2)
        qi = _sigmoid(-a)
        qj = _sigmoid(-b)
        g0[0] = qi
        g0[1] = -qj
        g0[2] = p[1] - p[0]
        g1[0] = -qi * s
        g1[1] = -qj * s
        g1[2] = (p[0] + p[1] + c) * s
        _accumulate(r, w, p, g0, g1, out[0], out[1], out[2], out[3], out[4], meat[0], meat[1],
                    meat[2], with_meat)  # fmt: skip
    return nll, out[0], out[1], out[2], out[3], out[4], meat[0], meat[1], meat[2]
