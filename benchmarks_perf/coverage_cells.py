"""The cells of ``validate_coverage.py``: the study's constants (level, tie rate, judges, variant
and target names), the board sizes and cells, the vectorised NumPy simulator of one board and
the true (or pseudo-true) strengths it is scored against."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.special import expit, ndtr

from ratings.data.comparisons import Comparisons
from ratings.models.bt import fit_bt

__all__ = [
    "CELLS",
    "DEFAULT_CELLS",
    "DIVERGED",
    "JUDGE_ETA",
    "LEVEL",
    "SIZES",
    "SPARSE_PER_TASK",
    "SPARSE_STRENGTH",
    "TARGETS",
    "TIE_RATE",
    "VARIANTS",
    "VARIANT_NAMES",
    "Cell",
    "Size",
    "simulate",
    "truth",
]

LEVEL = 0.95
TIE_RATE = 0.12
JUDGE_ETA = {"j1": 0.95, "j2": 0.80, "j3": 0.65}
VARIANTS = ["model", "hc0", "cr1_z", "cr1_t", "cr2_t", "cr3_t", "cr3_z", "cr3x_t", "boot"]
VARIANT_NAMES = {
    "cr2_t": "CR2 with Satterthwaite df per contrast (the default, `ratings.fit`)",
    "model": "model-based H^-1",
    "hc0": "HC0 per verdict",
    "cr1_z": "CR1 G/(G-1), z (`ci=\"sandwich-z\"`)",
    "cr1_t": "CR1 G/(G-1), t(G-1)",
    "cr3_t": "CR3 jackknife (one-step), t(G-1)",
    "cr3_z": "CR3 jackknife (one-step), z",
    "cr3x_t": "CR3 jackknife (exact refits), t(G-1)",
    "boot": "cluster bootstrap percentile",
}
TARGETS = ("anchor", "pairs", "sparse", "sparse_pairs")
#: A fit with some |log-strength| above this is counted as failed ("diverged"): the true ones are
#: within +-1.5, and ``fit_crowd_bt`` accepts runaway fits up to |s| = 40 (see the report).
DIVERGED = 20.0


@dataclass(frozen=True)
class Size:
    n_models: int
    n_verdicts: int
    n_tasks: int
    spread: float  # strengths evenly spaced on [-spread, spread]

    @property
    def models(self) -> list[str]:
        return [f"m{k:02d}" for k in range(self.n_models)]

    @property
    def strengths(self) -> np.ndarray:
        return np.linspace(-self.spread, self.spread, self.n_models)

    @property
    def anchor(self) -> int:
        return self.n_models // 2


SIZES = {"small": Size(10, 2_000, 40, 1.2), "large": Size(30, 200_000, 400, 1.5),
         "sparse": Size(10, 6_000, 200, 1.2)}  # fmt: skip
#: Sparse cells: verdicts of the sparse model per task it is on, and its true strength.
SPARSE_PER_TASK, SPARSE_STRENGTH = 20, 0.45


@dataclass(frozen=True)
class Cell:
    model: str  # "bt" or "crowd-bt"
    size: str
    rho: float = 0.0  # copula task_corr
    task_sd: float = 0.0  # log-odds submission effects (pseudo-true truth)
    judges: dict = field(default_factory=dict)  # judge -> eta (Crowd-BT)
    n_tasks: int | None = None  # override the size's number of tasks
    sparse_tasks: int | None = None  # the last model plays on this many tasks only
    equal: bool = False  # all models equally strong (the least favourable board for ranks)
    extras: bool = True  # also the bootstrap and exact jackknife on some boards

    @property
    def dims(self) -> Size:
        size = SIZES[self.size]
        if self.n_tasks is None:
            return size
        return Size(size.n_models, size.n_verdicts, self.n_tasks, size.spread)

    @property
    def strengths(self) -> np.ndarray:
        """True log-strengths: evenly spaced, all 0 (``equal``), or evenly spaced for the dense
        models and :data:`SPARSE_STRENGTH` for the sparse one (the last)."""
        size = self.dims
        if self.equal:
            return np.zeros(size.n_models)
        if self.sparse_tasks is not None:
            dense = np.linspace(-size.spread, size.spread, size.n_models - 1)
            return np.append(dense, SPARSE_STRENGTH)
        return size.strengths

    @property
    def sparse(self) -> int | None:
        """Index of the sparse model, if any."""
        return None if self.sparse_tasks is None else self.dims.n_models - 1


CELLS: dict[str, Cell] = {
    "bt-small-indep": Cell("bt", "small"),
    "bt-small-dep": Cell("bt", "small", rho=0.5),
    "bt-small-strong": Cell("bt", "small", rho=0.8),
    "bt-small-taskfx": Cell("bt", "small", task_sd=0.5),
    "bt-small-g20": Cell("bt", "small", rho=0.8, n_tasks=20),
    "bt-large-indep": Cell("bt", "large"),
    "bt-large-dep": Cell("bt", "large", rho=0.5),
    "bt-large-strong": Cell("bt", "large", rho=0.8),
    "crowd-small-indep": Cell("crowd-bt", "small", judges=JUDGE_ETA),
    "crowd-small-dep": Cell("crowd-bt", "small", rho=0.5, judges=JUDGE_ETA),
    "crowd-large-dep": Cell("crowd-bt", "large", rho=0.5, judges=JUDGE_ETA),
    # small-sample cells: a model on 3, 6 or 12 of 200 tasks; 20-task boards; equal strengths
    "bt-sparse-3": Cell("bt", "sparse", rho=0.5, sparse_tasks=3, extras=False),
    "bt-sparse-6": Cell("bt", "sparse", rho=0.5, sparse_tasks=6, extras=False),
    "bt-sparse-12": Cell("bt", "sparse", rho=0.5, sparse_tasks=12, extras=False),
    "bt-sparse-6-taskfx": Cell("bt", "sparse", task_sd=0.5, sparse_tasks=6, extras=False),
    "bt-small-g20-dep": Cell("bt", "small", rho=0.5, n_tasks=20, extras=False),
    "crowd-small-g20": Cell("crowd-bt", "small", rho=0.5, judges=JUDGE_ETA, n_tasks=20,
                            extras=False),
    "bt-small-equal": Cell("bt", "small", rho=0.5, equal=True, extras=False),
}
DEFAULT_CELLS = list(CELLS)


# ----------------------------------------------------------------------------------------------
# Simulation
# ----------------------------------------------------------------------------------------------


def simulate(cell: Cell, rng: np.random.Generator, simulator: str = "numpy") -> pd.DataFrame:
    """One board's canonical verdicts: ``model_a, model_b, winner, task_id, judge``."""
    size = cell.dims
    m, n, t = size.n_models, size.n_verdicts, size.n_tasks
    judges = list(cell.judges) or ["judge"]
    if simulator == "package":
        from ratings.datasets.simulate import random_matches, simulate_verdicts

        if cell.sparse_tasks is not None or cell.equal:
            raise ValueError("--simulator package runs the original cells only")
        matches = random_matches(size.models, n, n_tasks=t, judges=judges,
                                 seed=int(rng.integers(2**63)))  # fmt: skip
        return simulate_verdicts(
            matches, pd.Series(size.strengths, index=size.models),
            judge_eta=cell.judges or None, task_sd=cell.task_sd, tie_rate=TIE_RATE,
            task_corr=cell.rho, seed=int(rng.integers(2**63)),
        )  # fmt: skip
    # NumPy twin of random_matches + simulate_verdicts (same model, one draw per submission).
    s = cell.strengths
    dense = m if cell.sparse_tasks is None else m - 1
    a = rng.integers(0, dense, n)
    b = (a + rng.integers(1, dense, n)) % dense
    task = rng.integers(0, t, n)
    if cell.sparse_tasks is not None:  # the sparse model on a few tasks, random sides
        k = cell.sparse_tasks * SPARSE_PER_TASK
        st = np.repeat(rng.choice(t, cell.sparse_tasks, replace=False), SPARSE_PER_TASK)
        opp = rng.integers(0, dense, k)
        left = rng.random(k) < 0.5
        a = np.concatenate([a, np.where(left, m - 1, opp)])
        b = np.concatenate([b, np.where(left, opp, m - 1)])
        task = np.concatenate([task, st])
        n = a.size
    judge = np.arange(n) % len(judges)
    d = s[a] - s[b]
    if cell.task_sd > 0:
        u = rng.normal(0.0, cell.task_sd, (t, m))  # one effect per (task, model) submission
        d = d + u[task, a] - u[task, b]
    p = expit(d)
    if cell.judges:
        eta = np.array([cell.judges[j] for j in judges])[judge]
        p = eta * p + (1.0 - eta) * (1.0 - p)
    p_tie = 4.0 * TIE_RATE * p * (1.0 - p)
    if cell.judges:  # Crowd-BT leaves ties out: here they are independent of the pair
        p_tie = np.full(n, TIE_RATE)
    if cell.rho > 0:
        v = rng.standard_normal((t, m))  # copula latent per (task, model) submission
        z = (np.sqrt(cell.rho) * (v[task, a] - v[task, b]) / np.sqrt(2.0)
             + np.sqrt(1.0 - cell.rho) * rng.standard_normal(n))  # fmt: skip
        u01 = ndtr(z)
    else:
        u01 = rng.random(n)
    if cell.judges:
        code = np.where(rng.random(n) < p_tie, 2, np.where(u01 < p, 0, 1))
    else:
        code = np.where(u01 < p - p_tie / 2, 0, np.where(u01 < p + p_tie / 2, 2, 1))
    names = np.asarray(size.models, dtype=object)
    return pd.DataFrame({
        "model_a": names[a], "model_b": names[b],
        "winner": np.array(["A", "B", "tie"], dtype=object)[code],
        "task_id": task, "judge": np.asarray(judges, dtype=object)[judge],
    })  # fmt: skip


def truth(cell: Cell) -> np.ndarray:
    """True (or pseudo-true) log-strengths, anchored at the mid-board model."""
    size = cell.dims
    s = cell.strengths
    if cell.task_sd == 0:
        return s - s[size.anchor]
    # Pseudo-true: BT fit of the population win probabilities under the submission effects,
    # P(a beats b) = E sigma(s_a - s_b + sqrt(2) task_sd Z), equal weight per pair.
    x, w = np.polynomial.hermite_e.hermegauss(80)
    w = w / w.sum()
    m = size.n_models
    ii, jj = np.triu_indices(m, 1)
    pbar = expit(s[ii, None] - s[jj, None] + np.sqrt(2.0) * cell.task_sd * x[None, :]) @ w
    big = 1e4 * _pair_weights(cell, ii, jj)  # expected verdicts per pair (the design)
    data = Comparisons(
        pd.Index(size.models, dtype=object), pd.Index(["judge"], dtype=object), None, None,
        ii, jj, np.zeros(ii.size), np.zeros(ii.size), big * pbar, big * (1 - pbar),
        np.zeros(ii.size),
    )  # fmt: skip
    return fit_bt(data, ref=size.anchor, tol=1e-12).theta


def _pair_weights(cell: Cell, ii: np.ndarray, jj: np.ndarray) -> np.ndarray:
    """Expected share of verdicts per pair: uniform, or for a sparse cell the dense pairs
    sharing the dense verdicts and the sparse model's pairs sharing its own."""
    if cell.sparse_tasks is None:
        return np.ones(ii.size)
    size, sp = cell.dims, cell.sparse
    dense = size.n_models - 1
    with_sparse = (ii == sp) | (jj == sp)
    return np.where(with_sparse, cell.sparse_tasks * SPARSE_PER_TASK / dense,
                    size.n_verdicts / (dense * (dense - 1) / 2)) / size.n_verdicts
