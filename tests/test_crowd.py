"""Crowd-BT: the fit against an independent scipy implementation, covariances against numerical
Hessians and per-verdict scores, recovery in simulation, eta = 1 as Bradley-Terry, and the
deterministic judge.

The reference (:mod:`crowd_reference`) shares no code with :mod:`ratings`: verdicts are drawn
by :func:`~crowd_reference.draw_board`, the negative log-likelihood, per-verdict scores and
Hessian are computed on raw verdict rows with NumPy, and the optimum is found with
:func:`scipy.optimize.minimize`.
Model: P(i beats j | judge k, decisive) = eta_k sigma(s_i - s_j) + (1 - eta_k) sigma(s_j - s_i),
eta in [1/2, 1]; ties are not part of the likelihood (it conditions on decisive verdicts). The
default fit adds a prior (Beta on 2 eta - 1, Gaussian on the strengths); the plain
maximum-likelihood estimate (``prior=None``) is what the reference computes, and
``test_crowd_prior.py`` checks the penalised fit against its own reference.

More Crowd-BT tests: derivatives and kernel parity in ``test_crowd_kernels.py``, judge reuse
through the CLI in ``test_crowd_judge_reuse.py``, uninformative and boundary judges and the
mirror symmetry in ``test_crowd_boundary.py``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from crowd_reference import Reference, draw_board
from helpers import assert_close
from scipy import stats

import ratings
from ratings.data.comparisons import aggregate
from ratings.models.covariates import pair_built
from ratings.models.crowd.likelihood import fit_crowd_bt

# ----------------------------------------------------------------------------------------------
# Point estimates and covariances against the reference
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
    r = ratings.fit(board, model=ratings.CrowdBT(prior=None), anchor="m00", cluster=None)
    assert r.converged and list(r.models) == ref.models
    np.testing.assert_allclose(r.strength, theta, rtol=0, atol=1e-6)
    np.testing.assert_allclose(r.judges.loc[ref.judges, "eta"], eta, rtol=0, atol=1e-6)
    assert r.loglik == pytest.approx(-ref.nll(z), rel=1e-12)
    assert (r.judges["status"] == "estimated").all() and not r.judges["uninformative"].any()
    np.testing.assert_array_equal(
        r.judges.loc[ref.judges, "n"], board["judge"].value_counts().loc[ref.judges]
    )
    # The centred scale only moves the origin; clustering does not change the estimate.
    centred = ratings.fit(board, model=ratings.CrowdBT(prior=None))
    np.testing.assert_allclose(centred.strength, theta - theta.mean(), atol=1e-6)
    np.testing.assert_allclose(centred.judges["eta"], r.judges["eta"], atol=1e-9)


def test_numpy_engine_matches_numba(board):
    fast = ratings.fit(
        board,
        model=ratings.CrowdBT(prior=None),
        solver=ratings.Solver(engine="numba"),
        anchor="m00",
    )
    slow = ratings.fit(
        board,
        model=ratings.CrowdBT(prior=None),
        solver=ratings.Solver(engine="numpy"),
        anchor="m00",
    )
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
    r = ratings.fit(board, model=ratings.CrowdBT(prior=None), anchor="m00", ci=ci, cluster=cluster)
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
        full = pair_built(fit, data, "model" if ci == "model" else "sandwich-z",
                          clustered=clustered).cov  # fmt: skip
        want = covs["model" if ci == "model" else kind]
        assert_close(full[np.ix_(fit.free, fit.free)], want, rtol=1e-5)
        np.testing.assert_array_equal(full[0], 0.0)


def test_fixed_eta_matches_reference(board):
    """Known etas (a mapping): strengths and their model-based covariance treat eta as given."""
    fixed = {"j1": 0.9, "j2": 0.75, "j3": 0.7}
    ref = Reference(board, fixed=fixed)
    z = ref.fit()
    r = ratings.fit(board, model=ratings.CrowdBT(prior=None, judge_quality=fixed), anchor="m00",
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
    r = ratings.fit(
        board,
        model=ratings.CrowdBT(prior=None, judge_quality=part, fit_new_judges=True),
        anchor="m00",
        cluster=None,
    )
    np.testing.assert_allclose(r.strength[1:], z[: ref.m - 1], atol=1e-6)
    np.testing.assert_allclose(r.judges.loc[["j1", "j3"], "eta"], z[ref.m - 1 :], atol=1e-6)
    assert r.judges.loc["j2", "status"] == "fixed"
    cov = ref.covariances(z)["hc0"]
    np.testing.assert_allclose(
        r.judges.loc[["j1", "j3"], "se"] ** 2, np.diag(cov)[ref.m - 1 :], rtol=1e-5
    )


# ----------------------------------------------------------------------------------------------
# Recovery in simulation; eta = 1 is Bradley-Terry
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2])
def test_recovery_of_eta_and_strengths(seed):
    truth = {"good": 0.95, "fair": 0.80, "poor": 0.55}
    s = np.random.default_rng(100 + seed).normal(0.0, 0.8, 20)
    frame = draw_board(seed, s, truth, 300_000, tie_rate=0.1)
    r = ratings.fit(frame, model=ratings.CrowdBT(prior=None), anchor="m00", cluster=None)
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
        crowd = ratings.fit(board, model=ratings.CrowdBT(prior=None, judge_quality=ones),
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
    r = ratings.fit(frame, model=ratings.CrowdBT(prior=None), anchor="m00")
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
        r = ratings.fit(frame, model=ratings.CrowdBT(judge_quality=quality))
    except ValueError:
        return  # refusing the entry is fine too
    assert r.judges.loc["deterministic", "eta"] == 1.0
