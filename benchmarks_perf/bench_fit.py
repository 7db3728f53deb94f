#!/usr/bin/env python
"""Time ``ratings.fit`` against the cost of touching the data once and against peer libraries.

One run, one simulated verdict log (strings: ``model_a``, ``model_b``, ``winner`` in
{"A", "B", "tie"} with ~10 % ties, ``task_id``), every method side by side:

* floor      ``pd.factorize`` of the four columns (the cost of touching the data once);
* ours       ``ratings.fit(df, cluster=None)`` (HC0 sandwich; the reference of "x ours"),
             ``ratings.fit(df)`` (task-clustered sandwich), and a breakdown
             (``read_verdicts``, ``aggregate``, ``fit(comparisons)``, internals);
* evalica    ``evalica.bradley_terry`` (Rust MM), with and without the winner -> enum conversion;
* choix      dense win counts (ties half a win each way) + ``choix.ilsr_pairwise_dense``;
* arena-rank ``PairDataset.from_pandas`` + ``BradleyTerry.fit`` (+ sandwich CIs);
* statsmodels GLM Binomial on the dense +-1 design, at a small size only (100k verdicts,
  50 models), next to ours on that same small log.

Each timing is the median of ``--repeats`` calls after one warm-up call (numba kernels and
JAX functions compiled before timing). The cold first call of ``ratings.fit`` is measured in
fresh subprocesses. Results: a table on stdout and
``benchmarks_perf/results/bench_fit_<size>.csv`` (+ ``.meta.json``), written atomically.

Usage::

    pip install '.[bench]'
    python benchmarks_perf/bench_fit.py            # 1M verdicts, 200 models, 1000 tasks
    python benchmarks_perf/bench_fit.py --large    # 10M verdicts, 200 models
    python benchmarks_perf/bench_fit.py --profile  # also print a cProfile of ours
    python benchmarks_perf/bench_fit.py --headline # fresh CLI vs floor; 1000 models vs choix
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import gc
import importlib.metadata
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

WINNER_Y = {"A": 1.0, "B": 0.0, "tie": 0.5}  # outcome for model_a; a tie is y = 1/2
COLUMNS = ["section", "size", "method", "seconds", "x_ours", "x_floor", "min_seconds",
           "cpu_seconds", "max_abs_diff_s", "max_rel_diff_se", "repeats", "load1",
           "notes"]  # fmt: skip


# ----------------------------------------------------------------------------------------------
# Data
# ----------------------------------------------------------------------------------------------


def simulate(n: int, n_models: int, n_tasks: int, seed: int = 0, tie_rate: float = 0.14,
             task_sd: float = 0.3) -> pd.DataFrame:  # fmt: skip
    """A verdict log of strings, ~10 % ties, task-level dependence (per (model, task) effect).

    P(a beats b) = sigma(s_a - s_b + u_{a,t} - u_{b,t}); P(tie) = 4 tie_rate p (1 - p).
    """
    rng = np.random.default_rng(seed)
    s = rng.normal(0.0, 1.0, n_models)
    names = np.array([f"model-{k:03d}" for k in range(n_models)], dtype=object)
    tasks = np.array([f"task-{k:05d}" for k in range(n_tasks)], dtype=object)
    a = rng.integers(0, n_models, n)
    b = (a + rng.integers(1, n_models, n)) % n_models
    t = rng.integers(0, n_tasks, n)
    u = rng.normal(0.0, task_sd, (n_models, n_tasks))
    d = s[a] - s[b] + u[a, t] - u[b, t]
    p = 1.0 / (1.0 + np.exp(-d))
    p_tie = 4.0 * tie_rate * p * (1.0 - p)
    x = rng.random(n)
    w = np.where(x < p - p_tie / 2, 0, np.where(x < p + p_tie / 2, 2, 1))
    del d, p, p_tie, x, u
    return pd.DataFrame({
        "model_a": names[a],
        "model_b": names[b],
        "winner": np.array(["A", "B", "tie"], dtype=object)[w],
        "task_id": tasks[t],
    })  # fmt: skip


def size_label(n: int) -> str:
    for unit, div in (("M", 1_000_000), ("k", 1_000)):
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    return str(n)


# ----------------------------------------------------------------------------------------------
# Timing
# ----------------------------------------------------------------------------------------------


class Times(list):
    """Wall-clock seconds of the timed calls, with their process CPU seconds in ``.cpu``."""

    cpu: list[float]


def measure(fn: Callable[[], object], repeats: int, budget: float) -> tuple[float, Times, object]:
    """One warm-up call, then up to ``repeats`` timed calls (fewer if ``budget`` s is used up).

    Returns (median wall seconds, the timed calls' seconds, the warm-up call's result).
    """
    gc.collect()
    t0 = time.perf_counter()
    result = fn()
    warm = time.perf_counter() - t0
    times = Times()
    times.cpu = []
    spent = warm
    for _ in range(repeats):
        if times and spent + statistics.median(times) > budget:
            break
        gc.collect()
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        times.cpu.append(time.process_time() - c0)
        times.append(dt)
        spent += dt
    return statistics.median(times), times, result


class Table:
    def __init__(self, size: str):
        self.size = size
        self.rows: list[dict] = []
        self.ref: dict[str, float] = {}  # section -> ours reference seconds
        self.floor: dict[str, float] = {}

    def add(self, section: str, method: str, seconds: float | None, *, times=(), diff=None,
            se_diff=None, notes: str = "", size: str | None = None) -> None:  # fmt: skip
        self.rows.append({
            "section": section, "size": size or self.size, "method": method, "seconds": seconds,
            "diff": diff, "se_diff": se_diff, "repeats": len(times), "notes": notes,
            "min": min(times) if len(times) else None,
            "cpu": statistics.median(times.cpu) if getattr(times, "cpu", None) else None,
            "load1": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
        })  # fmt: skip
        if seconds is not None and times:
            spread = f"{min(times):.3f}-{max(times):.3f}s" if len(times) > 1 else ""
            print(f"  {method:<58} {seconds:9.3f} s  {spread}", flush=True)
        else:
            print(f"  {method:<58}   skipped  {notes}", flush=True)

    def finish(self) -> list[dict]:
        out = []
        for r in self.rows:
            ref, floor = self.ref.get(r["section"]), self.floor.get(r["section"])
            sec = r["seconds"]
            out.append({
                "section": r["section"], "size": r["size"], "method": r["method"],
                "seconds": None if sec is None else round(sec, 4),
                "x_ours": None if sec is None or not ref else round(sec / ref, 3),
                "x_floor": None if sec is None or not floor else round(sec / floor, 2),
                "min_seconds": None if r["min"] is None else round(r["min"], 4),
                "cpu_seconds": None if r["cpu"] is None else round(r["cpu"], 4),
                "max_abs_diff_s": None if r["diff"] is None else float(f"{r['diff']:.3g}"),
                "max_rel_diff_se": None if r["se_diff"] is None else float(f"{r['se_diff']:.3g}"),
                "repeats": r["repeats"], "load1": r["load1"], "notes": r["notes"],
            })  # fmt: skip
        return out


def centred_diff(est: pd.Series | None, ours: pd.Series) -> float | None:
    """Max |centred log-strength difference| over the models of ``ours``."""
    if est is None:
        return None
    est = pd.Series(est, dtype=np.float64)
    est = est.reindex(ours.index)
    if est.isna().any():
        return float("nan")
    e = est.to_numpy() - est.mean()
    o = ours.to_numpy() - ours.mean()
    return float(np.max(np.abs(e - o)))


def rel_se_diff(se: pd.Series, ref: pd.Series) -> float:
    se = pd.Series(se, dtype=np.float64).reindex(ref.index)
    ok = ref.to_numpy() > 0
    return float(np.max(np.abs(se.to_numpy()[ok] / ref.to_numpy()[ok] - 1.0)))


# ----------------------------------------------------------------------------------------------
# Methods (each returns log-strengths labelled by model, or a tuple with standard errors)
# ----------------------------------------------------------------------------------------------


def floor(df: pd.DataFrame) -> None:
    for c in ("model_a", "model_b", "winner", "task_id"):
        pd.factorize(df[c])


def model_codes(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, pd.Index]:
    """Peer glue: integer model codes over sorted labels (factorize each column once)."""
    ca, ua = pd.factorize(df["model_a"])
    cb, ub = pd.factorize(df["model_b"])
    labels = pd.Index(sorted(set(ua.tolist()) | set(ub.tolist())))
    return labels.get_indexer(ua)[ca], labels.get_indexer(ub)[cb], labels


def outcome_y(df: pd.DataFrame) -> np.ndarray:
    """Peer glue: y for model_a (1, 0, 1/2) via factorize + a lookup on the few uniques."""
    codes, uniq = pd.factorize(df["winner"])
    return np.array([WINNER_Y[u] for u in uniq])[codes]


def choix_counts(df: pd.DataFrame) -> tuple[np.ndarray, pd.Index]:
    """Dense counts C[i, j] = wins of i over j, a tie adding 1/2 each way."""
    a, b, labels = model_codes(df)
    y = outcome_y(df)
    m = len(labels)
    counts = np.bincount(a * m + b, y, m * m) + np.bincount(b * m + a, 1.0 - y, m * m)
    return counts.reshape(m, m), labels


def glm_design(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, pd.Index]:
    """Dense +-1 design without the first (reference) model's column, and y."""
    a, b, labels = model_codes(df)
    n, m = len(df), len(labels)
    x = np.zeros((n, m))
    rows = np.arange(n)
    x[rows, a] = 1.0
    x[rows, b] = -1.0
    return x[:, 1:], outcome_y(df), labels


# ----------------------------------------------------------------------------------------------
# Cold start (fresh subprocess)
# ----------------------------------------------------------------------------------------------


def _status_kib(field: str) -> int | None:
    """A ``VmRSS``/``VmHWM``-style field of /proc/self/status in KiB (Linux), else None."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak() -> bool:
    """Reset the peak resident set (VmHWM) to the current one (Linux >= 4.0)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def cold_child(n: int, m: int, tasks: int, seed: int, memory: int = 0) -> None:
    df = simulate(n, m, tasks, seed)
    gc.collect()
    t0 = time.perf_counter()
    import ratings

    t1 = time.perf_counter()
    if memory:  # peak resident memory of one fit, kernels loaded first, no memory reused
        ratings.warmup()
        gc.collect()
        base, reset = _status_kib("VmRSS"), _reset_peak()
        ratings.fit(df)
        peak = _status_kib("VmHWM") if reset else None
        print(json.dumps({"frame_mib": df.memory_usage(deep=True).sum() / 2**20,
                          "peak_above_mib": None if peak is None or base is None
                          else (peak - base) / 1024}))  # fmt: skip
        return
    ratings.fit(df)
    t2 = time.perf_counter()
    ratings.fit(df)
    t3 = time.perf_counter()
    print(json.dumps({"import": t1 - t0, "first": t2 - t1, "second": t3 - t2}))


def run_cold(n: int, m: int, tasks: int, seed: int, fresh_cache: bool,
             memory: bool = False) -> dict | None:  # fmt: skip
    env = dict(os.environ)
    with contextlib.ExitStack() as stack:
        if fresh_cache:
            env["NUMBA_CACHE_DIR"] = stack.enter_context(tempfile.TemporaryDirectory())
        cmd = [sys.executable, str(Path(__file__).resolve()), "--cold-child",
               f"{n},{m},{tasks},{seed},{int(memory)}"]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if proc.returncode != 0:
        print(f"  cold run failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_cli(n: int, m: int, tasks: int, seed: int) -> list[tuple[str, float]]:
    """Wall seconds of ``ratings fit FILE.csv`` in fresh processes: the first with an empty
    numba cache (compiles), then two with the cache (what a user sees every later time)."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"verdicts_{size_label(n)}.csv"
        simulate(n, m, tasks, seed).to_csv(path, index=False)
        env = dict(os.environ, NUMBA_CACHE_DIR=str(Path(tmp) / "numba_cache"))
        for k, label in enumerate(("empty numba cache", "cached kernels", "cached kernels")):
            cmd = [sys.executable, "-m", "ratings.cli", "fit", str(path), "--out",
                   str(Path(tmp) / f"ratings_{k}.csv")]  # fmt: skip
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
            wall = time.perf_counter() - t0
            if proc.returncode != 0:
                print(f"  CLI run failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
                return out
            out.append((label, wall))
    return out


FLOOR_CHILD = """
import sys
import pandas as pd
df = pd.read_csv(sys.argv[1])
for c in ("model_a", "model_b", "winner", "task_id"):
    pd.factorize(df[c])
"""


def _child(cmd: list[str], env: dict) -> tuple[float, float]:
    """Wall and CPU (user + system, children included) seconds of one fresh process."""
    before = os.times()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=HERE.parent,
                          timeout=600)  # fmt: skip
    wall = time.perf_counter() - t0
    after = os.times()
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[:4]} failed:\n{proc.stderr[-2000:]}")
    return wall, (after.children_user - before.children_user
                  + after.children_system - before.children_system)  # fmt: skip


def run_cli_vs_floor(tab: Table, section: str, n: int, m: int, tasks: int, seed: int,
                     reps: int) -> None:  # fmt: skip
    """``ratings fit FILE.csv --out ...`` in fresh processes against the fresh-process floor (a
    new Python that imports pandas, reads the same CSV with ``pd.read_csv`` and factorizes the
    four columns), interleaved: floor, ours, floor, ours, ... (load changes hit both alike).
    The CLI runs from this checkout (``python -m ratings.cli``, working directory its root)
    with the on-disk numba cache and the package's bytecode written by one untimed run first."""
    walls: dict[str, Times] = {"floor": Times(), "ours": Times()}
    for t in walls.values():
        t.cpu = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"verdicts_{size_label(n)}.csv"
        simulate(n, m, tasks, seed).to_csv(path, index=False)
        out = Path(tmp) / "ratings.csv"
        cmds = {"floor": [sys.executable, "-c", FLOOR_CHILD, str(path)],
                "ours": [sys.executable, "-m", "ratings.cli", "fit", str(path), "--out",
                         str(out)]}  # fmt: skip
        # bytecode as an installed package has it (pip compiles it on install): the untimed run
        # writes it even where the environment says PYTHONDONTWRITEBYTECODE
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        _child(cmds["ours"], env)  # untimed: numba's cache (if a kernel is used) and the OS's
        _child(cmds["floor"], env)
        for _ in range(reps):
            for name, cmd in cmds.items():
                out.unlink(missing_ok=True)
                wall, cpu = _child(cmd, env)
                walls[name].append(wall)
                walls[name].cpu.append(cpu)
    floor = statistics.median(walls["floor"])
    tab.floor[section] = floor
    label = f"{size_label(n)}.csv, {m} models"
    tab.add(section, f"fresh-process floor: read_csv + factorize x4  [{label}]", floor,
            times=walls["floor"], notes="python -c: import pandas, pd.read_csv, 4 factorizes")
    ours = statistics.median(walls["ours"])
    tab.add(section, f"ours CLI: ratings fit FILE.csv --out ...  [{label}]", ours,
            times=walls["ours"],
            notes=f"fresh process; x floor per pair {_pair_ratios(walls)}")  # fmt: skip


def _pair_ratios(walls: dict[str, Times]) -> str:
    ratios = [o / f for o, f in zip(walls["ours"], walls["floor"], strict=True)]
    return "-".join(f"{r:.2f}" for r in (min(ratios), max(ratios)))


def run_large_vs_choix(tab: Table, section: str, n: int, m: int, tasks: int, seed: int,
                       reps: int, budget: float) -> None:  # fmt: skip
    """At ``m`` models: ours with full intervals (clustered and HC0) against choix's point
    estimate (dense counts + ILSR), in the same process and run, each median of ``reps``."""
    import ratings

    df = simulate(n, m, tasks, seed)
    ratings.warmup()
    for _ in range(2):
        ratings.fit(df)
    sec, times, _ = measure(lambda: floor(df), reps, budget)
    tab.floor[section] = sec
    tab.add(section, "floor: pd.factorize x4 columns", sec, times=times)
    sec, times, r_hc0 = measure(lambda: ratings.fit(df, cluster=None), reps, budget)
    tab.ref[section] = sec
    ours = pd.Series(r_hc0.strength, index=r_hc0.models)
    tab.add(section, "ours: fit(df, cluster=None)  [HC0; reference]", sec, times=times,
            diff=0.0, notes=f"newton iterations={r_hc0.n_iter}")  # fmt: skip
    sec, times, r_cl = measure(lambda: ratings.fit(df), reps, budget)
    tab.add(section, "ours: fit(df)  [task-clustered]", sec, times=times,
            diff=centred_diff(pd.Series(r_cl.strength, index=r_cl.models), ours),
            notes="CR2 covariance; degrees of freedom and rank intervals are lazy")  # fmt: skip
    peer_choix(tab, section, df, ours, reps, budget, lambda *_: True)
    lazy_outputs(tab, section, ratings, df, reps, budget)


def lazy_outputs(tab: Table, section: str, ratings, df: pd.DataFrame, reps: int,
                 budget: float) -> None:  # fmt: skip
    """What a table of a clustered fit adds after ``fit``: the degrees of freedom of each
    rating and of each pair (Satterthwaite, large-board path) and, once, the whole
    ``to_frame()`` (its rank intervals: step-down max-|t| over every ordered pair)."""

    def dfs():
        r = ratings.fit(df)
        return r.model_df, r.pair_df()

    sec, times, _ = measure(dfs, reps, budget)
    tab.add(section, "  ours: fit(df) + model_df + pair_df  [t degrees of freedom]", sec,
            times=times)  # fmt: skip
    r = ratings.fit(df)
    r.pair_df()
    t0 = time.perf_counter()
    r.to_frame()
    wall = time.perf_counter() - t0
    tab.add(section, "  ours: to_frame() of that fit  [adds the rank intervals]", wall,
            times=[wall], notes="one call; pair degrees of freedom already cached")  # fmt: skip


def headline(args: argparse.Namespace) -> int:
    """The two comparisons the README's table leads with, in one run: the fresh-process CLI
    against the fresh-process floor (``--n`` verdicts, ``--models``), and ours against choix at
    ``--large-models`` models."""
    n = args.n or 1_000_000
    env = environment()
    print(f"bench_fit --headline: {n:,} verdicts; load {env['loadavg_start']}")
    tab = Table(size_label(n))
    print(f"\n[startup] {size_label(n)} verdicts / {args.models} models, fresh processes")
    run_cli_vs_floor(tab, "startup", n, args.models, args.tasks, args.seed, args.repeats)
    print(f"\n[large] {size_label(n)} verdicts / {args.large_models} models")
    run_large_vs_choix(tab, "large", n, args.large_models, args.tasks, args.seed,
                       args.repeats, args.budget)  # fmt: skip
    env["loadavg_end"] = os.getloadavg() if hasattr(os, "getloadavg") else None
    rows = tab.finish()
    print_table(rows)
    write_results(rows, args.out, f"bench_fit_headline_{size_label(n)}",
                  {"n": n, "models": args.models, "large_models": args.large_models,
                   "tasks": args.tasks, "seed": args.seed, "repeats": args.repeats, **env})
    return 0


def write_results(rows: list[dict], out: Path, stem: str, meta: dict) -> None:
    """``out/<stem>.csv`` and ``out/<stem>.meta.json``, each written atomically."""
    from ratings.io import write_atomic

    out.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if r[k] is None else r[k]) for k in COLUMNS})
    write_atomic(buf.getvalue(), out / f"{stem}.csv")
    write_atomic(json.dumps(meta, indent=2) + "\n", out / f"{stem}.meta.json")
    print(f"\nwrote {out / stem}.csv (+ .meta.json)")


# ----------------------------------------------------------------------------------------------
# Environment
# ----------------------------------------------------------------------------------------------


def environment() -> dict:
    def version(dist: str) -> str:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"

    info = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "loadavg_start": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
        "NUMBA_NUM_THREADS": os.environ.get("NUMBA_NUM_THREADS"),
    }
    for dist in ("numpy", "pandas", "numba", "scipy", "statsmodels", "pyarrow", "evalica",
                 "choix", "arena-rank", "jax", "pairwise-ratings"):  # fmt: skip
        info[dist] = version(dist)
    try:
        from threadpoolctl import threadpool_info

        info["blas"] = [f"{d['internal_api']} {d.get('version')} threads={d['num_threads']} "
                        f"arch={d.get('architecture')}" for d in threadpool_info()]  # fmt: skip
    except Exception:  # optional diagnostics only
        pass
    return info


def wait_for_ratings(timeout: float = 900.0) -> None:
    """``import ratings``, retrying every 60 s while the package is mid-edit."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            import ratings

            if getattr(ratings, "__file__", None) is None or not hasattr(ratings, "fit"):
                raise ImportError(
                    f"`ratings` resolved to {ratings!r} (a stray directory named "
                    "'ratings' on sys.path, or the package is mid-edit)"
                )
            return
        except Exception as exc:
            if time.monotonic() > deadline:
                raise
            print(f"import ratings failed ({exc!r}); retrying in 60 s", file=sys.stderr)
            for name in [k for k in sys.modules if k == "ratings" or k.startswith("ratings.")]:
                del sys.modules[name]
            time.sleep(60)


# ----------------------------------------------------------------------------------------------
# The benchmark
# ----------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--large", action="store_true", help="10M verdicts instead of 1M")
    ap.add_argument("--n", type=int, help="verdicts (overrides --large)")
    ap.add_argument("--models", type=int, default=200)
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3, help="timed calls after the warm-up")
    ap.add_argument("--budget", type=float, default=300.0,
                    help="seconds per method: fewer repeats past it; with --large, peers "
                         "extrapolated beyond it from a 10%% probe are skipped")  # fmt: skip
    ap.add_argument("--small-n", type=int, default=100_000, help="statsmodels section size")
    ap.add_argument("--small-models", type=int, default=50)
    ap.add_argument("--skip", nargs="*", default=[],
                    choices=["evalica", "choix", "arena", "statsmodels", "cold",
                             "files"])  # fmt: skip
    ap.add_argument("--profile", action="store_true", help="print a cProfile of ours")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--headline", action="store_true",
                    help="only the fresh-process CLI vs the fresh-process floor (--n, --models) "
                         "and ours vs choix at --large-models models")
    ap.add_argument("--large-models", type=int, default=1000, help="models for --headline")
    ap.add_argument("--cold-child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.headline:
        wait_for_ratings()
        return headline(args)

    if args.cold_child:
        cold_child(*map(int, args.cold_child.split(",")))
        return 0

    n = args.n or (10_000_000 if args.large else 1_000_000)
    m, tasks, reps, budget = args.models, args.tasks, args.repeats, args.budget
    size = size_label(n)
    large = n > 2_000_000

    env = environment()
    print(f"bench_fit: {n:,} verdicts, {m} models, {tasks} tasks, seed {args.seed}; "
          f"median of {reps} after 1 warm-up")  # fmt: skip
    for k, v in env.items():
        print(f"  {k}: {v}")
    if env["loadavg_start"] and env["loadavg_start"][0] > 0.5:
        print(f"  NOTE: load average {env['loadavg_start'][0]:.2f} at start: other processes "
              "share the CPU and inflate timings.")  # fmt: skip

    wait_for_ratings()
    import ratings

    # numba kernels compiled (or loaded from the on-disk cache) before timing; every method also
    # gets an untimed warm-up call.
    if callable(getattr(ratings, "warmup", None)):
        ratings.warmup()

    t0 = time.perf_counter()
    df = simulate(n, m, tasks, args.seed)
    print(f"simulated in {time.perf_counter() - t0:.1f} s; dtypes "
          f"{dict(df.dtypes.astype(str))}; ties {(df['winner'] == 'tie').mean():.3f}; "
          f"memory {df.memory_usage(deep=True).sum() / 2**20:.0f} MiB")  # fmt: skip

    # Steady state before any timing: a few untimed fits load the kernels and let the memory
    # allocator settle (the first fits of a process page in fresh memory; a notebook refitting
    # runs in this state, a one-shot CLI run in the "cold" rows below).
    for _ in range(3):
        ratings.fit(df, cluster=None)
        ratings.fit(df)

    tab = Table(size)
    main_sec = "main"
    print(f"\n[{main_sec}] {size} verdicts / {m} models")

    # floor -----------------------------------------------------------------------------------
    sec, times, _ = measure(lambda: floor(df), reps, budget)
    tab.floor[main_sec] = sec
    tab.add(main_sec, "floor: pd.factorize x4 columns", sec, times=times)

    # ours ------------------------------------------------------------------------------------
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning in our own fit is a bug worth seeing
        sec, times, r_hc0 = measure(lambda: ratings.fit(df, cluster=None), reps, budget)
    tab.ref[main_sec] = sec
    ours = pd.Series(r_hc0.strength, index=r_hc0.models)
    ours_se = pd.Series(np.sqrt(np.diag(r_hc0.cov)), index=r_hc0.models)
    tab.add(main_sec, "ours: fit(df, cluster=None)  [HC0; reference]", sec, times=times,
            diff=0.0, notes=f"newton iterations={r_hc0.n_iter}")  # fmt: skip
    sec, times, r_cl = measure(lambda: ratings.fit(df), reps, budget)
    tab.add(main_sec, "ours: fit(df)  [task-clustered]", sec, times=times,
            diff=centred_diff(pd.Series(r_cl.strength, index=r_cl.models), ours),
            notes=f"{r_cl.n_clusters} clusters")  # fmt: skip
    sec, times, r_mod = measure(lambda: ratings.fit(df, cluster=None, ci="model"), reps, budget)
    tab.add(
        main_sec,
        "ours: fit(df, cluster=None, ci='model')",
        sec,
        times=times,
        diff=centred_diff(pd.Series(r_mod.strength, index=r_mod.models), ours),
    )

    # breakdown
    sec, times, log = measure(lambda: ratings.read_verdicts(df), reps, budget)
    tab.add(main_sec, "  ours: read_verdicts(df)  [validation]", sec, times=times)
    v = log.verdicts
    sec, times, comp_t = measure(lambda: ratings.aggregate(v, cluster="task_id"), reps, budget)
    tab.add(main_sec, "  ours: aggregate(verdicts, cluster='task_id')", sec, times=times,
            notes=f"R={comp_t.collapsed().n_rows:,} rows"
                  + (", verdict codes kept" if comp_t.keeps_codes else
                     f", {comp_t.n_rows:,} per-cluster rows"))  # fmt: skip
    sec, times, _ = measure(lambda: ratings.fit(comp_t), reps, budget)
    tab.add(main_sec, "  ours: fit(comparisons)  [clustered]", sec, times=times)
    sec, times, comp_n = measure(lambda: ratings.aggregate(v, cluster=None), reps, budget)
    tab.add(main_sec, "  ours: aggregate(verdicts, cluster=None)", sec, times=times,
            notes=f"R={comp_n.n_rows:,} rows")  # fmt: skip
    sec, times, _ = measure(lambda: ratings.fit(comp_n), reps, budget)
    tab.add(main_sec, "  ours: fit(comparisons)  [HC0]", sec, times=times)
    internals(tab, main_sec, comp_t, comp_n, reps, budget)
    blas_one(tab, main_sec, ratings, df, log, comp_t, comp_n, ours, reps, budget)
    log = v = comp_n = comp_t = None  # free the intermediates before the peers

    if "cold" not in args.skip:
        for fresh, label in ((False, "numba on-disk cache"), (True, "empty numba cache")):
            res = run_cold(n, m, tasks, args.seed, fresh)
            if res:
                tab.add(main_sec, f"ours cold: import ratings  [fresh process, {label}]",
                        res["import"], times=[res["import"]])  # fmt: skip
                tab.add(main_sec, f"ours cold: first fit(df)  [fresh process, {label}]",
                        res["first"], times=[res["first"]],
                        notes=f"second call {res['second']:.3f} s")  # fmt: skip
        mem = run_cold(n, m, tasks, args.seed, False, memory=True)
        if mem and mem.get("peak_above_mib") is not None:
            tab.add(main_sec, "ours memory: peak RSS of fit(df) above the frame  [MiB, not s]",
                    mem["peak_above_mib"], times=[mem["peak_above_mib"]],
                    notes=f"fresh process, kernels loaded first; {mem['frame_mib']:.0f} MiB "
                          "frame (deep)")  # fmt: skip
        for cli_n in (10_000, 100_000):
            for label, wall in run_cli(cli_n, m, tasks, args.seed):
                tab.add(main_sec, f"ours CLI: ratings fit {size_label(cli_n)}.csv  [{label}]",
                        wall, times=[wall], notes="wall, fresh process")  # fmt: skip

    if "files" not in args.skip:
        files_section(tab, ratings, df, reps, budget)

    if args.profile:
        profile_ours(ratings, df)

    # peers -----------------------------------------------------------------------------------
    def probe_ok(name: str, fn_at: Callable[[pd.DataFrame], object]) -> bool:
        """With a large log, time one call on a 10 % slice and skip if 10x that is too long."""
        if not large:
            return True
        part = df.iloc[: n // 10]
        t0 = time.perf_counter()
        fn_at(part)
        guess = 10 * (time.perf_counter() - t0)
        if guess > budget:
            tab.add(main_sec, f"{name}", None, notes=f"skipped: ~{guess:.0f} s per call "
                    f"extrapolated from a 10% probe > budget {budget:.0f} s")  # fmt: skip
            return False
        return True

    if "evalica" not in args.skip:
        peer_evalica(tab, main_sec, df, ours, reps, budget, probe_ok)
    if "choix" not in args.skip:
        peer_choix(tab, main_sec, df, ours, reps, budget, probe_ok)
    if "statsmodels" not in args.skip:
        small_statsmodels(tab, ratings, args, reps, budget)
    if "arena" not in args.skip:
        peer_arena(tab, main_sec, df, ours, ours_se, reps, budget, probe_ok)

    # report ----------------------------------------------------------------------------------
    env["loadavg_end"] = os.getloadavg() if hasattr(os, "getloadavg") else None
    rows = tab.finish()
    print_table(rows)
    summary(rows)
    stem = f"bench_fit_{size}" + ("" if m == 200 else f"_{m}models")
    write_results(rows, args.out, stem, {"n": n, "models": m, "tasks": tasks, "seed": args.seed,
                                         "repeats": reps, **env})  # fmt: skip
    return 0


def files_section(tab: Table, ratings, df: pd.DataFrame, reps: int, budget: float) -> None:
    """End to end from a file: ``ratings.fit(path)`` (reading, validation, fit, intervals)
    against reading the same file as text and factorizing its four columns (the file floor)."""
    readers = {
        "csv": (lambda p: df.to_csv(p, index=False),
                lambda p: pd.read_csv(p, engine="pyarrow", dtype=str)),
        "parquet": (lambda p: df.to_parquet(p, index=False), pd.read_parquet),
    }  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        for fmt, (write, read) in readers.items():
            path = Path(tmp) / f"verdicts.{fmt}"
            write(path)
            section = fmt
            print(f"\n[{section}] the same log as a {fmt} file "
                  f"({path.stat().st_size / 2**20:.0f} MiB)")  # fmt: skip
            sec, times, _ = measure(lambda: floor(read(path)), reps, budget)  # noqa: B023
            tab.floor[section] = sec
            tab.add(section, f"file floor: read {fmt} as text + pd.factorize x4", sec, times=times)
            sec, times, _ = measure(lambda: read(path), reps, budget)  # noqa: B023
            tab.add(section, f"  read {fmt} as text alone", sec, times=times)
            sec, times, _ = measure(lambda: ratings.fit(path, cluster=None), reps,  # noqa: B023
                                    budget)  # fmt: skip
            tab.ref[section] = sec
            tab.add(section, f"ours: fit('verdicts.{fmt}', cluster=None)  [HC0]", sec,
                    times=times)  # fmt: skip
            sec, times, _ = measure(lambda: ratings.fit(path), reps, budget)  # noqa: B023
            tab.add(section, f"ours: fit('verdicts.{fmt}')  [task-clustered]", sec, times=times)
            path.unlink()


def blas_one(tab, main_sec, ratings, df, log, comp_t, comp_n, ours, reps, budget) -> None:
    """Diagnostic: ours (and choix, the other BLAS user) with OpenBLAS limited to one thread.

    The default runs are left as they are; this section shows how much of ours is the
    multi-threaded BLAS on tiny (M x M) matrices, which is erratic on a loaded 2-core machine.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    sec_name = "blas1"
    tab.floor[sec_name] = tab.floor[main_sec]
    print(f"\n[{sec_name}] diagnostic: the same calls inside threadpoolctl.threadpool_limits(1)")
    with threadpool_limits(limits=1):
        s, t, _ = measure(lambda: ratings.fit(df, cluster=None), reps, budget)
        tab.ref[sec_name] = s
        tab.add(sec_name, "ours: fit(df, cluster=None)  [HC0; BLAS 1 thread]", s, times=t)
        s, t, _ = measure(lambda: ratings.fit(df), reps, budget)
        tab.add(sec_name, "ours: fit(df)  [clustered; BLAS 1 thread]", s, times=t)
        s, t, _ = measure(lambda: ratings.fit(comp_n), reps, budget)
        tab.add(sec_name, "  ours: fit(comparisons)  [HC0; BLAS 1 thread]", s, times=t)
        s, t, _ = measure(lambda: ratings.fit(comp_t), reps, budget)
        tab.add(sec_name, "  ours: fit(comparisons)  [clustered; BLAS 1 thread]", s, times=t)
        try:
            import choix
        except ImportError:
            return
        counts, labels = choix_counts(df)
        s, t, est = measure(lambda: choix.ilsr_pairwise_dense(counts), reps, budget)
        tab.add(sec_name, "  choix: ilsr_pairwise_dense alone  [BLAS 1 thread]", s, times=t,
                diff=centred_diff(pd.Series(est, index=labels), ours))  # fmt: skip


def internals(tab: Table, section: str, comp, comp_pairs, reps: int, budget: float) -> None:
    """Time the stages inside fit(comparisons) (private API: each stage is skipped if it moved)."""
    import ratings.bt as bt
    import ratings.graph as graph
    import ratings.uncertainty as unc

    def stage(label: str, fn: Callable[[], object], note: Callable[[object], str] | None = None):
        try:
            sec, times, res = measure(fn, reps, budget)
        except Exception as exc:  # internals are private and change
            tab.add(section, f"    internal: {label}", None, notes=f"skipped: {exc!r}"[:120])
            return None
        tab.add(section, f"    internal: {label}", sec, times=times,
                notes=note(res) if note else "")  # fmt: skip
        return res

    k = bt.kernels("numba")
    rows = comp.collapsed()  # aggregate() built these: one row per (judge, i, j)
    stage("check_identifiable (collapsed rows)", lambda: graph.check_identifiable(rows))
    res = stage("fit_bt (Newton on the collapsed rows)", lambda: bt.fit_bt(rows, ref=0),
                lambda r: f"{r.n_iter} iterations")  # fmt: skip
    if res is None:
        return
    free = np.arange(1, comp.n_models)
    bread = stage("inverse_free (bread, potrf + potri)",
                  lambda: unc.inverse_free(res.hessian, free))  # fmt: skip
    if bread is None:
        return

    def row_scores(r, wi, wj, tt):
        return k.bt_scores(res.theta, r.ii, r.jj, wi, wj, tt), None

    stage("cluster_score_matrix (G x M, one pass over the verdict codes)",
          lambda: comp.cluster_score_matrix(comp.n_models, row_scores, k),
          lambda _: f"codes kept: {comp.keeps_codes}")  # fmt: skip
    stage("cluster_sandwich (scores, GEMM + SYRK)",
          lambda: unc.cluster_sandwich(bread, comp, k=k, row_scores=row_scores))  # fmt: skip
    stage("Comparisons.model_counts (uncached)", lambda: type(rows)._model_counts.func(rows))


def peer_evalica(tab, section, df, ours, reps, budget, probe_ok) -> None:
    try:
        import evalica
    except ImportError as exc:
        tab.add(section, "evalica", None, notes=f"not installed: {exc}")
        return
    enum = {"A": evalica.Winner.X, "B": evalica.Winner.Y, "tie": evalica.Winner.Draw}

    def run(frame, winners=None):
        w = frame["winner"].map(enum) if winners is None else winners
        return evalica.bradley_terry(frame["model_a"], frame["model_b"], w)

    if not probe_ok("evalica: bradley_terry", run):
        return
    sec, times, res = measure(lambda: run(df), reps, budget)
    diff = centred_diff(np.log(res.scores), ours)
    tab.add(
        section,
        "evalica: bradley_terry  [incl. winner->enum]",
        sec,
        times=times,
        diff=diff,
        notes=f"point estimate only; MM, tolerance=1e-6, {res.iterations} iterations",
    )
    sec, times, w = measure(lambda: df["winner"].map(enum), reps, budget)
    tab.add(section, "  evalica: winner->enum conversion alone", sec, times=times,
            notes="Series.map(dict of Winner)")  # fmt: skip
    sec, times, _ = measure(lambda: run(df, w), reps, budget)
    tab.add(section, "  evalica: bradley_terry  [enum given]", sec, times=times, diff=diff)
    sec, times, res = measure(lambda: evalica.bradley_terry(df["model_a"], df["model_b"], w,
                                                            tolerance=1e-10, limit=10_000),
                              reps, budget)  # fmt: skip
    tab.add(
        section,
        "  evalica: bradley_terry  [enum given, tolerance=1e-10]",
        sec,
        times=times,
        diff=centred_diff(np.log(res.scores), ours),
        notes=f"{res.iterations} iterations",
    )


def peer_choix(tab, section, df, ours, reps, budget, probe_ok) -> None:
    try:
        import choix
    except ImportError as exc:
        tab.add(section, "choix", None, notes=f"not installed: {exc}")
        return

    def run(frame):
        counts, labels = choix_counts(frame)
        return pd.Series(choix.ilsr_pairwise_dense(counts), index=labels)

    if not probe_ok("choix: counts + ilsr_pairwise_dense", run):
        return
    sec, times, est = measure(lambda: run(df), reps, budget)
    tab.add(section, "choix: dense counts + ilsr_pairwise_dense", sec, times=times,
            diff=centred_diff(est, ours),
            notes="point estimate only; ties = 1/2 win each way; tol=1e-8")  # fmt: skip
    sec, times, (counts, _) = measure(lambda: choix_counts(df), reps, budget)
    tab.add(section, "  choix: dense counts (factorize + bincount)", sec, times=times)
    sec, times, _ = measure(lambda: choix.ilsr_pairwise_dense(counts), reps, budget)
    tab.add(section, "  choix: ilsr_pairwise_dense alone", sec, times=times)


def peer_arena(tab, section, df, ours, ours_se, reps, budget, probe_ok) -> None:
    try:
        from arena_rank.models.bradley_terry import BradleyTerry
        from arena_rank.utils.data_utils import PairDataset
    except ImportError as exc:
        tab.add(section, "arena-rank", None, notes=f"not installed: {exc}")
        return

    # Its default outcome_map is a per-element Python callable that maps unknown labels
    # ("A", "B") to 0.5 silently; a dict is both correct for our labels and vectorised.
    def dataset(frame):
        return PairDataset.from_pandas(frame, outcome_map=WINNER_Y)

    def point(frame):
        ds = dataset(frame)
        bt = BradleyTerry(len(ds.competitors))
        bt.fit(ds)
        return ds, bt

    def full(frame):
        ds, bt = point(frame)
        return ds, bt, bt.compute_ratings_and_cis(ds)

    if not probe_ok("arena-rank: BradleyTerry", full):
        return
    sec, times, (ds, bt, out) = measure(lambda: full(df), reps, budget)
    est = pd.Series(np.asarray(bt.params["ratings"]), index=ds.competitors)
    scale = 400.0 / np.log(10.0)
    se = pd.Series(np.sqrt(np.asarray(out["variances"])) / scale, index=ds.competitors)
    tab.add(section, "arena-rank: PairDataset + fit + sandwich CIs", sec, times=times,
            diff=centred_diff(est, ours), se_diff=rel_se_diff(se, ours_se),
            notes="L-BFGS ftol=gtol=1e-9; CI Hessian gets ridge 1e-5*N")  # fmt: skip
    sec, times, _ = measure(lambda: point(df), reps, budget)
    tab.add(section, "  arena-rank: PairDataset + fit  [point estimate]", sec, times=times,
            diff=centred_diff(est, ours))  # fmt: skip
    sec, times, _ = measure(lambda: dataset(df), reps, budget)
    tab.add(section, "  arena-rank: PairDataset.from_pandas alone", sec, times=times)

    def fit_only():
        b = BradleyTerry(len(ds.competitors))
        b.fit(ds)
        return b

    sec, times, _ = measure(fit_only, reps, budget)
    tab.add(section, "  arena-rank: BradleyTerry.fit alone", sec, times=times,
            notes="lbfgs_minimize re-jits its loop on every call")  # fmt: skip
    sec, times, _ = measure(lambda: bt.compute_ratings_and_cis(ds), reps, budget)
    tab.add(section, "  arena-rank: compute_ratings_and_cis alone (fitted)", sec, times=times)


def small_statsmodels(tab: Table, ratings, args, reps: int, budget: float) -> None:
    n, m = args.small_n, args.small_models
    sec_name = "small"
    size = f"{size_label(n)}/{m}"
    print(f"\n[{sec_name}] {size_label(n)} verdicts / {m} models (statsmodels section)")
    try:
        import statsmodels.api as sm
    except ImportError as exc:
        tab.add(sec_name, "statsmodels", None, notes=f"not installed: {exc}", size=size)
        return
    df = simulate(n, m, args.tasks, args.seed + 1)
    s, t, _ = measure(lambda: floor(df), reps, budget)
    tab.floor[sec_name] = s
    tab.add(sec_name, "floor: pd.factorize x4 columns", s, times=t, size=size)
    s, t, r = measure(lambda: ratings.fit(df, cluster=None), reps, budget)
    tab.ref[sec_name] = s
    ours = pd.Series(r.strength, index=r.models)
    tab.add(sec_name, "ours: fit(df, cluster=None)  [HC0; reference]", s, times=t, diff=0.0,
            size=size)  # fmt: skip
    s, t, _ = measure(lambda: ratings.fit(df), reps, budget)
    tab.add(sec_name, "ours: fit(df)  [task-clustered]", s, times=t, size=size)

    # Standard errors anchored at the reference model (statsmodels drops its column).
    ref_name = r.models[0]
    se_hc0 = ratings.fit(df, cluster=None, anchor=ref_name).se / r.scale
    se_cl = ratings.fit(df, anchor=ref_name).se / r.scale
    tasks = pd.factorize(df["task_id"])[0]

    def glm(cov_type: str):
        x, y, labels = glm_design(df)
        model = sm.GLM(y, x, family=sm.families.Binomial())
        kw = {"groups": tasks} if cov_type == "cluster" else {}
        fit = model.fit(cov_type=cov_type, cov_kwds=kw)
        est = pd.Series(np.r_[0.0, fit.params], index=labels)
        se = pd.Series(np.r_[0.0, fit.bse], index=labels)
        return est, se

    note = "dense n x (M-1) +-1 design (statsmodels GLM takes no sparse exog); IRLS"
    s, t, (est, se) = measure(lambda: glm("HC0"), reps, budget)
    tab.add(
        sec_name,
        "statsmodels: design + GLM Binomial fit(cov_type='HC0')",
        s,
        times=t,
        diff=centred_diff(est, ours),
        se_diff=rel_se_diff(se, se_hc0),
        notes=note,
        size=size,
    )
    s, t, (est, se) = measure(lambda: glm("cluster"), reps, budget)
    tab.add(
        sec_name,
        "statsmodels: design + GLM fit(cov_type='cluster', task)",
        s,
        times=t,
        diff=centred_diff(est, ours),
        se_diff=rel_se_diff(se, se_cl),
        notes="SE diff includes statsmodels' extra (N-1)/(N-K) factor",
        size=size,
    )
    s, t, _ = measure(lambda: glm_design(df), reps, budget)
    tab.add(sec_name, "  statsmodels: dense design build alone", s, times=t, size=size)


def profile_ours(ratings, df: pd.DataFrame) -> None:
    import cProfile
    import pstats

    for call in ("ratings.fit(df)", "ratings.fit(df, cluster=None)"):
        print(f"\ncProfile of {call} (top 25 by cumulative time):")
        prof = cProfile.Profile()
        prof.runctx(call, {"ratings": ratings}, {"df": df})
        out = io.StringIO()
        pstats.Stats(prof, stream=out).strip_dirs().sort_stats("cumulative").print_stats(25)
        print(out.getvalue())


def print_table(rows: list[dict]) -> None:
    def fmt(v, spec):
        return "" if v is None else format(v, spec)

    width = 150
    print("\n" + "=" * width)
    print(
        f"{'section':<7} {'size':<7} {'method':<62} {'seconds':>8} {'x ours':>7} "
        f"{'x floor':>7} {'min s':>7} {'max|ds|':>8} {'se rel':>7} {'load':>5}  notes"
    )
    print("-" * width)
    for r in rows:
        sec = "skipped" if r["seconds"] is None else fmt(r["seconds"], ".3f")
        print(f"{r['section']:<7} {r['size']:<7} {r['method']:<62} {sec:>8} "
              f"{fmt(r['x_ours'], '.2f'):>7} {fmt(r['x_floor'], '.1f'):>7} "
              f"{fmt(r['min_seconds'], '.3f'):>7} {fmt(r['max_abs_diff_s'], '.1e'):>8} "
              f"{fmt(r['max_rel_diff_se'], '.1e'):>7} {fmt(r['load1'], '.1f'):>5}  "
              f"{r['notes']}")  # fmt: skip
    print("=" * width)
    print(
        "seconds: median wall time of the timed calls (after one warm-up); x ours: seconds / "
        "ours fit(df, cluster=None) of the same section;\nx floor: seconds / pd.factorize of "
        "the four columns; min s: fastest timed call; max|ds|: max abs difference of centred "
        "log-strengths\nvs ours HC0; se rel: max relative difference of standard errors vs "
        "ours; load: 1-min load average when the row finished."
    )


def summary(rows: list[dict]) -> None:
    main = {r["method"]: r["seconds"] for r in rows if r["section"] == "main"}
    fl = main.get("floor: pd.factorize x4 columns")
    hc0 = main.get("ours: fit(df, cluster=None)  [HC0; reference]")
    cl = main.get("ours: fit(df)  [task-clustered]")
    peers = {k: v for k, v in main.items()
             if v is not None and not k.startswith((" ", "ours", "floor"))}  # fmt: skip
    print("\nsummary:")
    if fl and hc0:
        print(f"  ours HC0 / floor       = {hc0 / fl:6.1f}x")
    if fl and cl:
        print(f"  ours clustered / floor = {cl / fl:6.1f}x")
    if peers and hc0:
        name, best = min(peers.items(), key=lambda kv: kv[1])
        print(
            f"  fastest peer (as a user calls it): {name.strip()} {best:.3f} s; "
            f"ours HC0 / it = {hc0 / best:.2f}x, ours clustered / it = {(cl or 0) / best:.2f}x"
        )
    for fmt in ("csv", "parquet"):
        sec = {r["method"].split("  [")[0]: r["seconds"] for r in rows if r["section"] == fmt}
        file_floor = next((v for k, v in sec.items() if k.startswith("file floor")), None)
        ours = [v for k, v in sec.items() if k.startswith("ours") and v]
        if file_floor and len(ours) == 2:
            print(f"  from a {fmt} file: ours HC0 / file floor = {ours[0] / file_floor:.1f}x, "
                  f"clustered = {ours[1] / file_floor:.1f}x")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
