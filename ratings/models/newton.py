"""The one solver of the model core: damped, projected Newton's method with a line search,
its convergence report and the divergence check. Every fit runs on it: Bradley-Terry (penalised
or not), Firth's bias-reduced fit (Fisher scoring on the modified score), Crowd-BT, judge effects
and style control; each hands it an objective ``x -> (f, gradient, Hessian)`` built from a
family's row terms (:mod:`ratings.models.families`) and its design."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ratings.core.errors import ConvergenceWarning
from ratings.core.linalg import KeptFactor, block_view, solve_pd

__all__ = ["NewtonResult", "newton"]

Objective = Callable[[NDArray[np.float64]], tuple[float, NDArray[np.float64], NDArray[np.float64]]]


@dataclass(frozen=True, eq=False)
class NewtonResult:
    x: NDArray[np.float64]
    f: float
    hessian: NDArray[np.float64]
    converged: bool
    n_iter: int
    max_grad: float
    active: NDArray[np.bool_]  # coordinates held at a bound at the solution


def _solve(h: NDArray[np.float64], g: NDArray[np.float64],
           kept: KeptFactor) -> NDArray[np.float64]:  # fmt: skip
    """Newton direction; Levenberg damping when ``h`` is not positive definite. ``kept``: the
    large systems' single-precision factor, which the next step refines on while the Hessian
    has hardly changed (:class:`~ratings.core.linalg.KeptFactor`; the damped systems' own)."""
    if not (np.isfinite(h).all() and np.isfinite(g).all()):
        raise FloatingPointError("non-finite gradient or Hessian: the estimate diverges")
    lam = 0.0
    scale = max(float(np.max(np.abs(np.diag(h)), initial=0.0)), 1e-12)
    while True:
        damped = h if lam == 0.0 else h + lam * np.eye(h.shape[0])
        try:
            return solve_pd(damped, g, kept if lam == 0.0 else None)
        except np.linalg.LinAlgError:
            lam = max(1e-8 * scale, 10.0 * lam)


def newton(
    fun: Objective,
    x0: NDArray[np.float64],
    free: NDArray[np.int64],
    *,
    lower: NDArray[np.float64] | None = None,
    upper: NDArray[np.float64] | None = None,
    tol: float = 1e-10,
    max_iter: int = 100,
    what: str = "Model",
    bound: float = np.inf,
    max_step: float = np.inf,
    quadratic: bool = True,
    iterations: str = "Newton iterations",
    gradient: str = "gradient",
) -> NewtonResult:
    """Minimise ``fun -> (f, gradient, Hessian)`` over the coordinates ``free`` of ``x0``.

    Newton steps with backtracking; with box bounds, a projected Newton method (Bertsekas 1982):
    coordinates at a bound whose gradient points outward are held fixed for the step, and the
    step is projected back into the box. Stops when the largest change is below ``tol``, or
    when two full steps show the quadratic rate putting the next one below it;
    warns :class:`ConvergenceWarning` (and returns ``converged=False``) after ``max_iter``.
    Raises ``FloatingPointError`` when the iterates diverge (no finite minimum): a non-finite
    value, or a coordinate beyond ``bound`` in absolute value.

    Scoring methods run on it too: ``fun`` may return any gradient-like vector and a positive
    definite matrix (Firth's fit: minus the modified score and the Fisher information), with
    ``quadratic=False`` (no stop on the predicted next step: the iteration converges linearly)
    and ``max_step`` (the largest change of a coordinate in one step). A ``LinAlgError`` of
    ``fun`` at a trial point halves the step; ``iterations`` and ``gradient`` name them in the
    warning.
    """
    x = np.array(x0, dtype=np.float64)
    n = x.size
    lo = np.full(n, -np.inf) if lower is None else np.asarray(lower, dtype=np.float64)
    hi = np.full(n, np.inf) if upper is None else np.asarray(upper, dtype=np.float64)
    x = np.clip(x, lo, hi)
    f, g, h = fun(x)
    converged, it, kept = False, 0, KeptFactor()
    last = (np.inf, None)  # the previous full step's size and free set
    for it in range(1, max_iter + 1):  # noqa: B007 - `it` is reported after the loop
        move = free[~_at_bound(x, g, lo, hi, free, strict=True)]
        step = _solve(block_view(h, move), g[move], kept) if move.size else np.zeros(0)
        big = float(np.max(np.abs(step), initial=0.0))
        if big > max_step:
            step *= max_step / big
        t = 1.0
        while True:  # backtracking: accept the first step that does not increase f
            x_new = x.copy()
            x_new[move] = np.clip(x[move] - t * step, lo[move], hi[move])
            try:
                f_new, g_new, h_new = fun(x_new)
            except np.linalg.LinAlgError:  # lost in floating point at the trial: shorter step
                if t < 1e-10:
                    raise
                t *= 0.5
                continue
            if f_new <= f + 1e-12 * abs(f) or t < 1e-10:
                break
            t *= 0.5
        if np.max(np.abs(x_new), initial=0.0) > bound:
            raise FloatingPointError(f"|x| exceeded {bound:g}: the estimate diverges")
        change = float(np.max(np.abs(x_new - x), initial=0.0))
        x, f, g, h = x_new, f_new, g_new, h_new
        if change < tol or (quadratic and _next_step_below(change, t, move, last, tol)):
            converged = True
            break
        last = (change, move) if t == 1.0 else (np.inf, None)
    held = _at_bound(x, g, lo, hi, free, strict=False)
    inner = free[~held]
    max_grad = float(np.max(np.abs(g[inner]), initial=0.0))
    active = np.zeros(n, dtype=bool)
    active[free] = held
    if not converged:
        warnings.warn(
            f"{what} fit did not converge after {it} {iterations} (largest {gradient} "
            f"{max_grad:.3g}); results are returned with converged=False.",
            ConvergenceWarning,
            stacklevel=3,
        )
    return NewtonResult(x, float(f), h, converged, it, max_grad, active)


def _next_step_below(change: float, t: float, move, last, tol: float) -> bool:
    """Has Newton's quadratic convergence made the next step smaller than ``tol``?

    Two full steps in a row on the same free coordinates, the second at most 1e-4 and
    shrinking: in that regime step k+1 is about C step_k^2, with C = step_k / step_{k-1}^2
    measured from the last two, so the error left is about step_k^3 / step_{k-1}^2. Stopping
    there saves the step that would only confirm it (one Hessian solve and evaluation).
    """
    prev, prev_move = last
    if t != 1.0 or prev_move is None or not change < min(prev, 1e-4):
        return False
    return np.array_equal(prev_move, move) and change**3 / prev**2 < tol


def _at_bound(x, g, lo, hi, free, *, strict: bool) -> NDArray[np.bool_]:
    """Free coordinates sitting at a bound with the gradient pointing out of the box."""
    xf, gf = x[free], g[free]
    if strict:
        return ((xf <= lo[free]) & (gf > 0)) | ((xf >= hi[free]) & (gf < 0))
    return ((xf <= lo[free]) & (gf >= 0)) | ((xf >= hi[free]) & (gf <= 0))
