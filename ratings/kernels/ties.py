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
def _accumulate(r, w, lp, g0, g1, out, meat, with_meat):
    """Row ``r``'s scores, expected information and meat (into ``out`` and ``meat``) from its
    three outcomes' counts ``w``, log-probabilities ``lp`` and per-verdict scores ``g0`` (on
    d), ``g1`` (on phi); returns its negative log-likelihood."""
    n = w[0] + w[1] + w[2]
    nll = 0.0
    sd = 0.0
    sp = 0.0
    edd = 0.0
    edp = 0.0
    epp = 0.0
    mdd = 0.0
    mdp = 0.0
    mpp = 0.0
    for k in range(3):
        p = np.exp(lp[k])
        if w[k] > 0.0:  # 0 log 0 = 0
            nll -= w[k] * lp[k]
        sd += w[k] * g0[k]
        sp += w[k] * g1[k]
        edd += p * g0[k] * g0[k]
        edp += p * g0[k] * g1[k]
        epp += p * g1[k] * g1[k]
        mdd += w[k] * g0[k] * g0[k]
        mdp += w[k] * g0[k] * g1[k]
        mpp += w[k] * g1[k] * g1[k]
    out[0][r] = sd
    out[1][r] = sp
    out[2][r] = n * edd
    out[3][r] = n * edp
    out[4][r] = n * epp
    if with_meat:
        meat[0][r] = mdd
        meat[1][r] = mdp
        meat[2][r] = mpp
    return nll


@njit(**_JIT)
def _buffers(n_rows, with_meat):
    """The outputs (scores and information, meat) and one row's work arrays."""
    out = [np.empty(n_rows) for _ in range(5)]
    n_meat = n_rows if with_meat else 0
    meat = [np.empty(n_meat) for _ in range(3)]
    return out, meat, np.empty(3), np.empty(3), np.empty(3), np.empty(3)


@njit(**_JIT)
def davidson_row_terms(theta, phi, ii, jj, wi, wj, tt, with_meat=True):
    """Davidson row terms (see :mod:`ratings.kernels.ties_ref`), ``phi = log(nu)``."""
    out, meat, w, lp, g0, g1 = _buffers(ii.shape[0], with_meat)
    nll = 0.0
    for r in range(ii.shape[0]):
        u = 0.5 * (theta[ii[r]] - theta[jj[r]])
        au = abs(u)
        log_z = au + np.log1p(np.exp(-2.0 * au) + np.exp(phi - au))
        lp[0] = u - log_z
        lp[1] = -u - log_z
        lp[2] = phi - log_z
        w[0] = wi[r]
        w[1] = wj[r]
        w[2] = tt[r]
        diff = np.exp(lp[0]) - np.exp(lp[1])
        pt = np.exp(lp[2])
        g0[0] = 0.5 * (1.0 - diff)
        g0[1] = 0.5 * (-1.0 - diff)
        g0[2] = -0.5 * diff
        g1[0] = -pt
        g1[1] = -pt
        g1[2] = 1.0 - pt
        nll += _accumulate(r, w, lp, g0, g1, out, meat, with_meat)
    return nll, out[0], out[1], out[2], out[3], out[4], meat[0], meat[1], meat[2]


@njit(**_JIT)
def rao_kupper_row_terms(theta, phi, ii, jj, wi, wj, tt, with_meat=True):
    """Rao-Kupper row terms (see :mod:`ratings.kernels.ties_ref`), ``phi = log(theta - 1)``."""
    out, meat, w, lp, g0, g1 = _buffers(ii.shape[0], with_meat)
    eta = max(phi, 0.0) + np.log1p(np.exp(-abs(phi)))  # log(1 + e^phi)
    s = _sigmoid(phi)
    log_gap = np.log(-np.expm1(-2.0 * eta))
    c = 2.0 / np.expm1(2.0 * eta)
    nll = 0.0
    for r in range(ii.shape[0]):
        d = theta[ii[r]] - theta[jj[r]]
        a = d - eta
        b = -d - eta
        lp[0] = _log_sigmoid(a)
        lp[1] = _log_sigmoid(b)
        lp[2] = _log_sigmoid(-a) + _log_sigmoid(-b) + log_gap
        w[0] = wi[r]
        w[1] = wj[r]
        w[2] = tt[r]
        pi = _sigmoid(a)
        pj = _sigmoid(b)
        qi = _sigmoid(-a)
        qj = _sigmoid(-b)
        g0[0] = qi
        g0[1] = -qj
        g0[2] = pj - pi
        g1[0] = -qi * s
        g1[1] = -qj * s
        g1[2] = (pi + pj + c) * s
        nll += _accumulate(r, w, lp, g0, g1, out, meat, with_meat)
    return nll, out[0], out[1], out[2], out[3], out[4], meat[0], meat[1], meat[2]
