#!/usr/bin/env python
"""How render forfeits compress a Crowd-BT scale: the figure in ``docs/forfeits.png``.

The methodology's rule: when a submission fails to render it loses to one that rendered, two
failures tie, and such a row is deterministic (judge ``"deterministic"``, eta = 1) whatever the
judge said. A render failure says little about which model is better, but a forfeit row enters
the fit as a verdict no judge could have flipped; when failures strike strong and weak models
alike, these rows pull every rating towards the middle, and the fit (which believes them fully)
cannot tell that apart from a narrower board.

Simulation: 30 models with true Elo evenly spaced over 1000 +- 295 (log-strengths on
[-1.7, 1.7]), the mid-board model pinned at its true Elo; 12,000 verdicts on 300 tasks, judges
of quality 0.95 / 0.88 / 0.80 in turn, 10% ties, submission effects (sd 0.3). Each submission
fails to render with probability f, whatever its model, so a share of about 2f of the rows are
forfeits. Each board is fitted by default (``ratings.fit(..., model="crowd-bt")``) with the
rule, and with the forfeit rows dropped; 10 seeds per failure rate.

Output: ``docs/forfeits.png`` and ``benchmarks_perf/results/forfeit_compression.csv`` (per
failure rate and model: true Elo, mean fitted Elo with the rule and with forfeits dropped).

Usage::

    python benchmarks_perf/forfeit_compression.py
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit

import ratings
from ratings.io import write_atomic
from ratings.result import ELO_SCALE

HERE = Path(__file__).resolve().parent
M, ANCHOR = 30, 15
ETAS = (0.95, 0.88, 0.80)


def campaign(seed: int, n: int, n_tasks: int, fail: float) -> pd.DataFrame:
    """One simulated log with ``failed_a`` / ``failed_b`` flags (independent of the model)."""
    rng = np.random.default_rng(seed)
    s = np.linspace(-1.7, 1.7, M)
    a = rng.integers(0, M, n)
    b = (a + rng.integers(1, M, n)) % M
    task = rng.integers(0, n_tasks, n)
    u = rng.normal(0.0, 0.3, (n_tasks, M))
    judge = np.arange(n) % len(ETAS)
    eta = np.asarray(ETAS)[judge]
    d = s[a] - s[b] + u[task, a] - u[task, b]
    p = eta * expit(d) + (1.0 - eta) * expit(-d)
    code = np.where(rng.random(n) < 0.1, 2, np.where(rng.random(n) < p, 0, 1))
    broken = rng.random((n_tasks, M)) < fail  # one render outcome per (task, model) submission
    names = np.array([f"m{i:02d}" for i in range(M)], dtype=object)
    return pd.DataFrame({
        "model_a": names[a], "model_b": names[b],
        "winner": np.array(["A", "B", "tie"], dtype=object)[code], "task_id": task,
        "judge": np.array(["j1", "j2", "j3"], dtype=object)[judge],
        "failed_a": broken[task, a], "failed_b": broken[task, b],
    })  # fmt: skip


def run(fails, seeds: int, n: int, n_tasks: int) -> pd.DataFrame:
    true_elo = 1000.0 + ELO_SCALE * (np.linspace(-1.7, 1.7, M) - np.linspace(-1.7, 1.7, M)[ANCHOR])
    names = [f"m{i:02d}" for i in range(M)]
    rows = []
    for fail in fails:
        rule, dropped, share = [], [], []
        for seed in range(seeds):
            frame = campaign(1000 * seed + 7, n, n_tasks, fail)
            lost = frame["failed_a"] | frame["failed_b"]
            share.append(lost.mean())
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ratings.JudgeWarning)
                r = ratings.fit(frame, model="crowd-bt", anchor=f"{names[ANCHOR]}=1000")
                k = ratings.fit(frame[~lost].drop(columns=["failed_a", "failed_b"]),
                                model="crowd-bt", anchor=f"{names[ANCHOR]}=1000")  # fmt: skip
            rule.append(r.elo[names].to_numpy())
            dropped.append(k.elo[names].to_numpy())
        rows.append(pd.DataFrame({
            "fail_rate": fail, "forfeit_share": float(np.mean(share)), "model": names,
            "true_elo": true_elo, "elo_rule": np.mean(rule, axis=0),
            "elo_dropped": np.mean(dropped, axis=0),
        }))  # fmt: skip
    return pd.concat(rows, ignore_index=True)


def plot(table: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
    for _, g in table.groupby("fail_rate"):
        share = g["forfeit_share"].iloc[0]
        left.plot(g["true_elo"], g["elo_rule"] - g["true_elo"], marker="o", ms=3,
                  label=f"{share:.0%} forfeit rows")  # fmt: skip
    base = table[table["fail_rate"] == table["fail_rate"].max()]
    left.plot(base["true_elo"], base["elo_dropped"] - base["true_elo"], ls="--", color="grey",
              label=f"{base['forfeit_share'].iloc[0]:.0%}, forfeit rows dropped")  # fmt: skip
    left.axhline(0.0, color="black", lw=0.8)
    left.set(xlabel="true Elo", ylabel="fitted - true Elo (mean of 10 boards)",
             title="Forfeits (eta = 1) pull ratings to the anchor")  # fmt: skip
    left.legend(fontsize=8)
    rank = table.groupby("fail_rate").cumcount()  # models in order of true Elo
    ends = table.assign(end=np.where(rank < 5, "bottom 5", "top 5"))[(rank < 5) | (rank >= M - 5)]
    for end, g in ends.groupby("end"):
        mean = g.groupby("forfeit_share").apply(lambda x: (x["elo_rule"] - x["true_elo"]).mean(),
                                                include_groups=False)  # fmt: skip
        right.plot(100 * mean.index, mean.to_numpy(), marker="o", label=f"{end} models")
    right.axhline(0.0, color="black", lw=0.8)
    right.set(xlabel="forfeit rows (% of verdicts)", ylabel="mean fitted - true Elo",
              title="Shift of the board's ends")  # fmt: skip
    right.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(lambda tmp: fig.savefig(tmp, dpi=110, format=path.suffix[1:]), path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--n", type=int, default=12_000)
    ap.add_argument("--tasks", type=int, default=300)
    ap.add_argument("--figure", type=Path, default=HERE.parent / "docs" / "forfeits.png")
    ap.add_argument("--csv", type=Path, default=HERE / "results" / "forfeit_compression.csv")
    args = ap.parse_args(argv)
    table = run((0.0, 0.01, 0.03, 0.06), args.seeds, args.n, args.tasks)
    write_atomic(table.to_csv(index=False, float_format="%.3f"), args.csv)
    plot(table, args.figure)
    ends = table.groupby("forfeit_share").apply(
        lambda g: pd.Series({"bottom5": (g["elo_rule"] - g["true_elo"]).head(5).mean(),
                             "top5": (g["elo_rule"] - g["true_elo"]).tail(5).mean(),
                             "bottom5_dropped": (g["elo_dropped"] - g["true_elo"]).head(5).mean()}),
        include_groups=False)  # fmt: skip
    print(ends.round(1).to_string())
    print(f"wrote {args.csv} and {args.figure}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
