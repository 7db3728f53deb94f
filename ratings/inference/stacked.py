"""Degrees of freedom of a combined headline: the scopes' working models stacked by task."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ratings.inference import cluster
from ratings.inference.cluster import ClusterInference
from ratings.inference.satterthwaite import (
    pair_contrasts,
    satterthwaite,
    with_known_variance,
)

__all__ = ["StackedInference"]


@dataclass(frozen=True, eq=False)
class StackedInference:
    """Degrees of freedom of weighted sums of several fits' contrasts (a combined headline).

    Fit s enters with weight w_s; its models sit at ``model_index[s]`` among its own models and
    its clusters at ``cluster_index[s]`` among ``n_clusters`` (shared tasks share a position).
    Verdicts of different fits are different observations, so under the working model the
    combined Omega is sum_s w_s^2 Omega_s on the shared cluster positions: diagonal
    sum_s w_s^2 d_s and Y the fits' w_s Y_s side by side. Independent fits are the case of
    disjoint positions. A fit's variance term outside the clusters (``extra``: the two-step
    term of reused Crowd-BT judge qualities) enters as in :class:`ClusterInference`, taken as
    known in the Welch-Satterthwaite combination df = df_CR2 (1 + v_extra / v_CR2)^2, so a
    single fit reproduces its own degrees of freedom.
    """

    parts: tuple[ClusterInference, ...]
    weights: tuple[float, ...]
    model_index: tuple[NDArray[np.int64], ...]
    cluster_index: tuple[NDArray[np.int64], ...]
    n_models: int
    n_clusters: int

    @property
    def exact(self) -> bool:
        return all(p.exact for p in self.parts)

    def _mapped(self, k: int, contrasts: NDArray[np.float64]) -> NDArray[np.float64]:
        out = np.zeros((contrasts.shape[0], self.parts[k].n_models))
        out[:, self.model_index[k]] = contrasts
        return out

    def undefined(self, contrasts) -> NDArray[np.bool_]:
        c = np.atleast_2d(np.asarray(contrasts, dtype=np.float64))
        out = np.zeros(c.shape[0], dtype=bool)
        for k, part in enumerate(self.parts):
            if self.weights[k] > 0:
                out |= part.undefined(self._mapped(k, c))
        return out

    def df(self, contrasts, approximate: bool = False) -> NDArray[np.float64]:
        """Satterthwaite degrees of freedom of combined contrasts (exact when every part is
        and ``approximate`` is false; else the one-direction approximation)."""
        c = np.atleast_2d(np.asarray(contrasts, dtype=np.float64))
        g = self.n_clusters
        width = sum(p.free.size for p in self.parts)
        exact = self.exact and not approximate
        step = max(1, int(4e6 // max(g * width, 1))) if exact else 4096
        out = np.empty(c.shape[0])
        for lo in range(0, c.shape[0], step):
            part_c = c[lo:lo + step]
            n = part_c.shape[0]
            omega, d = np.zeros((n, g)), np.zeros((n, g))
            ys = []
            for k, part in enumerate(self.parts):
                w2, at = self.weights[k] ** 2, self.cluster_index[k]
                mapped = self._mapped(k, part_c)
                if exact:
                    om, dk, yk = part.factors(mapped)
                    d[:, at] += w2 * dk
                    y = np.zeros((n, g, yk.shape[2]))
                    y[:, at] = self.weights[k] * yk
                    ys.append(y)
                else:
                    om = part.omega(mapped)
                omega[:, at] += w2 * om
            y = np.concatenate(ys, axis=2) if exact else None
            out[lo:lo + step] = self._welch(
                part_c, satterthwaite(omega, d if exact else None, y))
        out[self.undefined(c)] = np.nan
        return out

    def _welch(self, c: NDArray[np.float64], df: NDArray[np.float64]) -> NDArray[np.float64]:
        """``df`` of combined contrasts ``c`` with the fits' ``extra`` terms (known variance)."""
        if all(p.extra is None for p in self.parts):
            return df
        infl = np.zeros((c.shape[0], self.n_clusters))  # the stacked CR2 influences, contrasted
        v_extra = np.zeros(c.shape[0])
        for k, part in enumerate(self.parts):
            full = np.zeros((c.shape[0], part.n_params))
            full[:, :part.n_models] = self._mapped(k, c)
            w = self.weights[k]
            infl[:, self.cluster_index[k]] += w * part.contrasted_influence(full).T
            if part.extra is not None:
                v_extra += w**2 * ((part.extra @ full.T) ** 2).sum(axis=0)
        return with_known_variance(df, (infl**2).sum(axis=1), v_extra)

    def pair_df(self) -> NDArray[np.float64]:
        """As :meth:`ClusterInference.pair_df`: exact within :data:`EXACT_BUDGET`, else the
        one-direction approximation with each pair's exact omega."""
        m = self.n_models
        jj, kk = np.triu_indices(m, 1)
        g, width = self.n_clusters, sum(p.free.size for p in self.parts)
        approx = not self.exact or jj.size * g * width * min(g, width) > cluster.EXACT_BUDGET
        step = 4096 if approx else max(jj.size, 1)  # the pairs' contrasts a batch at a time
        out = np.full((m, m), np.nan)
        out[jj, kk] = out[kk, jj] = np.concatenate([
            self.df(pair_contrasts(m, jj[lo:lo + step], kk[lo:lo + step]), approximate=approx)
            for lo in range(0, jj.size, step)] or [np.zeros(0)])  # fmt: skip
        return out
