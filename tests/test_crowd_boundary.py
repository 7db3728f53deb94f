"""Crowd-BT judges at the edges: coin-flip judges flagged uninformative, judges on the bound
eta = 1, a perfectly separating judge (no maximum-likelihood estimate), and the mirror branch
(s, eta) -> (-s, 1 - eta), which the fit never takes: eta stays in [1/2, 1] and the optimum is
checked against the independent reference of :mod:`crowd_reference`."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from crowd_reference import Reference, draw_board
from helpers import assert_close

import ratings
from ratings.cli.app import main

# ----------------------------------------------------------------------------------------------
# Uninformative and boundary judges
# ----------------------------------------------------------------------------------------------


def test_coin_flip_judge_is_uninformative():
    frame = draw_board(
        31, np.linspace(-1.5, 1.5, 8), {"good": 0.9, "ok": 0.8, "coin": 0.5}, 30_000, tie_rate=0.1
    )
    r = ratings.fit(frame, model=ratings.CrowdBT(prior=None), cluster=None)
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
        r = ratings.fit(frame, model=ratings.CrowdBT(prior=None), anchor="m00", ci=ci)
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
    r = ratings.fit(
        frame, model=ratings.CrowdBT(prior=None), anchor="m00", ci="model", cluster=None
    )
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
        ratings.fit(frame, model=ratings.CrowdBT(prior=None), anchor="m00")
    path = tmp_path / "sep.csv"
    frame.to_csv(path, index=False)
    assert main(["fit", str(path), "--model", "crowd-bt", "--prior", "none"]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "--prior default" in err
    assert main(["fit", str(path), "--model", "crowd-bt"]) == 0
    default = ratings.fit(frame, model="crowd-bt", anchor="m00")
    assert np.all(np.isfinite(default.strength)) and np.all(np.isfinite(default.cov))
    assert default.judges.loc["oracle", "eta"] > 0.98
    r = ratings.fit(
        frame,
        model=ratings.CrowdBT(
            prior=None, judge_quality={"noisy1": 0.8, "noisy2": 0.7, "oracle": 0.99}
        ),
    )
    assert r.converged and np.all(np.isfinite(r.strength))


# ----------------------------------------------------------------------------------------------
# The mirror branch (s, eta) -> (-s, 1 - eta) is never taken
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
        r = ratings.fit(frame, model=ratings.CrowdBT(prior=None), anchor="m00", cluster=None)
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
    r = ratings.fit(frame, model=ratings.CrowdBT(prior=None), anchor="m00")
    assert r.converged
    bad = r.judges.loc["bad"]
    assert bad["eta"] == 0.5 and bad["status"] == "boundary" and bool(bad["uninformative"])
    assert r.judges.loc["good", "status"] == "estimated"
    assert r.judges.loc["good", "lower"] <= 0.9 <= r.judges.loc["good", "upper"]
    assert np.corrcoef(r.strength, truth)[0, 1] > 0.99
    # With the bad judge at 1/2 the fit is the fit of the good judge's verdicts alone (which
    # warns that one judge decides them all).
    with pytest.warns(ratings.JudgeWarning, match="Only one judge \\('good'\\)"):
        good = ratings.fit(frame[frame["judge"] == "good"], model=ratings.CrowdBT(prior=None),
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
            ratings.fit(frame, model=ratings.CrowdBT(prior=None))
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ratings.JudgeWarning)
        r = ratings.fit(frame, model=ratings.CrowdBT(prior=None))
    assert r.converged
    eta = r.judges["eta"]
    assert ((eta >= 0.5) & (eta <= 1.0)).all()
    # No better point in the box: the reference from the truth does not beat it.
    ref = Reference(frame)
    start = np.concatenate([np.zeros(5), [0.75, 0.75, 0.75]])
    z = ref.fit(start, polish=False)
    assert -r.loglik <= ref.nll(z) + 1e-6
