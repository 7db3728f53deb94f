"""Coverage of style-controlled intervals under planted style bias.

Judges favour the longer answer: P(A) = sigma(s_A - s_B + beta x) with x = (a - b) / (a + b)
of the two answers' token counts, and the models differ in typical length (so the plain fit's
ratings are biased). Crowd-BT cells add three judges of quality 0.95 / 0.88 / 0.80 in turn: a
decisive verdict names the better answer with probability eta. Ties: a verdict is a tie with
probability ``ties`` whatever the pair. Tasks are cluster labels (no task effect is planted).

Per cell (board size, tie share, model) and replication, the style fit's 95% intervals (the
defaults: CR2 by task, Satterthwaite df per contrast) are checked against what the model
estimates:

* Bradley-Terry without ties, and Crowd-BT (which leaves ties out): the generating values;
* Bradley-Terry with ties (scored as half wins, so a tie share attenuates every effect): the
  pseudo-true values, the maximiser of the expected log-likelihood, computed by a logistic
  regression (written here, Newton on a dense design) with the expected outcome
  (1 - ties) sigma(d) + ties / 2 as a fractional response over 400,000 draws of pairs and
  lengths: no outcome noise.

The coefficient is compared per unit of x (the table's ``coef / scale``), the strengths as each
model's difference to the first. Reported per cell: coverage of the strengths' intervals (all
contrasts pooled; Monte Carlo SE from the replications' means) and of the coefficient's
(binomial SE), and the plain fit's coverage of the same strengths. Cells without planted bias
(beta = 0) report the plain and controlled coverage and how often each model's plain estimate
lies inside its controlled interval ("agree").

Run: ``python benchmarks_perf/style_coverage.py [--budget SECONDS] [--max-reps N]``: each cell
runs replications until its share of the time budget is spent (seeds 0, 1, ...). Writes
``benchmarks_perf/results/style_coverage.csv`` and ``.md``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import ratings
from ratings.core.schema import ELO_SCALE
from ratings.io import write_atomic

OUT = Path(__file__).resolve().parent / "results" / "style_coverage"
ETAS = (0.95, 0.88, 0.80)


def draw_design(m: int, n: int, rng: np.random.Generator):
    """Pairs and token counts: model verbosity spread over exp(5)..exp(6.5) tokens."""
    length = np.exp(np.linspace(5.0, 6.5, m))[np.random.default_rng(m).permutation(m)]
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    ta = rng.poisson(length[a] * rng.lognormal(0, 0.3, n)) + 1
    tb = rng.poisson(length[b] * rng.lognormal(0, 0.3, n)) + 1
    return a, b, ta, tb, (ta - tb) / (ta + tb)


def strengths(m: int) -> np.ndarray:
    return np.linspace(-1.0, 1.0, m)


def simulate(m: int, n: int, ties: float, beta: float, seed: int, tasks: int,
             crowd: bool) -> pd.DataFrame:  # fmt: skip
    """One verdict log with per-side token counts."""
    rng = np.random.default_rng(seed)
    a, b, ta, tb, x = draw_design(m, n, rng)
    s = strengths(m)
    win = rng.random(n) < 1.0 / (1.0 + np.exp(-(s[a] - s[b] + beta * x)))
    judge = np.arange(n) % len(ETAS) if crowd else np.zeros(n, dtype=int)
    if crowd:
        win = np.where(rng.random(n) < np.asarray(ETAS)[judge], win, ~win)
    w = np.where(rng.random(n) < ties, "tie", np.where(win, "A", "B"))
    return pd.DataFrame({"model_a": [f"m{i:02d}" for i in a],
                         "model_b": [f"m{i:02d}" for i in b], "winner": w,
                         "task_id": rng.integers(0, tasks, n),
                         "judge": [f"j{k}" for k in judge], "tokens_a": ta,
                         "tokens_b": tb})  # fmt: skip


def pseudo_true(m: int, ties: float, beta: float, n: int = 400_000, seed: int = 99) -> np.ndarray:
    """(s_1 - s_0, ..., s_{m-1} - s_0, beta per unit x) maximising the expected Bradley-Terry
    log-likelihood with ties as half wins (Newton on the fractional-response logistic
    regression)."""
    rng = np.random.default_rng(seed)
    a, b, _, _, x = draw_design(m, n, rng)
    s = strengths(m)
    y = (1 - ties) / (1.0 + np.exp(-(s[a] - s[b] + beta * x))) + ties / 2
    design = np.zeros((n, m))
    design[np.arange(n), a] += 1.0
    design[np.arange(n), b] -= 1.0
    design = np.column_stack([design[:, 1:], x])
    v = np.zeros(m)
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(design @ v)))
        step = np.linalg.solve(design.T @ (design * (p * (1 - p))[:, None]), design.T @ (y - p))
        v += step
        if np.abs(step).max() < 1e-13:
            break
    return v


def covered(r, truth: np.ndarray, style: bool) -> np.ndarray:
    """Per contrast (each model against the first; then the coefficient per unit x): does the
    interval hold the truth?"""
    t = r.to_frame().set_index("model").reindex(r.models)
    base = t["elo"].to_numpy()[0]
    lo = (t["lower"].to_numpy()[1:] - base) / ELO_SCALE
    hi = (t["upper"].to_numpy()[1:] - base) / ELO_SCALE
    m = len(r.models)
    hit = (lo <= truth[: m - 1]) & (truth[: m - 1] <= hi)
    if style:
        c = r.style.iloc[0]
        tb = truth[m - 1]
        hit = np.r_[hit, c["lower"] / c["scale"] <= tb <= c["upper"] / c["scale"]]
    return hit


def run_cell(m, n, ties, model, budget, tasks, beta=1.0, max_reps=2000, min_reps=20) -> dict:
    """Replications of one cell until ``budget`` seconds are spent (at least ``min_reps``)."""
    crowd = model == "crowd-bt"
    s = strengths(m)
    if crowd or ties == 0.0:
        truth = np.r_[s[1:] - s[0], beta]
    else:
        truth = pseudo_true(m, ties, beta)
    hits, plain, agree = [], [], []
    start = time.perf_counter()
    rep = 0
    while rep < max_reps and (rep < min_reps or time.perf_counter() - start < budget):
        d = simulate(m, n, ties, beta, rep, tasks, crowd)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = ratings.fit(d, style="tokens", model=model, anchor="m00")
            p = ratings.fit(d, model=model, anchor="m00")
        hits.append(covered(r, truth, True))
        plain.append(covered(p, truth, False))
        tr = r.to_frame().set_index("model").reindex(r.models[1:])
        tp = p.to_frame().set_index("model").reindex(r.models[1:])
        agree.append(((tr["lower"] <= tp["elo"]) & (tp["elo"] <= tr["upper"])).mean())
        rep += 1
    h, pl = np.array(hits, dtype=float), np.array(plain, dtype=float)
    cov_r, cov_b = h[:, : m - 1].mean(), h[:, m - 1].mean()
    return {"models": m, "verdicts": n, "tasks": tasks, "ties": ties, "model": model,
            "beta": beta, "reps": rep, "coverage_ratings": cov_r,
            "mc_se_ratings": h[:, : m - 1].mean(axis=1).std(ddof=1) / np.sqrt(rep),
            "coverage_coef": cov_b, "mc_se_coef": np.sqrt(cov_b * (1 - cov_b) / rep),
            "coverage_plain": pl.mean(),
            "mc_se_plain": pl.mean(axis=1).std(ddof=1) / np.sqrt(rep),
            "agree": float(np.mean(agree)), "beta_target": truth[-1],
            "seconds": time.perf_counter() - start}  # fmt: skip


CELLS = [(m, n, tasks, ties, model, 1.0)
         for m, n, tasks in ((6, 3000, 60), (20, 12000, 200))
         for ties in (0.0, 0.3) for model in ("bt", "crowd-bt")] + [
    (6, 3000, 60, 0.1, "bt", 0.0), (20, 12000, 200, 0.1, "crowd-bt", 0.0)]


def markdown(table: pd.DataFrame, note: str) -> str:
    lines = [note, "",
             "| models | verdicts | tasks | ties | model | beta | reps | ratings (MC SE) | "
             "coefficient (MC SE) | plain (MC SE) | agree |",
             "|---:|---:|---:|---:|---|---:|---:|---|---|---|---:|"]
    for _, c in table.iterrows():
        lines.append(
            f"| {c.models} | {c.verdicts:,} | {c.tasks} | {c.ties:.0%} | {c.model} | {c.beta:g} "
            f"| {c.reps} | {c.coverage_ratings:.3f} ({c.mc_se_ratings:.3f}) | "
            f"{c.coverage_coef:.3f} ({c.mc_se_coef:.3f}) | {c.coverage_plain:.3f} "
            f"({c.mc_se_plain:.3f}) | {c.agree:.3f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=float, default=2100.0, help="seconds for all cells")
    ap.add_argument("--max-reps", type=int, default=2000)
    args = ap.parse_args()
    ratings.warmup()
    t0 = time.perf_counter()
    weights = np.array([1.0 if c[0] == 6 else 1.6 for c in CELLS])
    rows = []
    for cell, w in zip(CELLS, weights / weights.sum(), strict=True):
        m, n, tasks, ties, model, beta = cell
        rows.append(run_cell(m, n, ties, model, w * args.budget, tasks, beta=beta,
                             max_reps=args.max_reps))
        print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in rows[-1].items()},
              flush=True)
    table = pd.DataFrame(rows)
    note = (f"ratings {ratings.__version__}; {time.perf_counter() - t0:.0f} s in all on a shared "
            f"2-core machine; replications per cell as the time budget allowed (seeds 0, 1, "
            f"...). Coverage of nominal 95% intervals (CR2 by task, Satterthwaite df).")
    OUT.parent.mkdir(exist_ok=True)
    write_atomic(table, OUT.with_suffix(".csv"), csv_escape=False)
    write_atomic(markdown(table, note), OUT.with_suffix(".md"))


if __name__ == "__main__":
    main()
