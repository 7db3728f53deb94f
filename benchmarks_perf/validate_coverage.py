#!/usr/bin/env python
"""Coverage of 95 % intervals for Bradley-Terry and Crowd-BT: which interval type to default to.

A seeded simulation study. Every board is drawn from known strengths and fitted once; every
interval variant below is computed from that one fit with the package's own pieces
(:func:`ratings.models.bt.fit_bt`, :func:`ratings.models.crowd.likelihood.fit_crowd_bt`,
:func:`ratings.inference.builder.build`,
:func:`ratings.models.covariates.pair_built`,
:func:`ratings.inference.covariance.bootstrap_draws`),
so ``model``, ``hc0`` and ``cr1_z`` are exactly what ``ratings.fit`` reports
(``tests/test_coverage.py`` checks this). Coverage is counted for every model vs the anchor
(a mid-board model, strength 0) and for every pairwise difference.

Variants (columns)
------------------
* ``model``: model-based H^-1, normal quantile (``ci="model"``);
* ``hc0``: per-verdict sandwich H^-1 B H^-1, normal quantile (``ci="sandwich", cluster=None``);
* ``cr1_z``: task-clustered sandwich with the G/(G-1) factor and a normal quantile -- what
  ``ratings.fit(ci="sandwich")`` reports today;
* ``cr1_t``: the same covariance with a t quantile on G - 1 degrees of freedom;
* ``cr3_t``: cluster jackknife (CR3, the "CV3" of MacKinnon, Nielsen & Webb 2023),
  V = (G-1)/G sum_c delta_c delta_c^T, where delta_c = (H - H_c)^-1 g_c is the one-step
  leave-one-cluster-out change of the estimate (H the Hessian of the fit, H_c and g_c the
  Hessian and score of cluster c; over the free parameters, (theta, eta) for Crowd-BT), with a
  t quantile on G - 1 degrees of freedom;
* ``cr3_z``: the same jackknife covariance with a normal quantile (separates the two effects);
* ``cr3x_t``: the jackknife from exact leave-one-cluster-out refits (BT warm-started from the
  full fit), t(G - 1); on the first ``--exact-jk`` boards of each small cell (default 200);
* ``boot``: cluster bootstrap percentile interval, as ``ratings.fit(ci="bootstrap")``
  (:func:`ratings.inference.covariance.bootstrap_draws`, same refits) with ``--n-boot`` resamples
  (default 200), on the first ``--boot-boards`` boards of each small cell (default 200) and
  ``--boot-boards-large`` of each large cell (default 0: about 13 s per large board).

Cells (rows)
------------
Boards are ``small`` (10 models, strengths evenly spaced on [-1.2, 1.2] (about +-500 Elo),
2,000 verdicts on 40 tasks) or ``large`` (30 models on [-1.5, 1.5], 200,000 verdicts on 400
tasks). Pairs and tasks are uniformly random, about 10 % ties (``tie_rate`` 0.12), anchor ``m05``
(small) / ``m15`` (large). Verdicts sharing a (model, task) submission are made dependent by

* ``rho``: the Gaussian copula of :func:`ratings.datasets.simulate_verdicts` (``task_corr``):
  every marginal win probability stays exactly sigma(s_a - s_b), so the truth is the
  Bradley-Terry parameter itself; or
* ``task_sd``: log-odds submission effects u ~ N(0, task_sd^2) (``task_sd`` of the same
  simulator). These attenuate the Bradley-Terry estimand, so the truth is the pseudo-true value:
  the Bradley-Terry fit of the population win probabilities E sigma(s_a - s_b + u_a - u_b)
  (Gauss-Hermite, equal weight per pair, as the design is uniform).

``bt-small-g20`` is a stress cell beyond the issue's grid: 20 tasks and rho = 0.8. Crowd-BT cells
use three judges in turn with eta = 0.95 / 0.80 / 0.65, estimated jointly with the strengths
(the default fit: weak priors, see :mod:`ratings.models.crowd.prior`); their ties occur at rate
``TIE_RATE`` whatever the pair, as the Crowd-BT likelihood (which leaves ties out) assumes.

``--crowd`` runs the study of the default Crowd-BT intervals at the edges instead
(``benchmarks_perf/coverage_crowd.py``: boundary boards, judge files, tie rates, weak and
single judges).

Boards without an estimate are counted as failed and left out: non-identifiable ones, Crowd-BT
fits with a singular Hessian (``LinAlgError`` from ``inverse_free``) and runaway Crowd-BT fits
(some |log-strength| > 20, accepted by the package up to 40).

Verdicts are drawn by a vectorised NumPy twin of :func:`ratings.datasets.random_matches` +
:func:`ratings.datasets.simulate_verdicts` (same model and formulas, its own random stream; the
package simulator spends about 0.7 s of a 200k-verdict board in pandas reindexing).
``--simulator package`` uses the package functions instead.

Output
------
``benchmarks_perf/results/validate_coverage.csv`` (one row per cell x target x variant: pooled
coverage, Monte-Carlo standard error from the per-board coverage fractions -- the intervals of
one board are dependent --, median interval width relative to ``cr1_z``, boards, failures) and
``benchmarks_perf/results/validate_coverage.md`` (the tables), both written atomically
(temp file + ``os.replace``).

This script holds the options and the run; the cells, the simulator and the truth are in
``coverage_cells.py``, the interval variants of one board in ``coverage_variants.py``, the summary
rows and the Markdown in ``coverage_report.py`` and the rank intervals and the sparse model's
targets in ``coverage_ranks.py``.

Usage::

    python benchmarks_perf/validate_coverage.py             # default study (~15 min, 2 jobs)
    python benchmarks_perf/validate_coverage.py --quick     # smoke run (~1 min)
    python benchmarks_perf/validate_coverage.py --boards 2000 --cells bt-small-dep,bt-small-g20
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE))  # the sibling modules, also when loaded by path
from coverage_cells import (  # noqa: E402
    CELLS,
    DEFAULT_CELLS,
    DIVERGED,
    JUDGE_ETA,
    LEVEL,
    SIZES,
    SPARSE_PER_TASK,
    SPARSE_STRENGTH,
    TARGETS,
    TIE_RATE,
    VARIANT_NAMES,
    VARIANTS,
    Cell,
    Size,
    simulate,
    truth,
)
from coverage_report import BAND, META, markdown, summarise, write_atomic  # noqa: E402
from coverage_variants import (  # noqa: E402
    cluster_bootstrap,
    fit_variants,
    init_worker,
    one_board,
    run_chunk,
)

#: The study's pieces stay importable from this script (``tests/test_coverage.py`` uses them).
__all__ = [
    "BAND",
    "CELLS",
    "DEFAULT_CELLS",
    "DIVERGED",
    "JUDGE_ETA",
    "LEVEL",
    "META",
    "OUT_CSV",
    "OUT_MD",
    "SIZES",
    "SPARSE_PER_TASK",
    "SPARSE_STRENGTH",
    "TARGETS",
    "TIE_RATE",
    "VARIANTS",
    "VARIANT_NAMES",
    "Cell",
    "Size",
    "cluster_bootstrap",
    "fit_variants",
    "main",
    "markdown",
    "one_board",
    "run_chunk",
    "simulate",
    "summarise",
    "truth",
    "write_atomic",
]

OUT_CSV = RESULTS / "validate_coverage.csv"
OUT_MD = RESULTS / "validate_coverage.md"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--crowd" in argv:  # the Crowd-BT edge study takes every other option itself
        from coverage_crowd import main as crowd_main

        return crowd_main([a for a in argv if a != "--crowd"])
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--boards", type=int, default=1000, help="boards per small cell (1000)")
    p.add_argument(
        "--boards-large",
        type=int,
        default=None,
        help="boards per large cell (default: 400, or --boards if smaller)",
    )
    p.add_argument(
        "--boot-boards",
        type=int,
        default=None,
        help="small boards per cell that also get the cluster bootstrap (200)",
    )
    p.add_argument(
        "--boot-boards-large",
        type=int,
        default=0,
        help="large boards per cell that also get the bootstrap (0: ~13 s each)",
    )
    p.add_argument("--n-boot", type=int, default=200, help="bootstrap resamples (200)")
    p.add_argument(
        "--exact-jk",
        type=int,
        default=None,
        help="small boards per cell that also get the exact-refit jackknife (200)",
    )
    p.add_argument(
        "--cells",
        default=",".join(DEFAULT_CELLS),
        help=f"comma-separated cells among {list(CELLS)} (default: all)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 40 small / 10 large boards, 20 with bootstrap (n_boot 50)",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="worker processes (default 2; at most 2 on a shared machine)",
    )
    p.add_argument(
        "--simulator",
        choices=["numpy", "package"],
        default="numpy",
        help="verdict simulator: NumPy twin (default) or ratings.datasets.simulate",
    )
    p.add_argument("--seed", type=int, default=20261129, help="base seed")
    p.add_argument("--large-board-path", action="store_true",
                   help="force the large-board shortcuts of ratings.inference (the CR2 series, "
                        "one-direction df) on every board, to measure their coverage")
    p.add_argument("--csv", type=Path, default=OUT_CSV, help=f"CSV output ({OUT_CSV})")
    p.add_argument("--md", type=Path, default=OUT_MD, help=f"Markdown output ({OUT_MD})")
    p.add_argument(
        "--render",
        type=Path,
        metavar="CSV",
        help="only rebuild the Markdown (--md) from a results CSV of an earlier run",
    )
    p.add_argument("--crowd", action="store_true",
                   help="run the Crowd-BT edge study instead (coverage_crowd.py; every other "
                        "option is passed to it: --boards, --boards-large, --cells, --jobs, ...)")
    args = p.parse_args(argv)
    if args.render is not None:
        write_atomic(markdown(pd.read_csv(args.render, keep_default_na=False,
                                          na_values=[""])), args.md)  # fmt: skip
        print(f"wrote {args.md}")
        return 0
    if args.quick:
        args.boards, args.n_boot = min(args.boards, 40), min(args.n_boot, 50)
        args.boards_large = 10 if args.boards_large is None else args.boards_large
        args.boot_boards = 20 if args.boot_boards is None else args.boot_boards
    if args.boards_large is None:
        args.boards_large = min(400, args.boards)
    if args.boot_boards is None:
        args.boot_boards = min(200, args.boards)
    if args.exact_jk is None:
        args.exact_jk = 10 if args.quick else min(200, args.boards)
    cells = [c.strip() for c in args.cells.split(",") if c.strip()]
    unknown = [c for c in cells if c not in CELLS]
    if unknown:
        p.error(f"unknown cell(s) {unknown}; choose from {list(CELLS)}")
    if min(args.boards, args.boards_large) < 2 or args.n_boot < 2:
        p.error("--boards, --boards-large and --n-boot must be >= 2")

    init_worker(args.large_board_path)
    t0 = time.perf_counter()
    rows = []
    pool = (ProcessPoolExecutor(args.jobs, initializer=init_worker,
                                initargs=(args.large_board_path,)) if args.jobs > 1 else None)
    try:
        for c_idx, name in enumerate(cells):
            cell = CELLS[name]
            large = cell.size == "large"
            n = args.boards_large if large else args.boards
            nb = args.boot_boards_large if large else args.boot_boards
            nx = 0 if large else args.exact_jk
            if not cell.extras:
                nb = nx = 0
            base = args.seed + 1_000_003 * list(CELLS).index(name)
            seeds = [(b, base + b) for b in range(n)]
            # Bootstrap boards are costly: deal them out first, in small chunks.
            size = 2 if (nb or nx) else max(1, -(-n // (8 * max(args.jobs, 1))))
            chunks = [(name, seeds[k:k + size], nb, args.n_boot, nx, args.simulator)
                      for k in range(0, n, size)]  # fmt: skip
            if pool is not None:
                boards = [b for part in pool.map(run_chunk, chunks) for b in part]
            else:
                boards = [b for ch in chunks for b in run_chunk(ch)]
            rows += summarise(name, boards)
            print(
                f"[{time.perf_counter() - t0:7.1f}s] {c_idx + 1}/{len(cells)} {name}: "
                f"{sum('failed' not in b for b in boards)}/{n} boards",
                flush=True,
            )
    finally:
        if pool is not None:
            pool.shutdown()
    seconds = time.perf_counter() - t0
    table = pd.DataFrame(rows)
    for key, value in zip(META, (args.seed, args.n_boot, args.simulator, args.jobs, seconds),
                          strict=True):  # fmt: skip
        table[key] = value
    wide = table[table["target"].isin(TARGETS)].pivot_table(
        index=["cell", "target"], columns="variant", values="coverage", sort=False)
    print(wide[[v for v in VARIANTS if v in wide.columns]].to_string(float_format="%.3f"))
    print(f"max |CR1 - G/(G-1) IF'IF| / max|CR1| over boards: {table['max_check'].max():.2e}")
    write_atomic(table.to_csv(index=False, float_format="%.6g"), args.csv)
    write_atomic(markdown(table), args.md)
    print(f"\nwrote {args.csv} and {args.md} ({seconds:.1f}s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
