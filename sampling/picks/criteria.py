"""Information criteria for choosing the next comparison (pure NumPy, vectorised over pairs).

One more comparison of models i and j adds Fisher information ``w_ij x x^T`` to the precision of
the log-strengths, with ``x = e_i - e_j``, ``w_ij = p_ij (1 - p_ij)`` and
``p_ij = sigma(s_i - s_j)``.
By Sherman-Morrison the covariance ``C`` becomes

    C' = C - w (C x)(C x)^T / (1 + w x^T C x),

so the trace of the covariance falls by ``w ||C x||^2 / (1 + w x^T C x)``. This holds for an
anchored ``C`` (anchor row and column zero) and for a centred one, because ``x`` sums to zero.

The sum of the variances of all pairwise differences, ``sum_{i<j} Var(s_i - s_j)``, is
``M trace(P C P)`` with ``P = I - 11^T / M`` the centring projection: it does not depend on
where the ratings are anchored (:func:`centred` gives ``P C P`` for any anchored ``C``). Since
``P x = x``, the update of ``P C P`` is the same rank-one formula, so the trace criterion applied to
``P C P`` is the reduction of that sum (divided by ``M``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit

__all__ = ["add_comparison", "centred", "comparison_weight", "pair_reduction",
           "record_comparison", "trace_reduction"]


def comparison_weight(strength: NDArray[np.float64]) -> NDArray[np.float64]:
    """Fisher information ``p (1 - p)`` of one comparison for every pair, shape (M, M).

    Parameters
    ----------
    strength : ndarray, shape (M,)
        Natural-log strengths (any offset).

    Returns
    -------
    ndarray, shape (M, M)
        ``w[i, j] = sigma(s_i - s_j) sigma(s_j - s_i)``; the diagonal is zero.
    """
    s = np.asarray(strength, dtype=np.float64)
    p = expit(s[:, None] - s[None, :])
    w = p * (1.0 - p)
    np.fill_diagonal(w, 0.0)
    return w


def trace_reduction(cov: NDArray[np.float64], weight: NDArray[np.float64]) -> NDArray[np.float64]:
    """Reduction in ``trace(cov)`` from one more comparison, for every pair, shape (M, M).

    Parameters
    ----------
    cov : ndarray, shape (M, M)
        Current covariance of the log-strengths (anchored or centred).
    weight : ndarray, shape (M, M)
        Information of one comparison per pair (:func:`comparison_weight`).

    Returns
    -------
    ndarray, shape (M, M)
        ``w ||C x||^2 / (1 + w x^T C x)`` with ``x = e_i - e_j``; symmetric, zero diagonal.
    """
    c = np.asarray(cov, dtype=np.float64)
    g = c @ c  # ||C x||^2 = G_ii + G_jj - 2 G_ij since C is symmetric
    d, gd = np.diag(c), np.diag(g)
    quad = np.clip(d[:, None] + d[None, :] - 2.0 * c, 0.0, None)
    norm2 = np.clip(gd[:, None] + gd[None, :] - 2.0 * g, 0.0, None)
    out = weight * norm2 / (1.0 + weight * quad)
    np.fill_diagonal(out, 0.0)
    return out


def centred(cov: NDArray[np.float64], mask: NDArray[np.bool_]) -> NDArray[np.float64]:
    """``P C P`` over the models in ``mask`` (rows and columns outside it are zero).

    Parameters
    ----------
    cov : ndarray, shape (M, M)
        Covariance of the log-strengths, anchored anywhere (or centred); rows and columns
        outside ``mask`` are ignored.
    mask : ndarray of bool, shape (M,)
        The models whose pairwise differences count.

    Returns
    -------
    ndarray, shape (M, M)
        The covariance of the log-strengths centred over ``mask`` (their mean is zero):
        ``Var(s_i - s_j) = C_ii + C_jj - 2 C_ij`` is unchanged for ``i, j`` in ``mask``.
    """
    idx = np.flatnonzero(mask)
    out = np.zeros_like(np.asarray(cov, dtype=np.float64))
    if idx.size:
        sub = np.asarray(cov, dtype=np.float64)[np.ix_(idx, idx)]
        sub = sub - sub.mean(axis=0, keepdims=True)
        sub = sub - sub.mean(axis=1, keepdims=True)
        out[np.ix_(idx, idx)] = 0.5 * (sub + sub.T)
    return out


def add_comparison(cov: NDArray[np.float64], i: int, j: int, weight: float) -> NDArray[np.float64]:
    """Covariance after one more comparison of ``i`` and ``j`` (rank-one update, new array).

    Parameters
    ----------
    cov : ndarray, shape (M, M)
    i, j : int
        The two models compared.
    weight : float
        Information of the comparison, ``p (1 - p)``.

    Returns
    -------
    ndarray, shape (M, M)
    """
    c = np.asarray(cov, dtype=np.float64)
    u = c[:, i] - c[:, j]
    quad = max(float(u[i] - u[j]), 0.0)
    return c - (weight / (1.0 + weight * quad)) * np.outer(u, u)


def pair_reduction(cov: NDArray[np.float64], gram: NDArray[np.float64], weight: NDArray[np.float64],
                   i: NDArray[np.int64], j: NDArray[np.int64],
                   flat: NDArray[np.int64] | None = None) -> NDArray[np.float64]:  # fmt: skip
    """:func:`trace_reduction` for the pairs ``(i[k], j[k])`` only, from ``gram = cov @ cov``.

    Parameters
    ----------
    cov, gram : ndarray, shape (M, M)
        The covariance and its square (kept up to date by :func:`record_comparison`).
    weight : ndarray, shape (M, M)
    i, j : ndarray of int, shape (K,)
    flat : ndarray of int, shape (K,), optional
        ``i * M + j`` (saves computing it).

    Returns
    -------
    ndarray, shape (K,)
        The same values as ``trace_reduction(cov, weight)[i, j]``, in ``O(K)``.
    """
    flat = i * cov.shape[0] + j if flat is None else flat
    d, gd = np.diag(cov), np.diag(gram)
    quad = np.clip(d[i] + d[j] - 2.0 * np.take(cov, flat), 0.0, None)
    norm2 = np.clip(gd[i] + gd[j] - 2.0 * np.take(gram, flat), 0.0, None)
    w = np.take(weight, flat)
    return w * norm2 / (1.0 + w * quad)


def record_comparison(cov: NDArray[np.float64], gram: NDArray[np.float64], i: int, j: int,
                      weight: float) -> None:  # fmt: skip
    """:func:`add_comparison` in place, and the same update of ``gram = cov @ cov`` in O(M^2).

    With ``u = C x`` and ``a = w / (1 + w x^T C x)``, ``C' = C - a u u^T`` and
    ``C'^2 = C^2 - a (v u^T + u v^T) + a^2 |u|^2 u u^T`` where ``v = C u = C^2 x``.
    """
    u = cov[:, i] - cov[:, j]
    v = gram[:, i] - gram[:, j]
    quad = max(float(u[i] - u[j]), 0.0)
    alpha = weight / (1.0 + weight * quad)
    uu = np.outer(u, u)
    vu = np.outer(v, u)
    cov -= alpha * uu
    gram -= alpha * (vu + vu.T) - (alpha * alpha * float(u @ u)) * uu
