#!/usr/bin/env python
"""Active sampling vs uniform random pairs: comparisons needed for a target Elo precision.

From an empty log, batches of matches are planned, judged from known strengths and refitted
until the mean 95% interval half-width (models other than the anchor) is at most ``--target``
Elo. Defaults: 30 models with true Elo ~ N(0, 250), 100 tasks (every model has every task),
3 noiseless judges, batches of 100, anchor = the model of median true strength, 20 seeds.

Strategies (same board and seed for both):

* ``active``  :func:`sampling.plan_matches` (``phase="auto"``: balanced until every model has
  ``--min-matches`` matches, then the trace criterion), with the balance rules checked on every
  batch by :func:`sampling.check_balance`;
* ``uniform`` a uniformly random pair on a random shared task per match
  (:func:`sampling.simulate.uniform_matches`).

Inside the loop the fit is on pooled counts with the per-verdict (HC0) sandwich, for speed.
Once that reaches the target, the default :func:`ratings.fit` (sandwich clustered by task) of
the log must reach it too (batches continue until it does: ``simulate_loop(confirm=True)``);
that fit gives the reported half-width and bias (fitted minus true Elo, anchored at the same
model, over the models other than the anchor).

Results: a table on stdout, ``benchmarks_perf/results/bench_sampling_runs.csv`` (one row per
seed and strategy) and ``bench_sampling.csv`` (the summary).

Usage::

    python benchmarks_perf/bench_sampling.py              # 20 seeds, 2 processes (~3-5 min)
    python benchmarks_perf/bench_sampling.py --seeds 4    # quick look
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run from anywhere: import this checkout's packages

import ratings  # noqa: E402
from ratings.io import write_atomic  # noqa: E402
from sampling.simulate import make_board, simulate_loop  # noqa: E402

RESULTS = HERE / "results"
CANONICAL = ["model_a", "model_b", "winner", "task_id", "judge"]
BALANCE = ["invalid_matches", "premature_repeats", "task_spread_plan", "task_spread_total",
           "judge_spread_plan", "judge_spread_total", "judge_model_spread_plan",
           "judge_model_spread_total"]  # fmt: skip


def run_one(job: tuple[int, str, argparse.Namespace]) -> dict:
    """One campaign: loop to the target, then the default fit at the stopping point."""
    seed, strategy, args = job
    tic = time.perf_counter()
    board = make_board(args.models, args.tasks, seed=seed, elo_sd=args.elo_sd,
                       judges=[f"judge-{k + 1}" for k in range(args.judges)],
                       judge_eta=args.judge_eta, task_sd=args.task_sd,
                       tie_rate=args.tie_rate)  # fmt: skip
    anchor = board.mid_model()
    res = simulate_loop(board, seed=seed, strategy=strategy, batch_size=args.batch,
                        max_comparisons=args.max_comparisons, target_half_width=args.target,
                        anchor=anchor, min_matches=args.min_matches,
                        check=strategy != "uniform", confirm=True)  # fmt: skip
    loop_seconds = time.perf_counter() - tic
    final = res.fit if res.reached else ratings.fit(res.verdicts[CANONICAL], anchor=anchor)
    others = final.models != anchor
    ci = final.conf_int()
    half = ((ci["upper"] - ci["lower"]) / 2)[others]
    err = (final.elo - board.elo(f"{anchor}=1000").reindex(final.models))[others]
    true = board.elo(f"{anchor}=1000").reindex(final.models)[others]
    out = {
        "seed": seed, "strategy": strategy, "anchor": anchor,
        "reached": res.reached, "n_comparisons": res.n_comparisons or len(res.verdicts),
        "n_batches": len(res.batches),
        "loop_half_width": float(res.batches["mean_half_width"].iloc[-1]),
        "extra_batches": int(res.batches["default_half_width"].notna().sum() - 1)
        if "default_half_width" in res.batches else 0,
        "final_half_width": float(half.mean()),
        "bias": float(err.mean()),
        "rmse": float(np.sqrt((err**2).mean())),
        "slope": float(np.polyfit(true - true.mean(), final.elo[others] - true.mean(), 1)[0]),
        "seconds": loop_seconds,
        "n_balanced": int(res.batches["n_balanced"].sum()),
    }  # fmt: skip
    # per-model errors by true rank (for the bias across the board)
    order = np.argsort(true.to_numpy())
    out["errors_by_rank"] = err.to_numpy()[order].tolist()
    for col in BALANCE:
        if col in res.batches:
            out[f"max_{col}"] = int(res.batches[col].max())
            out[f"batches_{col}_over"] = int((res.batches[col] > (0 if col in (
                "invalid_matches", "premature_repeats") else 1)).sum())  # fmt: skip
    return out


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    uniform = runs[runs.strategy == "uniform"].set_index("seed")["n_comparisons"]
    for strategy, g in runs.groupby("strategy", sort=False):
        n = g["n_comparisons"]
        paired = 1 - g.set_index("seed")["n_comparisons"] / uniform.reindex(g["seed"])
        ranks = np.array(g["errors_by_rank"].tolist())
        row = {
            "strategy": strategy, "runs": len(g), "reached": int(g["reached"].sum()),
            "comparisons_mean": n.mean(), "comparisons_sd": n.std(ddof=1),
            "comparisons_median": n.median(),
            "fewer_than_uniform_mean": paired.mean(), "fewer_than_uniform_min": paired.min(),
            "final_half_width_mean": g["final_half_width"].mean(),
            "loop_half_width_mean": g["loop_half_width"].mean(),
            "extra_batches_mean": g["extra_batches"].mean(),
            "bias_mean": g["bias"].mean(), "bias_se": g["bias"].std(ddof=1) / np.sqrt(len(g)),
            "max_abs_bias_by_rank": np.abs(ranks.mean(axis=0)).max(),
            "slope_mean": g["slope"].mean(), "rmse_mean": g["rmse"].mean(),
            "seconds_mean": g["seconds"].mean(),
        }  # fmt: skip
        for col in BALANCE:
            if f"max_{col}" in g and g[f"max_{col}"].notna().all():
                row[f"max_{col}"] = int(g[f"max_{col}"].max())
                row[f"batches_{col}_over"] = int(g[f"batches_{col}_over"].sum())
        rows.append(row)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    p.add_argument("--models", type=int, default=30)
    p.add_argument("--tasks", type=int, default=100)
    p.add_argument("--judges", type=int, default=3)
    p.add_argument("--elo-sd", type=float, default=250.0)
    p.add_argument("--judge-eta", type=float, default=1.0)
    p.add_argument("--task-sd", type=float, default=0.0)
    p.add_argument("--tie-rate", type=float, default=0.0)
    p.add_argument("--batch", type=int, default=100)
    p.add_argument("--target", type=float, default=25.0)
    p.add_argument("--min-matches", type=int, default=10)
    p.add_argument("--max-comparisons", type=int, default=100_000)
    p.add_argument("--strategies", default="active,uniform")
    p.add_argument("--out", default=str(RESULTS / "bench_sampling.csv"))
    args = p.parse_args(argv)

    ratings.warmup()
    strategies = [s.strip() for s in args.strategies.split(",")]
    jobs = [(seed, s, args) for seed in range(args.first_seed, args.first_seed + args.seeds)
            for s in strategies]  # fmt: skip
    tic = time.perf_counter()
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(run_one, jobs))
    else:
        results = [run_one(j) for j in jobs]
    wall = time.perf_counter() - tic
    runs = pd.DataFrame(results)
    summary = summarise(runs)

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(runs.drop(columns=["errors_by_rank"]), out.with_name(out.stem + "_runs.csv"))
    write_atomic(summary, out)

    print(f"{args.models} models (Elo sd {args.elo_sd:g}), {args.tasks} tasks, {args.judges} "
          f"judges (eta {args.judge_eta:g}), task sd {args.task_sd:g}, tie rate "
          f"{args.tie_rate:g}; batches of {args.batch}; target mean 95% half-width "
          f"{args.target:g} Elo; anchor = median model; {args.seeds} seeds")  # fmt: skip
    print(f"wall time {wall:.0f} s with {args.jobs} process(es)\n")
    show = summary.copy()
    table = pd.DataFrame({
        "strategy": show["strategy"],
        "reached": show["reached"].astype(str) + "/" + show["runs"].astype(str),
        "comparisons": [f"{m:,.0f} +- {s:,.0f}" for m, s in
                        zip(show["comparisons_mean"], show["comparisons_sd"], strict=True)],
        "fewer vs uniform": [f"{m:.1%} (min {lo:.1%})" for m, lo in
                             zip(show["fewer_than_uniform_mean"],
                                 show["fewer_than_uniform_min"], strict=True)],
        "half-width (default fit)": show["final_half_width_mean"].map("{:.2f}".format),
        "bias (Elo)": [f"{b:+.2f} +- {se:.2f}" for b, se in
                       zip(show["bias_mean"], show["bias_se"], strict=True)],
        "max |bias| by rank": show["max_abs_bias_by_rank"].map("{:.2f}".format),
        "slope": show["slope_mean"].map("{:.3f}".format),
        "s/run": show["seconds_mean"].map("{:.1f}".format),
    })  # fmt: skip
    print(table.to_string(index=False))
    active = summary[summary.strategy == "active"]
    if len(active):
        a = active.iloc[0]
        n_batches = int(runs.loc[runs.strategy == "active", "n_batches"].sum())
        print("\nBalance rules over every active batch (limits: 0 for the first two, else 1):")
        for col in BALANCE:
            if pd.notna(a.get(f"max_{col}")):
                print(
                    f"  {col:26s} max {int(a[f'max_{col}'])}   batches over the limit: "
                    f"{int(a[f'batches_{col}_over'])} of {n_batches}"
                )
    print(f"\nwrote {out} and {out.with_name(out.stem + '_runs.csv')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
