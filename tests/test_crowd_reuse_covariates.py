"""Etas reused from a judge-quality file carry their covariance into every Crowd-BT fit, with
covariates (style features, judge effects) as without: the two-step term (Murphy & Topel 1985).

The references are our own neither: the term is H_xx^-1 H_xe V_e H_ex H_xx^-1, that is J V_e J^T
with J the estimate's derivative with respect to the reused etas. Here J comes from finite
differences of the maximum-likelihood estimate itself, refitted by :func:`scipy.optimize.minimize`
on a NumPy likelihood written for this test at shifted etas; and a seeded simulation in which
the reused etas are drawn around the truth with the file's covariance shows the intervals cover
with the term and not without it (``benchmarks_perf/coverage_reuse.py`` is the larger study).
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.special import expit

import ratings
from ratings.core.errors import JudgeWarning

STRENGTHS = np.array([-0.9, -0.3, 0.3, 0.9])
ETAS = {"j1": 0.8, "j2": 0.9}
#: The reused etas' covariance written to the judge-quality file (sd 0.04 and 0.03).
V = np.array([[0.0016, 0.0004], [0.0004, 0.0009]])


def draw(seed: int, n: int, *, beta: float = 0.8, gamma: dict[str, float] | None = None,
         strengths=STRENGTHS, etas=ETAS, n_tasks: int = 150) -> pd.DataFrame:  # fmt: skip
    """Verdicts of Crowd-BT with one style feature (``len``) and optional position biases per
    judge (``gamma``): d = s_A - s_B + beta (a - b) / (a + b) + gamma_k; judge k reports the
    true order with probability eta_k."""
    rng = np.random.default_rng(seed)
    m, names = len(strengths), list(etas)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    la, lb = rng.integers(50, 900, n), rng.integers(50, 900, n)
    k = rng.integers(0, len(names), n)
    judge = np.array(names)[k]
    shift = np.array([(gamma or {}).get(j, 0.0) for j in names])[k]
    d = strengths[a] - strengths[b] + beta * (la - lb) / (la + lb) + shift
    eta = np.array([etas[j] for j in names])[k]
    a_wins = (rng.random(n) < expit(d)) ^ (rng.random(n) > eta)
    return pd.DataFrame({"model_a": [f"m{i}" for i in a], "model_b": [f"m{i}" for i in b],
                         "winner": np.where(a_wins, "A", "B"), "judge": judge,
                         "task_id": rng.integers(0, n_tasks, n), "len_a": la, "len_b": lb})


def quality_file(path, eta: dict[str, float], cov: np.ndarray) -> str:
    """A judge-quality file (format ``ratings.judge_quality/2``) written by hand."""
    names = list(eta)
    doc = {"format": "ratings.judge_quality/2", "model": "crowd-bt",
           "judges": [{"judge": j, "eta": float(eta[j]), "se": float(np.sqrt(cov[i, i]))}
                      for i, j in enumerate(names)],
           "covariance": {"judges": names, "matrix": np.asarray(cov).tolist()}}
    path.write_text(json.dumps(doc))
    return str(path)


class Reference:
    """The Crowd-BT log-likelihood with covariate columns on raw verdict rows, in NumPy:
    P(A wins) = eta sigma(d) + (1 - eta) sigma(-d), d = s_A - s_B + x'beta (s_0 = 0)."""

    def __init__(self, frame: pd.DataFrame, columns: np.ndarray) -> None:
        models = sorted(set(frame["model_a"]) | set(frame["model_b"]))
        self.m = len(models)
        self.a = frame["model_a"].map(models.index).to_numpy()
        self.b = frame["model_b"].map(models.index).to_numpy()
        self.x = columns.reshape(len(frame), -1)
        self.y = (frame["winner"] == "A").to_numpy(float)
        self.judges = sorted(set(frame["judge"]))
        self.k = frame["judge"].map(self.judges.index).to_numpy()

    def _split(self, v, eta_fixed: dict[str, float]):
        m, p = self.m, self.x.shape[1]
        s = np.concatenate([[0.0], v[:m - 1]])
        beta = v[m - 1:m - 1 + p]
        free = [j for j in self.judges if j not in eta_fixed]
        eta = np.array([eta_fixed.get(j, 0.0) for j in self.judges])
        eta[[self.judges.index(j) for j in free]] = v[m - 1 + p:]
        return s, beta, eta, free

    def nll_grad(self, v, eta_fixed):
        s, beta, eta, free = self._split(v, eta_fixed)
        d = s[self.a] - s[self.b] + self.x @ beta
        sig, e = expit(d), eta[self.k]
        p = e * sig + (1 - e) * (1 - sig)
        nll = -np.sum(self.y * np.log(p) + (1 - self.y) * np.log1p(-p))
        dp = -(self.y / p - (1 - self.y) / (1 - p))  # d nll / d p
        gd = dp * (2 * e - 1) * sig * (1 - sig)
        ge = dp * (2 * sig - 1)
        gs = np.bincount(self.a, gd, self.m) - np.bincount(self.b, gd, self.m)
        geta = np.bincount(self.k, ge, len(self.judges))
        grad = np.concatenate([gs[1:], self.x.T @ gd,
                               geta[[self.judges.index(j) for j in free]]])
        return nll, grad

    def strengths(self, eta_fixed: dict[str, float], start=None) -> np.ndarray:
        """The maximum-likelihood strengths (s_0 = 0) with ``eta_fixed`` fixed, the other etas
        free."""
        n_free = len(self.judges) - len(eta_fixed)
        v0 = np.concatenate([np.zeros(self.m - 1 + self.x.shape[1]), np.full(n_free, 0.8)]) \
            if start is None else start
        bounds = [(None, None)] * (self.m - 1 + self.x.shape[1]) + [(0.5 + 1e-9, 1.0)] * n_free
        res = minimize(self.nll_grad, v0, args=(eta_fixed,), jac=True, method="L-BFGS-B",
                       bounds=bounds, options={"ftol": 1e-16, "gtol": 1e-11, "maxiter": 5000})
        v = res.x
        for _ in range(3):  # Newton polish with the score's finite-difference Jacobian
            v = v - np.linalg.solve(self._score_jacobian(v, eta_fixed),
                                    self.nll_grad(v, eta_fixed)[1])  # fmt: skip
        assert np.max(np.abs(self.nll_grad(v, eta_fixed)[1])) < 1e-9, res.message
        return v

    def _score_jacobian(self, v, eta_fixed, h: float = 1e-6) -> np.ndarray:
        cols = [(self.nll_grad(v + h * e, eta_fixed)[1] - self.nll_grad(v - h * e, eta_fixed)[1])
                / (2 * h) for e in np.eye(v.size)]  # fmt: skip
        return np.column_stack(cols)

    def two_step_term(self, eta_fixed: dict[str, float], reused: list[str], cov: np.ndarray,
                      h: float = 1e-4) -> np.ndarray:  # fmt: skip
        """J V J^T over the strengths, J the strengths' derivative with respect to the
        ``reused`` etas by central differences of refitted estimates."""
        at = self.strengths(eta_fixed)
        cols = []
        for j in reused:
            up = self.strengths(eta_fixed | {j: eta_fixed[j] + h}, at)
            down = self.strengths(eta_fixed | {j: eta_fixed[j] - h}, at)
            cols.append(np.concatenate([[0.0], ((up - down) / (2 * h))[:self.m - 1]]))
        jac = np.column_stack(cols)
        return jac @ cov @ jac.T


def _len_column(frame: pd.DataFrame) -> np.ndarray:
    la, lb = frame["len_a"].to_numpy(float), frame["len_b"].to_numpy(float)
    return (la - lb) / (la + lb)


def _position_columns(frame: pd.DataFrame) -> np.ndarray:
    return np.column_stack([(frame["judge"] == j).to_numpy(float) for j in sorted(ETAS)])


def _fit(frame, source, *, known: bool = False, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error", JudgeWarning)  # no warning that etas are taken as known
        return ratings.fit(frame, model=ratings.CrowdBT(judge_quality=source, eta_known=known,
                                                        **kw.pop("crowd", {})),
                           anchor="m0", **kw)  # fmt: skip


@pytest.fixture(scope="module")
def board():
    return draw(5, 3000, gamma={"j1": 0.3, "j2": -0.2})


@pytest.mark.parametrize("case", ["style", "style-cr1", "position", "plain"])
def test_reused_eta_term_equals_finite_differences_of_the_refitted_estimate(board, tmp_path,
                                                                             case):
    """Both etas reused: the covariance with the term less the one with ``eta_known`` equals
    J V J^T, J from refits of an independent likelihood at shifted etas; for style features
    (CR2 and CR1), judge effects (position per judge) and plain Crowd-BT alike."""
    eta = {"j1": 0.78, "j2": 0.91}
    source = quality_file(tmp_path / "judges.json", eta, V)
    kw, cols = {
        "style": ({"style": ["len"]}, _len_column(board)),
        "style-cr1": ({"style": ["len"], "ci": "sandwich-z"}, _len_column(board)),
        "position": ({"adjust": "position"}, _position_columns(board)),
        "plain": ({}, np.zeros((len(board), 0))),
    }[case]
    with_term = _fit(board, source, **dict(kw))
    known = _fit(board, source, known=True, **dict(kw))
    ref = Reference(board, cols)
    np.testing.assert_allclose(with_term.strength - with_term.strength[0],
                               np.concatenate([[0.0], ref.strengths(eta)[:3]]), atol=1e-6)
    expected = ref.two_step_term(eta, ["j1", "j2"], V)
    np.testing.assert_allclose(with_term.cov - known.cov, expected, rtol=2e-4, atol=1e-9)
    assert np.all(np.diag(expected)[1:] > 0.05 * np.diag(known.cov)[1:])  # not a rounding term
    assert with_term.crowd.eta_influence is not None
    np.testing.assert_allclose(with_term.crowd.eta_influence.T @ with_term.crowd.eta_influence,
                               expected, rtol=2e-4, atol=1e-9)  # fmt: skip
    used = with_term.judges.loc[["j1", "j2"]]
    assert (used["status"] == "reused").all()
    np.testing.assert_allclose(used["se"], np.sqrt(np.diag(V)))
    np.testing.assert_allclose(with_term.crowd.eta_cov.loc[["j1", "j2"], ["j1", "j2"]], V)


def test_reused_and_estimated_etas_with_style(board, tmp_path):
    """One eta reused, the other estimated (``fit_new_judges``, the maximum-likelihood
    estimate): the term moves the strengths through the estimated eta too, as refits with that
    eta free say."""
    source = quality_file(tmp_path / "judges.json", {"j1": 0.78}, V[:1, :1])
    kw = {"style": ["len"], "crowd": {"fit_new_judges": True, "prior": None}}
    with_term = _fit(board, source, **dict(kw, crowd=dict(kw["crowd"])))
    known = _fit(board, source, known=True, **dict(kw, crowd=dict(kw["crowd"])))
    ref = Reference(board, _len_column(board))
    np.testing.assert_allclose(with_term.judges.loc["j2", "eta"], ref.strengths({"j1": 0.78})[-1],
                               atol=1e-6)  # fmt: skip
    expected = ref.two_step_term({"j1": 0.78}, ["j1"], V[:1, :1])
    np.testing.assert_allclose(with_term.cov - known.cov, expected, rtol=2e-4, atol=1e-9)


def test_the_term_widens_the_df_as_a_known_variance(board, tmp_path):
    """CR2's degrees of freedom of a contrast grow with the share of its variance the term
    adds, a known variance (Welch-Satterthwaite: df (1 + v_term / v_CR2)^2), and its interval
    is wider than with ``eta_known``."""
    source = quality_file(tmp_path / "judges.json", {"j1": 0.78, "j2": 0.91}, V)
    with_term = _fit(board, source, style=["len"])
    known = _fit(board, source, known=True, style=["len"])
    assert with_term.inference is not None and known.inference is not None
    wide, narrow = with_term.diff("m3", "m0"), known.diff("m3", "m0")
    v_term = wide["se"] ** 2 - narrow["se"] ** 2
    np.testing.assert_allclose(wide["df"], narrow["df"] * (1 + v_term / narrow["se"] ** 2) ** 2,
                               rtol=1e-8)  # fmt: skip
    assert wide["upper"] - wide["lower"] > narrow["upper"] - narrow["lower"]


def _covered(r, truth: float) -> bool:
    c = r.diff("m3", "m0")
    return bool(c["lower"] <= truth <= c["upper"])


@pytest.mark.slow
def test_coverage_with_the_term_and_without(tmp_path):
    """Seeded simulation: each replicate draws a board (style feature, two judges) and reused
    etas around the truth with the file's covariance (what the two-step term assumes of the
    first fit). The Elo gap m3 - m0's 95% interval covers near 95% with the term, and clearly
    less with the etas taken as known (Monte Carlo SE in the message)."""
    n_rep = 150
    hits = np.zeros((2, n_rep), dtype=bool)
    rng = np.random.default_rng(20261206)
    root = np.linalg.cholesky(V)
    for r in range(n_rep):
        frame = draw(1000 + r, 2000, n_tasks=200)
        e = np.clip(np.array(list(ETAS.values())) + root @ rng.standard_normal(2), 0.5, 1.0)
        source = quality_file(tmp_path / f"q{r}.json", dict(zip(ETAS, e, strict=True)), V)
        for i, known in enumerate((False, True)):
            fit = _fit(frame, source, known=known, style=["len"])
            truth = (STRENGTHS[3] - STRENGTHS[0]) * fit.scale
            hits[i, r] = _covered(fit, truth)
    cover = hits.mean(axis=1)
    se = np.sqrt(cover * (1 - cover) / n_rep)
    msg = f"coverage with the term {cover[0]:.3f} (SE {se[0]:.3f}), known {cover[1]:.3f}"
    assert abs(cover[0] - 0.95) < 3 * max(se[0], 0.022), msg
    assert cover[1] < cover[0] - 0.08, msg
