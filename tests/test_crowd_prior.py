"""The default Crowd-BT fit (weak priors), reused judge quality (two-step variance), ties.

Checked against code written here: the penalised objective, its minimiser (scipy) and its
covariance (finite-difference Hessians, per-verdict scores summed by task) are computed on raw
verdict rows by :class:`PenalisedReference`, which extends the independent reference of
:mod:`crowd_reference`; the two-step covariance is assembled from finite differences of that
reference's gradient in the reused etas.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from crowd_reference import Reference, draw_board
from helpers import assert_close
from scipy.optimize import minimize

import ratings
from ratings.cli.app import main
from ratings.data.comparisons import aggregate
from ratings.models.crowd.likelihood import PRIOR_SHIFT_LIMIT, first_order_move, fit_crowd_bt
from ratings.models.crowd.prior import DEFAULT_PRIOR, CrowdPrior, check_prior
from ratings.models.crowd.quality import load_judge_quality
from ratings.scopes.judge_files import save_judge_quality

ETAS = {"j1": 0.95, "j2": 0.80, "j3": 0.65}


class PenalisedReference(Reference):
    """The reference plus the default prior: a ridge (s - mean s)^2 / (2 sd^2) over all models
    (the anchor's strength is 0) and -(a log u + b log(1 - u)), u = 2 eta - 1, per free judge."""

    def __init__(self, frame, fixed=None, prior: CrowdPrior = DEFAULT_PRIOR) -> None:
        super().__init__(frame, fixed)
        self.pa, self.pb, self.lam = prior.agree, prior.flip, 1.0 / prior.strength_sd**2

    def _split(self, z):
        s = np.concatenate([[0.0], z[: self.m - 1]])
        return s - s.mean(), 2.0 * z[self.m - 1 :] - 1.0

    def ridge(self, z) -> float:
        c, _ = self._split(z)
        return 0.5 * self.lam * float(c @ c)

    def beta(self, z) -> float:
        _, u = self._split(z)
        return -float(np.sum(self.pa * np.log(u) + self.pb * np.log1p(-u)))

    def nll(self, z) -> float:
        return super().nll(z) + self.ridge(z) + self.beta(z)

    def grad(self, z):
        c, u = self._split(z)
        g = super().grad(z)
        g[: self.m - 1] += self.lam * c[1:]  # d/ds_k of the ridge (the centring cancels)
        g[self.m - 1 :] += -2.0 * (self.pa / u - self.pb / (1.0 - u))
        return g

    def information(self, z, h: float = 1e-5):
        """Finite-difference Hessian of the likelihood plus the ridge (not the Beta prior)."""
        beta_free = PenalisedReference.__new__(PenalisedReference)
        beta_free.__dict__ |= self.__dict__ | {"pa": 0.0, "pb": 0.0}
        return Reference.hessian(beta_free, z, h)

    def fit(self, z0=None, *, polish: bool = True):
        if z0 is None:
            z0 = np.concatenate([np.zeros(self.m - 1), np.full(self.n_free_eta, 0.8)])
        bounds = [(None, None)] * (self.m - 1) + [(0.5 + 1e-9, 1.0 - 1e-9)] * self.n_free_eta
        res = minimize(lambda z: self.nll(z) / self.n, z0, jac=lambda z: self.grad(z) / self.n,
                       method="L-BFGS-B", bounds=bounds,
                       options={"ftol": 1e-16, "gtol": 1e-12, "maxiter": 20000})  # fmt: skip
        z = res.x
        for _ in range(3 if polish else 0):
            z = z - np.linalg.solve(self.hessian(z), self.grad(z))
        return z

    def sandwich(self, z, bread=None):
        """Task-clustered sandwich G/(G-1) H^-1 (sum_c g_c g_c^T) H^-1 of the likelihood's
        per-verdict scores, H = :meth:`information` unless ``bread`` is given."""
        bread = np.linalg.inv(self.information(z)) if bread is None else bread
        g = np.zeros((self.task.max() + 1, self.size))
        np.add.at(g, self.task, self.scores(z))
        n_g = g.shape[0]
        return bread @ (g.T @ g) @ bread * (n_g / (n_g - 1))


@pytest.fixture(scope="module")
def board():
    """8 models, 3 judges, 6,000 verdicts on 150 tasks, 10% ties, task effects."""
    return draw_board(3, np.linspace(-1.2, 1.5, 8), ETAS, 6000, n_tasks=150, tie_rate=0.1,
                      task_sd=0.3)  # fmt: skip


@pytest.fixture(scope="module")
def reference(board):
    ref = PenalisedReference(board)
    z = ref.fit()
    return ref, z


# ----------------------------------------------------------------------------------------------
# The penalised fit and its joint covariance
# ----------------------------------------------------------------------------------------------


def test_default_fit_matches_penalised_reference(board, reference):
    ref, z = reference
    assert np.abs(ref.grad(z)).max() < 1e-8 * ref.n
    theta, eta = ref.unpack(z)
    r = ratings.fit(board, model="crowd-bt", anchor="m00")
    np.testing.assert_allclose(r.strength, theta, atol=1e-6)
    np.testing.assert_allclose(r.judges.loc[ref.judges, "eta"], eta, atol=1e-6)
    # the reported log-likelihood is the likelihood's, without the prior
    assert r.loglik == pytest.approx(-Reference.nll(ref, z), rel=1e-10)
    assert r.crowd.prior == DEFAULT_PRIOR and (r.judges["status"] == "estimated").all()


def test_joint_covariance_matches_finite_difference_sandwich(board, reference):
    """Strengths, etas and their cross terms: H^-1 B H^-1 with H the finite-difference
    Hessian of likelihood plus ridge, B from the per-verdict scores summed by task."""
    ref, z = reference
    want = ref.sandwich(z)
    r = ratings.fit(board, model="crowd-bt", anchor="m00", ci="sandwich-z")  # CR1
    m = ref.m
    assert_close(r.cov[1:, 1:], want[: m - 1, : m - 1], rtol=1e-4)
    eta_cov = r.crowd.eta_cov.loc[ref.judges, ref.judges].to_numpy()
    assert_close(eta_cov, want[m - 1 :, m - 1 :], rtol=1e-4)
    np.testing.assert_allclose(r.judges.loc[ref.judges, "se"] ** 2, np.diag(want)[m - 1 :],
                               rtol=1e-4)  # fmt: skip
    # Counting the Beta prior's curvature as information would give narrower intervals.
    narrow = ref.sandwich(z, np.linalg.inv(ref.hessian(z)))
    assert (np.diag(narrow)[m - 1 :] < 0.95 * np.diag(want)[m - 1 :]).any()


def test_prior_shrinks_like_one_over_n():
    """The prior's pull on the estimate vanishes as data grow: on a board of 200,000 verdicts
    (8 models, judges 0.95 / 0.80 / 0.65) the default fit is within 1 Elo and 0.005 eta of the
    plain maximum-likelihood fit, and the distance falls roughly like 1/N from 20,000."""
    s = np.linspace(-1.5, 1.5, 8)
    gaps = []
    for n in (20_000, 200_000):
        frame = draw_board(5, s, ETAS, n, n_tasks=400, tie_rate=0.1)
        plain = ratings.fit(frame, model=ratings.CrowdBT(prior=None), cluster=None)
        default = ratings.fit(frame, model="crowd-bt", cluster=None)
        gaps.append((np.abs(default.elo - plain.elo).max(),
                     np.abs(default.judges["eta"] - plain.judges["eta"]).max()))  # fmt: skip
    (elo_small, eta_small), (elo_big, eta_big) = gaps
    assert elo_big < 1.0 and eta_big < 0.005, gaps
    assert elo_big < elo_small / 4 and eta_big < eta_small / 4, gaps


@pytest.mark.parametrize("seed", [6, 9])
def test_default_is_the_mle_on_a_regular_board_of_30000(seed):
    """30,000 verdicts whose plain fit is regular (every eta and its interval inside (1/2, 1)):
    the default is the plain maximum-likelihood estimate, within 1 Elo and 0.005 eta of an
    independent scipy fit of the likelihood."""
    s = np.linspace(-1.5, 1.5, 8)
    frame = draw_board(seed, s, ETAS, 30_000, n_tasks=400, tie_rate=0.1)
    r = ratings.fit(frame, model="crowd-bt", anchor="m00")
    assert not r.crowd.prior_used
    assert (r.judges["lower"] > 0.5).all() and (r.judges["upper"] < 1.0).all()
    ref = Reference(frame)
    z = ref.fit()
    theta, eta = ref.unpack(z)
    elo = 400.0 / np.log(10.0) * theta  # ref.models[0] == "m00", pinned at 0
    assert np.abs(r.elo[ref.models].to_numpy() - 1000.0 - elo).max() < 1.0
    assert np.abs(r.judges.loc[ref.judges, "eta"].to_numpy() - eta).max() < 0.005


@pytest.mark.parametrize("seed", [10, 29])
def test_a_regular_plain_estimate_the_prior_moves_far_gives_way_to_the_posterior_mode(seed):
    """2,000 verdicts, 30 models (seeds found by search): the plain estimate is regular (every
    eta and its clustered Wald interval inside (1/2, 1), by the independent reference), but the
    posterior mode (the penalised reference) lies more than half a standard error away from it
    for some strength against the mean or some eta. The default is then the posterior mode and
    says by how much, in the plain estimate's standard errors."""
    frame = draw_board(seed, np.linspace(-1.7, 1.7, 30), {"a": 0.95, "b": 0.88, "c": 0.80},
                       2000, n_tasks=100, tie_rate=0.1, task_sd=0.3)  # fmt: skip
    plain = Reference(frame)
    zp = plain.fit()
    m, k = plain.m, len(plain.judges)
    theta_p, eta_p = plain.unpack(zp)
    cov = np.zeros((m + k, m + k))
    cov[1:, 1:] = plain.covariances(zp)["cluster"]  # the anchor m00 has no variance
    se_eta = np.sqrt(np.diag(cov)[m:])
    assert np.all(eta_p - 1.96 * se_eta > 0.5) and np.all(eta_p + 1.96 * se_eta < 1.0)
    post = PenalisedReference(frame)
    theta_q, eta_q = post.unpack(post.fit())
    s = cov[:m, :m]
    sd = np.sqrt(np.diag(s) - 2.0 * s.mean(axis=1) + s.mean())  # of s_i - mean(s)
    move = (theta_q - theta_q.mean()) - (theta_p - theta_p.mean())
    shift = max(np.max(np.abs(move) / sd), np.max(np.abs(eta_q - eta_p) / se_eta))
    assert shift > PRIOR_SHIFT_LIMIT
    r = ratings.fit(frame, model="crowd-bt", anchor="m00")
    assert r.crowd.prior_used and r.crowd.plain_found and r.crowd.plain_on_bound == ()
    assert r.crowd.prior_shift == pytest.approx(shift, rel=1e-3)
    np.testing.assert_allclose(r.strength, theta_q, atol=1e-6)
    np.testing.assert_allclose(r.judges.loc[plain.judges, "eta"], eta_q, atol=1e-6)
    line = next(x for x in r.summary().splitlines() if x.startswith("Estimate: "))
    assert line.startswith("Estimate: posterior mode") and f"{shift:.1f} standard errors" in line


def test_one_judge_keeps_a_regular_plain_estimate_the_prior_would_move():
    """One judge (0.88), 2,000 verdicts, 30 models (seed found by search): the plain estimate
    is regular and the posterior mode lies more than half a standard error from it, but with a
    single estimated eta the default stays the plain estimate (the posterior mode's profile
    widening would over-cover; docs/crowd.md)."""
    frame = draw_board(0, np.linspace(-1.7, 1.7, 30), {"a": 0.88}, 2000, n_tasks=100,
                       tie_rate=0.1, task_sd=0.3)  # fmt: skip
    plain = Reference(frame)
    zp = plain.fit()
    m = plain.m
    theta_p, eta_p = plain.unpack(zp)
    cov = np.zeros((m + 1, m + 1))
    cov[1:, 1:] = plain.covariances(zp)["cluster"]
    assert 0.5 < eta_p[0] - 1.96 * np.sqrt(cov[m, m]) and eta_p[0] + 1.96 * np.sqrt(cov[m, m]) < 1
    post = PenalisedReference(frame)
    theta_q, eta_q = post.unpack(post.fit())
    s = cov[:m, :m]
    sd = np.sqrt(np.diag(s) - 2.0 * s.mean(axis=1) + s.mean())
    move = (theta_q - theta_q.mean()) - (theta_p - theta_p.mean())
    assert max(np.max(np.abs(move) / sd), abs(eta_q[0] - eta_p[0]) / np.sqrt(cov[m, m])) > 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ratings.JudgeWarning)  # the one-judge warning
        r = ratings.fit(frame, model="crowd-bt", anchor="m00")
    assert not r.crowd.prior_used and np.isnan(r.crowd.prior_shift)
    np.testing.assert_allclose(r.strength, theta_p, atol=1e-6)


def test_first_order_move_of_the_prior_matches_the_posterior_mode_on_a_large_board():
    """The screen that spares the posterior-mode fit on large boards: one Newton step of the
    penalised objective from the plain maximum against the move between the independent
    reference's plain and penalised fits (30,000 verdicts, where the move is small)."""
    frame = draw_board(6, np.linspace(-1.5, 1.5, 8), ETAS, 30_000, n_tasks=400, tie_rate=0.1)
    plain, post = Reference(frame), PenalisedReference(frame)
    zp = plain.fit()
    want = post.fit(zp) - zp  # (strengths but m00's, etas)
    fit = fit_crowd_bt(aggregate(frame, cluster="task_id"), ref=0, prior=None)
    move = first_order_move(fit, DEFAULT_PRIOR)
    got = np.concatenate([move[1:plain.m], move[plain.m:]])
    assert np.abs(want).max() > 1e-3  # the prior does move it
    np.testing.assert_allclose(got, want, atol=0.05 * np.abs(want).max())


@pytest.mark.parametrize("seed", [5, 6])
def test_an_estimate_wherever_bradley_terry_has_one(seed):
    """Small sparse boards (30 models, 2,000 verdicts; seeds found by search) whose plain
    Crowd-BT likelihood has no maximum (a strong model's losses are all explained as judge
    flips, its strength runs off) while the Bradley-Terry estimate exists: the default fit
    gives finite ratings and intervals."""
    frame = draw_board(seed, np.linspace(-1.7, 1.7, 30), {"a": 0.95, "b": 0.88, "c": 0.80},
                       2000, n_tasks=100, tie_rate=0.1, task_sd=0.3)  # fmt: skip
    ratings.fit(frame)  # Bradley-Terry exists
    with pytest.raises(ratings.NonIdentifiableError, match="does not exist"):
        ratings.fit(frame, model=ratings.CrowdBT(prior=None))
    r = ratings.fit(frame, model="crowd-bt", anchor="m15")
    assert r.converged and np.isfinite(r.strength).all() and np.isfinite(r.cov).all()
    assert (r.se.drop("m15") > 0).all() and (r.judges["status"] == "estimated").all()
    assert (r.elo.max() - r.elo.min()) < 2000  # nothing ran off


# ----------------------------------------------------------------------------------------------
# Ties: eta means the same at any tie rate
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tie_fits():
    """100,000 verdicts each, 12 models, ties at rate 0 and 0.3 (independent of the pair)."""
    s = np.linspace(-1.8, 1.8, 12)
    out = {}
    for tau in (0.0, 0.3):
        frame = draw_board(61, s, ETAS, 100_000, n_tasks=500, tie_rate=tau)
        out[tau] = (frame, ratings.fit(frame, model="crowd-bt", cluster=None))
    return out


def test_eta_is_the_same_at_any_tie_rate(tie_fits):
    (f0, r0), (f3, r3) = tie_fits[0.0], tie_fits[0.3]
    assert (f0["winner"] == "tie").mean() == 0 and 0.28 < (f3["winner"] == "tie").mean() < 0.32
    truth = pd.Series(ETAS)
    eta0, eta3 = r0.judges["eta"][truth.index], r3.judges["eta"][truth.index]
    np.testing.assert_allclose(eta0, truth, atol=0.03)
    np.testing.assert_allclose(eta3, truth, atol=0.03)
    np.testing.assert_allclose(eta3, eta0, atol=0.03)
    # ties are counted per judge but not fitted
    assert r3.judges["ties"].sum() == (f3["winner"] == "tie").sum()
    assert (r3.judges["n"] - r3.judges["ties"]).sum() == (f3["winner"] != "tie").sum()


def test_ties_neither_fit_nor_move_the_strengths(tie_fits):
    """The same verdicts with ties added give the same fit (the likelihood conditions on
    decisive verdicts); the model's tie counts still appear in its table."""
    frame, r3 = tie_fits[0.3]
    decisive = frame[frame["winner"] != "tie"]
    r = ratings.fit(decisive, model="crowd-bt", cluster=None)
    np.testing.assert_allclose(r3.strength, r.strength, atol=1e-10)
    np.testing.assert_allclose(r3.judges["eta"], r.judges["eta"], atol=1e-12)
    assert r3.to_frame()["ties"].sum() == 2 * (frame["winner"] == "tie").sum()


# ----------------------------------------------------------------------------------------------
# Judge quality reused from a file: the two-step variance
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def past_and_new(tmp_path_factory):
    s = np.linspace(-1.2, 1.5, 8)
    past = draw_board(70, s, ETAS, 8000, n_tasks=200, tie_rate=0.1, task_sd=0.3)
    new = draw_board(71, s, ETAS, 3000, n_tasks=80, tie_rate=0.1, task_sd=0.3)
    fit = ratings.fit(past, model="crowd-bt", anchor="m00")
    path = tmp_path_factory.mktemp("judges") / "judges.json"
    save_judge_quality(fit, path, source="past.csv")
    return past, new, fit, path


def test_judge_file_records_covariance_and_fit(past_and_new):
    past, _, fit, path = past_and_new
    doc = json.loads(path.read_text())
    assert doc["format"] == "ratings.judge_quality/2" and doc["source"] == "past.csv"
    info = doc["fit"]
    assert info["n_verdicts"] == len(past) and info["n_models"] == 8
    assert info["n_decisive"] == (past["winner"] != "tie").sum()
    assert info["n_tasks"] == past["task_id"].nunique() and info["cluster"] == "task_id"
    assert info["tie_rate"] == pytest.approx((past["winner"] == "tie").mean())
    assert info["ratings_version"] == ratings.__version__ and info["prior"] == list(DEFAULT_PRIOR)
    loaded = load_judge_quality(path)
    pd.testing.assert_frame_equal(loaded.cov, fit.crowd.eta_cov.loc[loaded.cov.index,
                                                                     loaded.cov.index])  # fmt: skip
    assert loaded.cov.loc["j1", "j2"] != 0  # the full covariance, not only the variances


def test_two_step_covariance_matches_finite_differences(past_and_new):
    """V = V_s + H_ss^-1 H_se V_e H_es H_ss^-1 (Murphy & Topel 1985) on the current log, with
    H_se from finite differences of the reference gradient in the reused etas."""
    _, new, fit, path = past_and_new
    eta = {j: float(fit.judges.loc[j, "eta"]) for j in ETAS}
    v_e = fit.crowd.eta_cov.loc[list(ETAS), list(ETAS)].to_numpy()
    # every eta reused: the plain estimate exists and is used (the prior is not needed)
    plain = CrowdPrior(0.0, 0.0, np.inf)
    ref = PenalisedReference(new, fixed=eta, prior=plain)
    z = ref.fit()
    h_ss = ref.information(z)
    h = 1e-6
    cols = []
    for j in ETAS:
        up, down = dict(eta), dict(eta)
        up[j] += h
        down[j] -= h
        g_up = PenalisedReference(new, fixed=up, prior=plain).grad(z)
        cols.append((g_up - PenalisedReference(new, fixed=down, prior=plain).grad(z)) / (2 * h))
    h_se = np.column_stack(cols)
    bread = np.linalg.inv(h_ss)
    want = ref.sandwich(z, bread) + bread @ h_se @ v_e @ h_se.T @ bread
    r = ratings.fit(new, model=ratings.CrowdBT(judge_quality=str(path)), anchor="m00",
                    ci="sandwich-z")  # CR1: the sandwich written out above  # fmt: skip
    np.testing.assert_allclose(r.strength[1:], z, atol=1e-6)
    assert_close(r.cov[1:, 1:], want, rtol=1e-4)
    assert (r.judges.loc[list(ETAS), "status"] == "reused").all() and not r.crowd.prior_used
    term = r.crowd.eta_influence.T @ r.crowd.eta_influence
    assert_close(term[1:, 1:], bread @ h_se @ v_e @ h_se.T @ bread, rtol=1e-4)
    # --eta-known: the first term alone; the same file passed as the fit object: the same
    known = ratings.fit(
        new,
        model=ratings.CrowdBT(judge_quality=str(path), eta_known=True),
        anchor="m00",
        ci="sandwich-z",
    )
    assert_close(known.cov[1:, 1:], ref.sandwich(z, bread), rtol=1e-4)
    assert (known.judges.loc[list(ETAS), "status"] == "fixed").all()
    same = ratings.fit(new, model=ratings.CrowdBT(judge_quality=fit), anchor="m00", ci="sandwich-z")
    np.testing.assert_allclose(same.cov, r.cov, rtol=1e-12)
    # the default (CR2): the same two-step term on top of the CR2 covariance, whose df grow
    # with it (Welch-Satterthwaite, the term taken as known)
    cr2 = ratings.fit(new, model=ratings.CrowdBT(judge_quality=str(path)), anchor="m00")
    cr2_known = ratings.fit(
        new, model=ratings.CrowdBT(judge_quality=str(path), eta_known=True), anchor="m00"
    )
    assert_close(cr2.cov - cr2_known.cov, r.cov - known.cov, rtol=1e-6)
    v1, v2 = np.diag(cr2_known.cov)[1:], np.diag(cr2.cov - cr2_known.cov)[1:]
    np.testing.assert_allclose(cr2.model_df[1:], cr2_known.model_df[1:] * (1 + v2 / v1) ** 2,
                               rtol=1e-8)  # fmt: skip


def test_two_step_term_reaches_the_headline(past_and_new):
    """combine() adds each scope's two-step term to the joint covariance."""
    from ratings.scopes.combine import combine

    _, new, _, path = past_and_new
    r = ratings.fit(new, model=ratings.CrowdBT(judge_quality=str(path)), anchor="m00")
    head = combine({"s": r})
    assert_close(head.cov, r.cov, rtol=1e-10)
    # and to its degrees of freedom: the term is known in the Welch-Satterthwaite combination
    np.testing.assert_allclose(head.model_df, r.model_df, rtol=1e-8)
    np.testing.assert_allclose(head.pair_df(), r.pair_df(), rtol=1e-8)
    known = ratings.fit(
        new, model=ratings.CrowdBT(judge_quality=str(path), eta_known=True), anchor="m00"
    )
    assert (np.diag(combine({"s": known}).cov)[1:] < np.diag(head.cov)[1:]).all()


def test_reanchoring_keeps_the_two_step_term(past_and_new):
    _, new, _, path = past_and_new
    r = ratings.fit(new, model=ratings.CrowdBT(judge_quality=str(path)), anchor="m00")
    other = r.reanchor("m03", 1200.0)
    assert_close(other.diff("m05", "m01")["se"], r.diff("m05", "m01")["se"], rtol=1e-10)
    f = other.crowd.eta_influence
    np.testing.assert_allclose(f[:, 3], 0.0, atol=1e-12)  # the new anchor carries nothing


# ----------------------------------------------------------------------------------------------
# Judge-quality files: old formats, bad contents
# ----------------------------------------------------------------------------------------------


def _write(tmp_path, doc, name="jq.json"):
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def test_old_file_loads_with_a_warning(past_and_new, tmp_path):
    _, new, fit, _ = past_and_new
    rows = [{"judge": j, "eta": float(fit.judges.loc[j, "eta"]), "se": 0.01} for j in ETAS]
    path = _write(tmp_path, {"format": "ratings.judge_quality/1", "scope": None,
                             "judges": rows})  # fmt: skip
    with pytest.warns(
        ratings.JudgeWarning,
        match=r"judge_quality/1\) keeps no covariance.*"
        r"treated as known.*ratings judges",
    ):
        r = ratings.fit(new, model=ratings.CrowdBT(judge_quality=str(path)), anchor="m00")
    assert (r.judges.loc[list(ETAS), "status"] == "fixed").all()
    assert r.crowd.eta_influence is None
    # a plain {judge: eta} object is read the same way
    plain = _write(tmp_path, {j: row["eta"] for j, row in zip(ETAS, rows, strict=True)},
                   "plain.json")  # fmt: skip
    with pytest.warns(ratings.JudgeWarning, match="keeps no covariance"):
        same = ratings.fit(new, model=ratings.CrowdBT(judge_quality=str(plain)), anchor="m00")
    np.testing.assert_array_equal(same.cov, r.cov)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"j1": 0.9, "j1": 0.8}', r"key 'j1' appears twice"),
        (
            '{"format": "ratings.judge_quality/2", "judges": [{"judge": "j2", "eta": 0.8, '
            '"eta": 0.9}]}',
            r"key 'eta' appears twice in the entry of judge 'j2'",
        ),
        (
            '{"format": "ratings.judge_quality/1", "judges": [{"judge": "j1", "eta": 0.9}, '
            '{"judge": "j1", "eta": 0.8}]}',
            r"judge\(s\) \['j1'\] appear more than once",
        ),
        (
            '{"format": "ratings.judge_quality/1", "judges": [{"judge": "j3", "eta": true}]}',
            r"eta of judge 'j3' must be a number in \[0.5, 1\]; got True",
        ),
        ('{"j1": true}', r"eta of judge 'j1' must be a number"),
        ('{"j1": null}', r"eta of judge 'j1' must be a number"),
        (
            '{"format": "ratings.judge_quality/2", "judges": [{"judge": "j1", "eta": 0.9}], '
            '"covariance": {"judges": ["j1"], "matrix": [[-1.0]]}}',
            "positive semi-definite",
        ),
        (
            '{"format": "ratings.judge_quality/2", "judges": [{"judge": "j1", "eta": 0.9}], '
            '"covariance": {"judges": ["j2"], "matrix": [[1.0]]}}',
            "one row and column per judge",
        ),
        (
            '{"format": "ratings.judge_quality/2", "judges": [{"judge": "j1", "eta": 0.9}]}',
            "'covariance' must be",
        ),
    ],
)
def test_bad_judge_file_is_an_error_naming_the_judge(tmp_path, capsys, text, message):
    path = _write(tmp_path, text)
    with pytest.raises(ratings.InvalidVerdictsError, match=message):
        load_judge_quality(path)
    frame = draw_board(1, [0.0, 0.5, 1.0], {"j1": 0.9}, 300, n_tasks=20)
    log = tmp_path / "log.csv"
    frame.to_csv(log, index=False)
    assert main(["fit", str(log), "--model", "crowd-bt", "--judge-quality", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ratings: error:") and "Traceback" not in err


def test_boolean_eta_in_a_mapping_is_refused():
    frame = draw_board(1, [0.0, 0.5, 1.0], {"j1": 0.9}, 300, n_tasks=20)
    with pytest.raises(ValueError, match=r"'j1' must be a number in \[0.5, 1\]; got True"):
        ratings.fit(frame, model=ratings.CrowdBT(judge_quality={"j1": True}))


# ----------------------------------------------------------------------------------------------
# Warnings where Crowd-BT cannot say much; the prior argument
# ----------------------------------------------------------------------------------------------


def test_one_judge_warns_naming_it_and_the_remedy(tmp_path, capsys):
    frame = draw_board(8, np.linspace(-1.5, 1.5, 10), {"solo": 0.75}, 3000, n_tasks=60)
    with pytest.warns(ratings.JudgeWarning) as caught:
        ratings.fit(frame, model="crowd-bt")
    text = " ".join(str(w.message) for w in caught)
    assert "Only one judge ('solo')" in text and "`judge_quality`" in text
    assert "`model='bt'`" in text
    path = tmp_path / "solo.csv"
    frame.to_csv(path, index=False)
    assert main(["fit", str(path), "--model", "crowd-bt"]) == 0
    err = capsys.readouterr().err
    assert "ratings: warning: Only one judge ('solo')" in err and "`--judge-quality`" in err
    assert "`--model bt`" in err


def test_judge_with_few_verdicts_warns():
    s = np.linspace(-1.5, 1.5, 8)
    frame = pd.concat([draw_board(9, s, {"a": 0.9, "b": 0.8}, 6000, n_tasks=100),
                       draw_board(10, s, {"rare": 0.9}, 60, n_tasks=100)],
                      ignore_index=True)  # fmt: skip
    with pytest.warns(ratings.JudgeWarning, match=r"\['rare'\] have very few decisive"):
        r = ratings.fit(frame, model="crowd-bt")
    # every eta's interval is inside (1/2, 1): the plain estimate, no prior share
    assert not r.crowd.prior_used and (r.judges["prior_share"] == 0).all()
    assert r.judges.loc["rare", "se"] > 2 * r.judges.loc["a", "se"]


def test_judges_like_coin_flips_leave_the_intervals_open():
    """All three judges at 0.55 on 2,000 verdicts: the verdicts cannot tell them from coin
    flips, so no spread of the ratings can be excluded: open intervals and a warning."""
    frame = draw_board(12, np.linspace(-1.7, 1.7, 30), dict.fromkeys("xyz", 0.55), 2000,
                       n_tasks=100, tie_rate=0.1)  # fmt: skip
    with pytest.warns(ratings.JudgeWarning, match="left open"):
        r = ratings.fit(frame, model="crowd-bt", anchor="m15")
    assert r.crowd.open_intervals and np.isinf(r.se.drop("m15")).all()
    assert np.isinf(r.diff("m00", "m29")["se"])
    from ratings.scopes.combine import combine

    assert np.isinf(combine({"s": r}).se.drop("m15")).all()
    # the band plot draws open intervals to the frame's edges and says so
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ratings.plot.bands import plot_ratings

    ax = plot_ratings(r)
    assert "open intervals run off the frame" in ax.get_xlabel()
    (bands,) = [c for c in ax.collections if c.get_gid() == "ratings-bands"]
    lo, hi = ax.get_xlim()
    ends = np.array([seg[:, 0] for seg in bands.get_segments()])
    assert np.isfinite(ends).all() and np.isclose(ends.min(), lo) and np.isclose(ends.max(), hi)
    plt.close(ax.figure)


def test_prior_argument_is_checked():
    assert check_prior("default") == DEFAULT_PRIOR and check_prior(None) is None
    assert check_prior((2, 3, 1.0)) == CrowdPrior(2.0, 3.0, 1.0)
    for bad in ("flat", (1, -1, 2), (1, 1, 0), ("a", 1, 1)):
        with pytest.raises(ValueError, match="`prior`"):
            check_prior(bad)


def test_cli_prior_flag(tmp_path, capsys):
    frame = draw_board(13, np.linspace(-1.5, 1.5, 8), ETAS, 3000, n_tasks=60)
    path = tmp_path / "log.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "r.csv"
    assert main(["fit", str(path), "--model", "crowd-bt", "--prior", "2,2,3", "--anchor",
                 "m00=1000", "--out", str(out)]) == 0  # fmt: skip
    table = pd.read_csv(out).set_index("model")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        want = ratings.fit(frame, model=ratings.CrowdBT(prior=(2, 2, 3)), anchor="m00=1000")
    np.testing.assert_allclose(table.loc[want.models, "elo"], want.elo, atol=1e-8)
    assert main(["fit", str(path), "--model", "crowd-bt", "--prior", "wide"]) == 2
    assert "`--prior` must be 'default', 'none' or 'AGREE,FLIP,SD'" in capsys.readouterr().err


# ----------------------------------------------------------------------------------------------
# Render forfeits per model
# ----------------------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::ratings.core.errors.DataWarning")  # flags decide
def test_forfeits_column_counts_each_models_forfeits(tmp_path):
    frame = draw_board(14, np.linspace(-1.5, 1.5, 6), ETAS, 3000, n_tasks=60)
    rng = np.random.default_rng(0)
    frame["failed_a"] = rng.random(len(frame)) < 0.05
    frame["failed_b"] = rng.random(len(frame)) < 0.05
    r = ratings.fit(frame, model="crowd-bt")
    table = r.to_frame().set_index("model")
    lost = frame["failed_a"] | frame["failed_b"]
    want = (frame.loc[lost, "model_a"].value_counts()
            .add(frame.loc[lost, "model_b"].value_counts(), fill_value=0))  # fmt: skip
    np.testing.assert_array_equal(table.loc[want.index, "forfeits"], want.astype(int))
    assert r.judges.loc["deterministic", "n"] == lost.sum()
    out = tmp_path / "r.csv"
    path = tmp_path / "log.csv"
    frame.to_csv(path, index=False)
    assert main(["fit", str(path), "--model", "crowd-bt", "--out", str(out)]) == 0
    assert pd.read_csv(out).set_index("model")["forfeits"].sum() == 2 * lost.sum()


def test_coin_like_judges_open_while_informative_judges_do_not():
    """Three judges at 0.55 on a 2,000-verdict, 30-model board whose etas' own intervals stay
    above 1/2 (the prior places them near 0.7): the likelihood ratio against coin flips is
    below the chi2 point with K M = 90 degrees of freedom, so the intervals are open. The same
    design with judges .95 / .88 / .80 is left alone."""
    strengths = np.linspace(-1.7, 1.7, 30)
    kw = {"n_tasks": 100, "tie_rate": 0.1, "task_sd": 0.3}
    coin = draw_board(0, strengths, {"a": 0.55, "b": 0.55, "c": 0.55}, 2000, **kw)
    good = draw_board(0, strengths, {"a": 0.95, "b": 0.88, "c": 0.80}, 2000, **kw)
    decisive = int((coin["winner"] != "tie").sum())
    with pytest.warns(ratings.JudgeWarning, match="cannot be told from coin flips"):
        r = ratings.fit(coin, model="crowd-bt")
    lr = 2.0 * (decisive * np.log(2.0) + r.loglik)
    assert lr < 113.15  # chi2_90(0.95): scipy.stats.chi2.ppf(0.95, 90) = 113.145
    assert r.crowd.open_intervals and r.judges["uninformative"].all()
    assert np.isinf(np.diag(r.cov)).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ratings.JudgeWarning)
        g = ratings.fit(good, model="crowd-bt")
    assert not g.crowd.open_intervals and not g.judges["uninformative"].any()
    assert np.isfinite(np.diag(g.cov)).all()


@pytest.mark.parametrize("seed", [1, 2, 5])
def test_summary_names_the_judges_the_plain_estimate_puts_on_a_bound(seed):
    # A judge that never flips (eta = 1): on some boards the plain maximum of the likelihood
    # (found here by the independent reference, L-BFGS-B with eta in [1/2, 1]) is at eta = 1.
    frame = draw_board(seed, np.linspace(-1.2, 1.2, 8), {"j1": 1.0, "j2": 0.85, "j3": 0.8},
                       1500, n_tasks=50)  # fmt: skip
    ref = Reference(frame)
    eta = ref.fit(polish=False)[ref.m - 1 :]
    on_bound = tuple(j for j, e in zip(ref.judges, eta, strict=True)
                     if e > 1 - 1e-6 or e < 0.5 + 1e-6)  # fmt: skip
    r = ratings.fit(frame, model="crowd-bt")
    assert r.crowd.plain_found and r.crowd.plain_on_bound == on_bound
    line = next(x for x in r.summary().splitlines() if x.startswith("Estimate: "))
    if on_bound:
        assert line.startswith("Estimate: posterior mode") and "'j1' on its bound" in line
    else:
        assert "on its bound" not in line


def test_summary_says_when_the_plain_estimate_does_not_exist():
    # j1 picks the truly stronger model every time: the plain likelihood has no maximum
    frame = draw_board(7, np.linspace(-1.2, 1.2, 8), {"j1": 1.0, "j2": 0.85, "j3": 0.8}, 1500,
                       n_tasks=50)  # fmt: skip
    j1 = frame["judge"].to_numpy() == "j1"
    stronger_a = frame["model_a"].to_numpy() > frame["model_b"].to_numpy()  # names sort by strength
    frame.loc[j1, "winner"] = np.where(stronger_a, "A", "B")[j1]
    with pytest.raises(ratings.core.errors.NonIdentifiableError):
        ratings.fit(frame, model=ratings.CrowdBT(prior=None))
    r = ratings.fit(frame, model="crowd-bt")
    assert not r.crowd.plain_found and r.crowd.plain_on_bound == ()
    assert "has no estimate here or did not converge" in r.summary()


def _plain_stub(boundary: list[bool]):
    """A plain fit of two models (m00 the reference) and two estimated judges, written out
    here: strength 0.4, etas 0.5 and 0.8, ``boundary`` the etas on a bound."""
    from ratings.models.covariates import DesignFit

    return DesignFit(np.array([0.0, 0.4, 0.5, 0.8]), 2, 0, None, None, None, 1.0, True, 3, 0.0,
                     np.ones(2, dtype=bool), np.array(boundary), np.eye(4))  # fmt: skip


@pytest.mark.parametrize("singular", ["raises", "infinite", "no prior"])
def test_default_rule_reads_a_singular_plain_information_as_its_caller_says(singular):
    """The default-estimate rule with a plain fit (eta 0.5 on its bound) whose information is
    singular: fits with style features raise there, which means no plain estimate (the
    posterior mode starts afresh, every estimated eta counts as on a bound, ``plain_found``
    False); plain Crowd-BT and judge effects alone give infinite variances, an irregular plain
    estimate (the posterior mode starts from it and names its eta on the bound). Without a
    prior, the plain fit alone."""
    from ratings.core.errors import NonIdentifiableError
    from ratings.models.crowd.likelihood import choose_estimate

    plain, calls = _plain_stub([True, False]), []

    def fit(prior, start):
        calls.append((prior, start))
        return plain if prior is None else replace(plain, boundary=np.zeros(2, dtype=bool),
                                                   prior=prior)  # fmt: skip

    def covariance(fit):
        if singular == "raises":
            raise NonIdentifiableError("singular information")
        return np.full((4, 4), np.inf)

    prior = None if singular == "no prior" else DEFAULT_PRIOR
    out = choose_estimate(fit, covariance=covariance, prior=prior, level=0.95)
    if prior is None:
        assert calls == [(None, None)] and out is plain
        return
    assert [c[0] for c in calls] == [None, DEFAULT_PRIOR] and out.prior is DEFAULT_PRIOR
    if singular == "raises":
        assert calls[1][1] is None and not out.plain_found
        assert out.plain_on_bound.tolist() == [True, True]
    else:
        assert calls[1][1] is plain and out.plain_found
        assert out.plain_on_bound.tolist() == [True, False]
