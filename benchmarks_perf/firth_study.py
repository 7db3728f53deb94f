"""Small boards where a model often never loses: plain maximum likelihood, ``--penalty 0.1`` and
Firth's bias-reduced fit (``--firth``), by coverage of the true Elo difference to the anchor.

Each board: M models, N verdicts on 20 tasks (pairs uniform, A/B random, no ties), true
strengths ``linspace(-1, 1, M - 1)`` plus one strong model at ``+strong`` (log units); the
anchor is the middle model (true strength 0). Every fit uses the default intervals (clustered
by task: CR2 with Satterthwaite degrees of freedom). Per board and method:

* ``mle``: ``ratings.fit`` (no estimate when the win graph is not strongly connected);
* ``penalty``: ``penalty=0.1`` (open intervals for the models the penalty alone rates);
* ``firth``: ``firth=True`` as shipped (the same open intervals);
* ``firth_wald``: the Firth estimate with a plain CR2 Wald interval for every model, the
  separated ones included (what ``--firth`` would print without the open intervals);
* ``firth_model``: the Firth estimate with the model-based Wald interval (inverse information).

"Separated" models are those outside the anchor's strongly connected group of the win graph
(e.g. the strong model when it never lost); "strong model" is model m0 on every board, separated
or not. Coverage is reported with its Monte Carlo SE,
``finite`` is the share of boards with an estimate, ``open`` the share of intervals with an
infinite side, ``width`` the mean width of the finite intervals (Elo).

    python benchmarks_perf/firth_study.py            # ~3 min on 2 cores
    python benchmarks_perf/firth_study.py --boards 200
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

import ratings
from ratings.core.errors import ConvergenceWarning, NonIdentifiableError, PenaltyOnlyWarning

CELLS = (  # (models, verdicts, strong model's true strength)
    (8, 120, 3.5),
    (10, 300, 4.0),
)
METHODS = ("mle", "penalty", "firth", "firth_wald", "firth_model")
RESULTS = Path(__file__).resolve().parent / "results"


def simulate(rng: np.random.Generator, s: np.ndarray, n: int, tasks: int = 20) -> pd.DataFrame:
    m = s.size
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    a_wins = rng.random(n) < 1.0 / (1.0 + np.exp(s[b] - s[a]))
    names = np.array([f"m{k}" for k in range(m)], dtype=object)
    return pd.DataFrame({"model_a": names[a], "model_b": names[b],
                         "winner": np.where(a_wins, "A", "B"),
                         "task_id": rng.integers(0, tasks, n)})  # fmt: skip


def wald(r, level: float = 0.95, ci_model: bool = False):
    """Elo intervals est +- q se from the covariance alone (no open sides)."""
    se = r.scale * np.sqrt(np.clip(np.diag(r.cov), 0.0, None))
    q = stats.norm.ppf(0.5 + level / 2) if ci_model else stats.t.ppf(0.5 + level / 2,
                                                                      r.model_df)  # fmt: skip
    q = np.where(np.isnan(q), np.inf, q)
    elo = r.elo.to_numpy()
    with np.errstate(invalid="ignore"):
        half = np.where(se == 0.0, 0.0, q * se)
    return elo - half, elo + half


def one_board(rng, s, n, anchor: int) -> list[dict]:
    log = simulate(rng, s, n)
    name = f"m{anchor}"
    true = ratings.result.ELO_SCALE * (s - s[anchor]) + 1000.0
    fits = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PenaltyOnlyWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        try:
            fits["mle"] = ratings.fit(log, anchor=f"{name}=1000")
        except NonIdentifiableError:
            fits["mle"] = None
        fits["penalty"] = ratings.fit(log, anchor=f"{name}=1000", model=ratings.BT(penalty=0.1))
        fits["firth"] = ratings.fit(log, anchor=f"{name}=1000", model=ratings.BT(firth=True))
        model_based = ratings.fit(
            log, anchor=f"{name}=1000", model=ratings.BT(firth=True), ci="model"
        )
    models = fits["firth"].models  # every fit orders the models the same way
    true = pd.Series(true, index=[f"m{k}" for k in range(s.size)])[models].to_numpy()
    sep = fits["firth"].unbounded_mask
    keep = np.asarray(models != name)
    out = []
    for method in METHODS:
        r = fits["firth"] if method == "firth_wald" else (
            model_based if method == "firth_model" else fits[method])  # fmt: skip
        if r is None:
            lo = hi = est = np.full(s.size, np.nan)
        elif method in ("firth_wald", "firth_model"):
            lo, hi = wald(r, ci_model=method == "firth_model")
            est = r.elo.to_numpy()
        else:
            ci = r.conf_int().reindex(r.models)
            lo, hi, est = ci["lower"].to_numpy(), ci["upper"].to_numpy(), r.elo.to_numpy()
        for k in np.flatnonzero(keep):
            out.append({"method": method, "separated": bool(sep[k]), "strong": models[k] == "m0",
                        "finite": r is not None,
                        "covered": bool(lo[k] <= true[k] <= hi[k]) if r is not None else np.nan,
                        "open": bool(np.isinf(lo[k]) or np.isinf(hi[k])),
                        "width": hi[k] - lo[k], "error": est[k] - true[k],
                        "converged": True if r is None else bool(r.converged)})  # fmt: skip
    return out


def summarise(rows: pd.DataFrame) -> pd.DataFrame:
    def agg(g: pd.DataFrame) -> pd.Series:
        fin = g[g["finite"]]
        cov = fin["covered"].astype(float)
        w = fin["width"][np.isfinite(fin["width"])]
        n = len(cov)
        p = cov.mean() if n else np.nan
        return pd.Series({
            "n": len(g), "finite": g["finite"].mean(), "coverage": p,
            "mcse": np.sqrt(p * (1 - p) / n) if n else np.nan,
            "open": fin["open"].mean() if n else np.nan,
            "width": w.mean() if len(w) else np.nan,
            "median_error": fin["error"].median() if n else np.nan,
        })  # fmt: skip

    parts = []
    subsets = {"all": rows, "separated": rows[rows["separated"]],
               "connected": rows[~rows["separated"]], "strong model": rows[rows["strong"]],
               "strong, separated": rows[rows["strong"] & rows["separated"]],
               "strong, connected": rows[rows["strong"] & ~rows["separated"]]}  # fmt: skip
    for subset, g in subsets.items():
        t = g.groupby(["cell", "method"], sort=False).apply(agg, include_groups=False)
        parts.append(t.assign(models=subset).reset_index())
    return pd.concat(parts, ignore_index=True)


def condensed(table: pd.DataFrame) -> pd.DataFrame:
    """One row per subset and method, the cells side by side (A, B, ... in CELLS' order)."""
    out = None
    for c, (_cell, t) in enumerate(table.groupby("cell", sort=False)):
        tag = chr(ord("A") + c)
        part = pd.DataFrame({
            "models": t["models"], "method": t["method"],
            f"{tag}: finite": t["finite"].map("{:.2f}".format),
            f"{tag}: coverage": [f"{p:.3f} ± {e:.3f}" if np.isfinite(p) else "-"
                                 for p, e in zip(t["coverage"], t["mcse"], strict=True)],
            f"{tag}: open": t["open"].map(lambda v: "-" if np.isnan(v) else f"{v:.2f}"),
            f"{tag}: width": t["width"].map(lambda v: "-" if np.isnan(v) else f"{v:.0f}"),
            f"{tag}: median error": t["median_error"].map(
                lambda v: "-" if np.isnan(v) else f"{v:+.0f}"),
        })  # fmt: skip
        out = part if out is None else out.merge(part, on=["models", "method"], sort=False)
    return out


def markdown(frame: pd.DataFrame) -> str:
    """A pipe table (numbers to 3 significant digits)."""
    cells = frame.map(lambda v: f"{v:.3g}" if isinstance(v, float) else str(v))
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in cells.to_numpy()])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--boards", type=int, default=500, help="boards per cell (default 500)")
    ap.add_argument("--seed", type=int, default=20261201)
    args = ap.parse_args()
    rows = []
    t0 = time.perf_counter()
    for c, (m, n, strong) in enumerate(CELLS):
        s = np.r_[strong, np.linspace(-1.0, 1.0, m - 1)]
        anchor = 1 + (m - 1) // 2  # the middle of the linspace: true strength 0
        rng = np.random.default_rng([args.seed, c])
        cell = f"{m} models, {n} verdicts, strong +{strong:g}"
        sep_boards = 0
        for _ in range(args.boards):
            board = one_board(rng, s, n, anchor)
            sep_boards += any(r["separated"] for r in board)
            rows += [r | {"cell": cell} for r in board]
        print(f"{cell}: {sep_boards}/{args.boards} boards with a separated model "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)  # fmt: skip
    table = summarise(pd.DataFrame(rows))
    RESULTS.mkdir(exist_ok=True)
    table.to_csv(RESULTS / "firth_study.csv", index=False)
    text = markdown(condensed(table))
    (RESULTS / "firth_study.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
