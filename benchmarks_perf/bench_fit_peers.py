"""The peer-library runners of ``bench_fit.py``: evalica, choix and arena-rank on the main log, and
statsmodels' GLM on a small log next to ours. Each adds its rows to the results table and skips
itself (a row saying so) if its library is not installed."""

from __future__ import annotations

import numpy as np
import pandas as pd
from bench_fit_common import (
    WINNER_Y,
    Table,
    centred_diff,
    choix_counts,
    floor,
    glm_design,
    measure,
    rel_se_diff,
    simulate,
    size_label,
)

__all__ = [
    "peer_arena",
    "peer_choix",
    "peer_evalica",
    "small_statsmodels",
]


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
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):  # as ours runs its dense algebra
        sec, times, _ = measure(lambda: run(df), reps, budget)
    tab.add(section, "  choix: the same on one BLAS thread", sec, times=times,
            notes="OpenBLAS's spinning threads stall when other processes hold cores")  # fmt: skip
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
