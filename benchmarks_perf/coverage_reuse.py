#!/usr/bin/env python
"""Coverage of Crowd-BT intervals with style features when the judges' etas are reused from a
judge-quality file: with the two-step term of their covariance (the default) and without it
(``eta_known=True``).

Each board: a past log and a current log drawn independently from the same Crowd-BT design with
one style feature, d = s_A - s_B + beta (a - b) / (a + b), judges ``j1`` (eta 0.80) and ``j2``
(0.90) in turn reporting the true order of a decisive verdict with probability eta. The past log
is fitted by default with the feature (``ratings.fit(past, model="crowd-bt", style=["len"])``,
the etas estimated) and saved with :func:`ratings.scopes.judge_files.save_judge_quality`; the
current log is fitted with ``judge_quality=FILE`` and ``style=["len"]`` (task-clustered CR2 with
Satterthwaite df), once with the term and once with ``eta_known=True``. Coverage of the 95%
intervals of every model against the anchor ``m0`` and of every pairwise difference, against
the true strengths (the fitted model is the simulated one: no pseudo-truth needed), with its
Monte Carlo SE (per interval; intervals of one board are dependent, so the SE of the pairs'
share is a lower bound).

Cells: past logs of 1,000, 3,000 and 10,000 verdicts (the etas' uncertainty from large to
small) against a current log of 3,000 verdicts on 300 tasks; 8 models on [-1.2, 1.2]. Cell
``drawn`` has no past log: the file's etas are drawn around the truth from N(eta, V_DRAWN) and
the file gives V_DRAWN as their covariance, the first step exactly as the two-step term assumes
it (the cells with past logs also carry how well the past fit's own covariance of eta states
its spread: ``eta_sd`` against ``eta_spread``, the etas' standard deviation across boards).

Output: ``benchmarks_perf/results/coverage_reuse.csv`` and ``.md`` (atomically), with the load.

Usage::

    python benchmarks_perf/coverage_reuse.py                  # 300 boards per cell (~10 min)
    python benchmarks_perf/coverage_reuse.py --boards 40      # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from coverage_crowd import coverage_text, write_tables
from scipy.special import expit

import ratings
from ratings.scopes.judge_files import save_judge_quality

STRENGTHS = np.linspace(-1.2, 1.2, 8)
ETAS = {"j1": 0.80, "j2": 0.90}
BETA = 0.8
CURRENT, TASKS = 3000, 300
CELLS: dict[str, int | None] = {"past1k": 1000, "past3k": 3000, "past10k": 10_000, "drawn": None}
#: The covariance of the etas the ``drawn`` cell reuses (sd 0.04 and 0.03, correlation 0.33).
V_DRAWN = np.array([[0.0016, 0.0004], [0.0004, 0.0009]])
OUT = Path(__file__).parent / "results" / "coverage_reuse.csv"


def simulate(n: int, n_tasks: int, rng: np.random.Generator) -> pd.DataFrame:
    """``n`` verdicts of the design (see the module notes) on ``n_tasks`` tasks."""
    m, names = STRENGTHS.size, list(ETAS)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    la, lb = rng.integers(50, 900, n), rng.integers(50, 900, n)
    k = rng.integers(0, len(names), n)
    d = STRENGTHS[a] - STRENGTHS[b] + BETA * (la - lb) / (la + lb)
    eta = np.array(list(ETAS.values()))[k]
    a_wins = (rng.random(n) < expit(d)) ^ (rng.random(n) > eta)
    return pd.DataFrame({"model_a": [f"m{i}" for i in a], "model_b": [f"m{i}" for i in b],
                         "winner": np.where(a_wins, "A", "B"), "judge": np.array(names)[k],
                         "task_id": rng.integers(0, n_tasks, n), "len_a": la, "len_b": lb})


def covered(r: ratings.Ratings) -> tuple[float, float]:
    """Share of (models against the anchor, pairwise differences) whose 95% interval holds the
    truth."""
    elo = STRENGTHS * r.scale
    m = STRENGTHS.size
    anchor = [r.diff(f"m{i}", "m0") for i in range(1, m)]
    pairs = [r.diff(f"m{i}", f"m{j}") for i in range(m) for j in range(i + 1, m)]
    hit_a = [c["lower"] <= elo[i] - elo[0] <= c["upper"] for i, c in enumerate(anchor, 1)]
    idx = [(i, j) for i in range(m) for j in range(i + 1, m)]
    hit_p = [c["lower"] <= elo[i] - elo[j] <= c["upper"] for (i, j), c in zip(idx, pairs,
                                                                               strict=True)]
    return float(np.mean(hit_a)), float(np.mean(hit_p))


def drawn_file(path: Path, rng: np.random.Generator) -> np.ndarray:
    """Write a judge-quality file whose etas are drawn from N(truth, V_DRAWN) (clipped to
    [1/2, 1]) with V_DRAWN as their covariance; returns the etas."""
    names = list(ETAS)
    eta = np.clip(np.array(list(ETAS.values()))
                  + np.linalg.cholesky(V_DRAWN) @ rng.standard_normal(len(names)), 0.5, 1.0)
    doc = {"format": "ratings.judge_quality/2", "model": "crowd-bt",
           "judges": [{"judge": j, "eta": float(e), "se": float(np.sqrt(V_DRAWN[i, i]))}
                      for i, (j, e) in enumerate(zip(names, eta, strict=True))],
           "covariance": {"judges": names, "matrix": V_DRAWN.tolist()}}  # fmt: skip
    path.write_text(json.dumps(doc))
    return eta


def one_board(past_n: int | None, seed: int) -> dict:
    """Fit and score one board of a cell (its past log of ``past_n`` verdicts; None: etas
    drawn, :func:`drawn_file`)."""
    rng = np.random.default_rng(seed)
    past = None if past_n is None else simulate(past_n, max(TASKS, past_n // 10), rng)
    current = simulate(CURRENT, TASKS, rng)
    out: dict = {}
    with warnings.catch_warnings(), tempfile.TemporaryDirectory() as tmp:
        warnings.simplefilter("ignore")
        try:
            path = Path(tmp) / "judges.json"
            if past is None:
                out["eta"] = drawn_file(path, rng)
                out["eta_sd"] = float(np.sqrt(np.diag(V_DRAWN)).mean())
            else:
                fitted = ratings.fit(past, model="crowd-bt", style=["len"], anchor="m0")
                save_judge_quality(fitted, path)
                out["eta"] = fitted.judges.loc[list(ETAS), "eta"].to_numpy()
                out["eta_sd"] = float(np.sqrt(np.diag(fitted.crowd.eta_cov.to_numpy())).mean())
            for name, known in (("term", False), ("known", True)):
                r = ratings.fit(current, model=ratings.CrowdBT(judge_quality=str(path),
                                                               eta_known=known),
                                style=["len"], anchor="m0")  # fmt: skip
                out[name] = covered(r)
        except Exception as err:  # every board must fit: count any failure
            return {"failed": f"{type(err).__name__}: {str(err)[:80]}"}
    return out


def run_cell(name: str, boards: int, seed: int) -> list[dict]:
    """The rows of one cell: coverage with the term and with the etas known."""
    results = [one_board(CELLS[name], seed * 100_000 + b) for b in range(boards)]
    ok = [r for r in results if "failed" not in r]
    rows = []
    for interval in ("term", "known"):
        a = np.array([r[interval][0] for r in ok])
        p = np.array([r[interval][1] for r in ok])
        m = STRENGTHS.size
        n_a, n_p = a.size * (m - 1), p.size * m * (m - 1) // 2
        rows.append({"cell": name, "past_verdicts": CELLS[name], "interval": interval,
                     "boards": len(ok), "failed": len(results) - len(ok),
                     "anchor": a.mean(), "anchor_mcse": np.sqrt(a.mean() * (1 - a.mean()) / n_a),
                     "pairs": p.mean(), "pairs_mcse": np.sqrt(p.mean() * (1 - p.mean()) / n_p),
                     "eta_sd": float(np.mean([r["eta_sd"] for r in ok])),
                     "eta_spread": float(np.std([r["eta"] for r in ok], axis=0, ddof=1).mean()),
                     "eta_mean": " / ".join(f"{v:.3f}" for v in
                                            np.mean([r["eta"] for r in ok], axis=0))})  # fmt: skip
    return rows


def past(n) -> str:
    """A cell's past log as the table shows it: its verdicts, or ``drawn``."""
    return "drawn" if pd.isna(n) else f"{int(n):,}"


def markdown(table: pd.DataFrame, meta: str) -> str:
    """The results as Markdown: one line per cell."""
    lines = [meta, "", "| cell | past verdicts | reused etas' mean | their sd: stated | "
             "across boards | boards | with the term: anchor | pairs | eta known: anchor | "
             "pairs |", "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for cell, g in table.groupby("cell", sort=False):
        t, k = g[g.interval == "term"].iloc[0], g[g.interval == "known"].iloc[0]
        fails = f" ({t['failed']} failed)" if t["failed"] else ""
        lines.append(
            f"| `{cell}` | {past(t['past_verdicts'])} | {t['eta_mean']} | "
            f"{t['eta_sd']:.3f} | {t['eta_spread']:.3f} | {t['boards']}{fails} | "
            f"{coverage_text(t['anchor'], t['anchor_mcse'])} | "
            f"{coverage_text(t['pairs'], t['pairs_mcse'])} | "
            f"{coverage_text(k['anchor'], k['anchor_mcse'])} | "
            f"{coverage_text(k['pairs'], k['pairs_mcse'])} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--boards", type=int, default=300)
    parser.add_argument("--cells", default=",".join(CELLS))
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    start, load = time.time(), os.getloadavg()
    rows = []
    for k, name in enumerate(args.cells.split(",")):
        rows += run_cell(name, args.boards, args.seed + k)
        print(pd.DataFrame(rows[-2:]).to_string(index=False))
    load_end = os.getloadavg()
    meta = (f"{args.boards} boards per cell, seed {args.seed}; current log {CURRENT:,} verdicts "
            f"on {TASKS} tasks, {STRENGTHS.size} models on [-1.2, 1.2], true etas {ETAS}, style "
            f"coefficient {BETA}; {time.time() - start:.0f} s, load (1 min) "
            f"{load[0]:.1f} at start, {load_end[0]:.1f} at end (a shared 2-core machine). "
            "Coverage (Monte Carlo SE x 1000 in brackets), bold outside [0.94, 0.96].")
    write_tables(pd.DataFrame(rows), markdown(pd.DataFrame(rows), meta), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
