"""Crowd-BT: the fit against an independent scipy implementation, covariances against numerical
Hessians and per-verdict scores, recovery in simulation, derivatives, kernel parity, judge reuse
through the CLI, boundary and uninformative judges, and the mirror symmetry.

The reference in this file shares no code with :mod:`ratings`: verdicts are drawn by
:func:`draw_board`, the negative log-likelihood, per-verdict scores and Hessian are computed on
raw verdict rows with NumPy, and the optimum is found with :func:`scipy.optimize.minimize`.
Model: P(i beats j | judge k, decisive) = eta_k sigma(s_i - s_j) + (1 - eta_k) sigma(s_j - s_i),
eta in [1/2, 1]; ties are not part of the likelihood (it conditions on decisive verdicts). The
default fit adds a prior (Beta on 2 eta - 1, Gaussian on the strengths); the plain
maximum-likelihood estimate (``prior=None``) is what the reference computes, and
``test_crowd_prior.py`` checks the penalised fit against its own reference.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from helpers import assert_close
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.optimize import minimize
from scipy.special import expit

import ratings
from ratings import _kernels, _kernels_ref
from ratings.cli import main
from ratings.crowd import crowd_covariance, crowd_terms, fit_crowd_bt
from ratings.data import aggregate

Y_OF_WINNER = {"A": 1.0, "B": 0.0, "tie": 0.5}


# ----------------------------------------------------------------------------------------------
# An independent simulator and reference implementation
# ----------------------------------------------------------------------------------------------


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


# ----------------------------------------------------------------------------------------------
# 1-2. Point estimates and covariances against the reference
# ----------------------------------------------------------------------------------------------

ETAS3 = {"j1": 0.95, "j2": 0.80, "j3": 0.65}


@pytest.fixture(scope="module")
def board():
    """8 models, 3 judges (eta 0.95 / 0.8 / 0.65), 20k verdicts, ~10 % ties, task effects."""
    return draw_board(
        11, np.linspace(-1.2, 1.5, 8), ETAS3, 20_000, n_tasks=400, tie_rate=0.12, task_sd=0.3
    )


@pytest.fixture(scope="module")
def reference(board):
    ref = Reference(board)
    z = ref.fit()
    return ref, z, ref.covariances(z)


def test_board_has_ties_and_all_judges(board):
    share = board["winner"].value_counts(normalize=True)
    assert 0.05 < share["tie"] < 0.25
    assert set(board["judge"]) == set(ETAS3)


def test_fit_matches_independent_scipy_fit(board, reference):
    ref, z, _ = reference
    theta, eta = ref.unpack(z)
    assert np.abs(ref.grad(z)).max() < 1e-8 * ref.n  # the reference is at a stationary point
    r = ratings.fit(board, model="crowd-bt", prior=None, anchor="m00", cluster=None)
    assert r.converged and list(r.models) == ref.models
    np.testing.assert_allclose(r.strength, theta, rtol=0, atol=1e-6)
    np.testing.assert_allclose(r.judges.loc[ref.judges, "eta"], eta, rtol=0, atol=1e-6)
    assert r.loglik == pytest.approx(-ref.nll(z), rel=1e-12)
    assert (r.judges["status"] == "estimated").all() and not r.judges["uninformative"].any()
    np.testing.assert_array_equal(
        r.judges.loc[ref.judges, "n"], board["judge"].value_counts().loc[ref.judges]
    )
    # The centred scale only moves the origin; clustering does not change the estimate.
    centred = ratings.fit(board, model="crowd-bt", prior=None)
    np.testing.assert_allclose(centred.strength, theta - theta.mean(), atol=1e-6)
    np.testing.assert_allclose(centred.judges["eta"], r.judges["eta"], atol=1e-9)


def test_numpy_engine_matches_numba(board):
    fast = ratings.fit(board, model="crowd-bt", prior=None, anchor="m00", engine="numba")
    slow = ratings.fit(board, model="crowd-bt", prior=None, anchor="m00", engine="numpy")
    np.testing.assert_allclose(slow.strength, fast.strength, atol=1e-10)
    np.testing.assert_allclose(slow.cov, fast.cov, rtol=1e-8, atol=1e-14)
    pd.testing.assert_frame_equal(slow.judges, fast.judges, rtol=1e-8)


@pytest.mark.parametrize(
    ("ci", "cluster", "kind"),
    [("model", None, "model"), ("sandwich", None, "hc0"), ("sandwich-z", "task_id", "cluster")],
)
def test_covariances_match_reference(board, reference, ci, cluster, kind):
    ref, _, covs = reference
    want = covs[kind]
    m = ref.m
    r = ratings.fit(board, model="crowd-bt", prior=None, anchor="m00", ci=ci, cluster=cluster)
    assert_close(r.cov[1:, 1:], want[: m - 1, : m - 1], rtol=1e-5)
    np.testing.assert_array_equal(r.cov[0], 0.0)
    se = r.judges.loc[ref.judges, "se"].to_numpy()
    np.testing.assert_allclose(se**2, np.diag(want)[m - 1 :], rtol=1e-5)
    # the textbook (CR1) cluster sandwich and HC0 use the normal quantile (the default CR2
    # is checked in test_inference.py)
    z95 = stats.norm.ppf(0.975)
    assert r.df is None and r.inference is None
    eta = r.judges.loc[ref.judges, "eta"].to_numpy()
    np.testing.assert_allclose(r.judges.loc[ref.judges, "lower"], np.clip(eta - z95 * se, 0.5, 1))
    np.testing.assert_allclose(r.judges.loc[ref.judges, "upper"], np.clip(eta + z95 * se, 0.5, 1))


@pytest.mark.parametrize("ci", ["model", "sandwich"])
def test_full_covariance_including_eta_blocks(board, reference, ci):
    """The (s, eta) covariance from the low-level functions, cross terms included."""
    _, _, covs = reference
    data = aggregate(board, cluster="task_id")
    fit = fit_crowd_bt(data, ref=0, prior=None)
    for clustered, kind in ((False, "hc0"), (True, "cluster")):
        full = crowd_covariance(fit, data, ci=ci, clustered=clustered)
        want = covs["model" if ci == "model" else kind]
        assert_close(full[np.ix_(fit.free, fit.free)], want, rtol=1e-5)
        np.testing.assert_array_equal(full[0], 0.0)


def test_fixed_eta_matches_reference(board):
    """Known etas (a mapping): strengths and their model-based covariance treat eta as given."""
    fixed = {"j1": 0.9, "j2": 0.75, "j3": 0.7}
    ref = Reference(board, fixed=fixed)
    z = ref.fit()
    r = ratings.fit(board, model="crowd-bt", prior=None, judge_quality=fixed, anchor="m00",
                    ci="model", cluster=None)  # fmt: skip
    np.testing.assert_allclose(r.strength[1:], z, atol=1e-6)
    assert_close(r.cov[1:, 1:], np.linalg.inv(ref.hessian(z)), rtol=1e-5)
    assert (r.judges["status"] == "fixed").all()
    np.testing.assert_array_equal(r.judges.loc[list(fixed), "eta"], list(fixed.values()))
    assert r.judges["se"].isna().all()
    # One judge fixed, two estimated.
    part = {"j2": 0.75}
    ref = Reference(board, fixed=part)
    z = ref.fit()
    r = ratings.fit(board, model="crowd-bt", prior=None, judge_quality=part,
                    fit_new_judges=True, anchor="m00", cluster=None)  # fmt: skip
    np.testing.assert_allclose(r.strength[1:], z[: ref.m - 1], atol=1e-6)
    np.testing.assert_allclose(r.judges.loc[["j1", "j3"], "eta"], z[ref.m - 1 :], atol=1e-6)
    assert r.judges.loc["j2", "status"] == "fixed"
    cov = ref.covariances(z)["hc0"]
    np.testing.assert_allclose(
        r.judges.loc[["j1", "j3"], "se"] ** 2, np.diag(cov)[ref.m - 1 :], rtol=1e-5
    )


# ----------------------------------------------------------------------------------------------
# 3. Recovery in simulation; eta = 1 is Bradley-Terry
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2])
def test_recovery_of_eta_and_strengths(seed):
    truth = {"good": 0.95, "fair": 0.80, "poor": 0.55}
    s = np.random.default_rng(100 + seed).normal(0.0, 0.8, 20)
    frame = draw_board(seed, s, truth, 300_000, tie_rate=0.1)
    r = ratings.fit(frame, model="crowd-bt", prior=None, anchor="m00", cluster=None)
    assert r.converged
    j = r.judges.loc[list(truth)]
    true_eta = np.array(list(truth.values()))
    assert ((j["lower"] <= true_eta) & (true_eta <= j["upper"])).all(), j
    assert (j["status"] == "estimated").all() and not j["uninformative"].any()
    # Strengths: every s_k - s_anchor within 3.5 standard errors, and a joint Wald test.
    est = r.strength[1:] - (s[1:] - s[0])
    se = np.sqrt(np.diag(r.cov)[1:])
    assert np.all(np.abs(est) < 3.5 * se)
    wald = est @ np.linalg.solve(r.cov[1:, 1:], est)
    assert wald < stats.chi2.ppf(0.999, s.size - 1)


def test_eta_one_is_bradley_terry(board):
    """With every eta fixed at 1, the plain Crowd-BT fit is the Bradley-Terry fit of the
    decisive verdicts: ties are left out of the Crowd-BT likelihood."""
    ones = dict.fromkeys(ETAS3, 1.0)
    decisive = board[board["winner"] != "tie"]
    assert decisive["task_id"].nunique() == board["task_id"].nunique()  # same clusters
    for ci, cluster in (("sandwich", None), ("sandwich", "task_id"), ("sandwich-z", "task_id"),
                        ("model", None)):  # fmt: skip
        crowd = ratings.fit(board, model="crowd-bt", prior=None, judge_quality=ones,
                            anchor="m03", ci=ci, cluster=cluster)  # fmt: skip
        bt = ratings.fit(decisive, model="bt", anchor="m03", ci=ci, cluster=cluster)
        np.testing.assert_allclose(crowd.strength, bt.strength, rtol=0, atol=1e-9)
        assert_close(crowd.cov, bt.cov, rtol=1e-9)
        # clustered sandwich: both CR2 with the same per-contrast degrees of freedom
        np.testing.assert_allclose(crowd.model_df, bt.model_df, rtol=1e-9)
        assert crowd.loglik == pytest.approx(bt.loglik, rel=1e-12)
        assert (crowd.judges["status"] == "fixed").all()
        np.testing.assert_array_equal(crowd.judges["eta"], 1.0)


def test_deterministic_judge_is_eta_one(board):
    """Forfeits are judged by "deterministic", whose eta is 1 and never estimated."""
    frame = board.copy()
    frame["failed_a"] = False
    frame["failed_b"] = False
    frame.loc[frame.index[:300], "failed_b"] = True
    frame["winner"] = frame["winner"].astype(object)
    frame.loc[frame.index[:300], "winner"] = "A"  # B failed: A wins (the flags decide)
    r = ratings.fit(frame, model="crowd-bt", prior=None, anchor="m00")
    det = r.judges.loc["deterministic"]
    assert det["status"] == "deterministic" and det["eta"] == 1.0 and np.isnan(det["se"])
    assert det["n"] == 300 and not det["uninformative"]
    # Same as fixing the deterministic judge at 1 in the reference.
    canon = frame.copy()
    canon.loc[canon["failed_b"], "winner"] = "A"
    canon.loc[canon["failed_b"], "judge"] = "deterministic"
    ref = Reference(canon, fixed={"deterministic": 1.0})
    z = ref.fit()
    np.testing.assert_allclose(r.strength[1:], z[: ref.m - 1], atol=1e-6)
    np.testing.assert_allclose(r.judges.loc[ref.free_judges, "eta"], z[ref.m - 1 :], atol=1e-6)


# ----------------------------------------------------------------------------------------------
# 4. Derivatives of crowd_terms against finite differences
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_data():
    frame = draw_board(
        5,
        [0.0, 0.6, -0.4, 1.1, -0.9, 0.3],
        {"ja": 0.9, "jb": 0.7, "jc": 0.6},
        3000,
        n_tasks=60,
        tie_rate=0.2,
        task_sd=0.2,
    )
    return aggregate(frame, cluster="task_id")


ETA_POINTS = [
    [0.5001, 0.9999, 1.0],
    [0.5, 0.75, 1.0],
    [0.9999, 0.5001, 0.62],
    [0.5, 0.5, 0.5],
    [1.0, 1.0, 1.0],
]


def _fd_steps(x, m, h):
    """Per-coordinate steps: backward-only (second order) for eta = 1, central otherwise."""
    return [(c, h, x[c] >= 1.0 and c >= m) for c in range(x.size)]


def _derivative(fun, x, c, h, one_sided):
    e = np.zeros_like(x)
    e[c] = h
    if one_sided:  # eta = 1: the box ends here; 3 f(x) - 4 f(x - h) + f(x - 2h) over 2h
        return (3 * fun(x) - 4 * fun(x - e) + fun(x - 2 * e)) / (2 * h)
    return (fun(x + e) - fun(x - e)) / (2 * h)


@pytest.mark.parametrize("k", [_kernels, _kernels_ref], ids=["numba", "numpy"])
@pytest.mark.parametrize("etas", ETA_POINTS)
@pytest.mark.parametrize("scale", [0.1, 1.0, 4.0])
def test_crowd_terms_derivatives(small_data, k, etas, scale):
    m = small_data.n_models
    theta = scale * np.random.default_rng(int(10 * scale)).standard_normal(m)
    x = np.concatenate([theta, etas])
    nll, grad, hess = crowd_terms(x, small_data, k)
    assert np.isfinite(nll) and grad.shape == (m + 3,) and hess.shape == (m + 3, m + 3)
    np.testing.assert_array_equal(hess, hess.T)

    def f(v):
        return crowd_terms(v, small_data, k)[0]

    def g(v):
        return crowd_terms(v, small_data, k)[1]

    h_scale = np.abs(grad).max()
    num_grad = np.array([_derivative(f, x, c, h, one) for c, h, one in _fd_steps(x, m, 1e-6)])
    np.testing.assert_allclose(grad, num_grad, rtol=1e-6, atol=1e-6 * max(1.0, h_scale))
    num_hess = np.column_stack(
        [_derivative(g, x, c, h, one) for c, h, one in _fd_steps(x, m, 1e-6)]
    )
    np.testing.assert_allclose(hess, num_hess, rtol=1e-5, atol=1e-5 * np.abs(hess).max())
    # The likelihood depends on strength differences only.
    np.testing.assert_allclose(grad[:m].sum(), 0.0, atol=1e-9 * max(1.0, h_scale))
    np.testing.assert_allclose(hess[:, :m].sum(axis=1), 0.0, atol=1e-9 * np.abs(hess).max())


def test_crowd_terms_at_half_and_one(small_data):
    """eta = 1/2: strengths carry no information from that judge (ties never do); eta = 1:
    the BT terms of the decisive verdicts."""
    m = small_data.n_models
    theta = np.random.default_rng(3).standard_normal(m)
    _, grad, hess = crowd_terms(np.concatenate([theta, [0.5, 0.5, 0.5]]), small_data, _kernels)
    np.testing.assert_allclose(grad[:m], 0.0, atol=1e-12)
    np.testing.assert_allclose(hess[:m, :m], 0.0, atol=1e-12)
    nll, grad, hess = crowd_terms(np.concatenate([theta, [1.0, 1.0, 1.0]]), small_data, _kernels)
    d = theta[small_data.ii] - theta[small_data.jj]
    yi, yj = small_data.wi, small_data.wj
    assert small_data.tt.sum() > 0
    bt_nll = -np.sum(yi * np.log(expit(d)) + yj * np.log(expit(-d)))
    assert nll == pytest.approx(bt_nll, rel=1e-12)
    info = (yi + yj) * expit(d) * expit(-d)
    lap = np.zeros((m, m))
    np.add.at(lap, (small_data.ii, small_data.ii), info)
    np.add.at(lap, (small_data.jj, small_data.jj), info)
    np.add.at(lap, (small_data.ii, small_data.jj), -info)
    np.add.at(lap, (small_data.jj, small_data.ii), -info)
    np.testing.assert_allclose(hess[:m, :m], lap, rtol=1e-12, atol=1e-9)


# ----------------------------------------------------------------------------------------------
# 5. Kernel parity: numba against the NumPy twins
# ----------------------------------------------------------------------------------------------

THETA_EXTREME = [-30.0, -20.0, -1e-300, 0.0, 1e-300, 20.0, 30.0]
ETA_EXTREME = [0.5, 0.5 + 1e-12, 0.5001, 0.75, 0.9999, 1.0 - 1e-12, 1.0]
crowd_thetas = st.one_of(st.floats(-30.0, 30.0), st.sampled_from(THETA_EXTREME))
crowd_etas = st.one_of(st.floats(0.5, 1.0), st.sampled_from(ETA_EXTREME))
counts = st.one_of(st.just(0.0), st.integers(0, 30).map(float), st.floats(0.0, 50.0))


@st.composite
def crowd_rows(draw, max_rows: int = 15):
    """Aggregated rows with judges and clusters, as the crowd kernels take them."""
    m = draw(st.integers(2, 6))
    nj = draw(st.integers(1, 4))
    r = draw(st.integers(1, max_rows))
    ints = st.lists
    theta = np.array(draw(ints(crowd_thetas, min_size=m, max_size=m)))
    eta = np.array(draw(ints(crowd_etas, min_size=nj, max_size=nj)))
    ii = np.array(draw(ints(st.integers(0, m - 1), min_size=r, max_size=r)), dtype=np.int64)
    shift = np.array(draw(ints(st.integers(1, m - 1), min_size=r, max_size=r)), dtype=np.int64)
    jj = (ii + shift) % m
    kk = np.array(draw(ints(st.integers(0, nj - 1), min_size=r, max_size=r)), dtype=np.int64)
    wi, wj, tt = (np.array(draw(ints(counts, min_size=r, max_size=r))) for _ in range(3))
    n_clusters = draw(st.integers(1, 4))
    cluster = np.sort(draw(ints(st.integers(0, n_clusters - 1), min_size=r, max_size=r)))
    starts = np.searchsorted(cluster, np.arange(n_clusters + 1)).astype(np.int64)
    return m, nj, theta, eta, ii, jj, kk, wi, wj, tt, starts


def assert_crowd_terms_equal(got, want) -> None:
    assert len(got) == len(want) == 9
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12, atol=1e-300)
    for a, b in zip(got[1:], want[1:], strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10 * (1.0 + np.abs(b).max()))


@settings(deadline=None, max_examples=150)
@given(rows=crowd_rows())
def test_crowd_row_terms_matches_twin(rows):
    _, _, theta, eta, ii, jj, kk, wi, wj, tt, _ = rows
    got = _kernels.crowd_row_terms(theta, eta, ii, jj, kk, wi, wj, tt)
    assert_crowd_terms_equal(got, _kernels_ref.crowd_row_terms(theta, eta, ii, jj, kk, wi, wj, tt))
    for k in (_kernels, _kernels_ref):  # Newton's steps skip the meat columns
        lean = k.crowd_row_terms(theta, eta, ii, jj, kk, wi, wj, tt, False)
        assert all(a.size == 0 for a in lean[6:])
        assert_crowd_terms_equal((*lean[:6], *got[6:]), got)
    nll, *arrays = got
    assert np.isfinite(nll) and nll >= 0.0
    for a in arrays:
        assert np.all(np.isfinite(a))
    hee, mdd, mee = arrays[4], arrays[5], arrays[7]
    assert np.all(hee >= 0.0) and np.all(mdd >= 0.0) and np.all(mee >= 0.0)


@settings(deadline=None, max_examples=100)
@given(rows=crowd_rows())
def test_crowd_assemble_and_cluster_meat_match_twins(rows):
    m, nj, theta, eta, ii, jj, kk, wi, wj, tt, starts = rows
    wdd, wde, wee = wi - 0.5 * wj + tt, wj - tt, wi * tt - 3.0  # any real weights
    assert_close(
        _kernels.crowd_assemble(m, nj, ii, jj, kk, wdd, wde, wee),
        _kernels_ref.crowd_assemble(m, nj, ii, jj, kk, wdd, wde, wee),
        rtol=1e-12,
    )
    _, gd, ge, *_ = _kernels.crowd_row_terms(theta, eta, ii, jj, kk, wi, wj, tt)
    got = _kernels.cluster_meat(m, m + nj, ii, jj, kk, gd, ge, starts)
    want = _kernels_ref.cluster_meat(m, m + nj, ii, jj, kk, gd, ge, starts)
    assert_close(got, want, rtol=1e-10)
    np.testing.assert_array_equal(got, got.T)
    assert np.linalg.eigvalsh(want).min() >= -1e-9 * max(1.0, np.abs(want).max())


@settings(deadline=None, max_examples=60)
@given(rows=crowd_rows())
def test_per_verdict_meat_is_one_cluster_per_verdict(rows):
    """The per-verdict meat rows equal the cluster meat with every verdict its own cluster."""
    m, nj, theta, eta, ii, jj, kk, wi, wj, tt, _ = rows
    wi, wj, tt = np.round(wi), np.round(wj), np.round(tt)
    *_, mdd, mde, mee = _kernels.crowd_row_terms(theta, eta, ii, jj, kk, wi, wj, tt)
    meat = _kernels.crowd_assemble(m, nj, ii, jj, kk, mdd, mde, mee)
    # Expand each row into single verdicts (one win of i, one win of j, or one tie each).
    reps = (wi + wj + tt).astype(np.int64)
    ei, ej, ek = np.repeat(ii, reps), np.repeat(jj, reps), np.repeat(kk, reps)
    kind = np.concatenate(
        [np.repeat([0, 1, 2], [int(a), int(b), int(c)]) for a, b, c in zip(wi, wj, tt, strict=True)]
        or [np.zeros(0, int)]
    )
    one = [(kind == q).astype(np.float64) for q in range(3)]
    _, gd, ge, *_ = _kernels.crowd_row_terms(theta, eta, ei, ej, ek, *one)
    starts = np.arange(reps.sum() + 1, dtype=np.int64)
    want = _kernels.cluster_meat(m, m + nj, ei, ej, ek, gd, ge, starts)
    assert_close(meat, want, rtol=1e-10)


def test_crowd_row_terms_at_eta_one_are_bt_terms():
    """With eta = 1 every crowd term is the Bradley-Terry one of the decisive verdicts (theta
    within +-30): ties are not part of the Crowd-BT likelihood."""
    theta = np.array([0.0, 30.0, -30.0, 2.5])
    ii, jj = np.array([0, 0, 1, 3, 3]), np.array([1, 2, 2, 0, 1])
    kk = np.zeros(5, dtype=np.int64)
    wi, wj, tt = (
        np.array([1.0, 0, 2, 3, 1]),
        np.array([0.0, 2, 1, 1, 0]),
        np.array([1.0, 1, 0, 2, 0]),
    )
    nll, gd, _, hdd, _, _, mdd, _, _ = _kernels.crowd_row_terms(
        theta, np.array([1.0]), ii, jj, kk, wi, wj, tt
    )
    bt_nll, score, info, meat = _kernels.bt_row_terms(theta, ii, jj, wi, wj, 0 * tt)
    assert nll == pytest.approx(bt_nll, rel=1e-13)
    np.testing.assert_allclose(gd, score, rtol=1e-12, atol=1e-12)
    no_ties = _kernels.crowd_row_terms(theta, np.array([1.0]), ii, jj, kk, wi, wj, 0 * tt)
    for a, b in zip(no_ties[1:], (gd, _, hdd, _, _, mdd, _, _), strict=True):
        if b is not _:
            np.testing.assert_array_equal(a, b)
    # (the crowd form differences two O(1) terms: absolute, not relative, accuracy in the tails)
    np.testing.assert_allclose(hdd, info, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(mdd, meat, rtol=1e-12)


def test_crowd_row_terms_at_eta_one_are_bt_terms_for_extreme_theta():
    theta = np.array([0.0, 800.0, -800.0, 1e4])
    ii, jj = np.array([0, 0, 1, 3]), np.array([1, 2, 2, 0])
    kk = np.zeros(4, dtype=np.int64)
    one = np.ones(4)
    nll, gd, _, hdd, _, _, mdd, _, _ = _kernels.crowd_row_terms(
        theta, np.array([1.0]), ii, jj, kk, one, one, one
    )
    bt_nll, score, info, meat = _kernels.bt_row_terms(theta, ii, jj, one, one, 0 * one)
    assert nll == pytest.approx(bt_nll, rel=1e-13)
    np.testing.assert_allclose(gd, score, rtol=1e-12)
    np.testing.assert_allclose(hdd, info, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(mdd, meat, rtol=1e-12)


@pytest.mark.parametrize("k", [_kernels, _kernels_ref], ids=["numba", "numpy"])
def test_crowd_kernels_zero_rows(k):
    e_i, e_f = np.zeros(0, dtype=np.int64), np.zeros(0)
    out = k.crowd_row_terms(np.zeros(3), np.array([0.8, 1.0]), e_i, e_i, e_i, e_f, e_f, e_f)
    assert out[0] == 0.0 and all(a.size == 0 for a in out[1:])
    np.testing.assert_array_equal(
        k.crowd_assemble(3, 2, e_i, e_i, e_i, e_f, e_f, e_f), np.zeros((5, 5))
    )
    starts = np.zeros(2, dtype=np.int64)
    np.testing.assert_array_equal(
        k.cluster_meat(3, 3 + 2, e_i, e_i, e_i, e_f, e_f, starts), np.zeros((5, 5))
    )


def test_crowd_py_func_versions_match_twins(rng):
    """Run the Python bodies of the crowd kernels (coverage does not see jitted code)."""
    m, nj, r = 4, 3, 14
    theta = rng.normal(scale=3.0, size=m)
    theta[0] = 30.0
    eta = np.array([0.5, 0.77, 1.0])
    ii = rng.integers(0, m, r)
    jj = (ii + rng.integers(1, m, r)) % m
    kk = rng.integers(0, nj, r)
    wi, wj, tt = (rng.integers(0, 5, r).astype(np.float64) for _ in range(3))
    wi[0] = wj[0] = tt[0] = 0.0
    starts = np.array([0, 6, 6, 14], dtype=np.int64)
    got = _kernels.crowd_row_terms.py_func(theta, eta, ii, jj, kk, wi, wj, tt)
    want = _kernels_ref.crowd_row_terms(theta, eta, ii, jj, kk, wi, wj, tt)
    assert_crowd_terms_equal(got, want)
    assert_crowd_terms_equal(_kernels.crowd_row_terms(theta, eta, ii, jj, kk, wi, wj, tt), want)
    for d in (-30.0, -1.0, 0.0, 2.0, 30.0):
        for e in (0.5, 0.9, 1.0):
            point = _kernels._crowd_point.py_func(d, e)
            assert point == pytest.approx(_kernels._crowd_point(d, e), rel=1e-14, abs=1e-300)
            p = e * expit(d) + (1 - e) * expit(-d)
            assert np.exp(point[0]) == pytest.approx(p, rel=1e-12)
            assert np.exp(point[1]) == pytest.approx(1 - p, rel=1e-12)
    _, gd, ge, hdd, hde, hee, *_ = want
    assert_close(
        _kernels.crowd_assemble.py_func(m, nj, ii, jj, kk, hdd, hde, hee),
        _kernels_ref.crowd_assemble(m, nj, ii, jj, kk, hdd, hde, hee),
        rtol=1e-13,
    )
    assert_close(
        _kernels.cluster_meat.py_func(m, m + nj, ii, jj, kk, gd, ge, starts),
        _kernels_ref.cluster_meat(m, m + nj, ii, jj, kk, gd, ge, starts),
        rtol=1e-12,
    )


# ----------------------------------------------------------------------------------------------
# 6. Judge reuse through the CLI
# ----------------------------------------------------------------------------------------------


@pytest.fixture
def judge_files(tmp_path):
    """A past log (scopes s and t) to fit etas on, and new logs with known and unknown judges."""
    s = np.linspace(-1.0, 1.0, 6)
    past = draw_board(21, s, {"j1": 0.9, "j2": 0.7}, 6000, n_tasks=100, tie_rate=0.1)
    past["scope"] = "s"
    other = draw_board(22, s, {"j1": 0.6, "j2": 0.95}, 3000, n_tasks=100)
    other["scope"] = "t"
    new = draw_board(23, s, {"j1": 0.9, "j2": 0.7}, 2000, n_tasks=50)
    new["scope"] = "s"
    with_new = draw_board(24, s, {"j1": 0.9, "j2": 0.7, "j3": 0.8}, 3000, n_tasks=50)
    with_new["scope"] = "s"
    paths = {}
    for name, frame in (
        ("past", pd.concat([past, other], ignore_index=True)),
        ("new", new),
        ("with_new", with_new),
    ):
        paths[name] = tmp_path / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    paths["frames"] = {"past": past, "new": new, "with_new": with_new}
    return paths


def _judges_json(path, scope: str, out) -> dict:
    assert main(["judges", str(path), "--scope", scope, "--out", str(out)]) == 0
    return json.loads(out.read_text())


def test_judges_cli_writes_quality_file(judge_files, tmp_path, capsys):
    out = tmp_path / "judges.json"
    doc = _judges_json(judge_files["past"], "s", out)
    assert "wrote judge quality for 2 judge(s)" in capsys.readouterr().err
    assert doc["scope"] == "s" and doc["model"] == "crowd-bt" and doc["created"]
    pd.Timestamp(doc["created"])  # parseable ISO time
    rows = pd.DataFrame(doc["judges"]).set_index("judge")
    assert {"eta", "se", "n", "lower", "upper", "status"} <= set(rows.columns)
    assert sorted(rows.index) == ["j1", "j2"]
    assert rows["n"].sum() == 6000
    # The same numbers as the API fit of that scope (task-clustered by default).
    r = ratings.fit(judge_files["frames"]["past"], model="crowd-bt")
    np.testing.assert_allclose(
        rows.loc[["j1", "j2"], "eta"], r.judges.loc[["j1", "j2"], "eta"], rtol=1e-13
    )
    np.testing.assert_allclose(
        rows.loc[["j1", "j2"], "se"], r.judges.loc[["j1", "j2"], "se"], rtol=1e-13
    )


def test_fit_reuses_judge_quality(judge_files, tmp_path, capsys):
    qual = tmp_path / "judges.json"
    doc = _judges_json(judge_files["past"], "s", qual)
    eta = {row["judge"]: row["eta"] for row in doc["judges"]}
    jout = tmp_path / "used.json"
    args = [
        "fit",
        str(judge_files["new"]),
        "--model",
        "crowd-bt",
        "--judge-quality",
        str(qual),
        "--scope",
        "s",
        "--judges-out",
        str(jout),
    ]
    capsys.readouterr()
    assert main(args) == 0
    assert "Crowd-BT" in capsys.readouterr().out
    used = pd.DataFrame(json.loads(jout.read_text())).set_index("judge")
    assert (used["status"] == "reused").all()  # with their covariance carried
    # (--judges-out writes 10 decimals; the quality file itself keeps 15)
    np.testing.assert_allclose(used.loc[list(eta), "eta"], list(eta.values()), atol=1e-10)
    se = {row["judge"]: row["se"] for row in doc["judges"]}
    np.testing.assert_allclose(used.loc[list(se), "se"], list(se.values()), atol=1e-10)
    # The API with the file uses exactly the file's etas; the strengths are the reference's
    # with eta fixed, and equal to passing the same etas as a mapping (treated as known, so
    # the intervals are narrower than with the file's covariance).
    new = judge_files["frames"]["new"]
    r = ratings.fit(new, model="crowd-bt", judge_quality=str(qual), scope="s", anchor="m00",
                    cluster=None, prior=None)  # fmt: skip
    assert r.judges["eta"].to_dict() == eta
    z = Reference(new, fixed=eta).fit()
    np.testing.assert_allclose(r.strength[1:], z, atol=1e-6)
    same = ratings.fit(new, model="crowd-bt", judge_quality=eta, anchor="m00", cluster=None,
                       prior=None)  # fmt: skip
    np.testing.assert_array_equal(same.strength, r.strength)
    assert (same.judges["status"] == "fixed").all()
    assert (np.diag(r.cov)[1:] > np.diag(same.cov)[1:]).all()


def test_unknown_judge_needs_fit_new_judges(judge_files, tmp_path, capsys):
    qual = tmp_path / "judges.json"
    doc = _judges_json(judge_files["past"], "s", qual)
    base = [
        "fit",
        str(judge_files["with_new"]),
        "--model",
        "crowd-bt",
        "--judge-quality",
        str(qual),
        "--scope",
        "s",
    ]
    capsys.readouterr()
    assert main(base) == 2
    err = capsys.readouterr().err
    assert "j3" in err and "--fit-new-judges" in err
    jout = tmp_path / "used.json"
    assert main([*base, "--fit-new-judges", "--judges-out", str(jout), "--prior", "none"]) == 0
    used = pd.DataFrame(json.loads(jout.read_text())).set_index("judge")
    assert used.loc["j3", "status"] == "estimated" and np.isfinite(used.loc["j3", "se"])
    assert (used.loc[["j1", "j2"], "status"] == "reused").all()
    fixed = {row["judge"]: row["eta"] for row in doc["judges"]}
    np.testing.assert_allclose(used.loc[["j1", "j2"], "eta"], [fixed["j1"], fixed["j2"]])
    z = Reference(judge_files["frames"]["with_new"], fixed=fixed).fit()
    assert used.loc["j3", "eta"] == pytest.approx(z[-1], abs=1e-6)


def test_quality_file_of_another_scope_is_refused(judge_files, tmp_path, capsys):
    qual = tmp_path / "judges_t.json"
    _judges_json(judge_files["past"], "t", qual)
    capsys.readouterr()
    args = [
        "fit",
        str(judge_files["new"]),
        "--model",
        "crowd-bt",
        "--judge-quality",
        str(qual),
        "--scope",
        "s",
    ]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "'t'" in err and "'s'" in err and "scope" in err
    with pytest.raises(ValueError, match="fitted on scope 't'"):
        ratings.fit(
            judge_files["frames"]["new"], model="crowd-bt", judge_quality=str(qual), scope="s"
        )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"format": "ratings.judge_quality/1", "judges": [', "Cannot read judge-quality file"),
        ("\x00\xff garbage", "Cannot read judge-quality file"),
        ('{"judges": []}', "is not a judge-quality file"),
        ("[1, 2, 3]", "is not a judge-quality file"),
        (
            '{"format": "ratings.judge_quality/1", "scope": "s", "judges": [{"eta": 0.9}]}',
            "needs 'judge' and 'eta'",
        ),
        (
            '{"format": "ratings.judge_quality/1", "scope": "s", "judges": '
            '[{"judge": "j1", "eta": 1.5}, {"judge": "j2", "eta": 0.7}]}',
            "must lie in [0.5, 1]",
        ),
    ],
)
def test_corrupt_quality_file_is_a_clear_error(judge_files, tmp_path, capsys, text, message):
    qual = tmp_path / "judges.json"
    qual.write_text(text, encoding="latin-1")
    args = [
        "fit",
        str(judge_files["new"]),
        "--model",
        "crowd-bt",
        "--judge-quality",
        str(qual),
        "--scope",
        "s",
    ]
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("ratings: error:") and message in err
    assert "Traceback" not in err


def test_missing_quality_file_is_a_clear_error(judge_files, tmp_path, capsys):
    args = [
        "fit",
        str(judge_files["new"]),
        "--model",
        "crowd-bt",
        "--judge-quality",
        str(tmp_path / "nope.json"),
        "--scope",
        "s",
    ]
    assert main(args) == 2
    assert "nope.json" in capsys.readouterr().err


def test_quality_file_of_another_scope_is_refused_without_scope_flag(judge_files, tmp_path, capsys):
    """Without --scope, the log's single scope is what the file is checked against."""
    qual = tmp_path / "judges_t.json"
    _judges_json(judge_files["past"], "t", qual)
    capsys.readouterr()
    args = ["fit", str(judge_files["new"]), "--model", "crowd-bt", "--judge-quality", str(qual)]
    assert main(args) == 2  # new.csv holds scope 's' only
    err = capsys.readouterr().err
    assert "scope 't'" in err and "'s'" in err


def test_non_numeric_eta_is_an_error(judge_files, tmp_path, capsys):
    qual = tmp_path / "judges.json"
    doc = {
        "format": "ratings.judge_quality/1",
        "scope": "s",
        "judges": [{"judge": "j1", "eta": "abc"}, {"judge": "j2", "eta": 0.7}],
    }
    qual.write_text(json.dumps(doc))
    args = ["fit", str(judge_files["new"]), "--model", "crowd-bt", "--judge-quality", str(qual)]
    assert main([*args, "--scope", "s"]) == 2
    assert "abc" in capsys.readouterr().err


def test_non_scalar_eta_is_a_clear_error(judge_files, tmp_path, capsys):
    qual = tmp_path / "judges.json"
    doc = {
        "format": "ratings.judge_quality/1",
        "scope": "s",
        "judges": [{"judge": "j1", "eta": {"x": 1}}, {"judge": "j2", "eta": 0.7}],
    }
    qual.write_text(json.dumps(doc))
    args = ["fit", str(judge_files["new"]), "--model", "crowd-bt", "--judge-quality", str(qual)]
    assert main([*args, "--scope", "s"]) == 2
    err = capsys.readouterr().err
    assert "'j1'" in err and "must be a number in [0.5, 1]" in err


def test_deterministic_judge_cannot_be_overridden(board):
    """A judge-quality entry for "deterministic" never changes its eta = 1."""
    frame = board.copy()
    frame["failed_a"] = False
    frame["failed_b"] = False
    frame.loc[frame.index[:300], "failed_b"] = True
    frame["winner"] = frame["winner"].astype(object)
    frame.loc[frame.index[:300], "winner"] = "A"  # B failed: A wins (the flags decide)
    quality = {"j1": 0.9, "j2": 0.8, "j3": 0.7, "deterministic": 0.6}
    try:
        r = ratings.fit(frame, model="crowd-bt", judge_quality=quality)
    except ValueError:
        return  # refusing the entry is fine too
    assert r.judges.loc["deterministic", "eta"] == 1.0


# ----------------------------------------------------------------------------------------------
# 7. Uninformative and boundary judges
# ----------------------------------------------------------------------------------------------


def test_coin_flip_judge_is_uninformative():
    frame = draw_board(
        31, np.linspace(-1.5, 1.5, 8), {"good": 0.9, "ok": 0.8, "coin": 0.5}, 30_000, tie_rate=0.1
    )
    r = ratings.fit(frame, model="crowd-bt", prior=None, cluster=None)
    j = r.judges
    assert bool(j.loc["coin", "uninformative"])
    assert j.loc["coin", "lower"] == 0.5 and j.loc["coin", "eta"] < 0.56
    assert not j.loc[["good", "ok"], "uninformative"].any()
    assert (j.loc[["good", "ok"], "status"] == "estimated").all()


@pytest.mark.parametrize("seed", [6, 7])
def test_always_right_judge_is_on_the_boundary(seed):
    """A judge that never flips the order (true eta = 1) among noisy ones. Its MLE sits on the
    bound eta = 1 for some seeds; these two do (checked against the reference). The plain
    maximum-likelihood fit reports it with status "boundary" and no standard error, without a
    crash; the default (penalised) fit keeps it inside (1/2, 1) with a standard error."""
    s = np.linspace(-1.5, 1.5, 8)
    frame = draw_board(seed, s, {"noisy1": 0.8, "noisy2": 0.7, "oracle": 1.0}, 20_000, tie_rate=0.1)
    for ci in ("sandwich", "model"):
        r = ratings.fit(frame, model="crowd-bt", prior=None, anchor="m00", ci=ci)
        assert r.converged
        o = r.judges.loc["oracle"]
        assert o["eta"] == 1.0 and o["status"] == "boundary"
        assert np.isnan(o["se"]) and not o["uninformative"]
        assert (r.judges.loc[["noisy1", "noisy2"], "status"] == "estimated").all()
        assert np.all(np.isfinite(r.strength)) and np.all(np.isfinite(r.cov))
        assert np.all(np.diag(r.cov)[1:] > 0)
    # The bound is the constrained maximum: the reference with eta_oracle fixed at 1 has the
    # same optimum, and there the gradient of the nll in eta_oracle points out of the box.
    ref = Reference(frame, fixed={"oracle": 1.0})
    z = ref.fit()
    np.testing.assert_allclose(r.strength[1:], z[: ref.m - 1], atol=1e-6)
    np.testing.assert_allclose(r.judges.loc[ref.free_judges, "eta"], z[ref.m - 1 :], atol=1e-6)
    free = Reference(frame)
    theta, eta = ref.unpack(z)
    zz = np.concatenate([theta[1:], [eta[ref.judges.index(j)] for j in free.free_judges]])
    assert free.grad(zz)[ref.m - 1 + free.free_judges.index("oracle")] < 0
    # Model-based covariance of the strengths: the inverse Hessian with that eta held known.
    r = ratings.fit(frame, model="crowd-bt", prior=None, anchor="m00", ci="model", cluster=None)
    hess = ref.hessian(z)
    assert_close(r.cov[1:, 1:], np.linalg.inv(hess)[: ref.m - 1, : ref.m - 1], rtol=1e-5)
    default = ratings.fit(frame, model="crowd-bt", anchor="m00").judges.loc["oracle"]
    assert default["status"] == "estimated" and 0.97 < default["eta"] < 1.0
    assert 0 < default["se"] < 0.05 and default["upper"] == 1.0  # its interval reaches 1


def test_perfectly_separating_judge_gives_a_clear_error(tmp_path, capsys):
    """Verdicts of one judge that always name the truly stronger model (no upset at all): the
    likelihood increases without bound along s -> t s_true with eta_oracle = 1, so no MLE
    exists. The plain fit raises a NonIdentifiableError saying so, not a numerical crash; the
    default (penalised) fit and fixing eta both give finite estimates."""
    s = np.linspace(-1.5, 1.5, 8)
    frame = draw_board(32, s, {"noisy1": 0.8, "noisy2": 0.7}, 20_000, tie_rate=0.1)
    oracle = draw_board(33, s, {"oracle": 1.0}, 4000)
    i = oracle["model_a"].str[1:].astype(int).to_numpy()
    j = oracle["model_b"].str[1:].astype(int).to_numpy()
    oracle["winner"] = np.where(s[i] > s[j], "A", "B").astype(object)
    frame = pd.concat([frame, oracle], ignore_index=True)
    with pytest.raises(ratings.NonIdentifiableError, match="does not exist"):
        ratings.fit(frame, model="crowd-bt", prior=None, anchor="m00")
    path = tmp_path / "sep.csv"
    frame.to_csv(path, index=False)
    assert main(["fit", str(path), "--model", "crowd-bt", "--prior", "none"]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "--prior default" in err
    assert main(["fit", str(path), "--model", "crowd-bt"]) == 0
    default = ratings.fit(frame, model="crowd-bt", anchor="m00")
    assert np.all(np.isfinite(default.strength)) and np.all(np.isfinite(default.cov))
    assert default.judges.loc["oracle", "eta"] > 0.98
    r = ratings.fit(frame, model="crowd-bt", prior=None,
                    judge_quality={"noisy1": 0.8, "noisy2": 0.7, "oracle": 0.99})  # fmt: skip
    assert r.converged and np.all(np.isfinite(r.strength))


# ----------------------------------------------------------------------------------------------
# 8. The mirror branch (s, eta) -> (-s, 1 - eta) is never taken
# ----------------------------------------------------------------------------------------------


def test_weak_judges_stay_on_the_right_branch():
    """All judges barely better than coin flips: the BT start is strongly attenuated. Every
    judge's interval reaches 1/2, so the spread of the ratings is not identified: a warning
    naming the judges and the remedy, and open intervals."""
    truth = np.linspace(-1.5, 1.5, 10)
    etas = {"a": 0.56, "b": 0.57, "c": 0.58}
    frame = draw_board(41, truth, etas, 40_000, tie_rate=0.1)
    judges_and_remedy = r"\['a', 'b', 'c'\].*not identified.*`judge_quality`"
    with pytest.warns(ratings.JudgeWarning, match=judges_and_remedy):
        r = ratings.fit(frame, model="crowd-bt", prior=None, anchor="m00", cluster=None)
    assert r.converged and r.judges["uninformative"].all() and r.crowd.open_intervals
    assert np.isinf(r.se.drop("m00")).all() and r.se["m00"] == 0
    assert np.isinf(r.conf_int()["upper"].drop("m00")).all()
    assert (r.judges["eta"] > 0.5).all()
    assert np.corrcoef(r.strength, truth)[0, 1] > 0.9
    # It is the global optimum of the box-constrained likelihood: the reference started at the
    # truth and at the mirrored truth finds nothing better. (From the mirrored start the box
    # leads to the plateau eta = 1/2, where every verdict has probability 1/2.)
    ref = Reference(frame)
    best = np.inf
    for start in (truth[1:] - truth[0], -(truth[1:] - truth[0])):
        z = ref.fit(np.concatenate([start, [0.7, 0.7, 0.7]]), polish=False)
        best = min(best, ref.nll(z))
    assert -r.loglik <= best + 1e-6
    assert -r.loglik < ref.n * np.log(2) - 50  # a likelihood-ratio statistic of over 100


def test_adversarial_minority_judge_is_held_at_one_half():
    """A judge that mostly reports the wrong order (true eta 0.2) cannot flip the board: its eta
    is held at the bound 1/2, flagged uninformative, and the strengths keep the true order."""
    truth = np.linspace(-1.5, 1.5, 10)
    frame = draw_board(42, truth, {"bad": 0.2, "good": 0.9}, 30_000, tie_rate=0.1)
    r = ratings.fit(frame, model="crowd-bt", prior=None, anchor="m00")
    assert r.converged
    bad = r.judges.loc["bad"]
    assert bad["eta"] == 0.5 and bad["status"] == "boundary" and bool(bad["uninformative"])
    assert r.judges.loc["good", "status"] == "estimated"
    assert r.judges.loc["good", "lower"] <= 0.9 <= r.judges.loc["good", "upper"]
    assert np.corrcoef(r.strength, truth)[0, 1] > 0.99
    # With the bad judge at 1/2 the fit is the fit of the good judge's verdicts alone (which
    # warns that one judge decides them all).
    with pytest.warns(ratings.JudgeWarning, match="Only one judge \\('good'\\)"):
        good = ratings.fit(frame[frame["judge"] == "good"], model="crowd-bt", prior=None,
                           anchor="m00")  # fmt: skip
    np.testing.assert_allclose(r.strength, good.strength, atol=1e-8)


@pytest.mark.parametrize(("seed", "exists"), [(51, True), (52, False), (53, True)])
def test_eta_never_below_one_half(seed, exists):
    """Small noisy boards with random strengths and etas: the default fit always has an
    estimate, with every eta strictly inside (1/2, 1); the plain maximum-likelihood estimate,
    where it exists, keeps every eta in [1/2, 1] and is the box's optimum."""
    rng = np.random.default_rng(seed)
    etas = dict(zip(["x", "y", "z"], rng.uniform(0.5, 1.0, 3), strict=True))
    frame = draw_board(seed, rng.normal(0, 0.5, 6), etas, 1500, n_tasks=40, tie_rate=0.2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ratings.JudgeWarning)  # judges with few verdicts
        default = ratings.fit(frame, model="crowd-bt")
    eta = default.judges["eta"]
    assert default.converged and ((eta > 0.5) & (eta < 1.0)).all()
    if not exists:
        with pytest.raises(ratings.NonIdentifiableError, match="does not exist"):
            ratings.fit(frame, model="crowd-bt", prior=None)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ratings.JudgeWarning)
        r = ratings.fit(frame, model="crowd-bt", prior=None)
    assert r.converged
    eta = r.judges["eta"]
    assert ((eta >= 0.5) & (eta <= 1.0)).all()
    # No better point in the box: the reference from the truth does not beat it.
    ref = Reference(frame)
    start = np.concatenate([np.zeros(5), [0.75, 0.75, 0.75]])
    z = ref.fit(start, polish=False)
    assert -r.loglik <= ref.nll(z) + 1e-6
