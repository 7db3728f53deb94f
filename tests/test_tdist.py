"""Student's t quantile (plain Python) against scipy.special.stdtrit."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import stdtrit

from ratings.core.tdist import critical_value, critical_values, t_quantile, t_quantiles, t_upper

DFS = [0.5, 1, 1.5, 2, 2.5, 3, 4, 5, 7, 10, 19, 29, 49, 99, 150, 500, 999, 999.5, 1000, 1001,
       5000, 1e4, 1e5, 1e6, 1e9]  # fmt: skip
PS = [0.51, 0.6, 0.7499, 0.75, 0.8, 0.9, 0.95, 0.975, 0.99, 0.995, 0.9995, 0.3, 0.025]


@pytest.mark.parametrize("df", DFS)
def test_t_quantile_matches_scipy(df):
    for p in PS:
        np.testing.assert_allclose(t_quantile(df, p), stdtrit(df, p), rtol=1e-12)


def test_t_quantile_far_tail_and_edges():
    np.testing.assert_allclose(t_quantile(1, 0.999999), stdtrit(1, 0.999999), rtol=1e-10)
    assert t_quantile(7, 0.5) == 0.0
    assert t_quantile(7, 0.2) == -t_quantile(7, 0.8)
    for bad in [(3, 0.0), (3, 1.0), (0.0, 0.9), (-1.0, 0.9), (float("nan"), 0.9)]:
        with pytest.raises(ValueError):
            t_quantile(*bad)


def test_critical_values_of_the_intervals():
    assert critical_value(0.95, 29) == pytest.approx(2.045229642132703, rel=1e-14)
    assert critical_value(0.9, 4) == pytest.approx(2.131846786326649, rel=1e-14)
    assert critical_value(0.95, None) == pytest.approx(1.959963984540054, rel=1e-15)


def test_vectorised_critical_values_keep_shape_and_mark_no_interval():
    from scipy import stats

    df = np.array([[1.5, 2.0, 7.3], [np.inf, np.nan, 250.0]])
    got = critical_values(0.95, df)
    assert got.shape == df.shape and np.isnan(got[1, 1])
    np.testing.assert_allclose(got[0], stats.t.ppf(0.975, df[0]), rtol=1e-12)
    assert got[1, 0] == pytest.approx(stats.norm.ppf(0.975), rel=1e-14)
    many = np.linspace(1.0, 400.0, 50)  # the NumPy quantile beyond a few values
    np.testing.assert_allclose(critical_values(0.9, many), stats.t.ppf(0.95, many), rtol=1e-10)
    np.testing.assert_allclose(critical_value(0.9, many[:3]), stats.t.ppf(0.95, many[:3]))


@pytest.mark.parametrize("p", [0.51, 0.6, 0.7499, 0.75, 0.9, 0.95, 0.975, 0.995, 0.999999])
def test_t_quantiles_over_arrays_match_scipy(p):
    rng = np.random.default_rng(7)
    df = np.concatenate([rng.uniform(0.2, 1200.0, 400), [d for d in DFS if d < 1e9]])
    rtol = 1e-10 if p > 0.9999 else 5e-12  # the far tail as the scalar quantile's test
    np.testing.assert_allclose(t_quantiles(df, p), stdtrit(df, p), rtol=rtol)
    some = df[::40]
    np.testing.assert_allclose(t_quantiles(some, p), [t_quantile(float(d), p) for d in some],
                               rtol=1e-12)  # fmt: skip


def test_t_quantiles_take_upper_probabilities_only():
    for bad in (0.5, 0.3, 1.0):
        with pytest.raises(ValueError):
            t_quantiles(np.array([3.0]), bad)


@pytest.mark.parametrize(("lo", "hi"), [(920.0, 958.0), (0.3, 999.0), (2.5, 1500.0), (5.0, 60.0)])
@pytest.mark.parametrize("p", [0.51, 0.75, 0.975, 0.9999978754025926])
def test_t_quantiles_of_many_values_match_scipy(lo, hi, p):
    """Thousands of degrees of freedom (every pair's df of a large board) are interpolated
    between exact quantiles, below 1 df computed exactly: all within rounding of scipy's."""
    df = np.random.default_rng(11).uniform(lo, hi, 5000)
    np.testing.assert_allclose(t_quantiles(df, p), stdtrit(df, p), rtol=5e-12)


def test_t_upper_matches_scipy_over_arrays():
    from scipy.special import stdtr

    rng = np.random.default_rng(3)
    df = np.concatenate([rng.uniform(0.2, 999.0, 3000), [0.5, 1.0, 2.0, 29.0, 998.0]])
    t = np.concatenate([rng.uniform(0.0, 40.0, 3000), [0.0, 1.0, 2.5, 2.045, 60.0]])
    got = t_upper(t, df)
    np.testing.assert_allclose(got, stdtr(df, -t), rtol=1e-11)
    assert got[-5] == 0.5  # t = 0
    with pytest.raises(ValueError):
        t_upper(np.array([-1.0]), np.array([3.0]))
    with pytest.raises(ValueError):
        t_upper(np.array([1.0]), np.array([np.inf]))


def test_lgamma_matches_scipy_gammaln():
    from scipy.special import gammaln

    from ratings.core.tdist import lgamma

    x = np.concatenate([np.geomspace(1e-6, 1e6, 4001), np.linspace(0.5, 30.0, 600), [1.0, 2.0]])
    got = lgamma(x)
    ref = gammaln(x)
    np.testing.assert_allclose(got, ref, rtol=1e-14, atol=1e-14)
    assert got[-2:].tolist() == pytest.approx([0.0, 0.0], abs=5e-15)


def test_t_constants_match_high_precision_log_gamma():
    """1 / B(nu / 2, 1 / 2) without the cancellation of the log Gamma values, which costs
    scipy's gammaln difference 3e-13 at 1000 df and 3e-11 at 50,000: against mpmath at 30
    digits."""
    mpmath = pytest.importorskip("mpmath")
    from ratings.core.tdist import _log_beta_half

    nus = [1e-3, 0.3, 1.0, 3.0, 19.9, 20.0, 29.0, 809.1, 999.0, 5e4, 1e7]
    with mpmath.workdps(30):
        ref = [float(mpmath.loggamma(mpmath.mpf(v) / 2 + mpmath.mpf(1) / 2)
                     - mpmath.loggamma(mpmath.mpf(v) / 2) - mpmath.loggamma(mpmath.mpf(1) / 2))
               for v in nus]  # fmt: skip
    np.testing.assert_allclose(_log_beta_half(np.array(nus)), ref, rtol=0, atol=2e-15)
