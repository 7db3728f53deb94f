"""Crowd-BT with judge effects (and no style features) where its plain maximum-likelihood
estimate does not exist: the default estimate is the posterior mode under Crowd-BT's weak
priors, as for plain Crowd-BT; where the plain estimate exists it is kept.

Checked against :class:`Penalised`, written here on raw decisive verdict rows with NumPy and
scipy (no code of :mod:`ratings`): the Crowd-BT likelihood of the design with one position
column per judge and one own-family column per judge with a family, plus the default prior
(a Normal ridge on the centred strengths, a Beta prior on 2 eta - 1), minimised by L-BFGS-B.
Verdicts come from :func:`crowd_reference.draw_board`.
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pytest
from crowd_reference import draw_board
from scipy.optimize import minimize
from scipy.special import expit

import ratings
from ratings.core.errors import JudgeWarning, NonIdentifiableError
from ratings.models.crowd.prior import DEFAULT_PRIOR

#: 30 models in three families of ten, the judges a, b, c one in each.
FAMILIES = {f"m{i:02d}": "xyz"[i // 10] for i in range(30)} | {"a": "x", "b": "y", "c": "z"}
SELF = ratings.Adjust("position,self-preference", families=FAMILIES)


class Penalised:
    """Crowd-BT with judge effects on raw decisive rows, z = (strengths but the first model's,
    a position bias per judge, a self-preference per judge in ``self_pref``, an eta per
    judge); ``prior`` False: the likelihood alone."""

    def __init__(self, frame, self_pref=(), *, prior: bool = True) -> None:
        frame = frame[frame["winner"] != "tie"]
        self.models = sorted(set(frame["model_a"]) | set(frame["model_b"]))
        self.judges = sorted(set(frame["judge"]))
        a = frame["model_a"].map(self.models.index).to_numpy()
        b = frame["model_b"].map(self.models.index).to_numpy()
        self.k = frame["judge"].map(self.judges.index).to_numpy()
        n, self.m = len(frame), len(self.models)
        strengths = np.zeros((n, self.m))
        strengths[np.arange(n), a], strengths[np.arange(n), b] = 1.0, -1.0
        cols = [strengths[:, 1:], (self.k[:, None] == np.arange(len(self.judges))) * 1.0]
        for j in self_pref:
            fam = FAMILIES[j]
            own = frame["model_a"].map(FAMILIES).eq(fam) * 1.0 - frame["model_b"].map(
                FAMILIES).eq(fam)  # fmt: skip
            cols.append(((frame["judge"] == j) * own).to_numpy()[:, None])
        self.x = np.hstack(cols)
        self.y = (frame["winner"] == "A").to_numpy(dtype=np.float64)
        self.p = self.x.shape[1]
        pr = DEFAULT_PRIOR
        self.lam, self.agree, self.flip = (1.0 / pr.strength_sd**2, pr.agree, pr.flip) if prior \
            else (0.0, 0.0, 0.0)  # fmt: skip

    def nll(self, z) -> float:
        lin, e = self.x @ z[: self.p], z[self.p :][self.k]
        q = e * expit(lin) + (1 - e) * expit(-lin)
        nll = -float(np.sum(self.y * np.log(q) + (1 - self.y) * np.log1p(-q)))
        if not self.lam:
            return nll
        s = np.concatenate([[0.0], z[: self.m - 1]])
        c, u = s - s.mean(), 2 * z[self.p :] - 1
        return nll + 0.5 * self.lam * c @ c - np.sum(self.agree * np.log(u)
                                                     + self.flip * np.log1p(-u))

    def grad(self, z):
        lin, e = self.x @ z[: self.p], z[self.p :][self.k]
        sg, sgc = expit(lin), expit(-lin)
        q = e * sg + (1 - e) * sgc
        dl = self.y / q - (1 - self.y) / (1 - q)
        g = np.concatenate([-self.x.T @ (dl * (2 * e - 1) * sg * sgc),
                            -np.bincount(self.k, dl * (sg - sgc), len(self.judges))])
        if not self.lam:
            return g
        s = np.concatenate([[0.0], z[: self.m - 1]])
        g[: self.m - 1] += self.lam * (s - s.mean())[1:]
        u = 2 * z[self.p :] - 1
        g[self.p :] += -2 * (self.agree / u - self.flip / (1 - u))
        return g

    def fit(self, *, eta_lo: float = 0.5 + 1e-9, eta_hi: float = 1 - 1e-9, effect_bound=None):
        """L-BFGS-B from zero strengths and effects, eta 0.8; ``effect_bound`` bounds the
        effects' coefficients (None: free)."""
        z0 = np.concatenate([np.zeros(self.p), np.full(len(self.judges), 0.8)])
        fx = (None if effect_bound is None else -effect_bound,
              effect_bound)  # fmt: skip
        bounds = ([(None, None)] * (self.m - 1) + [fx] * (self.p - self.m + 1)
                  + [(eta_lo, eta_hi)] * len(self.judges))  # fmt: skip
        res = minimize(lambda z: self.nll(z) / len(self.y), z0,
                       jac=lambda z: self.grad(z) / len(self.y), method="L-BFGS-B",
                       bounds=bounds, options={"ftol": 1e-16, "gtol": 1e-11, "maxiter": 50000})
        return res.x

    def split(self, z):
        """(strengths with the first model's 0, the effects' coefficients, etas)."""
        return np.concatenate([[0.0], z[: self.m - 1]]), z[self.m - 1 : self.p], z[self.p :]


def _ours(r, self_pref=()):
    fx = r.judge_effects.table.set_index("judge")
    effects = [fx.loc[j, "position_bias"] for j in sorted(fx.index)]
    effects += [fx.loc[j, "self_preference"] for j in self_pref]
    return np.asarray(r.strength), np.asarray(effects), r.judges["eta"].to_numpy()


def _sparse(seed: int):
    """30 models, three judges (eta .95 / .88 / .80), 2,000 verdicts on 100 tasks, 10% ties:
    boards whose plain Crowd-BT likelihood, with judge effects or without, has no maximum (a
    strong model's losses explained as judge flips, its strength running off; seeds 5 and 6
    of ``test_crowd_prior.test_an_estimate_wherever_bradley_terry_has_one``)."""
    return draw_board(seed, np.linspace(-1.7, 1.7, 30), {"a": 0.95, "b": 0.88, "c": 0.80},
                      2000, n_tasks=100, tie_rate=0.1, task_sd=0.3)  # fmt: skip


@pytest.mark.parametrize(("seed", "adjust", "self_pref"),
                         [(5, "position", ()), (6, SELF, ("a", "b", "c"))])  # fmt: skip
def test_without_a_plain_estimate_the_fit_is_the_posterior_mode(seed, adjust, self_pref):
    frame = _sparse(seed)
    with pytest.raises(NonIdentifiableError, match="diverges"):  # no maximum likelihood
        ratings.fit(frame, model=ratings.CrowdBT(prior=None), adjust=adjust, anchor="m00")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ratings.ConvergenceWarning)
        r = ratings.fit(frame, model="crowd-bt", adjust=adjust, anchor="m00")
    ref = Penalised(frame, self_pref)
    s, fx, eta = ref.split(ref.fit())
    ours = _ours(r, self_pref)
    np.testing.assert_allclose(ours[0], s, atol=2e-5)
    np.testing.assert_allclose(ours[1], fx, atol=2e-5)
    np.testing.assert_allclose(ours[2], eta, atol=2e-6)
    assert np.ptp(s) < 8  # finite, not run off
    assert r.crowd.prior_used and not r.crowd.plain_found
    assert "Estimate: posterior mode under the weak priors (the plain maximum-likelihood fit " \
        "has no estimate here" in r.summary()  # fmt: skip
    assert np.isfinite(r.se.drop("m00")).all() and (r.se.drop("m00") > 0).all()
    table = r.judge_effects.table
    assert np.isfinite(table["position_se"]).all() and (table["position_se"] > 0).all()


def test_the_audit_takes_the_same_estimate():
    """The judge audit's Crowd-BT fit is the fit's: on a board without a plain estimate, the
    posterior mode (it stopped with an error before); ``prior=None`` still asks for the plain
    estimate alone."""
    frame = _sparse(5)
    a = ratings.audit(frame, model="crowd-bt", effects="position", n_boot=20)
    ref = Penalised(frame)
    _, fx, eta = ref.split(ref.fit())
    table = a.judges.set_index("judge").loc[["a", "b", "c"]]
    np.testing.assert_allclose(table["position_bias"], fx, atol=2e-5)
    np.testing.assert_allclose(table["eta"], eta, atol=2e-6)
    with pytest.raises(NonIdentifiableError, match="diverges"):
        ratings.audit(frame, model=ratings.CrowdBT(prior=None), effects="position", n_boot=20)


def test_a_singular_information_at_the_posterior_mode_leaves_the_intervals_open():
    """Four models, 60 verdicts: no plain estimate, and at the posterior mode the likelihood's
    information is singular (the verdicts do not pin down any judge's quality); as plain
    Crowd-BT does, the posterior mode with open intervals and the warning naming the judges,
    not an error blaming an effect. (On some boards this small the penalised likelihood has
    more than one local minimum, e.g. seed 2; on this one the reference's is the fit's.)"""
    frame = draw_board(4, np.linspace(-1, 1, 4), {"a": 0.9, "b": 0.8, "c": 0.7}, 60,
                       n_tasks=20)  # fmt: skip
    with pytest.warns(JudgeWarning, match="No judge's quality is pinned down"):
        r = ratings.fit(frame, model="crowd-bt", adjust="position", anchor="m00")
    ref = Penalised(frame)
    s, fx, eta = ref.split(ref.fit())
    ours = _ours(r)
    np.testing.assert_allclose(ours[0], s, atol=2e-5)
    np.testing.assert_allclose(ours[1], fx, atol=2e-5)
    np.testing.assert_allclose(ours[2], eta, atol=2e-6)
    assert r.crowd.prior_used and r.crowd.open_intervals
    assert np.isinf(r.se.drop("m00")).all()
    assert np.isinf(r.judge_effects.table["position_se"]).all()


def test_where_the_prior_cannot_hold_an_effect_the_error_names_the_effects():
    """Four models, 60 verdicts, position bias: the penalised likelihood has no minimum either.
    The reference shows it is an effect that runs off (the prior holds strengths and etas):
    bounding the effects at 10 or 20 puts one on its bound and lowers the objective, while the
    strengths stay put. The error names the judge effects and the remedy, not the strengths'
    estimate."""
    frame = draw_board(5, np.linspace(-1, 1, 4), {"a": 0.9, "b": 0.8, "c": 0.7}, 60,
                       n_tasks=20)  # fmt: skip
    ref = Penalised(frame)
    z10, z20 = ref.fit(effect_bound=10.0), ref.fit(effect_bound=20.0)
    assert ref.nll(z20) < ref.nll(z10) - 1e-6
    for z, bound in ((z10, 10.0), (z20, 20.0)):
        s, fx, _ = ref.split(z)
        assert np.abs(fx).max() == pytest.approx(bound) and np.ptp(s) < 8
    with pytest.raises(NonIdentifiableError, match="strengths and judge effects diverges: "
                       r"some judge's effect .* Fit fewer effects"):  # fmt: skip
        ratings.fit(frame, model="crowd-bt", adjust="position")


@pytest.mark.parametrize("case", ["always A", "a model in slot A"])
def test_an_effect_without_an_estimate_is_named_before_any_fit(case):
    """Effects no prior can make finite or tell from the strengths are refused by name, the
    judge and the reason, under the default Crowd-BT fit as without it."""
    frame = draw_board(11, np.linspace(-1, 1, 6), {"a": 0.9, "b": 0.8, "c": 0.85}, 600,
                       n_tasks=60)  # fmt: skip
    a = (frame["judge"] == "a").to_numpy()
    if case == "always A":
        frame.loc[a, "winner"] = "A"
        why = r"a \(position bias\): always chose slot A"
    else:  # a model only judge a sees, always in slot A
        frame.loc[a, "model_a"] = "new"
        why = r"a \(position bias\): model 'new' is in slot A in every verdict"
    with pytest.raises(NonIdentifiableError, match=why):
        ratings.fit(frame, model="crowd-bt", adjust="position")


def test_a_plain_estimate_on_the_boundary_is_kept():
    """A judge that never flips: the plain maximum likelihood exists with its eta at 1, and
    the fit with judge effects keeps it (plain Crowd-BT would take the posterior mode)."""
    frame = draw_board(2, np.linspace(-1.2, 1.2, 8), {"j1": 1.0, "j2": 0.85, "j3": 0.8}, 1500,
                       n_tasks=50)  # fmt: skip
    r = ratings.fit(frame, model="crowd-bt", adjust="position", anchor="m00")
    ref = Penalised(frame, prior=False)
    s, fx, eta = ref.split(ref.fit(eta_lo=0.5, eta_hi=1.0))
    assert eta[0] == 1.0  # the reference's maximum is on the bound
    ours = _ours(r)
    np.testing.assert_allclose(ours[0], s, atol=2e-5)
    np.testing.assert_allclose(ours[1], fx, atol=2e-5)
    np.testing.assert_allclose(ours[2], eta, atol=2e-6)
    assert not r.crowd.prior_used and "Estimate: plain maximum likelihood" in r.summary()
    assert r.judges.loc["j1", "status"] == "boundary"


@pytest.mark.parametrize("singular", [False, True])
def test_keep_plain_takes_the_posterior_mode_only_without_a_plain_estimate(singular):
    """The default-estimate rule with ``keep_plain``: a plain fit (written out here) with an
    eta on its bound and a finite covariance is kept; with an infinite covariance (a singular
    information) the posterior mode is taken, started from the plain fit."""
    from ratings.models.covariates import DesignFit
    from ratings.models.crowd.likelihood import choose_estimate

    plain = DesignFit(np.array([0.0, 0.4, 0.5, 0.8]), 2, 0, None, None, None, 1.0, True, 3,
                      0.0, np.ones(2, dtype=bool), np.array([True, False]), np.eye(4))  # fmt: skip
    cov, starts = np.full((4, 4), np.inf) if singular else np.eye(4), []

    def fit(prior, start):
        starts.append(start)
        return plain if prior is None else replace(plain, boundary=np.zeros(2, dtype=bool),
                                                   prior=prior)  # fmt: skip

    out = choose_estimate(fit, covariance=lambda _: cov, prior=DEFAULT_PRIOR, level=0.95,
                          keep_plain=True)  # fmt: skip
    assert (out.prior is not None) == singular
    assert starts == ([None, plain] if singular else [None])
    if singular:
        assert out.plain_found and out.plain_on_bound.tolist() == [True, False]
