"""Tie models across scopes: per-scope Davidson fits and the combined headline, against a
Davidson likelihood written out here and maximised by scipy, whose per-task influences (the
strength rows of the full inverse information times each task's score, the tie parameter a
nuisance parameter of its scope) are stacked by shared task in the test."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

import ratings
from ratings.cli.app import main
from ratings.core.schema import DETERMINISTIC_JUDGE
from ratings.datasets.simulate import random_matches, simulate_verdicts
from ratings.scopes.combine import combine, fit_scopes

MODELS = [f"m{k}" for k in range(6)]
SCOPES = ("analytical", "presentation")
DAVIDSON = ratings.BT(ties="davidson")


def two_tied_scopes(seed: int = 43, n: int = 500) -> pd.DataFrame:
    """Two judged scopes of ``n`` verdicts on the same 30 tasks (shared task effects), about
    20% ties."""
    rng = np.random.default_rng(seed)
    frames = []
    for scope in SCOPES:
        strength = pd.Series(np.linspace(-0.8, 0.8, 6) + rng.normal(0, 0.1, 6), index=MODELS)
        matches = random_matches(MODELS, n, n_tasks=30, seed=int(rng.integers(2**31)))
        v = simulate_verdicts(matches, strength, tie_rate=0.2, task_corr=0.5,
                              seed=int(rng.integers(2**31)))  # fmt: skip
        frames.append(v.assign(scope=scope))
    return pd.concat(frames, ignore_index=True)


@pytest.fixture(scope="module")
def log() -> pd.DataFrame:
    return two_tied_scopes()


def _davidson(v: pd.DataFrame, anchor: str = "m0") -> tuple:
    """Strengths (anchor 0), the per-task influences on the strengths and the task labels of a
    Davidson MLE written out per verdict: P(i>j) = pi_i / D, P(tie) = nu sqrt(pi_i pi_j) / D."""
    free = [m for m in MODELS if m != anchor]
    i = v["model_a"].map({m: k for k, m in enumerate(MODELS)}).to_numpy()
    j = v["model_b"].map({m: k for k, m in enumerate(MODELS)}).to_numpy()
    ya, yb, yt = [(v["winner"] == w).to_numpy(float) for w in ("A", "B", "tie")]
    n_free = len(free)
    embed = np.zeros((len(MODELS), n_free))
    embed[[MODELS.index(m) for m in free], np.arange(n_free)] = 1.0

    def parts(x):
        s, phi = embed @ x[:n_free], x[n_free]
        a, b, t = np.exp(s[i]), np.exp(s[j]), np.exp(phi + (s[i] + s[j]) / 2)
        d = a + b + t
        pa, pb, pt = a / d, b / d, t / d
        nll = -(ya * np.log(pa) + yb * np.log(pb) + yt * np.log(pt)).sum()
        gi, gj, gp = ya + yt / 2 - pa - pt / 2, yb + yt / 2 - pb - pt / 2, yt - pt
        score = np.zeros((len(v), len(MODELS) + 1))  # per verdict: d loglik / d (s, phi)
        np.add.at(score, (np.arange(len(v)), i), gi)
        np.add.at(score, (np.arange(len(v)), j), gj)
        score[:, -1] = gp
        return nll, np.hstack([score[:, :-1] @ embed, score[:, -1:]])

    res = minimize(lambda x: (parts(x)[0], -parts(x)[1].sum(0)), np.zeros(n_free + 1),
                   jac=True, method="BFGS", options={"gtol": 1e-11})  # fmt: skip
    h, step = np.zeros((n_free + 1, n_free + 1)), 1e-5
    for k in range(n_free + 1):  # the information: central differences of the score
        e = np.zeros(n_free + 1)
        e[k] = step
        h[k] = -(parts(res.x + e)[1].sum(0) - parts(res.x - e)[1].sum(0)) / (2 * step)
    tasks = pd.Index(sorted(v["task_id"].unique()))
    at = tasks.get_indexer(v["task_id"])
    score = np.zeros((tasks.size, n_free + 1))
    np.add.at(score, at, parts(res.x)[1])
    influence = score @ np.linalg.inv((h + h.T) / 2)  # rows of H^-1 g_c, tie parameter kept
    return embed @ res.x[:n_free], influence[:, :n_free] @ embed.T, tasks


def stacked(log: pd.DataFrame, weights: dict, reference) -> tuple[np.ndarray, np.ndarray]:
    """The headline's strengths and joint CR1 covariance sum_c D_c D_c^T from each scope's
    ``reference(verdicts) -> (strengths, per-task influences, tasks, ...)``:
    D_c = sum_s w_s sqrt(G_s / (G_s - 1)) H_s^-1 g_{s,c}, weights normalised."""
    total = sum(weights.values())
    tasks = pd.Index(sorted(log["task_id"].unique()))
    d = np.zeros((tasks.size, len(MODELS)))
    theta = np.zeros(len(MODELS))
    for scope, w in weights.items():
        t, infl, labels = reference(log[log["scope"] == scope])[:3]
        g = labels.size
        d[tasks.get_indexer(labels)] += w / total * np.sqrt(g / (g - 1)) * infl
        theta += w / total * t
    return theta, d.T @ d


def _fits(log, ci):
    return fit_scopes(log, model=DAVIDSON, anchor="m0=1000", cluster="task_id", ci=ci)


def test_each_scope_is_its_own_tie_fit_and_the_scipy_mle(log):
    fits = _fits(log, "sandwich")
    for scope in SCOPES:
        alone = ratings.fit(log, scope=scope, model=DAVIDSON, anchor="m0=1000",
                            cluster="task_id")  # fmt: skip
        r = fits[scope]
        assert r.ties is not None and r.ties["model"].iloc[0] == "davidson"
        np.testing.assert_array_equal(r.elo.to_numpy(), alone.elo.to_numpy())
        np.testing.assert_array_equal(r.cov, alone.cov)
        theta, _, _ = _davidson(log[log["scope"] == scope])
        np.testing.assert_allclose(r.strength[r.models.get_indexer(MODELS)], theta, atol=1e-6)


def test_joint_headline_is_the_stacked_sandwich_of_the_scipy_influences(log):
    """CR1 fits: the headline covariance sum_c D_c D_c^T, D_c = sum_s w_s sqrt(G_s/(G_s-1))
    H_s^-1 g_{s,c} restricted to the strengths, from the scipy fits' own influences."""
    fits = _fits(log, "sandwich-z")
    weights = {"analytical": 2.0, "presentation": 1.0}
    c = combine(fits, weights=weights, method="joint")
    theta, cov = stacked(log, weights, _davidson)
    at = c.models.get_indexer(MODELS)
    np.testing.assert_allclose(c.strength[at], theta, atol=1e-6)
    np.testing.assert_allclose(c.cov[np.ix_(at, at)], cov, rtol=1e-5, atol=1e-10)
    independent = sum((w / 3) ** 2 * np.diag(fits[s].cov) for s, w in weights.items())
    assert not np.allclose(np.diag(c.cov), independent)  # the shared tasks count


@pytest.mark.parametrize("kind", ["davidson", "rao-kupper"])
def test_one_scope_headline_is_that_scope_with_cr2_and_df(log, kind):
    r = fit_scopes(log, scopes=["analytical"], model=ratings.BT(ties=kind), anchor="m0=1000",
                   cluster="task_id")["analytical"]  # fmt: skip
    alone = ratings.fit(log, scope="analytical", model=ratings.BT(ties=kind), anchor="m0=1000",
                        cluster="task_id")  # fmt: skip
    assert r.ties["model"].iloc[0] == kind
    np.testing.assert_array_equal(r.cov, alone.cov)
    c = combine({"analytical": r})
    np.testing.assert_allclose(c.cov, r.cov, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(c.to_frame()["df"], r.to_frame()["df"], rtol=1e-8)


def test_deterministic_scopes_keep_half_wins(log):
    rubric = log[log["scope"] == "analytical"].assign(scope="rubric", judge=DETERMINISTIC_JUDGE)
    both = pd.concat([log, rubric], ignore_index=True)
    fits = fit_scopes(both, scopes=["analytical", "rubric"], model=DAVIDSON, anchor="m0=1000",
                      cluster="task_id")  # fmt: skip
    assert fits["analytical"].ties is not None
    assert fits["rubric"].ties is None
    half = ratings.fit(both, scope="rubric", anchor="m0=1000", cluster="task_id")
    np.testing.assert_array_equal(fits["rubric"].elo.to_numpy(), half.elo.to_numpy())


def test_cli_combine_with_ties(log, tmp_path):
    path, out = tmp_path / "log.csv", tmp_path / "board.csv"
    log.to_csv(path, index=False)
    assert main(["combine", str(path), "--ties", "davidson", "--anchor", "m0=1000",
                 "--out", str(out)]) == 0  # fmt: skip
    table = pd.read_csv(out)
    fits = _fits(log, "sandwich")
    head = combine(fits)
    for scope in SCOPES:
        rows = table[table["scope"] == scope].set_index("model")
        np.testing.assert_allclose(rows["elo"], fits[scope].elo[rows.index], rtol=1e-10)
    rows = table[table["scope"] == "combined"].set_index("model")
    np.testing.assert_allclose(rows["se"], head.se[rows.index], rtol=1e-10)


@pytest.mark.parametrize("command", ["fit", "combine"])
def test_cli_ties_refuse_crowd_bt(log, tmp_path, command, capsys):
    path = tmp_path / "log.csv"
    log.to_csv(path, index=False)
    assert main([command, str(path), "--ties", "davidson", "--model", "crowd-bt"]) == 2
    assert "`--ties` is only available with `--model bt`" in capsys.readouterr().err


def test_cli_combine_with_a_tie_model_and_judge_effects(log, tmp_path):
    """A tie model with judge effects fits each judged scope through the covariate design."""
    path, out = tmp_path / "log.csv", tmp_path / "board.csv"
    log.to_csv(path, index=False)
    assert main(["combine", str(path), "--ties", "davidson", "--adjust", "position",
                 "--out", str(out)]) == 0  # fmt: skip
    table = pd.read_csv(out)
    frame = log[log["scope"] == "analytical"]
    one = ratings.fit(frame, model=DAVIDSON, adjust="position")
    rows = table[table["scope"] == "analytical"].set_index("model")
    np.testing.assert_allclose(rows["elo"] - rows["elo"].mean(),
                               (one.elo - one.elo.mean())[rows.index], atol=1e-6)
