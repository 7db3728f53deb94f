"""Coverage of placement intervals (:func:`ratings.place`): new models placed against a board
fitted from its own verdicts.

Per replication: a reference board of 8 models (true log-strengths evenly on [-1, 1], the
anchor ``r3`` at 1000) is fitted from its own verdicts (``ratings.fit``, CR2 by task); two new
models (true log-strengths 0.35 and -0.55) are then placed from their own verdicts, against the
board's models and each other, on other tasks. Verdicts on one task are dependent: a Gaussian
copula with correlation 0.5 between verdicts sharing a submission (model, task), which keeps
every marginal win probability exact (:func:`ratings.datasets.simulate.simulate_verdicts`,
``task_corr``), so the truth is the generating Elo relative to the anchor. No ties: a tie
share scored as half wins attenuates every difference, and the target would be a pseudo-true
value instead.

Each new model's 95% interval is scored on whether it covers its true Elo relative to the
anchor, for the two-step intervals (the default: CR2 by task plus the reference's covariance
pushed through the estimating equations) and for intervals that treat the board as known
(the same placement against the table without its covariance). Coverage is pooled over the two
new models; its Monte Carlo SE is the standard deviation of the per-board means over
sqrt(boards).

Cells: ``small-ref`` (board from 600 verdicts on 60 tasks; new models from 900 verdicts on 90
tasks: the board's uncertainty dominates), ``balanced`` (board 2,400 / 160; new 600 / 60) and
``sparse-new`` (board 2,400 / 160; new 160 / 32 tasks: the new models' own noise dominates).

Run: ``python benchmarks_perf/placement_coverage.py [--boards N] [--workers W]``; writes
``results/placement_coverage_boards.csv`` (one row per board and new model) and
``results/placement_coverage.csv`` (per cell), and prints the table with the machine's load.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

import ratings
from ratings.core.schema import ELO_SCALE
from ratings.core.threads import one_blas_thread
from ratings.datasets.simulate import random_matches, simulate_verdicts
from ratings.io import write_atomic
from ratings.scopes.scale import board_info

RESULTS = Path(__file__).parent / "results"
LEVEL = 0.95
REF = [f"r{k}" for k in range(8)]
NEW = {"n0": 0.35, "n1": -0.55}
ANCHOR = "r3"
TRUE = {**dict(zip(REF, np.linspace(-1.0, 1.0, len(REF)), strict=True)), **NEW}
CELLS = {  # (board verdicts, board tasks, new verdicts, new tasks)
    "small-ref": (600, 60, 900, 90),
    "balanced": (2400, 160, 600, 60),
    "sparse-new": (2400, 160, 160, 32),
}
RHO = 0.5


def _new_matches(n: int, n_tasks: int, seed: int) -> pd.DataFrame:
    """Matches of each new model against a random other model (board or new), random sides."""
    rng = np.random.default_rng(seed)
    names = np.asarray(REF + list(NEW), dtype=object)
    new = rng.integers(len(REF), len(names), n)
    other = (new + rng.integers(1, len(names), n)) % len(names)
    flip = rng.random(n) < 0.5
    a, b = np.where(flip, other, new), np.where(flip, new, other)
    return pd.DataFrame({"task_id": np.char.add("new-", rng.integers(0, n_tasks, n).astype(str))
                         .astype(object), "model_a": names[a], "model_b": names[b],
                         "judge": "judge"})


def one_board(cell: str, seed: int) -> list[dict]:
    n_ref, t_ref, n_new, t_new = CELLS[cell]
    board_log = simulate_verdicts(random_matches(REF, n_ref, n_tasks=t_ref, seed=seed), TRUE,
                                  task_corr=RHO, seed=seed + 1)
    new_log = simulate_verdicts(_new_matches(n_new, t_new, seed + 3), TRUE, task_corr=RHO,
                                seed=seed + 4)
    with warnings.catch_warnings(), one_blas_thread():  # workers side by side, not threads
        warnings.simplefilter("ignore")
        try:
            board = ratings.fit(board_log, anchor=f"{ANCHOR}=1000", level=LEVEL)
            two_step = ratings.place(new_log, reference=board)
            known = ratings.place(new_log, reference=board.to_frame().assign(**board_info(board)))
        except (ratings.NonIdentifiableError, ValueError):
            return [{"cell": cell, "seed": seed, "model": m, "failed": True} for m in NEW]
    out = []
    for m, s in NEW.items():
        truth = 1000.0 + ELO_SCALE * (s - TRUE[ANCHOR])
        row = {"cell": cell, "seed": seed, "model": m, "failed": False, "truth": truth}
        for name, r in (("two_step", two_step), ("known_board", known)):
            ci = r.conf_int().loc[m]
            row[f"{name}_cover"] = bool(ci["lower"] <= truth <= ci["upper"])
            row[f"{name}_se"] = float(r.se[m])
        row["elo"] = float(two_step.elo[m])
        out.append(row)
    return out


def _summary(boards: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for cell, g in boards.groupby("cell", sort=False):
        ok = g[~g["failed"].astype(bool)]
        per_board = ok.groupby("seed")[["two_step_cover", "known_board_cover"]].mean()
        n = len(per_board)
        row = {"cell": cell, "boards": int(g["seed"].nunique()), "failed": int(
            g.groupby("seed")["failed"].any().sum())}
        for name in ("two_step", "known_board"):
            x = per_board[f"{name}_cover"]
            row[f"{name}_coverage"] = float(x.mean())
            row[f"{name}_mcse"] = float(x.std(ddof=1) / np.sqrt(n)) if n > 1 else np.nan
            row[f"{name}_mean_se"] = float(ok[f"{name}_se"].mean())
        row["sd_of_estimate"] = float(ok.groupby("model")["elo"].std(ddof=1).mean())
        rows.append(row)
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=1000, help="boards per cell")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cells", default=",".join(CELLS))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    cells = args.cells.split(",")
    jobs = [(c, args.seed + 10 * k) for c in cells for k in range(args.boards)]
    t0, load0 = time.time(), os.getloadavg()
    rows = []
    with ProcessPoolExecutor(args.workers) as pool:
        for k, part in enumerate(pool.map(one_board, *zip(*jobs, strict=True), chunksize=20)):
            rows += part
            if (k + 1) % 500 == 0:
                print(f"{k + 1} of {len(jobs)} boards, {time.time() - t0:.0f} s", flush=True)
    boards = pd.DataFrame(rows)
    write_atomic(boards, RESULTS / "placement_coverage_boards.csv")
    table = _summary(boards)
    write_atomic(table, RESULTS / "placement_coverage.csv")
    load1 = os.getloadavg()
    print(table.to_string(index=False, float_format="{:.4f}".format))
    print(f"{len(jobs)} boards in {time.time() - t0:.0f} s on {args.workers} workers; load "
          f"average {load0[0]:.1f} at the start, {load1[0]:.1f} at the end")


if __name__ == "__main__":
    main()
