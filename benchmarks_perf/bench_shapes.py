"""The default fit and its table on the shapes of boards teams fit, against the HC0 fit and the
peers, in one run.

Shapes (simulated, strings as pandas reads them): a small dense board (20 models, 2k verdicts,
100 tasks), a sparse one (30 models, 6k verdicts, 200 tasks), one baseline (57 models each
against one baseline on 805 prompts, 46k verdicts), a medium board (100 models, 100k verdicts,
1,000 tasks), Crowd-BT (24 models, 3 judges, 20k verdicts, 200 tasks), an arena (200 models, 50k
prompts of one verdict each), the headline (1M verdicts, 200 models, 1,000 tasks) and 1,000
models (1M verdicts, 1,000 tasks; ``models1000``, where the M x M algebra dominates: the fit alone
against choix's point estimate).

Per shape, in one process, after one untimed call of each, the methods are timed in turn
(``--repeats`` rounds, each method once per round; medians reported). The peers are timed
the same way, but first and in a child process of their own (``--peers-in-process`` times them
interleaved with ours): arena-rank's JAX compiles in background threads that outlive its calls
and would otherwise run beside our timings. Ours against HC0 is side by side; ours against a
peer is two medians taken one after the other:

* ``default fit`` / ``default fit + table``: ``ratings.fit(df)`` (CR2 intervals by ``task_id``,
  Satterthwaite df), then ``.to_frame()`` (every model's df and the simultaneous rank
  intervals, which need every pair's df);
* ``HC0 fit`` / ``HC0 fit + table``: the same with ``cluster=None``;
* ``choix``: dense counts + ``ilsr_pairwise_dense`` (a point estimate; its "table" the estimate
  sorted into a frame); ``evalica``: ``bradley_terry`` (likewise); ``arena-rank``:
  ``PairDataset`` + ``BradleyTerry.fit`` (fit) and ``compute_ratings_and_cis`` (sandwich
  intervals: its table). The peers fit Bradley-Terry on every shape (on the Crowd-BT board they
  ignore the judges).

``--phases`` adds, per shape, where the default table's time goes (fit, the models' df, the
pairs' df, the rank intervals) and which df path ran for the models and the pairs (exact,
sparse exact, the one-direction approximation streamed or from the series' rows) with the
reason the cost model gave, and where the HC0 and default fits' time goes: their stages
(reading and aggregating, existence, Newton and its solves, the bread, the covariance and its
CR2 or HC0 parts, the result) timed in place, beside choix's dense counts and its
``ilsr_pairwise_dense`` apart. Writes ``results/bench_shapes.csv``; the load average is recorded
with every row (2 shared cores: read the ratios, measured side by side).

    python benchmarks_perf/bench_shapes.py                 # every shape (~3 min)
    python benchmarks_perf/bench_shapes.py --phases --shapes sparse one_baseline
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing
import os
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_fit_common import WINNER_Y, choix_counts, simulate  # noqa: E402

RESULTS = HERE / "results" / "bench_shapes.csv"


def one_baseline(n_models: int = 58, n_prompts: int = 805, seed: int = 0) -> pd.DataFrame:
    """Every model but the first against the first (the baseline) once on every prompt, with a
    per-(model, prompt) effect (sd 0.3) and 10 % ties."""
    rng = np.random.default_rng(seed)
    s = rng.normal(0.0, 1.0, n_models)
    u = rng.normal(0.0, 0.3, (n_models, n_prompts))
    a = np.repeat(np.arange(1, n_models), n_prompts)
    t = np.tile(np.arange(n_prompts), n_models - 1)
    p = 1.0 / (1.0 + np.exp(-(s[a] - s[0] + u[a, t] - u[0, t])))
    x = rng.random(a.size)
    w = np.where(x < 0.1, 2, np.where(rng.random(a.size) < p, 0, 1))
    names = np.array([f"model-{k:03d}" for k in range(n_models)], dtype=object)
    return pd.DataFrame({"model_a": names[a], "model_b": names[0],
                         "winner": np.array(["A", "B", "tie"], dtype=object)[w],
                         "task_id": np.array([f"prompt-{k:04d}" for k in range(n_prompts)],
                                             dtype=object)[t]})  # fmt: skip


def arena(n: int = 50_000, n_models: int = 200, seed: int = 0) -> pd.DataFrame:
    """``n`` verdicts over ``n_models`` models, each on its own prompt, 10 % ties."""
    rng = np.random.default_rng(seed)
    s = rng.normal(size=n_models)
    a = rng.integers(0, n_models, n)
    b = (a + rng.integers(1, n_models, n)) % n_models
    p = 1.0 / (1.0 + np.exp(-(s[a] - s[b])))
    w = np.where(rng.random(n) < 0.1, 2, np.where(rng.random(n) < p, 0, 1))
    names = np.array([f"m{k:04d}" for k in range(n_models)], dtype=object)
    return pd.DataFrame({"model_a": names[a], "model_b": names[b],
                         "winner": np.array(["A", "B", "tie"], dtype=object)[w],
                         "task_id": np.array([f"p{k:06d}" for k in range(n)], dtype=object)})


def crowd(n: int = 20_000, n_models: int = 24, n_tasks: int = 200, seed: int = 0) -> pd.DataFrame:
    from bench_crowd import simulate as crowd_simulate

    return crowd_simulate(n, n_models, n_tasks, seed=seed)[0]


#: name -> (description, builder, model)
SHAPES: dict[str, tuple[str, Callable[[], pd.DataFrame], str]] = {
    "small": ("20 models, 2k verdicts, 100 tasks", lambda: simulate(2_000, 20, 100), "bt"),
    "sparse": ("30 models, 6k verdicts, 200 tasks", lambda: simulate(6_000, 30, 200), "bt"),
    "one_baseline": ("58 models against one baseline, 805 prompts, 46k verdicts", one_baseline,
                     "bt"),
    "medium": ("100 models, 100k verdicts, 1,000 tasks", lambda: simulate(100_000, 100, 1_000),
               "bt"),
    "crowd": ("Crowd-BT, 24 models, 3 judges, 20k verdicts, 200 tasks", crowd, "crowd-bt"),
    "arena": ("arena: 200 models, 50k one-verdict prompts", arena, "bt"),
    "headline": ("1M verdicts, 200 models, 1,000 tasks",
                 lambda: simulate(1_000_000, 200, 1_000), "bt"),
    "models1000": ("1,000 models, 1M verdicts, 1,000 tasks",
                   lambda: simulate(1_000_000, 1_000, 1_000), "bt"),
}


def load() -> float:
    return round(os.getloadavg()[0], 2)


def interleaved(methods: dict[str, Callable[[], object]], repeats: int) -> dict[str, list]:
    """One untimed call of each method, then ``repeats`` rounds timing each once in turn."""
    for fn in methods.values():
        fn()
    times: dict[str, list] = {k: [] for k in methods}
    for _ in range(repeats):
        for name, fn in methods.items():
            gc.collect()
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return times


def ours(df: pd.DataFrame, model: str, cluster: str | None, table: bool):
    import ratings

    def run():
        r = ratings.fit(df, model=model) if cluster else ratings.fit(df, model=model,
                                                                      cluster=None)
        return r.to_frame() if table else r

    return run


def peers(df: pd.DataFrame) -> dict[str, Callable[[], object]]:
    """The peers' fit alone and fit plus table (names ``peer: fit`` / ``peer: fit + table``)."""
    out: dict[str, Callable[[], object]] = {}
    try:
        import choix

        def choix_fit():
            counts, labels = choix_counts(df)
            return pd.Series(choix.ilsr_pairwise_dense(counts), index=labels)

        out["choix: fit"] = choix_fit
        try:  # ours runs its dense algebra on one BLAS thread: choix likewise, for comparison
            from threadpoolctl import threadpool_limits

            def choix_fit_one_thread():
                with threadpool_limits(1, user_api="blas"):
                    return choix_fit()

            out["choix (1 BLAS thread): fit"] = choix_fit_one_thread
        except ImportError:
            pass
        out["choix: fit + table"] = lambda: choix_fit().sort_values(ascending=False).to_frame()
    except ImportError:
        pass
    try:
        import evalica

        enum = {"A": evalica.Winner.X, "B": evalica.Winner.Y, "tie": evalica.Winner.Draw}

        def evalica_fit():
            return evalica.bradley_terry(df["model_a"], df["model_b"], df["winner"].map(enum))

        out["evalica: fit"] = evalica_fit
        out["evalica: fit + table"] = lambda: evalica_fit().scores.sort_values(
            ascending=False).to_frame()
    except ImportError:
        pass
    try:
        from arena_rank.models.bradley_terry import BradleyTerry
        from arena_rank.utils.data_utils import PairDataset

        def arena_fit():
            ds = PairDataset.from_pandas(df, outcome_map=WINNER_Y)
            bt = BradleyTerry(len(ds.competitors))
            bt.fit(ds)
            return ds, bt

        def arena_table():
            ds, bt = arena_fit()
            return bt.compute_ratings_and_cis(ds)

        out["arena-rank: fit"] = lambda: arena_fit()[1]
        out["arena-rank: fit + table"] = arena_table
    except ImportError:
        pass
    return out


def peer_times(shape: str, names: list[str], repeats: int) -> dict[str, list[float]]:
    """The peers' timings on ``shape``'s board, in a process of their own (see :func:`main`)."""
    df = SHAPES[shape][1]()
    methods = {k: v for k, v in peers(df).items() if k.split(":")[0].split(" (")[0] in names}
    return interleaved(methods, repeats) if methods else {}


def phases(df: pd.DataFrame, model: str) -> list[dict]:
    """Where the default table's time goes, and which df path ran and why."""
    import ratings

    rows = []
    t0 = time.perf_counter()
    r = ratings.fit(df, model=model)
    t1 = time.perf_counter()
    _ = r.model_df
    t2 = time.perf_counter()
    _ = r.pair_df()
    t3 = time.perf_counter()
    r.to_frame()
    t4 = time.perf_counter()
    from ratings.inference.cluster import cr2_plan

    inf = r.inference
    m = len(r.models)
    for what, n_contrasts, sec in (("models' df", m, t2 - t1),
                                   ("pairs' df", m * (m - 1) // 2, t3 - t2)):
        path, why = inf.df_plan(n_contrasts, pairs=what.startswith("pairs"))
        rows.append({"phase": what, "seconds": sec, "path": path, "why": why})
    path, why = cr2_plan(np.diff(inf.rows.starts), inf.free.size)
    rows.insert(0, {"phase": "fit (CR2 path)", "seconds": t1 - t0, "path": path, "why": why})
    rows.append({"phase": "rank intervals + frame", "seconds": t4 - t3, "path": "", "why": ""})
    return rows


#: The stages of a fit timed in place by :func:`stages` (module, attribute, label): where the
#: fitting code calls them, so nested stages (Newton's solves inside the fit) are parts of
#: their callers' rows.
STAGES = (
    ("ratings.api.fitting", "load_with", "read, validate and aggregate the log"),
    ("ratings.api.fitting", "check_identified", "existence of the estimate"),
    ("ratings.api.fitting", "fit_bt", "Newton's fit"),
    ("ratings.models.newton", "solve_pd", "  of which: Newton's solves"),
    ("ratings.inference.covariance", "inverse_free",
     "the bread (factorisation + inverse; on the pool beside the meat or CR2's rows)"),
    ("ratings.api.fitting", "build", "the interval's covariance"),
    ("ratings.api.fitting", "bt_inference", "  of which: CR2's pieces"),
    ("ratings.inference.cluster", "matmul", "    of which: the series' G x P by P x P products"),
    ("ratings.inference.builder", "bread_meat_bread", "  of which: HC0's bread meat bread"),
    ("ratings.api.fitting", "labelled", "the result (labels, anchor)"),
)


def stages(df: pd.DataFrame, model: str, repeats: int) -> list[dict]:
    """Where the HC0 and the default fit's time goes: the stages of :data:`STAGES` timed in
    place (medians of ``repeats`` fits, each stage's calls summed per fit), with choix's dense
    counts and its ``ilsr_pairwise_dense`` apart (on one BLAS thread)."""
    import importlib

    import ratings

    spent: dict[str, float] = {}
    saved = []

    def timed(original, label):
        def run(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - t0

        return run

    rows = []
    try:
        for module, name, label in STAGES:
            mod = importlib.import_module(module)
            saved.append((mod, name, getattr(mod, name)))
            setattr(mod, name, timed(getattr(mod, name), label))
        for what, kw in (("HC0 fit", {"cluster": None}), ("default fit", {})):
            per: dict[str, list[float]] = {}
            for _ in range(repeats):
                spent.clear()
                gc.collect()
                t0 = time.perf_counter()
                ratings.fit(df, model=model, **kw)
                spent["total"] = time.perf_counter() - t0
                for k, v in spent.items():
                    per.setdefault(k, []).append(v)
            for _, _, label in (*STAGES, (None, None, "total")):
                if label in per:
                    rows.append({"phase": f"{what}: {label.strip()}", "indent": label,
                                 "seconds": statistics.median(per[label])})  # fmt: skip
    finally:
        for mod, name, original in saved:
            setattr(mod, name, original)
    if model == "bt":
        try:
            import choix
            from threadpoolctl import threadpool_limits
        except ImportError:
            return rows
        parts: dict[str, list[float]] = {"dense counts": [], "ilsr_pairwise_dense": []}
        with threadpool_limits(1, user_api="blas"):
            for _ in range(repeats):
                gc.collect()
                t0 = time.perf_counter()
                counts, _ = choix_counts(df)
                t1 = time.perf_counter()
                choix.ilsr_pairwise_dense(counts)
                parts["dense counts"].append(t1 - t0)
                parts["ilsr_pairwise_dense"].append(time.perf_counter() - t1)
        for k, v in parts.items():
            rows.append({"phase": f"choix (1 BLAS thread): {k}", "indent": k,
                         "seconds": statistics.median(v)})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", nargs="*", default=list(SHAPES), choices=list(SHAPES))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--peers", nargs="*", default=["choix", "evalica", "arena-rank"],
                    help="which peers to time (e.g. --peers choix at 1,000 models)")
    ap.add_argument("--peers-in-process", action="store_true",
                    help="time the peers in this process, interleaved with ours (by default "
                         "they run first in a child process: arena-rank's JAX keeps compiling "
                         "in background threads after its calls return)")
    ap.add_argument("--phases", action="store_true", help="the df paths and where time goes")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    import ratings

    print(f"ratings {ratings.__version__}, pandas {pd.__version__}, numpy {np.__version__}, "
          f"load {os.getloadavg()}", flush=True)  # fmt: skip
    out = []
    for name in args.shapes:
        desc, build, model = SHAPES[name]
        df = build()
        methods = {
            "default fit + table": ours(df, model, "task_id", True),
            "HC0 fit + table": ours(df, model, None, True),
            "default fit": ours(df, model, "task_id", False),
            "HC0 fit": ours(df, model, None, False),
        }
        peer_runs: dict[str, list[float]] = {}
        if not args.no_peers and args.peers_in_process:
            methods.update({k: v for k, v in peers(df).items()
                            if k.split(":")[0].split(" (")[0] in args.peers})  # fmt: skip
        elif not args.no_peers and args.peers:
            spawn = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(1, mp_context=spawn) as pool:
                peer_runs = pool.submit(peer_times, name, args.peers, args.repeats).result()
        before = load()
        times = {**interleaved(methods, args.repeats), **peer_runs}
        med = {k: statistics.median(v) for k, v in times.items()}
        ref = med["HC0 fit + table"]
        print(f"\n[{name}] {desc}: {len(df):,} verdicts (load {before} -> {load()})")
        for k, v in med.items():
            spread = f"{min(times[k]):.3f}-{max(times[k]):.3f}"
            print(f"  {k:<28} {v:8.3f} s  ({spread})  x HC0 table {v / ref:6.2f}")
            out.append({"shape": name, "board": desc, "verdicts": len(df), "method": k,
                        "seconds": round(v, 4), "min_seconds": round(min(times[k]), 4),
                        "x_hc0_table": round(v / ref, 3), "repeats": len(times[k]),
                        "load1": load(), "phase_path": "", "phase_why": ""})  # fmt: skip
        if "arena-rank: fit + table" in med:
            print(f"  default table / arena-rank's: "
                  f"{med['default fit + table'] / med['arena-rank: fit + table']:.2f}")
        if args.phases:
            print("  phases of the default table:")
            for p in phases(df, model):
                print(f"    {p['phase']:<24} {p['seconds']:8.3f} s  {p['path']:<22} {p['why']}")
                out.append({"shape": name, "board": desc, "verdicts": len(df),
                            "method": f"phase: {p['phase']}", "seconds": round(p["seconds"], 4),
                            "min_seconds": None, "x_hc0_table": None, "repeats": 1,
                            "load1": load(), "phase_path": p["path"],
                            "phase_why": p["why"]})  # fmt: skip
            print("  where the fits' time goes (stages timed in place, medians):")
            for p in stages(df, model, args.repeats):
                print(f"    {p['phase']:<68} {p['seconds']:8.4f} s")
                out.append({"shape": name, "board": desc, "verdicts": len(df),
                            "method": f"stage: {p['phase']}", "seconds": round(p["seconds"], 4),
                            "min_seconds": None, "x_hc0_table": None, "repeats": args.repeats,
                            "load1": load(), "phase_path": "", "phase_why": ""})  # fmt: skip
        del df
    args.out.parent.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(out)
    if args.out.exists() and set(args.shapes) != set(SHAPES):  # keep the other shapes' rows
        old = pd.read_csv(args.out)
        frame = pd.concat([old[~old["shape"].isin(args.shapes)], frame], ignore_index=True)
    frame.to_csv(args.out, index=False)
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
