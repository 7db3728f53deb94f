"""Two revisions side by side on the headline board's table: every rating's Satterthwaite df
(``Ratings.model_df``) and the rest of ``to_frame()`` (rank intervals, the table), after the same
default fit (CR2, clustered by task) of 1M verdicts over 200 models and 1,000 tasks
(``bench_fit_common.simulate``): the series path, past the exact df's budget. ``--shape sparse``
times the sparse board instead (30 models, 6,000 verdicts, 200 tasks: the sparse CR2 path and
exact df), with more fits per child (``--repeats``, e.g. 30). Each child also times the HC0 fit
and its table (``cluster=None``), so each round gives the default table over the HC0 table
(``ratio``) of both revisions.

Run: ``python benchmarks_perf/bench_table_stages.py BEFORE [AFTER] [--rounds 5]`` (git
revisions; AFTER defaults to the working tree; each exported with ``git archive`` as in
``bench_before_after.py``). The two are measured alternately, one child process per (revision,
round) with the revision first on ``PYTHONPATH``, one thread (``RATINGS_NUM_THREADS=1``, BLAS on
one thread), each stage's CPU time the minimum over ``--repeats`` fresh fits (its first one
untimed: imports, bytecode). The load average is recorded at each child's start, and each
child's table is compared with the first revision's (largest absolute difference of its
numbers). Writes ``results/bench_table_stages.csv`` (``_sparse.csv`` for the sparse board) and
prints the median per revision.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_before_after import alternated  # noqa: E402

OUT = HERE / "results" / "bench_table_stages.csv"
#: Verdicts, models and tasks of each board ``--shape`` names.
SHAPES = {"headline": (1_000_000, 200, 1000), "sparse": (6_000, 30, 200)}

CHILD = r"""
import json, os, sys, time
tree, repeats, table_out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
n, models, tasks = (int(v) for v in sys.argv[4:7])
sys.path.insert(0, os.path.join(tree, "benchmarks_perf"))
import ratings
assert ratings.__file__.startswith(tree), ratings.__file__
from bench_fit_common import simulate
load = os.getloadavg()[0]
df = simulate(n, models, tasks, seed=0)
best = {"fit": float("inf"), "model_df": float("inf"), "table": float("inf"),
        "hc0_fit_and_table": float("inf")}
for k in range(repeats + 1):
    t0 = time.process_time()
    r = ratings.fit(df)
    t1 = time.process_time()
    r.model_df
    t2 = time.process_time()
    table = r.to_frame()
    t3 = time.process_time()
    ratings.fit(df, cluster=None).to_frame()
    t4 = time.process_time()
    if k:
        for name, s in (("fit", t1 - t0), ("model_df", t2 - t1), ("table", t3 - t2),
                        ("hc0_fit_and_table", t4 - t3)):
            best[name] = min(best[name], s)
table.to_pickle(table_out)
print(json.dumps({"load_avg": load, **{f"{k}_cpu_s": v for k, v in best.items()}}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before")
    ap.add_argument("after", nargs="?", default=None)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=4)
    ap.add_argument("--shape", choices=sorted(SHAPES), default="headline")
    ap.add_argument("--out", type=Path, default=None,
                    help="the CSV written (default results/bench_table_stages.csv, with "
                         "_SHAPE before .csv for another shape)")  # fmt: skip
    args = ap.parse_args()
    size = [str(v) for v in SHAPES[args.shape]]
    out_file = args.out or (OUT if args.shape == "headline"
                            else OUT.with_name(f"{OUT.stem}_{args.shape}.csv"))  # fmt: skip
    rows = []
    first: pd.DataFrame | None = None
    for k, label, tree, env, tmp in alternated(args.before, args.after, args.rounds):
        out = tmp / f"{label}.pkl"
        done = subprocess.run([sys.executable, "-c", CHILD, str(tree), str(args.repeats),
                               str(out), *size], env=env, cwd=tmp, check=True,
                              capture_output=True, text=True)  # fmt: skip
        table = pd.read_pickle(out).select_dtypes("number")
        first = table if first is None else first
        diff = float((table - first).abs().max().max())
        rows.append({"round": k, "revision": label, **json.loads(done.stdout),
                     "max_abs_diff": diff})  # fmt: skip
        print(rows[-1], flush=True)
    frame = pd.DataFrame(rows)
    frame["df_and_table_cpu_s"] = frame["model_df_cpu_s"] + frame["table_cpu_s"]
    frame["ratio"] = (frame["fit_cpu_s"] + frame["df_and_table_cpu_s"]) / frame[
        "hc0_fit_and_table_cpu_s"]
    frame.insert(0, "shape", args.shape)
    out_file.parent.mkdir(exist_ok=True)
    frame.to_csv(out_file, index=False)
    print(frame.groupby("revision", sort=False).median(numeric_only=True).T.to_string())


if __name__ == "__main__":
    main()
