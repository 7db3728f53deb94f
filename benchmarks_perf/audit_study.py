#!/usr/bin/env python
"""Judge audit study: do the judge-effect intervals cover, and does adjusting fix the ratings?

A seeded simulation study of :func:`ratings.fit` with ``adjust=`` (the joint fit behind
:func:`ratings.audit.judge_audit`). Boards are drawn with :func:`ratings.datasets.random_matches`
(uniform
pairs and tasks, judges in turn, A/B order random) and :func:`ratings.datasets.simulate_verdicts`
with planted position bias (beta_k) and family self-preference (gamma_k), about 10 % ties, and
verdicts sharing a (model, task) submission made dependent by the Gaussian copula
(``task_corr``), which leaves every marginal probability at its model value, so the planted
parameters are the truth.

The board: 12 models with strengths evenly spaced on [-1.2, 1.2] (about +-500 Elo), families
red (m00, m04, m08), blue (m01, m05, m09), green (m02, m06); three judges J1 (red), J2 (blue),
J3 (green).

Sections
--------
``effects``: coverage of the 95 % intervals of every judge effect, pooled per effect type and
per parameter, with Monte Carlo standard errors; the flag rate (p < 0.05) of absent effects
(should be 0.05) and of planted ones (power). Planted: beta = (0.3, 0, -0.2), gamma = (0.5, 0, 0)
for (J1, J2, J3). Cells: ``bt-100`` (3,000 verdicts on 100 tasks, copula rho 0.3), ``bt-30``
(1,000 verdicts on 30 tasks, few clusters), ``crowd-100`` (``bt-100`` with judge qualities
eta = 0.9 / 0.8 / 0.95, fitted by Crowd-BT).

``adjust``: J1 favours its family with gamma = 0.7 (122 Elo), nobody else is biased, and J1
gives a third of the verdicts. The inflation of the red family is the mean over its models of
(fitted - true Elo) minus the same mean over the other models; reported for the plain fit and
``adjust="self-preference"``, with the share removed and the coverage of the red models'
intervals (difference to the anchor m11).

``unbiased``: no judge effects. Per model, |adjusted - plain Elo| / plain SE for
``adjust="position,self-preference"``: mean, 99th percentile, maximum, and the share above 1.

``order``: A/B order not randomised (the lower-numbered model always in slot A) and every judge
favours slot A by beta = 0.3: mean error of the ratings (fitted - true Elo, by model rank
half) for the plain fit and ``adjust="position"``. With randomised order the same bias only
adds noise (``effects``/``unbiased``).

``timing``: wall time of ``ratings.fit`` plain and with both adjustments, and of
``ratings.audit`` (n_boot = 200), on 100,000 and 1,000,000 verdicts (50 models, 1,000 tasks,
three judges), medians of 3 calls, with the 1-minute load average (``load1``).

``--sections`` reruns some sections; the others keep the rows already recorded.

Output: ``benchmarks_perf/results/audit_study.csv`` (one row per section, cell and quantity)
and ``benchmarks_perf/results/audit_study.md`` (the tables), written atomically.

Usage::

    python benchmarks_perf/audit_study.py              # default (about 10 min on 2 cores)
    python benchmarks_perf/audit_study.py --quick      # smoke run
    python benchmarks_perf/audit_study.py --sections effects --boards 2000
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import ratings

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run from anywhere: import this checkout's packages

from ratings.datasets.simulate import random_matches, simulate_verdicts  # noqa: E402
from ratings.io import write_atomic  # noqa: E402
from ratings.result import ELO_SCALE  # noqa: E402

RESULTS = HERE / "results"
MODELS = [f"m{i:02d}" for i in range(12)]
STRENGTHS = pd.Series(np.linspace(-1.2, 1.2, 12), index=MODELS)
FAMILY_OF = {"red": ["m00", "m04", "m08"], "blue": ["m01", "m05", "m09"], "green": ["m02", "m06"]}
FAMILIES = {m: f for f, ms in FAMILY_OF.items() for m in ms} | {"J1": "red", "J2": "blue",
                                                                "J3": "green"}  # fmt: skip
JUDGES = ["J1", "J2", "J3"]
ANCHOR = "m11"
BETA = {"J1": 0.3, "J2": 0.0, "J3": -0.2}
GAMMA = {"J1": 0.5, "J2": 0.0, "J3": 0.0}
CELLS = {
    "bt-100": {"n": 3000, "tasks": 100, "eta": None},
    "bt-30": {"n": 1000, "tasks": 30, "eta": None},
    "crowd-100": {"n": 3000, "tasks": 100, "eta": {"J1": 0.9, "J2": 0.8, "J3": 0.95}},
}


def board(seed: int, n: int, tasks: int, *, beta=None, gamma=None, eta=None,
          ordered: bool = False) -> pd.DataFrame:  # fmt: skip
    matches = random_matches(MODELS, n, n_tasks=tasks, judges=JUDGES, seed=seed)
    if ordered:  # the lower-numbered model always in slot A
        a, b = matches["model_a"].to_numpy(), matches["model_b"].to_numpy()
        swap = a > b
        matches.loc[swap, "model_a"], matches.loc[swap, "model_b"] = b[swap], a[swap]
    return simulate_verdicts(matches, STRENGTHS, judge_eta=eta, tie_rate=0.12, task_corr=0.3,
                             position_bias=beta, self_preference=gamma, families=FAMILIES,
                             seed=seed + 1)  # fmt: skip


def mcse(p: float, n: int) -> float:
    return float(np.sqrt(p * (1 - p) / n)) if n else float("nan")


def section_effects(boards: int, seed: int) -> list[dict]:
    rows = []
    for cell, spec in CELLS.items():
        model = "bt" if spec["eta"] is None else "crowd-bt"
        hits, flags, failed = {}, {}, 0
        t0 = time.perf_counter()
        for r in range(boards):
            log = board(seed + 1000 * r, spec["n"], spec["tasks"], beta=BETA, gamma=GAMMA,
                        eta=spec["eta"])  # fmt: skip
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fit = ratings.fit(
                        log,
                        model=model,
                        adjust=ratings.Adjust("position,self-preference", families=FAMILIES),
                        anchor=ANCHOR,
                    )
            except (ratings.NonIdentifiableError, ValueError):
                failed += 1
                continue
            fx = fit.judge_effects.table.set_index("judge")
            for j in JUDGES:
                for name, prefix, truth in (("position_bias", "position", BETA[j]),
                                            ("self_preference", "self", GAMMA[j])):  # fmt: skip
                    lo, hi = fx.loc[j, f"{prefix}_lower"], fx.loc[j, f"{prefix}_upper"]
                    key = (name, j, truth)
                    hits.setdefault(key, []).append(bool(lo <= truth <= hi))
                    flags.setdefault(key, []).append(bool(fx.loc[j, f"{prefix}_p"] < 0.05))
        secs = time.perf_counter() - t0
        for name in ("position_bias", "self_preference"):
            pooled = [h for (e, _, _), v in hits.items() if e == name for h in v]
            c = float(np.mean(pooled))
            rows.append({"section": "effects", "cell": cell, "quantity": f"coverage {name}",
                         "parameter": "all judges", "truth": np.nan, "value": c,
                         "mcse": mcse(c, len(pooled) // 3), "boards": boards - failed,
                         "failed": failed, "seconds": secs})  # fmt: skip
        for (name, j, truth), v in hits.items():
            c, f = float(np.mean(v)), float(np.mean(flags[(name, j, truth)]))
            for what, val in (("coverage", c), ("flag rate" if truth == 0 else "power", f)):
                rows.append({"section": "effects", "cell": cell, "quantity": f"{what} {name}",
                             "parameter": j, "truth": truth, "value": val,
                             "mcse": mcse(val, len(v)), "boards": len(v), "failed": failed,
                             "seconds": secs})  # fmt: skip
        absent = [f for (name, j, truth), v in flags.items() if truth == 0 for f in v]
        fr = float(np.mean(absent))
        rows.append({"section": "effects", "cell": cell, "quantity": "flag rate absent effects",
                     "parameter": "pooled", "truth": 0.0, "value": fr,
                     "mcse": mcse(fr, len(absent) // 3), "boards": boards - failed,
                     "failed": failed, "seconds": secs})  # fmt: skip
        print(f"effects {cell}: {boards} boards in {secs:.0f} s", file=sys.stderr)
    return rows


def _inflation(elo: pd.Series, true: pd.Series) -> float:
    err = elo - true
    red = err.index.isin(FAMILY_OF["red"])
    return float(err[red].mean() - err[~red].mean())


def section_adjust(boards: int, seed: int) -> list[dict]:
    true = 1000 + ELO_SCALE * (STRENGTHS - STRENGTHS[ANCHOR])
    out = {"plain": [], "adjusted": []}
    cover = {"plain": [], "adjusted": []}
    gamma = {"J1": 0.7, "J2": 0.0, "J3": 0.0}
    t0 = time.perf_counter()
    for r in range(boards):
        log = board(seed + 1000 * r, 3000, 100, gamma=gamma)
        fits = {
            "plain": ratings.fit(log, anchor=f"{ANCHOR}=1000"),
            "adjusted": ratings.fit(
                log,
                anchor=f"{ANCHOR}=1000",
                adjust=ratings.Adjust("self-preference", families=FAMILIES),
            ),
        }
        for k, f in fits.items():
            out[k].append(_inflation(f.elo, true))
            ci = f.conf_int().loc[FAMILY_OF["red"]]
            t = true[FAMILY_OF["red"]]
            cover[k] += ((ci["lower"] <= t) & (t <= ci["upper"])).tolist()
    secs = time.perf_counter() - t0
    rows = []
    for k in ("plain", "adjusted"):
        v = np.array(out[k])
        rows.append({"section": "adjust", "cell": "gamma_J1=0.7", "quantity": "red inflation (Elo)",
                     "parameter": k, "truth": 0.0, "value": float(v.mean()),
                     "mcse": float(v.std(ddof=1) / np.sqrt(v.size)), "boards": boards,
                     "failed": 0, "seconds": secs})  # fmt: skip
        c = float(np.mean(cover[k]))
        rows.append({"section": "adjust", "cell": "gamma_J1=0.7",
                     "quantity": "coverage red models vs anchor", "parameter": k, "truth": np.nan,
                     "value": c, "mcse": mcse(c, boards), "boards": boards, "failed": 0,
                     "seconds": secs})  # fmt: skip
    plain, adj = np.array(out["plain"]), np.array(out["adjusted"])
    rows.append({"section": "adjust", "cell": "gamma_J1=0.7", "quantity": "share removed",
                 "parameter": "1 - adjusted / plain", "truth": np.nan,
                 "value": float(1 - adj.mean() / plain.mean()), "mcse": np.nan, "boards": boards,
                 "failed": 0, "seconds": secs})  # fmt: skip
    print(f"adjust: {boards} boards in {secs:.0f} s", file=sys.stderr)
    return rows


def section_unbiased(boards: int, seed: int) -> list[dict]:
    ratios = []
    t0 = time.perf_counter()
    for r in range(boards):
        log = board(seed + 1000 * r, 3000, 100)
        plain = ratings.fit(log, anchor=f"{ANCHOR}=1000")
        adj = ratings.fit(
            log,
            anchor=f"{ANCHOR}=1000",
            adjust=ratings.Adjust("position,self-preference", families=FAMILIES),
        )
        keep = plain.models != ANCHOR
        ratios += list(np.abs(adj.elo - plain.elo)[keep] / plain.se[keep])
    secs = time.perf_counter() - t0
    v = np.array(ratios)
    rows = [
        {
            "section": "unbiased",
            "cell": "no effects",
            "quantity": q,
            "parameter": "all models",
            "truth": np.nan,
            "value": val,
            "mcse": np.nan,
            "boards": boards,
            "failed": 0,
            "seconds": secs,
        }
        for q, val in (
            ("mean |adjusted - plain| / SE", float(v.mean())),
            ("p99 |adjusted - plain| / SE", float(np.quantile(v, 0.99))),
            ("max |adjusted - plain| / SE", float(v.max())),
            ("share |adjusted - plain| > SE", float((v > 1).mean())),
        )
    ]
    print(f"unbiased: {boards} boards in {secs:.0f} s", file=sys.stderr)
    return rows


def section_order(boards: int, seed: int) -> list[dict]:
    true = 1000 + ELO_SCALE * (STRENGTHS - STRENGTHS[ANCHOR])
    errs = {"plain": [], "adjusted": []}
    t0 = time.perf_counter()
    beta = dict.fromkeys(JUDGES, 0.3)
    for r in range(boards):
        log = board(seed + 1000 * r, 3000, 100, beta=beta, ordered=True)
        fits = {
            "plain": ratings.fit(log, anchor=f"{ANCHOR}=1000"),
            "adjusted": ratings.fit(log, anchor=f"{ANCHOR}=1000", adjust="position"),
        }
        for k, f in fits.items():
            errs[k].append((f.elo - true).to_numpy())
    secs = time.perf_counter() - t0
    rows = []
    for k, e in errs.items():
        e = np.array(e)  # boards x models
        slope = float(np.polyfit(np.arange(12), e.mean(axis=0), 1)[0])
        rows.append({"section": "order", "cell": "A/B not randomised, beta=0.3",
                     "quantity": "mean |error| (Elo)", "parameter": k, "truth": 0.0,
                     "value": float(np.abs(e.mean(axis=0)).mean()), "mcse": np.nan,
                     "boards": boards, "failed": 0, "seconds": secs})  # fmt: skip
        rows.append({"section": "order", "cell": "A/B not randomised, beta=0.3",
                     "quantity": "error slope per model index (Elo)", "parameter": k,
                     "truth": 0.0, "value": slope, "mcse": np.nan, "boards": boards,
                     "failed": 0, "seconds": secs})  # fmt: skip
    print(f"order: {boards} boards in {secs:.0f} s", file=sys.stderr)
    return rows


def section_timing(sizes: list[int], seed: int) -> list[dict]:
    rows = []
    models = [f"m{i:02d}" for i in range(50)]
    s = pd.Series(np.linspace(-1.5, 1.5, 50), index=models)
    fam = {m: ("red" if i % 5 == 0 else "other") for i, m in enumerate(models)} | {"J1": "red"}
    for n in sizes:
        matches = random_matches(models, n, n_tasks=1000, judges=JUDGES, seed=seed)
        log = ratings.read_verdicts(simulate_verdicts(matches, s, tie_rate=0.12, seed=seed,
                                                      position_bias={"J1": 0.2}))  # fmt: skip
        calls = {
            "fit": (ratings.fit, {}),
            "fit adjust=position,self-preference": (
                ratings.fit,
                {"adjust": "position,self-preference", "families": fam},
            ),
            "audit (n_boot=200)": (ratings.audit.judge_audit, {"families": fam, "n_boot": 200}),
        }
        for name, (call, kwargs) in calls.items():
            call(log, **kwargs)
            times = []
            for _ in range(3):
                t0 = time.perf_counter()
                call(log, **kwargs)
                times.append(time.perf_counter() - t0)
            rows.append({"section": "timing", "cell": f"{n:,} verdicts, 50 models, 1000 tasks",
                         "quantity": "seconds (median of 3)", "parameter": name, "truth": np.nan,
                         "value": float(np.median(times)), "mcse": np.nan, "boards": 1,
                         "failed": 0, "seconds": float(np.sum(times)),
                         "load1": os.getloadavg()[0]})  # fmt: skip
            print(f"timing {n}: {name} {np.median(times):.3f} s", file=sys.stderr)
    return rows


def markdown(table: pd.DataFrame) -> str:
    parts = ["# Judge audit study", "", "Produced by `benchmarks_perf/audit_study.py` "
             "(see its docstring for the design).", ""]  # fmt: skip
    for section, frame in table.groupby("section", sort=False):
        parts += [f"## {section}", ""]
        cols = ["cell", "quantity", "parameter", "truth", "value", "mcse", "boards", "failed"]
        if section == "timing" and "load1" in frame.columns:
            cols.append("load1")  # 1-minute load average when the row was timed
        body = frame[cols].to_string(index=False, float_format="{:.4g}".format)
        parts += ["```", body, "```", ""]
    return "\n".join(parts)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--boards", type=int, default=2000, help="boards per cell (effects)")
    p.add_argument(
        "--adjust-boards",
        type=int,
        default=500,
        help="boards per cell of the adjust, unbiased and order sections",
    )
    p.add_argument(
        "--sections", nargs="+", default=["effects", "adjust", "unbiased", "order", "timing"]
    )
    p.add_argument("--seed", type=int, default=20261201)
    p.add_argument("--quick", action="store_true", help="a smoke run (few boards, 100k timing)")
    args = p.parse_args(argv)
    boards, adj = (30, 20) if args.quick else (args.boards, args.adjust_boards)
    rows = []
    if "effects" in args.sections:
        rows += section_effects(boards, args.seed)
    if "adjust" in args.sections:
        rows += section_adjust(adj, args.seed + 7)
    if "unbiased" in args.sections:
        rows += section_unbiased(adj, args.seed + 11)
    if "order" in args.sections:
        rows += section_order(adj, args.seed + 13)
    if "timing" in args.sections:
        rows += section_timing([100_000] if args.quick else [100_000, 1_000_000], args.seed)
    table = pd.DataFrame(rows)
    RESULTS.mkdir(exist_ok=True)
    suffix = "_quick" if args.quick else ""
    previous = RESULTS / f"audit_study{suffix}.csv"
    if previous.exists():  # sections not rerun keep their recorded rows
        old = pd.read_csv(previous, keep_default_na=False, na_values=[""])
        table = pd.concat([old[~old["section"].isin(args.sections)], table], ignore_index=True)
        order = ["effects", "adjust", "unbiased", "order", "timing"]
        table = table.sort_values("section", key=lambda s: s.map(order.index), kind="stable")
    write_atomic(table.to_csv(index=False), RESULTS / f"audit_study{suffix}.csv")
    write_atomic(markdown(table), RESULTS / f"audit_study{suffix}.md")
    print(markdown(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
