#!/usr/bin/env python
"""Coverage of the default Crowd-BT intervals at the edges (run by ``validate_coverage.py
--crowd``).

Every board is simulated from known strengths and judge qualities and fitted end to end with
``ratings.fit(frame, model="crowd-bt", anchor=...)``, the default a user gets: the plain
maximum-likelihood estimate where it is regular and the prior would move it by at most half a
standard error, else the posterior mode under the weak priors of :mod:`ratings.models.crowd.prior`
(:func:`ratings.models.crowd.likelihood.fit_crowd_default`), and task-clustered CR2 intervals with
Satterthwaite
degrees of freedom per contrast. Coverage of the 95% intervals is counted for every model
against the anchor and for every pairwise difference, per cell, overall and on the boards whose
plain maximum-likelihood fit (``prior=None``) puts some judge's eta on its bound (or has no
estimate at all, its eta running to 1): the boundary boards.

Design (the issue's): 30 models with log-strengths evenly spaced on [-1.7, 1.7] (Elo range 590),
anchor ``m15``; uniformly random pairs on random tasks; one effect per (task, model) submission
with sd 0.3 added to the log-odds (task dependence); judges in turn with quality eta (.95 / .88
/ .80 unless the cell says otherwise): a decisive verdict names the truly better submission with
probability eta; a verdict is a tie with probability ``tau`` (10%) whatever the pair. 2,000
verdicts on 100 tasks, or 12,000 on 300 (``c30k``: 30,000 on 400, where the default is mostly
the plain estimate; run on its own, ``--cells c30k``). The ``narrow`` cell spaces strengths on
[-1.0, 1.0] (Elo range 350), where eta is much harder to tell from the spread.

Truth: the pseudo-true parameters of the fitted model, i.e. the plain Crowd-BT fit of the
population's expected verdict counts (equal weight per pair and judge, Gauss-Hermite over the
submission effects), which the estimates converge to. Ties do not enter it.

Judge-file cells: a past log of the same design (independent draw) of the same size, or 5x, is
fitted by default and saved with :func:`ratings.scopes.judge_files.save_judge_quality`; the current
log is
fitted with ``judge_quality=FILE`` (the default carries eta's covariance into the intervals;
``eta_known=True``, reported alongside, does not). There the boundary boards are those whose
past log's plain fit is on the bound.

Beside coverage, per cell: the share of the judges' eta intervals (judges table) that hold the
true eta ("eta covered"; for judge-file cells, those of the past log's fit), and the scale of the
estimates, the mean slope of the estimated log-strengths on the true ones (1: the truth's
spread; above 1: the ratings are spread too wide).

``--oracle`` adds, on the boundary boards of the cells with estimated etas, the fit with the
bound judges' eta fixed at its true value (``judge_quality={judge: eta}``, ``eta_known=True``;
the other judges estimated as by default): how the intervals cover once the one thing a
boundary board cannot tell, where that judge's eta lies below 1, is given.

Output: ``benchmarks_perf/results/coverage_crowd.csv`` and ``.md`` (``ratings.io.write_atomic``).

Usage::

    python benchmarks_perf/validate_coverage.py --crowd              # all cells (~10 min)
    python benchmarks_perf/coverage_crowd.py --boards 40 --cells c2k,c2k-one   # a quick look
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit

import ratings
from ratings.data.comparisons import Comparisons
from ratings.io import write_atomic
from ratings.models.crowd.likelihood import fit_crowd_bt
from ratings.scopes.judge_files import save_judge_quality

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
LEVEL = 0.95
TASK_SD = 0.3
M, ANCHOR = 30, 15
JUDGES3 = (0.95, 0.88, 0.80)


@dataclass(frozen=True)
class Cell:
    n: int
    n_tasks: int
    etas: tuple = JUDGES3
    tie: float = 0.10
    spread: float = 1.7
    past: int = 0  # verdicts of the past log whose judge file is reused (0: eta estimated)
    note: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def strengths(self) -> np.ndarray:
        return np.linspace(-self.spread, self.spread, M)

    @property
    def judges(self) -> list[str]:
        return [f"j{k}" for k in range(len(self.etas))]


def _size(n: int) -> tuple[int, int]:
    return (n, 100) if n <= 2000 else (n, 300)


CELLS: dict[str, Cell] = {
    "c2k": Cell(*_size(2000), note="3 judges"),
    "c12k": Cell(*_size(12000), note="3 judges"),
    "c2k-file1x": Cell(*_size(2000), past=2000, note="eta from a 2k judge file"),
    "c2k-file5x": Cell(*_size(2000), past=10000, note="eta from a 10k judge file"),
    "c12k-file1x": Cell(*_size(12000), past=12000, note="eta from a 12k judge file"),
    "c12k-file5x": Cell(*_size(12000), past=60000, note="eta from a 60k judge file"),
    "c2k-ties0": Cell(*_size(2000), tie=0.0, note="no ties"),
    "c2k-ties30": Cell(*_size(2000), tie=0.3, note="30% ties"),
    "c12k-ties0": Cell(*_size(12000), tie=0.0, note="no ties"),
    "c12k-ties30": Cell(*_size(12000), tie=0.3, note="30% ties"),
    "c2k-coin": Cell(*_size(2000), etas=(0.55, 0.55, 0.55), note="all judges at 0.55"),
    "c12k-coin": Cell(*_size(12000), etas=(0.55, 0.55, 0.55), note="all judges at 0.55"),
    "c2k-one": Cell(*_size(2000), etas=(0.88,), note="one judge (0.88)"),
    "c12k-one": Cell(*_size(12000), etas=(0.88,), note="one judge (0.88)"),
    "c12k-narrow": Cell(*_size(12000), spread=1.0, note="narrow board (Elo range 350)"),
    "c30k": Cell(30000, 400, note="3 judges"),
}


def simulate(cell: Cell, n: int, rng: np.random.Generator) -> pd.DataFrame:
    """One log of ``n`` verdicts (strings) from the cell's design."""
    s, k = cell.strengths, len(cell.etas)
    a = rng.integers(0, M, n)
    b = (a + rng.integers(1, M, n)) % M
    task = rng.integers(0, cell.n_tasks, n)
    u = rng.normal(0.0, TASK_SD, (cell.n_tasks, M))
    judge = np.arange(n) % k
    eta = np.asarray(cell.etas)[judge]
    d = s[a] - s[b] + u[task, a] - u[task, b]
    p = eta * expit(d) + (1.0 - eta) * expit(-d)
    tie = rng.random(n) < cell.tie
    code = np.where(tie, 2, np.where(rng.random(n) < p, 0, 1))
    names = np.array([f"m{i:02d}" for i in range(M)], dtype=object)
    return pd.DataFrame({
        "model_a": names[a], "model_b": names[b],
        "winner": np.array(["A", "B", "tie"], dtype=object)[code],
        "task_id": task, "judge": np.asarray(cell.judges, dtype=object)[judge],
    })  # fmt: skip


def pseudo_truth(cell: Cell) -> tuple[np.ndarray, np.ndarray]:
    """(log-strengths anchored at ``m15``, etas) the fit converges to under the design."""
    x, w = np.polynomial.hermite_e.hermegauss(60)
    w = w / w.sum()
    s = cell.strengths
    ii, jj = np.triu_indices(M, 1)
    pbar = expit(s[ii, None] - s[jj, None] + np.sqrt(2.0) * TASK_SD * x[None, :]) @ w
    k = len(cell.etas)
    eta = np.repeat(np.asarray(cell.etas), ii.size)
    p = eta * np.tile(pbar, k) + (1.0 - eta) * (1.0 - np.tile(pbar, k))
    big = 1e6
    data = Comparisons(
        pd.Index([f"m{i:02d}" for i in range(M)], dtype=object),
        pd.Index(cell.judges, dtype=object), None, None, np.tile(ii, k), np.tile(jj, k),
        np.repeat(np.arange(k), ii.size), np.zeros(k * ii.size), big * p, big * (1.0 - p),
        np.zeros(k * ii.size),
    )  # fmt: skip
    fit = fit_crowd_bt(data, ref=ANCHOR, prior=None, tol=1e-12)
    return fit.theta, fit.eta


def _bound_judges(frame: pd.DataFrame, judges: list[str]) -> list[str]:
    """The judges whose eta the plain maximum-likelihood fit puts on a bound (all of them
    where it has no estimate)."""
    try:
        r = ratings.fit(frame, model=ratings.CrowdBT(prior=None), anchor=f"m{ANCHOR:02d}")
    except ratings.NonIdentifiableError:
        return list(judges)
    status = r.judges["status"].reindex(judges)
    return [j for j in judges if status[j] == "boundary"]


def _plain_on_bound(frame: pd.DataFrame) -> bool:
    """Does the plain maximum-likelihood fit put some eta on a bound (or have no estimate)?"""
    return bool(_bound_judges(frame, sorted(set(frame["judge"]))))


def _covered(r: ratings.Ratings, truth: np.ndarray) -> tuple[float, float]:
    """Share of anchor contrasts and of pairs whose reported interval holds the truth."""
    est, cov = r.strength, r.cov
    others = np.delete(np.arange(M), ANCHOR)
    se = np.sqrt(np.diag(cov))
    q = stats.t.ppf(0.5 + LEVEL / 2, r.model_df[others])  # each contrast's df (inf: normal)
    anchor = np.abs(est - truth)[others] <= q * se[others]
    ii, jj = np.triu_indices(M, 1)
    se_p = np.sqrt(cov[ii, ii] + cov[jj, jj] - 2.0 * cov[ii, jj])
    q = stats.t.ppf(0.5 + LEVEL / 2, r.pair_df()[ii, jj])
    pairs = np.abs((est[ii] - est[jj]) - (truth[ii] - truth[jj])) <= q * se_p
    return float(anchor.mean()), float(pairs.mean())


def one_board(name: str, seed: int, truth: np.ndarray, eta_true: np.ndarray,
              oracle: bool = False) -> dict:  # fmt: skip
    """Simulate, fit by default and score one board. ``oracle``: on boundary boards also fit
    with the bound judges' eta fixed at the truth (known), the others estimated as usual."""
    cell = CELLS[name]
    rng = np.random.default_rng(seed)
    frame = simulate(cell, cell.n, rng)
    out: dict = {"ties": float((frame["winner"] == "tie").mean())}
    anchor = f"m{ANCHOR:02d}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # JudgeWarning: counted through the results instead
        try:
            if cell.past:
                past = simulate(cell, cell.past, rng)
                out["boundary"] = _plain_on_bound(past)
                fitted = ratings.fit(past, model="crowd-bt", anchor=anchor)
                with tempfile.TemporaryDirectory() as tmp:
                    path = Path(tmp) / "judges.json"
                    save_judge_quality(fitted, path)
                    r = ratings.fit(
                        frame, model=ratings.CrowdBT(judge_quality=str(path)), anchor=anchor
                    )
                    known = ratings.fit(
                        frame,
                        model=ratings.CrowdBT(judge_quality=str(path), eta_known=True),
                        anchor=anchor,
                    )
                out["known"] = _covered(known, truth)
                jt = fitted.judges
            else:
                bound = _bound_judges(frame, cell.judges)
                out["boundary"] = bool(bound)
                r = ratings.fit(frame, model="crowd-bt", anchor=anchor)
                jt = r.judges
                if oracle and bound:
                    at_truth = {
                        j: float(e)
                        for j, e in zip(cell.judges, eta_true, strict=True)
                        if j in bound
                    }
                    fixed = ratings.fit(
                        frame,
                        model=ratings.CrowdBT(
                            eta_known=True, judge_quality=at_truth, fit_new_judges=True
                        ),
                        anchor=anchor,
                    )
                    out["oracle"] = _covered(fixed, truth)
        except Exception as err:  # an estimate must exist on every board: count any failure
            return out | {"failed": f"{type(err).__name__}: {str(err)[:80]}"}
    out["default"] = _covered(r, truth)
    out["slope"] = float(np.polyfit(truth, r.strength, 1)[0])  # the scale: 1 = the truth's
    out["open"] = bool(r.crowd.open_intervals)
    est = jt.loc[cell.judges]
    out["eta"] = est["eta"].to_numpy()
    out["eta_cover"] = float(((est["lower"] <= eta_true) & (eta_true <= est["upper"])).mean())
    return out


def run_chunk(args: tuple) -> list[dict]:
    name, seeds, truth, eta_true, oracle = args
    return [one_board(name, s, truth, eta_true, oracle) for s in seeds]


def summarise(name: str, boards: list[dict], eta_true: np.ndarray) -> list[dict]:
    cell = CELLS[name]
    ok = [b for b in boards if "failed" not in b]
    rows = []
    subsets = {"all": ok, "boundary": [b for b in ok if b["boundary"]],
               "interior": [b for b in ok if not b["boundary"]]}  # fmt: skip
    for subset, group in subsets.items():
        for kind in ("default", "known", "oracle"):
            have = [b for b in group if kind in b]
            if not have:
                continue
            cov = np.array([b[kind] for b in have])  # (boards, 2): anchor, pairs
            se = cov.std(axis=0, ddof=1) / np.sqrt(len(have)) if len(have) > 1 else [np.nan] * 2
            rows.append({
                "cell": name, "note": cell.note, "n_verdicts": cell.n, "n_tasks": cell.n_tasks,
                "etas": "/".join(f"{e:g}" for e in cell.etas), "tie": cell.tie,
                "spread": cell.spread, "past": cell.past, "subset": subset, "interval": kind,
                "boards": len(have), "anchor": cov[:, 0].mean(), "anchor_mcse": se[0],
                "pairs": cov[:, 1].mean(), "pairs_mcse": se[1],
                "boundary_share": float(np.mean([b["boundary"] for b in ok])) if ok else np.nan,
                "open_share": float(np.mean([b["open"] for b in have])),
                "failed": len(boards) - len(ok),
                "failures": "; ".join(sorted({b["failed"] for b in boards if "failed" in b})),
                "eta_true": "/".join(f"{e:.3f}" for e in eta_true),
                "eta_mean": "/".join(f"{e:.3f}" for e in np.mean([b["eta"] for b in have], 0)),
                "eta_cover": float(np.mean([b["eta_cover"] for b in have])),
                "slope": float(np.mean([b["slope"] for b in have])),
                "ties": float(np.mean([b["ties"] for b in have])),
            })  # fmt: skip
    return rows


def coverage_text(value: float, mcse: float) -> str:
    """A coverage as the tables show it: its Monte-Carlo SE in units of 0.001 in brackets (when
    known), bold outside [0.94, 0.96]."""
    text = f"{value:.3f} ({1000 * mcse:.0f})" if np.isfinite(mcse) else f"{value:.3f}"
    return text if 0.94 <= value <= 0.96 else f"**{text}**"


def write_tables(table: pd.DataFrame, markdown_text: str, out: Path) -> None:
    """``table`` to ``out`` (CSV) and ``markdown_text`` beside it (``.md``), each atomically."""
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(table.to_csv(index=False, float_format="%.6g"), out)
    write_atomic(markdown_text, out.with_suffix(".md"))
    print(f"wrote {out} and {out.with_suffix('.md')}")


def markdown(table: pd.DataFrame, meta: str) -> str:
    """The results as Markdown: one line per cell and subset."""

    def fmt(row, col):
        return coverage_text(row[col], row[col + "_mcse"])

    lines = [meta, "", "| cell | design | boards | anchor | pairs | eta-known anchor | "
             "eta-known pairs | bound eta at truth: anchor / pairs | open | plain eta on bound | "
             "eta mean (truth) | eta covered | scale |",
             "|---|---|---:|---:|---:|---:|---:|---|---:|---:|---|---:|---:|"]  # fmt: skip
    for (cell, subset), g in table.groupby(["cell", "subset"], sort=False):
        d = g[g["interval"] == "default"].iloc[0]
        k = g[g["interval"] == "known"]
        kk = ("", "") if k.empty else (fmt(k.iloc[0], "anchor"), fmt(k.iloc[0], "pairs"))
        o = g[g["interval"] == "oracle"]
        oo = "" if o.empty else f"{fmt(o.iloc[0], 'anchor')} / {fmt(o.iloc[0], 'pairs')}"
        label = f"`{cell}`" if subset == "all" else f"`{cell}` {subset} boards"
        design = (f"{d['note']}; {d['n_verdicts']:,} verdicts, {d['n_tasks']} tasks, "
                  f"{d['tie']:.0%} ties")  # fmt: skip
        fails = f", {d['failed']} failed" if d["failed"] else ""
        lines.append(
            f"| {label} | {design if subset == 'all' else ''} | {d['boards']}{fails} | "
            f"{fmt(d, 'anchor')} | {fmt(d, 'pairs')} | {kk[0]} | {kk[1]} | {oo} | "
            f"{d['open_share']:.0%} | {d['boundary_share']:.0%} | "
            f"{d['eta_mean']} ({d['eta_true']}) | {d['eta_cover']:.3f} | {d['slope']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--boards", type=int, default=400, help="boards per 2k cell (400)")
    p.add_argument("--boards-large", type=int, default=300, help="boards per 12k cell (300)")
    p.add_argument("--cells", default=",".join(CELLS), help=f"among {list(CELLS)}")
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    p.add_argument("--seed", type=int, default=20261214)
    p.add_argument(
        "--seeds-from",
        type=int,
        default=None,
        help="board seeds N, N+1, ... in every cell (instead of --seed's per-cell "
        "blocks): reproduces a check on chosen seeds",
    )
    p.add_argument(
        "--oracle",
        action="store_true",
        help="on boundary boards also fit with the bound judges' eta fixed at the "
        "truth (the 'bound eta at truth' columns; not for judge-file cells)",
    )
    p.add_argument("--out", type=Path, default=RESULTS / "coverage_crowd.csv")
    args = p.parse_args(argv)
    cells = [c.strip() for c in args.cells.split(",") if c.strip()]
    unknown = [c for c in cells if c not in CELLS]
    if unknown:
        p.error(f"unknown cell(s) {unknown}; choose from {list(CELLS)}")
    t0 = time.perf_counter()
    rows: list[dict] = []
    pool = ProcessPoolExecutor(args.jobs) if args.jobs > 1 else None
    try:
        for k, name in enumerate(cells):
            cell = CELLS[name]
            truth, eta_true = pseudo_truth(cell)
            n = args.boards if cell.n <= 2000 else args.boards_large
            base = (args.seed + 1_000_003 * list(CELLS).index(name) if args.seeds_from is None
                    else args.seeds_from)  # fmt: skip
            seeds = [base + b for b in range(n)]
            size = max(1, -(-n // (8 * max(args.jobs, 1))))
            chunks = [(name, seeds[i:i + size], truth, eta_true, args.oracle)
                      for i in range(0, n, size)]  # fmt: skip
            mapped = pool.map(run_chunk, chunks) if pool else map(run_chunk, chunks)
            boards = [b for part in mapped for b in part]
            rows += summarise(name, boards, eta_true)
            print(
                f"[{time.perf_counter() - t0:7.1f}s] {k + 1}/{len(cells)} {name}: "
                f"{sum('failed' not in b for b in boards)}/{n} boards",
                flush=True,
            )
    finally:
        if pool is not None:
            pool.shutdown()
    table = pd.DataFrame(rows)
    seconds = time.perf_counter() - t0
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    seeds = (f"Seed {args.seed}" if args.seeds_from is None
             else f"Board seeds from {args.seeds_from}")  # fmt: skip
    meta = (f"{seeds}; {args.boards} boards per 2k cell and {args.boards_large} per 12k "
            f"cell; {seconds / 60:.1f} min with {args.jobs} jobs (load average at the end "
            f"{load}); ratings {ratings.__version__}.")  # fmt: skip
    print(table[["cell", "subset", "interval", "boards", "anchor", "pairs", "open_share"]]
          .to_string(float_format="%.3f"))  # fmt: skip
    write_tables(table, markdown(table, meta), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
