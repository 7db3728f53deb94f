"""Pure-NumPy twins of :mod:`ratings.kernels.ties`: same names, signatures and results.

The row terms of the two tie models over aggregated rows (``wi``, ``wj``, ``tt``: wins of
``ii``, wins of ``jj``, ties), in the linear predictor d = theta_i - theta_j and the tie
parameter ``phi`` on its unbounded scale:

* Davidson (1970), ``phi = log(nu)``: with u = d / 2 and Z = 2 cosh(u) + nu,
  P(i) = e^u / Z, P(j) = e^-u / Z, P(tie) = nu / Z. The outcome indicators
  (1_i - 1_j, 1_tie) are the sufficient statistics of (u, phi), so the observed information
  is the expected one, n Cov(1_i - 1_j, 1_tie).
* Rao & Kupper (1967), ``phi = log(theta - 1)``: with eta = log(theta) = log(1 + e^phi),
  P(i) = sigma(d - eta), P(j) = sigma(-d - eta), P(tie) = 1 - P(i) - P(j)
  = sigma(eta - d) sigma(eta + d) (1 - e^(-2 eta)). The information returned is the expected
  (Fisher) one, sum over outcomes of P_k g_k g_k^T, g_k the outcome's score.

Each kernel returns ``(nll, score_d, score_phi, info_dd, info_dphi, info_phiphi, meat_dd,
meat_dphi, meat_phiphi)``: the negative log-likelihood, then per row the summed scores, the
summed (expected) information and the sum over the row's verdicts of products of per-verdict
scores (empty when ``with_meat`` is false), the layout of Crowd-BT's row terms, so that the
assembly kernels of :mod:`ratings.kernels.fit` (``crowd_assemble`` with one "judge", the tie
parameter) build the Hessian and the meat.
"""

from __future__ import annotations

import numpy as np

__all__ = ["davidson_row_terms", "rao_kupper_row_terms"]


def expit(x):
    """sigma(x), overflow-free."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0.0, 1.0 / (1.0 + e), e / (1.0 + e))


def log_expit(x):
    """log sigma(x) = min(x, 0) - log1p(e^-|x|)."""
    return np.minimum(x, 0.0) - np.log1p(np.exp(-np.abs(x)))


def _xlogy0(y, logp):
    return np.where(y > 0.0, y * logp, 0.0)


def _terms(p, g, w, with_meat):
    """Scores, expected information and meat from the outcomes' probabilities ``p`` (3 x R),
    per-verdict scores ``g`` (3 outcomes x 2 coordinates x R) and counts ``w`` (3 x R)."""
    n = w.sum(axis=0)
    score = (w[:, None, :] * g).sum(axis=0)
    info = [n * (p * g[:, a] * g[:, b]).sum(axis=0) for a, b in ((0, 0), (0, 1), (1, 1))]
    if with_meat:
        meat = [(w * g[:, a] * g[:, b]).sum(axis=0) for a, b in ((0, 0), (0, 1), (1, 1))]
    else:
        meat = [np.zeros(0)] * 3
    return (score[0], score[1], *info, *meat)


def davidson_row_terms(theta, phi, ii, jj, wi, wj, tt, with_meat=True):
    u = 0.5 * (theta[ii] - theta[jj])
    au = np.abs(u)
    # log Z = |u| + log(1 + e^-2|u| + nu e^-|u|), overflow-free
    log_z = au + np.log1p(np.exp(-2.0 * au) + np.exp(phi - au))
    pi, pj, pt = np.exp(u - log_z), np.exp(-u - log_z), np.exp(phi - log_z)
    nll = -float(np.sum(_xlogy0(wi, u - log_z) + _xlogy0(wj, -u - log_z)
                        + _xlogy0(tt, phi - log_z)))  # fmt: skip
    diff = pi - pj
    g = np.array([[0.5 * (1.0 - diff), -pt], [0.5 * (-1.0 - diff), -pt],
                  [-0.5 * diff, 1.0 - pt]])  # fmt: skip
    return (nll, *_terms(np.array([pi, pj, pt]), g, np.array([wi, wj, tt]), with_meat))


def rao_kupper_row_terms(theta, phi, ii, jj, wi, wj, tt, with_meat=True):
    d = theta[ii] - theta[jj]
    eta = np.logaddexp(0.0, phi)  # log(theta) = log(1 + e^phi)
    s = expit(phi)  # d eta / d phi
    a, b = d - eta, -d - eta
    pi, pj = expit(a), expit(b)
    log_t = log_expit(-a) + log_expit(-b) + np.log(-np.expm1(-2.0 * eta))
    pt = np.exp(log_t)
    nll = -float(np.sum(_xlogy0(wi, log_expit(a)) + _xlogy0(wj, log_expit(b))
                        + _xlogy0(tt, log_t)))  # fmt: skip
    c = 2.0 / np.expm1(2.0 * eta)  # d log(1 - e^-2 eta) / d eta
    qi, qj = expit(-a), expit(-b)  # 1 - P(i), 1 - P(j)
    g = np.array([[qi, -qi * s], [-qj, -qj * s], [pj - pi, (pi + pj + c) * s]])
    return (nll, *_terms(np.array([pi, pj, pt]), g, np.array([wi, wj, tt]), with_meat))
