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

This script holds the options, the sections of ours and the report; the simulated log, timing
and the results table are in ``bench_fit_common.py``, the peer libraries in
``bench_fit_peers.py`` and the fresh-process runs in ``bench_fit_fresh.py``.

Usage::

    pip install '.[bench]'
    python benchmarks_perf/bench_fit.py            # 1M verdicts, 200 models, 1000 tasks
    python benchmarks_perf/bench_fit.py --large    # 10M verdicts, 200 models
    python benchmarks_perf/bench_fit.py --profile  # also print a cProfile of ours
    python benchmarks_perf/bench_fit.py --headline # fresh CLI vs floor; 1000 models vs choix
"""

from __future__ import annotations

import argparse
import csv
import importlib.metadata
import io
import json
import os
import platform
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
sys.path.insert(0, str(HERE))  # the sibling modules, also when loaded by path
from bench_fit_common import (  # noqa: E402
    COLUMNS,
    Table,
    centred_diff,
    choix_counts,
    floor,
    measure,
    simulate,
    size_label,
)
from bench_fit_fresh import (  # noqa: E402
    cold_child,
    run_cli,
    run_cli_vs_floor,
    run_cold,
    run_large_vs_choix,
)
from bench_fit_peers import peer_arena, peer_choix, peer_evalica, small_statsmodels  # noqa: E402

# ----------------------------------------------------------------------------------------------
# Headline and output
# ----------------------------------------------------------------------------------------------


def headline(args: argparse.Namespace) -> int:
    """The two comparisons of the headline table (benchmarks_perf/README.md), in one run: the
    fresh-process CLI against the fresh-process floor (``--n`` verdicts, ``--models``), and ours
    against choix at ``--large-models`` models."""
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
    import ratings.inference.covariance as unc
    import ratings.models.bt as bt
    import ratings.models.existence as graph
    from ratings.inference.builder import build, row_scores_of

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
    stage("build, CR1 (scores, GEMM + SYRK)",
          lambda: build(bread, "sandwich-z", row_scores_of(comp, comp.n_models, k, row_scores,
                                                           None),
                        n_clusters=comp.n_clusters))  # fmt: skip
    stage("Comparisons.model_counts (uncached)", lambda: type(rows)._model_counts.func(rows))


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
