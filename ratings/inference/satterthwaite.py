"""Satterthwaite degrees of freedom from the working model's Omega (:mod:`ratings.inference`)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["CONCENTRATED", "DEGENERATE", "one_direction", "pair_contrasts", "reference_contrasts",
           "satterthwaite", "share_sums", "with_known_variance"]

#: A leverage this close to 1 means the cluster alone determines a direction.
DEGENERATE = 1e-8

#: A model whose largest cluster share of omega exceeds this gets the full one-direction
#: formula for its pairs in :func:`ratings.inference.pairdf.streamed_pairs_df`; below it the
#: leverage terms change df by under 2%.
CONCENTRATED = 0.02

#: Cells (contrasts x clusters) of :func:`share_sums`' work arrays per block (1 MB).
SHARE_BLOCK_CELLS = 131_072


def with_known_variance(df: NDArray[np.float64], v_est: NDArray[np.float64],
                        v_known: NDArray[np.float64]) -> NDArray[np.float64]:
    """Welch-Satterthwaite df of a variance ``v_est + v_known`` whose first part has ``df``
    degrees of freedom and whose second is known (infinite df): df (1 + v_known / v_est)^2
    (Satterthwaite 1946); infinite where ``v_est`` is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(v_est > 0, df * (1.0 + v_known / v_est) ** 2, np.inf)


def satterthwaite(omega: NDArray[np.float64], d: NDArray[np.float64] | None,
                  y: NDArray[np.float64] | None,
                  weight: NDArray[np.float64] | None = None) -> NDArray[np.float64]:  # fmt: skip
    """Degrees of freedom (tr Omega)^2 / ||Omega||_F^2 per contrast (rows).

    ``omega``, ``d``: (C x G); ``y``: (C x G x P) with Omega = diag(d) - Y Y^T (see the module
    notes); ``weight``: the clusters each column stands for (default 1: clusters of one design
    counted once, :mod:`ratings.inference.batched`). Without ``y``: the one-direction
    approximation of the large-board path. NaN where the contrast has no variance.
    """
    tr = omega.sum(axis=1) if weight is None else omega @ weight
    if y is None:
        return one_direction(share_sums(omega, tr, weight), tr)
    w = np.ones(omega.shape[1]) if weight is None else weight
    with np.errstate(divide="ignore", invalid="ignore"):
        yy = np.einsum("cgp,cgp->cg", y, y)
        if weight is not None:
            y = y * np.sqrt(weight)[None, :, None]
        if y.shape[1] <= y.shape[2]:
            gram = y @ y.transpose(0, 2, 1)
        else:
            gram = y.transpose(0, 2, 1) @ y
        denom = (d * d) @ w - 2.0 * (d * yy) @ w + np.einsum("cij,cij->c", gram, gram)
        return np.where(tr > 0, tr * tr / denom, np.nan)


def share_sums(omega: NDArray[np.float64], tr: NDArray[np.float64],
               weight: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """The sums over clusters of the one-direction df (3 x C): of w_g pi_g^2, w_g a_g and
    w_g a_g^2, with pi_g = omega_g / tr (``omega``: C x G, ``tr``: C) and
    a_g = pi_g^2 / (1 - pi_g); ``weight`` w_g the clusters each stands for (default 1). They
    add over blocks of clusters, which are taken :data:`SHARE_BLOCK_CELLS` cells at a time (the
    work arrays stay in cache: an arena's 18,000 designs x 200 ratings in 14 ms, not 90)."""
    n_contrasts, g = omega.shape
    w = np.ones(g) if weight is None else weight
    out = np.zeros((3, n_contrasts))
    step = max(1, SHARE_BLOCK_CELLS // max(n_contrasts, 1))
    scale = tr[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        for lo in range(0, g, step):
            pi = omega[:, lo:lo + step] / scale
            sq = pi * pi
            ws = w[lo:lo + step]
            out[0] += sq @ ws
            np.subtract(1.0, pi, out=pi)
            np.maximum(pi, DEGENERATE, out=pi)
            np.divide(sq, pi, out=sq)  # a_g
            out[1] += sq @ ws
            sq *= sq
            out[2] += sq @ ws
    return out


def one_direction(sums: NDArray[np.float64], tr: NDArray[np.float64]) -> NDArray[np.float64]:
    """The one-direction df 1 / (sum pi^2 + (sum a)^2 - sum a^2) from :func:`share_sums`
    (3 x ...); NaN where ``tr`` is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(tr > 0, 1.0 / (sums[0] + sums[1] ** 2 - sums[2]), np.nan)


def reference_contrasts(n_models: int, anchor: int | None) -> NDArray[np.float64]:
    """Each model's reported rating as a contrast: ``e_a - e_anchor``, or ``e_a - mean``."""
    c = np.eye(n_models)
    if anchor is None:
        return c - 1.0 / n_models
    c[:, anchor] -= 1.0
    return c


def pair_contrasts(n_models: int, jj: NDArray[np.int64],
                   kk: NDArray[np.int64]) -> NDArray[np.float64]:  # fmt: skip
    """The contrasts ``e_j - e_k`` of the pairs ``(jj, kk)``, one per row."""
    c = np.zeros((jj.size, n_models))
    c[np.arange(jj.size), jj] = 1.0
    c[np.arange(jj.size), kk] = -1.0
    return c
