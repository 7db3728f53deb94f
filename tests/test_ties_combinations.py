"""The tie models and soft outcomes with the other parts of a fit: anchoring, ``--by scope``,
``combine`` and the penalties, against references we did not write: a tie model's likelihood
written out here and maximised by scipy (its information by differences), statsmodels' binomial
GLM with a fractional response for soft outcomes, and their per-task influences stacked in the
test."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from helpers import design
from test_ties import draw, football, log_probs, scipy_mle
from test_ties_combine import _davidson, stacked, two_tied_scopes

import ratings
from ratings.cli.app import main
from ratings.core.errors import NonIdentifiableError, PenaltyOnlyWarning
from ratings.scopes.combine import combine, fit_scopes

MODELS = [f"m{k}" for k in range(6)]
SCOPES = ("analytical", "presentation")


# ----------------------------------------------------------------------------------------------
# Anchoring
# ----------------------------------------------------------------------------------------------


def _model_cov(log: pd.DataFrame, kind: str, s: pd.Series, phi: float) -> pd.DataFrame:
    """Inverse expected information of the written-out likelihood at (s, phi), free strengths
    (every model but ``s``'s zero) and phi: the Hessian of sum_k pi_k(x0) log pi_k(x) over the
    verdicts, by central differences of a complex-step score (Rao-Kupper's observed information
    differs from it; Davidson's does not)."""
    models = list(s.index)
    ref = models[int(np.flatnonzero(s.to_numpy() == 0.0)[0])]
    free = [m for m in models if m != ref]
    a = pd.Index(models).get_indexer(log["model_a"])
    b = pd.Index(models).get_indexer(log["model_b"])
    at = [models.index(m) for m in free]
    s0 = s[models].to_numpy()
    weight = np.exp(log_probs(kind, s0[a] - s0[b], phi))  # each outcome's probability at x0

    def nll(x):
        st = np.zeros(len(models), dtype=x.dtype)
        st[at] = x[:-1]
        lp = log_probs(kind, st[a] - st[b], x[-1])
        return -sum((weight[k] * lp[k]).sum() for k in range(3))

    def grad(x):
        g = np.empty(x.size)
        for k in range(x.size):
            z = x.astype(complex)
            z[k] += 1e-30j
            g[k] = nll(z).imag / 1e-30
        return g

    x0 = np.append(s[free].to_numpy(), phi)
    h = np.array([(grad(x0 + 1e-5 * e) - grad(x0 - 1e-5 * e)) / 2e-5 for e in np.eye(x0.size)])
    cov = np.linalg.inv((h + h.T) / 2)[:-1, :-1]
    out = pd.DataFrame(0.0, index=models, columns=models)
    out.loc[free, free] = cov
    return out


@pytest.mark.parametrize("kind", ["davidson", "rao-kupper"])
def test_anchor_with_a_rating_moves_the_tie_model_s_board(kind):
    log = football()
    s, phi = scipy_mle(log, kind, "Ars")
    cov = _model_cov(log, kind, s, phi)
    anchor = "Liv"
    r = ratings.fit(log, model=ratings.BT(ties=kind), anchor=f"{anchor}=1500", ci="model",
                    cluster=None)  # fmt: skip
    scale = ratings.Ratings.scale
    elo = 1500 + scale * (s - s[anchor])
    var = (np.diag(cov) + cov.loc[anchor, anchor] - 2 * cov[anchor]).clip(0)
    table = r.to_frame().set_index("model")
    np.testing.assert_allclose(table.loc[s.index, "elo"], elo, atol=1e-4)
    np.testing.assert_allclose(table.loc[s.index, "se"], scale * np.sqrt(var), rtol=1e-5,
                               atol=1e-6)  # fmt: skip
    assert table.loc[anchor, "se"] == 0.0
    np.testing.assert_allclose(r.ties["phi"].iloc[0], phi, atol=1e-6)  # the anchor's no part


def test_cli_anchor_with_a_tie_model(tmp_path):
    log = football()
    path, out = tmp_path / "season.csv", tmp_path / "out.csv"
    log.to_csv(path, index=False)
    assert main(["fit", str(path), "--ties", "davidson", "--anchor", "Che=1200", "--no-cluster",
                 "--out", str(out)]) == 0  # fmt: skip
    s, _ = scipy_mle(log, "davidson", "Ars")
    table = pd.read_csv(out).set_index("model")
    np.testing.assert_allclose(table.loc[s.index, "elo"],
                               1200 + ratings.Ratings.scale * (s - s["Che"]), atol=1e-4)


# ----------------------------------------------------------------------------------------------
# Scopes: --by scope and combine
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tied_log() -> pd.DataFrame:
    return two_tied_scopes(seed=7, n=400)


@pytest.fixture(scope="module")
def graded_log() -> pd.DataFrame:
    """Two judged scopes on the same 30 tasks with graded scores (a Beta around sigma(d))."""
    rng = np.random.default_rng(8)
    frames = []
    for scope in SCOPES:
        n = 500
        s = np.linspace(-0.8, 0.8, 6) + rng.normal(0, 0.1, 6)
        a = rng.integers(0, 6, n)
        b = (a + rng.integers(1, 6, n)) % 6
        p = 1 / (1 + np.exp(-(s[a] - s[b])))
        y = rng.beta(4 * p + 0.2, 4 * (1 - p) + 0.2)
        exact = rng.random(n) < 0.2
        y[exact] = rng.choice([0.0, 0.5, 1.0], exact.sum())
        frames.append(pd.DataFrame({"model_a": np.array(MODELS)[a],
                                    "model_b": np.array(MODELS)[b], "winner": y,
                                    "task_id": rng.integers(0, 30, n), "scope": scope}))
    return pd.concat(frames, ignore_index=True)


def _glm(v: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, pd.Index, np.ndarray]:
    """statsmodels' fractional binomial GLM (m0 at 0): strengths, per-task influences on them
    (rows of the inverse information times each task's score), the tasks, and its CR1 cov."""
    x = design(v["model_a"], v["model_b"], MODELS)[:, 1:]
    y = v["winner"].to_numpy(float)
    groups = pd.factorize(v["task_id"], sort=True)
    res = sm.GLM(y, x, family=sm.families.Binomial()).fit(
        tol=1e-13, maxiter=100, cov_type="cluster",
        cov_kwds={"groups": groups[0], "use_correction": False})  # fmt: skip
    mu = res.fittedvalues
    info = x.T @ (x * (mu * (1 - mu))[:, None])
    score = np.zeros((len(groups[1]), x.shape[1]))
    np.add.at(score, groups[0], x * (y - mu)[:, None])
    infl = np.hstack([np.zeros((len(groups[1]), 1)), score @ np.linalg.inv(info)])
    g = len(groups[1])
    return (np.append(0.0, res.params), infl, pd.Index(groups[1]),
            np.asarray(res.cov_params()) * g / (g - 1))  # fmt: skip


def test_combine_soft_headline_is_the_stacked_sandwich_of_statsmodels_influences(graded_log):
    fits = fit_scopes(graded_log, model=ratings.BT(soft=True), anchor="m0=1000",
                      cluster="task_id", ci="sandwich-z")  # fmt: skip
    weights = {"analytical": 1.0, "presentation": 3.0}
    c = combine(fits, weights=weights, method="joint")
    theta, joint = stacked(graded_log, weights, _glm)
    for scope in weights:
        t, _, _, cov = _glm(graded_log[graded_log["scope"] == scope])
        r = fits[scope]
        assert r.kind == "bt-soft"
        at = r.models.get_indexer(MODELS)
        np.testing.assert_allclose(r.strength[at], t, atol=1e-8)
        np.testing.assert_allclose(r.cov[np.ix_(at, at)][1:, 1:], cov, rtol=1e-7, atol=1e-14)
    at = c.models.get_indexer(MODELS)
    np.testing.assert_allclose(c.strength[at], theta, atol=1e-8)
    np.testing.assert_allclose(c.cov[np.ix_(at, at)], joint, rtol=1e-7, atol=1e-14)


def test_cli_combine_soft_and_its_refusal(graded_log, tmp_path, capsys):
    path, out = tmp_path / "graded.csv", tmp_path / "board.csv"
    graded_log.to_csv(path, index=False)
    assert main(["combine", str(path), "--anchor", "m0=1000"]) == 2
    err = capsys.readouterr().err
    assert "fractional winner score" in err and "`--soft`" in err
    assert main(["combine", str(path), "--soft", "--anchor", "m0=1000", "--ci", "sandwich-z",
                 "--weights", "analytical=1,presentation=3", "--out", str(out)]) == 0
    table = pd.read_csv(out)
    theta = 0.0
    for scope, w in (("analytical", 0.25), ("presentation", 0.75)):
        t, _, _, cov = _glm(graded_log[graded_log["scope"] == scope])
        rows = table[table["scope"] == scope].set_index("model").loc[MODELS]
        np.testing.assert_allclose(rows["elo"], 1000 + ratings.Ratings.scale * t, atol=1e-6)
        np.testing.assert_allclose(rows["se"].iloc[1:],
                                   ratings.Ratings.scale * np.sqrt(np.diag(cov)), rtol=1e-6)
        assert set(rows["method"]) == {"bt-soft"}
        theta = theta + w * t
    head = table[table["scope"] == "combined"].set_index("model").loc[MODELS]
    np.testing.assert_allclose(head["elo"], 1000 + ratings.Ratings.scale * theta, atol=1e-6)


def test_cli_fit_by_scope_with_a_tie_model(tied_log, tmp_path):
    path, out = tmp_path / "log.csv", tmp_path / "by.csv"
    tied_log.to_csv(path, index=False)
    assert main(["fit", str(path), "--by", "scope", "--ties", "davidson", "--anchor", "m0=1000",
                 "--out", str(out)]) == 0  # fmt: skip
    table = pd.read_csv(out)
    for scope in SCOPES:
        theta, _, _ = _davidson(tied_log[tied_log["scope"] == scope])
        rows = table[table["scope"] == scope].set_index("model").loc[MODELS]
        np.testing.assert_allclose(rows["elo"], 1000 + ratings.Ratings.scale * theta, atol=1e-4)
        assert set(rows["method"]) == {"davidson"}


def test_cli_fit_by_scope_with_soft_outcomes(graded_log, tmp_path, capsys):
    path, out = tmp_path / "graded.csv", tmp_path / "by.csv"
    graded_log.to_csv(path, index=False)
    assert main(["fit", str(path), "--by", "scope", "--anchor", "m0=1000"]) == 2
    assert "`--soft`" in capsys.readouterr().err
    assert main(["fit", str(path), "--by", "scope", "--soft", "--anchor", "m0=1000",
                 "--ci", "sandwich-z", "--out", str(out)]) == 0  # fmt: skip
    table = pd.read_csv(out)
    for scope in SCOPES:
        t, _, _, cov = _glm(graded_log[graded_log["scope"] == scope])
        rows = table[table["scope"] == scope].set_index("model").loc[MODELS]
        np.testing.assert_allclose(rows["elo"], 1000 + ratings.Ratings.scale * t, atol=1e-6)
        np.testing.assert_allclose(rows["se"].iloc[1:],
                                   ratings.Ratings.scale * np.sqrt(np.diag(cov)), rtol=1e-6)


# ----------------------------------------------------------------------------------------------
# Penalties
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("other", [{"penalty": 0.1}, {"firth": True}, {"soft": True}])
def test_tie_model_with_a_penalty_firth_or_soft_is_refused_saying_what_to_fit(other):
    name = next(iter(other))
    with pytest.raises(ValueError, match=rf"`ties='davidson'` cannot be combined with `{name}`"
                                         r".*Fit `ties='half'`") as e:
        ratings.BT(ties="davidson", **other)
    assert ("graded scores" if name == "soft" else "half wins") in str(e.value)


def test_cli_tie_model_with_a_penalty_names_the_flags(tmp_path, capsys):
    path = tmp_path / "season.csv"
    football().to_csv(path, index=False)
    assert main(["fit", str(path), "--ties", "davidson", "--penalty", "0.1"]) == 2
    err = capsys.readouterr().err
    assert "`--ties davidson` cannot be combined with `--penalty`" in err
    assert "`--ties half`" in err


def test_a_separated_board_under_a_tie_model_offers_no_penalty():
    log = draw("davidson", [0.0, 0.3, -0.2, 0.5], -0.5, 300, 20, 0.0, seed=5)
    log = log[~((log["model_b"] == "m3") & (log["winner"] != "B"))
              & ~((log["model_a"] == "m3") & (log["winner"] != "A"))]  # m3 never lost or tied
    with pytest.raises(NonIdentifiableError, match=r"never lost or tied: \['m3'\]") as e:
        ratings.fit(log, model=ratings.BT(ties="davidson"))
    assert "`ties='half'`" in str(e.value) and e.value.never_lost == ["m3"]
    with pytest.raises(NonIdentifiableError, match="pass a positive `penalty`"):
        ratings.fit(log)  # half wins keep the penalty's remedy
    with pytest.warns(PenaltyOnlyWarning, match="m3"):  # and it runs, saying so
        r = ratings.fit(log, model=ratings.BT(penalty=0.1))
    assert np.isinf(r.to_frame().set_index("model").loc["m3", "upper"])
