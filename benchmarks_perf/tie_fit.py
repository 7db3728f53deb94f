"""A Davidson (and Rao-Kupper) fit of 1M verdicts against the half-win fit, side by side.

One simulated log (``bench_fit_common.simulate``: 200 models, 1,000 tasks, task effects, about
a quarter ties), each fit through ``ratings.fit`` with its default intervals (CR2 clustered by
task, Satterthwaite df), in interleaved rounds (half, Davidson, Rao-Kupper; the order rotates
each round) after one untimed warm-up of each, so that the machine's load falls on all of them
alike. Reports each fit's median wall time, the per-round ratios to the half-win fit and the
load average before and after; writes ``results/tie_fit_1M.csv``.

    python benchmarks_perf/tie_fit.py                 # 1M verdicts, 7 rounds
    python benchmarks_perf/tie_fit.py --n 200000 --rounds 3
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_fit_common import simulate, size_label  # noqa: E402

import ratings  # noqa: E402

KINDS = ("half", "davidson", "rao-kupper")


def main(argv: list[str] | None = None) -> pd.DataFrame:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--models", type=int, default=200)
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    log = simulate(args.n, args.models, args.tasks, seed=0, tie_rate=0.45)
    share = float((log["winner"] == "tie").mean())
    load_before = os.getloadavg()[0]
    print(f"{args.n:,} verdicts, {args.models} models, {args.tasks} tasks, {share:.1%} ties; "
          f"load average {load_before:.2f}", flush=True)

    def run(kind: str) -> float:
        gc.collect()
        t0 = time.perf_counter()
        r = ratings.fit(log, model=ratings.BT(ties=kind))
        dt = time.perf_counter() - t0
        assert r.converged
        return dt

    for kind in KINDS:  # compile / warm caches
        run(kind)
    times: dict[str, list[float]] = {k: [] for k in KINDS}
    for rnd in range(args.rounds):
        order = KINDS[rnd % 3:] + KINDS[:rnd % 3]
        for kind in order:
            times[kind].append(run(kind))
        print(f"round {rnd + 1}: " + ", ".join(f"{k} {times[k][-1]:.2f} s" for k in KINDS),
              flush=True)
    load_after = os.getloadavg()[0]
    rows = []
    for kind in KINDS:
        ratios = [t / h for t, h in zip(times[kind], times["half"], strict=True)]
        rows.append({"size": size_label(args.n), "ties": kind,
                     "median_seconds": statistics.median(times[kind]),
                     "min_seconds": min(times[kind]),
                     "ratio_to_half_median": statistics.median(ratios),
                     "ratio_min": min(ratios), "ratio_max": max(ratios),
                     "rounds": args.rounds, "tie_share": share,
                     "load_before": load_before, "load_after": load_after})  # fmt: skip
    table = pd.DataFrame(rows)
    print(table.to_string(index=False, float_format="{:.3f}".format))
    out = args.out or HERE / "results" / f"tie_fit_{size_label(args.n)}.csv"
    from ratings.io import write_atomic

    write_atomic(table, out)
    return table


if __name__ == "__main__":
    main()
