"""First use after install: ``ratings next`` and ``ratings fit`` with an empty numba cache against
the same commands once the cache is filled, in fresh processes.

Each round gives ``NUMBA_CACHE_DIR`` a new empty directory (what a fresh install has: no
compiled kernel anywhere) and runs, in fresh processes of this checkout's CLI (``python -m
ratings.cli``, the program itself):

1. ``ratings next HIST.csv --submissions SUBS.csv --judges j1,j2,j3 --n N`` (first use): a plan
   of ``--n`` matches on a history of ``--history`` verdicts (``--models`` 100, ``--tasks``
   400, uniformly random matches). Until the planner's loops are cached it picks with their
   NumPy twins, and then starts their compilation in a detached background process
   (``sampling.warmup``); the benchmark waits for that to finish (its time is reported, not
   part of the command's);
2. the same command again (cached: the compiled loops load from the cache the first run
   filled); the two plans must be equal;
3. ``ratings fit LOG.csv --out ...`` on ``--fit-n`` verdicts (200 models, 1,000 tasks) with
   another new empty cache directory, then again with it (cached); the two tables must be
   equal.

Wall time and the child's CPU time (user + system, from ``getrusage``) per command; ratios
first / cached per round and their medians. The 1-minute load average is recorded before and
after each round: the machine is shared, so compare the ratios (both commands of a round run
back to back), not the seconds. Writes ``results/bench_first_use.csv``.

    python benchmarks_perf/bench_first_use.py               # 3 rounds (~5 min)
    python benchmarks_perf/bench_first_use.py --rounds 1 --n 500
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's packages
sys.path.insert(0, str(HERE))

from bench_fit_common import simulate  # noqa: E402

from ratings.io import write_atomic  # noqa: E402
from sampling.design.simulate import judge_matches, make_board, uniform_matches  # noqa: E402

JUDGES = "judge-1,judge-2,judge-3"


def load() -> float:
    return round(os.getloadavg()[0], 2)


def run(cmd: list[str], cache: Path) -> tuple[float, float]:
    """Wall and CPU seconds of ``cmd`` in a fresh process with ``NUMBA_CACHE_DIR=cache``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(HERE.parent))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    tic = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)  # fmt: skip
    wall = time.perf_counter() - tic
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def wait_for_compilation(cache: Path, timeout: float = 900.0) -> float:
    """Seconds until the background compilation started by ``ratings next`` (its lock file
    under ``cache``) is over."""
    tic = time.perf_counter()
    time.sleep(0.5)
    while time.perf_counter() - tic < timeout:
        if not list(cache.rglob("sampling-compiling.lock")):
            return time.perf_counter() - tic
        time.sleep(0.5)
    raise TimeoutError(f"the background compilation under {cache} did not finish")


def make_inputs(work: Path, history: int, fit_n: int, models: int = 100,
                tasks: int = 400) -> tuple[Path, Path, Path]:  # fmt: skip
    board = make_board(models, tasks, seed=0)
    subs = board.submissions[["model", "task_id"]]
    log = judge_matches(uniform_matches(subs, board.judges, history, seed=0), board, seed=0)
    hist, subs_path, fit_log = work / "hist.csv", work / "subs.csv", work / "log.csv"
    log.to_csv(hist, index=False)
    subs.to_csv(subs_path, index=False)
    simulate(fit_n, 200, 1000, seed=0).to_csv(fit_log, index=False)
    return hist, subs_path, fit_log


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--n", type=int, default=5000, help="matches to plan")
    p.add_argument("--history", type=int, default=200_000, help="verdicts of history")
    p.add_argument("--models", type=int, default=100, help="models of the planned board")
    p.add_argument("--tasks", type=int, default=400, help="tasks of the planned board")
    p.add_argument("--fit-n", type=int, default=1_000_000, help="verdicts of the fitted log")
    p.add_argument("--out", default=str(HERE / "results" / "bench_first_use.csv"))
    args = p.parse_args(argv)
    cli = [sys.executable, "-m", "ratings.cli"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_first_use_") as tmp:
        work = Path(tmp)
        hist, subs, fit_log = make_inputs(work, args.history, args.fit_n, args.models,
                                          args.tasks)  # fmt: skip
        print(f"inputs ready; load {os.getloadavg()}", flush=True)
        for r in range(args.rounds):
            plan_cmd = [*cli, "next", str(hist), "--submissions", str(subs), "--judges", JUDGES,
                        "--n", str(args.n), "--seed", "1", "-o"]  # fmt: skip
            fit_cmd = [*cli, "fit", str(fit_log), "--out"]
            cache = work / f"next-cache-{r}"
            cache.mkdir()
            before = load()
            first = run([*plan_cmd, str(work / "first.csv")], cache)
            compile_s = wait_for_compilation(cache)
            cached = run([*plan_cmd, str(work / "cached.csv")], cache)
            same = (work / "first.csv").read_bytes() == (work / "cached.csv").read_bytes()
            rows.append({"round": r, "command": f"next --n {args.n} ({args.models} models)",
                         "first_s": first[0],
                         "cached_s": cached[0], "ratio": first[0] / cached[0],
                         "first_cpu_s": first[1], "cached_cpu_s": cached[1],
                         "cpu_ratio": first[1] / cached[1], "background_compile_s": compile_s,
                         "same_output": same, "load_before": before, "load_after": load()})
            cache = work / f"fit-cache-{r}"
            cache.mkdir()
            before = load()
            first = run([*fit_cmd, str(work / "fit_first.csv")], cache)
            cached = run([*fit_cmd, str(work / "fit_cached.csv")], cache)
            same = (work / "fit_first.csv").read_bytes() == (work / "fit_cached.csv").read_bytes()
            rows.append({"round": r, "command": f"fit ({args.fit_n} verdicts)",
                         "first_s": first[0], "cached_s": cached[0],
                         "ratio": first[0] / cached[0], "first_cpu_s": first[1],
                         "cached_cpu_s": cached[1], "cpu_ratio": first[1] / cached[1],
                         "background_compile_s": float("nan"), "same_output": same,
                         "load_before": before, "load_after": load()})  # fmt: skip
            print(pd.DataFrame(rows[-2:]).to_string(index=False, float_format="{:.2f}".format),
                  flush=True)  # fmt: skip
    frame = pd.DataFrame(rows)
    write_atomic(frame, Path(args.out))
    summary = frame.groupby("command", sort=False).agg(
        first_s=("first_s", "median"), cached_s=("cached_s", "median"),
        ratio=("ratio", "median"), ratio_min=("ratio", "min"), ratio_max=("ratio", "max"),
        cpu_ratio=("cpu_ratio", "median"), background_compile_s=("background_compile_s", "median"),
        same_output=("same_output", "all"), load_min=("load_before", "min"),
        load_max=("load_after", "max"))  # fmt: skip
    print("\nmedians over rounds (ratio: first use / cached, each round's pair run back to back):")
    print(summary.to_string(float_format="{:.2f}".format))
    print(f"wrote {args.out}")
    if not frame["same_output"].all():
        print("error: a first-use output differs from the cached one", file=sys.stderr)
        return 1
    return 0 if statistics.median(frame["ratio"]) > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
