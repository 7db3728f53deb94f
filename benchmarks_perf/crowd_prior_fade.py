#!/usr/bin/env python
"""How often the default Crowd-BT fit uses its prior as boards grow, how far that moves the
estimate from the plain maximum-likelihood estimate, and how both cover on those boards.

The default (:func:`ratings.models.crowd.likelihood.fit_crowd_default`) is the plain
maximum-likelihood estimate
where it is regular and the posterior mode under the weak priors of
:mod:`ratings.models.crowd.prior`
elsewhere: where some eta sits on its bound (1/2 or 1), the plain fit has no estimate, some
eta's Wald interval reaches 1/2 or 1, or (with two or more estimated etas) the prior moves the
regular plain estimate by more than half a standard error (``shift``). This script counts, per
board size, the boards of each kind and, where the prior is used, compares the default with the
plain fit (``prior=None``): the largest Elo shift over the models (both anchored at ``m15``),
the largest eta shift, and the coverage of the 95% intervals of each (every model against the
anchor and every pair, Monte-Carlo SE from the per-board shares); for every kind, the default's
mean etas and scale (the slope of the estimated log-strengths on the true ones; 1: the truth's
spread).

Design and truth as in :mod:`coverage_crowd` (30 models on [-1.7, 1.7], task effects sd 0.3,
judges .95 / .88 / .80, 10% ties; truth: the pseudo-true parameters), at 2,000 verdicts on 100
tasks, 12,000 on 300, 30,000 on 400 and 100,000 on 1,000.

Output: ``benchmarks_perf/results/crowd_prior_fade.csv`` and ``.md``.

Usage::

    python benchmarks_perf/crowd_prior_fade.py                     # ~15 min on 2 cores
    python benchmarks_perf/crowd_prior_fade.py --boards 40 --sizes 2000,12000   # a quick look
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
from coverage_crowd import (
    ANCHOR,
    Cell,
    _covered,
    coverage_text,
    pseudo_truth,
    simulate,
    write_tables,
)

import ratings

RESULTS = Path(__file__).resolve().parent / "results"
TASKS = {2000: 100, 12000: 300, 30000: 400, 100000: 1000}
KINDS = ("regular", "shift", "reach", "bound")


def one_board(n: int, seed: int, truth: np.ndarray) -> dict:
    """Fit one board by default and, where the prior is used, plainly too."""
    cell = Cell(n, TASKS[n])
    frame = simulate(cell, n, np.random.default_rng(seed))
    anchor = f"m{ANCHOR:02d}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # JudgeWarning and the like: counted through kinds
        r = ratings.fit(frame, model="crowd-bt", anchor=anchor)
        summary = r.crowd
        out = {"default": _covered(r, truth), "scale": _scale(r, truth),
               "eta": r.judges["eta"].to_numpy()}  # fmt: skip
        if not summary.prior_used:
            return out | {"kind": "regular"}
        if summary.plain_on_bound or not summary.plain_found:
            out["kind"] = "bound"
        else:
            out["kind"] = "reach" if np.isnan(summary.prior_shift) else "shift"
        try:
            plain = ratings.fit(frame, model=ratings.CrowdBT(prior=None), anchor=anchor)
        except ratings.NonIdentifiableError:
            return out
    out["plain"] = _covered(plain, truth)
    out["elo_shift"] = float(np.abs(r.elo - plain.elo).max())
    out["eta_shift"] = float(np.abs(r.judges["eta"] - plain.judges["eta"]).max())
    return out


def _scale(r: ratings.Ratings, truth: np.ndarray) -> float:
    """Slope of the estimated log-strengths on the true ones (1: the truth's spread)."""
    return float(np.polyfit(truth, r.strength, 1)[0])


def run_chunk(args: tuple) -> list[dict]:
    n, seeds, truth = args
    return [one_board(n, s, truth) for s in seeds]


def summarise(n: int, boards: list[dict]) -> list[dict]:
    """One row per kind of board: its share, shifts and coverage."""
    rows = []
    for kind in KINDS:
        group = [b for b in boards if b["kind"] == kind]
        row = {"n_verdicts": n, "n_tasks": TASKS[n], "kind": kind, "boards": len(group),
               "share": len(group) / len(boards)}  # fmt: skip
        for fit in ("default", "plain"):
            have = np.array([b[fit] for b in group if fit in b]).reshape(-1, 2)
            row[f"{fit}_boards"] = len(have)
            for k, what in enumerate(("anchor", "pairs")):
                col = have[:, k] if len(have) else np.array([])
                row[f"{fit}_{what}"] = col.mean() if col.size else np.nan
                row[f"{fit}_{what}_mcse"] = (col.std(ddof=1) / np.sqrt(col.size)
                                             if col.size > 1 else np.nan)  # fmt: skip
        shifts = np.array([b["elo_shift"] for b in group if "elo_shift" in b])
        etas = np.array([b["eta_shift"] for b in group if "eta_shift" in b])
        row["elo_shift_median"] = np.median(shifts) if shifts.size else np.nan
        row["elo_shift_p90"] = np.quantile(shifts, 0.9) if shifts.size else np.nan
        row["under_1_elo"] = float(np.mean(shifts < 1.0)) if shifts.size else np.nan
        row["eta_shift_median"] = np.median(etas) if etas.size else np.nan
        row["scale"] = np.mean([b["scale"] for b in group]) if group else np.nan
        row["eta_mean"] = ("/".join(f"{e:.3f}" for e in np.mean([b["eta"] for b in group], 0))
                           if group else "")  # fmt: skip
        rows.append(row)
    return rows


def markdown(table: pd.DataFrame, meta: str) -> str:
    def cov(row, fit, what):
        v = row[f"{fit}_{what}"]
        return coverage_text(v, row[f"{fit}_{what}_mcse"]) if np.isfinite(v) else ""

    def num(v, spec):
        return "" if not np.isfinite(v) else format(v, spec)

    lines = [meta, "", "| verdicts | boards | kind | share | Elo shift median (90%) | "
             "within 1 Elo | eta shift median | default anchor / pairs | plain MLE anchor / "
             "pairs | default eta mean | default scale |",
             "|---:|---:|---|---:|---:|---:|---:|---|---|---|---:|"]  # fmt: skip
    for _, row in table.iterrows():
        shift = ("" if not np.isfinite(row["elo_shift_median"]) else
                 f"{row['elo_shift_median']:.1f} ({row['elo_shift_p90']:.1f})")  # fmt: skip
        total = int(table.loc[table["n_verdicts"] == row["n_verdicts"], "boards"].sum())
        lines.append(
            f"| {row['n_verdicts']:,} | {total} | {row['kind']} | {row['share']:.0%} | {shift} | "
            f"{num(row['under_1_elo'], '.0%')} | {num(row['eta_shift_median'], '.3f')} | "
            f"{cov(row, 'default', 'anchor')} / {cov(row, 'default', 'pairs')} | "
            f"{cov(row, 'plain', 'anchor')} / {cov(row, 'plain', 'pairs')} | {row['eta_mean']} | "
            f"{num(row['scale'], '.3f')} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--boards", type=int, default=600, help="boards per size (600)")
    p.add_argument("--boards-100k", type=int, default=150, help="boards at 100,000 (150)")
    p.add_argument("--sizes", default=",".join(map(str, TASKS)), help=f"among {list(TASKS)}")
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    p.add_argument("--seed", type=int, default=20261202)
    p.add_argument("--out", type=Path, default=RESULTS / "crowd_prior_fade.csv")
    args = p.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    unknown = [s for s in sizes if s not in TASKS]
    if unknown:
        p.error(f"unknown size(s) {unknown}; choose from {list(TASKS)}")
    t0 = time.perf_counter()
    rows: list[dict] = []
    with ProcessPoolExecutor(max(args.jobs, 1)) as pool:
        for n in sizes:
            truth, _ = pseudo_truth(Cell(n, TASKS[n]))
            count = args.boards_100k if n >= 100_000 else args.boards
            seeds = [args.seed + 1_000_003 * sizes.index(n) + b for b in range(count)]
            size = max(1, -(-count // (8 * max(args.jobs, 1))))
            chunks = [(n, seeds[i:i + size], truth) for i in range(0, count, size)]
            boards = [b for part in pool.map(run_chunk, chunks) for b in part]
            rows += summarise(n, boards)
            print(f"[{time.perf_counter() - t0:7.1f}s] {n:,} verdicts: {count} boards",
                  flush=True)
    table = pd.DataFrame(rows)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    meta = (f"Seed {args.seed}; {args.boards} boards per size ({args.boards_100k} at 100,000); "
            f"{(time.perf_counter() - t0) / 60:.1f} min with {args.jobs} jobs (load average at "
            f"the end {load}); ratings {ratings.__version__}.")  # fmt: skip
    print(table[["n_verdicts", "kind", "share", "elo_shift_median", "default_pairs",
                 "plain_pairs"]].to_string(float_format="%.3f"))  # fmt: skip
    write_tables(table, markdown(table, meta), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
