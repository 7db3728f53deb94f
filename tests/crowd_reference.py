"""An independent Crowd-BT simulator and reference implementation for the Crowd-BT tests.

Nothing here uses :mod:`ratings`: verdicts are drawn by :func:`draw_board`, and
:class:`Reference` computes the negative log-likelihood, per-verdict scores and Hessian on raw
verdict rows with NumPy and finds the optimum with :func:`scipy.optimize.minimize`.
Model: P(i beats j | judge k, decisive) = eta_k sigma(s_i - s_j) + (1 - eta_k) sigma(s_j - s_i),
eta in [1/2, 1]; ties are not part of the likelihood (it conditions on decisive verdicts). The
reference computes the plain maximum-likelihood estimate (``prior=None``);
``test_crowd_prior.py`` extends it with the default prior.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from helpers import Y_OF_WINNER
from scipy.optimize import minimize
from scipy.special import expit

__all__ = ["Y_OF_WINNER", "Reference", "draw_board"]


def draw_board(
    seed: int,
    strengths,
    etas: dict[str, float],
    n: int,
    *,
    n_tasks: int = 200,
    tie_rate: float = 0.0,
    task_sd: float = 0.0,
) -> pd.DataFrame:
    """Verdicts (strings) from Crowd-BT: judge k reports the true order with probability eta_k.

    A verdict is a tie with probability ``tie_rate`` whatever the pair; otherwise A wins with
    probability eta sigma(d) + (1 - eta) sigma(-d). ``task_sd`` adds a per-(task, model) effect
    to d (dependence within tasks).
    """
    rng = np.random.default_rng(seed)
    s = np.asarray(strengths, dtype=np.float64)
    m = s.size
    names = np.array([f"m{k:02d}" for k in range(m)], dtype=object)
    judges = np.array(list(etas), dtype=object)
    eta = np.array(list(etas.values()))
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    k = rng.integers(0, judges.size, n)
    t = rng.integers(0, n_tasks, n)
    u = task_sd * rng.standard_normal((n_tasks, m))
    d = s[a] - s[b] + u[t, a] - u[t, b]
    p = eta[k] * expit(d) + (1.0 - eta[k]) * expit(-d)
    v = rng.random(n)
    tie = rng.random(n) < tie_rate
    winner = np.where(tie, "tie", np.where(v < p, "A", "B"))
    return pd.DataFrame(
        {
            "model_a": names[a],
            "model_b": names[b],
            "winner": winner.astype(object),
            "judge": judges[k],
            "task_id": np.char.add("t", t.astype(str)),
        }
    )


class Reference:
    """Crowd-BT on raw verdict rows. Parameters z = (s without the anchor, eta of free judges).

    The anchor is the first model in sorted order (strength 0). ``fixed`` maps judges to known
    etas, which are then not parameters. Ties contribute nothing (zero log-likelihood and
    zero scores); they still count as rows of their task.
    """

    def __init__(self, frame: pd.DataFrame, fixed: dict[str, float] | None = None) -> None:
        self.models = sorted(set(frame["model_a"]) | set(frame["model_b"]))
        self.judges = sorted(set(frame["judge"]))
        self.fixed = dict(fixed or {})
        self.free_judges = [j for j in self.judges if j not in self.fixed]
        mcode = {name: c for c, name in enumerate(self.models)}
        jcode = {name: c for c, name in enumerate(self.judges)}
        self.a = frame["model_a"].map(mcode).to_numpy()
        self.b = frame["model_b"].map(mcode).to_numpy()
        self.k = frame["judge"].map(jcode).to_numpy()
        self.y = frame["winner"].map(Y_OF_WINNER).to_numpy(dtype=np.float64)
        self.decisive = (self.y != 0.5).astype(np.float64)
        self.task = pd.factorize(frame["task_id"])[0] if "task_id" in frame else None
        self.m, self.n = len(self.models), len(frame)
        self.n_free_eta = len(self.free_judges)
        self.size = self.m - 1 + self.n_free_eta

    def unpack(self, z):
        theta = np.concatenate([[0.0], z[: self.m - 1]])
        eta = np.array([self.fixed.get(j, np.nan) for j in self.judges])
        eta[[self.judges.index(j) for j in self.free_judges]] = z[self.m - 1 :]
        return theta, eta

    def _parts(self, z):
        theta, eta = self.unpack(z)
        d = theta[self.a] - theta[self.b]
        e = eta[self.k]
        sg, sgc = expit(d), expit(-d)
        return d, e, sg, sgc, e * sg + (1.0 - e) * sgc, e * sgc + (1.0 - e) * sg

    def nll(self, z) -> float:
        _, _, _, _, p, pc = self._parts(z)
        return -float(np.sum(self.decisive * (self.y * np.log(p) + (1.0 - self.y) * np.log(pc))))

    def scores(self, z):
        """Per-verdict derivatives of y log p + (1 - y) log(1 - p) w.r.t. z, shape (N, size)."""
        _, e, sg, sgc, p, pc = self._parts(z)
        dl = self.decisive * (self.y / p - (1.0 - self.y) / pc)
        gd = dl * (2.0 * e - 1.0) * sg * sgc  # dp/dd = (2 eta - 1) sigma(d) sigma(-d)
        ge = dl * (sg - sgc)  # dp/deta = sigma(d) - sigma(-d)
        rows = np.arange(self.n)
        full = np.zeros((self.n, self.m + len(self.judges)))
        np.add.at(full, (rows, self.a), gd)
        np.add.at(full, (rows, self.b), -gd)
        full[rows, self.m + self.k] = ge
        keep = [self.m + self.judges.index(j) for j in self.free_judges]
        return full[:, list(range(1, self.m)) + keep]

    def grad(self, z):
        return -self.scores(z).sum(axis=0)

    def hessian(self, z, h: float = 1e-5):
        """Central differences of the analytic gradient, symmetrised."""
        cols = [(self.grad(z + h * e) - self.grad(z - h * e)) / (2 * h) for e in np.eye(z.size)]
        hess = np.column_stack(cols)
        return (hess + hess.T) / 2

    def fit(self, z0=None, *, polish: bool = True):
        """L-BFGS-B on the mean negative log-likelihood with eta in [1/2, 1], then Newton steps
        on the numerical Hessian over the coordinates that are not at a bound."""
        if z0 is None:
            z0 = np.concatenate([np.zeros(self.m - 1), np.full(self.n_free_eta, 0.8)])
        bounds = [(None, None)] * (self.m - 1) + [(0.5, 1.0)] * self.n_free_eta
        res = minimize(
            lambda z: self.nll(z) / self.n,
            z0,
            jac=lambda z: self.grad(z) / self.n,
            method="L-BFGS-B",
            bounds=bounds,
            options={"ftol": 1e-16, "gtol": 1e-12, "maxiter": 20000, "maxcor": 30},
        )
        z = res.x
        if polish:
            eta = z[self.m - 1 :]
            move = np.concatenate([np.ones(self.m - 1, bool), (eta > 0.5) & (eta < 1.0)])
            for _ in range(3):
                h = self.hessian(z)[np.ix_(move, move)]
                z[move] -= np.linalg.solve(h, self.grad(z)[move])
            assert np.all((z[self.m - 1 :] >= 0.5) & (z[self.m - 1 :] <= 1.0))
        return z

    def covariances(self, z) -> dict[str, np.ndarray]:
        """Model-based, HC0 and task-clustered (G/(G-1)) covariances over z."""
        bread = np.linalg.inv(self.hessian(z))
        s = self.scores(z)
        out = {"model": bread, "hc0": bread @ (s.T @ s) @ bread}
        if self.task is not None:
            g = np.zeros((self.task.max() + 1, self.size))
            np.add.at(g, self.task, s)
            n_g = g.shape[0]
            out["cluster"] = bread @ (g.T @ g) @ bread * (n_g / (n_g - 1))
        return out
