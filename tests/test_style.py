"""Style control (``fit(..., style=...)``) against references we did not write: a statsmodels
binomial GLM of the same design, and the CR2 formula computed on the verdict-level design."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import ratings
from ratings.core.errors import InvalidVerdictsError
from ratings.core.schema import ELO_SCALE

sm = pytest.importorskip("statsmodels.api")


def _log(n=1500, m=5, beta=(1.0, 0.2), ties=0.0, seed=3, tasks=30):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    ta, tb = rng.integers(50, 900, n), rng.integers(50, 900, n)
    ha, hb = rng.integers(0, 4, n), rng.integers(0, 4, n)
    x1 = (ta - tb) / (ta + tb)
    x2 = np.where(ha + hb > 0, (ha - hb) / np.maximum(ha + hb, 1), 0.0)
    s = np.linspace(-0.8, 0.8, m)
    p = 1 / (1 + np.exp(-(s[a] - s[b] + beta[0] * x1 + beta[1] * x2)))
    u = rng.random(n)
    w = np.where(rng.random(n) < ties, "tie", np.where(u < p, "A", "B"))
    return pd.DataFrame({"model_a": [f"m{i}" for i in a], "model_b": [f"m{i}" for i in b],
                         "winner": w, "task_id": rng.integers(0, tasks, n), "tokens_a": ta,
                         "tokens_b": tb, "headers_a": ha, "headers_b": hb})



def _two_judges(seed: int, etas: tuple[float, float], **log) -> pd.DataFrame:
    """Two logs of ``_log(**log)``, judged by "careful" and "noisy" with these qualities."""
    rng = np.random.default_rng(seed)
    frames = []
    for judge, eta in zip(("careful", "noisy"), etas, strict=True):
        d = _log(seed=int(rng.integers(1000)), **log)
        flip = rng.random(len(d)) > eta
        d["winner"] = np.where(flip, d.winner.map({"A": "B", "B": "A"}), d.winner)
        d["judge"] = judge
        frames.append(d)
    return pd.concat(frames, ignore_index=True)


def _glm(df, names=("tokens", "headers")):
    """The same design as a statsmodels binomial GLM: model dummies (m0 the reference) and the
    features scaled to unit root-mean-square; a tie is y = 1/2."""
    models = sorted(set(df.model_a) | set(df.model_b))
    idx = {m: k for k, m in enumerate(models)}
    n = len(df)
    xm = np.zeros((n, len(models)))
    xm[np.arange(n), df.model_a.map(idx)] += 1
    xm[np.arange(n), df.model_b.map(idx)] -= 1
    feats = []
    for name in names:
        a, b = df[f"{name}_a"].to_numpy(float), df[f"{name}_b"].to_numpy(float)
        x = np.where(a + b > 0, (a - b) / np.where(a + b > 0, a + b, 1), 0.0)
        feats.append(x / np.sqrt(np.mean(x * x)))
    design = np.column_stack([xm[:, 1:], *feats])
    y = df.winner.map({"A": 1.0, "B": 0.0, "tie": 0.5}).to_numpy()
    return models, design, y


@pytest.mark.parametrize("ties", [0.0, 0.2])
def test_bt_style_equals_statsmodels_glm(ties):
    df = _log(ties=ties)
    models, design, y = _glm(df)
    glm = sm.GLM(y, design, family=sm.families.Binomial())
    m = len(models)
    for ci, cluster, kw in (("model", None, {}), ("sandwich", None, {"cov_type": "HC0"}),
                            ("sandwich-z", "task_id",
                             {"cov_type": "cluster", "cov_kwds": {
                                 "groups": df.task_id.to_numpy(), "use_correction": False}})):
        res = glm.fit(tol=1e-13, **kw)
        r = ratings.fit(df, style=["tokens", "headers"], anchor="m0", ci=ci, cluster=cluster)
        elo = r.elo.reindex(models).to_numpy()
        np.testing.assert_allclose(elo[1:] - 1000.0, ELO_SCALE * res.params[:m - 1], atol=1e-8)
        np.testing.assert_allclose(r.style["coef"], res.params[m - 1:], atol=1e-8)
        bse = np.asarray(res.bse)
        if cluster is not None:  # CR1: G/(G-1); statsmodels' uncorrected sandwich has none
            g = df.task_id.nunique()
            bse = bse * np.sqrt(g / (g - 1))
        np.testing.assert_allclose(r.style["se"], bse[m - 1:], rtol=1e-7)
        np.testing.assert_allclose(r.se.reindex(models).to_numpy()[1:], ELO_SCALE * bse[:m - 1],
                                   rtol=1e-7)


def test_cr2_equals_the_textbook_formula():
    """CR2 (Bell & McCaffrey) on the verdict-level working design, written out directly."""
    df = _log(n=600, tasks=12, seed=5)
    models, design, y = _glm(df)
    res = sm.GLM(y, design, family=sm.families.Binomial()).fit(tol=1e-13)
    p = res.fittedvalues
    w = p * (1 - p)
    xw = design * np.sqrt(w)[:, None]
    e = (y - p) / np.sqrt(w)
    bread = np.linalg.inv(xw.T @ xw)
    meat = np.zeros_like(bread)
    for g in np.unique(df.task_id):
        sel = df.task_id.to_numpy() == g
        xg = xw[sel]
        hg = xg @ bread @ xg.T
        lam, q = np.linalg.eigh(np.eye(sel.sum()) - hg)
        ag = q @ np.diag(1 / np.sqrt(lam)) @ q.T
        u = xg.T @ ag @ e[sel]
        meat += np.outer(u, u)
    cov = bread @ meat @ bread
    r = ratings.fit(df, style=["tokens", "headers"], anchor="m0")
    m = len(models)
    np.testing.assert_allclose(r.style["se"], np.sqrt(np.diag(cov))[m - 1:], rtol=1e-7)
    np.testing.assert_allclose(r.se.reindex(models).to_numpy()[1:],
                               ELO_SCALE * np.sqrt(np.diag(cov))[:m - 1], rtol=1e-7)
    assert (r.style["df"] < df.task_id.nunique()).all()


def test_rank_change_and_bad_input():
    df = _log(beta=(3.0, 0.0), n=2000)
    r = ratings.fit(df, style="tokens")
    t = r.to_frame()
    plain = ratings.fit(df).to_frame().set_index("model")["rank"]
    np.testing.assert_array_equal(t["rank_change"], plain.reindex(t.model).to_numpy()
                                  - t["rank"].to_numpy())
    assert "rank_change" not in ratings.fit(df).to_frame()
    with pytest.raises(InvalidVerdictsError, match=r"lines_a.*lines_b|lines_b"):
        ratings.fit(df, style=["lines"])
    bad = df.copy()
    bad.loc[[4, 9], "tokens_b"] = -1
    with pytest.raises(InvalidVerdictsError, match=r"negative.*rows \[4, 9\]"):
        ratings.fit(bad, style=["tokens"])
    with pytest.raises(ValueError, match="bootstrap"):
        ratings.fit(df, style=["tokens"], ci="bootstrap")


def test_engines_agree():
    df = _log(n=800)
    a = ratings.fit(df, style=["tokens", "headers"], solver=ratings.Solver(engine="numpy"))
    b = ratings.fit(df, style=["tokens", "headers"], solver=ratings.Solver(engine="numba"))
    np.testing.assert_allclose(a.strength, b.strength, atol=1e-10)
    np.testing.assert_allclose(a.style["se"], b.style["se"], rtol=1e-9)


def test_crowd_bt_style_equals_scipy_likelihood():
    """Crowd-BT with style: eta sigma(d) + (1 - eta) sigma(-d), d = s_a - s_b + beta . x, on the
    decisive verdicts, maximised by scipy over the same parameters."""
    from scipy.optimize import check_grad, minimize
    from scipy.special import expit

    df = _two_judges(11, (0.95, 0.75), n=1500)
    r = ratings.fit(df, model=ratings.CrowdBT(prior=None), style=["tokens", "headers"],
                    anchor="m0", cluster=None)
    models, design, y = _glm(df)
    judge = (df.judge == "noisy").to_numpy().astype(int)
    m, p = len(models), 2

    def nll(v):
        """Negative log-likelihood and its analytic gradient (chain rule through
        pa = e sigma(d) + (1 - e) sigma(-d))."""
        d = design @ v[: m - 1 + p]
        e = v[m - 1 + p:][judge]
        sd = expit(d)
        pa = e * sd + (1 - e) * (1 - sd)
        dl = -(y / pa - (1 - y) / (1 - pa))
        grad = np.r_[design.T @ (dl * (2 * e - 1) * sd * (1 - sd)),
                     np.bincount(judge, dl * (2 * sd - 1), 2)]
        return -np.sum(y * np.log(pa) + (1 - y) * np.log1p(-pa)), grad

    x0 = np.r_[np.zeros(m - 1 + p), 0.9, 0.9]
    # the reference gradient is checked against finite differences, then drives L-BFGS-B to a
    # projected gradient of ~1e-10 (without it, L-BFGS-B stops on its relative-reduction test
    # ~1e-7 away from the optimum)
    assert check_grad(lambda v: nll(v)[0], lambda v: nll(v)[1], x0 + 0.05) < 1e-4
    bounds = [(None, None)] * (m - 1 + p) + [(0.5, 1.0)] * 2
    ref = minimize(nll, x0, jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"ftol": 0.0, "gtol": 1e-11, "maxiter": 10000, "maxcor": 50})
    elo = r.elo.reindex(models).to_numpy()
    np.testing.assert_allclose((elo[1:] - 1000.0) / ELO_SCALE, ref.x[: m - 1], atol=1e-6)
    np.testing.assert_allclose(r.style["coef"], ref.x[m - 1:m - 1 + p], atol=1e-6)
    eta = r.judges["eta"]
    np.testing.assert_allclose([eta["careful"], eta["noisy"]], ref.x[m - 1 + p:], atol=1e-6)
    assert -r.loglik <= ref.fun + 1e-9


def test_cli_style(tmp_path):
    from ratings.cli import main

    df = _log()
    path = tmp_path / "v.csv"
    df.to_csv(path, index=False)
    out, style_out = tmp_path / "r.csv", tmp_path / "s.csv"
    assert main(["fit", str(path), "--style", "tokens,headers", "--out", str(out),
                 "--style-out", str(style_out)]) == 0
    st = pd.read_csv(style_out)
    assert list(st.columns) == ["feature", "coef", "coef_elo", "se", "lower", "upper", "df",
                                "p_value", "scale"]
    np.testing.assert_allclose(st["coef"], ratings.fit(df, style="tokens,headers").style["coef"],
                               rtol=1e-12)
    assert "rank_change" in pd.read_csv(out).columns


@pytest.mark.slow
def test_style_coverage_small_board():
    """Planted length bias: the controlled intervals cover the generating values (wide
    tolerance: 60 replications); the plain fit's visibly miss."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks_perf"))
    from style_coverage import run_cell

    cell = run_cell(6, 3000, 0.0, "bt", 0.0, 60, min_reps=60)
    assert cell["reps"] == 60
    assert abs(cell["coverage_ratings"] - 0.95) < 3 * max(cell["mc_se_ratings"], 0.01) + 0.02
    assert cell["coverage_coef"] > 0.85
    assert cell["coverage_plain"] < 0.7


def _judged_log(n=2400, seed=8):
    """Three judges (two in model families) with position bias and self-preference, on top of a
    length preference."""
    rng = np.random.default_rng(seed)
    df = _log(n=n, seed=seed, m=6)
    judges = np.array(["ja", "jb", "jx"])[rng.integers(0, 3, n)]
    fam = {"m0": "A", "m1": "A", "m2": "B", "m3": "B", "m4": "C", "m5": "C"}
    a_fam, b_fam = df.model_a.map(fam).to_numpy(), df.model_b.map(fam).to_numpy()
    j_fam = pd.Series(judges).map({"ja": "A", "jb": "B", "jx": "X"}).to_numpy()
    s = np.linspace(-0.8, 0.8, 6)
    idx = df.model_a.str[1:].astype(int).to_numpy(), df.model_b.str[1:].astype(int).to_numpy()
    x1 = (df.tokens_a - df.tokens_b) / (df.tokens_a + df.tokens_b)
    d = (s[idx[0]] - s[idx[1]] + 1.0 * x1.to_numpy()
         + np.select([judges == "ja", judges == "jb"], [0.3, -0.2], 0.1)
         + 0.6 * ((a_fam == j_fam).astype(float) - (b_fam == j_fam)))
    p = 1 / (1 + np.exp(-d))
    df["winner"] = np.where(rng.random(n) < p, "A", "B")
    df["judge"] = judges
    families = {**fam, "ja": "A", "jb": "B", "jx": "X"}
    return df, families


def test_style_with_adjust_equals_statsmodels_glm():
    """Style features and judge effects (position per judge, self-preference) in one fit: the
    same binomial GLM with the effects' columns beside the features."""
    df, families = _judged_log()
    models, design, y = _glm(df, names=("tokens",))
    judges = df.judge.to_numpy()
    own = {j: {m for m, f in families.items() if m.startswith("m") and f == families[j]}
           for j in ("ja", "jb", "jx")}
    pos = [(judges == j).astype(float) for j in ("ja", "jb", "jx")]
    selfp = [np.where(judges == j, df.model_a.isin(own[j]).to_numpy().astype(float)
                      - df.model_b.isin(own[j]).to_numpy(), 0.0) for j in ("ja", "jb")]
    full = np.column_stack([design, *pos, *selfp])
    glm = sm.GLM(y, full, family=sm.families.Binomial())
    m = len(models)
    adjust = ratings.Adjust("position,self-preference", families=families)
    for ci, cluster, kw in (("sandwich", None, {"cov_type": "HC0"}),
                            ("sandwich-z", "task_id",
                             {"cov_type": "cluster", "cov_kwds": {
                                 "groups": df.task_id.to_numpy(), "use_correction": False}})):
        res = glm.fit(tol=1e-13, **kw)
        r = ratings.fit(df, style=["tokens"], adjust=adjust, anchor="m0", ci=ci,
                        cluster=cluster)
        elo = r.elo.reindex(models).to_numpy()
        np.testing.assert_allclose(elo[1:] - 1000.0, ELO_SCALE * res.params[:m - 1], atol=1e-8)
        np.testing.assert_allclose(r.style["coef"], res.params[m - 1:m], atol=1e-8)
        eff = r.judge_effects.table.set_index("judge")
        np.testing.assert_allclose(eff.loc[["ja", "jb", "jx"], "position_bias"],
                                   res.params[m:m + 3], atol=1e-8)
        np.testing.assert_allclose(eff.loc[["ja", "jb"], "self_preference"],
                                   res.params[m + 3:], atol=1e-8)
        assert np.isnan(eff.loc["jx", "self_preference"])
        bse = np.asarray(res.bse)
        if cluster is not None:
            g = df.task_id.nunique()
            bse = bse * np.sqrt(g / (g - 1))
        np.testing.assert_allclose(r.style["se"], bse[m - 1:m], rtol=1e-7)
        np.testing.assert_allclose(eff.loc[["ja", "jb", "jx"], "position_se"], bse[m:m + 3],
                                   rtol=1e-7)
        np.testing.assert_allclose(eff.loc[["ja", "jb"], "self_se"], bse[m + 3:], rtol=1e-7)
        np.testing.assert_allclose(r.se.reindex(models).to_numpy()[1:], ELO_SCALE * bse[:m - 1],
                                   rtol=1e-7)


def test_messages_name_the_options_as_the_user_sets_them(tmp_path, capsys):
    from ratings.cli import main

    with pytest.raises(ValueError, match=r"`Style\(ridge=\)` must be a finite number"):
        ratings.Style("tokens", ridge=-1)
    with pytest.raises(ValueError, match=r"`Style\(transform=\)` must be one of"):
        ratings.Style("tokens", transform="cube")
    df = _log(n=300)
    path = tmp_path / "v.csv"
    df.to_csv(path, index=False)
    assert main(["fit", str(path), "--style", "tokens", "--style-ridge", "-1"]) != 0
    err = capsys.readouterr().err
    assert "--style-ridge" in err and "style_ridge" not in err


def test_ridge_shrinks_the_coefficients_only():
    """The ridge's optimum: the penalised GLM score equations hold (checked with statsmodels'
    score at our estimate), and the judge effects beside it are not shrunk."""
    df = _log(n=800)
    models, design, y = _glm(df, names=("tokens",))
    r = ratings.fit(df, style=ratings.Style("tokens", ridge=50.0), anchor="m0", cluster=None)
    v = np.r_[(r.elo.reindex(models).to_numpy()[1:] - 1000.0) / ELO_SCALE, r.style["coef"]]
    score = sm.GLM(y, design, family=sm.families.Binomial()).score(v)
    penalty = np.r_[np.zeros(len(models) - 1), 50.0 * r.style["coef"].to_numpy()]
    np.testing.assert_allclose(score, penalty, atol=1e-7)
    assert abs(r.style["coef"].iloc[0]) < abs(ratings.fit(df, style="tokens").style["coef"].iloc[0])
    assert r.style.attrs["ridge"] == 50.0


@pytest.mark.parametrize("model", ["bt", "crowd-bt"])
def test_cr2_series_path_equals_exact(model, monkeypatch):
    """Past the exact budget the CR2 influences come from the binomial series: the same
    covariance as the exact eigen-decompositions."""
    import ratings.inference.cluster

    df = _log(n=1200, tasks=25, seed=4)
    df["judge"] = np.where(np.arange(len(df)) % 2, "j1", "j2")
    spec = ratings.CrowdBT(prior=None) if model == "crowd-bt" else ratings.BT()
    exact = ratings.fit(df, style=["tokens", "headers"], model=spec)
    monkeypatch.setattr(ratings.inference.cluster, "EXACT_BUDGET", 0.0)
    series = ratings.fit(df, style=["tokens", "headers"], model=spec)
    assert exact.uncertainty.inference.exact and not series.uncertainty.inference.exact
    np.testing.assert_allclose(series.style["se"], exact.style["se"], rtol=1e-7)
    np.testing.assert_allclose(series.se, exact.se, rtol=1e-7)
    np.testing.assert_allclose(series.style["df"], exact.style["df"], rtol=0.25)


def _one_judge_log(seed=2, n=500, m=4, eta=0.9):
    """One judge of quality ``eta`` over a length preference; seed 2's plain estimate puts eta
    on its bound."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    ta, tb = rng.integers(50, 900, n), rng.integers(50, 900, n)
    s = np.linspace(-0.6, 0.6, m)
    win = rng.random(n) < 1 / (1 + np.exp(-(s[a] - s[b] + (ta - tb) / (ta + tb))))
    win = np.where(rng.random(n) < eta, win, ~win)
    return pd.DataFrame({"model_a": [f"m{i}" for i in a], "model_b": [f"m{i}" for i in b],
                         "winner": np.where(win, "A", "B"), "task_id": rng.integers(0, 25, n),
                         "judge": "j", "tokens_a": ta, "tokens_b": tb})


def test_one_judge_crowd_style_widened_by_an_independent_profile(monkeypatch):
    """A one-judge Crowd-BT posterior mode with style whose plain estimate puts eta on its bound:
    its covariance is the CR2 one rescaled and with the profile's two-step term (the rule of
    ratings.models.crowd.onejudge), where eta's profile-likelihood limit and the parameters'
    move to it are computed here by scipy (strengths' normal prior, sd sqrt(5))."""
    from scipy.optimize import brentq, minimize
    from scipy.special import expit

    import ratings.models.crowd.policy as policy

    df = _one_judge_log()
    with pytest.warns(ratings.JudgeWarning, match="Only one judge"):  # as plain Crowd-BT
        r = ratings.fit(df, model="crowd-bt", style="tokens", anchor="m0")
    assert r.crowd.plain_on_bound == ("j",) and r.crowd.prior_used
    with monkeypatch.context() as mp, warnings.catch_warnings():
        warnings.simplefilter("ignore", ratings.JudgeWarning)
        mp.setattr(policy, "widen_one_judge", lambda fit, *a, **k: fit)
        r0 = ratings.fit(df, model="crowd-bt", style="tokens", anchor="m0")
    models, design, y = _glm(df, names=("tokens",))
    m = len(models)
    lam = 1.0 / 5.0

    def nll(v, e):
        d = design @ v
        sd = expit(d)
        pa = e * sd + (1 - e) * (1 - sd)
        s = np.r_[0.0, v[: m - 1]]
        c = s - s.mean()
        dl = -(y / pa - (1 - y) / (1 - pa)) * (2 * e - 1) * sd * (1 - sd)
        g = design.T @ dl
        g[: m - 1] += lam * c[1:]  # d/ds_i of lam/2 |s - mean s|^2 (the mean's part cancels)
        return -np.sum(y * np.log(pa) + (1 - y) * np.log1p(-pa)) + 0.5 * lam * c @ c, g

    start = [np.zeros(m)]

    def profile(e):
        res = minimize(nll, start[0], args=(e,), jac=True, method="L-BFGS-B",
                       options={"ftol": 0.0, "gtol": 1e-9, "maxiter": 5000})
        start[0] = res.x
        return res.fun, res.x

    top = profile(1.0)[0]  # the plain estimate's eta is on 1: the profile's top
    eta_hat = float(r.judges["eta"].iloc[0])
    z = 1.959963984540054
    eta_lo = brentq(lambda e: profile(e)[0] - top - z * z / 2, 0.6, eta_hat, xtol=1e-6)
    v_lo = profile(eta_lo)[1]
    elo = r.elo.reindex(models).to_numpy()
    v_hat = np.r_[(elo[1:] - elo[0]) / ELO_SCALE, r.style["coef"].iloc[0]]
    shift = np.r_[v_lo - v_hat, eta_lo - eta_hat]
    eta_var = float(r0.crowd.eta_cov.iloc[0, 0])
    e1 = eta_hat - (eta_hat - eta_lo) / z
    scale = (2 * eta_hat - 1) / (2 * e1 - 1)
    shrink = 1 - z**2 * eta_var / (eta_hat - eta_lo) ** 2  # the sandwich's share of the term
    extra = np.sqrt(max(shrink, 0.0)) / z * shift[: m - 1]
    want = scale**2 * np.asarray(r0.cov)[1:, 1:] + np.outer(extra, extra)
    assert scale > 1.05  # the rescaling applies on this board
    np.testing.assert_allclose(np.asarray(r.cov)[1:, 1:], want, rtol=2e-3)


def test_crowd_cr2_equals_the_textbook_formula_with_expected_information():
    """Crowd-BT with style: CR2 (Bell & McCaffrey) written out on the verdict-level working
    design, whose rows are dp/dparams / sqrt(p (1 - p)) for p = eta sigma(d) + (1 - eta)
    sigma(-d): the bread is the expected information (as plain Crowd-BT's), not the observed."""
    from scipy.special import expit

    df = _two_judges(21, (0.9, 0.75), n=700, tasks=40)
    r = ratings.fit(df, model=ratings.CrowdBT(prior=None), style=["tokens", "headers"],
                    anchor="m0")
    models, design, y = _glm(df)
    m, p = len(models), 2
    judge = (df.judge == "noisy").to_numpy().astype(int)
    elo = r.elo.reindex(models).to_numpy()
    v = np.r_[(elo[1:] - elo[0]) / ELO_SCALE, r.style["coef"]]
    eta = r.judges["eta"].reindex(["careful", "noisy"]).to_numpy()
    assert ((eta > 0.5) & (eta < 1)).all()
    e = eta[judge]
    s = expit(design @ v)
    pa = e * s + (1 - e) * (1 - s)
    sd = np.sqrt(pa * (1 - pa))
    rows = np.column_stack([design * ((2 * e - 1) * s * (1 - s))[:, None],
                            np.eye(2)[judge] * (2 * s - 1)[:, None]]) / sd[:, None]
    resid = (y - pa) / sd
    bread = np.linalg.inv(rows.T @ rows)
    meat = np.zeros_like(bread)
    for g in np.unique(df.task_id):
        sel = df.task_id.to_numpy() == g
        xg = rows[sel]
        lam, q = np.linalg.eigh(np.eye(sel.sum()) - xg @ bread @ xg.T)
        u = xg.T @ (q @ ((q.T @ resid[sel]) / np.sqrt(lam)))
        meat += np.outer(u, u)
    se = np.sqrt(np.diag(bread @ meat @ bread))
    np.testing.assert_allclose(r.style["se"], se[m - 1:m - 1 + p], rtol=1e-6)
    np.testing.assert_allclose(r.se.reindex(models).to_numpy()[1:], ELO_SCALE * se[:m - 1],
                               rtol=1e-6)


def test_feature_columns_read_as_numbers():
    """Numeric feature columns stay numbers when read (no categorical per column): the fit equals
    one from the same columns read as categoricals, and a missing count still names its row."""
    df = _log(n=600)
    cols = ["tokens_a", "tokens_b"]
    log = ratings.read_verdicts(df, keep=cols, as_numbers=cols)
    assert log.verdicts["tokens_a"].dtype == df["tokens_a"].dtype
    as_text = ratings.read_verdicts(df, keep=cols)
    assert isinstance(as_text.verdicts["tokens_a"].dtype, pd.CategoricalDtype)
    a, b = ratings.fit(df, style="tokens"), ratings.fit(as_text, style="tokens")
    np.testing.assert_allclose(a.strength, b.strength, atol=1e-12)
    np.testing.assert_allclose(a.style["se"], b.style["se"], rtol=1e-12)
    bad = df.astype({"tokens_b": float})
    bad.loc[7, "tokens_b"] = np.nan
    with pytest.raises(InvalidVerdictsError, match=r"missing value.*row.? \[?7"):
        ratings.fit(bad, style="tokens")
    kept = ratings.read_verdicts(bad, keep=cols, as_numbers=cols, errors="report")
    assert kept.rejected["row"].tolist() == [7] and len(kept.verdicts) == len(df) - 1


@pytest.mark.parametrize("model", ["bt", "crowd-bt"])
def test_long_log_path_side_by_side_gives_the_same_fit(monkeypatch, model):
    """On long logs the features and the slot codes are computed side by side on the pool, the
    rows merged after a sample, the passes over them split in blocks (Crowd-BT's row terms too):
    the same fit, and the same refusal of bad rows."""
    from ratings.core import threads

    df = _log(n=1500, seed=8) if model == "bt" else _two_judges(5, (0.9, 0.7), n=1500)
    want = ratings.fit(df, style=["tokens", "headers"], model=model)
    monkeypatch.setattr(threads, "CONCURRENT_ROWS", 10)
    monkeypatch.setenv("RATINGS_NUM_THREADS", "2")
    got = ratings.fit(df, style=["tokens", "headers"], model=model)
    np.testing.assert_allclose(got.strength, want.strength, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(got.se, want.se, rtol=1e-8)
    np.testing.assert_allclose(got.style["se"], want.style["se"], rtol=1e-8)
    bad = df.copy()
    bad.loc[[4, 9], "headers_a"] = -1
    with pytest.raises(InvalidVerdictsError, match=r"headers_a.*negative.*rows \[4, 9\]"):
        ratings.fit(bad, style=["tokens", "headers"])


def test_series_path_pair_df_streams_the_style_rows(monkeypatch):
    """Past the exact budget every pair's df is streamed over blocks of clusters from the style
    fit's own working rows (features included): equal to the formula on the whole clusters x
    models matrix, and the table (rank intervals need every pair's df) is written."""
    from helpers import one_direction_pairs_df

    import ratings.inference.cluster
    from ratings.inference import pairdf

    df = _log(n=1200, tasks=25, seed=4)
    monkeypatch.setattr(ratings.inference.cluster, "EXACT_BUDGET", 0.0)
    r = ratings.fit(df, style=["tokens", "headers"])
    rows = r.uncertainty.inference.rows
    n = np.random.default_rng(1).normal(size=(rows.n_params, rows.n_models))
    monkeypatch.setattr(pairdf, "BLOCK_CELLS", 5 * rows.n_models)  # blocks of 5 clusters
    np.testing.assert_allclose(pairdf.streamed_pairs_df(rows, n),
                               one_direction_pairs_df(rows.quadratic(n).T), rtol=1e-10)
    t = r.to_frame()
    assert np.isfinite(t["rank_lower"]).all() and np.isfinite(r.pair_df()[0, 1:]).all()


def test_crowd_style_prior_share_from_an_independent_hessian():
    """The judges table of a Crowd-BT posterior mode with style: ``prior_share`` is the Beta
    prior's curvature on eta times eta's variance under the penalised objective's Hessian, here
    by central differences of a likelihood written out in numpy (strengths' normal prior with sd
    sqrt(5), Beta(2, 2.5) on 2 eta - 1)."""
    from scipy.special import expit

    df = _one_judge_log()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ratings.JudgeWarning)
        r = ratings.fit(df, model="crowd-bt", style="tokens", anchor="m0")
    assert r.crowd.prior_used
    models, design, y = _glm(df, names=("tokens",))
    m, lam, agree, flip = len(models), 1.0 / 5.0, 1.0, 1.5

    def objective(w):
        v, e = w[:-1], w[-1]
        sd = expit(design @ v)
        pa = e * sd + (1 - e) * (1 - sd)
        c = np.r_[0.0, v[: m - 1]]
        c = c - c.mean()
        u = 2 * e - 1
        return (-np.sum(y * np.log(pa) + (1 - y) * np.log1p(-pa)) + 0.5 * lam * c @ c
                - agree * np.log(u) - flip * np.log1p(-u))  # fmt: skip

    elo = r.elo.reindex(models).to_numpy()
    eta = float(r.judges["eta"].iloc[0])
    w = np.r_[(elo[1:] - elo[0]) / ELO_SCALE, r.style["coef"].iloc[0], eta]
    h, q = 1e-4, w.size
    hess = np.empty((q, q))
    for i in range(q):
        for j in range(q):
            di, dj = np.eye(q)[i] * h, np.eye(q)[j] * h
            hess[i, j] = (objective(w + di + dj) - objective(w + di - dj)
                          - objective(w - di + dj) + objective(w - di - dj)) / (4 * h * h)
    u = 2 * eta - 1
    curvature = 4 * (agree / u**2 + flip / (1 - u) ** 2)
    want = curvature * np.linalg.inv(hess)[-1, -1]
    assert 0.05 < want < 0.95
    assert r.judges["prior_share"].iloc[0] == pytest.approx(want, rel=1e-4)


def test_crowd_style_on_coin_judges_leaves_the_intervals_open_as_plain_crowd_bt():
    """Judges of quality 0.55: the likelihood ratio of the style fit against every verdict
    being a fair coin, computed here from the fit's estimates with a likelihood written out in
    numpy, is below chi2's 95% point with K (M + P) df, so every judge is flagged and the
    strengths' and coefficients' intervals are open, with plain Crowd-BT's warning."""
    from scipy import stats

    df = _two_judges(3, (0.55, 0.55), n=800)
    with pytest.warns(ratings.JudgeWarning, match="No judge's quality is pinned down"):
        r = ratings.fit(df, style=["tokens", "headers"], model="crowd-bt", anchor="m0")
    models, design, y = _glm(df)
    elo = r.elo.reindex(models).to_numpy()
    v = np.r_[(elo[1:] - elo[0]) / ELO_SCALE, r.style["coef"]]
    eta = r.judges["eta"].reindex(df.judge).to_numpy()
    p = 1 / (1 + np.exp(-(design @ v)))
    pa = eta * p + (1 - eta) * (1 - p)
    lr = 2 * (len(df) * np.log(2) + np.sum(y * np.log(pa) + (1 - y) * np.log1p(-pa)))
    assert lr < stats.chi2.ppf(0.95, 2 * (len(models) + 2))
    assert r.judges["uninformative"].all() and r.crowd.open_intervals
    assert np.isinf(r.se.drop("m0")).all() and np.isinf(r.style["se"]).all()


@pytest.mark.parametrize("exact", [True, False])
def test_style_fit_frees_its_rows_without_the_garbage_collector(monkeypatch, exact):
    """Dropping a style fit's result frees its working rows (the design's arrays: 1M verdicts
    with four features hold about 100 MB) at once, after its df were read on either CR2 path:
    no reference cycle leaves them to the collector, which a long session (or a loop of fits)
    runs only now and then."""
    import gc
    import weakref

    import ratings.inference.cluster

    if not exact:
        monkeypatch.setattr(ratings.inference.cluster, "EXACT_BUDGET", 0.0)
    r = ratings.fit(_log(n=600, tasks=12, seed=5), style=["tokens", "headers"])
    assert np.isfinite(r.style["df"]).all() and np.isfinite(r.pair_df()[0, 1:]).all()
    rows = weakref.ref(r.uncertainty.inference.rows)
    was = gc.isenabled()
    gc.disable()
    try:
        del r
        assert rows() is None
    finally:
        if was:
            gc.enable()
