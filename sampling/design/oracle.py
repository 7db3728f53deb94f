"""An oracle design: greedy picks with the true strengths, the limit a planner can approach.

A planner sees only estimated strengths; an oracle that knows the truth computes the Fisher
information a comparison adds exactly, so its greedy design shows how many comparisons the
criterion needs when nothing is estimated (and no balance rule binds). It is the reference
``benchmarks_perf/bench_sampling.py`` compares the planner with.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy.special import expit

from sampling.picks.criteria import add_comparison, centred, trace_reduction

__all__ = ["comparison_information", "oracle_matches"]

ORACLE_RIDGE = 0.1  # prior precision per model before any comparison (the planner's fallback)


def comparison_information(
    strength: NDArray[np.float64], eta: Sequence[float] = (1.0,)
) -> NDArray[np.float64]:
    """Fisher information about ``s_i - s_j`` of one comparison, for every pair, shape (M, M).

    With a judge of quality ``eta`` (Crowd-BT: ``p = eta sigma(d) + (1 - eta) sigma(-d)``), one
    comparison carries ``p'(d)^2 / (p (1 - p))`` with ``p'(d) = (2 eta - 1) sigma(d) sigma(-d)``;
    ``eta = 1`` gives ``sigma(d) sigma(-d)``. Judges used in turn: the mean over ``eta``.
    """
    s = np.asarray(strength, dtype=np.float64)
    sig = expit(s[:, None] - s[None, :])
    out = np.zeros_like(sig)
    for e in eta:
        p = e * sig + (1.0 - e) * (1.0 - sig)
        slope = (2.0 * e - 1.0) * sig * (1.0 - sig)
        out += slope**2 / np.clip(p * (1.0 - p), 1e-300, None)
    out /= len(eta)
    np.fill_diagonal(out, 0.0)
    return out


def oracle_matches(
    strength: pd.Series,
    submissions: pd.DataFrame,
    judges: Sequence[str],
    played: NDArray[np.float64],
    n: int,
    *,
    seed: int,
    eta: Sequence[float] = (1.0,),
    anchor: str | None = None,
) -> pd.DataFrame:
    """``n`` greedy picks that most reduce the variance, computed from the true strengths.

    Parameters
    ----------
    strength : pandas.Series
        True log-strength per model (the board's models, in order).
    submissions : pandas.DataFrame
        ``model``, ``task_id``: a pick plays a random task both models have.
    judges : list of str
        Used in turn from a random start; A/B order is random.
    played : ndarray, shape (M, M)
        Comparisons so far per pair (symmetric), in the order of ``strength``.
    n : int
    seed : int
    eta : sequence of float, default=(1.0,)
        The judges' qualities (the information per comparison is their mean).
    anchor : str, optional
        Reduce the variances relative to this model (the anchored objective); default: the
        mean variance of all pairwise differences.

    Returns
    -------
    pandas.DataFrame
        ``task_id``, ``model_a``, ``model_b``, ``judge``.

    Notes
    -----
    The information so far is ``sum_ij played_ij w_ij x x^T`` with the true ``w``, plus a ridge
    of 0.1 per model so that the first picks are defined; each pick maximises the reduction of
    the objective (:mod:`sampling.picks.criteria`) and updates the covariance. No balance rule
    applies: pairs and tasks may repeat.
    """
    rng = np.random.default_rng(seed)
    models = pd.Index([str(m) for m in strength.index], dtype=object)
    m = len(models)
    w = comparison_information(strength.to_numpy(), eta)
    info = -(np.asarray(played, dtype=np.float64) * w)
    np.fill_diagonal(info, -info.sum(axis=1))
    info += ORACLE_RIDGE * np.eye(m)
    if anchor is None:
        cov = centred(np.linalg.inv(info), np.ones(m, dtype=bool))
    else:
        free = np.flatnonzero(models != anchor)
        cov = np.zeros((m, m))
        cov[np.ix_(free, free)] = np.linalg.inv(info[np.ix_(free, free)])
    mcode = models.get_indexer(submissions["model"].astype(str))
    tcode, tasks = pd.factorize(submissions["task_id"].astype(str), sort=True)
    has = np.zeros((m, len(tasks)), dtype=bool)
    has[mcode[mcode >= 0], tcode[mcode >= 0]] = True
    shares = (has.astype(np.int64) @ has.T.astype(np.int64)) > 0
    w = w * shares
    if not w.any():
        raise ValueError("No two models share a task; nothing can be paired.")
    a = np.empty(n, dtype=np.int64)
    b = np.empty(n, dtype=np.int64)
    for k in range(n):
        score = trace_reduction(cov, w) + 1e-12 * rng.random((m, m))  # random ties
        i, j = np.unravel_index(int(np.argmax(np.triu(score, 1))), score.shape)
        a[k], b[k] = i, j
        cov = add_comparison(cov, int(i), int(j), float(w[i, j]))
    both = has[a] & has[b]
    pick = np.floor(rng.random(n) * both.sum(axis=1)).astype(np.int64)
    t = np.argmax(np.cumsum(both, axis=1) > pick[:, None], axis=1)
    swap = rng.random(n) < 0.5
    names = models.to_numpy(dtype=object)
    start = int(rng.integers(0, len(judges)))
    return pd.DataFrame({
        "task_id": tasks.to_numpy(dtype=object)[t],
        "model_a": names[np.where(swap, b, a)],
        "model_b": names[np.where(swap, a, b)],
        "judge": np.asarray(judges, dtype=object)[(start + np.arange(n)) % len(judges)],
    })  # fmt: skip
