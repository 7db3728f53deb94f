#!/usr/bin/env python
"""Time the small-sample inference on top of a fit: CR2, per-contrast df, ranks, pairs.

On ``bench_fit.simulate`` logs (a DataFrame of strings, ~10 % ties, task effects), in one warmed
process, the median of ``--repeats`` calls of:

* ``fit (sandwich-z)``: ``ratings.fit(df, ci="sandwich-z")``, the textbook CR1 sandwich;
* ``fit (CR2, default)``: ``ratings.fit(df)``: CR2 adjusted influences (the exact per-task
  decompositions, or past ``ratings.inference.EXACT_BUDGET`` the series) and what the fit keeps
  for the degrees of freedom;
* ``model df``: each rating's Satterthwaite df (``Ratings.model_df``, first access);
* ``rank intervals``: ``Ratings.rank_intervals()`` (pair df, draws, step-down);
* ``to_frame (all)``: a fresh fit's ``to_frame()``, i.e. model df + rank intervals + table;
* ``pairwise``: ``Ratings.pairwise()`` on a fit whose pair statistics are already cached.

Writes ``benchmarks_perf/results/bench_inference.csv`` (atomically) and prints the table.

Usage::

    python benchmarks_perf/bench_inference.py                      # 1M / 200 models / 1000 tasks
    python benchmarks_perf/bench_inference.py --n 200000 --models 30 --tasks 400
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_fit import simulate  # noqa: E402

OUT = HERE / "results" / "bench_inference.csv"


def _median(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1_000_000, help="verdicts (1M)")
    p.add_argument("--models", type=int, default=200, help="models (200)")
    p.add_argument("--tasks", type=int, default=1000, help="tasks (1000)")
    p.add_argument("--repeats", type=int, default=3, help="timed calls per step (3)")
    p.add_argument("--out", type=Path, default=OUT, help=f"CSV output ({OUT})")
    args = p.parse_args(argv)

    import ratings

    df = simulate(args.n, args.models, args.tasks)
    ratings.warmup()
    r = ratings.fit(df)  # warm every path once
    r.to_frame()
    r.pairwise()
    rows = []

    def add(step: str, seconds: float) -> None:
        rows.append({"n": args.n, "models": args.models, "tasks": args.tasks, "step": step,
                     "seconds": seconds, "exact": bool(r.inference.exact),
                     "load1": os.getloadavg()[0]})  # fmt: skip
        print(f"{step:24s} {seconds:8.3f} s")

    add("fit (sandwich-z)", _median(lambda: ratings.fit(df, ci="sandwich-z"), args.repeats))
    add("fit (CR2, default)", _median(lambda: ratings.fit(df), args.repeats))
    fits = [ratings.fit(df) for _ in range(args.repeats)]
    add("model df", _median(lambda: fits.pop().model_df, args.repeats))
    fits = [ratings.fit(df) for _ in range(args.repeats)]
    add("rank intervals", _median(lambda: fits.pop().rank_intervals(), args.repeats))
    fits = [ratings.fit(df) for _ in range(args.repeats)]
    add("to_frame (all)", _median(lambda: fits.pop().to_frame(), args.repeats))
    add("pairwise", _median(r.pairwise, args.repeats))
    table = pd.DataFrame(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=args.out.parent, prefix=f".{args.out.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", newline="") as fh:
        table.to_csv(fh, index=False, float_format="%.6g")
    os.replace(tmp, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
