"""The one-judge widening of Crowd-BT intervals (:mod:`ratings.models.crowd.onejudge`), checked
against
an independent scipy profile likelihood."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from crowd_reference import Reference, draw_board
from scipy import stats
from scipy.optimize import brentq, minimize_scalar
from test_crowd_prior import PenalisedReference

import ratings
from ratings.data.comparisons import aggregate
from ratings.models.covariates import design_builder, pair_built, pair_design
from ratings.models.crowd.likelihood import fit_crowd_default
from ratings.models.crowd.onejudge import profile_widening, single_judge
from ratings.models.crowd.policy import crowd_inference
from ratings.models.crowd.prior import DEFAULT_PRIOR, CrowdPrior
from ratings.models.crowd.quality import ResolvedQuality

RIDGE_ONLY = CrowdPrior(0.0, 0.0, DEFAULT_PRIOR.strength_sd)


@pytest.fixture(scope="module")
def solo():
    """8 models, one judge of quality 0.88, 1,500 verdicts on 60 tasks: the plain estimate is
    irregular there, so the default is the posterior mode (checked below)."""
    frame = draw_board(7, np.linspace(-1.5, 1.5, 8), {"solo": 0.88}, 1500, n_tasks=60,
                       task_sd=0.3)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ratings.JudgeWarning)
        return frame, ratings.fit(frame, model="crowd-bt", anchor="m00")


def one_judge_widening(fit, data, eta_var: float):
    """The widening the fit's one path (:func:`ratings.models.crowd.policy.crowd_inference`)
    applies to a one-judge posterior mode whose eta has CR2 variance ``eta_var``."""
    k = single_judge(fit, data)
    return profile_widening(fit, pair_design(data.collapsed()), k, eta_var, count_prior=False,
                            plain_on_bound=bool(fit.plain_on_bound[k]))  # fmt: skip


def _profile(frame, eta: float) -> tuple[float, np.ndarray]:
    """Independent profile: the likelihood at the strengths that minimise it plus the
    strengths' prior at fixed eta; (value, strengths with m00 = 0)."""
    ref = PenalisedReference(frame, fixed={"solo": eta}, prior=RIDGE_ONLY)
    z = ref.fit()
    return Reference.nll(ref, z), np.concatenate([[0.0], z])


def test_one_judge_interval_reaches_the_profile_limit(solo):
    frame, r = solo
    assert r.crowd.prior_used  # the posterior mode: the widening applies
    data = aggregate(frame, cluster="task_id")
    fit = fit_crowd_default(data, clustered=True, ref=0)
    k = data.judges.get_loc("solo")
    wide = one_judge_widening(fit, data, 1e-6)
    # eta's 95% profile-likelihood limit, from an independent scipy profile
    top = minimize_scalar(lambda e: _profile(frame, e)[0], bounds=(0.6, 1.0 - 1e-9),
                          method="bounded", options={"xatol": 1e-7})  # fmt: skip
    best = min(top.fun, _profile(frame, 1.0 - 1e-9)[0])
    crit = stats.chi2.ppf(0.95, 1) / 2.0
    eta_lo = brentq(lambda e: _profile(frame, e)[0] - best - crit, 0.6, fit.eta[k], xtol=1e-7)
    assert abs(wide.eta_lo - eta_lo) < 2e-3
    # the two-step term runs along the profile: the strengths there, independently fitted
    shift = _profile(frame, wide.eta_lo)[1] - fit.theta
    z = stats.norm.ppf(0.975)
    gap = fit.eta[k] - wide.eta_lo
    expected = np.sqrt(1.0 - z**2 * 1e-6 / gap**2) / z * shift
    np.testing.assert_allclose(wide.extra[0, : fit.theta.size], expected, atol=2e-3, rtol=1e-2)
    # the sandwich is rescaled as if evaluated one profile standard error below eta
    e1 = fit.eta[k] - gap / z
    assert wide.scale == pytest.approx((2 * fit.eta[k] - 1) / (2 * e1 - 1), rel=1e-9)


def test_rescaling_only_where_the_plain_estimate_is_on_the_bound(solo):
    """The fixture's plain eta is on its bound (rescaled above); on a board whose plain eta is
    inside (1/2, 1) but irregular (its interval reaches 1), the posterior mode is still widened
    along the profile, but not rescaled."""
    frame, _ = solo
    data = aggregate(frame, cluster="task_id")
    assert fit_crowd_default(data, clustered=True, ref=0).plain_on_bound.all()
    inside = draw_board(5, np.linspace(-1.5, 1.5, 8), {"solo": 0.88}, 1500, n_tasks=60,
                        task_sd=0.3)  # fmt: skip
    data = aggregate(inside, cluster="task_id")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = fit_crowd_default(data, clustered=True, ref=0)
        plain = fit_crowd_default(data, clustered=True, ref=0, prior=None)
    assert fit.prior is not None and not fit.plain_on_bound.any()
    assert 0.5 < plain.eta[0] < 1.0 and not plain.boundary.any()  # inside, independently
    wide = one_judge_widening(fit, data, 1e-6)
    assert wide.scale == 1.0 and wide.extra is not None and wide.eta_lo < fit.eta[0]


def test_one_judge_intervals_are_wider_than_the_plain_sandwich(solo):
    frame, r = solo
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ratings.JudgeWarning)
        narrow = ratings.fit(frame, model="crowd-bt", anchor="m00", ci="sandwich-z")
    se, se_z = np.sqrt(np.diag(r.cov))[1:], np.sqrt(np.diag(narrow.cov))[1:]
    assert np.all(se > 1.1 * se_z)


def test_three_judges_are_not_widened():
    frame = draw_board(3, np.linspace(-1.5, 1.5, 8), {"a": 0.95, "b": 0.8, "c": 0.65}, 1500,
                       n_tasks=60, task_sd=0.3)  # fmt: skip
    data = aggregate(frame, cluster="task_id")
    fit = fit_crowd_default(data, clustered=True, ref=0)
    assert single_judge(fit, data) is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ratings.JudgeWarning)
        rows = pair_design(data.collapsed())
        out = crowd_inference(fit, data, rows, design_builder(rows, remedy=None, pairs=data),
                              ResolvedQuality(eta={}), ci="sandwich", level=0.95)  # fmt: skip
    cr2 = pair_built(fit, data, "sandwich", clustered=True).cov  # the sandwich as built
    np.testing.assert_array_equal(out.fit.cov, cr2)
