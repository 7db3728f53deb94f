"""Tie models with style features and judge effects: one design, the tie parameter one more
parameter of it.

References written here, independent of the package: a scipy maximum-likelihood fit of the
Davidson and Rao-Kupper likelihoods with a linear covariate term in the linear predictor, and
from that fit, the HC0 sandwich per verdict, the cluster sandwich (CR1) and the CR2 sandwich
(Bell & McCaffrey 2002) of each cluster's working rows, built by brute force.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.special import expit

import ratings
from ratings.core.errors import DataWarning
from ratings.core.schema import ELO_SCALE

M, N, TASKS = 5, 700, 70


def _board(kind: str, seed: int = 3, judges: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, M, N)
    b = (a + rng.integers(1, M, N)) % M
    s = np.linspace(-0.8, 0.8, M)
    la, lb = rng.poisson(40, N), rng.poisson(40, N)
    d = s[a] - s[b] + 1.5 * (la - lb) / (la + lb)
    if kind == "davidson":
        z = np.exp(d / 2) + np.exp(-d / 2) + 0.7
        pa, pb = np.exp(d / 2) / z, np.exp(-d / 2) / z
    else:
        pa, pb = expit(d - np.log(1.8)), expit(-d - np.log(1.8))
    u = rng.random(N)
    winner = np.where(u < pa, "A", np.where(u < pa + pb, "B", "tie"))
    return pd.DataFrame({"model_a": [f"m{i}" for i in a], "model_b": [f"m{i}" for i in b],
                         "winner": winner, "task_id": rng.integers(0, TASKS, N),
                         "judge": [f"j{k}" for k in rng.integers(0, judges, N)],
                         "len_a": la, "len_b": lb})  # fmt: skip


def _design(log: pd.DataFrame, columns) -> tuple:
    """(U, y): each verdict's design row over (s_1..s_{M-1}, covariates) and its outcome."""
    a = log["model_a"].str[1:].astype(int).to_numpy()
    b = log["model_b"].str[1:].astype(int).to_numpy()
    u = np.zeros((len(log), M))
    u[np.arange(len(log)), a] += 1.0
    u[np.arange(len(log)), b] -= 1.0
    y = log["winner"].map({"A": 0, "B": 1, "tie": 2}).to_numpy()
    return np.column_stack([u[:, 1:], *columns]), y


def _style_column(log: pd.DataFrame) -> np.ndarray:
    la, lb = log["len_a"].to_numpy(float), log["len_b"].to_numpy(float)
    x = (la - lb) / (la + lb)
    return x / np.sqrt(np.mean(x * x))  # the transform's unit root-mean-square


def _terms(kind: str, d: np.ndarray, phi: float) -> tuple:
    """(p (n x 3), g (n x 3 x 2)): each outcome's probability and score on (d, phi)."""
    if kind == "davidson":
        z = np.exp(d / 2) + np.exp(-d / 2) + np.exp(phi)
        p = np.column_stack([np.exp(d / 2) / z, np.exp(-d / 2) / z, np.exp(phi) / z])
        hd = 0.5 * (p[:, 0] - p[:, 1])  # d log Z / d d
        g = np.stack([np.column_stack([0.5 - hd, -p[:, 2]]),
                      np.column_stack([-0.5 - hd, -p[:, 2]]),
                      np.column_stack([-hd, 1.0 - p[:, 2]])], axis=1)  # fmt: skip
        return p, g
    eta, deta = np.log1p(np.exp(phi)), expit(phi)  # log theta, and d log theta / d phi
    pa, pb = expit(d - eta), expit(-d - eta)
    pt = 1.0 - pa - pb
    va, vb = pa * (1 - pa), pb * (1 - pb)
    g = np.stack([np.column_stack([1 - pa, -(1 - pa) * deta]),
                  np.column_stack([-(1 - pb), -(1 - pb) * deta]),
                  np.column_stack([(vb - va) / pt, (va + vb) / pt * deta])], axis=1)  # fmt: skip
    return np.column_stack([pa, pb, pt]), g


def _scipy_fit(kind: str, u: np.ndarray, y: np.ndarray) -> tuple:
    """The MLE over (strengths but m0's, covariates, phi) and per verdict: scores (n x P) and
    expected information (n x P x P)."""
    q = u.shape[1]

    def parts(v):
        p, g = _terms(kind, u @ v[:q], v[q])
        return p, g

    def nll(v):
        p, g = parts(v)
        sc = g[np.arange(y.size), y]  # scores of the observed outcomes on (d, phi)
        grad = np.concatenate([u.T @ sc[:, 0], [sc[:, 1].sum()]])
        return -np.log(p[np.arange(y.size), y]).sum(), -grad

    v0 = np.zeros(q + 1)
    res = minimize(nll, v0, jac=True, method="BFGS", options={"gtol": 1e-11, "maxiter": 5000})
    for _ in range(3):  # Newton steps on the expected information polish the optimum
        p, g = parts(res.x)
        info = _expected(u, p, g)
        res.x = res.x - np.linalg.solve(info.sum(0), nll(res.x)[1])
    p, g = parts(res.x)
    sc = g[np.arange(y.size), y]
    scores = np.column_stack([u * sc[:, :1], sc[:, 1]])
    return res.x, scores, _expected(u, p, g)


def _expected(u, p, g) -> np.ndarray:
    """Per verdict sum_o p_o s_o s_o^T over (strengths, covariates, phi)."""
    full = np.concatenate([u[:, None, :] * g[:, :, :1], g[:, :, 1:]], axis=2)  # n x 3 x P
    return np.einsum("no,nop,noq->npq", p, full, full)


def _cr2(info, scores, clusters) -> np.ndarray:
    """Brute-force CR2: each verdict's working rows (a factor L of its information, residuals
    L^-1 score), A_g = (I - X_g M X_g^T)^(-1/2) per cluster."""
    bread = np.linalg.inv(info.sum(0))
    meat = np.zeros_like(bread)
    for c in np.unique(clusters):
        at = np.flatnonzero(clusters == c)
        xs, es = [], []
        for i in at:
            w, v = np.linalg.eigh(info[i])
            keep = w > 1e-12 * w.max()
            factor = v[:, keep] * np.sqrt(w[keep])  # info = factor factor^T
            xs.append(factor.T)
            es.append(np.linalg.lstsq(factor, scores[i], rcond=None)[0])
        x, e = np.vstack(xs), np.concatenate(es)
        w, v = np.linalg.eigh(np.eye(x.shape[0]) - x @ bread @ x.T)
        adj = x.T @ (v @ ((v.T @ e) / np.sqrt(w)))
        meat += np.outer(adj, adj)
    return bread @ meat @ bread


def _sandwiches(info, scores, clusters) -> dict:
    bread = np.linalg.inv(info.sum(0))
    g = np.unique(clusters).size
    per = np.vstack([scores[clusters == c].sum(0) for c in np.unique(clusters)])
    return {"hc0": bread @ scores.T @ scores @ bread,
            "sandwich-z": g / (g - 1) * bread @ per.T @ per @ bread,
            "sandwich": _cr2(info, scores, clusters)}


@pytest.mark.parametrize("kind", ["davidson", "rao-kupper"])
def test_tie_model_with_style_equals_scipy_mle_and_sandwiches(kind):
    log = _board(kind)
    u, y = _design(log, [_style_column(log)])
    x, scores, info = _scipy_fit(kind, u, y)
    model = ratings.BT(ties=kind)
    fits = {ci: ratings.fit(log, model=model, style=["len"], anchor="m0", ci=ci,
                            cluster=None if ci == "hc0" else "task_id")
            for ci in ("hc0", "sandwich-z", "sandwich")}  # fmt: skip
    r = fits["sandwich"]
    assert r.kind == kind
    s = (r.elo[[f"m{i}" for i in range(1, M)]].to_numpy() - 1000.0) / ELO_SCALE
    np.testing.assert_allclose(s, x[: M - 1], atol=1e-6)
    np.testing.assert_allclose(r.style["coef"].to_numpy(), x[M - 1:M], atol=1e-6)
    np.testing.assert_allclose(r.ties["phi"].iloc[0], x[M], atol=1e-6)
    clusters = log["task_id"].to_numpy()
    for ci, ref in _sandwiches(info, scores, clusters).items():
        fit = fits[ci]
        se = np.sqrt(np.diag(ref))
        cov = fit.cov_params(scale="log").to_numpy()[1:, 1:]
        np.testing.assert_allclose(cov, ref[: M - 1, : M - 1], rtol=1e-5, atol=1e-10)
        np.testing.assert_allclose(fit.style["se"].to_numpy(), se[M - 1:M], rtol=1e-5)
        np.testing.assert_allclose(fit.ties["se_phi"].iloc[0], se[M], rtol=1e-5)


@pytest.mark.parametrize("kind", ["davidson", "rao-kupper"])
def test_tie_model_with_position_effects_equals_scipy_mle(kind):
    """Judge effects: each judge's position bias a column that is 1 on its verdicts."""
    log = _board(kind, seed=5, judges=2)
    judge = log["judge"].to_numpy()
    u, y = _design(log, [(judge == "j0").astype(float), (judge == "j1").astype(float)])
    x, scores, info = _scipy_fit(kind, u, y)
    r = ratings.fit(log, model=ratings.BT(ties=kind), adjust="position", anchor="m0",
                    ci="sandwich-z")  # fmt: skip
    assert r.kind == kind
    s = (r.elo[[f"m{i}" for i in range(1, M)]].to_numpy() - 1000.0) / ELO_SCALE
    np.testing.assert_allclose(s, x[: M - 1], atol=1e-6)
    table = r.judge_effects.table.set_index("judge")
    np.testing.assert_allclose(table.loc[["j0", "j1"], "position_bias"], x[M - 1:M + 1],
                               atol=1e-6)  # fmt: skip
    np.testing.assert_allclose(r.ties["phi"].iloc[0], x[M + 1], atol=1e-6)
    ref = _sandwiches(info, scores, log["task_id"].to_numpy())["sandwich-z"]
    cov = r.cov_params(scale="log").to_numpy()[1:, 1:]
    np.testing.assert_allclose(cov, ref[: M - 1, : M - 1], rtol=1e-5, atol=1e-10)
    se = np.sqrt(np.diag(ref))
    np.testing.assert_allclose(table.loc[["j0", "j1"], "position_se"], se[M - 1:M + 1],
                               rtol=1e-5)  # fmt: skip
    np.testing.assert_allclose(r.ties["se_phi"].iloc[0], se[M + 1], rtol=1e-5)


def test_style_and_effects_together_with_a_tie_model():
    """Style features and position effects in one design with the tie parameter."""
    log = _board("davidson", seed=7, judges=2)
    judge = log["judge"].to_numpy()
    u, y = _design(log, [_style_column(log), (judge == "j0").astype(float),
                         (judge == "j1").astype(float)])  # fmt: skip
    x, _, _ = _scipy_fit("davidson", u, y)
    r = ratings.fit(log, model=ratings.BT(ties="davidson"), style=["len"], adjust="position",
                    anchor="m0")  # fmt: skip
    s = (r.elo[[f"m{i}" for i in range(1, M)]].to_numpy() - 1000.0) / ELO_SCALE
    np.testing.assert_allclose(s, x[: M - 1], atol=1e-6)
    np.testing.assert_allclose(r.style["coef"].iloc[0], x[M - 1], atol=1e-6)
    np.testing.assert_allclose(r.ties["phi"].iloc[0], x[M + 2], atol=1e-6)


def test_tie_model_with_style_names_both_and_fits_bt_without_ties():
    log = _board("davidson")
    r = ratings.fit(log, model=ratings.BT(ties="davidson"), style=["len"])
    head = r.summary().splitlines()
    assert head[0].startswith("Ratings (Bradley-Terry, Davidson ties, style-controlled: len)")
    assert any(line.startswith("Ties: davidson nu = ") for line in head)
    decisive = log[log["winner"] != "tie"]
    plain = ratings.fit(decisive, style=["len"])
    with pytest.warns(DataWarning, match="no ties"):
        tied = ratings.fit(decisive, model=ratings.BT(ties="davidson"), style=["len"])
    np.testing.assert_allclose(tied.elo, plain.elo, atol=1e-9)
    assert tied.ties["model"].iloc[0] == "bt (no ties)"


def _soft_board(seed: int = 11) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, M, N)
    b = (a + rng.integers(1, M, N)) % M
    s = np.linspace(-0.8, 0.8, M)
    la, lb = rng.poisson(40, N), rng.poisson(40, N)
    p = expit(s[a] - s[b] + 1.5 * (la - lb) / (la + lb))
    y = np.clip(np.round(p + rng.normal(0, 0.25, N), 2), 0.0, 1.0)  # graded scores
    return pd.DataFrame({"model_a": [f"m{i}" for i in a], "model_b": [f"m{i}" for i in b],
                         "winner": y, "task_id": rng.integers(0, TASKS, N),
                         "len_a": la, "len_b": lb})  # fmt: skip


def test_soft_outcomes_with_style_equal_a_scipy_quasi_likelihood_fit():
    """Soft outcomes with a style feature: the Bernoulli quasi-likelihood y log p + (1 - y)
    log(1 - p), p = sigma(s_A - s_B + beta x), maximised by scipy; its HC0 and CR1 sandwiches
    (bread sum p(1 - p) u u^T, meat from the scores (y - p) u)."""
    log = _soft_board()
    u, _ = _design(log.assign(winner="A"), [_style_column(log)])
    y = log["winner"].to_numpy(float)

    def nll(v):
        d = u @ v
        return -(y * -np.logaddexp(0, -d) + (1 - y) * -np.logaddexp(0, d)).sum(), \
            -u.T @ (y - expit(d))

    x = minimize(nll, np.zeros(u.shape[1]), jac=True, method="BFGS",
                 options={"gtol": 1e-12, "maxiter": 5000}).x
    p = expit(u @ x)
    bread = np.linalg.inv((u * (p * (1 - p))[:, None]).T @ u)
    scores = u * (y - p)[:, None]
    clusters = log["task_id"].to_numpy()
    per = np.vstack([scores[clusters == c].sum(0) for c in np.unique(clusters)])
    g = per.shape[0]
    refs = {"hc0": bread @ scores.T @ scores @ bread,
            "sandwich-z": g / (g - 1) * bread @ per.T @ per @ bread}
    for ci, ref in refs.items():
        r = ratings.fit(log, model=ratings.BT(soft=True), style=["len"], anchor="m0", ci=ci,
                        cluster=None if ci == "hc0" else "task_id")  # fmt: skip
        assert r.kind == "bt-soft"
        s = (r.elo[[f"m{i}" for i in range(1, M)]].to_numpy() - 1000.0) / ELO_SCALE
        np.testing.assert_allclose(s, x[: M - 1], atol=1e-6)
        np.testing.assert_allclose(r.style["coef"].iloc[0], x[M - 1], atol=1e-6)
        cov = r.cov_params(scale="log").to_numpy()[1:, 1:]
        np.testing.assert_allclose(cov, ref[: M - 1, : M - 1], rtol=1e-5, atol=1e-10)
        np.testing.assert_allclose(r.style["se"].iloc[0], np.sqrt(ref[M - 1, M - 1]), rtol=1e-5)
