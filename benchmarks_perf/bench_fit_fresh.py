"""The fresh-process runs of ``bench_fit.py``: the cold first call of ``ratings.fit`` (and its peak
memory) in new subprocesses of ``bench_fit.py --cold-child``, ``ratings fit FILE.csv`` in new
processes (alone and against the fresh-process floor), and, for ``--headline``, ours with full
intervals against choix's point estimate at many models."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
from bench_fit_common import HERE, Table, Times, centred_diff, floor, measure, simulate, size_label
from bench_fit_peers import peer_choix

__all__ = [
    "BENCH_FIT",
    "FLOOR_CHILD",
    "IMPORT_CHILD",
    "cold_child",
    "dense_algebra",
    "lazy_outputs",
    "run_cli",
    "run_cli_vs_floor",
    "run_cold",
    "run_large_vs_choix",
]

#: The script whose ``--cold-child`` option runs :func:`cold_child` in a fresh process.
BENCH_FIT = HERE / "bench_fit.py"


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
        cmd = [sys.executable, str(BENCH_FIT), "--cold-child",
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
            cmd = [sys.executable, "-m", "ratings.cli.app", "fit", str(path), "--out",
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


def _child(cmd: list[str], env: dict, cwd: Path | None = None) -> tuple[float, float]:
    """Wall and CPU (user + system, children included) seconds of one fresh process, run in
    ``cwd`` (default: this checkout's root)."""
    before = os.times()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                          cwd=HERE.parent if cwd is None else cwd, timeout=600)  # fmt: skip
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
    The CLI runs from this checkout (``python -m ratings.cli.app``, working directory its root)
    with the on-disk numba cache and the package's bytecode written by one untimed run first."""
    walls: dict[str, Times] = {"floor": Times(), "ours": Times()}
    for t in walls.values():
        t.cpu = []
    imports: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"verdicts_{size_label(n)}.csv"
        simulate(n, m, tasks, seed).to_csv(path, index=False)
        out = Path(tmp) / "ratings.csv"
        cmds = {"floor": [sys.executable, "-c", FLOOR_CHILD, str(path)],
                "ours": [sys.executable, "-m", "ratings.cli.app", "fit", str(path), "--out",
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
            imports.append(_scipy_import(env))
    floor = statistics.median(walls["floor"])
    tab.floor[section] = floor
    label = f"{size_label(n)}.csv, {m} models"
    tab.add(section, f"fresh-process floor: read_csv + factorize x4  [{label}]", floor,
            times=walls["floor"], notes="python -c: import pandas, pd.read_csv, 4 factorizes")
    ours = statistics.median(walls["ours"])
    tab.add(section, f"ours CLI: ratings fit FILE.csv --out ...  [{label}]", ours,
            times=walls["ours"],
            notes=f"fresh process; x floor per pair {_pair_ratios(walls)}")  # fmt: skip
    imported = statistics.median(imports)
    tab.add(section, "  of which: importing scipy.sparse (fresh process)",
            imported, times=imports,
            notes="timed inside a fresh Python after pandas; the CLI's Satterthwaite degrees "
                  "of freedom need it (its t quantiles are NumPy's)")  # fmt: skip
    tab.add(section, "  ours CLI less those imports  [bound: a free replacement for them]",
            ours - imported, times=[ours - imported],
            notes="median CLI minus median import")


#: A fresh Python that imports pandas, then times importing what the CLI's t intervals need.
IMPORT_CHILD = """
import time
import pandas
t0 = time.perf_counter()
import scipy.sparse
print(time.perf_counter() - t0)
"""


def _scipy_import(env: dict) -> float:
    """Seconds a fresh process spends importing scipy.sparse after pandas."""
    proc = subprocess.run([sys.executable, "-c", IMPORT_CHILD], capture_output=True, text=True,
                          env=env, cwd=HERE.parent, timeout=600, check=True)  # fmt: skip
    return float(proc.stdout.strip().splitlines()[-1])


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
    dense_algebra(tab, section, ratings, df, reps)
    peer_choix(tab, section, df, ours, reps, budget, lambda *_: True)
    lazy_outputs(tab, section, ratings, df, reps, budget)


def dense_algebra(tab: Table, section: str, ratings, df: pd.DataFrame, reps: int) -> None:
    """The M x M algebra inside the clustered fits just timed, measured in place: Newton's
    solves (one Cholesky factorisation each), the bread (factorisation and inverse) and the
    CR2 series' G x M by M x M products; with the factorize floor, what a fit with these
    intervals costs before any pass over the verdicts."""
    import ratings.inference.cluster as cluster
    import ratings.inference.covariance as uncertainty
    import ratings.models.newton as optim

    spent = {"solve": [0.0, 0], "inverse": [0.0, 0], "product": [0.0, 0]}

    def spy(module, name: str, key: str):
        original = getattr(module, name)

        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            out = original(*args, **kwargs)
            spent[key][0] += time.perf_counter() - t0
            spent[key][1] += 1
            return out

        return original, timed

    patches = [(optim, "solve_pd", "solve"),  # Newton's solves (its own name of the function)
               (uncertainty, "inverse_pd", "inverse"), (cluster, "matmul", "product")]
    runs: dict[str, list[float]] = {key: [] for key in spent}
    counts: dict[str, int] = {}
    saved = []
    try:
        for module, name, key in patches:
            original, timed = spy(module, name, key)
            saved.append((module, name, original))
            setattr(module, name, timed)
        for _ in range(reps):
            for v in spent.values():
                v[:] = [0.0, 0]
            ratings.fit(df)
            for key, (sec, n) in spent.items():
                runs[key].append(sec)
                counts[key] = n
    finally:
        for module, name, original in saved:
            setattr(module, name, original)
    labels = {"solve": "Newton's solves (a Cholesky factorisation each)",
              "inverse": "the bread (factorisation + inverse)",
              "product": "the CR2 series' G x M by M x M products"}  # fmt: skip
    total = tab.floor[section]
    for key, label in labels.items():
        sec = statistics.median(runs[key])
        total += sec
        tab.add(section, f"  of which: {label}", sec, times=runs[key],
                notes=f"{counts[key]} per fit; timed inside fit(df)")
    tab.add(section, "  floor + that algebra  [bound for a fit with these intervals]", total,
            times=[total], notes="the factorize floor plus the three rows above (medians)")


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
