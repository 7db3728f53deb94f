#!/usr/bin/env python
"""Active sampling vs uniform random pairs and an oracle: comparisons for a target precision.

From an empty log, batches of matches are planned, judged from known strengths and refitted
until a target mean 95% half-width (``--target`` Elo) is reached. Two precisions:

* **anchored**: the mean half-width of the ratings relative to the anchor (the model of median
  true strength), what a board pinned on one model reports;
* **pairwise**: the mean half-width of all pairwise differences ``Elo_i - Elo_j``, which does
  not depend on the anchor.

Defaults: 30 models with true Elo ~ N(0, 250), 100 tasks (every model has every task), 3
noiseless judges, batches of 100, 12 seeds. Designs (same board and seeds for all):

* ``uniform`` a uniformly random pair on a random shared task per match
  (:func:`sampling.design.simulate.uniform_matches`), run once to each target;
* ``active-anchored`` :func:`sampling.plan_matches` with ``objective="anchored"`` and the
  default share bound (a model plays at most 3x its fair share of a batch), to the anchored
  target; ``active-anchored-unbounded`` the same without the bound;
* ``active-pairwise`` the default planner (``objective="pairwise"``, share bound 3x), to the
  pairwise target;
* ``oracle-pairwise`` / ``oracle-anchored`` greedy picks from the *true* strengths
  (:func:`sampling.design.oracle.oracle_matches`, no balance rule): how far the same criterion gets
  when nothing is estimated, to the pairwise / anchored target.

Planned designs are checked batch by batch with :func:`sampling.check_balance`. Inside the
loop the fit is on pooled counts with the per-verdict (HC0) sandwich, for speed; once that
reaches the target, the default :func:`ratings.fit` (sandwich clustered by task) must reach it
too (``simulate_loop(confirm=True)``), and that fit gives the reported half-widths and errors:
the bias of the three strongest and the three weakest models (fitted minus true Elo, both
centred on their mean over the board) and the anchor's share of all planned matches.

Results: a table on stdout, ``benchmarks_perf/results/bench_sampling_runs.csv`` (one row per
seed and design) and ``bench_sampling.csv`` (the summary).

``--speed`` times planning instead: for each row of ``SPEED_ROWS`` (models, tasks, verdicts of
history, matches to plan) a history of uniformly random matches (judges in turn) is judged from
a drawn board, then one :func:`ratings.fit` of it and one :func:`sampling.plan_matches` of the
batch (three judges) are timed alternately, ``--repeats`` times; medians and their ratio go to
``bench_sampling_speed.csv`` (with the 1-minute load average at the end of each row: the
ratio holds on a busy machine only roughly, since the fit and the picks slow down differently).
The plan's time is split into its own fit of the history, the
judge assignment after the picks (:func:`sampling.judges.assign.assign_judges`) and the rest (board,
picks), reported per match. Every row's plan is active from its first pick, so its picks run in
the compiled loop (:mod:`sampling.picks.picker_numba`; loaded before the first row, so the medians
hold no compilation or cache load).

Usage::

    python benchmarks_perf/bench_sampling.py              # 12 seeds, 2 processes (~10-15 min)
    python benchmarks_perf/bench_sampling.py --seeds 4    # quick look
    python benchmarks_perf/bench_sampling.py --speed      # planning time against one fit
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
import sampling.design.plan  # noqa: E402
from ratings.io import write_atomic  # noqa: E402
from sampling.design.simulate import (  # noqa: E402
    judge_matches,
    make_board,
    mean_half_width,
    pairwise_half_width,
    simulate_loop,
    uniform_matches,
)

RESULTS = HERE / "results"
CANONICAL = ["model_a", "model_b", "winner", "task_id", "judge"]
BALANCE = ["invalid_matches", "premature_repeats", "task_spread_plan", "task_spread_total",
           "judge_spread_plan", "judge_spread_total", "judge_model_spread_plan",
           "judge_model_spread_total"]  # fmt: skip
# design -> (strategy, objective, metric, max_share)
DESIGNS = {
    "uniform-anchored": ("uniform", "pairwise", "anchored", None),
    "uniform-pairwise": ("uniform", "pairwise", "pairwise", None),
    "active-anchored": ("active", "anchored", "anchored", 3.0),
    "active-anchored-unbounded": ("active", "anchored", "anchored", None),
    "active-pairwise": ("active", "pairwise", "pairwise", 3.0),
    "oracle-anchored": ("oracle", "anchored", "anchored", None),
    "oracle-pairwise": ("oracle", "pairwise", "pairwise", None),
}
DEFAULT_DESIGNS = ("uniform-anchored,uniform-pairwise,active-anchored,active-anchored-unbounded,"
                   "active-pairwise,oracle-anchored,oracle-pairwise")  # fmt: skip


def run_one(job: tuple[int, str, argparse.Namespace]) -> dict:
    """One campaign: loop to the target, then the default fit at the stopping point."""
    seed, design, args = job
    strategy, objective, metric, max_share = DESIGNS[design]
    tic = time.perf_counter()
    board = make_board(args.models, args.tasks, seed=seed, elo_sd=args.elo_sd,
                       judges=[f"judge-{k + 1}" for k in range(args.judges)],
                       judge_eta=args.judge_eta, task_sd=args.task_sd,
                       tie_rate=args.tie_rate)  # fmt: skip
    anchor = board.mid_model()
    res = simulate_loop(board, seed=seed, strategy=strategy, batch_size=args.batch,
                        max_comparisons=args.max_comparisons, target_half_width=args.target,
                        anchor=anchor, metric=metric, objective=objective, max_share=max_share,
                        min_matches=args.min_matches, check=strategy == "active",
                        confirm=True)  # fmt: skip
    loop_seconds = time.perf_counter() - tic
    final = res.fit if res.reached else ratings.fit(res.verdicts[CANONICAL], anchor=anchor)
    true = board.elo(f"{anchor}=1000").reindex(final.models)
    others = final.models != anchor
    err = (final.elo - true)[others]
    centred = (final.elo - final.elo.mean()) - (true - true.mean())
    order = np.argsort(true.to_numpy())
    v = res.verdicts
    with_anchor = (v["model_a"] == anchor) | (v["model_b"] == anchor)
    out = {
        "seed": seed, "design": design, "strategy": strategy, "objective": objective,
        "metric": metric, "max_share": max_share if max_share is not None else np.inf,
        "anchor": anchor, "reached": res.reached,
        "n_comparisons": res.n_comparisons or len(v), "n_batches": len(res.batches),
        "extra_batches": int(res.batches["default_half_width"].notna().sum() - 1)
        if "default_half_width" in res.batches else 0,
        "anchored_half_width": mean_half_width(final),
        "pairwise_half_width": pairwise_half_width(final),
        "anchor_share": float(with_anchor.mean()),
        "anchor_share_max_batch": float(with_anchor.groupby(v["batch"]).mean().max()),
        "bias": float(err.mean()),
        "bias_top3": float(centred.to_numpy()[order[-3:]].mean()),
        "bias_bottom3": float(centred.to_numpy()[order[:3]].mean()),
        "rmse": float(np.sqrt((err**2).mean())),
        "slope": float(np.polyfit(true[others] - true.mean(), final.elo[others] - true.mean(),
                                  1)[0]),
        "seconds": loop_seconds,
        "n_balanced": int(res.batches["n_balanced"].sum()),
    }  # fmt: skip
    out["errors_by_rank"] = centred.to_numpy()[order].tolist()
    for col in BALANCE:
        if col in res.batches:
            out[f"max_{col}"] = int(res.batches[col].max())
            out[f"batches_{col}_over"] = int((res.batches[col] > (0 if col in (
                "invalid_matches", "premature_repeats") else 1)).sum())  # fmt: skip
    return out


def _se(x: pd.Series) -> float:
    return float(x.std(ddof=1) / np.sqrt(len(x))) if len(x) > 1 else float("nan")


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    by = runs.set_index(["design", "seed"])["n_comparisons"]
    designs = set(by.index.get_level_values(0))
    for design, g in runs.groupby("design", sort=False):
        metric = g["metric"].iloc[0]
        n = g["n_comparisons"]
        mine = g.set_index("seed")["n_comparisons"]
        to_uniform, to_oracle = (
            mine / by.loc[ref].reindex(mine.index) if ref in designs else mine * np.nan
            for ref in (f"uniform-{metric}", f"oracle-{metric}")
        )
        ranks = np.array(g["errors_by_rank"].tolist())
        row = {
            "design": design, "metric": metric, "runs": len(g), "reached": int(g["reached"].sum()),
            "comparisons_mean": n.mean(), "comparisons_sd": n.std(ddof=1),
            "ratio_to_uniform_mean": to_uniform.mean(), "ratio_to_uniform_se": _se(to_uniform),
            "fewer_than_uniform_mean": 1 - to_uniform.mean(),
            "fewer_than_uniform_min": 1 - to_uniform.max(),
            "ratio_to_oracle_mean": to_oracle.mean(), "ratio_to_oracle_se": _se(to_oracle),
            "anchored_half_width_mean": g["anchored_half_width"].mean(),
            "pairwise_half_width_mean": g["pairwise_half_width"].mean(),
            "anchor_share_mean": g["anchor_share"].mean(),
            "anchor_share_max_batch": g["anchor_share_max_batch"].max(),
            "bias_mean": g["bias"].mean(), "bias_se": _se(g["bias"]),
            "bias_top3_mean": g["bias_top3"].mean(), "bias_top3_se": _se(g["bias_top3"]),
            "bias_bottom3_mean": g["bias_bottom3"].mean(),
            "bias_bottom3_se": _se(g["bias_bottom3"]),
            "max_abs_bias_by_rank": np.abs(ranks.mean(axis=0)).max(),
            "slope_mean": g["slope"].mean(), "rmse_mean": g["rmse"].mean(),
            "extra_batches_mean": g["extra_batches"].mean(),
            "seconds_mean": g["seconds"].mean(),
        }  # fmt: skip
        for col in BALANCE:
            if f"max_{col}" in g and g[f"max_{col}"].notna().all():
                row[f"max_{col}"] = int(g[f"max_{col}"].max())
                row[f"batches_{col}_over"] = int(g[f"batches_{col}_over"].sum())
        rows.append(row)
    return pd.DataFrame(rows)


# (models, tasks, verdicts of history, matches planned)
SPEED_ROWS = ((100, 400, 200_000, 500), (100, 400, 200_000, 5_000), (300, 1_000, 200_000, 1_000))


class _Stopwatch:
    """Wraps a function of :mod:`sampling.design.plan` and adds up the seconds spent in it."""

    def __init__(self, name: str) -> None:
        self.name, self.seconds = name, 0.0
        self.inner = getattr(sampling.design.plan, name)

    def __call__(self, *args, **kwargs):
        tic = time.perf_counter()
        try:
            return self.inner(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - tic


def _load_pick_loop() -> None:
    """Compile (or load from the cache) the compiled pick loop and the compiled judge repair of
    large plans (:func:`sampling.warmup.warmup`): every timed row then runs them."""
    from sampling.warmup import warmup

    warmup()


def speed_row(models: int, tasks: int, history: int, n: int, repeats: int, seed: int) -> dict:
    """Median seconds of one fit and one plan of ``n`` matches on the same history."""
    board = make_board(models, tasks, seed=seed)
    subs = board.submissions[["model", "task_id"]]
    log = judge_matches(uniform_matches(subs, board.judges, history, seed=seed), board,
                        seed=seed)  # fmt: skip
    fits, plans, plan_fits, judges, fit_cpu, plan_cpu = [], [], [], [], [], []
    for _ in range(repeats):
        tic, cpu = time.perf_counter(), time.process_time()
        ratings.fit(log)
        fits.append(time.perf_counter() - tic)
        fit_cpu.append(time.process_time() - cpu)
        watches = [_Stopwatch("fit_for_planning"), _Stopwatch("assign_judges")]
        for w in watches:
            setattr(sampling.design.plan, w.name, w)
        try:
            tic, cpu = time.perf_counter(), time.process_time()
            sampling.design.plan.plan_matches(log, subs, board.judges, n, seed=seed)
            plans.append(time.perf_counter() - tic)
            plan_cpu.append(time.process_time() - cpu)
        finally:
            for w in watches:
                setattr(sampling.design.plan, w.name, w.inner)
        plan_fits.append(watches[0].seconds)
        judges.append(watches[1].seconds)
    plan, fit = float(np.median(plans)), float(np.median(fits))
    rest = np.array(plans) - np.array(plan_fits) - np.array(judges)
    return {
        "models": models, "tasks": tasks, "history": history, "matches": n, "repeats": repeats,
        "fit_seconds": fit, "plan_seconds": plan, "plan_to_fit": plan / fit,
        # CPU seconds of the process (all its threads): less moved by other work on the machine
        "fit_cpu_seconds": float(np.median(fit_cpu)),
        "plan_cpu_seconds": float(np.median(plan_cpu)),
        "plan_to_fit_cpu": float(np.median(plan_cpu) / np.median(fit_cpu)),
        "plan_fit_seconds": float(np.median(plan_fits)),
        "judges_seconds": float(np.median(judges)),
        "picks_ms_per_match": float(np.median(rest)) / n * 1e3,
        "load_1min": os.getloadavg()[0],  # other work on the machine during the row
    }  # fmt: skip


def speed_main(args: argparse.Namespace) -> int:
    ratings.warmup()
    _load_pick_loop()
    load_before = os.getloadavg()[0]
    rows = []
    for models, tasks, history, n in SPEED_ROWS:
        rows.append(speed_row(models, tasks, history, n, args.repeats, args.first_seed))
        print(pd.DataFrame(rows[-1:]).to_string(index=False, float_format="{:.3f}".format),
              flush=True)  # fmt: skip
    out = Path(args.out).with_name("bench_sampling_speed.csv")
    frame = pd.DataFrame(rows)
    write_atomic(frame, out)
    print(f"\n1-min load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")
    print(frame.to_string(index=False, float_format="{:.3f}".format))
    print(f"wrote {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", type=int, default=12)
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
    p.add_argument("--designs", default=DEFAULT_DESIGNS,
                   help=f"comma-separated, from {list(DESIGNS)}")  # fmt: skip
    p.add_argument("--out", default=str(RESULTS / "bench_sampling.csv"))
    p.add_argument("--speed", action="store_true",
                   help="time planning against one fit of the same history (SPEED_ROWS)")
    p.add_argument("--repeats", type=int, default=3, help="timed repetitions per --speed row")
    args = p.parse_args(argv)
    if args.speed:
        return speed_main(args)

    ratings.warmup()
    designs = [s.strip() for s in args.designs.split(",")]
    unknown = [d for d in designs if d not in DESIGNS]
    if unknown:
        p.error(f"unknown design(s) {unknown}; choose from {list(DESIGNS)}")
    jobs = [(seed, d, args) for seed in range(args.first_seed, args.first_seed + args.seeds)
            for d in designs]  # fmt: skip
    load_before = os.getloadavg()[0]
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
    print(f"wall time {wall:.0f} s with {args.jobs} process(es); 1-min load average "
          f"{load_before:.2f} before, {os.getloadavg()[0]:.2f} after\n")  # fmt: skip
    s = summary

    def pm(m, se, fmt):
        return [f"{a:{fmt}} +- {b:{fmt.lstrip('+')}}"
                for a, b in zip(s[m], s[se], strict=True)]  # fmt: skip

    table = pd.DataFrame({
        "design": s["design"],
        "reached": s["reached"].astype(str) + "/" + s["runs"].astype(str),
        "comparisons": [f"{m:,.0f} +- {d:,.0f}" for m, d in
                        zip(s["comparisons_mean"], s["comparisons_sd"], strict=True)],
        "x uniform": pm("ratio_to_uniform_mean", "ratio_to_uniform_se", ".3f"),
        "x oracle": pm("ratio_to_oracle_mean", "ratio_to_oracle_se", ".3f"),
        "anchored hw": s["anchored_half_width_mean"].map("{:.1f}".format),
        "pairwise hw": s["pairwise_half_width_mean"].map("{:.1f}".format),
        "anchor share": [f"{m:.1%} (max {x:.0%})" for m, x in
                         zip(s["anchor_share_mean"], s["anchor_share_max_batch"], strict=True)],
        "top-3 bias": pm("bias_top3_mean", "bias_top3_se", "+.1f"),
        "bottom-3 bias": pm("bias_bottom3_mean", "bias_bottom3_se", "+.1f"),
        "s/run": s["seconds_mean"].map("{:.1f}".format),
    })  # fmt: skip
    print(table.to_string(index=False))
    planned = runs[runs.strategy == "active"]
    if len(planned):
        n_batches = int(planned["n_batches"].sum())
        print(f"\nBalance rules over every planned batch ({n_batches}; limits: 0 for the first "
              "two, else 1):")  # fmt: skip
        for col in BALANCE:
            if f"max_{col}" in planned and planned[f"max_{col}"].notna().all():
                print(f"  {col:26s} max {int(planned[f'max_{col}'].max())}   batches over the "
                      f"limit: {int(planned[f'batches_{col}_over'].sum())}")  # fmt: skip
    print(f"\nwrote {out} and {out.with_name(out.stem + '_runs.csv')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
