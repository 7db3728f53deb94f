"""Arena-shaped boards (every verdict its own task): the default fit (CR2 by task, per-contrast
Satterthwaite df) against per-verdict intervals (HC0, ``cluster=None``), side by side.

Each measurement is one ``ratings.fit`` in a fresh subprocess (kernels warmed up first, the
frame built before the clock and the peak-memory reset): wall time of the fit (and of the
ratings' df), then of the table ``ratings fit`` writes (``to_frame``: its rank intervals need
every pair's df), and the peak resident memory above the frame after each. The two variants
alternate within every repeat; the table reports medians and the default / HC0 ratios.

Usage: ``python benchmarks_perf/bench_arena.py [--sizes 300000x300 1000000x1000] [--repeats 3]``
Results: ``benchmarks_perf/results/bench_arena.csv``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

RESULTS = Path(__file__).resolve().parent / "results" / "bench_arena.csv"


def arena(n: int, m: int, seed: int) -> pd.DataFrame:
    """``n`` verdicts over ``m`` models (normal strengths, sd 1), each on its own task, 10%
    ties, pairs drawn uniformly."""
    rng = np.random.default_rng(seed)
    s = rng.normal(size=m)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    p = 1.0 / (1.0 + np.exp(-(s[a] - s[b])))
    u = rng.random(n)
    winner = np.where(u < 0.1, "tie", np.where(rng.random(n) < p, "A", "B"))
    names = np.array([f"m{k:04d}" for k in range(m)])
    return pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner,
                         "task_id": np.arange(n)})  # fmt: skip


def _status_kib(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def child(n: int, m: int, seed: int, variant: str) -> None:
    import gc

    import ratings

    ratings.warmup()
    df = arena(n, m, seed)
    gc.collect()
    base = _status_kib("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # peak resident set := current
    t0 = time.perf_counter()
    r = ratings.fit(df, cluster="task_id" if variant == "default" else None)
    sec = time.perf_counter() - t0
    _ = r.model_df  # the default's intervals need every rating's df
    sec_df = time.perf_counter() - t0
    peak_fit = _status_kib("VmHWM")
    _ = r.to_frame()  # the table `ratings fit` writes: rank intervals need every pair's df
    sec_table = time.perf_counter() - t0
    peak = _status_kib("VmHWM")
    print(json.dumps({"fit_s": sec, "fit_and_df_s": sec_df, "table_s": sec_table,
                      "peak_fit_mib": (peak_fit - base) / 1024,
                      "peak_above_frame_mib": (peak - base) / 1024}))  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=["300000x300", "1000000x1000"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--child", nargs=4, metavar=("N", "M", "SEED", "VARIANT"))
    args = ap.parse_args()
    if args.child:
        n, m, seed, variant = args.child
        child(int(n), int(m), int(seed), variant)
        return
    rows = []
    for size in args.sizes:
        n, m = (int(x) for x in size.split("x"))
        for rep in range(args.repeats):
            for variant in ("default", "hc0"):
                out = subprocess.run([sys.executable, __file__, "--child", str(n), str(m),
                                      str(args.seed), variant],
                                     capture_output=True, text=True, check=True)  # fmt: skip
                got = json.loads(out.stdout.strip().splitlines()[-1])
                rows.append({"verdicts": n, "models": m, "variant": variant, "repeat": rep, **got})
                print(rows[-1], flush=True)
    runs = pd.DataFrame(rows)
    med = runs.groupby(["verdicts", "models", "variant"])[
        ["fit_s", "fit_and_df_s", "table_s", "peak_fit_mib", "peak_above_frame_mib"]
    ].median().unstack("variant")
    for col in ("fit_and_df_s", "table_s", "peak_above_frame_mib"):
        med[(col, "ratio")] = med[(col, "default")] / med[(col, "hc0")]
    RESULTS.parent.mkdir(exist_ok=True)
    runs.to_csv(RESULTS, index=False)
    print(med.round(3).to_string())


if __name__ == "__main__":
    main()
