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

Crowd-BT cells are also reported apart on the boards where the plain maximum-likelihood fit put
a judge's eta on a bound (``Ratings.crowd.plain_on_bound``; the fit is then the posterior mode)
and on the others.

Run: ``python benchmarks_perf/style_coverage.py [--cells small|large|all] [--minutes M]
[--max-reps N]``: rounds of ``--batch`` boards per cell (seeds 0, 1, ...) until ``--max-reps``
or the time is up; each board is appended to ``results/style_coverage_boards_GROUP.csv`` (a
rerun resumes from it) and ``results/style_coverage.csv`` / ``.md`` are rewritten from all
groups' boards after every round, so a run stopped at any time leaves a usable table.
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


def board(m, n, ties, model, tasks, beta, seed, truth, plain: bool) -> dict:
    """One replication: the style fit's coverage (and, with ``plain``, the plain fit's)."""
    d = simulate(m, n, ties, beta, seed, tasks, model == "crowd-bt")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = ratings.fit(d, style="tokens", model=model, anchor="m00")
        p = ratings.fit(d, model=model, anchor="m00") if plain else None
    hit = covered(r, truth, True)
    out = {"seed": seed, "ratings": hit[: m - 1].mean(), "coef": float(hit[m - 1]),
           "hard": bool(r.crowd is not None and r.crowd.plain_on_bound),
           "posterior": bool(r.crowd is not None and r.crowd.prior_used),
           "plain": np.nan, "agree": np.nan}  # fmt: skip
    if p is not None:
        out["plain"] = covered(p, truth, False).mean()
        tr = r.to_frame().set_index("model").reindex(r.models[1:])
        tp = p.to_frame().set_index("model").reindex(r.models[1:])
        out["agree"] = float(((tr["lower"] <= tp["elo"]) & (tp["elo"] <= tr["upper"])).mean())
    return out


def target(m, ties, model, beta) -> np.ndarray:
    """What the fit estimates: the generating values, or the pseudo-true ones (BT with ties)."""
    s = strengths(m)
    if model == "crowd-bt" or ties == 0.0:
        return np.r_[s[1:] - s[0], beta]
    return pseudo_true(m, ties, beta)


def summarise(boards: pd.DataFrame) -> dict:
    """Coverage and Monte Carlo SEs of a set of boards (SE from the boards' means: the
    contrasts of one board are not independent; binomial for the coefficient)."""
    k = len(boards)
    sd = np.sqrt(k / max(k - 1, 1))
    pl = boards["plain"].dropna()
    cov_b = boards["coef"].mean()
    return {"reps": k, "coverage_ratings": boards["ratings"].mean(),
            "mc_se_ratings": boards["ratings"].std(ddof=1) / np.sqrt(k) if k > 1 else np.nan,
            "coverage_coef": cov_b, "mc_se_coef": np.sqrt(cov_b * (1 - cov_b) / k) * sd,
            "plain_reps": len(pl), "coverage_plain": pl.mean() if len(pl) else np.nan,
            "mc_se_plain": pl.std(ddof=1) / np.sqrt(len(pl)) if len(pl) > 1 else np.nan,
            "agree": boards["agree"].mean(), "hard_share": boards["hard"].mean()}  # fmt: skip


def run_cell(m, n, ties, model, budget, tasks, beta=1.0, max_reps=2000, min_reps=20) -> dict:
    """Replications of one cell until ``budget`` seconds are spent (at least ``min_reps``)."""
    truth = target(m, ties, model, beta)
    start, rows = time.perf_counter(), []
    while len(rows) < max_reps and (len(rows) < min_reps or time.perf_counter() - start < budget):
        rows.append(board(m, n, ties, model, tasks, beta, len(rows), truth, True))
    return {"models": m, "verdicts": n, "tasks": tasks, "ties": ties, "model": model,
            "beta": beta, **summarise(pd.DataFrame(rows)), "beta_target": truth[-1],
            "seconds": time.perf_counter() - start}  # fmt: skip


CELLS = [(m, n, tasks, ties, model, 1.0)
         for m, n, tasks in ((6, 3000, 60), (20, 12000, 200))
         for ties in (0.0, 0.3) for model in ("bt", "crowd-bt")] + [
    (6, 3000, 60, 0.1, "bt", 0.0), (20, 12000, 200, 0.1, "crowd-bt", 0.0)]
KEY = ["models", "verdicts", "tasks", "ties", "model", "beta"]


def boards_path(group: str) -> Path:
    return OUT.parent / f"style_coverage_boards_{group}.csv"


def table(boards: pd.DataFrame) -> pd.DataFrame:
    """Per cell: all boards; for Crowd-BT also the hard boards (the plain estimate put an eta on
    a bound) and the others."""
    rows = []
    for key, g in boards.groupby(KEY, sort=False):
        subsets = [("all", g)]
        if key[4] == "crowd-bt":
            subsets += [("eta on bound", g[g["hard"]]), ("eta inside", g[~g["hard"]])]
        for name, sub in subsets:
            if len(sub):
                rows.append({**dict(zip(KEY, key, strict=True)), "boards": name,
                             **summarise(sub)})  # fmt: skip
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame, note: str) -> str:
    lines = [note, "",
             "| models | verdicts | tasks | ties | model | beta | boards | reps | "
             "ratings (MC SE) | coefficient (MC SE) | plain (MC SE; reps) | agree | "
             "eta on bound |",
             "|---:|---:|---:|---:|---|---:|---|---:|---|---|---|---:|---:|"]
    for _, c in table.iterrows():
        plain = (f"{c.coverage_plain:.3f} ({c.mc_se_plain:.3f}; {c.plain_reps})"
                 if c.plain_reps else "")  # fmt: skip
        agree = "" if np.isnan(c.agree) else f"{c.agree:.3f}"
        lines.append(
            f"| {c.models} | {c.verdicts:,} | {c.tasks} | {c.ties:.0%} | {c.model} | {c.beta:g} "
            f"| {c.boards} | {c.reps} | {c.coverage_ratings:.3f} ({c.mc_se_ratings:.3f}) | "
            f"{c.coverage_coef:.3f} ({c.mc_se_coef:.3f}) | {plain} | {agree} | "
            f"{c.hard_share:.0%} |")
    return "\n".join(lines) + "\n"


def write_summary(seconds: float) -> None:
    """Aggregate every group's boards file into ``style_coverage.csv`` and ``.md``."""
    files = sorted(OUT.parent.glob("style_coverage_boards_*.csv"))
    boards = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    order = {c: k for k, c in enumerate(CELLS)}
    boards["_order"] = [order[(r.models, r.verdicts, r.tasks, r.ties, r.model, r.beta)]
                        for r in boards.itertuples()]  # fmt: skip
    boards = boards.sort_values(["_order", "seed"], kind="stable").drop(columns="_order")
    out = table(boards)
    note = (f"ratings {ratings.__version__}; boards per cell as time allowed (seeds 0, 1, ... per "
            f"cell; the plain fit on the first boards only), on a shared 2-core machine "
            f"({seconds:.0f} s for the last run). Coverage of nominal 95% intervals (CR2 by task, "
            f"Satterthwaite df); MC SE from the boards' means (ratings) or binomial "
            f"(coefficient). Crowd-BT cells also by whether the plain maximum-likelihood fit put "
            f"a judge's eta on a bound (the fit is then the posterior mode; 'eta on bound').")
    write_atomic(out, OUT.with_suffix(".csv"), csv_escape=False)
    write_atomic(markdown(out, note), OUT.with_suffix(".md"))


def run(cells, group: str, *, batch: int, max_reps: int, plain_reps: int, stop: float) -> None:
    """Rounds of ``batch`` boards per cell until ``max_reps`` or the clock reaches ``stop``,
    appending each board to the group's file and rewriting the summary after each round
    (resumes from the boards already in the file)."""
    path = boards_path(group)
    done = pd.read_csv(path) if path.exists() else pd.DataFrame(columns=[*KEY, "seed"])
    truths = {c: target(c[0], c[3], c[4], c[5]) for c in cells}
    t0 = time.time()
    while time.time() < stop:
        progressed = False
        for cell in cells:
            m, n, tasks, ties, model, beta = cell
            have = done[(done[KEY] == list(cell)).all(axis=1)]
            seeds = [s for s in range(max_reps) if s not in set(have["seed"])][:batch]
            rows = []
            for seed in seeds:
                if time.time() >= stop:
                    break
                rows.append({**dict(zip(KEY, (m, n, tasks, ties, model, beta), strict=True)),
                             **board(m, n, ties, model, tasks, beta, seed, truths[cell],
                                     seed < plain_reps)})  # fmt: skip
            if rows:
                new = pd.DataFrame(rows)
                done = pd.concat([done, new], ignore_index=True) if len(done) else new
                write_atomic(done, path, csv_escape=False)
                progressed = True
        write_summary(time.time() - t0)
        print(time.strftime("%H:%M:%S"), group, done.groupby(KEY[:5]).size().to_dict(),
              flush=True)  # fmt: skip
        if not progressed:
            break


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cells", choices=["small", "large", "all"], default="all",
                    help="the 6-model cells, the 20-model ones, or both")
    ap.add_argument("--minutes", type=float, default=35.0, help="stop after this long")
    ap.add_argument("--batch", type=int, default=25, help="boards per cell and round")
    ap.add_argument("--max-reps", type=int, default=1000, help="boards per cell at most")
    ap.add_argument("--plain-reps", type=int, default=200,
                    help="boards per cell that also fit the plain model")
    args = ap.parse_args()
    ratings.warmup()
    cells = [c for c in CELLS if args.cells == "all" or (c[0] == 6) == (args.cells == "small")]
    run(cells, args.cells, batch=args.batch, max_reps=args.max_reps,
        plain_reps=args.plain_reps, stop=time.time() + 60.0 * args.minutes)


if __name__ == "__main__":
    main()
