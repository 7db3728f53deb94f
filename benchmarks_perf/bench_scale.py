"""Large verdict logs: each path that counts a log outside pandas, timed against its engine's own
group-by of the same columns, with peak memory, each in a fresh process.

The log (``--n`` verdicts of ``--models`` models on ``--tasks`` tasks, about 10 % ties) is written
to Parquet one chunk of 1M verdicts per file, so it is never whole in memory here; the files live
under ``--dir`` (default: the system's temporary directory) and are deleted at the end. Paths:

- ``counts``: ``ratings.fit(counts.parquet)``, the pre-aggregated table of the README's SQL query,
  against ``ratings.fit(log.parquet)``, the log it summarises (one file, written by DuckDB), warm
  in one process and each in a fresh ``python -c`` (import included); only up to
  ``--memory-max`` verdicts, as the raw log is then read into memory;
- ``dask``: ``ratings.aggregate(dd.read_parquet(glob))`` on a 2-worker multi-process
  ``LocalCluster`` against Dask's ``groupby(columns).size()`` of the columns the fit reads
  (``task_id``, ``model_a``, ``model_b``, ``winner``), as Dask chooses to run it (a shuffle into
  several outputs) and as one tree reduction (``split_out=1``, the shape of ours);
- ``duckdb``: ``ratings.aggregate(relation_of(glob))`` against DuckDB's ``GROUP BY`` of the same
  columns with its groups fetched (what any use of them must do). Ours runs on the connection
  ``relation_of`` makes (DuckDB held to 1 GB, spilling beyond it). The floor, like for like,
  runs on a connection with the same settings held to each of ``--floor-limits`` (1 GB, ours'
  limit, by default), its groups fetched in record batches of 1M so that they need not all be
  in memory at once: ratios are to the floor held to the first limit. Another row gives the
  floor on DuckDB's defaults (up to 80 % of memory), fetched at once: the ratios' reference
  when the held floor runs out of memory (a row of its own), as DuckDB's ``GROUP BY`` of the
  text columns does at 100M verdicts held to 1 GB, where ours runs (``--floor-limits 1GB 2GB``
  adds the floor held to 2 GB, where it runs).

Peak memory: the most resident memory any process of the path held (the child; for Dask, also
each worker), from ``getrusage``; for DuckDB, each method also runs alone in a fresh process for
its own peak. Usage::

    python benchmarks_perf/bench_scale.py                 # 10M verdicts (~10 min on 2 cores)
    python benchmarks_perf/bench_scale.py --n 100000000 --paths duckdb --repeats 1 \
        --floor-limits 1GB 2GB
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CHUNK = 1_000_000
COLUMNS = ["task_id", "model_a", "model_b", "winner"]
FIELDS = ["path", "n", "method", "seconds", "x_floor", "runs", "peak_mb", "process_seconds",
          "load1", "notes"]  # fmt: skip


def write_log(directory: Path, n: int, n_models: int, n_tasks: int, seed: int) -> Path:
    """``n`` simulated verdicts as Parquet files of :data:`CHUNK` rows each (one chunk in memory
    at a time); returns the directory."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    strength = rng.normal(size=n_models)
    names = np.array([f"model-{i:04d}" for i in range(n_models)], dtype=object)
    tasks = np.array([f"task-{i:05d}" for i in range(n_tasks)], dtype=object)
    outcomes = np.array(["A", "B", "tie"], dtype=object)
    directory.mkdir(parents=True, exist_ok=True)
    for k, start in enumerate(range(0, n, CHUNK)):
        size = min(CHUNK, n - start)
        a = rng.integers(0, n_models, size)
        b = (a + rng.integers(1, n_models, size)) % n_models
        p = 1.0 / (1.0 + np.exp(strength[b] - strength[a]))
        u = rng.random(size)
        w = np.where(u < 0.1, 2, np.where(u < 0.1 + 0.9 * p, 0, 1))
        pd.DataFrame({"task_id": tasks[rng.integers(0, n_tasks, size)], "model_a": names[a],
                      "model_b": names[b], "winner": outcomes[w]}).to_parquet(
            directory / f"part-{k:04d}.parquet", index=False)  # fmt: skip
    return directory


def _peak_mb() -> float:
    """The most resident memory of this process and of its waited-for children, in MB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, kids) / 1024


def _timed(fns: dict, repeats: int) -> dict[str, list[float]]:
    """Each function once untimed (unless a single round is asked for, as at 100M verdicts),
    then ``repeats`` interleaved timed rounds."""
    for fn in fns.values() if repeats > 1 else ():
        fn()
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return times


def child_counts(log: str, counts: str, repeats: int) -> dict:
    import ratings

    return {"times": _timed({"raw log: fit(log.parquet)": lambda: ratings.fit(log),
                             "counts: fit(counts.parquet)": lambda: ratings.fit(counts)},
                            repeats), "peak_mb": _peak_mb()}  # fmt: skip


def child_dask(glob: str, repeats: int) -> dict:
    import dask.dataframe as dd
    from dask.distributed import Client, LocalCluster

    import ratings
    from ratings.data.dask import aggregate_counts

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=50) as cluster, Client(cluster) as client:  # fmt: skip
        def frame():
            return dd.read_parquet(glob)[COLUMNS]

        times = _timed({
            "floor: groupby(columns).size()": lambda: frame().groupby(COLUMNS).size().compute(),
            "floor: groupby(columns).size(split_out=1)":
                lambda: frame().groupby(COLUMNS).size(split_out=1).compute(),
            "ours: aggregate_counts(ddf)": lambda: aggregate_counts(dd.read_parquet(glob)),
            "ours: ratings.aggregate(ddf)": lambda: ratings.aggregate(dd.read_parquet(glob)),
        }, repeats)  # fmt: skip
        workers = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return {"times": times, "peak_mb": max([_peak_mb(), *workers.values()])}


def child_duckdb(glob: str, repeats: int, which: str, limits: list[str]) -> dict:
    """Ours against DuckDB's ``GROUP BY`` of the same columns: held to each of ``limits`` on a
    connection with ours' settings, its groups fetched in record batches (the groups need not
    all be in memory at once), and on DuckDB's defaults, fetched at once. A floor that runs out
    of memory is reported as such (its times are None). ``which``: one method, or ``all``."""
    import duckdb

    import ratings
    from ratings.data.sql import connect, relation_of

    query = (f"SELECT {', '.join(COLUMNS)}, count(*) AS n FROM read_parquet('{glob}') "
             "GROUP BY ALL")  # fmt: skip

    def batches(con) -> None:
        for _ in con.sql(query).to_arrow_reader(CHUNK):
            pass

    def at_once(con) -> None:
        con.sql(query).to_arrow_table()

    fns: dict = {}
    for limit in limits:
        con = connect()  # ours' settings (insertion order free, a spill directory)
        con.execute(f"SET memory_limit = '{limit}'")
        fns[f"floor: GROUP BY columns, held to {limit}, fetched in batches"] = (
            lambda con=con: batches(con))
    default = duckdb.connect()
    default.execute("SET enable_progress_bar = false")
    fns["floor: GROUP BY columns, DuckDB defaults, fetched at once"] = lambda: at_once(default)
    fns["ours: ratings.aggregate(relation)"] = lambda: ratings.aggregate(relation_of(glob))
    fns = {k: v for k, v in fns.items() if which in ("all", k)}
    failed: dict[str, str] = {}

    def guarded(name, fn):
        def run():
            if name not in failed:
                try:
                    fn()
                except duckdb.OutOfMemoryException as error:
                    failed[name] = str(error).splitlines()[0]
        return run

    times = _timed({k: guarded(k, fn) for k, fn in fns.items()}, repeats)
    return {"times": {k: None if k in failed else ts for k, ts in times.items()},
            "failed": failed, "peak_mb": _peak_mb()}


def _child(args: argparse.Namespace) -> None:
    if args.child == "counts":
        out = child_counts(args.log, args.counts, args.repeats)
    elif args.child == "dask":
        out = child_dask(args.glob, args.repeats)
    else:
        out = child_duckdb(args.glob, args.repeats, args.which, args.floor_limits)
    print("RESULT " + json.dumps(out))


def run_child(*options: str) -> tuple[dict, float]:
    """Run this script as a fresh child; its result and its wall time."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, __file__, *options], capture_output=True, text=True,
                          check=False)  # fmt: skip
    wall = time.perf_counter() - start
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode or not lines:
        raise RuntimeError(f"child {options} failed:\n{done.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT "):]), wall


def fresh_fit(path: str) -> float:
    """Wall time of ``ratings.fit(path)`` in a new Python (import included)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", f"import ratings; ratings.fit({path!r})"], check=True)
    return time.perf_counter() - start


def rows_of(path: str, n: int, result: dict, wall: float, floor_key: str | None) -> list[dict]:
    times = result["times"]
    floor = statistics.median(times[floor_key]) if floor_key else None
    load = os.getloadavg()[0]
    rows = []
    for method, ts in times.items():
        med = statistics.median(ts)
        rows.append({"path": path, "n": n, "method": method, "seconds": round(med, 3),
                     "x_floor": round(med / floor, 2) if floor else None,
                     "runs": " ".join(f"{t:.2f}" for t in ts),
                     "peak_mb": round(result["peak_mb"]), "process_seconds": round(wall, 1),
                     "load1": round(load, 1), "notes": ""})  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--paths", nargs="+", default=["counts", "dask", "duckdb"])
    parser.add_argument("--memory-max", type=int, default=10_000_000,
                        help="largest log read into memory for the counts path")
    parser.add_argument("--dir", default=tempfile.gettempdir())
    parser.add_argument("--keep", action="store_true",
                        help="keep the written log (its directory is printed) for --parts")
    parser.add_argument("--parts", help="a directory of part-*.parquet files written by an "
                        "earlier run with --keep (same --n, --models, --tasks, --seed): used, "
                        "not written")
    parser.add_argument("--out", default=str(HERE / "results" / "scale.csv"))
    parser.add_argument("--child", choices=["counts", "dask", "duckdb"])
    parser.add_argument("--which", default="all")
    parser.add_argument("--floor-limits", nargs="+", default=["1GB"],
                        help="memory limits DuckDB's own GROUP BY is held to (the first, "
                        "ours' own, 1GB by default, is the duckdb path's floor when it runs)")
    parser.add_argument("--glob")
    parser.add_argument("--log")
    parser.add_argument("--counts")
    args = parser.parse_args(argv)
    if args.child:
        _child(args)
        return 0

    need = 8 * args.n  # Parquet: ~3.2 bytes a verdict; the one-file copy and counts: as much
    work = Path(tempfile.mkdtemp(prefix="bench_scale_", dir=args.dir))
    free = shutil.disk_usage(work).free
    if free < 3 * need:
        raise SystemExit(f"{free / 1e9:.1f} GB free under {work}; about {3 * need / 1e9:.1f} GB "
                         "wanted (3x the files). Pass --dir elsewhere.")  # fmt: skip
    rows: list[dict] = []
    try:
        start = time.perf_counter()
        if args.parts:
            parts = Path(args.parts)
        else:
            parts = write_log(work / "parts", args.n, args.models, args.tasks, args.seed)
            print(f"wrote {args.n:,} verdicts in {time.perf_counter() - start:.0f} s", flush=True)
        glob = str(parts / "*.parquet")
        if "counts" in args.paths and args.n <= args.memory_max:
            rows += _counts_rows(args, glob, work)
        if "dask" in args.paths:
            result, wall = run_child("--child", "dask", "--glob", glob, "--repeats",
                                     str(args.repeats))  # fmt: skip
            floor = "floor: groupby(columns).size()"
            rows += rows_of("dask", args.n, result, wall, floor)
            tree = statistics.median(result["times"]["floor: groupby(columns).size(split_out=1)"])
            for row in rows[-4:]:
                row["notes"] = f"x tree floor {row['seconds'] / tree:.2f}"
        if "duckdb" in args.paths:
            rows += _duckdb_rows(args, glob)
    finally:
        if args.keep and not args.parts:
            keep = Path(args.dir) / f"bench_scale_log_{args.n}"
            shutil.rmtree(keep, ignore_errors=True)
            (work / "parts").rename(keep)
            print(f"log kept in {keep} (pass --parts {keep})", flush=True)
        shutil.rmtree(work, ignore_errors=True)
    _write(rows, Path(args.out), args)
    return 0


def _duckdb_rows(args: argparse.Namespace, glob: str) -> list[dict]:
    """Ours and the floors side by side in one process, ratios to the floor held to the first
    of ``--floor-limits`` (ours' limit), or when that one ran out of memory to the floor on
    DuckDB's defaults; then each method that ran alone in its own process, for its peak."""
    limits = ["--floor-limits", *args.floor_limits]
    result, wall = run_child("--child", "duckdb", "--glob", glob, "--repeats",
                             str(args.repeats), *limits)  # fmt: skip
    times, failed = result["times"], result["failed"]
    ran = [k for k, ts in times.items() if ts is not None]
    same = f"floor: GROUP BY columns, held to {args.floor_limits[0]}, fetched in batches"
    floor = same if same in ran else "floor: GROUP BY columns, DuckDB defaults, fetched at once"
    rows = rows_of("duckdb", args.n, {**result, "times": {k: times[k] for k in ran}}, wall,
                   floor)  # fmt: skip
    for row in rows:
        row["notes"] = "x_floor against this floor" if row["method"] == floor else ""
    for name, message in failed.items():
        rows.append({"path": "duckdb", "n": args.n, "method": name, "seconds": None,
                     "x_floor": None, "runs": "", "peak_mb": None, "process_seconds": None,
                     "load1": round(os.getloadavg()[0], 1), "notes": message})  # fmt: skip
    for name in ran:
        alone, wall = run_child("--child", "duckdb", "--glob", glob, "--repeats", "1",
                                "--which", name, *limits)  # fmt: skip
        rows += rows_of("duckdb", args.n, alone, wall, None)
        rows[-1]["method"] = f"alone (peak memory by itself): {name}"
    return rows


def _counts_rows(args: argparse.Namespace, glob: str, work: Path) -> list[dict]:
    """The counts table against the raw log, warm and in fresh processes."""
    import duckdb

    log, counts = str(work / "log.parquet"), str(work / "counts.parquet")
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    con.execute(f"COPY (SELECT * FROM read_parquet('{glob}')) TO '{log}'")
    con.execute(f"""COPY (SELECT task_id, model_a, model_b,
        SUM(CASE WHEN winner = 'A' THEN 1 ELSE 0 END) AS wins_a,
        SUM(CASE WHEN winner = 'B' THEN 1 ELSE 0 END) AS wins_b,
        SUM(CASE WHEN winner = 'tie' THEN 1 ELSE 0 END) AS ties
        FROM read_parquet('{log}') GROUP BY ALL) TO '{counts}'""")
    n_counts = con.execute(f"SELECT count(*) FROM read_parquet('{counts}')").fetchone()[0]
    result, wall = run_child("--child", "counts", "--log", log, "--counts", counts, "--repeats",
                             str(args.repeats))  # fmt: skip
    rows = rows_of("counts", args.n, result, wall, "raw log: fit(log.parquet)")
    rows[-1]["notes"] = f"{n_counts:,} counts rows"
    fresh: dict[str, list[float]] = {"raw log": [], "counts": []}
    fresh_fit(counts)  # untimed: page in the files and the numba cache
    for _ in range(args.repeats):
        fresh["raw log"].append(fresh_fit(log))
        fresh["counts"].append(fresh_fit(counts))
    raw = statistics.median(fresh["raw log"])
    for name, ts in fresh.items():
        med = statistics.median(ts)
        rows.append({"path": "counts", "n": args.n, "method": f"fresh process: {name}",
                     "seconds": round(med, 3), "x_floor": round(med / raw, 2),
                     "runs": " ".join(f"{t:.2f}" for t in ts), "peak_mb": None,
                     "process_seconds": None, "load1": round(os.getloadavg()[0], 1),
                     "notes": "python -c 'import ratings; ratings.fit(path)'"})  # fmt: skip
    return rows


def _write(rows: list[dict], out: Path, args: argparse.Namespace) -> None:
    """Append to the CSV (rows of other sizes kept) and rewrite the Markdown table beside it."""
    import pandas as pd

    new = pd.DataFrame(rows, columns=FIELDS)
    if out.exists():
        old = pd.read_csv(out)
        old = old[~(old["n"].eq(args.n) & old["path"].isin(new["path"].unique()))]
        new = pd.concat([old, new], ignore_index=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    new.to_csv(out, index=False)
    meta = {"cpu_count": os.cpu_count(), "models": args.models, "tasks": args.tasks,
            "python": sys.version.split()[0]}  # fmt: skip
    for name in ("numpy", "pandas", "pyarrow", "dask", "distributed", "duckdb"):
        try:
            meta[name] = __import__(name).__version__
        except ImportError:
            meta[name] = "not installed"
    out.with_suffix(".meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    lines = ["| " + " | ".join(FIELDS) + " |", "|" + "---|" * len(FIELDS)]
    lines += ["| " + " | ".join("" if pd.isna(v) else str(v) for v in row) + " |"
              for row in new[FIELDS].itertuples(index=False)]  # fmt: skip
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(new.to_string(index=False))


if __name__ == "__main__":
    sys.exit(main())
