"""Test helpers, independent of the package: a verdict simulator and statsmodels reference fits.

Nothing here imports :mod:`ratings`, so every expected value built from these helpers comes from
outside the code under test.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy.special import expit

REFERENCE_DATA = Path(__file__).resolve().parent / "data"  # copies, see data/README.md

WINNER_OF_Y = {1.0: "A", 0.0: "B", 0.5: "tie"}
Y_OF_WINNER = {"A": 1.0, "B": 0.0, "tie": 0.5}


def simulate_verdicts(
    rng: np.random.Generator,
    strengths,
    n_verdicts: int,
    n_tasks: int,
    *,
    tie_fraction: float = 0.0,
    task_sd: float = 0.0,
    names=None,
    tie_ring: bool = False,
) -> pd.DataFrame:
    """Draw a canonical verdict log (``model_a, model_b, winner, task_id``).

    Each verdict picks a task uniformly, a random pair of distinct models in random A/B order, and
    is a tie with probability ``tie_fraction``; otherwise A wins with probability
    ``sigma(s_a + u_ta - s_b - u_tb)``, where ``u`` are task-by-model effects with standard
    deviation ``task_sd`` (they make verdicts on one task dependent). ``tie_ring`` appends one tie
    between each model and the next (in a ring, on its own task) so that the win graph is strongly
    connected whatever was drawn.
    """
    s = np.asarray(strengths, dtype=np.float64)
    m = s.size
    names = [f"m{k:02d}" for k in range(m)] if names is None else list(names)
    task = rng.integers(0, n_tasks, n_verdicts)
    a = rng.integers(0, m, n_verdicts)
    b = (a + rng.integers(1, m, n_verdicts)) % m  # distinct from a, uniform over the others
    u = task_sd * rng.standard_normal((n_tasks, m))
    p = expit(s[a] + u[task, a] - s[b] - u[task, b])
    a_wins = rng.random(n_verdicts) < p
    tie = rng.random(n_verdicts) < tie_fraction
    winner = np.where(tie, "tie", np.where(a_wins, "A", "B"))
    out = pd.DataFrame(
        {
            "model_a": np.asarray(names, dtype=object)[a],
            "model_b": np.asarray(names, dtype=object)[b],
            "winner": winner,
            "task_id": [f"t{k:04d}" for k in task],
        }
    )
    if tie_ring:
        ring = pd.DataFrame(
            {
                "model_a": names,
                "model_b": names[1:] + names[:1],
                "winner": "tie",
                "task_id": "ring",
            }
        )
        out = pd.concat([out, ring], ignore_index=True)
    return out


def design(model_a, model_b, models) -> np.ndarray:
    """The +-1 Bradley-Terry design (one row per verdict, one column per model)."""
    code = {name: k for k, name in enumerate(models)}
    a = np.array([code[x] for x in model_a])
    b = np.array([code[x] for x in model_b])
    x = np.zeros((a.size, len(models)))
    rows = np.arange(a.size)
    x[rows, a] = 1.0
    x[rows, b] = -1.0
    return x


def statsmodels_bt(
    verdicts: pd.DataFrame, cov_type: str, groups=None, *, logit: bool = False
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Reference Bradley-Terry fit by statsmodels on raw verdict rows.

    The reference model is the first in sorted order (its column is dropped). A tie is one
    observation with outcome 1/2 (binomial GLM with a fractional response); ``logit=True`` uses
    ``sm.Logit`` instead (no ties allowed). ``cov_type="cluster"`` applies the small-sample factor
    G / (G - 1) and nothing else.

    Returns ``(models, params, cov)`` with ``params`` and ``cov`` for models[1:].
    """
    models = sorted(set(verdicts["model_a"]) | set(verdicts["model_b"]))
    x = design(verdicts["model_a"], verdicts["model_b"], models)[:, 1:]
    y = verdicts["winner"].map(Y_OF_WINNER).to_numpy(dtype=np.float64)
    kwds = {}
    if cov_type == "cluster":
        codes = pd.factorize(pd.Series(groups))[0]
        kwds = {"cov_kwds": {"groups": codes, "use_correction": False}}
    if logit:
        res = sm.Logit(y, x).fit(
            disp=0, method="newton", tol=1e-12, maxiter=100, cov_type=cov_type, **kwds
        )
    else:
        res = sm.GLM(y, x, family=sm.families.Binomial()).fit(
            tol=1e-13, maxiter=100, cov_type=cov_type, **kwds
        )
    cov = np.asarray(res.cov_params())
    if cov_type == "cluster":
        g = np.unique(codes).size
        cov = cov * g / (g - 1)
    return models, np.asarray(res.params), cov


def strongly_connected(verdicts: pd.DataFrame) -> bool:
    """Whether the graph "i won or tied against j" over all models is strongly connected."""
    models = sorted(set(verdicts["model_a"]) | set(verdicts["model_b"]))
    code = {name: k for k, name in enumerate(models)}
    m = len(models)
    reach = np.eye(m, dtype=bool)
    for a, b, w in zip(verdicts["model_a"], verdicts["model_b"], verdicts["winner"], strict=True):
        if w in ("A", "tie"):
            reach[code[a], code[b]] = True
        if w in ("B", "tie"):
            reach[code[b], code[a]] = True
    for k in range(m):  # Warshall's transitive closure
        reach |= reach[:, [k]] & reach[[k], :]
    return bool(reach.all())


def assert_close(actual, expected, rtol: float, atol_rel: float | None = None,
                 atol_min: float = 0.0) -> None:
    """``assert_allclose`` with the absolute tolerance relative to the largest expected entry
    (at least ``atol_min``: where every expected entry is 0, rounding is all that differs)."""
    expected = np.asarray(expected, dtype=np.float64)
    atol = (rtol if atol_rel is None else atol_rel) * float(np.max(np.abs(expected), initial=0.0))
    atol = max(atol, atol_min)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def one_direction_pairs_df(u: np.ndarray, concentrated: float = 0.02) -> np.ndarray:
    """Every pair's one-direction degrees of freedom from the clusters' shares ``u`` (M x G) of
    each model's variance, written out pair by pair from the definition: omega_g = u_jg + u_kg,
    pi_g = omega_g / sum omega; (sum pi^2)^-1 when neither model has a share above
    ``concentrated``, else with the leverage terms a_g = pi_g^2 / (1 - pi_g):
    1 / (sum pi^2 + (sum a)^2 - sum a^2)."""
    m = u.shape[0]
    top = (u / u.sum(axis=1, keepdims=True)).max(axis=1)
    out = np.empty((m, m))
    for j in range(m):
        for k in range(m):
            pi = (u[j] + u[k]) / (u[j] + u[k]).sum()
            if top[j] > concentrated or top[k] > concentrated:
                a = pi * pi / np.maximum(1.0 - pi, 1e-8)
                out[j, k] = 1.0 / (np.sum(pi * pi) + a.sum() ** 2 - np.sum(a * a))
            else:
                out[j, k] = 1.0 / np.sum(pi * pi)
    return out
