"""Joint coverage of the simultaneous rank intervals on boards of equally strong models.

That board is the least favourable case for the step-down max-|t| rank intervals: every pair's
difference is zero, so the joint error rate of the procedure is its level and the joint coverage
should be 0.95 at the default level. ``validate_coverage.py`` measures it on 1,000 boards of its
cell ``bt-small-equal`` among every other interval variant; this script measures only the
default fit's simultaneous rank intervals on that cell, so that many more boards fit in the
same time, from seeds of its own.

    python benchmarks_perf/coverage_ranks_equal.py --boards 3000 --seed 20261202 --jobs 2

writes ``results/coverage_ranks_equal.csv``: boards, joint coverage and its Monte Carlo SE,
per-model coverage, mean width, and the seed.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from coverage_cells import CELLS, LEVEL, simulate, truth  # noqa: E402

import ratings  # noqa: E402
from ratings.core.errors import ConvergenceWarning, NonIdentifiableError  # noqa: E402
from ratings.inference.ranks import rank_intervals  # noqa: E402
from ratings.io import write_atomic  # noqa: E402

CELL = "bt-small-equal"


def one_board(seed: int) -> tuple[bool, float, float] | None:
    """(all true ranks inside, share of models inside, mean width), or None without an
    estimate."""
    cell = CELLS[CELL]
    size = cell.dims
    verdicts = simulate(cell, np.random.default_rng(seed))
    true = truth(cell)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            r = ratings.fit(verdicts, model=cell.model, anchor=size.models[size.anchor])
    except NonIdentifiableError:
        return None
    rank = 1 + (true[None, :] > true[:, None]).sum(axis=1)
    iv = rank_intervals(r.pair_stats, r.models, LEVEL, kind="simultaneous",
                        seed=seed % 2**32)
    lo, hi = iv["rank_lower"].to_numpy(float), iv["rank_upper"].to_numpy(float)
    inside = (lo <= rank) & (rank <= hi)
    return bool(inside.all()), float(inside.mean()), float(np.mean(hi - lo))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--boards", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=20261202, help="base seed (board i: seed + i)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--csv", default=str(HERE / "results" / "coverage_ranks_equal.csv"))
    args = parser.parse_args(argv)
    start = time.perf_counter()
    seeds = [args.seed + i for i in range(args.boards)]
    with multiprocessing.Pool(args.jobs) as pool:
        boards = pool.map(one_board, seeds, chunksize=25)
    ok = [b for b in boards if b is not None]
    joint = np.array([b[0] for b in ok], dtype=float)
    n = len(ok)
    row = {"cell": CELL, "variant": "simultaneous", "level": LEVEL, "boards": n,
           "failed": len(boards) - n, "joint": joint.mean(),
           "joint_mcse": joint.std(ddof=1) / np.sqrt(n),
           "per_model": float(np.mean([b[1] for b in ok])),
           "width": float(np.mean([b[2] for b in ok])), "seed": args.seed,
           "seconds": round(time.perf_counter() - start, 1)}  # fmt: skip
    write_atomic(pd.DataFrame([row]), args.csv)
    print(pd.DataFrame([row]).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
