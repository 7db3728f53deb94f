"""The fresh ``ratings fit`` against the fresh read-and-factorize floor, per column kind and file
format, on whichever pandas this Python has (run it once per environment: pandas 2 and 3).

For each file format (``--formats``: csv, parquet) and column kind (``--kinds``: object, str,
category) one verdict log (``--n`` verdicts, ``--models``, ``--tasks``; ``bench_fit_common.
simulate``) is written: a CSV once (a CSV has no column kinds: the kind is how the floor reads
it, ``pd.read_csv(dtype=KIND)``), a Parquet file per kind (written from a frame whose text
columns have that kind: dictionary-encoded for ``category``, read back as categoricals). Then,
in fresh processes, alternately:

* **floor**: ``python -c`` importing pandas, reading the file (``pd.read_csv(path, dtype=...)``
  / ``pd.read_parquet(path)``) and factorizing ``model_a``, ``model_b``, ``winner``,
  ``task_id`` (touching the data once);
* **ours**: ``python -m ratings.cli fit FILE --out OUT.csv`` (the program: read, validate, fit,
  CR2 intervals, the table written).

One untimed run of each first (bytecode, the OS's file cache), then ``--repeats`` pairs; wall
and CPU (user + system) medians, the ratio of the medians and the range of the per-pair ratios,
the load average before and after. Appends to ``results/bench_cli_floor.csv`` (rows of other
pandas versions kept).

``--before DIR`` adds a third command to each round: the same ``ratings fit`` from another
checkout of the package (``DIR``, e.g. ``git worktree add /tmp/before main``), run from there,
so each cell also gets that revision's wall and CPU medians and ratios to the same floor,
measured in the same rounds.

``--stages`` instead times ours stage by stage (flags, read and validate, fit, every rating's df,
rank intervals and table, write), CPU of every thread and wall per stage, medians of
``--repeats`` fresh processes per file, to ``results/bench_cli_floor_stages.csv``.

    python benchmarks_perf/bench_cli_floor.py                      # 1M verdicts, 5 pairs
    python benchmarks_perf/bench_cli_floor.py --stages --repeats 3
    python benchmarks_perf/bench_cli_floor.py --before /tmp/before   # a revision side by side
    PYTHONPATH=. /path/to/pandas2-env/bin/python benchmarks_perf/bench_cli_floor.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # this checkout's packages first

from bench_fit_common import simulate  # noqa: E402
from bench_fit_fresh import _child  # noqa: E402

COLUMNS = ("model_a", "model_b", "winner", "task_id")

FLOOR = """
import sys
import pandas as pd
path, kind = sys.argv[1], sys.argv[2]
cols = ("model_a", "model_b", "winner", "task_id")
if path.endswith(".csv"):
    df = pd.read_csv(path, dtype=None if kind == "default" else dict.fromkeys(cols, kind))
else:
    df = pd.read_parquet(path)
for c in cols:
    pd.factorize(df[c])
"""


# ``ratings fit FILE --out OUT`` stage by stage, as the command runs them, in one fresh process
# with glibc's allocator tuned as the program tunes it (without, the fit's large temporaries
# page-fault anew and its aggregation takes twice as long): CPU (``process_time``: every thread
# of the process) and wall seconds after each stage.
STAGES = """
import json, sys, time
marks = [("start", time.perf_counter(), time.process_time())]
def mark(name):
    marks.append((name, time.perf_counter(), time.process_time()))
import pandas
mark("import pandas")
from ratings.cli.allocator import tune_allocator
from ratings.cli.app import build_parser
tune_allocator()  # as the program does first (main() run as the program)
mark("import ratings and the CLI")
from ratings.api.fitting import fit_with
from ratings.cli.fitting import fit_options, read_for_fit
argv = ["fit", sys.argv[1], "--out", sys.argv[2]]
args = build_parser(argv).parse_args(argv)
options = fit_options(args)
mark("flags")
log = read_for_fit(args)
mark("read and validate")
r = fit_with(log, options)
mark("fit, CR2 covariance")
r.model_df
mark("every rating's df")
r.to_frame()
mark("rank intervals, table")
from ratings.cli.tables import write_table
from ratings.scopes.scale import board_info
write_table(r.to_frame().assign(**board_info(r)), args.out)
r.summary(max_rows=10)
mark("write, board")
print(json.dumps([[n, w - marks[k][1], c - marks[k][2]]
                  for k, (n, w, c) in enumerate(marks[1:])]))
"""


def stages(path: Path, out: Path, env: dict, repeats: int) -> pd.DataFrame:
    """Median CPU and wall seconds of each stage of ``ratings fit`` (:data:`STAGES`) over
    ``repeats`` fresh processes (after an untimed one)."""
    import json
    import subprocess

    # OpenBLAS on one thread from the start, as the program runs it (ratings.core.program):
    # this `python -c` child is not the program, which sets that before NumPy loads
    env = {"OPENBLAS_NUM_THREADS": "1", **env}
    runs = []
    for k in range(repeats + 1):
        proc = subprocess.run([sys.executable, "-c", STAGES, str(path), str(out)], env=env,
                              capture_output=True, text=True, check=True, cwd=HERE.parent)
        if k:  # the first run writes bytecode and warms the file cache
            runs.append(pd.DataFrame(json.loads(proc.stdout.strip().splitlines()[-1]),
                                     columns=["stage", "wall_s", "cpu_s"]))
    return pd.concat(runs).groupby("stage", sort=False).median().reset_index()


def _frame(df: pd.DataFrame, kind: str) -> pd.DataFrame:
    out = df.copy()
    for c in COLUMNS:
        out[c] = out[c].astype(object if kind == "object" else kind)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--models", type=int, default=200)
    p.add_argument("--tasks", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--kinds", nargs="*", default=["object", "str", "category"])
    p.add_argument("--formats", nargs="*", default=["csv", "parquet"])
    p.add_argument("--out", type=Path, default=HERE / "results" / "bench_cli_floor.csv")
    p.add_argument("--stages", action="store_true",
                   help="instead: where ours spends its time, stage by stage (medians of "
                        "--repeats fresh processes per file), to results/bench_cli_floor_stages"
                        ".csv")  # fmt: skip
    p.add_argument("--before", type=Path, default=None,
                   help="another checkout whose `ratings fit` runs in the same rounds")
    args = p.parse_args(argv)
    import ratings

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent), env.get("PYTHONPATH", "")])
    print(f"pandas {pd.__version__}, ratings from {Path(ratings.__file__).parent}; "
          f"load {os.getloadavg()}", flush=True)  # fmt: skip
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_cli_floor_") as tmp:
        base = simulate(args.n, args.models, args.tasks, seed=0)
        csv = Path(tmp) / "verdicts.csv"
        base.to_csv(csv, index=False)
        out = Path(tmp) / "ratings.csv"
        for fmt in args.formats:
            for kind in args.kinds:
                if fmt == "csv":
                    path = csv
                else:
                    path = Path(tmp) / f"verdicts_{kind}.parquet"
                    _frame(base, kind).to_parquet(path, index=False)
                if args.stages:  # a CSV's column kind is the floor's: one file for all kinds
                    if fmt != "csv" or kind == args.kinds[0]:
                        load_before = os.getloadavg()[0]
                        table = stages(path, out, env, args.repeats)
                        table.insert(0, "pandas", pd.__version__)
                        table.insert(1, "format", fmt)
                        table.insert(2, "kind", "any" if fmt == "csv" else kind)
                        table["repeats"] = args.repeats
                        table["load_before"] = round(load_before, 2)
                        table["load_after"] = round(os.getloadavg()[0], 2)
                        print(table.to_string(index=False, float_format="{:.3f}".format),
                              flush=True)  # fmt: skip
                        rows.append(table)
                    continue
                fit = [sys.executable, "-m", "ratings.cli", "fit", str(path), "--out", str(out)]
                cmds = {"floor": ([sys.executable, "-c", FLOOR, str(path), kind], env, HERE.parent),
                        "ours": (fit, env, HERE.parent)}  # fmt: skip
                if args.before is not None:  # run from there: its package first on the path
                    other = {**env, "PYTHONPATH": os.pathsep.join([str(args.before),
                                                                   env.get("PYTHONPATH", "")])}
                    cmds["before"] = (fit, other, args.before)
                for cmd in cmds.values():
                    _child(*cmd)  # untimed
                walls = {name: [] for name in cmds}
                cpus = {name: [] for name in cmds}
                load_before = os.getloadavg()[0]
                for _ in range(args.repeats):
                    for name, cmd in cmds.items():
                        out.unlink(missing_ok=True)
                        wall, cpu = _child(*cmd)
                        walls[name].append(wall)
                        cpus[name].append(cpu)
                ratios = [o / f for o, f in zip(walls["ours"], walls["floor"], strict=True)]
                floor, ours = statistics.median(walls["floor"]), statistics.median(walls["ours"])
                rows.append({
                    "pandas": pd.__version__, "format": fmt, "kind": kind, "n": args.n,
                    "models": args.models, "repeats": args.repeats, "floor_s": floor,
                    "ours_s": ours, "ratio": ours / floor, "pair_ratio_min": min(ratios),
                    "pair_ratio_max": max(ratios),
                    "floor_cpu_s": statistics.median(cpus["floor"]),
                    "ours_cpu_s": statistics.median(cpus["ours"]),
                    "cpu_ratio": statistics.median(cpus["ours"]) / statistics.median(
                        cpus["floor"]),
                    "load_before": round(load_before, 2),
                    "load_after": round(os.getloadavg()[0], 2),
                })  # fmt: skip
                if "before" in cmds:
                    b_wall = statistics.median(walls["before"])
                    b_cpu = statistics.median(cpus["before"])
                    rows[-1].update({
                        "before_s": b_wall, "before_ratio": b_wall / floor,
                        "before_cpu_s": b_cpu,
                        "before_cpu_ratio": b_cpu / statistics.median(cpus["floor"]),
                        "ours_over_before_cpu": statistics.median(
                            [o / b for o, b in zip(cpus["ours"], cpus["before"], strict=True)]),
                    })  # fmt: skip
                print(pd.DataFrame(rows[-1:]).to_string(index=False,
                                                        float_format="{:.2f}".format),
                      flush=True)  # fmt: skip
    frame = pd.concat(rows) if args.stages else pd.DataFrame(rows)
    if args.stages and args.out == p.get_default("out"):
        args.out = HERE / "results" / "bench_cli_floor_stages.csv"
    if args.out.exists():  # keep the rows of other pandas versions
        old = pd.read_csv(args.out)
        frame = pd.concat([old[old["pandas"].astype(str) != pd.__version__], frame])
    from ratings.io import write_atomic

    write_atomic(frame, args.out)
    print(frame.to_string(index=False, float_format="{:.3f}".format if args.stages
                          else "{:.2f}".format))  # fmt: skip
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
