"""Tie models (Davidson, Rao-Kupper) against references we did not write: BradleyTerry2's
GenDavidson fitted with gnm in R (tests/data/ties_reference.R), maximum likelihood written out
here from the models' formulas and maximised by scipy, brute-force CR2 and HC0 sandwiches built
verdict by verdict, finite differences of the likelihood; the numba kernels against their NumPy
twins."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.linalg import sqrtm
from scipy.optimize import minimize

import ratings
from ratings.core.errors import DataWarning, DegenerateBoardError
from ratings.data.comparisons import aggregate
from ratings.kernels import ties as _ties
from ratings.kernels import ties_ref as _ties_ref

DATA = Path(__file__).parent / "data"
KERNELS = ("davidson_row_terms", "rao_kupper_row_terms")


# ----------------------------------------------------------------------------------------------
# The models written out per verdict (independent of the package)
# ----------------------------------------------------------------------------------------------


def log_probs(kind: str, d, phi):
    """log P(i wins), log P(j wins), log P(tie) at d = s_i - s_j (complex-safe)."""
    if kind == "davidson":  # pi_i / D, pi_j / D, nu sqrt(pi_i pi_j) / D
        pi, pj, tie = np.exp(d / 2), np.exp(-d / 2), np.exp(phi)
        log_d = np.log(pi + pj + tie)
        return np.log(pi) - log_d, np.log(pj) - log_d, np.log(tie) - log_d
    theta = 1 + np.exp(phi)  # pi_i / (pi_i + theta pi_j)
    pi, pj = np.exp(d / 2), np.exp(-d / 2)
    li = np.log(pi / (pi + theta * pj))
    lj = np.log(pj / (pj + theta * pi))
    return li, lj, np.log(1 - np.exp(li) - np.exp(lj))


def football(season: str = "2008-9", clusters: int | None = None) -> pd.DataFrame:
    games = pd.read_csv(DATA / "football_epl_2008_2013.csv")
    games = games[games["season"] == season].reset_index(drop=True)
    out = pd.DataFrame({"model_a": games["home"], "model_b": games["away"],
                        "winner": games["result"].map({1: "A", 0: "tie", -1: "B"})})
    if clusters:
        out["task_id"] = np.arange(len(out)) % clusters
    return out


def scipy_mle(log: pd.DataFrame, kind: str, ref: str) -> tuple[pd.Series, float]:
    """Strengths (``ref`` at 0) and phi maximising the log-likelihood, verdict by verdict."""
    models = sorted(set(log["model_a"]) | set(log["model_b"]))
    a = pd.Index(models).get_indexer(log["model_a"])
    b = pd.Index(models).get_indexer(log["model_b"])
    y = log["winner"].map({"A": 0, "B": 1, "tie": 2}).to_numpy()
    free = [i for i, m in enumerate(models) if m != ref]

    def nll(x):
        s = np.zeros(len(models), dtype=x.dtype)
        s[free] = x[:-1]
        lp = log_probs(kind, s[a] - s[b], x[-1])
        return -sum(lp[k][y == k].sum() for k in range(3))

    res = minimize(nll, np.zeros(len(models)), jac="cs", method="BFGS",
                   options={"gtol": 1e-11, "maxiter": 10_000})
    s = np.zeros(len(models))
    s[free] = res.x[:-1]
    return pd.Series(s, index=models), float(res.x[-1])


def draw(kind: str, strengths, phi, n, n_tasks, task_sd, seed) -> pd.DataFrame:
    """Verdicts from a tie model with task effects (a shift of d per task and pair side)."""
    rng = np.random.default_rng(seed)
    m = len(strengths)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    task = rng.integers(0, n_tasks, n)
    effect = rng.normal(0, task_sd, (n_tasks, m))
    d = np.asarray(strengths)[a] - np.asarray(strengths)[b] + effect[task, a] - effect[task, b]
    li, lj, _ = log_probs(kind, d, phi)
    u = rng.random(n)
    winner = np.where(u < np.exp(li), "A", np.where(u < np.exp(li) + np.exp(lj), "B", "tie"))
    names = np.array([f"m{i}" for i in range(m)])
    return pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner,
                         "task_id": task})


# ----------------------------------------------------------------------------------------------
# Against R (BradleyTerry2's GenDavidson, gnm) and against scipy
# ----------------------------------------------------------------------------------------------


def test_davidson_equals_bradleyterry2_gendavidson():
    ref = pd.read_csv(DATA / "ties_reference_strengths.csv").set_index("team")
    tie = pd.read_csv(DATA / "ties_reference_tie.csv").set_index("parameter")
    r = ratings.fit(football(), model=ratings.BT(ties="davidson"), anchor="Ars", ci="model",
                    cluster=None)
    s = pd.Series(r.strength, index=r.models)
    np.testing.assert_allclose(s[ref.index], ref["strength"], atol=1e-6)
    np.testing.assert_allclose((r.se / r.scale)[ref.index], ref["se"], atol=1e-6)
    np.testing.assert_allclose(r.ties.loc["nu", "phi"], tie.loc["log_nu", "estimate"], atol=1e-6)
    np.testing.assert_allclose(r.ties.loc["nu", "se_phi"], tie.loc["log_nu", "se"], atol=1e-6)
    # GenDavidson's tie.max is the logit of the largest tie probability nu / (2 + nu)
    p = r.ties.loc["nu", "p_tie_equal"]
    np.testing.assert_allclose(np.log(p / (1 - p)), tie.loc["tie.max", "estimate"], atol=1e-6)
    np.testing.assert_allclose(r.loglik, tie.loc["loglik", "estimate"], atol=1e-6)


@pytest.mark.parametrize("kind", ["davidson", "rao-kupper"])
@pytest.mark.parametrize("board", ["football", "simulated"])
def test_tie_models_equal_an_independent_scipy_mle(kind, board):
    if board == "football":
        log = football()
    else:
        log = draw(kind, [0.0, 0.5, -0.4, 1.0, -1.2, 0.2], -0.5, 1500, 50, 0.3, seed=3)
    ref_model = sorted(set(log["model_a"]))[0]
    s, phi = scipy_mle(log[["model_a", "model_b", "winner"]], kind, ref_model)
    r = ratings.fit(log, model=ratings.BT(ties=kind), anchor=ref_model, cluster=None)
    got = pd.Series(r.strength, index=r.models)
    np.testing.assert_allclose(got[s.index], s, atol=1e-6)
    np.testing.assert_allclose(r.ties["phi"].iloc[0], phi, atol=1e-6)
    value = np.exp(phi) if kind == "davidson" else 1 + np.exp(phi)
    np.testing.assert_allclose(r.ties["estimate"].iloc[0], value, rtol=1e-6)


@pytest.mark.parametrize("kind", ["davidson", "rao-kupper"])
def test_a_log_without_ties_fits_plain_bt_and_says_so(kind, board):
    log = board[board["winner"] != "tie"]
    plain = ratings.fit(log)
    with pytest.warns(DataWarning, match="no ties"):
        r = ratings.fit(log, model=ratings.BT(ties=kind))
    np.testing.assert_allclose(r.elo, plain.elo, atol=1e-8)
    np.testing.assert_allclose(r.cov, plain.cov, atol=1e-12)
    assert r.ties["p_tie_equal"].iloc[0] == 0.0
    assert "no ties" in r.summary()


def test_tie_models_approach_plain_bt_as_ties_vanish():
    """One tie among many decisive verdicts: the tie model's strengths are within the tie's
    own influence of plain Bradley-Terry on the decisive verdicts."""
    log = draw("davidson", [0.0, 0.8, -0.5, 0.3], -12.0, 4000, 80, 0.0, seed=5)
    assert (log["winner"] == "tie").sum() == 0
    log.loc[0, "winner"] = "tie"
    plain = ratings.fit(log.drop(index=0), cluster=None)
    for kind in ("davidson", "rao-kupper"):
        r = ratings.fit(log, model=ratings.BT(ties=kind), cluster=None)
        np.testing.assert_allclose(r.elo, plain.elo, atol=2.0)
        assert r.ties["p_tie_equal"].iloc[0] < 1e-3


def test_every_verdict_a_tie_is_refused():
    log = pd.DataFrame({"model_a": ["x", "y", "z"], "model_b": ["y", "z", "x"],
                        "winner": ["tie"] * 3})
    with pytest.raises(DegenerateBoardError, match="Every verdict is a tie"):
        ratings.fit(log, model=ratings.BT(ties="davidson"))


def test_bad_ties_option_names_the_choices():
    with pytest.raises(ValueError, match="'half', 'davidson', 'rao-kupper'"):
        ratings.BT(ties="draws")
    with pytest.raises(ValueError, match="cannot be combined"):
        ratings.BT(ties="davidson", firth=True)


# ----------------------------------------------------------------------------------------------
# Sandwiches built verdict by verdict
# ----------------------------------------------------------------------------------------------


def _per_verdict(log: pd.DataFrame, kind: str, r) -> tuple:
    """Each verdict's score (over all M + 1 parameters, by finite differences of its own
    log-probability) and its expected information, from this file's formulas."""
    models = list(r.models)
    s = np.asarray(r.strength)
    phi = float(r.ties["phi"].iloc[0])
    a = pd.Index(models).get_indexer(log["model_a"])
    b = pd.Index(models).get_indexer(log["model_b"])
    y = log["winner"].map({"A": 0, "B": 1, "tie": 2}).to_numpy()
    h = 1e-6
    d = s[a] - s[b]
    # derivatives of each outcome's log-probability on (d, phi), central differences
    lp = np.array(log_probs(kind, d, phi))
    gd = (np.array(log_probs(kind, d + h, phi)) - np.array(log_probs(kind, d - h, phi))) / (2 * h)
    gp = (np.array(log_probs(kind, d, phi + h)) - np.array(log_probs(kind, d, phi - h))) / (2 * h)
    n, m = len(log), len(models)
    x = np.zeros((n, m + 1))  # d's design e_a - e_b, then phi
    x[np.arange(n), a] += 1
    x[np.arange(n), b] -= 1
    x[:, m] = 0
    score = gd[y, np.arange(n)][:, None] * x + gp[y, np.arange(n)][:, None] * np.eye(m + 1)[m]
    p = np.exp(lp)
    info = []
    for v in range(n):
        g = np.column_stack([gd[:, v], gp[:, v]])  # outcomes x (d, phi)
        info.append((g.T * p[:, v]) @ g)
    return score, np.array(info), x


def _bread(info, x, m, free):
    total = np.zeros((m + 1, m + 1))
    for i2, xv in zip(info, x, strict=True):
        j = np.column_stack([xv, np.eye(m + 1)[m]])  # (d, phi) -> all parameters
        total += j @ i2 @ j.T
    return np.linalg.inv(total[np.ix_(free, free)])


@pytest.mark.parametrize("kind", ["davidson", "rao-kupper"])
def test_hc0_sandwich_with_the_tie_parameter_equals_a_brute_force_one(kind):
    log = draw(kind, [0.0, 0.6, -0.3, 0.9], -0.3, 400, 40, 0.0, seed=11)
    r = ratings.fit(log, model=ratings.BT(ties=kind), cluster=None, anchor="m0")
    score, info, x = _per_verdict(log, kind, r)
    m = len(r.models)
    free = np.arange(1, m + 1)
    bread = _bread(info, x, m, free)
    cov = bread @ (score[:, free].T @ score[:, free]) @ bread
    np.testing.assert_allclose(np.diag(r.cov)[1:], np.diag(cov)[: m - 1], rtol=1e-5)
    np.testing.assert_allclose(r.ties["se_phi"].iloc[0], np.sqrt(cov[-1, -1]), rtol=1e-5)


@pytest.mark.parametrize("kind", ["davidson", "rao-kupper"])
@pytest.mark.parametrize("ci", ["hc0", "sandwich-z"])
def test_sandwiches_of_a_log_of_several_judges_equal_brute_force_ones(kind, ci):
    """A tie model has one tie parameter whoever judged: on a log of three judges the HC0 and
    CR1 sandwiches equal the verdict-by-verdict ones, which never read the judge."""
    log = draw(kind, [0.0, 0.6, -0.3, 0.9], -0.3, 400, 30, 0.3, seed=13)
    log["judge"] = np.random.default_rng(5).choice(["j0", "j1", "j2"], len(log))
    r = ratings.fit(log, model=ratings.BT(ties=kind), ci=ci, anchor="m0")
    score, info, x = _per_verdict(log, kind, r)
    m = len(r.models)
    free = np.arange(1, m + 1)
    bread = _bread(info, x, m, free)
    if ci == "hc0":
        meat = score[:, free].T @ score[:, free]
    else:
        tasks = log["task_id"].to_numpy()
        sums = np.array([score[tasks == g][:, free].sum(axis=0) for g in np.unique(tasks)])
        meat = len(sums) / (len(sums) - 1) * sums.T @ sums
    cov = bread @ meat @ bread
    np.testing.assert_allclose(r.cov[1:, 1:], cov[: m - 1, : m - 1], rtol=1e-5, atol=1e-12)
    np.testing.assert_allclose(r.ties["se_phi"].iloc[0], np.sqrt(cov[-1, -1]), rtol=1e-5)


@pytest.mark.parametrize("kind", ["davidson", "rao-kupper"])
def test_cr2_with_the_tie_parameter_equals_a_brute_force_one(kind):
    """CR2 from each verdict's own working rows: the symmetric square root of its expected
    information (not the Cholesky factor the package uses), A_g = (I - X_g B X_g^T)^(-1/2) on
    the verdicts' residuals, and the Satterthwaite-free covariance sum_g B X_g^T A_g e_g (...)^T."""
    log = draw(kind, [0.0, 0.6, -0.3, 0.9, -0.7], -0.2, 300, 12, 0.4, seed=12)
    r = ratings.fit(log, model=ratings.BT(ties=kind), anchor="m0")
    score, info, x = _per_verdict(log, kind, r)
    m = len(r.models)
    free = np.arange(1, m + 1)
    bread = _bread(info, x, m, free)
    design, resid = [], []
    for v in range(len(log)):
        root = np.real(sqrtm(info[v]))  # X_v^T X_v = I_v, X_v symmetric (2 x 2 in (d, phi))
        j = np.column_stack([x[v], np.eye(m + 1)[m]])[free]  # (d, phi) -> free parameters
        design.append(root @ j.T)  # 2 x P
        score_d = score[v] @ x[v] / 2  # x_v = e_a - e_b: the score on d, twice
        resid.append(np.linalg.solve(root, np.array([score_d, score[v, m]])))
    design, resid = np.array(design), np.array(resid)
    cov = np.zeros((m, m))
    for g in np.unique(log["task_id"]):
        rows = np.flatnonzero(log["task_id"].to_numpy() == g)
        xg = design[rows].reshape(-1, m)
        eg = resid[rows].reshape(-1)
        hgg = xg @ bread @ xg.T
        w, v = np.linalg.eigh(np.eye(len(eg)) - hgg)
        adj = (v / np.sqrt(w)) @ v.T @ eg
        infl = bread @ xg.T @ adj
        cov += np.outer(infl, infl)
    np.testing.assert_allclose(np.diag(r.cov)[1:], np.diag(cov)[: m - 1], rtol=1e-5)
    np.testing.assert_allclose(r.ties["se_phi"].iloc[0], np.sqrt(cov[-1, -1]), rtol=1e-5)


@pytest.mark.parametrize("kind", ["davidson", "rao-kupper"])
def test_sparse_and_dense_cr2_paths_agree(kind):
    from ratings.inference.small import working_inference
    from ratings.inference.ties import tie_working
    from ratings.models.families.ties import tie_family
    from ratings.models.ties import fit_ties

    log = draw(kind, [0.0, 0.6, -0.3, 0.9, -0.7], -0.2, 600, 200, 0.4, seed=13)
    data = aggregate(log, cluster="task_id")
    fam = tie_family(kind)
    fit = fit_ties(data, fam, ref=0)
    bread = np.linalg.inv(fit.hessian[1:, 1:])
    t = getattr(_ties_ref, fam.kernel)(fit.theta, fit.phi, data.ii, data.jj, data.wi, data.wj,
                                       data.tt, False)
    rows, residual = tie_working(data, t[3:6], t[1:3])
    free = np.arange(1, 6)
    out = [working_inference(rows, residual, free, bread, data, small)
           for small in (False, True)]
    np.testing.assert_allclose(out[0].covariance(), out[1].covariance(), rtol=1e-8, atol=1e-14)
    c = np.zeros((2, 6))
    c[0, 5] = 1.0
    c[1, 1], c[1, 2] = 1.0, -1.0
    np.testing.assert_allclose(out[0].df(c), out[1].df(c), rtol=1e-6)


# ----------------------------------------------------------------------------------------------
# Kernels: twins, finite differences
# ----------------------------------------------------------------------------------------------


def _rows(seed: int, r: int = 40, m: int = 6, big: float = 1.0):
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, big, m)
    ii = rng.integers(0, m - 1, r)
    jj = np.minimum(ii + 1 + rng.integers(0, 3, r), m - 1)
    wi, wj, tt = (rng.integers(0, 4, r).astype(float) for _ in range(3))
    wi[:3] = wj[3:6] = tt[6:9] = 0.0
    return theta, ii, jj, wi, wj, tt


@pytest.mark.parametrize("name", KERNELS)
@pytest.mark.parametrize("phi", [-6.0, -0.4, 0.0, 2.5])
@pytest.mark.parametrize("big", [1.0, 30.0])
def test_numba_kernels_equal_their_numpy_twins(name, phi, big):
    args = _rows(1, big=big)
    for meat in (True, False):
        got = getattr(_ties, name)(args[0], phi, *args[1:], meat)
        want = getattr(_ties_ref, name)(args[0], phi, *args[1:], meat)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", KERNELS)
@pytest.mark.parametrize("phi", [-3.0, -0.4, 1.5])
def test_kernel_scores_are_the_likelihood_s_derivatives(name, phi):
    theta, ii, jj, wi, wj, tt = _rows(2)
    kernel = getattr(_ties_ref, name)
    _, sd, sp, *_ = kernel(theta, phi, ii, jj, wi, wj, tt)
    h = 1e-6
    for r in range(5):  # d by moving theta_i, one row at a time
        args = (ii[r:r + 1], jj[r:r + 1], wi[r:r + 1], wj[r:r + 1], tt[r:r + 1])
        up, down = theta.copy(), theta.copy()
        up[ii[r]] += h
        down[ii[r]] -= h
        fd = -(kernel(up, phi, *args)[0] - kernel(down, phi, *args)[0]) / (2 * h)
        np.testing.assert_allclose(sd[r], fd, rtol=1e-6, atol=1e-8)
    fd = -(kernel(theta, phi + h, ii, jj, wi, wj, tt)[0]
           - kernel(theta, phi - h, ii, jj, wi, wj, tt)[0]) / (2 * h)
    np.testing.assert_allclose(sp.sum(), fd, rtol=1e-6)


@pytest.mark.parametrize("kind,name", [("davidson", KERNELS[0]), ("rao-kupper", KERNELS[1])])
def test_kernel_likelihood_and_information_match_the_formulas(kind, name):
    """nll from this file's formulas; the expected information as the variance of the score
    (sum over outcomes of P_k g_k g_k^T, g_k by finite differences of log P_k); Davidson's
    equals the observed one (by finite differences of the score)."""
    theta, ii, jj, wi, wj, tt = _rows(3)
    phi = -0.7
    nll, _, _, idd, idp, ipp, mdd, mdp, mpp = getattr(_ties_ref, name)(
        theta, phi, ii, jj, wi, wj, tt)
    d = theta[ii] - theta[jj]
    lp = np.array(log_probs(kind, d, phi))
    np.testing.assert_allclose(nll, -(wi * lp[0] + wj * lp[1] + tt * lp[2]).sum(), rtol=1e-12)
    h = 1e-6
    gd = (np.array(log_probs(kind, d + h, phi)) - np.array(log_probs(kind, d - h, phi))) / (2 * h)
    gp = (np.array(log_probs(kind, d, phi + h)) - np.array(log_probs(kind, d, phi - h))) / (2 * h)
    p, n, w = np.exp(lp), wi + wj + tt, np.array([wi, wj, tt])
    np.testing.assert_allclose(idd, n * (p * gd * gd).sum(0), rtol=1e-6)
    np.testing.assert_allclose(idp, n * (p * gd * gp).sum(0), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(ipp, n * (p * gp * gp).sum(0), rtol=1e-6)
    np.testing.assert_allclose(mdd, (w * gd * gd).sum(0), rtol=1e-6)
    np.testing.assert_allclose(mdp, (w * gd * gp).sum(0), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(mpp, (w * gp * gp).sum(0), rtol=1e-6)
    if kind == "davidson":
        kernel = getattr(_ties_ref, name)
        up, down = kernel(theta, phi + h, ii, jj, wi, wj, tt), kernel(theta, phi - h, ii, jj, wi,
                                                                       wj, tt)
        np.testing.assert_allclose(ipp, -(up[2] - down[2]) / (2 * h), rtol=1e-6)


def test_kernels_stay_finite_at_extreme_strengths():
    theta = np.array([0.0, 800.0, -800.0])
    ii, jj = np.array([0, 0, 1]), np.array([1, 2, 2])
    ones = np.ones(3)
    for name in KERNELS:
        for k in (_ties, _ties_ref):
            out = getattr(k, name)(theta, 0.3, ii, jj, ones, ones, ones)
            assert all(np.all(np.isfinite(np.asarray(o))) for o in out[1:])


# ----------------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------------


def test_ties_table_and_summary_name_the_model(board):
    r = ratings.fit(board, model=ratings.BT(ties="rao-kupper"))
    t = r.ties
    assert list(t.index) == ["theta"]
    row = t.iloc[0]
    assert row["lower"] < row["estimate"] < row["upper"]
    theta = row["estimate"]
    np.testing.assert_allclose(row["p_tie_equal"], (theta - 1) / (theta + 1), rtol=1e-12)
    assert np.isfinite(row["df"]) and row["df"] > 1
    assert "Rao-Kupper" in r.summary() and "theta =" in r.summary()
    assert r.kind == "rao-kupper"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = ratings.fit(board, model=ratings.BT(ties="davidson"),
                        anchor=(r.models[0], 1500.0)).ties
    nu = d["estimate"].iloc[0]
    np.testing.assert_allclose(d["p_tie_equal"].iloc[0], nu / (2 + nu), rtol=1e-12)


# ----------------------------------------------------------------------------------------------
# compare_ties
# ----------------------------------------------------------------------------------------------


def test_compare_ties_reports_likelihoods_rates_and_rank_changes():
    log = football(clusters=38)
    c = ratings.compare_ties(log)
    assert set(c.fits) == {"half", "davidson", "rao-kupper"}
    lik = c.likelihood
    for kind in ("davidson", "rao-kupper"):  # the log-likelihood of this file's formulas
        r = c.fits[kind]
        s = pd.Series(r.strength, index=r.models)
        d = s[log["model_a"]].to_numpy() - s[log["model_b"]].to_numpy()
        lp = log_probs(kind, d, r.ties["phi"].iloc[0])
        y = log["winner"].map({"A": 0, "B": 1, "tie": 2}).to_numpy()
        ll = sum(lp[k][y == k].sum() for k in range(3))
        np.testing.assert_allclose(lik.loc[kind, "loglik"], ll, rtol=1e-10)
        np.testing.assert_allclose(lik.loc[kind, "aic"], 2 * 20 - 2 * ll, rtol=1e-10)
    assert lik["delta_aic"].min() == 0.0
    rates = c.tie_rates
    assert rates["n"].sum() == len(log)
    np.testing.assert_allclose((rates["observed"] * rates["n"]).sum(),
                               (log["winner"] == "tie").sum())
    # the fitted tie rates average to the observed share (the tie parameter's score is zero
    # for Davidson, whose tie probability's logit is linear in phi with slope one)
    np.testing.assert_allclose((rates["davidson"] * rates["n"]).sum(),
                               (log["winner"] == "tie").sum(), rtol=1e-8)
    ranks = c.ranks
    for kind, r in c.fits.items():
        np.testing.assert_array_equal(ranks[f"rank_{kind}"],
                                      r.to_frame().reindex(ranks.index)["rank"])
        assert set(ranks.index[ranks[f"with_leader_{kind}"]]) == set(r.tied_with_leader())
    assert "Tie rate by rating gap" in c.summary()


def test_compare_ties_refuses_a_log_without_ties(board):
    """Refused before any fit: no tie model's "no ties" warning precedes the error."""
    with pytest.raises(ValueError, match="no ties"), warnings.catch_warnings():
        warnings.simplefilter("error")
        ratings.compare_ties(board[board["winner"] != "tie"])


def test_tie_families_plug_into_the_family_interface():
    """The families give the core's RowTerms from the kernel modules the engine hands out
    (numba's and the twins'), equal to the tie kernels' own outputs."""
    from ratings.kernels import fit as numba_kernels
    from ratings.kernels import fit_ref
    from ratings.models.families.base import RowTerms
    from ratings.models.families.ties import DAVIDSON, RAO_KUPPER

    theta, ii, jj, wi, wj, tt = _rows(4)
    slot = np.zeros(ii.size, dtype=np.int64)
    for fam in (DAVIDSON, RAO_KUPPER):
        assert fam.ties_in_likelihood and fam.n_extra(3) == 1
        assert fam.lower == -np.inf and fam.upper == np.inf
        want = getattr(_ties_ref, fam.kernel)(theta, -0.3, ii, jj, wi, wj, tt, True)
        for k in (fit_ref, numba_kernels):
            got = fam.row_terms(k, theta, np.array([-0.3]), ii, jj, slot, wi, wj, tt, True)
            assert isinstance(got, RowTerms)
            for g, w in zip(got, want, strict=True):
                np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_compare_ties_reads_the_log_as_fit_does(tmp_path):
    """``read=`` (columns, format) reaches the reading of the log: the fits equal
    :func:`ratings.fit`'s of the same file."""
    log = football(clusters=38).rename(columns={"model_a": "home"})
    path = tmp_path / "log.txt"
    log.to_json(path, orient="records", lines=True)
    read = ratings.Read(columns={"home": "model_a"}, format="jsonl")
    c = ratings.compare_ties(path, read=read)
    for kind, r in c.fits.items():
        expected = ratings.fit(path, model=ratings.BT(ties=kind), read=read)
        pd.testing.assert_series_equal(r.elo, expected.elo.reindex(r.models), rtol=1e-12)
