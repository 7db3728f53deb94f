"""Small-sample cluster-robust inference: the CR2 sandwich and Satterthwaite degrees of freedom.

The default clustered interval of :func:`ratings.fit` (``ci="sandwich"``) is the bias-reduced
linearisation "CR2" of Bell & McCaffrey (2002), with a Student t reference whose degrees of
freedom belong to each contrast (Satterthwaite, as in Pustejovsky & Tipton 2018 and R's
clubSandwich: ``vcovCR(type = "CR2")``, ``coef_test(test = "Satterthwaite")``). A model seen on
six tasks gets about five degrees of freedom; a pair of well-connected models several hundred.

Working model
-------------
A verdict with win probability p(beta) (a tie is y = 1/2) has score (y - p) grad p / (p (1 - p)).
With x = grad p / sqrt(p (1 - p)) and e = (y - p) / sqrt(p (1 - p)) these are the normal
equations of a linear model, Fisher information H = sum x x^T, bread M = H^-1 (Bradley-Terry:
x = sqrt(p q) (e_i - e_j); Crowd-BT: grad p also has a column per estimated judge quality eta).
CR2 replaces each cluster's residuals e_g by A_g e_g, A_g = (I - X_g M X_g^T)^(-1/2), so that the
variance estimate is unbiased when the working model holds.

Everything is computed from per-cluster sums. For any power series f,
X_g^T f(X_g M X_g^T) = f(H_g M) X_g^T, with H_g = X_g^T X_g the cluster's information and
g_g = X_g^T e_g its summed score. So the adjusted score is f(H_g M) g_g with
f(lambda) = (1 - lambda)^(-1/2), and an aggregated row standing for n identical verdicts enters
H_g with weight n: nothing is expanded to verdicts. In whitened coordinates (M = L L^T,
S_g = L^T H_g L, whose eigenvalues are the cluster's leverages in [0, 1) and sum to the number of
parameters over clusters), with S_g = Q diag(lambda) Q^T:

* adjusted influence of cluster g: L f(S_g) L^T g_g; CR2 covariance: sum_g of their outer products;
* Satterthwaite degrees of freedom of a contrast c (Pustejovsky & Tipton 2018, working model
  Phi = I): with c' = L^T c, Omega = diag(d_g) - Y Y^T, d_g = c'^T S_g (I - S_g)^-1 c',
  y_g = S_g f(S_g) c', df = (tr Omega)^2 / ||Omega||_F^2, where tr Omega = sum_g c'^T S_g c'
  and ||Omega||_F^2 = sum d_g^2 - 2 sum_g d_g ||y_g||^2 + ||Y^T Y||_F^2 (P x P, no G x G matrix).

Large boards
------------
The exact path costs about sum_g R_g P min(R_g, P) for the clusters' eigen-decompositions
(R_g rows, P parameters) and G P min(G, P) per contrast for the degrees of freedom. Above
:data:`EXACT_BUDGET` (e.g. 200 models on 1,000 tasks) two shortcuts are used instead:

* the adjusted influences come from the binomial series f(M H_g) = sum_k binom(2k, k) / 4^k
  (M H_g)^k applied to each cluster's influence M g_g (one pass over the rows and one G x P
  product per term), run until every cluster's next term is below 1e-10 of its influence;
  clusters still above it after :data:`SERIES_TERMS` terms (leverage near 1) are decomposed
  exactly;
* the degrees of freedom use each cluster's share pi_g = omega_g / sum omega of the contrast's
  information-weighted variance (omega_g = c^T M H_g M c, exact) and treat the contrast as one
  direction with leverage pi_g in each cluster:
  df = 1 / (sum pi_g^2 + (sum a_g)^2 - sum a_g^2), a_g = pi_g^2 / (1 - pi_g). This is exact when
  the contrast is an eigen-direction of every H_g M (a model seen on k equally informative
  tasks: df = k - 1) and tends to the exact value on balanced boards, where the degrees of
  freedom are large and matter little (checked against the exact path in the tests).

A contrast that lies along a cluster direction of leverage 1 (a model compared on one task
only) has no cluster-robust variance: its variance is reported as infinite and its df as NaN.

References
----------
Bell, R. M. & McCaffrey, D. F. (2002). Bias reduction in standard errors for linear regression
with multi-stage samples. Survey Methodology 28(2), 169-181.
Pustejovsky, J. E. & Tipton, E. (2018). Small-sample methods for cluster-robust variance
estimation and hypothesis testing in fixed effects models. Journal of Business & Economic
Statistics 36(4), 672-683.
Imbens, G. W. & Kolesar, M. (2016). Robust standard errors in small samples: some practical
advice. Review of Economics and Statistics 98(4), 701-712.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

__all__ = [
    "EXACT_BUDGET",
    "ClusterInference",
    "StackedInference",
    "WorkingRows",
    "bt_inference",
    "cluster_inference",
    "crowd_inference",
    "reference_contrasts",
    "satterthwaite",
]

#: Flops (roughly) up to which the clusters' leverages are decomposed exactly and the degrees of
#: freedom of the models' contrasts are computed exactly.
EXACT_BUDGET = 3e8
#: Most series terms before a cluster is decomposed exactly instead.
SERIES_TERMS = 60
#: A leverage this close to 1 means the cluster alone determines a direction.
DEGENERATE = 1e-8


@dataclass(frozen=True, eq=False)
class WorkingRows:
    """Per-cluster rows of the working linear model.

    Row r stands for ``n_r`` identical verdicts and adds the design vector
    ``a_r (e_i - e_j) + b_r e_{n_models + k}`` (already scaled by sqrt(n_r)); ``b`` is empty
    for Bradley-Terry. Rows are sorted by ``cluster``.
    """

    ii: NDArray[np.int64]
    jj: NDArray[np.int64]
    kk: NDArray[np.int64]
    cluster: NDArray[np.int64]
    a: NDArray[np.float64]
    b: NDArray[np.float64]
    n_clusters: int
    n_params: int
    n_models: int

    @property
    def starts(self) -> NDArray[np.int64]:
        return np.searchsorted(self.cluster, np.arange(self.n_clusters + 1)).astype(np.int64)

    def design(self, lf: NDArray[np.float64], sl: slice) -> NDArray[np.float64]:
        """Rows ``sl`` times ``lf`` (n_params x K): each row's design vector mapped by ``lf``."""
        out = self.a[sl, None] * (lf[self.ii[sl]] - lf[self.jj[sl]])
        if self.b.size:
            out += self.b[sl, None] * lf[self.n_models + self.kk[sl]]
        return out

    def information(self) -> NDArray[np.float64]:
        """Fisher information sum_r x_r x_r^T, (n_params x n_params). The squares and products
        of ``a`` and ``b`` add up over clusters, so the rows summed over clusters give it too."""
        from ratings._kernels_ref import crowd_assemble, laplacian

        if not self.b.size:
            return laplacian(self.n_params, self.ii, self.jj, self.a * self.a)
        nj = self.n_params - self.n_models
        return crowd_assemble(self.n_models, nj, self.ii, self.jj, self.kk, self.a * self.a,
                              self.a * self.b, self.b * self.b)  # fmt: skip

    def _kernels(self):
        """The compiled kernels for large row sets, their NumPy twins below (see
        :mod:`ratings.engine`)."""
        from ratings.engine import resolve

        if resolve("auto", self.ii.size) == "numba":
            from ratings import _kernels_inference

            return _kernels_inference
        from ratings import _kernels_inference_ref

        return _kernels_inference_ref

    def times(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        """``H_g v_g`` for every cluster g at once: ``v`` and the result are (G x n_params)."""
        return self._kernels().cluster_times(self.ii, self.jj, self.kk, self.cluster, self.a,
                                             self.b, self.n_models,
                                             np.ascontiguousarray(v))  # fmt: skip

    def quadratic(self, n: NDArray[np.float64]) -> NDArray[np.float64]:
        """``n_c^T H_g n_c`` for every cluster g and column c of ``n`` (n_params x C) -> (G x C)."""
        k = self._kernels()
        out = np.zeros((self.n_clusters, n.shape[1]))
        step = max(1, int(4e6 // max(n.shape[1], 1)))  # rows per pass (the twin's memory)
        n = np.ascontiguousarray(n)
        for lo in range(0, self.ii.size, step):
            sl = slice(lo, lo + step)
            out += k.cluster_quadratic(self.n_clusters, self.ii[sl], self.jj[sl], self.kk[sl],
                                       self.cluster[sl], self.a[sl],
                                       self.b[sl] if self.b.size else self.b, self.n_models,
                                       n)  # fmt: skip
        return out


def bt_rows(theta: NDArray[np.float64], data) -> WorkingRows:
    """Working rows of a Bradley-Terry fit: ``a = sqrt(n p q)``."""
    from ratings._kernels_ref import expit

    p = expit(theta[data.ii] - theta[data.jj])
    n = data.wi + data.wj + data.tt
    return WorkingRows(data.ii, data.jj, data.judge, data.cluster, np.sqrt(n * p * (1.0 - p)),
                       np.zeros(0), data.n_clusters, data.n_models, data.n_models)  # fmt: skip


def crowd_rows(theta: NDArray[np.float64], eta: NDArray[np.float64],
               free_eta: NDArray[np.bool_], data) -> WorkingRows:  # fmt: skip
    """Working rows of a Crowd-BT fit, p = eta sigma(d) + (1 - eta) sigma(-d):
    ``a = sqrt(n / (p (1 - p))) dp/dd``, ``b = sqrt(n / (p (1 - p))) dp/deta`` for the judges
    whose eta is estimated (0 for fixed or boundary ones, which are treated as known)."""
    from ratings._kernels_ref import expit

    s = expit(theta[data.ii] - theta[data.jj])
    e = eta[data.judge]
    n = data.wi + data.wj + data.tt
    sq = s * (1.0 - s)
    p = e * s + (1.0 - e) * (1.0 - s)
    pq = p * (1.0 - p)
    bt = e >= 1.0  # p = sigma(d): the ratio p_d / sqrt(p q) is sqrt(s (1 - s)) exactly
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(bt, np.sqrt(n * sq), np.sqrt(n / pq) * (2.0 * e - 1.0) * sq)
        b = np.where(free_eta[data.judge], np.sqrt(n / pq) * (2.0 * s - 1.0), 0.0)
    return WorkingRows(data.ii, data.jj, data.judge, data.cluster, a, np.nan_to_num(b),
                       data.n_clusters, data.n_models + len(eta), data.n_models)  # fmt: skip


def _f(lam: NDArray[np.float64]) -> NDArray[np.float64]:
    """(1 - lambda)^(-1/2), with degenerate leverages (lambda -> 1) set to 1 (flagged apart)."""
    return np.where(lam < 1.0 - DEGENERATE, 1.0 / np.sqrt(np.clip(1.0 - lam, DEGENERATE, None)),
                    1.0)  # fmt: skip


def _eigen(w: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Nonzero eigenpairs (Q, lambda) of S = w^T w from the smaller Gram matrix of ``w``."""
    r, p = w.shape
    if r < p:
        lam, u = np.linalg.eigh(w @ w.T)
        keep = lam > 1e-12 * max(1.0, float(lam[-1]) if lam.size else 1.0)
        q = (w.T @ u[:, keep]) / np.sqrt(lam[keep])
        return q, lam[keep]
    lam, q = np.linalg.eigh(w.T @ w)
    keep = lam > 1e-12 * max(1.0, float(lam[-1]) if lam.size else 1.0)
    return q[:, keep], lam[keep]


@dataclass(frozen=True, eq=False)
class ClusterInference:
    """CR2 covariance and Satterthwaite degrees of freedom of one clustered fit.

    Coordinates: ``n_params`` parameters (models, then Crowd-BT judge qualities), of which
    ``free`` have a covariance (the reference model and fixed etas are known). Contrasts are
    rows of an array over all ``n_params`` (or over the models only); they should sum to zero
    over the models (differences of ratings), which makes them independent of the reference.
    """

    n_params: int
    n_models: int
    free: NDArray[np.int64]
    chol: NDArray[np.float64]  # L (P x P) with bread M = L L^T over the free coordinates
    influence_free: NDArray[np.float64]  # G x P CR2-adjusted influences
    clusters: pd.Index | None
    eig_q: tuple | None  # per cluster Q_g (P x r_g) of S_g (exact path), else None
    eig_lam: tuple | None  # per cluster lambda_g
    degenerate: NDArray[np.float64]  # k x P whitened directions of leverage 1
    rows: WorkingRows | None  # kept for the large-board degrees of freedom

    @property
    def exact(self) -> bool:
        """Exact degrees of freedom (False: the large-board approximation)."""
        return self.eig_q is not None

    @property
    def n_clusters(self) -> int:
        return self.influence_free.shape[0]

    def covariance(self) -> NDArray[np.float64]:
        """CR2 covariance over all parameters (zero outside ``free``)."""
        from ratings.uncertainty import gram

        out = np.zeros((self.n_params, self.n_params))
        out[np.ix_(self.free, self.free)] = gram(self.influence_free)
        return out

    def influence(self) -> NDArray[np.float64]:
        """CR2-adjusted influence of each cluster on all parameters (G x n_params); the
        covariance is ``influence.T @ influence``."""
        out = np.zeros((self.n_clusters, self.n_params))
        out[:, self.free] = self.influence_free
        return out

    def _free_contrasts(self, contrasts) -> NDArray[np.float64]:
        c = np.atleast_2d(np.asarray(contrasts, dtype=np.float64))
        if c.shape[1] == self.n_models and self.n_params > self.n_models:
            c = np.hstack([c, np.zeros((c.shape[0], self.n_params - self.n_models))])
        if c.shape[1] != self.n_params:
            raise ValueError(f"Contrasts need {self.n_params} (or {self.n_models}) columns; "
                             f"got {c.shape[1]}.")  # fmt: skip
        return c[:, self.free]

    def undefined(self, contrasts) -> NDArray[np.bool_]:
        """Contrasts along a direction that one cluster alone determines (no clustered
        variance)."""
        c = self._free_contrasts(contrasts) @ self.chol
        if not self.degenerate.size:
            return np.zeros(c.shape[0], dtype=bool)
        along = np.abs(c @ self.degenerate.T).max(axis=1)
        return along > 1e-6 * np.maximum(np.linalg.norm(c, axis=1), 1e-300)

    def omega(self, contrasts) -> NDArray[np.float64]:
        """Each cluster's share of each contrast's model-based variance,
        omega_g = c^T M H_g M c, shape (C x G)."""
        c = self._free_contrasts(contrasts)
        if not self.exact:
            n = np.zeros((self.n_params, c.shape[0]))
            n[self.free] = (self.chol @ self.chol.T) @ c.T
            return self.rows.quadratic(n).T
        cbar = c @ self.chol  # rows: L^T c
        return np.column_stack([(cbar @ q) ** 2 @ lam if lam.size else np.zeros(c.shape[0])
                                for q, lam in zip(self.eig_q, self.eig_lam, strict=True)])

    def factors(self, contrasts) -> tuple:
        """``(omega, d, Y)`` of each contrast: omega, d (C x G) and Y (C x G x P) as in the
        module notes (exact path only)."""
        cbar = self._free_contrasts(contrasts) @ self.chol  # rows: L^T c
        g, p = self.n_clusters, self.chol.shape[0]
        omega, d = np.zeros((cbar.shape[0], g)), np.zeros((cbar.shape[0], g))
        y = np.zeros((cbar.shape[0], g, p))
        for k, (q, lam) in enumerate(zip(self.eig_q, self.eig_lam, strict=True)):
            if not lam.size:
                continue
            lam = np.minimum(lam, 1.0 - DEGENERATE)
            xi = cbar @ q
            omega[:, k] = (xi * xi) @ lam
            d[:, k] = (xi * xi) @ (lam / (1.0 - lam))
            y[:, k] = (xi * (lam / np.sqrt(1.0 - lam))) @ q.T
        return omega, d, y

    def df(self, contrasts) -> NDArray[np.float64]:
        """Satterthwaite degrees of freedom of each contrast (NaN where undefined)."""
        c = np.atleast_2d(np.asarray(contrasts, dtype=np.float64))
        out = np.empty(c.shape[0])
        step = self._chunk()
        for lo in range(0, c.shape[0], step):
            part = c[lo:lo + step]
            if self.exact:
                out[lo:lo + step] = satterthwaite(*self.factors(part))
            else:
                out[lo:lo + step] = satterthwaite(self.omega(part), None, None)
        out[self.undefined(c)] = np.nan
        return out

    def pair_df(self) -> NDArray[np.float64]:
        """Degrees of freedom of every difference of two models, (M x M), NaN on the diagonal.

        Exact while the pairs' cost stays within :data:`EXACT_BUDGET`; beyond it the
        one-direction approximation (see the module notes) with each pair's exact omega, and on
        the large-board path with omega of s_j - s_k taken as the sum of omega of s_j - mean
        and s_k - mean (their cross term left out).
        """
        m = self.n_models
        jj, kk = np.triu_indices(m, 1)
        pairs = np.zeros((jj.size, m))
        pairs[np.arange(jj.size), jj] = 1.0
        pairs[np.arange(jj.size), kk] = -1.0
        g, p = self.n_clusters, self.chol.shape[0]
        out = np.full((m, m), np.nan)
        if self.exact and jj.size * g * p * min(g, p) <= EXACT_BUDGET:
            out[jj, kk] = out[kk, jj] = self.df(pairs)
            return out
        if self.exact:
            out[jj, kk] = out[kk, jj] = satterthwaite(self._pair_omega(jj, kk), None, None)
        else:
            out = _summed_pairs_df(self.omega(reference_contrasts(m, None)))
            np.fill_diagonal(out, np.nan)
        und = self.undefined(pairs)
        out[jj[und], kk[und]] = out[kk[und], jj[und]] = np.nan
        return out

    def _pair_omega(self, jj: NDArray[np.int64], kk: NDArray[np.int64]) -> NDArray[np.float64]:
        """Exact omega (pairs x G) of every s_j - s_k, from each cluster's (M x M) matrix of
        the models' unit contrasts."""
        lf = np.zeros((self.n_models, self.chol.shape[0]))
        model_free = self.free[self.free < self.n_models]
        lf[model_free] = self.chol[: model_free.size]  # L^T e_m for each model (0: reference)
        out = np.empty((jj.size, self.n_clusters))
        for k, (q, lam) in enumerate(zip(self.eig_q, self.eig_lam, strict=True)):
            x = (lf @ q) * np.sqrt(lam)
            kg = x @ x.T
            d = np.diag(kg)
            out[:, k] = d[jj] + d[kk] - 2.0 * kg[jj, kk]
        return out

    def _chunk(self) -> int:
        """Contrasts per batch of :meth:`df` (the C x G x P array stays near 4 million cells)."""
        if not self.exact:
            return 4096
        return max(1, int(4e6 // max(self.n_clusters * self.chol.shape[0], 1)))

    def variance(self, contrasts) -> NDArray[np.float64]:
        """CR2 variance of each contrast (inf where undefined)."""
        c = self._free_contrasts(contrasts)
        out = ((self.influence_free @ c.T) ** 2).sum(axis=0)
        out[self.undefined(contrasts)] = np.inf
        return out


@dataclass(frozen=True, eq=False)
class StackedInference:
    """Degrees of freedom of weighted sums of several fits' contrasts (a combined headline).

    Fit s enters with weight w_s; its models sit at ``model_index[s]`` among its own models and
    its clusters at ``cluster_index[s]`` among ``n_clusters`` (shared tasks share a position).
    Verdicts of different fits are different observations, so under the working model the
    combined Omega is sum_s w_s^2 Omega_s on the shared cluster positions: diagonal
    sum_s w_s^2 d_s and Y the fits' w_s Y_s side by side. Independent fits are the case of
    disjoint positions.
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
        width = sum(p.chol.shape[0] for p in self.parts)
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
            out[lo:lo + step] = satterthwaite(omega, d if exact else None, y)
        out[self.undefined(c)] = np.nan
        return out

    def pair_df(self) -> NDArray[np.float64]:
        """As :meth:`ClusterInference.pair_df`: exact within :data:`EXACT_BUDGET`, else the
        one-direction approximation with each pair's exact omega."""
        m = self.n_models
        jj, kk = np.triu_indices(m, 1)
        pairs = np.zeros((jj.size, m))
        pairs[np.arange(jj.size), jj] = 1.0
        pairs[np.arange(jj.size), kk] = -1.0
        g = self.n_clusters
        width = sum(p.chol.shape[0] for p in self.parts)
        out = np.full((m, m), np.nan)
        if not self.exact or jj.size * g * width * min(g, width) > EXACT_BUDGET:
            vals = np.concatenate([self.df(pairs[lo:lo + 4096], approximate=True)
                                   for lo in range(0, jj.size, 4096)])  # fmt: skip
        else:
            vals = self.df(pairs)
        out[jj, kk] = out[kk, jj] = vals
        return out


#: A model whose largest cluster share of omega exceeds this gets the full one-direction
#: formula in :func:`_summed_pairs_df`; below it the leverage terms change df by under 2%.
CONCENTRATED = 0.02


def _summed_pairs_df(u: NDArray[np.float64]) -> NDArray[np.float64]:
    """One-direction df of every pair (j, k) with omega_jk = u_j + u_k (``u``: M x G).

    sum_g pi_g^2 for all pairs comes from one Gram matrix of ``u``; models with a
    concentrated share (see :data:`CONCENTRATED`) get the full formula for their pairs.
    """
    tr = u.sum(axis=1)
    sq = (u * u).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (tr[:, None] + tr[None, :]) ** 2 / (sq[:, None] + sq[None, :] + 2.0 * (u @ u.T))
        share = (u / tr[:, None]).max(axis=1)
    for j in np.flatnonzero(~(share <= CONCENTRATED)):
        out[j] = out[:, j] = satterthwaite(u[j] + u, None, None)
    return out


def satterthwaite(omega: NDArray[np.float64], d: NDArray[np.float64] | None,
                  y: NDArray[np.float64] | None) -> NDArray[np.float64]:  # fmt: skip
    """Degrees of freedom (tr Omega)^2 / ||Omega||_F^2 per contrast (rows).

    ``omega``, ``d``: (C x G); ``y``: (C x G x P) with Omega = diag(d) - Y Y^T (see the module
    notes). Without ``y``: the one-direction approximation of the large-board path.
    """
    tr = omega.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        if y is None:
            pi = omega / tr[:, None]
            a = pi * pi / np.clip(1.0 - pi, DEGENERATE, None)
            denom = (pi * pi).sum(axis=1) + a.sum(axis=1) ** 2 - (a * a).sum(axis=1)
            return np.where(tr > 0, 1.0 / denom, np.nan)
        yy = (y * y).sum(axis=2)
        if y.shape[1] <= y.shape[2]:
            gram = y @ y.transpose(0, 2, 1)
        else:
            gram = y.transpose(0, 2, 1) @ y
        fro = (gram * gram).sum(axis=(1, 2))
        denom = (d * d).sum(axis=1) - 2.0 * (d * yy).sum(axis=1) + fro
        return np.where(tr > 0, tr * tr / denom, np.nan)


def cluster_inference(rows: WorkingRows, score: NDArray[np.float64], free: NDArray[np.int64],
                      *, penalty: NDArray[np.float64] | None = None,
                      clusters: pd.Index | None = None, info: NDArray[np.float64] | None = None,
                      exact: bool | None = None) -> ClusterInference:  # fmt: skip
    """CR2 pieces of a clustered fit.

    Parameters
    ----------
    rows : WorkingRows
        Per-cluster rows of the working model at the estimate.
    score : ndarray, shape (G, n_params)
        Each cluster's summed score (log-likelihood gradient).
    free : ndarray of int
        Coordinates with a covariance.
    penalty : ndarray, optional
        Hessian of a penalty (n_params x n_params) added to the information in the bread.
    info : ndarray, optional
        The Fisher information, if known (default: from ``rows``).
    exact : bool, optional
        Force the exact path (True) or the large-board one (False); default by cost
        (:data:`EXACT_BUDGET`).
    """
    from ratings.optim import block, inverse_pd

    info = rows.information() if info is None else info
    if penalty is not None:
        info = info + penalty
    bread = inverse_pd(block(info, free))  # raises LinAlgError unless positive definite
    chol = np.linalg.cholesky(bread)
    p, g = free.size, rows.n_clusters
    starts = rows.starts
    sizes = np.diff(starts)
    if exact is None:
        cost = float(np.sum(sizes * p * np.minimum(sizes, p))) + g * p * p * min(g, p)
        exact = cost <= EXACT_BUDGET
    lf = np.zeros((rows.n_params, p))
    lf[free] = chol
    gbar = score[:, free] @ chol  # whitened scores L^T g_g
    if exact:
        qs, lams, adjusted, deg = [], [], np.empty_like(gbar), []
        for k in range(g):
            q, lam = _eigen(rows.design(lf, slice(starts[k], starts[k + 1])))
            qs.append(q)
            lams.append(lam)
            adjusted[k] = gbar[k] + q @ ((_f(lam) - 1.0) * (q.T @ gbar[k]))
            deg.append(q[:, lam >= 1.0 - DEGENERATE].T)
        degenerate = np.vstack(deg) if deg else np.zeros((0, p))
        return ClusterInference(rows.n_params, rows.n_models, free, chol, adjusted @ chol.T,
                                clusters, tuple(qs), tuple(lams), degenerate, None)  # fmt: skip
    influence, degenerate = _series(rows, score, free, chol, lf, gbar, starts)
    return ClusterInference(rows.n_params, rows.n_models, free, chol, influence, clusters, None,
                            None, degenerate, rows)  # fmt: skip


def _series(rows, score, free, chol, lf, gbar, starts):
    """Adjusted influences f(M H_g) M g_g by the binomial series (large boards)."""
    g, q = score.shape
    bread = np.zeros((q, q))
    bread[np.ix_(free, free)] = chol @ chol.T
    term = score @ bread  # influences M g_g
    total = term.copy()
    scale = np.maximum(np.linalg.norm(term, axis=1), 1e-300)
    coef, active = 1.0, np.ones(g, dtype=bool)
    for k in range(1, SERIES_TERMS + 1):
        coef *= (2.0 * k - 1.0) / (2.0 * k)
        term = rows.times(term) @ bread
        step = coef * term
        total += step
        active = np.linalg.norm(step, axis=1) > 1e-10 * scale
        if not active.any():
            break
        term[~active] = 0.0  # converged clusters stop contributing
    out = total[:, free]
    deg = []
    for k in np.flatnonzero(active):  # leverage near 1: decompose these clusters exactly
        qk, lam = _eigen(rows.design(lf, slice(starts[k], starts[k + 1])))
        out[k] = (gbar[k] + qk @ ((_f(lam) - 1.0) * (qk.T @ gbar[k]))) @ chol.T
        deg.append(qk[:, lam >= 1.0 - DEGENERATE].T)
    degenerate = np.vstack(deg) if deg else np.zeros((0, free.size))
    return out, degenerate


def bt_inference(theta: NDArray[np.float64], data, *, ref: int, penalty: float = 0.0,
                 k) -> ClusterInference:  # fmt: skip
    """CR2 pieces of a clustered Bradley-Terry fit (``k``: the kernel module for the scores)."""
    m = data.n_models

    def row_scores(rows, wi, wj, tt):
        return k.bt_scores(theta, rows.ii, rows.jj, wi, wj, tt), None

    _check_clusters(data)
    score = data.cluster_score_matrix(m, row_scores, k)
    pen = penalty * (np.eye(m) - 1.0 / m) if penalty else None
    info = bt_rows(theta, data.collapsed()).information()  # summed over clusters: fewer rows
    return cluster_inference(bt_rows(theta, data), score, np.delete(np.arange(m), ref),
                             penalty=pen, clusters=data.clusters, info=info)  # fmt: skip


def crowd_inference(fit, data, *, k) -> ClusterInference:
    """CR2 pieces of a clustered Crowd-BT fit (:class:`ratings.crowd.CrowdFit`); judges whose
    eta is fixed or on a bound are treated as known."""
    m, nj = data.n_models, len(data.judges)

    def row_scores(rows, wi, wj, tt):
        _, gd, ge, *_ = k.crowd_row_terms(fit.theta, fit.eta, rows.ii, rows.jj, rows.judge,
                                          wi, wj, tt, False)  # fmt: skip
        return gd, ge

    _check_clusters(data)
    score = data.cluster_score_matrix(m + nj, row_scores, k)
    free_eta = fit.estimated & ~fit.boundary
    rows = crowd_rows(fit.theta, fit.eta, free_eta, data)
    info = crowd_rows(fit.theta, fit.eta, free_eta, data.collapsed()).information()
    try:
        return cluster_inference(rows, score, fit.free, clusters=data.clusters, info=info)
    except np.linalg.LinAlgError:
        from ratings.errors import NonIdentifiableError

        raise NonIdentifiableError(
            "No CR2 interval: the Crowd-BT Fisher information is singular at the estimate "
            "(judge quality and rating spread are confounded). Fix eta (`judge_quality=`, CLI "
            "`--judge-quality`), fit model='bt', or use ci='sandwich-z'."
        ) from None


def _check_clusters(data) -> None:
    if data.n_clusters < 2:
        raise ValueError(
            f"Clustered intervals need at least 2 clusters in `{data.cluster_name}`; got "
            f"{data.n_clusters}. Use per-verdict intervals (CLI `--no-cluster`)."
        )


def reference_contrasts(n_models: int, anchor: int | None) -> NDArray[np.float64]:
    """Each model's reported rating as a contrast: ``e_a - e_anchor``, or ``e_a - mean``."""
    c = np.eye(n_models)
    if anchor is None:
        return c - 1.0 / n_models
    c[:, anchor] -= 1.0
    return c
