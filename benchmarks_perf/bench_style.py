"""A fit with four style features on 1M verdicts against the plain fit, side by side.

Run: ``python benchmarks_perf/bench_style.py [--n 1000000] [--repeat 3]``; writes
``benchmarks_perf/results/bench_style.csv`` (median seconds of each and their ratio, measured
alternately in the same process after one warm-up of each).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

import ratings

OUT = Path(__file__).resolve().parent / "results" / "bench_style.csv"
FEATURES = ("tokens", "headers", "lists", "bold")


def board(n: int, m: int = 50, tasks: int = 2000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    s = np.linspace(-1, 1, m)
    cols = {}
    for k, f in enumerate(FEATURES):
        lam = 400.0 if k == 0 else 3.0
        cols[f"{f}_a"] = rng.poisson(lam, n)
        cols[f"{f}_b"] = rng.poisson(lam, n)
    x = (cols["tokens_a"] - cols["tokens_b"]) / (cols["tokens_a"] + cols["tokens_b"] + 1e-9)
    p = 1 / (1 + np.exp(-(s[a] - s[b] + 2.0 * x)))
    w = np.where(rng.random(n) < p, "A", "B")
    return pd.DataFrame({"model_a": pd.Categorical([f"m{i}" for i in a]),
                         "model_b": pd.Categorical([f"m{i}" for i in b]), "winner": w,
                         "task_id": rng.integers(0, tasks, n), **cols})  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    ratings.warmup()
    df = board(args.n)
    runs = {"plain": lambda: ratings.fit(df), "style4": lambda: ratings.fit(df, style=FEATURES)}
    times = {k: [] for k in runs}
    for f in runs.values():  # warm-up
        f()
    for _ in range(args.repeat):
        for k, f in runs.items():
            t = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t)
    med = {k: float(np.median(v)) for k, v in times.items()}
    row = {"verdicts": args.n, "models": 50, "tasks": 2000, "features": len(FEATURES),
           "plain_s": med["plain"], "style_s": med["style4"],
           "ratio": med["style4"] / med["plain"], "repeat": args.repeat}  # fmt: skip
    print(row)
    OUT.parent.mkdir(exist_ok=True)
    pd.DataFrame([row]).to_csv(OUT, index=False)


if __name__ == "__main__":
    main()
