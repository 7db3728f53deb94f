"""Coverage of style-controlled intervals under planted style bias.

Judges favour the longer answer: P(A) = sigma(s_A - s_B + beta x) with x = (a - b) / (a + b)
of answer lengths, the longer answers belonging mostly to some models (so the plain fit's
ratings are biased). Per cell (board size, tie share, model) and replication, the style fit's
95% intervals (CR2 by task, Satterthwaite df) are checked against the values the model
estimates: the generating strengths and coefficient, or with ties (which the Bradley-Terry fit
scores as half wins, and Crowd-BT leaves out) the pseudo-true values of one fit on 400,000
verdicts. Reported: coverage of every model's difference to the first model and of each
coefficient, with Monte Carlo SEs; and the plain fit's coverage of the same strengths.

Run: ``python benchmarks_perf/style_coverage.py [--reps 200]``; writes
``benchmarks_perf/results/style_coverage.csv``.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import ratings
from ratings.core.schema import ELO_SCALE

OUT = Path(__file__).resolve().parent / "results" / "style_coverage.csv"


def simulate(m: int, n: int, ties: float, beta: float, seed: int, tasks: int,
             eta: float = 1.0) -> pd.DataFrame:  # fmt: skip
    """One verdict log with per-side token counts; models differ in typical length."""
    rng = np.random.default_rng(seed)
    s = np.linspace(-1.0, 1.0, m)
    length = np.exp(np.linspace(5.0, 6.5, m))[rng.permutation(m)]  # verbosity per model
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    ta = rng.poisson(length[a] * rng.lognormal(0, 0.3, n)) + 1
    tb = rng.poisson(length[b] * rng.lognormal(0, 0.3, n)) + 1
    x = (ta - tb) / (ta + tb)
    p = 1.0 / (1.0 + np.exp(-(s[a] - s[b] + beta * x)))
    win = rng.random(n) < p
    if eta < 1.0:
        win = np.where(rng.random(n) < eta, win, ~win)
    w = np.where(rng.random(n) < ties, "tie", np.where(win, "A", "B"))
    return pd.DataFrame({"model_a": [f"m{i:02d}" for i in a],
                         "model_b": [f"m{i:02d}" for i in b], "winner": w,
                         "task_id": rng.integers(0, tasks, n), "judge": "j",
                         "tokens_a": ta, "tokens_b": tb})  # fmt: skip


def targets(r) -> np.ndarray:
    st = r.strength - r.strength[0]
    return np.r_[st[1:], r.style["coef"].to_numpy()]


def covered(r, truth: np.ndarray, style: bool) -> np.ndarray:
    t = r.to_frame().set_index("model").reindex(r.models)
    est = (t["elo"].to_numpy() - t["elo"].to_numpy()[0]) / ELO_SCALE
    lo = (t["lower"].to_numpy() - t["elo"].to_numpy()[0]) / ELO_SCALE
    hi = (t["upper"].to_numpy() - t["elo"].to_numpy()[0]) / ELO_SCALE
    m = len(r.models)
    hit = (lo[1:] <= truth[: m - 1]) & (truth[: m - 1] <= hi[1:])
    del est
    if style:
        c = r.style
        tb = truth[m - 1:]
        hit = np.r_[hit, ((c["lower"] <= tb) & (tb <= c["upper"])).to_numpy()]
    return hit


def run_cell(m, n, ties, model, reps, tasks, beta=1.0) -> dict:
    eta = 0.85 if model == "crowd-bt" else 1.0
    big = simulate(m, 400_000, ties, beta, 10_000 + m, 2000, eta)
    kw = {"model": model, "anchor": "m00", "cluster": None}
    truth = targets(ratings.fit(big, style="tokens", **kw))
    hits, plain = [], []
    for rep in range(reps):
        d = simulate(m, n, ties, beta, rep, tasks, eta)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = ratings.fit(d, style="tokens", model=model, anchor="m00")
            plain_model = ratings.CrowdBT(prior=None) if model != "bt" else ratings.BT()
            p = ratings.fit(d, model=plain_model, anchor="m00")
        hits.append(covered(r, truth, True))
        plain.append(covered(p, truth, False))
    h, pl = np.array(hits), np.array(plain)
    k = h.shape[1]
    cov_r, cov_b, cov_p = h[:, : m - 1].mean(), h[:, k - 1].mean(), pl.mean()
    # Monte Carlo SE from replication means (contrasts within a replication are correlated)
    se_r = h[:, : m - 1].mean(axis=1).std(ddof=1) / np.sqrt(reps)
    return {"models": m, "verdicts": n, "tasks": tasks, "ties": ties, "model": model,
            "reps": reps, "coverage_ratings": cov_r, "mc_se_ratings": se_r,
            "coverage_coef": cov_b, "mc_se_coef": np.sqrt(cov_b * (1 - cov_b) / reps),
            "coverage_plain": cov_p, "beta_true": truth[-1]}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=200)
    args = ap.parse_args()
    rows = []
    for m, n, tasks in ((6, 3000, 60), (20, 12000, 200)):
        for ties in (0.0, 0.3):
            for model in ("bt", "crowd-bt"):
                rows.append(run_cell(m, n, ties, model, args.reps, tasks))
                print(rows[-1], flush=True)
    OUT.parent.mkdir(exist_ok=True)
    pd.DataFrame(rows).to_csv(OUT, index=False)


if __name__ == "__main__":
    main()
