"""Coverage of the tie models' default intervals: ratings and the tie parameter.

Boards drawn from each tie family (Davidson, Rao-Kupper) with task effects (a per (model, task)
shift of the strengths, sd ``TASK_SD``), small and large, at three tie rates (about 11-14%,
20-26% and 33-41% of verdicts); each fitted by
``ratings.fit(log, model=ratings.BT(ties=FAMILY), anchor="m00")`` with its default intervals
(CR2 clustered by task, Student t with Satterthwaite df per contrast; the tie parameter's
interval on phi = log(nu) or log(theta - 1), with the df of its own contrast, centred on the
bias-reduced phi, :func:`ratings.inference.ties.phi_bias`). A cell's coverage is the share of
replications whose 95% interval holds the pseudo-true value, with its Monte Carlo standard
error: for the ratings, each non-anchor model's interval, averaged over models within a
replication (the SE from the spread of those averages across replications); for the tie
parameter, its one interval. ``tie_mle_coverage``: the same interval centred on the MLE of phi
(the earlier default). ``few_ties``: the same on the fifth of a cell's boards with the fewest
ties (the hard case for the tie parameter).

Pseudo-true values: with task effects the fit estimates the model that best fits the verdicts'
population probabilities, averaged over the task shifts (u_a - u_b ~ N(0, 2 TASK_SD^2), by
Gauss-Hermite quadrature), so the truth is the tie model fitted to those expected outcome
counts (every pair equally often, as drawn), as ``coverage_cells.truth`` does for half wins.

    python benchmarks_perf/tie_coverage.py                  # the stated replications
    python benchmarks_perf/tie_coverage.py --reps 200       # quicker, wider Monte Carlo SE

Runs in one process (seeded: cell k draws from ``--seed`` + k). Writes
``results/tie_coverage.csv`` (one row per cell), ``results/tie_coverage_boards.csv`` (one row
per board) and ``results/tie_coverage.md`` (the table of ``docs/coverage.md``; ``--render``
rewrites it, and the reference column of the CSV, from the two CSVs).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

import ratings
from ratings.core.tdist import critical_value
from ratings.data.comparisons import Comparisons
from ratings.io import write_atomic
from ratings.models.families.ties import tie_family
from ratings.models.ties import fit_ties

HERE = Path(__file__).resolve().parent
LEVEL = 0.95
TASK_SD = 0.3
FEW = 0.2  # the share of a cell's boards, those with the fewest ties, reported on their own


@dataclass(frozen=True)
class Cell:
    family: str
    size: str
    n_models: int
    n_verdicts: int
    n_tasks: int
    phi: float  # the tie parameter on its unbounded scale (11-14%, 20-26%, 33-41% ties)
    reps: int

    @property
    def name(self) -> str:
        return f"{self.family}/{self.size}/phi={self.phi:g}"


#: Boards: models, verdicts, tasks. ``tiny`` is the hard case by design (about 20 ties a
#: board at the lowest rate), run on its own with ``--sizes tiny``.
SIZES = {"small": (6, 300, 30), "large": (12, 3000, 150), "tiny": (6, 150, 15)}


def cells(reps_small: int, reps_large: int) -> list[Cell]:
    """Every cell, in seed order (cell k draws from ``--seed`` + k)."""
    out = []
    for family in ("davidson", "rao-kupper"):
        for size in ("small", "large"):
            for phi in (-1.0, -0.3, 0.5):
                out.append(Cell(family, size, *SIZES[size], phi,
                                reps_large if size == "large" else reps_small))
    for family in ("davidson", "rao-kupper"):  # after the others: their seeds stay
        for phi in (-1.0, -0.3, 0.5):
            out.append(Cell(family, "tiny", *SIZES["tiny"], phi, reps_small))
    return out


def strengths(m: int) -> np.ndarray:
    """Fixed strengths of a board of ``m`` models (seeded), spread about 1.2 in sd."""
    return np.random.default_rng(1000 + m).normal(0.0, 0.6, m)


def draw(cell: Cell, s: np.ndarray, rng: np.random.Generator) -> pd.DataFrame:
    m, n = cell.n_models, cell.n_verdicts
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    t = rng.integers(0, cell.n_tasks, n)
    u = rng.normal(0.0, TASK_SD, (cell.n_tasks, m))
    d = s[a] - s[b] + u[t, a] - u[t, b]
    pa, pb, _ = tie_family(cell.family).probabilities(d, cell.phi)
    x = rng.random(n)
    winner = np.where(x < pa, "A", np.where(x < pa + pb, "B", "tie"))
    names = np.array([f"m{k:02d}" for k in range(m)])
    return pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner,
                         "task_id": t})


def truth(cell: Cell, s: np.ndarray) -> tuple[np.ndarray, float]:
    """Pseudo-true strengths (model 0 at 0) and phi: the tie model fitted to the expected
    outcome counts of every pair, the task shifts integrated out."""
    fam = tie_family(cell.family)
    x, w = np.polynomial.hermite_e.hermegauss(60)
    w = w / w.sum()
    m = cell.n_models
    ii, jj = np.triu_indices(m, 1)
    d = s[ii, None] - s[jj, None] + np.sqrt(2.0) * TASK_SD * x[None, :]
    pa, pb, pt = (p @ w for p in fam.probabilities(d, cell.phi))
    big = 1e5
    zero = np.zeros(ii.size, dtype=np.int64)
    data = Comparisons(pd.Index([f"m{k:02d}" for k in range(m)], dtype=object),
                       pd.Index(["judge"], dtype=object), None, None, ii, jj, zero, zero,
                       big * pa, big * pb, big * pt)  # fmt: skip
    fit = fit_ties(data, fam, ref=0, tol=1e-12)
    return fit.theta, fit.phi


def _share(x: np.ndarray) -> tuple[float, float]:
    """Coverage and its binomial Monte Carlo SE."""
    c = float(x.mean())
    return c, float(np.sqrt(c * (1 - c) / x.size))


def run_cell(cell: Cell, seed: int) -> tuple[dict, pd.DataFrame]:
    """The cell's summary row and one row per board."""
    s = strengths(cell.n_models)
    theta, phi = truth(cell, s)
    fam = tie_family(cell.family)
    true_elo = 1000.0 + ratings.Ratings.scale * theta
    true_value = float(fam.value(phi))
    rng = np.random.default_rng(seed)
    boards, failed = [], 0
    t0 = time.perf_counter()
    for rep in range(cell.reps):
        log = draw(cell, s, rng)
        n_ties = int((log["winner"] == "tie").sum())
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = ratings.fit(log, model=ratings.BT(ties=cell.family), anchor="m00")
        except (ratings.NonIdentifiableError, ValueError, FloatingPointError):
            failed += 1
            continue
        frame = r.to_frame().reindex([f"m{k:02d}" for k in range(cell.n_models)])
        lo, hi = frame["lower"].to_numpy()[1:], frame["upper"].to_numpy()[1:]
        t = r.ties.iloc[0]
        q = critical_value(LEVEL, t["df"] if np.isfinite(t["df"]) else None)
        mle_lo, mle_hi = t["phi"] - q * t["se_phi"], t["phi"] + q * t["se_phi"]
        boards.append({
            "rep": rep, "ties": n_ties, "tie_share": n_ties / len(log),
            "rating_cover": float(np.mean((lo <= true_elo[1:]) & (true_elo[1:] <= hi))),
            "tie_cover": float(t["lower"] <= true_value <= t["upper"]),
            "tie_mle_cover": float(mle_lo <= phi <= mle_hi),
            "phi_hat": float(t["phi"]), "se_phi": float(t["se_phi"]),
            "bias_phi": float(t["bias_phi"]), "df": float(t["df"]),
            "width": float(t["upper"] - t["lower"]),
        })  # fmt: skip
    per = pd.DataFrame(boards)
    few = per.nsmallest(max(round(FEW * len(per)), 1), "tie_share")
    rc = per["rating_cover"].to_numpy()
    done = len(per)
    tie_c, tie_se = _share(per["tie_cover"].to_numpy())
    mle_c, mle_se = _share(per["tie_mle_cover"].to_numpy())
    few_c, few_se = _share(few["tie_cover"].to_numpy())
    few_mle, few_mle_se = _share(few["tie_mle_cover"].to_numpy())
    fr = few["rating_cover"].to_numpy()
    row = {
        "family": cell.family, "size": cell.size, "models": cell.n_models,
        "verdicts": cell.n_verdicts, "tasks": cell.n_tasks, "phi": cell.phi,
        "true_phi": phi, "true_tie_parameter": true_value,
        "tie_share": float(per["tie_share"].mean()),
        "tie_share_min": float(per["tie_share"].min()),
        "tie_share_max": float(per["tie_share"].max()),
        "reps": done, "failed": failed,
        "rating_coverage": rc.mean(), "rating_mc_se": rc.std(ddof=1) / np.sqrt(done),
        "tie_coverage": tie_c, "tie_mc_se": tie_se,
        "tie_mle_coverage": mle_c, "tie_mle_mc_se": mle_se,
        "few_boards": len(few), "few_tie_share_max": float(few["tie_share"].max()),
        "few_rating_coverage": fr.mean(), "few_rating_mc_se": fr.std(ddof=1) / np.sqrt(fr.size),
        "few_tie_coverage": few_c, "few_tie_mc_se": few_se,
        "few_tie_mle_coverage": few_mle, "few_tie_mle_mc_se": few_mle_se,
        "phi_bias_sd": float((per["phi_hat"].mean() - phi) / per["phi_hat"].std(ddof=1)),
        "mean_bias_phi_sd": float(per["bias_phi"].mean() / per["phi_hat"].std(ddof=1)),
        "se_over_sd": float(per["se_phi"].mean() / per["phi_hat"].std(ddof=1)),
        "median_df": float(per["df"].median()),
        "tie_interval_width": float(per["width"].median()),
        "seconds": time.perf_counter() - t0, "load1": os.getloadavg()[0],
    }  # fmt: skip
    return row, per.assign(family=cell.family, size=cell.size, phi=cell.phi)


def _rounded(boards: pd.DataFrame) -> pd.DataFrame:
    """The per-board table with its floats to six significant digits (a smaller file)."""
    floats = boards.select_dtypes("float").columns
    return boards.assign(**{c: boards[c].map(lambda x: float(f"{x:.6g}")) for c in floats})


def add_reference(table: pd.DataFrame, boards: pd.DataFrame) -> pd.DataFrame:
    """``few_ideal_coverage``: on each cell's fewest-ties fifth, the coverage of an interval of
    the right width (the bias-reduced phi -/+ 1.96 times the SD of the estimates over the cell's
    boards, which no board knows): the selection's own toll, the reference for the
    ``few_tie_*`` columns (an equal-tailed interval loses at most its 2.5% lower misses, all
    on boards with few ties: 1 - 0.025 / FEW = 0.875 at worst)."""
    out = []
    for _, row in table.iterrows():
        b = boards[(boards["family"] == row["family"]) & (boards["size"] == row["size"])
                   & np.isclose(boards["phi"], row["phi"])]  # fmt: skip
        sd = b["phi_hat"].std(ddof=1)
        few = b.nsmallest(int(row["few_boards"]), "tie_share")
        centre = few["phi_hat"] - few["bias_phi"]
        out.append(float(np.mean(np.abs(centre - row["true_phi"]) <= 1.959964 * sd)))
    return table.assign(few_ideal_coverage=out)


def _cov(c: float, se: float) -> str:
    return f"{c:.3f} ± {se:.3f}"


def render(table: pd.DataFrame) -> str:
    """The markdown table of ``docs/coverage.md`` from the cells' rows."""
    head = ("| family | board | ties: mean (range) | tie parameter (true) | boards | ratings | "
            "tie parameter | MLE-centred | fewest-ties fifth: ties up to | ratings | "
            "tie parameter | MLE-centred | right width | bias of the MLE (SD) | "
            "estimated bias (SD) | "
            "SE / SD | median df | median width |")  # fmt: skip
    lines = [head, "|" + " --- |" * head.count(" | ") + " --- |"]
    for _, r in table.iterrows():
        board = (f"{r['size']}: {r['models']} models, {r['verdicts']:,} verdicts, "
                 f"{r['tasks']} tasks")  # fmt: skip
        name = "nu" if r["family"] == "davidson" else "theta"
        lines.append(
            f"| {r['family']} | {board} | {r['tie_share']:.0%} ({r['tie_share_min']:.0%}-"
            f"{r['tie_share_max']:.0%}) | {name} = {r['true_tie_parameter']:.3f} | "
            f"{r['reps']:,} | {_cov(r['rating_coverage'], r['rating_mc_se'])} | "
            f"{_cov(r['tie_coverage'], r['tie_mc_se'])} | "
            f"{_cov(r['tie_mle_coverage'], r['tie_mle_mc_se'])} | "
            f"{r['few_tie_share_max']:.0%} ({r['few_boards']:,} boards) | "
            f"{_cov(r['few_rating_coverage'], r['few_rating_mc_se'])} | "
            f"{_cov(r['few_tie_coverage'], r['few_tie_mc_se'])} | "
            f"{_cov(r['few_tie_mle_coverage'], r['few_tie_mle_mc_se'])} | "
            f"{r['few_ideal_coverage']:.3f} | {r['phi_bias_sd']:+.3f} | "
            f"{r['mean_bias_phi_sd']:+.3f} | {r['se_over_sd']:.3f} | "
            f"{r['median_df']:.0f} | {r['tie_interval_width']:.3f} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> pd.DataFrame:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=None, help="replications of every cell")
    ap.add_argument("--reps-small", type=int, default=2000)
    ap.add_argument("--reps-large", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=20261206)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "tie_coverage.csv")
    ap.add_argument("--boards-out", type=Path,
                    default=HERE / "results" / "tie_coverage_boards.csv")
    ap.add_argument("--sizes", default="small,large",
                    help="boards to run, of " + ", ".join(SIZES) + " (default small,large)")
    ap.add_argument("--render", action="store_true",
                    help="only write the markdown table (results/tie_coverage.md) from --out")
    args = ap.parse_args(argv)
    if args.render:
        table = add_reference(pd.read_csv(args.out).drop(columns="few_ideal_coverage",
                                                         errors="ignore"),
                              pd.read_csv(args.boards_out))  # fmt: skip
        write_atomic(table, args.out)
        write_atomic(render(table), args.out.with_suffix(".md"))
        return table
    small = args.reps or args.reps_small
    large = args.reps or args.reps_large
    rows, boards = [], []
    for k, cell in enumerate(cells(small, large)):
        if cell.size not in args.sizes.split(","):
            continue
        row, per = run_cell(cell, args.seed + k)
        rows.append(row)
        boards.append(per)
        print(f"{cell.name}: ratings {row['rating_coverage']:.3f} ({row['rating_mc_se']:.3f}), "
              f"tie parameter {row['tie_coverage']:.3f} ({row['tie_mc_se']:.3f}), MLE-centred "
              f"{row['tie_mle_coverage']:.3f}; few ties {row['few_tie_coverage']:.3f} "
              f"({row['few_tie_mc_se']:.3f}); {row['tie_share']:.0%} ties, {row['reps']} reps, "
              f"{row['seconds']:.0f} s, load {row['load1']:.1f}", flush=True)
        write_atomic(pd.DataFrame(rows), args.out)
        write_atomic(_rounded(pd.concat(boards, ignore_index=True)), args.boards_out)
    table = add_reference(pd.DataFrame(rows), pd.concat(boards, ignore_index=True))
    write_atomic(table, args.out)
    write_atomic(render(table), args.out.with_suffix(".md"))
    print(table.to_string(index=False, float_format="{:.3f}".format))
    return table


if __name__ == "__main__":
    main()
