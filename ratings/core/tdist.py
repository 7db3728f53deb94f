"""Student's t quantile in plain Python (a fit's interval needs one number; ``scipy.special``
costs a small command-line fit 0.15 s of imports).

Below 1000 degrees of freedom: Newton's method on the upper tail probability
``P(T > t) = I_x(nu / 2, 1 / 2) / 2`` with ``x = nu / (nu + t^2)`` (or, near the centre, on
``P(0 < T < t) = I_{1-x}(1 / 2, nu / 2) / 2``), the regularized incomplete beta function by its
continued fraction (Numerical Recipes 6.4), started at the normal quantile below
:data:`_EXPANSION_START_FROM` degrees of freedom (it lies below the t quantile: the tail is
convex and the centre mass concave in t > 0, so the steps rise monotonically to the root) and
at the Cornish-Fisher expansion from there (within 2e-4 of the root: one step lands within
1e-8 of it, from either side; within 4e-11 from 100 degrees of freedom, where that step is the
last). Halley's steps converge cubically, so the iterations stop after a step below
:data:`_LAST_STEP` of the value: the error left is far below the rounding of the tail
probability. From 1000 on: the Cornish-Fisher expansion in powers of 1/nu (Abramowitz & Stegun
26.7.5) itself, whose next term is below 1e-13 there. Checked against
``scipy.special.stdtrit`` in the tests.

:func:`critical_value` gives the two-sided critical value of an interval at a confidence level,
the one quantile every interval of the package uses; :func:`critical_values` the same for many
degrees of freedom at once (one per contrast of a CR2 fit), beyond a few values by
:func:`t_quantiles`, the same iterations in NumPy over all of them. :func:`t_upper` is the
upper tail probability over arrays, for tests that need only which side of its quantile a
statistic lies on (one continued fraction instead of the Newton steps). The Gamma-function
constants of many degrees of freedom come from :func:`lgamma`'s Stirling series in NumPy (and
1 / B(df / 2, 1 / 2) from the difference of two such series, without cancellation).
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
from numpy.polynomial.polyutils import mapdomain
from numpy.typing import NDArray

__all__ = ["CORNISH_FISHER_FROM", "critical_value", "critical_values", "lgamma",
           "normal_quantile", "t_quantile", "t_quantiles", "t_upper"]

#: Degrees of freedom from which the quantile is the Cornish-Fisher expansion.
CORNISH_FISHER_FROM = 1000.0
#: Degrees of freedom from which Newton's method starts at the Cornish-Fisher expansion
#: (relative error 1e-4 at 5 df, 2e-8 at 29, 4e-11 at 100) instead of the normal quantile.
_EXPANSION_START_FROM = 5.0
#: Relative size of a Newton (Halley) step after which none follows: Halley's steps converge
#: cubically, so one this small leaves the root's error far below the rounding of the tail
#: probability (1e-13 relative).
_LAST_STEP = 1e-8
#: Continued-fraction steps whose coefficients :func:`_betacf_array` forms at once.
_CF_BLOCK = 8


def normal_quantile(level: float) -> float:
    """Two-sided normal critical value for a confidence level (1.96 for 0.95)."""
    return NormalDist().inv_cdf(0.5 + level / 2.0)


def critical_value(level: float, df=None):
    """Two-sided critical value: Student t with ``df`` degrees of freedom, or normal (``df``
    None or infinite). An array of ``df`` gives an array (:func:`critical_values`)."""
    if df is not None and np.ndim(df):
        return critical_values(level, df)
    if df is None or not math.isfinite(df):
        return normal_quantile(level)
    return t_quantile(float(df), 0.5 + level / 2.0)


def critical_values(level: float, df) -> NDArray[np.float64]:
    """Two-sided critical values at ``level`` of Student t with ``df`` degrees of freedom
    (an array, shape kept): ``inf`` gives the normal quantile and NaN gives NaN (no interval)."""
    shape = np.shape(df)
    df = np.atleast_1d(np.asarray(df, dtype=np.float64)).ravel()
    p = 0.5 + level / 2.0
    out = np.full(df.shape, np.nan)
    finite = np.isfinite(df) & (df > 0)
    out[np.isposinf(df)] = NormalDist().inv_cdf(p)
    if finite.sum() > 4:  # the plain-Python quantile takes milliseconds per value
        out[finite] = t_quantiles(df[finite], p)
    else:
        out[finite] = [t_quantile(float(v), p) for v in df[finite]]
    return out.reshape(shape)


def t_quantiles(df: NDArray[np.float64], p: float) -> NDArray[np.float64]:
    """:func:`t_quantile` at ``p`` in (1/2, 1) of each of the finite, positive degrees of
    freedom ``df``: the same Newton steps and continued fraction, in NumPy over all of them."""
    if not 0.5 < p < 1.0:
        raise ValueError(f"`p` must be in (1/2, 1); got {p!r}.")
    df = np.asarray(df, dtype=np.float64)
    z = NormalDist().inv_cdf(p)
    out = _cornish_fisher(z, df)
    out = np.where(df == 1.0, math.tan(math.pi * (p - 0.5)), out)
    out = np.where(df == 2.0, (2.0 * p - 1.0) / math.sqrt(2.0 * p * (1.0 - p)), out)
    newton = (df < CORNISH_FISHER_FROM) & (df != 1.0) & (df != 2.0)
    if newton.any():
        out[newton] = _interpolated(df[newton], p, z)
    return out


#: Degree of the Chebyshev interpolant in 1 / df (:func:`_interpolated`).
_DEGREE = 32
#: Its largest trailing coefficient, relative to the first, for the interpolant to be used.
_TAIL = 1e-12
#: The interpolant's largest relative error at the check points for it to be used.
_CHECKED = 1e-12
#: Degrees of freedom from which the quantiles are interpolated (below, t's scale explodes).
_SMOOTH_FROM = 1.0


def _interpolated(nu: NDArray[np.float64], p: float, z: float) -> NDArray[np.float64]:
    """The quantiles of many degrees of freedom from the exact ones at :data:`_DEGREE` + 1
    Chebyshev points in 1 / df (a smooth function there: the Cornish-Fisher series is one in
    1 / df), where the table of every pair's df of a 200-model board (18k values) would take
    the Newton steps 0.2 s. Used when the interpolant's trailing coefficients show it
    converged and it matches the exact quantile at points between the nodes (within
    :data:`_CHECKED`); otherwise, for few values and below :data:`_SMOOTH_FROM`, exactly."""
    out = np.empty(nu.shape)
    smooth = nu >= _SMOOTH_FROM
    out[~smooth] = _newton(nu[~smooth], p, z) if (~smooth).any() else []
    nu_s = nu[smooth]
    if nu_s.size <= 2 * _DEGREE or nu_s.min() == nu_s.max():
        out[smooth] = _newton(nu_s, p, z) if nu_s.size else []
        return out
    domain = [1.0 / float(nu_s.max()), 1.0 / float(nu_s.min())]
    cheb = np.polynomial.chebyshev
    nodes = mapdomain(cheb.chebpts1(_DEGREE + 1), [-1.0, 1.0], domain)  # interpolate's own
    check = cheb.chebpts1(9) * (domain[1] - domain[0]) / 2 + sum(domain) / 2
    exact = _newton(1.0 / np.concatenate([nodes, check]), p, z)  # one pass for both
    fitted = np.polynomial.Chebyshev(cheb.chebinterpolate(lambda _: exact[:nodes.size], _DEGREE),
                                     domain=domain)  # as Chebyshev.interpolate builds it
    coef = np.abs(fitted.coef)
    exact = exact[nodes.size:]
    if coef[-3:].max() > _TAIL * coef[0] or np.max(np.abs(fitted(check) / exact - 1.0)) > _CHECKED:
        out[smooth] = _newton(nu_s, p, z)
    else:
        out[smooth] = fitted(1.0 / nu_s)
    return out


def _newton(nu: NDArray[np.float64], p: float, z: float) -> NDArray[np.float64]:
    """:func:`t_quantile`'s Newton iterations, each value stopping where the scalar one does."""
    centre = p < 0.75
    target = p - 0.5 if centre else 1.0 - p
    # the Gamma-function constants depend on the degrees of freedom only
    log_beta = _log_beta_half(nu)
    log_c = log_beta + _LGAMMA_HALF - 0.5 * np.log(nu * math.pi)
    t = np.where(nu >= _EXPANSION_START_FROM, _cornish_fisher(z, nu), z)
    active = np.ones(nu.shape, dtype=bool)
    for _ in range(200):
        d = nu + t * t
        if centre:  # P(0 < T < t) = I_y(1/2, nu/2) / 2
            gap = target - 0.5 * _betai_array(0.5, nu / 2.0, t * t / d, nu / d, log_beta)
        else:  # P(T > t) = I_x(nu/2, 1/2) / 2
            gap = 0.5 * _betai_array(nu / 2.0, 0.5, nu / d, t * t / d, log_beta) - target
        step = _halley(gap / np.exp(log_c - (nu + 1.0) / 2.0 * np.log1p(t * t / nu)), t, nu)
        step = np.where(active, step, 0.0)
        t = t + step
        size = np.abs(step)
        done = size <= _LAST_STEP * t
        active &= ~done
        if not active.any():
            break
    return t


def t_upper(t: NDArray[np.float64], df: NDArray[np.float64]) -> NDArray[np.float64]:
    """Upper tail probability P(T > t) of Student's t at ``t >= 0`` with finite, positive
    ``df`` (arrays of one shape): ``I_x(df / 2, 1 / 2) / 2`` with ``x = df / (df + t^2)``, the
    continued fraction of :func:`t_quantile`, in NumPy over all of them."""
    t, nu = np.broadcast_arrays(np.asarray(t, dtype=np.float64), np.asarray(df, dtype=np.float64))
    if np.any(t < 0.0) or not np.all((nu > 0.0) & np.isfinite(nu)):
        raise ValueError("`t` must be >= 0 and `df` finite and > 0.")
    log_beta = _log_beta_half(nu)
    d = nu + t * t
    return 0.5 * _betai_array(nu / 2.0, 0.5, nu / d, t * t / d, log_beta)


#: log Gamma(1/2) = log(pi) / 2.
_LGAMMA_HALF = 0.5 * math.log(math.pi)
#: Arguments shifted up to at least this before Stirling's series (:func:`lgamma`).
_STIRLING_FROM = 10.0
#: Stirling's series coefficients B_2k / (2k (2k - 1)), k = 1..7 (the next term is below
#: 4e-17 from :data:`_STIRLING_FROM` on).
_STIRLING = (1.0 / 12.0, -1.0 / 360.0, 1.0 / 1260.0, -1.0 / 1680.0, 1.0 / 1188.0,
             -691.0 / 360360.0, 1.0 / 156.0)  # fmt: skip


def lgamma(x) -> NDArray[np.float64]:
    """log Gamma(x) of each ``x > 0`` (an array): ``math.lgamma`` in NumPy. Below
    :data:`_STIRLING_FROM`, x is raised by ones (log Gamma(x) = log Gamma(x + n) -
    log(x (x + 1) ... (x + n - 1))); from there, Stirling's series (within a few 1e-15 of
    ``scipy.special.gammaln``, relative, checked in the tests)."""
    x, product = _raised(np.array(x, dtype=np.float64))
    return ((x - 0.5) * np.log(x) - x + 0.5 * math.log(2.0 * math.pi) + _stirling(x)
            - np.log(product))  # fmt: skip


def _raised(x: NDArray[np.float64], half: bool = False) -> tuple[NDArray[np.float64],
                                                                 NDArray[np.float64]]:  # fmt: skip
    """``x`` raised by ones to at least :data:`_STIRLING_FROM`, and the product of the values
    it passed, x (x + 1) ... (x + n - 1) (1 where x was there already); ``half``: of their
    ratios (x + 1/2) / x instead."""
    product = np.ones_like(x)
    low = x < _STIRLING_FROM
    while low.any():  # at most _STIRLING_FROM steps
        product = np.where(low, product * ((x + 0.5) / x if half else x), product)
        x = np.where(low, x + 1.0, x)
        low = x < _STIRLING_FROM
    return x, product


def _stirling(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Stirling's series of log Gamma(x) past its leading terms, for x >= :data:`_STIRLING_FROM`."""
    inv2 = 1.0 / (x * x)
    series = np.full_like(x, _STIRLING[-1])
    for coef in _STIRLING[-2::-1]:
        series = series * inv2 + coef
    return series / x


def _log_beta_half(nu) -> NDArray[np.float64]:
    """log Gamma(nu / 2 + 1/2) - log Gamma(nu / 2) - log Gamma(1/2), the log of 1 / B(nu / 2,
    1/2) that the t distribution's incomplete beta function and density take, of each
    ``nu > 0``: with x = nu / 2 raised as in :func:`lgamma` (x + 1/2 by as many ones), the
    difference of the two Stirling expansions, x log(1 + 1 / (2x)) + log(x) / 2 - 1/2 + the
    series' difference, has no cancellation of the log Gamma values (hundreds at 1000 df)."""
    x, ratio = _raised(np.asarray(nu, dtype=np.float64) / 2.0, half=True)
    return (x * np.log1p(0.5 / x) - 0.5 + 0.5 * np.log(x) + _stirling(x + 0.5) - _stirling(x)
            - np.log(ratio) - _LGAMMA_HALF)  # fmt: skip


def _betai_array(a, b, x, y, log_beta) -> NDArray[np.float64]:
    """:func:`_betai` over arrays (``a`` or ``b`` a scalar), ``x, y`` in (0, 1] with
    ``x + y = 1``; ``log_beta`` = log Gamma(a + b) - log Gamma(a) - log Gamma(b)."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    with np.errstate(divide="ignore"):
        front = np.exp(log_beta + a * np.log(x) + b * np.log(y))
    lower = x < (a + 1.0) / (a + b + 2.0)
    cf = _betacf_array(np.where(lower, a, b), np.where(lower, b, a), np.where(lower, x, y))
    out = np.where(lower, front * cf / a, 1.0 - front * cf / b)
    return np.where(x <= 0.0, 0.0, np.where(y <= 0.0, 1.0, out))


def _betacf_array(a, b, x) -> NDArray[np.float64]:
    """:func:`_betacf` over arrays: the same modified Lentz steps, their coefficients formed
    for :data:`_CF_BLOCK` steps at a time, until every value's last step changed it by less
    than 1e-16 (a value already converged takes further steps of factor 1 within rounding).
    ``d`` and ``c`` are the two rows of one array, each half-step's increment and guard one
    pass over both (the steps are a few dozen NumPy calls on a few dozen values each)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    dc = np.empty((2, *np.shape(x)))
    d, c = dc  # views
    c[...] = 1.0
    d[...] = 1.0 - qab * x / qap
    d[...] = 1.0 / np.where(np.abs(d) > tiny, d, tiny)
    h = d.copy()
    done = np.zeros(x.shape, dtype=bool)
    for first in range(1, 10_000, _CF_BLOCK):
        m = np.arange(first, first + _CF_BLOCK, dtype=np.float64)[:, None]
        m2 = 2.0 * m
        even = m * (b - m) * x / ((qam + m2) * (a + m2))
        odd = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        for k in range(_CF_BLOCK):
            for aa in (even[k], odd[k]):
                np.multiply(aa, d, out=d)  # d = 1 + aa d and c = 1 + aa / c, each guarded
                np.divide(aa, c, out=c)
                dc += 1.0
                dc[...] = np.where(np.abs(dc) > tiny, dc, tiny)
                np.divide(1.0, d, out=d)
                delta = d * c
                h *= delta
            done |= np.abs(delta - 1.0) < 1e-16
        if done.all():
            break
    return h


def t_quantile(df: float, p: float) -> float:
    """Quantile at probability ``p`` in (0, 1) of Student's t with ``df > 0`` degrees of
    freedom (``inf``: the normal quantile)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"`p` must be in (0, 1); got {p!r}.")
    if not df > 0.0:
        raise ValueError(f"`df` must be > 0; got {df!r}.")
    if p < 0.5:
        return -t_quantile(df, 1.0 - p)
    if p == 0.5:
        return 0.0
    z = NormalDist().inv_cdf(p)
    if df == 1.0:
        return math.tan(math.pi * (p - 0.5))
    if df == 2.0:
        return (2.0 * p - 1.0) / math.sqrt(2.0 * p * (1.0 - p))
    if df >= CORNISH_FISHER_FROM:
        return _cornish_fisher(z, df)
    # Solve P(0 < T < t) = p - 1/2 near the centre, P(T > t) = 1 - p in the tail: each is
    # then computed without cancellation.
    centre = p < 0.75
    target = p - 0.5 if centre else 1.0 - p
    t = _cornish_fisher(z, df) if df >= _EXPANSION_START_FROM else z
    log_beta = float(_log_beta_half(df))
    log_c = log_beta + _LGAMMA_HALF - 0.5 * math.log(df * math.pi)
    for _ in range(200):
        d = df + t * t
        if centre:  # P(0 < T < t) = I_y(1/2, nu/2) / 2, concave increasing
            gap = target - 0.5 * _betai(0.5, df / 2.0, t * t / d, df / d, log_beta)
        else:  # P(T > t) = I_x(nu/2, 1/2) / 2, convex decreasing
            gap = 0.5 * _betai(df / 2.0, 0.5, df / d, t * t / d, log_beta) - target
        density = math.exp(log_c - (df + 1.0) / 2.0 * math.log1p(t * t / df))
        step = _halley(gap / density, t, df)
        t += step
        if abs(step) <= _LAST_STEP * t:  # the next step's size would be rounding (of the
            break  # tail probability: about 1e-13 relative at a few hundred df)
    return t


def _halley(newton, t, nu):
    """Halley's step from Newton's ``newton`` (``gap / density``) at ``t``: the gap's second
    derivative over its first is ``-(nu + 1) t / (nu + t^2)`` for both the tail and the centre
    mass (convex decreasing in t > 0), so the step is Newton's over
    ``1 - newton (nu + 1) t / (2 (nu + t^2))``; Newton's own while that is below 1/2 (far
    from the root)."""
    k = newton * (nu + 1.0) * t / (2.0 * (nu + t * t))
    if np.ndim(k):
        return np.where(k < 0.5, newton / (1.0 - np.minimum(k, 0.5)), newton)
    return newton / (1.0 - k) if k < 0.5 else newton


def _cornish_fisher(z: float, nu: float) -> float:
    z2 = z * z
    g1 = z * (z2 + 1.0) / 4.0
    g2 = z * ((5.0 * z2 + 16.0) * z2 + 3.0) / 96.0
    g3 = z * (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) / 384.0
    g4 = z * ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) / 92160.0
    return z + (g1 + (g2 + (g3 + g4 / nu) / nu) / nu) / nu


def _betai(a: float, b: float, x: float, y: float, log_beta: float) -> float:
    """Regularized incomplete beta I_x(a, b), with ``y = 1 - x`` given exactly and
    ``log_beta`` = log Gamma(a + b) - log Gamma(a) - log Gamma(b)."""
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    front = math.exp(log_beta + a * math.log(x) + b * math.log(y))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, y) / b


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return h
