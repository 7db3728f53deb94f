#!/usr/bin/env python
"""Rubric scope: task-clustered sandwich SEs vs per-verdict (HC0) SEs, and their coverage.

Each board: 12 models, 60 tasks, 6 binary checks per submission from
:func:`ratings.datasets.simulate_rubric`, P(pass) = sigma(s_model + u_{model,task} - b_check), with
per-(model, task) submission effects u ~ N(0, 0.5^2) (:func:`ratings.datasets.submission_effects`)
shared by every check and every pair a submission takes part in, and check difficulties b ~ N(0, 1).
The checks become synthetic matches with :func:`ratings.scopes.rubric.rubric_to_matches`, both
methods
(``rate``: one match per pair and task; ``check``: one match per pair and shared check), and each
board is fitted twice with Bradley-Terry on the same data, anchored at ``m05``: task-clustered
sandwich (``aggregate(cluster="task_id")``) and per-verdict HC0 (``aggregate(cluster=None)``).

Rubric matches are not Bradley-Terry-generated, so the target is the pseudo-true BT parameter
(the probability limit of the BT fit under this process), estimated per method by fitting one
very large board (``--truth-tasks``, default 5000 tasks) from the same process and the same true
strengths. Its own standard error is reported (``truth_se_share``: its mean clustered SE as a share
of a board's); at 5000 vs 60 tasks it is about 0.11, which widens the apparent error spread by
about 0.6 % (negligible for coverage).

Reported per method, over all models but the anchor and over boards:

* ``se_ratio``: mean SE_clustered / SE_HC0 on the same data;
* coverage of the 95 % clustered and HC0 intervals of the pseudo-true Elo, with Monte-Carlo
  standard errors from the per-board coverage fractions;
* ``sd_over_se_*``: the across-board standard deviation of each model's estimate over its mean
  SE, averaged over models (truth-free: 1 when the SE is right on average);
* ``max_abs_bias_elo``: the largest |mean estimate - pseudo-true Elo| over models (finite-sample
  bias plus the pseudo-truth's own error), beside the mean clustered SE;
* ``tie_share``: share of synthetic matches that are ties.

Results: a table on stdout and ``benchmarks_perf/results/rubric_clustering.csv`` (written
atomically: temp file + ``os.replace``).

Usage::

    python benchmarks_perf/rubric_clustering.py                    # 200 boards
    python benchmarks_perf/rubric_clustering.py --boards 40 --truth-tasks 2000
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

import ratings
from ratings.core.errors import NonIdentifiableError
from ratings.datasets.simulate import simulate_rubric, submission_effects
from ratings.io import write_atomic
from ratings.result import ELO_SCALE
from ratings.scopes.rubric import rubric_to_matches

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
OUT = RESULTS / "rubric_clustering.csv"

N_MODELS = 12
N_TASKS = 60
N_CHECKS = 6
EFFECT_SD = 0.5
DIFFICULTY_SD = 1.0
ANCHOR = "m05"
ANCHOR_ELO = 1000.0
LEVEL = 0.95
METHODS = ("rate", "check")
MODELS = [f"m{k:02d}" for k in range(N_MODELS)]
STRENGTHS = pd.Series(np.linspace(-1.0, 1.0, N_MODELS), index=MODELS)


def simulate_board(n_tasks: int, seed: int) -> pd.DataFrame:
    """One rubric board: every model graded on ``N_CHECKS`` checks of every task."""
    rng = np.random.default_rng(seed)
    tasks = [f"task-{k}" for k in range(n_tasks)]
    effects = submission_effects(MODELS, tasks, EFFECT_SD, seed=int(rng.integers(2**63)))
    return simulate_rubric(STRENGTHS, tasks, N_CHECKS, effects=effects,
                           difficulty_sd=DIFFICULTY_SD, seed=int(rng.integers(2**63)))  # fmt: skip


def fit_both(matches: pd.DataFrame) -> tuple[ratings.Ratings, ratings.Ratings]:
    """Clustered-by-task and per-verdict (HC0) Bradley-Terry fits of the same matches."""
    anchor = f"{ANCHOR}={ANCHOR_ELO:g}"
    clustered = ratings.fit(ratings.aggregate(matches, cluster="task_id"), anchor=anchor,
                            level=LEVEL)  # fmt: skip
    hc0 = ratings.fit(ratings.aggregate(matches, cluster=None), anchor=anchor, level=LEVEL)
    return clustered, hc0


def pseudo_truth(n_tasks: int, seed: int) -> dict[str, tuple[pd.Series, pd.Series]]:
    """Per method: the Elo fitted on one very large board and its clustered SE."""
    rubric = simulate_board(n_tasks, seed)
    out = {}
    for method in METHODS:
        r, _ = fit_both(rubric_to_matches(rubric, method=method))
        out[method] = (r.elo, r.se)
    return out


def one_board(seed: int) -> dict[str, dict[str, np.ndarray]] | None:
    rubric = simulate_board(N_TASKS, seed)
    out = {}
    for method in METHODS:
        matches = rubric_to_matches(rubric, method=method)
        try:
            clustered, hc0 = fit_both(matches)
        except NonIdentifiableError:
            return None
        out[method] = {
            "elo": clustered.elo.to_numpy(), "elo_hc0": hc0.elo.to_numpy(),
            "se_cl": clustered.se.to_numpy(), "se_hc0": hc0.se.to_numpy(),
            "ties": np.array([np.mean(matches["winner"] == "tie")]),
        }  # fmt: skip
    return out


def run_chunk(seeds: list[int]) -> list[dict | None]:
    return [one_board(seed) for seed in seeds]


def _init_worker() -> None:
    ratings.warmup()


def summarise(method: str, boards: list[dict | None], truth: pd.Series, truth_se: pd.Series
              ) -> dict:  # fmt: skip
    ok = [b[method] for b in boards if b is not None]
    keep = np.asarray(truth.index != ANCHOR)
    t = truth.to_numpy()[keep]
    elo = np.vstack([b["elo"][keep] for b in ok])
    if not np.allclose(elo, np.vstack([b["elo_hc0"][keep] for b in ok])):
        raise AssertionError("clustered and HC0 fits of the same data disagree on the estimate")
    se_cl = np.vstack([b["se_cl"][keep] for b in ok])
    se_hc0 = np.vstack([b["se_hc0"][keep] for b in ok])
    z = stats.norm.ppf(0.5 + LEVEL / 2)

    def coverage(se: np.ndarray) -> tuple[float, float]:
        hit = np.abs(elo - t) <= z * se
        per_board = hit.mean(axis=1)
        return float(hit.mean()), float(per_board.std(ddof=1) / np.sqrt(len(per_board)))

    cc, mc = coverage(se_cl)
    ch, mh = coverage(se_hc0)
    sd = elo.std(axis=0, ddof=1)
    return {
        "method": method, "n_boards": len(ok), "n_failed": len(boards) - len(ok),
        "n_intervals": int(elo.size), "se_ratio_cluster_hc0": float(np.mean(se_cl / se_hc0)),
        "coverage_cluster": cc, "mcse_cluster": mc, "coverage_hc0": ch, "mcse_hc0": mh,
        "sd_over_se_cluster": float(np.mean(sd / se_cl.mean(axis=0))),
        "sd_over_se_hc0": float(np.mean(sd / se_hc0.mean(axis=0))),
        "max_abs_bias_elo": float(np.max(np.abs(elo.mean(axis=0) - t))),
        "mean_se_cluster_elo": float(se_cl.mean()),
        "truth_se_share": float(np.mean(truth_se.to_numpy()[keep] / se_cl.mean(axis=0))),
        "truth_elo_range": float(t.max() - t.min()),
        "tie_share": float(np.mean([b["ties"][0] for b in ok])),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--boards", type=int, default=200, help="boards (default 200)")
    p.add_argument("--truth-tasks", type=int, default=5000,
                   help="tasks of the large board defining the pseudo-true value (default 5000)")
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                   help="worker processes (default 2)")
    p.add_argument("--seed", type=int, default=20261129, help="base seed")
    p.add_argument("--out", type=Path, default=OUT, help=f"CSV output (default {OUT})")
    args = p.parse_args(argv)
    if args.boards < 2:
        p.error("--boards must be >= 2")

    ratings.warmup()
    t0 = time.perf_counter()
    truth = pseudo_truth(args.truth_tasks, args.seed - 1)
    print(f"[{time.perf_counter() - t0:6.1f}s] pseudo-true values from {args.truth_tasks} tasks",
          flush=True)  # fmt: skip
    seeds = [args.seed + b for b in range(args.boards)]
    size = max(1, -(-len(seeds) // (4 * max(args.jobs, 1))))
    chunks = [seeds[k:k + size] for k in range(0, len(seeds), size)]
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs, initializer=_init_worker) as pool:
            boards = [b for part in pool.map(run_chunk, chunks) for b in part]
    else:
        boards = [b for chunk in chunks for b in run_chunk(chunk)]
    print(f"[{time.perf_counter() - t0:6.1f}s] {args.boards} boards fitted", flush=True)

    table = pd.DataFrame([summarise(m, boards, *truth[m]) for m in METHODS])
    print()
    print(f"Rubric scope, {N_MODELS} models, {N_TASKS} tasks x {N_CHECKS} checks, submission "
          f"effect sd {EFFECT_SD}; BT anchored at {ANCHOR}; {LEVEL:.0%} intervals of the "
          f"pseudo-true Elo ({args.truth_tasks} tasks)")  # fmt: skip
    print(table.to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    pseudo = pd.DataFrame({m: truth[m][0] for m in METHODS}).assign(
        true_elo=ANCHOR_ELO + ELO_SCALE * (STRENGTHS - STRENGTHS[ANCHOR]))
    print("\nPseudo-true BT Elo per method (true rubric-logit Elo for reference):")
    print(pseudo.round(1).to_string())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(table, args.out)
    print(f"\nwrote {args.out} ({time.perf_counter() - t0:.1f}s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
