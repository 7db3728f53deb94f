"""Judge effects (position bias, self-preference) fitted jointly with the strengths.

References that share no code with :mod:`ratings`: a statsmodels binomial GLM on raw verdict
rows with the same design columns (strengths, one position column per judge, one
own-family column per judge with a family) for Bradley-Terry, and a scipy likelihood on raw
rows for Crowd-BT (per-verdict scores and a finite-difference Hessian for its covariances).
Verdicts are drawn by :func:`draw`, written here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from helpers import assert_close
from scipy.optimize import minimize
from scipy.special import expit

import ratings
from ratings.api.fitting import load_log
from ratings.audit.judge_audit import AuditWarning
from ratings.core.errors import NonIdentifiableError
from ratings.data.comparisons import aggregate
from ratings.data.slots import read_families, slot_counts
from ratings.models.judge_effects import plan_effects

Y = {"A": 1.0, "B": 0.0, "tie": 0.5}
FAMILIES = {"m0": "red", "m1": "red", "m2": "blue", "m3": "blue", "J1": "red", "J2": "blue"}


def draw(seed: int, n: int, *, beta=None, gamma=None, eta=None, n_tasks: int = 60,
         tie_rate: float = 0.2, task_sd: float = 0.3, m: int = 7) -> pd.DataFrame:  # fmt: skip
    """Raw verdicts: judge k sees x = s_a - s_b + beta_k + gamma_k (own(a) - own(b)) plus a
    per-(task, model) effect; Crowd-BT flips the order with probability 1 - eta_k."""
    rng = np.random.default_rng(seed)
    judges = np.array(["J1", "J2", "J3"], dtype=object)
    beta = beta or {}
    gamma = gamma or {}
    eta = eta or {}
    s = np.linspace(-1.0, 1.0, m)
    names = np.array([f"m{i}" for i in range(m)], dtype=object)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    k = rng.integers(0, 3, n)
    t = rng.integers(0, n_tasks, n)
    u = task_sd * rng.standard_normal((n_tasks, m))
    fam_j = np.array([FAMILIES.get(j) for j in judges], dtype=object)[k]
    own_a = np.array([FAMILIES.get(x) for x in names[a]], dtype=object) == fam_j
    own_b = np.array([FAMILIES.get(x) for x in names[b]], dtype=object) == fam_j
    x = (s[a] - s[b] + u[t, a] - u[t, b] + np.array([beta.get(j, 0.0) for j in judges])[k]
         + np.array([gamma.get(j, 0.0) for j in judges])[k] * (own_a * 1.0 - own_b))  # fmt: skip
    e = np.array([eta.get(j, 1.0) for j in judges])[k]
    p = e * expit(x) + (1 - e) * expit(-x)
    p_tie = 4 * tie_rate * p * (1 - p)
    v = rng.random(n)
    winner = np.where(v < p - p_tie / 2, "A", np.where(v < p + p_tie / 2, "tie", "B"))
    return pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner,
                         "judge": judges[k], "task_id": [f"t{i}" for i in t]})  # fmt: skip


def design(frame: pd.DataFrame, position=("J1", "J2", "J3"), self_pref=("J1", "J2")):
    """Per-verdict GLM columns: models (first dropped), position per judge, own-family per
    judge; and the outcome y."""
    models = sorted(set(frame["model_a"]) | set(frame["model_b"]))
    n = len(frame)
    x = np.zeros((n, len(models)))
    x[np.arange(n), [models.index(v) for v in frame["model_a"]]] = 1
    x[np.arange(n), [models.index(v) for v in frame["model_b"]]] = -1
    cols = [x[:, 1:]]
    for j in position:
        cols.append((frame["judge"] == j).to_numpy(float)[:, None])
    for j in self_pref:
        fam = FAMILIES[j]
        own_a = frame["model_a"].map(FAMILIES).eq(fam).to_numpy(float)
        own_b = frame["model_b"].map(FAMILIES).eq(fam).to_numpy(float)
        cols.append(((frame["judge"] == j).to_numpy(float) * (own_a - own_b))[:, None])
    return np.hstack(cols), frame["winner"].map(Y).to_numpy(float), models


def _slots(frame: pd.DataFrame):
    loaded = load_log(frame)
    return loaded.data, slot_counts(loaded.frame, loaded.data)


@pytest.fixture(scope="module")
def board():
    return draw(3, 4000, beta={"J1": 0.4, "J2": -0.2}, gamma={"J1": 0.6})


@pytest.mark.parametrize("cov_type", ["cluster", "HC0", "nonrobust"])
def test_joint_fit_matches_statsmodels_glm(board, cov_type):
    """Estimates and covariances equal a binomial GLM with the same columns (ties as y = 1/2).

    statsmodels' cluster covariance is taken without its small-sample correction
    (``use_correction=False``) and multiplied by G / (G - 1), the package's factor."""
    x, y, models = design(board)
    kwds = {}
    if cov_type == "cluster":
        groups = pd.factorize(board["task_id"])[0]
        kwds = {"cov_kwds": {"groups": groups, "use_correction": False}}
    ref = sm.GLM(y, x, family=sm.families.Binomial()).fit(tol=1e-13, cov_type=cov_type, **kwds)
    cov = np.asarray(ref.cov_params())
    if cov_type == "cluster":
        g = board["task_id"].nunique()
        cov = cov * g / (g - 1)
    cluster = None if cov_type == "HC0" else "task_id"
    ci = "model" if cov_type == "nonrobust" else "sandwich"
    r = ratings.fit(board, adjust=ratings.Adjust("position,self-preference", families=FAMILIES),
                    anchor=models[0], cluster=cluster, ci=ci)  # fmt: skip
    m = len(models)
    fx = r.judge_effects.table.set_index("judge")
    ours = np.concatenate([r.strength[1:], fx.loc[["J1", "J2", "J3"], "position_bias"],
                           fx.loc[["J1", "J2"], "self_preference"]])  # fmt: skip
    np.testing.assert_allclose(ours, ref.params, rtol=0, atol=1e-6)
    se = np.concatenate([fx.loc[["J1", "J2", "J3"], "position_se"],
                         fx.loc[["J1", "J2"], "self_se"]])  # fmt: skip
    np.testing.assert_allclose(se, np.sqrt(np.diag(cov)[m - 1:]), rtol=1e-6)
    assert_close(r.cov[1:, 1:], cov[: m - 1, : m - 1], rtol=1e-6)
    assert np.isnan(fx.loc["J3", "self_preference"]) and fx.loc["J3", "self_note"]


def test_numba_and_numpy_engines_agree(board):
    kw = {"adjust": ratings.Adjust("position,self-preference", families=FAMILIES), "anchor": "m0"}
    fast = ratings.fit(board, solver=ratings.Solver(engine="numba"), **kw)
    slow = ratings.fit(board, solver=ratings.Solver(engine="numpy"), **kw)
    np.testing.assert_allclose(fast.strength, slow.strength, atol=1e-10)
    np.testing.assert_allclose(fast.cov, slow.cov, rtol=1e-8, atol=1e-14)
    pd.testing.assert_frame_equal(fast.judge_effects.table, slow.judge_effects.table, rtol=1e-8)


class CrowdReference:
    """Crowd-BT with position and self-preference on raw rows: z = (strengths but the first,
    beta of J1..J3, gamma of J1..J2, eta of J1..J3)."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.x, self.y, self.models = design(frame)
        self.k = frame["judge"].map({"J1": 0, "J2": 1, "J3": 2}).to_numpy()
        self.task = pd.factorize(frame["task_id"])[0]
        self.p = self.x.shape[1]

    def probs(self, z):
        lin = self.x @ z[: self.p]
        e = z[self.p:][self.k]
        return lin, e, e * expit(lin) + (1 - e) * expit(-lin)

    def nll(self, z) -> float:
        _, _, q = self.probs(z)
        return -float(np.sum(self.y * np.log(q) + (1 - self.y) * np.log1p(-q)))

    def scores(self, z):
        lin, e, q = self.probs(z)
        dl = self.y / q - (1 - self.y) / (1 - q)
        s_lin = dl * (2 * e - 1) * expit(lin) * expit(-lin)
        s_eta = np.zeros((len(q), 3))
        s_eta[np.arange(len(q)), self.k] = dl * (expit(lin) - expit(-lin))
        return np.hstack([self.x * s_lin[:, None], s_eta])

    def grad(self, z):
        return -self.scores(z).sum(axis=0)

    def fit(self):
        z0 = np.concatenate([np.zeros(self.p), np.full(3, 0.8)])
        bounds = [(None, None)] * self.p + [(0.5, 1.0)] * 3
        res = minimize(lambda z: self.nll(z) / len(self.y), z0, jac=lambda z: self.grad(z) /
                       len(self.y), method="L-BFGS-B", bounds=bounds,
                       options={"ftol": 1e-16, "gtol": 1e-12, "maxiter": 20000})  # fmt: skip
        z = res.x
        for _ in range(3):  # Newton polish on the finite-difference Hessian (interior optimum)
            z = z - np.linalg.solve(self.hessian(z), self.grad(z))
        return z

    def hessian(self, z, h=1e-5):
        cols = [(self.grad(z + h * e) - self.grad(z - h * e)) / (2 * h) for e in np.eye(z.size)]
        hess = np.column_stack(cols)
        return (hess + hess.T) / 2

    def cluster_cov(self, z):
        bread = np.linalg.inv(self.hessian(z))
        g = np.zeros((self.task.max() + 1, z.size))
        np.add.at(g, self.task, self.scores(z))
        n_g = g.shape[0]
        return bread @ (g.T @ g) @ bread * n_g / (n_g - 1)


def test_crowd_bt_joint_fit_matches_independent_scipy_likelihood():
    frame = draw(5, 6000, beta={"J1": 0.5}, gamma={"J1": 0.5, "J2": -0.3},
                 eta={"J1": 0.9, "J2": 0.8, "J3": 0.85})  # fmt: skip
    # Crowd-BT conditions on decisive verdicts: ties are not part of its likelihood
    ref = CrowdReference(frame[frame["winner"] != "tie"].reset_index(drop=True))
    z = ref.fit()
    assert np.all((z[ref.p :] > 0.5) & (z[ref.p :] < 1.0))
    r = ratings.fit(
        frame,
        model="crowd-bt",
        adjust=ratings.Adjust("position,self-preference", families=FAMILIES),
        anchor="m0",
    )
    fx = r.judge_effects.table.set_index("judge")
    ours = np.concatenate([r.strength[1:], fx.loc[["J1", "J2", "J3"], "position_bias"],
                           fx.loc[["J1", "J2"], "self_preference"],
                           r.judges.loc[["J1", "J2", "J3"], "eta"]])  # fmt: skip
    np.testing.assert_allclose(ours, z, rtol=0, atol=1e-6)
    assert r.loglik == pytest.approx(-ref.nll(z), rel=1e-10)
    cov = ref.cluster_cov(z)
    se = np.concatenate(
        [
            fx.loc[["J1", "J2", "J3"], "position_se"],
            fx.loc[["J1", "J2"], "self_se"],
            r.judges.loc[["J1", "J2", "J3"], "se"],
        ]
    )
    np.testing.assert_allclose(se, np.sqrt(np.diag(cov)[len(ref.models) - 1 :]), rtol=1e-5)
    m = len(ref.models)
    assert_close(r.cov[1:, 1:], cov[: m - 1, : m - 1], rtol=1e-5)


def test_no_estimable_effect_gives_the_plain_fit(board):
    """Self-preference with families that name no judge: nothing to adjust, the plain fit
    (adjusted fits keep the CR1 sandwich: compared with the plain fit's CR1, ``sandwich-z``)."""
    plain = ratings.fit(board, anchor="m3", ci="sandwich-z")
    adj = ratings.fit(
        board, anchor="m3", adjust=ratings.Adjust("self-preference", families={"m0": "red"})
    )
    np.testing.assert_allclose(adj.strength, plain.strength, atol=1e-9)
    np.testing.assert_allclose(adj.cov, plain.cov, rtol=1e-8, atol=1e-14)
    np.testing.assert_allclose(adj.influence, plain.influence, rtol=1e-8, atol=1e-12)
    assert adj.judge_effects.table["self_preference"].isna().all()
    assert set(adj.judge_effects.table["self_note"]) == {"no family given"}


def test_one_judge_cannot_separate_self_preference_from_strength():
    frame = draw(1, 1500)
    frame["judge"] = "J1"
    slots = _slots(frame)[1]
    plan = plan_effects(slots, FAMILIES, position=True, self_preference=True)
    assert plan.position.tolist() == [True]
    assert plan.self_preference.tolist() == [False]
    assert "cannot be told apart" in plan.self_note[0]
    with pytest.raises(NonIdentifiableError, match=r"J1 \(self-preference\): no judge outside"):
        ratings.fit(frame, adjust=ratings.Adjust("self-preference", families=FAMILIES))
    with pytest.warns(AuditWarning, match=r"J1 \(self-preference\): no judge outside"):
        a = ratings.audit(frame, families=FAMILIES, n_boot=20)  # reported, not raised
    assert np.isnan(a.judges.loc[0, "self_preference"])
    assert "self-preference not estimable" in a.judges.loc[0, "flag"]


def test_judge_always_choosing_slot_a_has_no_finite_position_bias():
    frame = draw(2, 1500)
    frame.loc[frame["judge"] == "J2", "winner"] = "A"
    with pytest.raises(NonIdentifiableError, match=r"J2 \(position bias\): always chose slot A"):
        ratings.fit(frame, adjust="position")
    with pytest.warns(AuditWarning, match=r"J2 \(position bias\): always chose slot A"):
        a = ratings.audit(frame, n_boot=20)
    row = a.judges.set_index("judge").loc["J2"]
    assert np.isnan(row["position_bias"]) and "+infinite" in row["flag"]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"adjust": "position", "ci": "bootstrap"}, ValueError, "bootstrap is not available"),
        ({"adjust": "position", "model": ratings.BT(penalty=1.0)}, ValueError,
         "`penalty` is not available"),
        ({"adjust": "self-preference"}, ValueError, "pass `families`"),
        ({"adjust": "position,order"}, ValueError, r"got \['order'\]"),
        (
            {"adjust": ratings.Adjust("self-preference", families={"x": "y"})},
            ratings.InvalidVerdictsError,
            "names none of the models",
        ),
    ],
)
def test_adjust_errors(board, kwargs, error, message):
    with pytest.raises(error, match=message):
        ratings.fit(board, **kwargs)


def test_adjust_needs_slot_order(board):
    with pytest.raises(TypeError, match="slot A"):
        ratings.fit(aggregate(board), adjust="position")


def test_counts_table_keeps_slot_order(board):
    """A counts table by (task, judge, model_a, model_b) gives the same joint fit."""
    counts = (board.assign(wins_a=board["winner"].eq("A"), wins_b=board["winner"].eq("B"),
                           ties=board["winner"].eq("tie"))
              .groupby(["task_id", "judge", "model_a", "model_b"], as_index=False)
              [["wins_a", "wins_b", "ties"]].sum())  # fmt: skip
    kw = {"adjust": ratings.Adjust("position,self-preference", families=FAMILIES), "anchor": "m0"}
    a, b = ratings.fit(board, **kw), ratings.fit(counts, **kw)
    np.testing.assert_allclose(a.strength, b.strength, atol=1e-10)
    np.testing.assert_allclose(a.cov, b.cov, rtol=1e-8, atol=1e-14)


@pytest.mark.filterwarnings("ignore::ratings.core.errors.DataWarning")  # flags decide
def test_forfeits_are_judge_free_in_slot_counts():
    frame = pd.DataFrame({"model_a": ["x", "y", "x"], "model_b": ["y", "x", "y"],
                          "winner": ["A", "A", "B"], "judge": ["J", "J", "J"],
                          "failed_a": [True, False, False],
                          "task_id": ["t1", "t1", "t2"]})  # fmt: skip
    data = aggregate(ratings.read_verdicts(frame).verdicts)
    slots = slot_counts(ratings.read_verdicts(frame).verdicts, data)
    det = list(data.judges).index("deterministic")
    row = np.flatnonzero(slots.judge == det)
    assert row.size == 1 and slots.wb[row] == 1 and slots.wa[row] == 0  # x failed in slot A
    assert slots.n.sum() == 3


def test_families_file_errors(tmp_path):
    path = tmp_path / "fam.csv"
    path.write_text("name,team\nm0,red\n")
    with pytest.raises(ratings.InvalidVerdictsError, match=r"\['family'\] not found"):
        read_families(path)
    path.write_text("name,family\nm0,red\nm0,blue\nm1,\n")
    with pytest.raises(ratings.InvalidVerdictsError, match=r"empty family: rows \[2\]"):
        read_families(path)
    path.write_text("name,family\nm0,red\nm0,blue\n")
    with pytest.raises(ratings.InvalidVerdictsError, match=r"different families to \['m0'\]"):
        read_families(path)
    path.write_text("name,family\nm0,red\nm0,red\n J1 ,red\n")
    assert read_families(path) == {"m0": "red", "J1": "red"}
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_families(tmp_path / "nope.csv")


def test_fit_effects_plan_masks_only_what_is_asked(board):
    from ratings.api.covariates import fit_covariates
    from ratings.api.specs import options_of

    loaded = load_log(board)
    _, slots = _slots(board)
    plan = plan_effects(slots, FAMILIES, position=False, self_preference=True)
    options = options_of(adjust=ratings.Adjust("self-preference", families=FAMILIES))
    table = fit_covariates(loaded, options, plan=plan).judge_effects.table.set_index("judge")
    assert table["position_bias"].isna().all() and table["position_se"].isna().all()
    assert table.loc["J1", "self_preference"] > 0.2  # J1's planted 0.6


def test_large_score_matrices_take_the_sparse_path(board, monkeypatch):
    """Above MAX_INFLUENCE_CELLS the clustered meat comes from a sparse score matrix (no
    influences kept); the covariance is the same."""
    import ratings.core.memory as memory
    import ratings.inference.covariance as unc

    kw = {"adjust": ratings.Adjust("position,self-preference", families=FAMILIES), "anchor": "m0"}
    dense = ratings.fit(board, **kw)
    monkeypatch.setattr(unc, "MAX_INFLUENCE_CELLS", 10)
    monkeypatch.setattr(memory, "MAX_INFLUENCE_CELLS", 10)
    sparse = ratings.fit(board, **kw)
    assert dense.influence is not None and sparse.influence is None
    np.testing.assert_allclose(sparse.cov, dense.cov, rtol=1e-10, atol=1e-16)


def test_reused_etas_with_covariates_are_said_to_be_known(board):
    """A judge-quality source with a covariance of eta: a fit with covariates fixes the etas
    without their uncertainty, and says so unless ``eta_known``."""
    import warnings

    from ratings.core.errors import JudgeWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        crowd = ratings.fit(board, model="crowd-bt")
    assert crowd.crowd.eta_cov.to_numpy().any()
    kw = {"adjust": "position", "anchor": "m0"}
    with pytest.warns(JudgeWarning, match="treated as known.*eta_known=True"):
        ratings.fit(board, model=ratings.CrowdBT(judge_quality=crowd), **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JudgeWarning)
        ratings.fit(board, model=ratings.CrowdBT(judge_quality=crowd, eta_known=True), **kw)
