"""A tie model's inference (Davidson, Rao-Kupper): the CR2 working rows of its fit, the strengths
and the tie parameter, read by the design's one interval path
(:func:`ratings.models.covariates._cr2`, with covariate columns or without,
:func:`~ratings.models.covariates.pair_built`), and the first-order bias of its tie parameter.

A verdict of a tie model has three outcomes, so its information in (d, phi) (d = s_i - s_j,
phi the tie parameter's unbounded scale) has rank two: the working model of
:mod:`ratings.inference` gives each aggregated row two working rows, the columns of a
factor L of the row's expected information I = L L^T,

    x_1 = sqrt(I_dd) (e_i - e_j) + I_dphi / sqrt(I_dd) e_phi,
    x_2 = sqrt(I_phiphi - I_dphi^2 / I_dd) e_phi,

with the tie parameter as the last parameter (``M``, after the covariates on a design with
covariates: the place of Crowd-BT's one judge quality, so the working rows, the exact and series
paths and the sparse path of many small clusters serve it unchanged). The CR2 adjustment
depends on the rows only through each cluster's information H_g = sum x x^T and its summed
score (see :mod:`ratings.inference`), so the choice of factor does not matter, and the second
rows of a cluster, all along e_phi, are summed into one; the working residuals of a row solve
X_r^T e_r = (score_d, score_phi).

:func:`phi_bias` is the first-order bias of a tie model's maximum-likelihood tie parameter,
on its unbounded scale phi (log(nu), log(theta - 1)), for the interval of
:func:`ratings.models.ties.tie_table`.

Cox & Snell (1968): the bias of the MLE of parameter s to order 1/n is

    b_s = sum_{r,t,u} I^{sr} I^{tu} (kappa_{rt,u} + kappa_{rtu} / 2),

with I^{..} the inverse expected information, kappa_{rt,u} = E[l_rt l_u] and
kappa_{rtu} = E[l_rtu] (derivatives of the log-likelihood l). Firth (1993) removes it from the
score; Kosmidis & Firth (2009) call ``phi_hat - b(phi_hat)`` the explicit bias-reduced
estimate, which agrees with Firth's to the same order. For Davidson's model (a multinomial logit
in the strengths and log(nu), a canonical family) kappa_{rt,u} = 0 and the bias is minus half
the third cumulant contracted with I^-1 twice; Rao-Kupper's is not canonical and keeps both
terms.

A verdict's likelihood depends on the parameters only through z = (d, phi), d = s_i - s_j, so
each pair's tensor is formed in z (2 x 2 x 2, from the family's outcome probabilities by
central differences) and mapped by z's Jacobian: with v = I^-1 e_phi and C = I^-1,

    b_phi = sum_pairs n_pair sum_{abc} K_abc (J v)_a (J C J^T)_bc,

O(pairs) after the inverse the fit already has. Why it matters: on a board of 12 models and
150 tasks with 8% ties the MLE of log(nu) sits 0.15 standard errors above its target (the
strengths' noise spreads the fitted pairs apart and the tie parameter makes up the ties), enough
to take a symmetric interval below its level (docs/coverage.md, "Tie models").
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from ratings.inference.working import WorkingRows

__all__ = ["pair_tensor", "phi_bias", "tie_working"]

_CHUNK = 20_000  # pairs whose tensors are formed at once (about 12 MB of log-probabilities)
_H = 2e-3  # step of the central differences (third derivatives: error ~ h^2 + eps / h^3)


def tie_working(rows, info, scores=None, *, x: NDArray[np.float64] | None = None,
                style=None) -> tuple[WorkingRows, NDArray[np.float64] | None]:  # fmt: skip
    """Working rows of a tie model's fit, in cluster order: each of ``rows``' rows (``ii``,
    ``jj``, ``cluster`` in cluster order) as its first factor column, then one row per cluster
    on the tie parameter alone (the second columns, e_phi times b_2, summed over the cluster:
    b = sqrt(sum b_2^2), which leaves the cluster's information and score as they are).

    ``info``: each row's expected information (I_dd, I_dphi, I_phiphi); ``scores``: its summed
    scores (on d, on phi) for the working residuals (returned, else None); ``x``: the rows'
    covariate block, the design with covariates' (``style``: its kernels).
    """
    idd, idp, ipp = info
    m, r, g = rows.n_models, rows.ii.size, rows.n_clusters
    with np.errstate(divide="ignore", invalid="ignore"):  # the factor's columns (a1, b1), (0, b2)
        a1 = np.sqrt(np.maximum(idd, 0.0))
        b1 = np.where(a1 > 0.0, idp / a1, 0.0)
    b2sq = np.maximum(ipp - b1 * b1, 0.0)
    cluster = np.asarray(rows.cluster, dtype=np.int64)
    b_tie = np.sqrt(np.bincount(cluster, b2sq, g))
    place = np.arange(r) + cluster  # each earlier cluster's extra row shifts a row by one
    tie_at = np.searchsorted(cluster, np.arange(g), side="right") + np.arange(g)
    n = r + g
    ii, jj = np.zeros(n, np.int64), np.ones(n, np.int64)  # a = 0 at (0, 1): the pair is unread
    ii[place], jj[place] = rows.ii, rows.jj
    a, b = np.zeros(n), np.zeros(n)
    a[place], b[place], b[tie_at] = a1, b1, b_tie
    p = 0 if x is None else x.shape[1]
    if x is not None:
        x, given = np.zeros((n, p)), x
        x[place] = given
    working = WorkingRows(ii=ii, jj=jj, judge=np.zeros(n, np.int64), a=a, b=b, n_clusters=g,
                          cluster=np.repeat(np.arange(g), np.bincount(cluster, minlength=g) + 1),
                          n_params=m + p + 1, n_models=m, x=x, style=style)  # fmt: skip
    if scores is None:
        return working, None
    sd, sp = scores
    b2 = np.sqrt(b2sq)
    with np.errstate(divide="ignore", invalid="ignore"):
        e1 = np.where(a1 > 0.0, sd / a1, 0.0)
        e2 = np.where(b2 > 0.0, (sp - b1 * e1) / b2, 0.0)
        e_tie = np.where(b_tie > 0.0, np.bincount(cluster, b2 * e2, g) / b_tie, 0.0)
    residual = np.zeros(n)
    residual[place], residual[tie_at] = e1, e_tie
    return working, residual


def pair_tensor(probabilities: Callable, d: NDArray[np.float64], phi: float) -> NDArray:
    """Each pair's kappa_{ab,c} + kappa_{abc} / 2 in z = (d, phi), for one verdict: (P, 2, 2, 2),
    the first two indices symmetric, the last the score's."""
    d = np.asarray(d, dtype=np.float64)
    steps = np.arange(-2, 3) * _H

    def logp(dd, pp):  # (3, P): log P(i beats j), log P(j beats i), log P(tie)
        return np.log(np.clip(np.stack(probabilities(d + dd, phi + pp)), 1e-300, None))

    grid = np.array([[logp(a, b) for b in steps] for a in steps])  # (5, 5, 3, P); [2, 2] at z
    f = np.moveaxis(grid, (0, 1), (-2, -1))  # (3, P, 5, 5)
    c = 2
    g = np.stack([(f[..., c + 1, c] - f[..., c - 1, c]) / (2 * _H),
                  (f[..., c, c + 1] - f[..., c, c - 1]) / (2 * _H)], axis=-1)  # (3, P, 2)

    def second(a: int, b: int) -> NDArray:
        if a == b:
            e = [0, 0]
            e[a] = 1
            return (f[..., c + e[0], c + e[1]] - 2 * f[..., c, c]
                    + f[..., c - e[0], c - e[1]]) / _H**2  # fmt: skip
        return (f[..., c + 1, c + 1] - f[..., c + 1, c - 1] - f[..., c - 1, c + 1]
                + f[..., c - 1, c - 1]) / (4 * _H**2)  # fmt: skip

    h = np.empty((*g.shape[:2], 2, 2))
    for a in range(2):
        for b in range(2):
            h[..., a, b] = second(a, b)

    def third(a: int, b: int, k: int) -> NDArray:
        axes = sorted((a, b, k))  # symmetric: count derivatives along d (0) and phi (1)
        n_phi = sum(axes)
        if n_phi in (0, 3):
            x = f[..., :, c] if n_phi == 0 else f[..., c, :]
            return (x[..., 4] - 2 * x[..., 3] + 2 * x[..., 1] - x[..., 0]) / (2 * _H**3)
        if n_phi == 1:  # d d phi: the second difference in d of the first difference in phi
            x = (f[..., :, c + 1] - f[..., :, c - 1]) / (2 * _H)
            return (x[..., c + 1] - 2 * x[..., c] + x[..., c - 1]) / _H**2
        x = (f[..., c + 1, :] - f[..., c - 1, :]) / (2 * _H)  # d phi phi
        return (x[..., c + 1] - 2 * x[..., c] + x[..., c - 1]) / _H**2

    t = np.empty((*g.shape[:2], 2, 2, 2))
    for a in range(2):
        for b in range(2):
            for k in range(2):
                t[..., a, b, k] = third(a, b, k)
    p = np.exp(f[..., c, c])  # (3, P)
    k_rt_u = np.einsum("op,opab,opc->pabc", p, h, g)
    k_rtu = np.einsum("op,opabc->pabc", p, t)
    return k_rt_u + 0.5 * k_rtu


def phi_bias(probabilities: Callable, theta: NDArray[np.float64], phi: float, data,
             inverse: NDArray[np.float64]) -> float:  # fmt: skip
    """The first-order bias of the MLE of phi (Cox & Snell 1968; see the module notes).

    Parameters
    ----------
    probabilities : callable
        ``(d, phi) -> (P(i beats j), P(j beats i), P(tie))``, the family's.
    theta, phi :
        The estimate: strengths (M,) and the tie parameter's unbounded scale.
    data : Comparisons
        The rows (``ii``, ``jj``, ``wi``, ``wj``, ``tt``), summed over pairs here.
    inverse : ndarray, (M + 1, M + 1)
        The inverse expected information over the strengths and phi (last), zero in the row and
        column of the reference model.
    """
    m = len(theta)
    key = np.unique(data.ii * m + data.jj, return_inverse=True)
    n = np.bincount(key[1], data.wi + data.wj + data.tt, key[0].size)
    pairs = key[0][n > 0]
    c = inverse
    v = c[:, m]
    total = 0.0
    for lo in range(0, pairs.size, _CHUNK):  # the tensors of a chunk of pairs at a time
        pi, pj = pairs[lo:lo + _CHUNK] // m, pairs[lo:lo + _CHUNK] % m
        k = pair_tensor(probabilities, theta[pi] - theta[pj], phi)
        jv = np.stack([v[pi] - v[pj], np.full(pi.size, v[m])], axis=-1)
        jcj = np.empty((pi.size, 2, 2))
        jcj[:, 0, 0] = c[pi, pi] + c[pj, pj] - 2.0 * c[pi, pj]
        jcj[:, 0, 1] = jcj[:, 1, 0] = c[pi, m] - c[pj, m]
        jcj[:, 1, 1] = c[m, m]
        total += float(np.einsum("p,pabc,pa,pbc->", n[n > 0][lo:lo + _CHUNK], k, jv, jcj))
    return total
