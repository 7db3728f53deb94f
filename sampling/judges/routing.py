"""Judge routing: which judges may decide the matches on each task, and the panel's best levels.

Tasks with audio or video go to the judges that handle them. A routing table lists, per task,
the judges allowed on it (``task_id``, ``judge``; several rows per task); a task it does not
list allows the whole panel. The planner keeps the panel as level as the routing allows: the
forced matches go where they must, and the free ones fill the judges with the fewest matches.

:func:`panel_targets` finds those per-judge counts. Assigning ``n`` matches, each with a set of
allowed judges, so that the judges' totals (history + plan) are as even as possible is a
load-balancing problem with restricted assignment, a flow problem: the totals minimising
``sum_j T_j^2`` are also the ones with the smallest maximum and the largest minimum (the
lexicographically optimal base of a polymatroid; Fujishige, *Submodular Functions and
Optimization*, 2005, ch. 8), and an assignment is optimal exactly when no match can be moved
along a chain of judges from one judge to another that has at least two fewer matches.
"""

from __future__ import annotations

import warnings
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.kit import format_names, format_rows, option, require_columns
from sampling.board.inputs import PlanWarning

__all__ = ["PanelTargets", "panel_targets", "routing_mask", "routing_table"]


def routing_table(task_judges: pd.DataFrame | Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """Check a routing table and return it as ``task_id``, ``judge`` text columns.

    Parameters
    ----------
    task_judges : DataFrame or mapping
        A frame with columns ``task_id`` and ``judge`` (one row per allowed judge; other columns
        are ignored), or a mapping ``{task_id: [judge, ...]}``.

    Returns
    -------
    pandas.DataFrame
        ``task_id`` and ``judge`` as stripped strings, duplicates removed.

    Raises
    ------
    ValueError
        Missing columns, missing or empty values (rows named), or a task mapped to no judge.
    TypeError
        Neither a DataFrame nor a mapping.
    """
    if isinstance(task_judges, Mapping):
        empty = [str(t) for t, js in task_judges.items() if isinstance(js, str) or not list(js)]
        if empty:
            raise ValueError(
                "`task_judges` must map each task to a non-empty list of judges; got none (or a "
                f"single string) for {empty[:8]}."
            )
        rows = [(str(t), str(j)) for t, js in task_judges.items() for j in js]
        frame = pd.DataFrame(rows, columns=["task_id", "judge"])
    elif isinstance(task_judges, pd.DataFrame):
        require_columns(task_judges, ["task_id", "judge"], option("task_judges"),
                        hint="The routing table lists the judges allowed on a task, one row "
                        "per (task_id, judge).", error=ValueError)  # fmt: skip
        frame = task_judges[["task_id", "judge"]].reset_index(drop=True)
    else:
        raise TypeError(
            "`task_judges` must be a DataFrame with columns 'task_id' and 'judge' or a mapping "
            f"{{task_id: [judges]}}; got {type(task_judges).__name__!r}."
        )
    out = {}
    for col in ("task_id", "judge"):
        text = frame[col].astype("string").str.strip()
        bad = (text.isna() | (text == "")).to_numpy(dtype=bool)
        if bad.any():
            rows = np.flatnonzero(bad)
            raise ValueError(
                f"{option('task_judges')} has {rows.size} row(s) with an empty "
                f"{col!r}, at rows {format_rows(rows)}. Fill or drop those rows."
            )
        out[col] = text.to_numpy(dtype=object)
    return pd.DataFrame(out).drop_duplicates(ignore_index=True)


def routing_mask(
    task_judges: pd.DataFrame | Mapping[str, Sequence[str]] | None,
    tasks: pd.Index,
    judges: pd.Index,
) -> NDArray[np.bool_] | None:
    """``allowed[t, j]``: judge ``j`` may decide matches on task ``t``; ``None`` without routing.

    Parameters
    ----------
    task_judges : DataFrame, mapping or None
        See :func:`routing_table`. Tasks it does not list allow every judge.
    tasks, judges : pandas.Index
        The board's tasks and the judge panel.

    Raises
    ------
    ValueError
        The table names a judge outside the panel (with its rows).

    Warns
    -----
    PlanWarning
        Tasks in the table that no submission has (they are ignored).
    """
    if task_judges is None:
        return None
    table = routing_table(task_judges)
    j = judges.get_indexer(table["judge"])
    if (j < 0).any():
        rows = np.flatnonzero(j < 0)
        names = sorted(set(table["judge"][rows].tolist()))
        raise ValueError(
            f"{option('task_judges')} names judge(s) {format_names(names)} that are not in the "
            f"panel {judges.tolist()} (rows {format_rows(rows)}). Add them to "
            f"{option('judges')} or fix the routing table."
        )
    t = tasks.get_indexer(table["task_id"])
    unknown = sorted(set(table["task_id"][t < 0].tolist()))
    if unknown:
        warnings.warn(
            f"{len(unknown)} task(s) in `task_judges` have no submissions and are ignored: "
            f"{format_names(unknown)}.",
            PlanWarning,
            stacklevel=3,
        )
    listed = np.zeros((len(tasks), len(judges)), dtype=bool)
    listed[t[t >= 0], j[t >= 0]] = True
    return np.where(listed.any(axis=1, keepdims=True), listed, True)


@dataclass(frozen=True, eq=False)
class PanelTargets:
    """The panel's best per-judge counts for a set of matches, and how each group reaches them.

    Attributes
    ----------
    plan : ndarray of int, shape (J,)
        Matches per judge in the plan.
    group : ndarray of int, shape (n,)
        The group of each match (matches with the same allowed judges).
    quota : ndarray of int, shape (G, J)
        Matches of each group given to each judge (zero where the judge is not allowed).
    """

    plan: NDArray[np.int64]
    group: NDArray[np.int64]
    quota: NDArray[np.int64]


def panel_targets(
    allowed: NDArray[np.bool_], total: NDArray[np.int64], rng: np.random.Generator | None = None
) -> PanelTargets:
    """Per-judge counts that make the panel's totals (history + plan) as even as routing allows.

    Parameters
    ----------
    allowed : ndarray of bool, shape (n, J)
        The judges allowed on each match (at least one per row).
    total : ndarray of int, shape (J,)
        Matches per judge so far.
    rng : numpy.random.Generator, optional
        Orders the judges for ties (default: panel order).

    Returns
    -------
    PanelTargets
        ``total + plan`` minimises ``sum_j (total_j + plan_j)^2``, hence also the largest
        total and the spread (see the module notes).
    """
    allowed = np.asarray(allowed, dtype=bool)
    n_judges = allowed.shape[1]
    if allowed.shape[0] and not allowed.any(axis=1).all():
        raise ValueError("Every match needs at least one allowed judge.")
    sets, group = np.unique(allowed, axis=0, return_inverse=True)
    group = group.reshape(-1).astype(np.int64)
    size = np.bincount(group, minlength=len(sets))
    prio = np.arange(n_judges) if rng is None else np.argsort(rng.permutation(n_judges))
    load = np.asarray(total, dtype=np.int64).copy()
    quota = np.zeros(sets.shape, dtype=np.int64)
    for g in np.argsort(sets.sum(axis=1), kind="stable"):  # most restricted groups first
        ok = np.flatnonzero(sets[g])
        for _ in range(int(size[g])):  # water-filling, one match at a time
            j = ok[np.lexsort((prio[ok], load[ok]))[0]]
            quota[g, j] += 1
            load[j] += 1
    while _improve(sets, quota, load, prio):
        pass
    return PanelTargets(quota.sum(axis=0), group, quota)


def _improve(sets, quota, load, prio) -> bool:
    """Move matches along one chain from a judge to one at least two lighter; False if none."""
    for a in np.lexsort((prio, -load)):  # heaviest first
        parent = {int(a): (-1, -1)}
        queue = deque([int(a)])
        while queue:
            u = queue.popleft()
            for g in np.flatnonzero(quota[:, u] > 0):
                for v in np.flatnonzero(sets[g]):
                    if int(v) not in parent:
                        parent[int(v)] = (u, int(g))
                        queue.append(int(v))
        light = [v for v in parent if load[v] <= load[a] - 2]
        if not light:
            continue
        b = min(light, key=lambda v: (load[v], prio[v]))
        path, v = [], b
        while v != a:
            u, g = parent[v]
            path.append((u, v, g))
            v = u
        amount = min(min(int(quota[g, u]) for u, _, g in path), int(load[a] - load[b]) // 2)
        for u, v, g in reversed(path):
            quota[g, u] -= amount
            quota[g, v] += amount
        load[a] -= amount
        load[b] += amount
        return True
    return False
