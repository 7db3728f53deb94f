"""Shared pieces of ``bench_fit.py``: the simulated verdict log, timing, the results table and the
glue that turns a log into the inputs of the peer libraries (imported by ``bench_fit_peers.py``
and ``bench_fit_fresh.py`` as well)."""

from __future__ import annotations

import gc
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "COLUMNS",
    "HERE",
    "WINNER_Y",
    "Table",
    "Times",
    "centred_diff",
    "choix_counts",
    "floor",
    "glm_design",
    "measure",
    "model_codes",
    "outcome_y",
    "rel_se_diff",
    "simulate",
    "size_label",
]

HERE = Path(__file__).resolve().parent

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
# The floor and the glue from a verdict log to the peers' inputs
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
