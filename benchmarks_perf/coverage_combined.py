#!/usr/bin/env python
"""Coverage of the combined headline 95 % interval: joint vs independent.

Each simulated board has 12 models and three scopes judged on the same 60 tasks (1,500 verdicts
per scope, random pairs, about 10 % ties, one exact judge: eta = 1). True log-strengths per scope
are common base strengths (evenly spaced, about +-435 Elo) plus small scope-specific deviations
(sd 0.15, about 65 Elo), drawn per board. Verdicts come from
:func:`ratings.datasets.simulate_verdicts` with a Gaussian copula (``task_corr``): verdicts that
share a (model, task) submission are dependent while every marginal win probability stays exactly
sigma(s_a - s_b), so the truth is the Bradley-Terry parameter itself. Cells (``--cells``):

* ``shared``: the three scopes share the same per-(model, task) copula latents (a submission that
  did well on one scope did well on the others), so the scope estimates are positively correlated
  and the independent headline variance is too small;
* ``independent``: each scope draws its own latents (scopes uncorrelated; both methods should
  cover);
* ``shared_strong`` (not run by default): shared latents with ``task_corr = 0.8``.

Every scope is fitted with Bradley-Terry on task-clustered
:class:`~ratings.data.comparisons.Comparisons`,
anchored at a mid-board model (``m05``, Elo 1000). Headline = the mean of the three scope Elos;
truth = the mean of the three scopes' true Elo differences to the anchor. For each cell the table
reports, over all models but the anchor and over boards:

* the empirical coverage of the 95 % headline interval for ``method="joint"`` and
  ``method="independent"``, each with a Monte-Carlo standard error (computed from the per-board
  coverage fractions, since the intervals of one board are dependent);
* ``se_ratio``: mean of SE_joint / SE_independent;
* ``z_rms_*``: root mean square of (estimate - truth) / SE (1 when the SE is right on average);
* ``scope_coverage``: the mean coverage of the per-scope 95 % intervals (a sanity check of the
  per-scope clustered sandwich the headline builds on).

Results: a table on stdout and ``benchmarks_perf/results/coverage_combined.csv`` (written
atomically: temp file + ``os.replace``).

Usage::

    python benchmarks_perf/coverage_combined.py                 # 1000 boards per cell
    python benchmarks_perf/coverage_combined.py --boards 200 --jobs 2
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

import ratings
from ratings.core.errors import NonIdentifiableError
from ratings.datasets.simulate import random_matches, simulate_verdicts
from ratings.io import write_atomic
from ratings.result import ELO_SCALE
from ratings.scopes.combine import combine

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
OUT = RESULTS / "coverage_combined.csv"

N_MODELS = 12
N_TASKS = 60
N_VERDICTS = 1500  # per scope
N_SCOPES = 3
TIE_RATE = 0.12  # tie share ~ tie_rate * E[4 p (1 - p)], about 10 % here
SCOPE_SD = 0.15  # scope-specific deviation of the true log-strengths
ANCHOR = "m05"
ANCHOR_ELO = 1000.0
LEVEL = 0.95
MODELS = [f"m{k:02d}" for k in range(N_MODELS)]
TASKS = [f"task-{k}" for k in range(N_TASKS)]
BASE = pd.Series(np.linspace(-1.0, 1.0, N_MODELS), index=MODELS)

#: name -> (copula task_corr, scopes share latents)
CELLS: dict[str, tuple[float, bool]] = {
    "shared": (0.5, True),
    "independent": (0.5, False),
    "shared_strong": (0.8, True),
}


def one_board(seed: int, task_corr: float, shared: bool) -> dict[str, np.ndarray] | None:
    """Simulate and fit one board; per non-anchor model, the quantities the table needs."""
    rng = np.random.default_rng(seed)
    truths, fits, ties = [], {}, []
    keys = pd.MultiIndex.from_product([MODELS, TASKS], names=["model", "task_id"])
    shared_latents = pd.Series(rng.standard_normal(len(keys)), index=keys) if shared else None
    for s in range(N_SCOPES):
        strength = BASE + rng.normal(0.0, SCOPE_SD, N_MODELS)
        matches = random_matches(MODELS, N_VERDICTS, n_tasks=N_TASKS,
                                 seed=int(rng.integers(2**63)))  # fmt: skip
        v = simulate_verdicts(matches, strength, tie_rate=TIE_RATE, task_corr=task_corr,
                              latents=shared_latents, seed=int(rng.integers(2**63)))  # fmt: skip
        ties.append(float(np.mean(v["winner"] == "tie")))
        data = ratings.aggregate(v, cluster="task_id")
        try:
            fits[f"scope{s}"] = ratings.fit(data, anchor=f"{ANCHOR}={ANCHOR_ELO:g}", level=LEVEL)
        except NonIdentifiableError:
            return None
        truths.append(ANCHOR_ELO + ELO_SCALE * (strength - strength[ANCHOR]))
    truth = pd.concat(truths, axis=1).mean(axis=1)
    joint = combine(fits, method="joint")
    indep = combine(fits, method="independent")
    others = joint.models[joint.models != ANCHOR]
    t = truth.reindex(others).to_numpy()

    scope_cov = np.mean([_covered(r, tr, others) for r, tr in zip(fits.values(), truths,
                                                                   strict=True)], axis=0)
    est = joint.elo.reindex(others).to_numpy()
    se_j = joint.se.reindex(others).to_numpy()
    se_i = indep.se.reindex(others).to_numpy()
    return {
        "cov_joint": _covered(joint, truth, others), "cov_indep": _covered(indep, truth, others),
        "z_joint": (est - t) / se_j, "z_indep": (est - t) / se_i, "se_ratio": se_j / se_i,
        "scope_cov": scope_cov, "ties": np.array([np.mean(ties)]),
    }  # fmt: skip


def _covered(r, truth: pd.Series, others: pd.Index) -> np.ndarray:
    ci = r.conf_int().reindex(others)
    t = truth.reindex(others).to_numpy()
    return ((ci["lower"].to_numpy() <= t) & (t <= ci["upper"].to_numpy())).astype(float)


def run_chunk(args: tuple[list[int], float, bool]) -> list[dict | None]:
    seeds, task_corr, shared = args
    return [one_board(seed, task_corr, shared) for seed in seeds]


def _init_worker() -> None:
    ratings.warmup()


def summarise(name: str, task_corr: float, shared: bool, boards: list[dict | None]) -> dict:
    ok = [b for b in boards if b is not None]

    def cov(key: str) -> tuple[float, float]:
        per_board = np.array([b[key].mean() for b in ok])
        pooled = float(np.concatenate([b[key] for b in ok]).mean())
        return pooled, float(per_board.std(ddof=1) / np.sqrt(len(per_board)))

    def rms(key: str) -> float:
        return float(np.sqrt(np.mean(np.concatenate([b[key] for b in ok]) ** 2)))

    cj, mj = cov("cov_joint")
    ci, mi = cov("cov_indep")
    return {
        "cell": name, "task_corr": task_corr, "latents": "shared" if shared else "per scope",
        "n_boards": len(ok), "n_failed": len(boards) - len(ok),
        "n_intervals": int(sum(b["cov_joint"].size for b in ok)),
        "coverage_joint": cj, "mcse_joint": mj, "coverage_independent": ci,
        "mcse_independent": mi,
        "se_ratio_joint_indep": float(np.mean(np.concatenate([b["se_ratio"] for b in ok]))),
        "z_rms_joint": rms("z_joint"), "z_rms_independent": rms("z_indep"),
        "scope_coverage": float(np.mean(np.concatenate([b["scope_cov"] for b in ok]))),
        "tie_share": float(np.mean([b["ties"][0] for b in ok])),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--boards", type=int, default=1000, help="boards per cell (default 1000)")
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                   help="worker processes (default 2)")
    p.add_argument("--cells", default="shared,independent",
                   help=f"comma-separated cells among {list(CELLS)} (default shared,independent)")
    p.add_argument("--seed", type=int, default=20261129, help="base seed")
    p.add_argument("--out", type=Path, default=OUT, help=f"CSV output (default {OUT})")
    args = p.parse_args(argv)

    cells = [c.strip() for c in args.cells.split(",") if c.strip()]
    unknown = [c for c in cells if c not in CELLS]
    if unknown or args.boards < 2:
        p.error(f"unknown cell(s) {unknown}; choose from {list(CELLS)}" if unknown
                else "--boards must be >= 2")
    ratings.warmup()
    rows = []
    t0 = time.perf_counter()
    for name in cells:
        rho, shared = CELLS[name]
        c = list(CELLS).index(name)
        seeds = [args.seed + 1_000_003 * c + b for b in range(args.boards)]
        size = max(1, -(-len(seeds) // (4 * max(args.jobs, 1))))
        chunks = [(seeds[k:k + size], rho, shared) for k in range(0, len(seeds), size)]
        if args.jobs > 1:
            with ProcessPoolExecutor(args.jobs, initializer=_init_worker) as pool:
                boards = [b for part in pool.map(run_chunk, chunks) for b in part]
        else:
            boards = [b for chunk in chunks for b in run_chunk(chunk)]
        rows.append(summarise(name, rho, shared, boards))
        print(f"[{time.perf_counter() - t0:6.1f}s] cell {name} done", flush=True)

    table = pd.DataFrame(rows)
    print()
    print(f"Combined headline (mean of {N_SCOPES} scope Elos), {N_MODELS} models, {N_TASKS} tasks, "
          f"{N_VERDICTS} verdicts per scope, BT anchored at {ANCHOR}; "
          f"{LEVEL:.0%} intervals over {N_MODELS - 1} models x boards")  # fmt: skip
    print(table.to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(table, args.out)
    print(f"\nwrote {args.out} ({time.perf_counter() - t0:.1f}s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
