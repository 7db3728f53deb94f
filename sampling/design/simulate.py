"""Offline plan -> judge -> refit loops from known strengths.

A :class:`SimulatedBoard` holds the truth: a log-strength per model, an effect per submission
(model, task) that is drawn once and shared by every match on that submission, a quality
``eta`` per judge and a tie rate. :func:`judge_matches` draws winners for planned matches with
:func:`ratings.datasets.simulate_verdicts` (Crowd-BT judge noise, ties as in that function),
and :func:`simulate_loop` runs whole campaigns batch by batch.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

import ratings
from ratings.kit import ELO_SCALE, critical_value, simulate_verdicts
from sampling.board.inputs import check_anchor, check_count, check_judges, check_seed, str_array
from sampling.design.checks import check_balance
from sampling.design.oracle import oracle_matches
from sampling.design.plan import (
    DEFAULT_MAX_SHARE,
    DEFAULT_MIN_MATCHES,
    fit_for_planning,
    plan_matches,
)
from sampling.picks.picker import Objective

__all__ = [
    "LoopResult",
    "SimulatedBoard",
    "Strategy",
    "judge_matches",
    "make_board",
    "mean_half_width",
    "pairwise_half_width",
    "simulate_loop",
    "uniform_matches",
]

Strategy = Literal["active", "balanced", "uniform", "oracle"]
Metric = Literal["anchored", "pairwise"]
_SEP = "\x1f"  # joins model and task into one submission label for simulate_verdicts
_LOG_COLUMNS = ["model_a", "model_b", "winner", "task_id", "judge"]  # of the simulated log


@dataclass(frozen=True, eq=False)
class SimulatedBoard:
    """The ground truth of a simulated benchmark.

    Attributes
    ----------
    strength : pandas.Series
        True natural-log strength per model (Elo / (400 / ln 10)).
    submissions : pandas.DataFrame
        ``model``, ``task_id`` and ``effect``: the log-strength offset of that submission.
    judge_eta : pandas.Series
        Probability that each judge reports the true order (1 = noiseless).
    tie_rate : float
        Tie propensity passed to :func:`ratings.datasets.simulate_verdicts`.
    """

    strength: pd.Series
    submissions: pd.DataFrame
    judge_eta: pd.Series
    tie_rate: float = 0.0

    @property
    def models(self) -> list[str]:
        return [str(m) for m in self.strength.index]

    @property
    def judges(self) -> list[str]:
        return [str(j) for j in self.judge_eta.index]

    def elo(self, anchor: str | None = None) -> pd.Series:
        """True Elo: ``anchor`` (``"NAME"`` or ``"NAME=RATING"``) pinned, or centred at 1000."""
        name, rating = check_anchor(anchor)
        s = self.strength
        ref = s.mean() if name is None else s[name]
        return (rating + ELO_SCALE * (s - ref)).rename("elo")

    def mid_model(self) -> str:
        """The model of median true strength (the lower middle for an even count)."""
        order = np.argsort(self.strength.to_numpy(), kind="stable")
        return str(self.strength.index[order[(len(order) - 1) // 2]])


def make_board(
    n_models: int,
    n_tasks: int,
    *,
    seed: int,
    elo_sd: float = 250.0,
    judges: Sequence[str] = ("judge-1", "judge-2", "judge-3"),
    judge_eta: float | Mapping[str, float] = 1.0,
    task_sd: float = 0.0,
    tie_rate: float = 0.0,
    coverage: float = 1.0,
) -> SimulatedBoard:
    """Draw a benchmark: strengths ~ N(0, elo_sd) on the Elo scale, submissions and their effects.

    Parameters
    ----------
    n_models, n_tasks : int
        Models are named ``model-00``, ...; tasks ``task-000``, ...
    seed : int
    elo_sd : float, default=250.0
        Standard deviation of the true Elo ratings.
    judges : sequence of str
    judge_eta : float or mapping, default=1.0
        Judge quality, one value for all or one per judge, each in [0.5, 1].
    task_sd : float, default=0.0
        Standard deviation of the per-submission effect (log-strength units).
    tie_rate : float, default=0.0
        In [0, 0.5]; see :func:`ratings.datasets.simulate_verdicts`.
    coverage : float, default=1.0
        Probability that a submission exists; every model keeps at least one task.

    Returns
    -------
    SimulatedBoard
    """
    n_models = check_count(n_models, "n_models", 2)
    n_tasks = check_count(n_tasks, "n_tasks", 1)
    judges = check_judges(judges)
    if not (np.isfinite(elo_sd) and elo_sd >= 0):
        raise ValueError(f"`elo_sd` must be a finite number >= 0; got {elo_sd!r}.")
    if not 0.0 < coverage <= 1.0:
        raise ValueError(f"`coverage` must be in (0, 1]; got {coverage!r}.")
    if task_sd < 0:
        raise ValueError(f"`task_sd` must be >= 0; got {task_sd!r}.")
    per_judge = judge_eta if isinstance(judge_eta, Mapping) else dict.fromkeys(judges, judge_eta)
    eta = pd.Series(per_judge, dtype=np.float64).reindex(judges)
    if eta.isna().any() or not ((eta >= 0.5) & (eta <= 1.0)).all():
        raise ValueError(
            f"`judge_eta` must give every judge a quality in [0.5, 1]; got {dict(eta)!r}."
        )
    rng = np.random.default_rng(check_seed(seed))
    models = [f"model-{i:02d}" for i in range(n_models)]
    tasks = [f"task-{k:03d}" for k in range(n_tasks)]
    strength = pd.Series(rng.normal(0.0, elo_sd / ELO_SCALE, n_models), index=models,
                         name="strength")  # fmt: skip
    exists = rng.random((n_models, n_tasks)) < coverage
    exists[np.arange(n_models), rng.integers(0, n_tasks, n_models)] = True
    mi, ti = np.nonzero(exists)
    subs = pd.DataFrame({
        "model": np.asarray(models, dtype=object)[mi],
        "task_id": np.asarray(tasks, dtype=object)[ti],
        "effect": rng.normal(0.0, task_sd, mi.size) if task_sd > 0 else np.zeros(mi.size),
    })  # fmt: skip
    return SimulatedBoard(strength, subs, eta, float(tie_rate))


def judge_matches(matches: pd.DataFrame, board: SimulatedBoard, *, seed: int) -> pd.DataFrame:
    """Draw a ``winner`` for each planned match from the board's truth.

    Each side plays with the strength of its submission, ``strength[model] + effect[model,
    task]``; the judge of the row reports the true order with probability ``eta``, and ties
    follow ``board.tie_rate`` (:func:`ratings.datasets.simulate_verdicts`).

    Parameters
    ----------
    matches : pandas.DataFrame
        ``task_id``, ``model_a``, ``model_b``, ``judge`` (extra columns are kept).
    board : SimulatedBoard
    seed : int

    Returns
    -------
    pandas.DataFrame
        A copy of ``matches`` with ``winner`` (``"A"``, ``"B"`` or ``"tie"``).
    """
    subs = board.submissions
    label = str_array(subs["model"]) + _SEP + str_array(subs["task_id"])
    sub_strength = pd.Series(
        board.strength.reindex(subs["model"]).to_numpy() + subs["effect"].to_numpy(), index=label
    )
    keyed = matches.copy()
    task = str_array(matches["task_id"])
    unknown = np.zeros(len(matches), dtype=bool)
    for side in ("model_a", "model_b"):
        keys = str_array(matches[side]) + _SEP + task
        unknown |= sub_strength.index.get_indexer(keys) < 0
        keyed[side] = keys
    if unknown.any():
        row = int(np.flatnonzero(unknown)[0])
        raise ValueError(
            f"{int(unknown.sum())} match(es) use a submission the board does not have, e.g. row "
            f"{row}: {matches.iloc[row][['task_id', 'model_a', 'model_b']].tolist()!r}."
        )
    drawn = simulate_verdicts(keyed, sub_strength, judge_eta=board.judge_eta.to_dict(),
                              tie_rate=board.tie_rate, seed=check_seed(seed))  # fmt: skip
    out = matches.copy()
    out["winner"] = drawn["winner"].to_numpy()
    return out


def uniform_matches(
    submissions: pd.DataFrame, judges: Sequence[str], n: int, *, seed: int
) -> pd.DataFrame:
    """Uniformly random pairs (among pairs sharing a task), a random shared task each.

    The baseline for :func:`sampling.plan_matches`: no balance rules, repeats allowed, judges in
    turn from a random start, A/B order random.

    Returns
    -------
    pandas.DataFrame
        ``task_id``, ``model_a``, ``model_b``, ``judge``.
    """
    judges = check_judges(judges)
    n = check_count(n, "n", 1)
    rng = np.random.default_rng(check_seed(seed))
    mcode, models = pd.factorize(submissions["model"].astype(str), sort=True)
    tcode, tasks = pd.factorize(submissions["task_id"].astype(str), sort=True)
    has = np.zeros((len(models), len(tasks)), dtype=bool)
    has[mcode, tcode] = True
    i, j = np.triu_indices(len(models), 1)
    shared = has[i] & has[j]  # (P, T)
    keep = shared.any(axis=1)
    if not keep.any():
        raise ValueError("No two models share a task; nothing can be paired.")
    i, j, shared = i[keep], j[keep], shared[keep]
    p = rng.integers(0, i.size, n)
    counts = shared.sum(axis=1)
    k = np.floor(rng.random(n) * counts[p]).astype(np.int64)  # k-th shared task of the pair
    t = np.argmax(np.cumsum(shared[p], axis=1) > k[:, None], axis=1)
    swap = rng.random(n) < 0.5
    names = models.to_numpy(dtype=object)
    start = int(rng.integers(0, len(judges)))
    return pd.DataFrame({
        "task_id": tasks.to_numpy(dtype=object)[t],
        "model_a": names[np.where(swap, j[p], i[p])],
        "model_b": names[np.where(swap, i[p], j[p])],
        "judge": np.asarray(judges, dtype=object)[(start + np.arange(n)) % len(judges)],
    })  # fmt: skip


@dataclass(frozen=True, eq=False)
class LoopResult:
    """What :func:`simulate_loop` ran.

    Attributes
    ----------
    verdicts : pandas.DataFrame
        Every simulated verdict, with a ``batch`` column (and ``phase``/``score`` for planned
        matches).
    batches : pandas.DataFrame
        One row per batch: ``batch``, ``n_verdicts`` (cumulative), ``identifiable`` (the MLE
        exists), ``mean_half_width`` (Elo, mean over models other than the anchor; NaN while
        the MLE does not exist), ``pairwise_half_width``, ``n_balanced``, ``n_active``,
        ``seconds``; with ``check=True``, the columns of :func:`sampling.check_balance`; with
        ``confirm=True``, ``default_half_width`` (of ``metric``) where the default fit was
        checked.
    n_comparisons : int or None
        Verdicts when the target half-width was first reached; ``None`` if it was not.
    fit : ratings.Ratings or None
        The last in-loop fit (per-verdict HC0 sandwich; with ``confirm=True`` the default fit
        that confirmed the target); ``None`` if the MLE did not exist.
    """

    verdicts: pd.DataFrame
    batches: pd.DataFrame
    n_comparisons: int | None
    fit: ratings.Ratings | None = field(default=None)

    @property
    def reached(self) -> bool:
        return self.n_comparisons is not None


class _Counts:
    """Dense win/loss/tie counts per model pair, for fast in-loop fits."""

    def __init__(self, models: list[str]) -> None:
        self.models = pd.Index(models, dtype=object)
        m = len(models)
        self.wi, self.wj, self.tt = (np.zeros((m, m)) for _ in range(3))

    def add(self, verdicts: pd.DataFrame) -> None:
        a = self.models.get_indexer(str_array(verdicts["model_a"]))
        b = self.models.get_indexer(str_array(verdicts["model_b"]))
        w = verdicts["winner"].to_numpy(dtype=object)
        i, j = np.minimum(a, b), np.maximum(a, b)
        win_a, win_b = w == "A", w == "B"
        np.add.at(self.wi, (i, j), np.where(a < b, win_a, win_b))
        np.add.at(self.wj, (i, j), np.where(a < b, win_b, win_a))
        np.add.at(self.tt, (i, j), w == "tie")

    def comparisons(self) -> ratings.Comparisons:
        n = self.wi + self.wj + self.tt
        played = np.flatnonzero((n + n.T).sum(axis=1) > 0)
        sub = np.ix_(played, played)
        i, j = np.nonzero(n[sub])
        return ratings.Comparisons(
            models=self.models[played], judges=pd.Index(["pooled"], dtype=object),
            clusters=None, cluster_name=None, ii=i, jj=j, judge=np.zeros(i.size),
            cluster=np.zeros(i.size), wi=self.wi[sub][i, j], wj=self.wj[sub][i, j],
            tt=self.tt[sub][i, j],
        )  # fmt: skip


def mean_half_width(fit: ratings.Ratings) -> float:
    """Mean half-width (Elo) of the fit's intervals, over the models other than the anchor."""
    ci = fit.conf_int()
    half = (ci["upper"] - ci["lower"]).to_numpy() / 2.0
    keep = ci.index != fit.anchor if fit.anchor is not None else np.ones(half.size, bool)
    return float(half[keep].mean())


def pairwise_half_width(fit: ratings.Ratings) -> float:
    """Mean half-width (Elo) of the intervals of all pairwise differences ``Elo_i - Elo_j``.

    Each is ``q * scale * sqrt(C_ii + C_jj - 2 C_ij)`` with the fit's covariance and each
    pair's quantile (as :meth:`ratings.Ratings.diff`; infinite for a pair without an
    interval); it does not depend on the anchor.
    """
    c = np.asarray(fit.cov)
    d = np.diag(c)
    var = d[:, None] + d[None, :] - 2.0 * c
    i, j = np.triu_indices(c.shape[0], 1)
    q = critical_value(fit.level, fit.pair_df()[i, j])
    half = q * fit.scale * np.sqrt(np.clip(var[i, j], 0.0, None))
    return float(np.where(np.isnan(q), np.inf, half).mean())


_METRICS = {"anchored": mean_half_width, "pairwise": pairwise_half_width}


def simulate_loop(
    board: SimulatedBoard,
    *,
    seed: int,
    strategy: Strategy = "active",
    batch_size: int = 100,
    max_comparisons: int = 100_000,
    target_half_width: float | None = None,
    anchor: str | None = None,
    metric: Metric = "anchored",
    objective: Objective = "pairwise",
    max_share: float | None = DEFAULT_MAX_SHARE,
    min_matches: int = DEFAULT_MIN_MATCHES,
    fit_options: Mapping[str, object] | None = None,
    check: bool = False,
    confirm: bool = False,
) -> LoopResult:
    """Run plan -> judge -> refit from an empty log until a target precision or a budget.

    Parameters
    ----------
    board : SimulatedBoard
        The truth; its submissions and judges are the planning inputs.
    seed : int
        Seeds every batch's plan and verdicts.
    strategy : {"active", "balanced", "uniform", "oracle"}, default="active"
        ``"active"``: :func:`sampling.plan_matches` with ``phase="auto"``; ``"balanced"``:
        ``phase="balanced"``; ``"uniform"``: :func:`uniform_matches`; ``"oracle"``:
        :func:`sampling.design.oracle.oracle_matches` (greedy picks from the true strengths; with
        ``objective="anchored"``, relative to ``anchor``).
    batch_size : int, default=100
    max_comparisons : int, default=100000
        Stop after this many verdicts.
    target_half_width : float, optional
        Stop once ``metric`` of the in-loop fit is at most this (Elo).
    anchor : str, optional
        ``"NAME"`` or ``"NAME=RATING"`` for the fits and the planner; default: centred.
    metric : {"anchored", "pairwise"}, default="anchored"
        The precision that stops the loop: the mean 95% half-width of the ratings (models
        other than the anchor; :func:`mean_half_width`) or of all pairwise differences
        (:func:`pairwise_half_width`). Both are recorded every batch.
    objective, max_share
        Passed to :func:`sampling.plan_matches` (``objective`` also to the oracle).
    min_matches : int, default=10
        Passed to :func:`sampling.plan_matches`.
    fit_options : mapping, optional
        Keyword arguments for the in-loop :func:`ratings.fit` that measures the half-width
        (default ``ci="sandwich"``). The loop fits pooled counts, so its sandwich is per
        verdict (HC0); refit ``LoopResult.verdicts`` with :func:`ratings.fit` for
        task-clustered intervals. The planner gets its own fit from
        :func:`sampling.fit_for_planning` (model-based covariance, ridge while the MLE does
        not exist).
    check : bool, default=False
        Run :func:`sampling.check_balance` on every planned batch (slower).
    confirm : bool, default=False
        Once the in-loop half-width reaches the target, also require the default
        :func:`ratings.fit` of the log (sandwich clustered by task) to reach it, continuing
        batch by batch until it does; ``LoopResult.fit`` is then that fit.

    Returns
    -------
    LoopResult
    """
    if strategy not in ("active", "balanced", "uniform", "oracle"):
        raise ValueError(f"`strategy` must be 'active', 'balanced', 'uniform' or 'oracle'; got "
                         f"{strategy!r}.")  # fmt: skip
    if metric not in _METRICS:
        raise ValueError(f"`metric` must be 'anchored' or 'pairwise'; got {metric!r}.")
    measure = _METRICS[metric]
    batch_size = check_count(batch_size, "batch_size", 1)
    max_comparisons = check_count(max_comparisons, "max_comparisons", 1)
    rng = np.random.default_rng(check_seed(seed))
    name, rating = check_anchor(anchor)
    kw = {"anchor": (name, rating) if name is not None else None}
    options = dict(fit_options or {})
    subs = board.submissions[["model", "task_id"]]
    judges = board.judges
    counts = _Counts(board.models)
    parts: list[pd.DataFrame] = []
    history: pd.DataFrame | None = None
    rows, fit, plan_fit, reached = [], None, None, None
    batch = 0
    # The planner reads the whole log every batch: keep it as categorical codes (cheap to
    # factorize) rather than strings.
    labels = {
        "model_a": pd.Index(board.models),
        "model_b": pd.Index(board.models),
        "task_id": pd.Index(sorted(set(subs["task_id"]))),
        "judge": pd.Index(judges),
    }
    codes: dict[str, list[np.ndarray]] = {c: [] for c in [*labels, "winner"]}
    n_done = 0
    while n_done < max_comparisons:
        tic = time.perf_counter()
        plan_seed, judge_seed = (int(x) for x in rng.integers(0, 2**32, 2))
        n = min(batch_size, max_comparisons - n_done)
        if strategy == "uniform":
            plan = uniform_matches(subs, judges, n, seed=plan_seed)
        elif strategy == "oracle":
            played = counts.wi + counts.wj + counts.tt
            plan = oracle_matches(board.strength, subs, judges, played + played.T, n,
                                  seed=plan_seed, eta=board.judge_eta.tolist(),
                                  anchor=name if objective == "anchored" else None)  # fmt: skip
        else:
            plan = plan_matches(history, subs, judges, n, seed=plan_seed, anchor=anchor,
                                phase="auto" if strategy == "active" else "balanced",
                                objective=objective, max_share=max_share,
                                min_matches=min_matches, fitted=plan_fit)  # fmt: skip
        row = {"batch": batch}
        if check and strategy in ("active", "balanced"):
            row.update(check_balance(plan, history, subs, judges).to_dict())
        verdicts = judge_matches(plan, board, seed=judge_seed)
        verdicts.insert(0, "batch", batch)
        parts.append(verdicts)
        n_done += len(verdicts)
        if strategy in ("active", "balanced"):
            for c, index in labels.items():
                codes[c].append(index.get_indexer(str_array(verdicts[c])))
            codes["winner"].append(verdicts["winner"].to_numpy(dtype=object))
            history = pd.DataFrame(
                {c: pd.Categorical.from_codes(np.concatenate(codes[c]), index)
                 for c, index in labels.items()} | {"winner": np.concatenate(codes["winner"])}
            )  # fmt: skip
        counts.add(verdicts)
        data = counts.comparisons()
        identifiable, hw, pw, fit, plan_fit = False, float("nan"), float("nan"), None, None
        if name is None or name in data.models:  # else the anchor has no verdicts yet
            try:
                fit = ratings.fit(data, **kw, **options)
                identifiable, hw, pw = True, mean_half_width(fit), pairwise_half_width(fit)
            except ratings.NonIdentifiableError:
                pass
            if strategy in ("active", "balanced"):
                plan_fit = fit_for_planning(data, anchor=anchor)
        phases = plan["phase"].value_counts() if "phase" in plan else pd.Series(dtype=int)
        row.update(n_verdicts=n_done, identifiable=identifiable, mean_half_width=hw,
                   pairwise_half_width=pw, n_balanced=int(phases.get("balanced", 0)),
                   n_active=int(phases.get("active", 0)),
                   seconds=time.perf_counter() - tic)  # fmt: skip
        rows.append(row)
        batch += 1
        value = hw if metric == "anchored" else pw
        if target_half_width is not None and identifiable and value <= target_half_width:
            if confirm:
                log = pd.concat(parts, ignore_index=True)[_LOG_COLUMNS]
                fit = ratings.fit(log, **kw)
                row["default_half_width"] = measure(fit)
            if not confirm or row["default_half_width"] <= target_half_width:
                reached = n_done
                break
    first = ["batch", "n_verdicts", "identifiable", "mean_half_width", "pairwise_half_width",
             "n_balanced", "n_active", "seconds"]  # fmt: skip
    table = pd.DataFrame(rows)
    table = table[first + [c for c in table.columns if c not in first]]
    return LoopResult(pd.concat(parts, ignore_index=True), table, reached, fit)
