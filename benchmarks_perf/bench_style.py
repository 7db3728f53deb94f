"""A fit with four style features on 1M verdicts against the plain fit, side by side.

Run: ``python benchmarks_perf/bench_style.py [--n 1000000] [--repeat 5]``; writes
``benchmarks_perf/results/bench_style.csv``: the median and the fastest wall-clock seconds of
each fit and their ratios, and the median CPU seconds of each (all threads of the process;
unlike wall-clock time, it does not grow when other processes hold the cores), measured
alternately in one process after one warm-up of each, with the load average at the start.

``--phases`` instead prints where the style fit's CPU time goes, on one thread and with BLAS on
one thread as :func:`ratings.fit` runs it (so that the load on the machine does not hide what
costs what): the median CPU seconds of each step of the fit
(reading the log, the features' columns, the cluster order, the features placed in it, the slot
codes taken in it, the grouping into rows, the plain start, Newton with the model-based
covariance, the CR2 sandwich) as a multiple of the whole plain fit's.

``--shapes`` times both fits on other shapes of the log (20,000 tasks, 200 tasks, and without
clusters) and writes ``results/bench_style_shapes.csv``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

import ratings
from ratings.core.threads import one_blas_thread, workers

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


def _median(f, repeat: int, clock=time.process_time) -> float:
    """Median seconds of ``clock`` (CPU by default) over ``repeat`` runs of ``f()``, after one
    warm-up."""
    f()
    out = []
    for _ in range(repeat):
        c = clock()
        f()
        out.append(clock() - c)
    return float(np.median(out))


def phases(df: pd.DataFrame, repeat: int) -> None:
    """Print each step's median CPU seconds on one thread, and as a multiple of the plain fit."""
    from ratings.api.loading import load_log
    from ratings.data.slots import slot_counts, verdict_cluster_order
    from ratings.models.bt import fit_bt
    from ratings.models.covariates import design_rows as style_rows
    from ratings.models.covariates import fit_design as fit_style
    from ratings.models.covariates import side_by_side
    from ratings.models.style import feature_columns, feature_jobs, style_columns

    def features_by_verdict(xt, scale, rank, engine):  # feature_jobs on the package's threads
        out, jobs = feature_jobs(xt, scale, rank, engine)
        side_by_side(lambda job: job(), jobs)
        return out

    cols = style_columns(FEATURES)
    loaded = load_log(df, keep=cols, as_numbers=cols)
    frame, data = loaded.frame, loaded.data
    xt, scale = feature_columns(frame, FEATURES)
    order = verdict_cluster_order(frame, data, "numba")
    x = features_by_verdict(xt, scale, order.rank, "numba")
    slots = slot_counts(frame, data, "numba", by_cluster=order)
    rows = style_rows(slots, x, "numba")
    theta = fit_bt(data.collapsed(engine="numba"), ref=0, tol=1e-10).theta
    steps = {"plain fit (whole)": lambda: ratings.fit(df),
             "style fit (whole)": lambda: ratings.fit(df, style=FEATURES),
             "read the log": lambda: load_log(df, keep=cols, as_numbers=cols),
             "features": lambda: feature_columns(frame, FEATURES),
             "cluster order": lambda: verdict_cluster_order(frame, data, "numba"),
             "features placed": lambda: features_by_verdict(xt, scale, order.rank, "numba"),
             "slot codes": lambda: slot_counts(frame, data, "numba", by_cluster=order),
             "rows (group)": lambda: style_rows(slots, x, "numba"),
             "plain start": lambda: fit_bt(data.collapsed(engine="numba"), ref=0, tol=1e-10),
             "Newton + bread": lambda: fit_style(rows, theta, ci="model"),
             "Newton + CR2": lambda: fit_style(rows, theta)}  # fmt: skip
    with one_blas_thread():  # as ratings.fit runs them (a spinning BLAS thread costs CPU)
        cpu = {k: _median(f, repeat) for k, f in steps.items()}
    base = cpu["plain fit (whole)"]
    for k, v in cpu.items():
        print(f"{k:20s} {v:7.3f} s  {v / base:5.2f}x plain")
    print(f"CR2 sandwich alone   {cpu['Newton + CR2'] - cpu['Newton + bread']:7.3f} s; load "
          f"average {os.getloadavg()[0]:.1f}")


def shapes(n: int, repeat: int) -> None:
    """Plain and style fits of other shapes of the log (median wall seconds, each fit after a
    warm-up), written to ``results/bench_style_shapes.csv``."""
    rows, wall = [], time.perf_counter
    for tasks, cluster in ((20_000, "auto"), (200, "auto"), (2000, None)):
        df = board(n, tasks=tasks)
        plain = _median(lambda df=df, c=cluster: ratings.fit(df, cluster=c), repeat, wall)
        style = _median(lambda df=df, c=cluster: ratings.fit(df, style=FEATURES, cluster=c),
                        repeat, wall)  # fmt: skip
        rows.append({"verdicts": n, "tasks": tasks, "clustered": cluster is not None,
                     "plain_s": plain, "style_s": style, "ratio": style / plain,
                     "repeat": repeat, "load_avg": os.getloadavg()[0]})  # fmt: skip
        print(rows[-1])
    pd.DataFrame(rows).to_csv(OUT.with_name("bench_style_shapes.csv"), index=False)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--phases", action="store_true", help="CPU per step on one thread")
    ap.add_argument("--shapes", action="store_true",
                    help="other shapes of the log: 20,000 and 200 tasks, unclustered")
    args = ap.parse_args()
    if args.phases:
        os.environ["RATINGS_NUM_THREADS"] = "1"
        ratings.warmup()
        phases(board(args.n), args.repeat)
        return
    if args.shapes:
        ratings.warmup()
        shapes(args.n, args.repeat)
        return
    ratings.warmup()
    df = board(args.n)
    runs = {"plain": lambda: ratings.fit(df), "style4": lambda: ratings.fit(df, style=FEATURES)}
    times = {k: [] for k in runs}
    cpu = {k: [] for k in runs}
    load = os.getloadavg()[0]
    for f in runs.values():  # warm-up
        f()
    for _ in range(args.repeat):
        for k, f in runs.items():
            c, t = time.process_time(), time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t)
            cpu[k].append(time.process_time() - c)
    med = {k: float(np.median(v)) for k, v in times.items()}
    low = {k: float(np.min(v)) for k, v in times.items()}
    mcpu = {k: float(np.median(v)) for k, v in cpu.items()}
    row = {"verdicts": args.n, "models": 50, "tasks": 2000, "features": len(FEATURES),
           "plain_s": med["plain"], "style_s": med["style4"],
           "ratio": med["style4"] / med["plain"], "plain_min_s": low["plain"],
           "style_min_s": low["style4"], "ratio_min": low["style4"] / low["plain"],
           "plain_cpu_s": mcpu["plain"], "style_cpu_s": mcpu["style4"],
           "cpu_ratio": mcpu["style4"] / mcpu["plain"], "repeat": args.repeat,
           "threads": workers(), "load_avg": load}  # fmt: skip
    print(row)
    OUT.parent.mkdir(exist_ok=True)
    pd.DataFrame([row]).to_csv(OUT, index=False)


if __name__ == "__main__":
    main()
