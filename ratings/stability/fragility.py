"""How fragile a board's order is (:func:`fragility`, ``Ratings.fragility()``).

For each pair of neighbours (``model_a`` ranked just above ``model_b``, first place first):

* **The fewest verdicts whose removal reverses them.** Removing verdict v moves the estimate by
  about ``-H^-1 g_v`` (``g_v = (y_v - p_v)(e_i - e_j)`` its score, ``H`` the information: the
  infinitesimal jackknife), so the difference ``d = s_a - s_b`` by ``delta_v = -c^T H^-1 g_v``
  (``c = e_a - e_b``). The verdicts with the most negative ``delta_v`` are removed, fewest
  first, until the first-order prediction of ``d`` falls below zero (Broderick, Giordano &
  Meager's AMIP; Huang, Shen, Wei & Broderick 2025 on Bradley-Terry boards); the board is then
  refitted without them. While the refit does not reverse the pair, the influences are
  recomputed at the refit and more verdicts added; once it does, the set is shortened by
  bisection along the same order, each candidate confirmed by its own refit. Every reported set
  (``verdicts``, the 0-based rows of the log the fit read) reverses the pair when refitted
  (``confirmed``); ``confirmed`` is False when the refits allowed (``max_refits``) found none.
  The same search over whole tasks (a task's influence is the sum of its verdicts') gives
  ``n_tasks`` and ``tasks``. The sets are small but not proven smallest: the greedy order is
  that of the first-order influences.
* **Leave one judge (or scope) out.** Each rating's change when the board is refitted without
  one judge's verdicts (exact refits, not approximations), in :attr:`Fragility.leave_one_out`.
* **Verdicts to separate them.** For neighbours the simultaneous rank intervals do not
  separate, the verdicts to add at the log's current mix until the pair's own interval
  excludes zero: the standard error of ``d`` scales as ``1/sqrt(n)``, so with ``n`` verdicts
  now, ``se`` its standard error and ``q`` the interval's quantile, about
  ``n ((q se / |d|)^2 - 1)`` more (``more_verdicts``). Separating their rank intervals, which
  hold for all models jointly, takes somewhat more.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.errors import NonIdentifiableError
from ratings.core.schema import ELO_SCALE
from ratings.core.tdist import critical_value
from ratings.data.comparisons import Comparisons
from ratings.inference.covariance import inverse_free
from ratings.kernels.engine import kernels
from ratings.models.bt import fit_bt, penalised_terms
from ratings.models.existence import check_identifiable
from ratings.result import Ratings

__all__ = ["FRAGILITY_COLUMNS", "Fragility", "VerdictCodesLog", "fragility"]

#: Columns of :attr:`Fragility.pairs`.
FRAGILITY_COLUMNS = ("model_a", "model_b", "elo_diff", "n_verdicts", "verdicts", "confirmed",
                     "n_tasks", "tasks", "confirmed_tasks", "refits", "separated",
                     "more_verdicts")


@dataclass(frozen=True, eq=False)
class Fragility:
    """:attr:`pairs`: one row per pair of neighbours (:data:`FRAGILITY_COLUMNS`), first place
    first; :attr:`leave_one_out`: per left-out judge or scope and model, the Elo after the
    refit and its change (``left_out``, ``value``, ``model``, ``elo``, ``elo_change``);
    :attr:`notes` for a reader."""

    pairs: pd.DataFrame
    leave_one_out: pd.DataFrame
    notes: list[str] = field(default_factory=list)

    @property
    def table(self) -> pd.DataFrame:
        """The pairs table."""
        return self.pairs

    def summary(self) -> str:
        shown = self.pairs.drop(columns=["verdicts", "tasks"])
        text = shown.to_string(index=False, float_format="{:.1f}".format, na_rep="")
        lines = [*self.notes, "", text]
        if len(self.leave_one_out):
            worst = (self.leave_one_out.assign(size=self.leave_one_out["elo_change"].abs())
                     .sort_values("size", ascending=False).head(10).drop(columns="size"))
            lines += ["", "Largest leave-one-out changes:",
                      worst.to_string(index=False, float_format="{:.1f}".format)]
        return "\n".join(lines)


@dataclass(frozen=True, eq=False)
class VerdictCodesLog:
    """The log a fit read, one entry per verdict: model codes ``i < j``, the outcome for ``i``
    (1 win, 0 loss, 1/2 tie), its row in the log, task and judge codes (-1: none)."""

    models: pd.Index
    i: NDArray[np.int64]
    j: NDArray[np.int64]
    y: NDArray[np.float64]
    row: NDArray[np.int64]
    task: NDArray[np.int64]
    tasks: pd.Index | None
    by: dict

    @classmethod
    def of(cls, frame: pd.DataFrame, models: pd.Index, task: str | None) -> VerdictCodesLog:
        a = models.get_indexer(frame["model_a"].astype(str))
        b = models.get_indexer(frame["model_b"].astype(str))
        win = frame["winner"].astype(object).to_numpy()
        ya = np.where(win == "A", 1.0, np.where(win == "B", 0.0, 0.5))
        fa = frame["failed_a"].to_numpy(bool) if "failed_a" in frame else np.zeros(len(a), bool)
        fb = frame["failed_b"].to_numpy(bool) if "failed_b" in frame else np.zeros(len(a), bool)
        ya = np.where(fa & fb, 0.5, np.where(fa, 0.0, np.where(fb, 1.0, ya)))  # forfeits
        ok = (a >= 0) & (b >= 0) & (a != b)
        a, b, ya = a[ok], b[ok], ya[ok]
        swap = a > b
        rows = np.asarray(frame.index, dtype=np.int64)[ok]
        tcodes, tasks = (np.full(a.size, -1, dtype=np.int64), None)
        if task is not None and task in frame:
            codes, tasks = pd.factorize(frame[task].astype(object).to_numpy()[ok])
            tcodes, tasks = codes.astype(np.int64), pd.Index(tasks)
        by = {}
        for col in ("judge", "scope"):
            if col in frame:
                codes, uniq = pd.factorize(frame[col].astype(object).to_numpy()[ok])
                if len(uniq) > 1:
                    by[col] = (codes.astype(np.int64), pd.Index(uniq))
        return cls(models, np.where(swap, b, a), np.where(swap, a, b),
                   np.where(swap, 1.0 - ya, ya), rows, tcodes, tasks, by)

    def comparisons(self, keep: NDArray[np.bool_] | None = None) -> Comparisons:
        """The kept verdicts summed per pair (one judge, no clusters): the likelihood's rows."""
        m = len(self.models)
        keep = np.ones(self.i.size, dtype=bool) if keep is None else keep
        key = self.i[keep] * m + self.j[keep]
        y = self.y[keep]
        wins = np.bincount(key, (y == 1.0).astype(float), m * m)
        losses = np.bincount(key, (y == 0.0).astype(float), m * m)
        ties = np.bincount(key, (y == 0.5).astype(float), m * m)
        used = np.flatnonzero(wins + losses + ties)
        zeros = np.zeros(used.size, dtype=np.int64)
        return Comparisons(self.models, pd.Index(["all"]), None, None, used // m, used % m,
                           zeros, zeros, wins[used], losses[used], ties[used])


def _refit(log: VerdictCodesLog, keep, ref: int, theta0) -> NDArray[np.float64] | None:
    """The maximum likelihood strengths of the kept verdicts (``ref`` at 0), None when they
    do not exist (some model never lost or never won among them)."""
    data = log.comparisons(keep)
    try:
        check_identifiable(data)
    except NonIdentifiableError:
        return None
    return fit_bt(data, ref=ref, theta0=theta0, engine="numpy").theta


def _influence(log: VerdictCodesLog, keep: NDArray[np.bool_], theta, ref: int, a: int,
               b: int) -> NDArray[np.float64]:  # fmt: skip
    """First-order change of ``s_a - s_b`` when each kept verdict alone is removed from the
    kept ones (``theta``: their estimate)."""
    _, _, h = penalised_terms(theta, log.comparisons(keep), 0.0, kernels("numpy", 0))
    c = np.zeros(len(log.models))
    c[a], c[b] = 1.0, -1.0
    u = inverse_free(h, np.delete(np.arange(len(log.models)), ref)) @ c
    i, j, y = log.i[keep], log.j[keep], log.y[keep]
    p = 1.0 / (1.0 + np.exp(-(theta[i] - theta[j])))
    return -(y - p) * (u[i] - u[j])


def _flip(log: VerdictCodesLog, unit: NDArray[np.int64], theta, ref, a, b,
          max_refits: int) -> tuple[NDArray[np.int64], bool, int]:  # fmt: skip
    """The fewest units (verdicts or tasks; ``unit`` gives each verdict's, -1: none, never
    removed) whose removal reverses ``a`` above ``b``, in removal order; whether a refit
    confirmed it; the refits used."""
    n_units = int(unit.max(initial=-1)) + 1
    removed = np.zeros(0, dtype=np.int64)
    cur, refits, tried, hit = theta, 0, [], None
    while refits < max_refits:
        keep = ~np.isin(unit, removed)
        delta = _influence(log, keep, cur, ref, a, b)
        kept_unit = unit[keep]
        per_unit = np.bincount(kept_unit[kept_unit >= 0], delta[kept_unit >= 0], n_units)
        per_unit[removed] = 0.0
        order = np.argsort(per_unit, kind="stable")
        order = order[per_unit[order] < 0]
        if not order.size:
            break
        margin = cur[a] - cur[b]
        k = int(np.searchsorted(-np.cumsum(per_unit[order]), margin, side="right")) + 1
        removed = np.concatenate([removed, order[:k]])
        new = _refit(log, ~np.isin(unit, removed), ref, cur)
        refits += 1
        flipped = new is not None and new[a] < new[b]
        tried.append((removed.size, flipped))
        if flipped:
            hit = removed.size
            break
        if new is None:  # the removal left a model unbeaten: no estimate to go on from
            break
        cur = new
    if hit is None:
        return removed, False, refits
    lo, hi = max([c for c, f in tried if not f], default=0), hit
    while hi - lo > 1 and refits < 2 * max_refits:  # shorten along the same order
        mid = (lo + hi) // 2
        new = _refit(log, ~np.isin(unit, removed[:mid]), ref, theta)
        refits += 1
        if new is not None and new[a] < new[b]:
            hi = mid
        else:
            lo = mid
    return removed[:hi], True, refits


def fragility(r: Ratings, *, max_refits: int = 8, level: float | None = None,
              leave_out: tuple[str, ...] = ("judge", "scope")) -> Fragility:
    """How fragile the order of ``r``'s neighbours is (see the module notes).

    Parameters
    ----------
    r : Ratings
        A plain Bradley-Terry fit of a verdict log (``ratings.fit``), which keeps the verdicts
        it read.
    max_refits : int, default=8
        Refits allowed per pair and search (verdicts, tasks) to find a reversing set, and as
        many again to shorten it.
    level : float, optional
        Level of the intervals behind ``separated`` and ``more_verdicts`` (default ``r``'s).
    leave_out : tuple of str, default=("judge", "scope")
        Verdict columns whose values are left out one at a time (those with two values or
        more).

    Returns
    -------
    Fragility
    """
    loaded = r.source
    if loaded is None or getattr(loaded, "frame", None) is None or "winner" not in loaded.frame:
        raise ValueError("Fragility refits the board without some verdicts: it needs a plain "
                         "Bradley-Terry fit of a verdict log (`ratings.fit(log)`, no penalty, "
                         "no judge effects or style), which keeps the verdicts it read.")
    level = r.level if level is None else level
    task = loaded.data.cluster_name
    log = VerdictCodesLog.of(loaded.frame, r.models, task)
    ref = 0 if r.anchor is None else int(r.models.get_loc(r.anchor))
    theta = r.strength - r.strength[ref]
    order = r.rank_order
    ranks = r.rank_intervals(level).reindex(r.models)
    n_total = log.i.size
    rows, verdict_unit = [], np.arange(n_total, dtype=np.int64)
    for a, b in itertools.pairwise(order):
        vs, ok_v, n1 = _flip(log, verdict_unit, theta, ref, a, b, max_refits)
        if log.tasks is not None:
            ts, ok_t, n2 = _flip(log, log.task, theta, ref, a, b, max_refits)
            tasks = [str(log.tasks[t]) for t in ts]
        else:
            ts, ok_t, n2, tasks = np.zeros(0), False, 0, []
        d = r.diff(str(r.models[a]), str(r.models[b]), level)
        sep = bool(ranks["rank_upper"].iloc[a] < ranks["rank_lower"].iloc[b]) if \
            pd.notna(ranks["rank_upper"].iloc[a]) and pd.notna(ranks["rank_lower"].iloc[b]) \
            else False
        more = np.nan
        if not sep and d["estimate"] > 0 and np.isfinite(d["se"]):
            q = critical_value(level, d["df"] if np.isfinite(d["df"]) else np.inf)
            more = max(0.0, n_total * ((q * d["se"] / d["estimate"]) ** 2 - 1.0))
        elif not sep:
            more = np.inf
        rows.append({"model_a": str(r.models[a]), "model_b": str(r.models[b]),
                     "elo_diff": float(d["estimate"]),
                     "n_verdicts": int(vs.size) if ok_v else pd.NA,
                     "verdicts": sorted(int(x) for x in log.row[vs]) if ok_v else [],
                     "confirmed": ok_v,
                     "n_tasks": len(tasks) if ok_t else pd.NA, "tasks": tasks if ok_t else [],
                     "confirmed_tasks": ok_t, "refits": n1 + n2, "separated": sep,
                     "more_verdicts": more})
    pairs = pd.DataFrame(rows, columns=list(FRAGILITY_COLUMNS))
    for c in ("n_verdicts", "n_tasks"):
        pairs[c] = pairs[c].astype("Int64")
    loo = _leave_one_out(log, r, ref, theta, leave_out)
    notes = [f"{len(pairs)} pairs of neighbours; {int(pairs['confirmed'].sum())} reversed by "
             f"removing verdicts (confirmed by a refit); fewest for any pair: "
             f"{pairs['n_verdicts'].min() if pairs['confirmed'].any() else 'none found'} of "
             f"{n_total} verdicts.",
             f"Separated by the simultaneous {level:.0%} rank intervals: "
             f"{int(pairs['separated'].sum())} of {len(pairs)} neighbour pairs; more_verdicts = "
             "n ((q se / |d|)^2 - 1) at the current mix for the others."]
    return Fragility(pairs=pairs, leave_one_out=loo, notes=notes)


def _leave_one_out(log: VerdictCodesLog, r: Ratings, ref: int, theta,
                   leave_out: tuple[str, ...]) -> pd.DataFrame:  # fmt: skip
    out = []
    base = ELO_SCALE * theta
    for col in leave_out:
        if col not in log.by:
            continue
        codes, values = log.by[col]
        for k, value in enumerate(values):
            new = _refit(log, codes != k, ref, theta)
            elo = (np.full(theta.size, np.nan) if new is None else ELO_SCALE * new)
            if r.anchor is None and new is not None:
                elo, b0 = elo - elo.mean(), base - base.mean()
            else:
                b0 = base
            out.append(pd.DataFrame({"left_out": col, "value": str(value),
                                     "model": r.models.astype(str), "elo": r.offset + elo,
                                     "elo_change": elo - b0}))
    if not out:
        return pd.DataFrame(columns=["left_out", "value", "model", "elo", "elo_change"])
    return pd.concat(out, ignore_index=True)
