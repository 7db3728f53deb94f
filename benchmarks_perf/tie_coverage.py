"""Coverage of the tie models' default intervals: ratings and the tie parameter.

Boards drawn from each tie family (Davidson, Rao-Kupper) with task effects (a per (model, task)
shift of the strengths, sd ``TASK_SD``), small and large, at a low and a high tie rate; each
fitted by ``ratings.fit(log, model=ratings.BT(ties=FAMILY), anchor="m00")`` with its default
intervals (CR2 clustered by task, Student t with Satterthwaite df per contrast; the tie
parameter's interval from phi's, with the df of its own contrast). A cell's coverage is the
share of replications whose 95% interval holds the pseudo-true value, with its Monte Carlo
standard error: for the ratings, each non-anchor model's interval, averaged over models within
a replication (the SE from the spread of those averages across replications); for the tie
parameter, its one interval.

Pseudo-true values: with task effects the fit estimates the model that best fits the verdicts'
population probabilities, averaged over the task shifts (u_a - u_b ~ N(0, 2 TASK_SD^2), by
Gauss-Hermite quadrature), so the truth is the tie model fitted to those expected outcome
counts (every pair equally often, as drawn), as ``coverage_cells.truth`` does for half wins.

    python benchmarks_perf/tie_coverage.py                  # the stated replications
    python benchmarks_perf/tie_coverage.py --reps 200       # quicker, wider Monte Carlo SE

Writes ``results/tie_coverage.csv`` and prints the table for ``docs/coverage.md``.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

import ratings
from ratings.data.comparisons import Comparisons
from ratings.io import write_atomic
from ratings.models.ties import family_of, fit_ties

HERE = Path(__file__).resolve().parent
LEVEL = 0.95
TASK_SD = 0.3


@dataclass(frozen=True)
class Cell:
    family: str
    size: str
    n_models: int
    n_verdicts: int
    n_tasks: int
    phi: float  # the tie parameter on its unbounded scale (low: about 10% ties, high: 40%)
    reps: int

    @property
    def name(self) -> str:
        return f"{self.family}/{self.size}/phi={self.phi:g}"


def cells(reps_small: int, reps_large: int) -> list[Cell]:
    out = []
    for family in ("davidson", "rao-kupper"):
        for size, m, n, t, reps in (("small", 6, 300, 30, reps_small),
                                    ("large", 12, 3000, 150, reps_large)):
            for phi in (-1.6, 0.5):
                out.append(Cell(family, size, m, n, t, phi, reps))
    return out


def strengths(m: int) -> np.ndarray:
    """Fixed strengths of a board of ``m`` models (seeded), spread about 1.2 in sd."""
    return np.random.default_rng(1000 + m).normal(0.0, 0.6, m)


def draw(cell: Cell, s: np.ndarray, rng: np.random.Generator) -> pd.DataFrame:
    m, n = cell.n_models, cell.n_verdicts
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    t = rng.integers(0, cell.n_tasks, n)
    u = rng.normal(0.0, TASK_SD, (cell.n_tasks, m))
    d = s[a] - s[b] + u[t, a] - u[t, b]
    pa, pb, _ = family_of(cell.family).probabilities(d, cell.phi)
    x = rng.random(n)
    winner = np.where(x < pa, "A", np.where(x < pa + pb, "B", "tie"))
    names = np.array([f"m{k:02d}" for k in range(m)])
    return pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner,
                         "task_id": t})


def truth(cell: Cell, s: np.ndarray) -> tuple[np.ndarray, float]:
    """Pseudo-true strengths (model 0 at 0) and phi: the tie model fitted to the expected
    outcome counts of every pair, the task shifts integrated out."""
    fam = family_of(cell.family)
    x, w = np.polynomial.hermite_e.hermegauss(60)
    w = w / w.sum()
    m = cell.n_models
    ii, jj = np.triu_indices(m, 1)
    d = s[ii, None] - s[jj, None] + np.sqrt(2.0) * TASK_SD * x[None, :]
    pa, pb, pt = (p @ w for p in fam.probabilities(d, cell.phi))
    big = 1e5
    zero = np.zeros(ii.size, dtype=np.int64)
    data = Comparisons(pd.Index([f"m{k:02d}" for k in range(m)], dtype=object),
                       pd.Index(["judge"], dtype=object), None, None, ii, jj, zero, zero,
                       big * pa, big * pb, big * pt)  # fmt: skip
    fit = fit_ties(data, fam, ref=0, tol=1e-12)
    return fit.theta, fit.phi


def run_cell(cell: Cell, seed: int) -> dict:
    s = strengths(cell.n_models)
    theta, phi = truth(cell, s)
    fam = family_of(cell.family)
    true_elo = 1000.0 + ratings.Ratings.scale * theta
    true_value = float(fam.value(phi))
    rng = np.random.default_rng(seed)
    rating_cover, tie_cover, shares, failed, width = [], [], [], 0, []
    t0 = time.perf_counter()
    for _ in range(cell.reps):
        log = draw(cell, s, rng)
        shares.append(float((log["winner"] == "tie").mean()))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = ratings.fit(log, model=ratings.BT(ties=cell.family), anchor="m00")
        except (ratings.NonIdentifiableError, ValueError, FloatingPointError):
            failed += 1
            continue
        frame = r.to_frame().reindex([f"m{k:02d}" for k in range(cell.n_models)])
        lo, hi = frame["lower"].to_numpy()[1:], frame["upper"].to_numpy()[1:]
        rating_cover.append(float(np.mean((lo <= true_elo[1:]) & (true_elo[1:] <= hi))))
        t = r.ties.iloc[0]
        tie_cover.append(float(t["lower"] <= true_value <= t["upper"]))
        width.append(float(t["upper"] - t["lower"]))
    rc, tc = np.array(rating_cover), np.array(tie_cover)
    done = rc.size
    return {
        "family": cell.family, "size": cell.size, "models": cell.n_models,
        "verdicts": cell.n_verdicts, "tasks": cell.n_tasks, "phi": cell.phi,
        "true_tie_parameter": true_value, "tie_share": float(np.mean(shares)),
        "reps": done, "failed": failed,
        "rating_coverage": rc.mean(), "rating_mc_se": rc.std(ddof=1) / np.sqrt(done),
        "tie_coverage": tc.mean(), "tie_mc_se": np.sqrt(tc.mean() * (1 - tc.mean()) / done),
        "tie_interval_width": float(np.median(width)),
        "seconds": time.perf_counter() - t0, "load1": os.getloadavg()[0],
    }  # fmt: skip


def main(argv: list[str] | None = None) -> pd.DataFrame:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=None, help="replications of every cell")
    ap.add_argument("--reps-small", type=int, default=1000)
    ap.add_argument("--reps-large", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20261206)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "tie_coverage.csv")
    args = ap.parse_args(argv)
    small = args.reps or args.reps_small
    large = args.reps or args.reps_large
    rows = []
    for k, cell in enumerate(cells(small, large)):
        rows.append(run_cell(cell, args.seed + k))
        row = rows[-1]
        print(f"{cell.name}: ratings {row['rating_coverage']:.3f} ({row['rating_mc_se']:.3f}), "
              f"tie parameter {row['tie_coverage']:.3f} ({row['tie_mc_se']:.3f}); "
              f"{row['tie_share']:.0%} ties, {row['reps']} reps, {row['seconds']:.0f} s, "
              f"load {row['load1']:.1f}", flush=True)
        write_atomic(pd.DataFrame(rows), args.out)
    table = pd.DataFrame(rows)
    print(table.to_string(index=False, float_format="{:.3f}".format))
    return table


if __name__ == "__main__":
    main()
