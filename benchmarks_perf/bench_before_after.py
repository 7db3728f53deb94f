"""Two revisions of the package side by side, as ratios, before and after: the style-controlled
fit against the plain fit (``bench_style.py``'s 1M-verdict log, four features), Crowd-BT against
Bradley-Terry (``bench_crowd.py``'s 1M verdicts, 200 models, three judges), the headline fit
against its factorize floor (``bench_fit.py --headline``: 1M verdicts, 200 models, in process),
the HC0 fit of 1M verdicts over 1,000 models against choix's point estimate (dense counts +
ILSR), and the default fit plus its table against the HC0 fit plus its table on an arena board
(``bench_arena.py``'s shape: 50k one-verdict tasks, 200 models).

Run: ``python benchmarks_perf/bench_before_after.py BEFORE [AFTER] [--rounds 4]`` (git
revisions; AFTER defaults to the working tree). Each revision is exported (``git archive``) to
a temporary folder; the two are then measured alternately, one child process per
(revision, round) with the revision first on ``PYTHONPATH``, each timing its fits alternately
after a warm-up. Times are CPU seconds of one thread (``RATINGS_NUM_THREADS=1``, BLAS on one
thread), the minimum over five runs of each fit, so that other processes on a shared machine
move them less than wall-clock times; the load average at each child's start is recorded.
Writes ``results/bench_before_after.csv`` (one row per child) and prints the median ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "bench_before_after.csv"
ONE_THREAD = {"RATINGS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
              "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}  # fmt: skip

CHILD = r"""
import json, os, sys, time
tree = sys.argv[1]
sys.path.insert(0, os.path.join(tree, "benchmarks_perf"))
import ratings
assert ratings.__file__.startswith(tree), ratings.__file__
import bench_arena, bench_crowd, bench_fit_common, bench_style
import choix
ratings.warmup()

def fastest(runs, repeat=5):
    for f in runs.values():
        f()
    best = {k: float("inf") for k in runs}
    for _ in range(repeat):
        for k, f in runs.items():
            t = time.process_time()
            f()
            best[k] = min(best[k], time.process_time() - t)
    return best

load = os.getloadavg()[0]
df = bench_style.board(1_000_000)
style = fastest({"plain": lambda: ratings.fit(df),
                 "style": lambda: ratings.fit(df, style=bench_style.FEATURES)})
del df
log, _ = bench_crowd.simulate(1_000_000, 200, 1000, seed=0)
crowd = fastest({"bt": lambda: ratings.fit(log),
                 "crowd": lambda: ratings.fit(log, model="crowd-bt")})
del log
df = bench_fit_common.simulate(1_000_000, 200, 1000, seed=0)
head = fastest({"floor": lambda: bench_fit_common.floor(df), "fit": lambda: ratings.fit(df)})
df = bench_fit_common.simulate(1_000_000, 1000, 1000, seed=0)
large = fastest({"choix": lambda: choix.ilsr_pairwise_dense(bench_fit_common.choix_counts(df)[0]),
                 "hc0": lambda: ratings.fit(df, cluster=None)}, repeat=3)
del df
board = bench_arena.arena(50_000, 200, 0)
arena = fastest({"hc0": lambda: ratings.fit(board, cluster=None).to_frame(),
                 "default": lambda: ratings.fit(board, cluster="task_id").to_frame()})
print(json.dumps({"load_avg": load, "plain_cpu_s": style["plain"], "style_cpu_s": style["style"],
                  "style_ratio": style["style"] / style["plain"], "bt_cpu_s": crowd["bt"],
                  "crowd_cpu_s": crowd["crowd"], "crowd_ratio": crowd["crowd"] / crowd["bt"],
                  "floor_cpu_s": head["floor"], "headline_cpu_s": head["fit"],
                  "headline_ratio": head["fit"] / head["floor"], "choix_cpu_s": large["choix"],
                  "large_hc0_cpu_s": large["hc0"], "large_ratio": large["hc0"] / large["choix"],
                  "arena_hc0_cpu_s": arena["hc0"], "arena_default_cpu_s": arena["default"],
                  "arena_ratio": arena["default"] / arena["hc0"]}))
"""


def export(rev: str | None, into: Path) -> Path:
    """The package at ``rev`` (None: the working tree as it is) in a folder of ``into``."""
    root = Path(subprocess.check_output(["git", "rev-parse", "--show-toplevel"], cwd=HERE,
                                        text=True).strip())  # fmt: skip
    if rev is None:
        return root
    out = into / rev.replace("/", "_")
    out.mkdir()
    archive = subprocess.run(["git", "archive", rev], cwd=root, check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout, check=True)
    return out


def alternated(before: str, after: str | None,
               rounds: int) -> Iterator[tuple[int, str, Path, dict[str, str], Path]]:  # fmt: skip
    """The two revisions exported to a temporary folder, then ``rounds`` rounds of each in turn:
    (round, ``"before"`` or ``"after"``, its tree, the environment of its child process (one
    thread, the tree first on ``PYTHONPATH``), the temporary folder)."""
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"before": export(before, Path(tmp)), "after": export(after, Path(tmp))}
        for k in range(rounds):
            for label, tree in trees.items():
                env = {**os.environ, **ONE_THREAD, "PYTHONPATH": str(tree)}
                yield k, label, tree, env, Path(tmp)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before")
    ap.add_argument("after", nargs="?", default=None)
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    rows = []
    for k, label, tree, env, tmp in alternated(args.before, args.after, args.rounds):
        done = subprocess.run([sys.executable, "-c", CHILD, str(tree)], env=env, cwd=tmp,
                              check=True, capture_output=True, text=True)  # fmt: skip
        rows.append({"round": k, "revision": label, **json.loads(done.stdout)})
        print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    OUT.parent.mkdir(exist_ok=True)
    table.to_csv(OUT, index=False)
    ratios = ["style_ratio", "crowd_ratio", "headline_ratio", "large_ratio", "arena_ratio"]
    print(table.groupby("revision")[[*ratios, "load_avg"]].median().T.to_string())


if __name__ == "__main__":
    main()
