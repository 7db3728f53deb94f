#!/usr/bin/env python
"""Time the Crowd-BT fit against the Bradley-Terry fit, and against crowd-kit's NoisyBT.

One simulated verdict log (strings: ``model_a``, ``model_b``, ``winner`` in {"A", "B", "tie"},
``task_id``, ``judge``), three judges with eta 0.95 / 0.80 / 0.65 (judge k reports the true order
with probability eta_k), ~10 % ties and per-(model, task) effects. Default 1M verdicts, 200
models, 1000 tasks.

* ``ratings.fit(df, model="crowd-bt")`` (fit + intervals, from the DataFrame of strings) as a
  ratio to ``ratings.fit(df)`` (Bradley-Terry) in the same run, task-clustered and per-verdict;
* the same on pre-aggregated :class:`~ratings.data.comparisons.Comparisons` (no parsing or
aggregation),
  with intervals and estimation only (``fit_crowd_bt`` / ``fit_bt``);
* crowd-kit ``NoisyBradleyTerry`` (the NoisyBT of the brief) on the first 10k and 100k verdicts
  (ties dropped: it takes no ties), in a child process under a time budget, extrapolated
  linearly to the full size; ours on the same subsets for comparison;
* accuracy against the true strengths: correlation and mean absolute error after centring; and
  the fitted judge qualities (NoisyBT's skill maps to eta = (1 + skill) / 2 when its bias is 1/2).

Each timing is the median of ``--repeats`` calls after one warm-up call. Results: a table on
stdout and ``benchmarks_perf/results/bench_crowd.csv`` (written atomically: temp file + rename).

Usage::

    python benchmarks_perf/bench_crowd.py                   # 1M verdicts, 200 models
    python benchmarks_perf/bench_crowd.py --n 200000 --noisy-sizes 10000
"""

from __future__ import annotations

import argparse
import csv
import gc
import io
import multiprocessing as mp
import os
import statistics
import time
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
JUDGE_ETA = {"judge-a": 0.95, "judge-b": 0.80, "judge-c": 0.65}
COLUMNS = [
    "section",
    "size",
    "method",
    "seconds",
    "x_bt",
    "min_seconds",
    "x_bt_min",
    "repeats",
    "corr_truth",
    "mae_truth",
    "eta_hat",
    "notes",
]


# ----------------------------------------------------------------------------------------------
# Data
# ----------------------------------------------------------------------------------------------


def simulate(
    n: int, n_models: int, n_tasks: int, seed: int = 0, tie_rate: float = 0.12, task_sd: float = 0.3
) -> tuple[pd.DataFrame, pd.Series]:
    """A verdict log of strings and the true centred log-strengths.

    d = s_a - s_b + u_{a,t} - u_{b,t}; a verdict is a tie with probability ``tie_rate`` whatever
    the pair (Crowd-BT leaves ties out), otherwise A wins with probability
    p = eta_k sigma(d) + (1 - eta_k) sigma(-d).
    """
    rng = np.random.default_rng(seed)
    s = rng.normal(0.0, 1.0, n_models)
    s -= s.mean()
    names = np.array([f"model-{k:03d}" for k in range(n_models)], dtype=object)
    tasks = np.array([f"task-{k:05d}" for k in range(n_tasks)], dtype=object)
    judges = np.array(list(JUDGE_ETA), dtype=object)
    eta = np.array(list(JUDGE_ETA.values()))
    a = rng.integers(0, n_models, n)
    b = (a + rng.integers(1, n_models, n)) % n_models
    t = rng.integers(0, n_tasks, n)
    k = rng.integers(0, judges.size, n)
    u = rng.normal(0.0, task_sd, (n_models, n_tasks))
    d = s[a] - s[b] + u[a, t] - u[b, t]
    p = eta[k] * expit(d) + (1.0 - eta[k]) * expit(-d)
    x = rng.random(n)
    w = np.where(rng.random(n) < tie_rate, 2, np.where(x < p, 0, 1))
    frame = pd.DataFrame(
        {
            "model_a": names[a],
            "model_b": names[b],
            "winner": np.array(["A", "B", "tie"], dtype=object)[w],
            "task_id": tasks[t],
            "judge": judges[k],
        }
    )
    return frame, pd.Series(s, index=names, name="truth")


def size_label(n: int) -> str:
    for unit, div in (("M", 1_000_000), ("k", 1_000)):
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    return str(n)


def accuracy(est, truth: pd.Series) -> tuple[float, float]:
    """(correlation, mean |error|) of centred log-strengths against the centred truth."""
    est = pd.Series(est, dtype=np.float64).reindex(truth.index)
    if est.isna().any():
        return float("nan"), float("nan")
    e = est.to_numpy() - est.mean()
    s = truth.to_numpy() - truth.mean()
    return float(np.corrcoef(e, s)[0, 1]), float(np.mean(np.abs(e - s)))


def eta_text(eta: dict[str, float] | pd.Series | None) -> str:
    if eta is None:
        return ""
    return " ".join(f"{float(eta[j]):.3f}" for j in JUDGE_ETA)


# ----------------------------------------------------------------------------------------------
# Timing and the results table
# ----------------------------------------------------------------------------------------------


def measure(fn: Callable[[], object], repeats: int) -> tuple[float, list[float], object]:
    """One warm-up call, then ``repeats`` timed calls; (median seconds, times, warm-up result)."""
    gc.collect()
    result = fn()
    times = []
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times, result


class Table:
    def __init__(self) -> None:
        self.rows: list[dict] = []

    def add(
        self,
        section: str,
        size: str,
        method: str,
        seconds: float | None,
        *,
        times=(),
        bt: float | None = None,
        bt_min: float | None = None,
        acc=(None, None),
        eta=None,
        notes: str = "",
    ) -> None:
        """``bt`` / ``bt_min``: the median / fastest Bradley-Terry time the ratios refer to."""
        corr, mae = acc
        low = min(times) if len(times) else None
        self.rows.append(
            {
                "section": section,
                "size": size,
                "method": method,
                "seconds": None if seconds is None else round(seconds, 4),
                "x_bt": None if seconds is None or not bt else round(seconds / bt, 2),
                "min_seconds": None if low is None else round(low, 4),
                "x_bt_min": None if low is None or not bt_min else round(low / bt_min, 2),
                "repeats": len(times),
                "corr_truth": None if corr is None else round(corr, 5),
                "mae_truth": None if mae is None else round(mae, 4),
                "eta_hat": eta_text(eta),
                "notes": notes,
            }
        )
        sec = "   skipped" if seconds is None else f"{seconds:9.3f} s"
        spread = f"  ({min(times):.3f}-{max(times):.3f})" if len(times) > 1 else ""
        print(f"  {section:<10} {size:>5} {method:<46} {sec}{spread}  {notes}", flush=True)


def print_table(rows: list[dict]) -> None:
    heads = [
        "section",
        "size",
        "method",
        "seconds",
        "x_bt",
        "min_seconds",
        "x_bt_min",
        "corr_truth",
        "mae_truth",
        "eta_hat",
    ]
    cells = [[("" if r[h] is None else str(r[h])) for h in heads] for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(heads)]
    print("\n" + "  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for c in cells:
        print("  ".join(v.ljust(w) for v, w in zip(c, widths, strict=True)))


# ----------------------------------------------------------------------------------------------
# crowd-kit NoisyBT, in a child process with a time budget
# ----------------------------------------------------------------------------------------------


def noisy_frame(df: pd.DataFrame) -> pd.DataFrame:
    """crowd-kit's input: worker, left, right, label (the winner's name); ties dropped."""
    d = df[df["winner"] != "tie"]
    return pd.DataFrame(
        {
            "worker": d["judge"].to_numpy(),
            "left": d["model_a"].to_numpy(),
            "right": d["model_b"].to_numpy(),
            "label": np.where(d["winner"] == "A", d["model_a"], d["model_b"]),
        }
    )


def _noisy_child(frame: pd.DataFrame, n_iter: int, queue) -> None:
    try:
        from crowdkit.aggregation import NoisyBradleyTerry
        from crowdkit.aggregation.pairwise import noisy_bt

        seen: dict = {}
        minimize = noisy_bt.minimize

        def recording(*args, **kwargs):  # keep scipy's OptimizeResult for the report
            seen["res"] = minimize(*args, **kwargs)
            return seen["res"]

        noisy_bt.minimize = recording
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            agg = NoisyBradleyTerry(n_iter=n_iter).fit(frame)
        seconds = time.perf_counter() - t0
        res = seen.get("res")
        score = agg.scores_.clip(1e-12, 1 - 1e-12)
        queue.put(
            {
                "seconds": seconds,
                "strength": np.log(score / (1 - score)),
                "skill": agg.skills_,
                "bias": agg.biases_,
                "message": "" if res is None else f"{res.message} (nit {res.nit}, nfev {res.nfev})",
                "warnings": sorted({str(w.message)[:80] for w in caught}),
            }
        )
    except BaseException as err:  # report any failure to the parent
        queue.put(
            {"error": f"{type(err).__name__}: {err}", "traceback": traceback.format_exc(limit=3)}
        )


def run_noisy(frame: pd.DataFrame, n_iter: int, timeout: float) -> dict:
    """NoisyBT in a forked child; ``{"timeout": s}`` when it runs out of time."""
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_noisy_child, args=(frame, n_iter, queue), daemon=True)
    proc.start()
    t0 = time.perf_counter()
    out = None
    while time.perf_counter() - t0 < timeout:
        try:
            out = queue.get(timeout=1.0)
            break
        except Exception:  # queue.Empty
            if not proc.is_alive() and queue.empty():
                out = {"error": f"child exited with code {proc.exitcode}"}
                break
    if out is None:
        proc.terminate()  # our own child, by its handle
        proc.join(5)
        return {"timeout": timeout}
    proc.join(5)
    return out


# ----------------------------------------------------------------------------------------------
# Main
# ----------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="verdicts (default 1M)")
    ap.add_argument("--models", type=int, default=200)
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--noisy-sizes",
        default="10000,100000",
        help="comma-separated subset sizes for crowd-kit NoisyBT ('' to skip)",
    )
    ap.add_argument(
        "--noisy-budget",
        type=float,
        default=300.0,
        help="seconds allowed per NoisyBT run (child process is stopped after)",
    )
    ap.add_argument("--noisy-iter", type=int, default=100, help="NoisyBT n_iter (its default)")
    ap.add_argument(
        "--blas-threads",
        type=int,
        default=None,
        help="limit BLAS threads (threadpoolctl); 1 avoids oversubscription when "
        "the machine is shared (default: library default)",
    )
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    if args.blas_threads is None:
        return run(args)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=args.blas_threads, user_api="blas"):
        return run(args)


def run(args: argparse.Namespace) -> int:

    import ratings
    from ratings.api.fitting import load_comparisons
    from ratings.models.bt import fit_bt
    from ratings.models.crowd.likelihood import fit_crowd_bt

    getattr(ratings, "warmup", lambda: None)()  # compile or load the numba kernels
    load0 = " ".join(f"{x:.1f}" for x in os.getloadavg())
    n, size = args.n, size_label(args.n)
    print(
        f"Simulating {n:,} verdicts, {args.models} models, {args.tasks} tasks, judges "
        f"{JUDGE_ETA} ...",
        flush=True,
    )
    df, truth = simulate(n, args.models, args.tasks, seed=args.seed)
    print(f"  ties: {np.mean(df['winner'] == 'tie'):.1%}", flush=True)
    tab = Table()
    reps = args.repeats

    # --- fit + intervals from the DataFrame of strings --------------------------------------
    for label, cluster in (("clustered", "auto"), ("hc0", None)):
        section = f"df-{label}"
        bt_s, bt_t, bt_r = measure(lambda c=cluster: ratings.fit(df, cluster=c), reps)
        tab.add(
            section,
            size,
            "ratings.fit(df, model='bt')",
            bt_s,
            times=bt_t,
            bt=bt_s,
            bt_min=min(bt_t, default=None),
            acc=accuracy(pd.Series(bt_r.strength, bt_r.models), truth),
            notes=f"{bt_r.n_iter} Newton iterations",
        )
        cr_s, cr_t, cr_r = measure(
            lambda c=cluster: ratings.fit(df, model="crowd-bt", cluster=c), reps
        )
        tab.add(
            section,
            size,
            "ratings.fit(df, model='crowd-bt')",
            cr_s,
            times=cr_t,
            bt=bt_s,
            bt_min=min(bt_t, default=None),
            acc=accuracy(pd.Series(cr_r.strength, cr_r.models), truth),
            eta=cr_r.judges["eta"],
            notes=f"{cr_r.n_iter} Newton iterations; eta se " + eta_text(cr_r.judges["se"]),
        )

    # --- pre-aggregated Comparisons ----------------------------------------------------------
    for label, cluster in (("clustered", "task_id"), ("hc0", None)):
        section = f"agg-{label}"
        comp = load_comparisons(df, cluster=cluster)[0]
        note = f"{comp.n_rows:,} aggregated rows"
        bt_s, bt_t, _ = measure(lambda c=comp: ratings.fit(c), reps)
        tab.add(
            section,
            size,
            "ratings.fit(comparisons, model='bt')",
            bt_s,
            times=bt_t,
            bt=bt_s,
            bt_min=min(bt_t, default=None),
            notes=note,
        )
        cr_s, cr_t, _ = measure(lambda c=comp: ratings.fit(c, model="crowd-bt"), reps)
        tab.add(
            section,
            size,
            "ratings.fit(comparisons, model='crowd-bt')",
            cr_s,
            times=cr_t,
            bt=bt_s,
            bt_min=min(bt_t, default=None),
            notes=note,
        )
        bo_s, bo_t, _ = measure(lambda c=comp: fit_bt(c), reps)
        tab.add(
            section,
            size,
            "fit_bt(comparisons) [estimate only]",
            bo_s,
            times=bo_t,
            bt=bo_s,
            bt_min=min(bo_t),
            notes=note,
        )
        co_s, co_t, _ = measure(lambda c=comp: fit_crowd_bt(c), reps)
        tab.add(
            section,
            size,
            "fit_crowd_bt(comparisons) [estimate only]",
            co_s,
            times=co_t,
            bt=bo_s,
            bt_min=min(bo_t),
            notes=note,
        )

    # --- crowd-kit NoisyBT on subsets ---------------------------------------------------------
    sizes = [int(x) for x in args.noisy_sizes.split(",") if x.strip()]
    for sub_n in sizes:
        sub = df.iloc[:sub_n]
        lab = size_label(sub_n)
        section = "noisybt"
        nt = sub[sub["winner"] != "tie"]
        try:
            for what, frame in (("with ties", sub), ("ties dropped", nt)):
                bt_s, bt_t, bt_r = measure(lambda f=frame: ratings.fit(f, cluster=None), reps)
                bt_acc = accuracy(pd.Series(bt_r.strength, bt_r.models), truth)
                tab.add(
                    section,
                    lab,
                    f"ratings.fit(model='bt'), {what}",
                    bt_s,
                    times=bt_t,
                    bt=bt_s,
                    bt_min=min(bt_t, default=None),
                    acc=bt_acc,
                )
                cr_s, cr_t, cr_r = measure(
                    lambda f=frame: ratings.fit(f, model="crowd-bt", cluster=None), reps
                )
                tab.add(
                    section,
                    lab,
                    f"ratings.fit(model='crowd-bt'), {what}",
                    cr_s,
                    times=cr_t,
                    bt=bt_s,
                    bt_min=min(bt_t, default=None),
                    eta=cr_r.judges["eta"],
                    acc=accuracy(pd.Series(cr_r.strength, cr_r.models), truth),
                )
        except ratings.NonIdentifiableError as err:
            tab.add(section, lab, "ratings.fit on this subset", None, notes=str(err)[:120])
            bt_s, bt_t = None, []
        print(
            f"  running crowd-kit NoisyBradleyTerry on {len(nt):,} verdicts (budget "
            f"{args.noisy_budget:.0f} s) ...",
            flush=True,
        )
        out = run_noisy(noisy_frame(sub), args.noisy_iter, args.noisy_budget)
        if "timeout" in out:
            tab.add(
                section,
                lab,
                "crowd-kit NoisyBradleyTerry",
                None,
                notes=f"stopped after {out['timeout']:.0f} s budget",
            )
            break
        if "error" in out:
            tab.add(
                section,
                lab,
                "crowd-kit NoisyBradleyTerry",
                None,
                notes="error: " + out["error"][:150],
            )
            continue
        skill, bias = out["skill"], out["bias"]
        eta = (1.0 + skill) / 2.0  # when its bias is 1/2 (no position preference)
        notes = (
            f"single run, ties dropped; L-BFGS-B: {out['message']}; bias "
            + " ".join(f"{float(bias[j]):.3f}" for j in JUDGE_ETA)
            + (f"; warnings: {out['warnings']}" if out["warnings"] else "")
        )
        tab.add(
            section,
            lab,
            "crowd-kit NoisyBradleyTerry",
            out["seconds"],
            times=[out["seconds"]],
            bt=bt_s,
            bt_min=min(bt_t, default=None),
            acc=accuracy(out["strength"], truth),
            eta=eta,
            notes=notes,
        )
        extrapolated = out["seconds"] * n / sub_n
        tab.add(
            section,
            size,
            f"NoisyBT extrapolated from {lab} (linear)",
            extrapolated,
            notes="per-verdict Python loop in its gradient: cost ~ N per evaluation",
        )

    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    tab.add(
        "meta",
        size,
        f"load average at end (cpus {os.cpu_count()})",
        None,
        notes=f"{load} (start {load0}); BLAS threads: {args.blas_threads or 'default'}; "
        "timings on a shared machine are noisy",
    )
    rows = tab.rows
    print_table(rows)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path = args.out / "bench_crowd.csv"
    from ratings.io import write_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(buf.getvalue(), path)
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
