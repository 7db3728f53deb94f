"""Plan the next batch of matches: a balanced, connected start, then the most informative pairs."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

import ratings
from sampling._board import (
    Board,
    PlanWarning,
    check_anchor,
    check_count,
    check_judges,
    check_seed,
    history_frame,
    submissions_frame,
)
from sampling.criteria import add_comparison, comparison_weight, trace_reduction
from sampling.judges import JudgeTurns, assign_judges

__all__ = [
    "DEFAULT_MIN_MATCHES",
    "FALLBACK_PENALTY",
    "PLAN_COLUMNS",
    "Phase",
    "fit_for_planning",
    "plan_matches",
]

Phase = Literal["auto", "balanced", "active"]
PLAN_COLUMNS = ("task_id", "model_a", "model_b", "judge", "phase", "score")
DEFAULT_MIN_MATCHES = 10
FALLBACK_PENALTY = 0.1  # ridge used when the MLE does not exist yet (planning only)


def fit_for_planning(
    source: pd.DataFrame | ratings.Comparisons,
    *,
    anchor: str | None = None,
    fit_options: Mapping[str, object] | None = None,
) -> ratings.Ratings:
    """Fit the ratings that score candidates; falls back to a small ridge if the MLE is missing.

    Parameters
    ----------
    source : DataFrame or ratings.Comparisons
        Verdicts of one scope (anything :func:`ratings.fit` accepts).
    anchor : str, optional
        ``"NAME"`` or ``"NAME=RATING"``; default: centred ratings.
    fit_options : mapping, optional
        Keyword arguments for :func:`ratings.fit`; default ``{"ci": "model"}`` (see
        :func:`plan_matches` for why the model-based covariance).

    Returns
    -------
    ratings.Ratings
        The fit; when it raises :class:`ratings.NonIdentifiableError` (a model never lost or
        never won yet) and ``fit_options`` sets no ``penalty``, the fit with
        ``penalty=FALLBACK_PENALTY`` (0.1), whose intervals are approximate.
    """
    options = {"ci": "model", **(fit_options or {})}
    name, rating = check_anchor(anchor)
    kw = {"anchor": name, "anchor_rating": rating if name is not None else None}
    try:
        return ratings.fit(source, **kw, **options)
    except ratings.NonIdentifiableError:
        if "penalty" in options:
            raise
        return ratings.fit(source, **kw, penalty=FALLBACK_PENALTY, **options)


def plan_matches(
    verdicts: pd.DataFrame | ratings.VerdictLog | None,
    submissions: pd.DataFrame | None,
    judges: Sequence[str],
    n: int,
    *,
    seed: int,
    phase: Phase = "auto",
    min_matches: int = DEFAULT_MIN_MATCHES,
    scope: str | None = None,
    anchor: str | None = None,
    fit_options: Mapping[str, object] | None = None,
    fitted: ratings.Ratings | None = None,
) -> pd.DataFrame:
    """Plan the next ``n`` matches: who meets whom, on which task, judged by whom.

    Parameters
    ----------
    verdicts : DataFrame, ratings.VerdictLog or None
        The verdict log so far (``model_a``, ``model_b``, ``task_id``, optionally ``judge``,
        ``scope`` and, for the fit, ``winner``). ``None`` or an empty frame is a new benchmark.
    submissions : DataFrame or None
        The ``(model, task_id)`` pairs for which an answer exists (extra columns are ignored).
        Default: the submissions seen in ``verdicts``. A row with a missing ``task_id`` lists a
        model that has no submission yet.
    judges : list of str
        The judge panel; judges are used in turn.
    n : int
        Number of matches to plan.
    seed : int
        Seed of every random choice (ties, A/B order); same inputs and seed, same plan.
    phase : {"auto", "balanced", "active"}, default="auto"
        ``"auto"`` plans balanced matches while some model is below ``min_matches`` (counting
        the matches planned so far in this batch), then active ones. ``"active"`` needs every
        model with submissions to have verdicts.
    min_matches : int, default=10
        A model leaves the balanced phase once it has this many matches, on at least
        ``min(min_matches, its tasks)`` distinct tasks and against at least
        ``min(min_matches, its possible opponents)`` distinct opponents.
    scope : str, optional
        Plan for the verdicts of this scope (required when the log holds several).
    anchor : str, optional
        ``"NAME"`` or ``"NAME=RATING"``: the active criterion is the uncertainty of the
        ratings relative to this model (as reported with this anchor). Default: centred ratings.
    fit_options : mapping, optional
        Keyword arguments for the :func:`ratings.fit` that scores candidates; default
        ``{"ci": "model"}`` (see Notes).
    fitted : ratings.Ratings, optional
        A current fit of ``verdicts`` to use instead of fitting them again (reanchored at
        ``anchor`` when given; ``fit_options`` is then unused).

    Returns
    -------
    pandas.DataFrame
        One row per match in the order picked, columns ``task_id``, ``model_a``, ``model_b``
        (A/B order random), ``judge``, ``phase`` (``"balanced"`` or ``"active"``) and ``score``:
        for active picks the expected reduction in the sum of the Elo variances (Elo^2) at the
        time of the pick; ``NaN`` for balanced picks, which are chosen by the rules below.

    Raises
    ------
    ValueError
        Bad arguments or columns, neither ``verdicts`` nor ``submissions``, fewer than two models
        that can be paired, ``n`` above the number of distinct ``(task, pair)`` candidates, or
        ``phase="active"`` without verdicts for every model.

    Warns
    -----
    PlanWarning
        Models for which no match can be planned: in the verdicts but without submissions
        (kept in the fit), listed without any task, or sharing no task with another model; and
        a board that splits into groups sharing no task.

    Notes
    -----
    Models, tasks and judges are compared as strings. Every pick obeys, in this order:

    * **No repeats**: a pair plays its shared tasks in rounds: a ``(task, unordered pair)`` is
      not planned again, counting the history, until the pair has played every task both
      models have as often; and never twice in one plan.
    * **Tasks per model**: a model plays a task with its lowest count in this plan, so within
      a plan its per-task counts differ by at most one; and, whenever some pair allows it,
      also with its lowest count in history + plan, so across history + plan they stay within
      one. Where no pair allows both, the history + plan rule is relaxed first (by one match;
      later picks restore it), and the plan rule last (seen only on boards of a few models
      whose active phase keeps a model in most of a batch).
    * **Balanced picks** take, lexicographically: a pair joining two groups not yet connected,
      more models below ``min_matches``, fewer matches of the two models, fewer past meetings
      of the pair, then a seeded random tie-break. The first ``M - 1`` picks of a new board
      therefore connect every model that can be connected (the first fit exists once results
      go both ways), and the next ones follow random near-regular cycles.
    * **Active picks** take the pair with the largest expected reduction in the trace of the
      covariance ``C`` of the log-strengths, ``w ||C x||^2 / (1 + w x^T C x)``, with
      ``x = e_a - e_b``, ``w = p (1 - p)`` and ``p`` the fitted probability that a beats b:
      close ratings and large uncertainty score high. ``C`` is the fit's covariance, anchored
      at ``anchor``; after each pick it gets the rank-one update for that comparison
      (Sherman-Morrison), so a batch spreads over pairs rather than repeating the best one.
      By default ``C`` is the model-based inverse Hessian, the inverse information that the
      update assumes; a sandwich ``C`` (``fit_options={"ci": "sandwich"}``) is treated as
      one, but it collapses for a model that has never won (its scores are all near zero),
      which would then never be picked again.
    * **Judges** are assigned after the picks: per-judge quotas keep the panel's counts level
      (within one) in this plan and across history + plan (when the history was level); then
      each model's per-judge counts are levelled the same way where an assignment exists
      (greedy pass, alternating-path repairs, then an exact integer programme; see
      :mod:`sampling.judges`). A/B order is a fair coin per match.

    When the maximum-likelihood fit does not exist yet (a model never lost), the fit used for
    scoring falls back to ``penalty=0.1`` (see :func:`fit_for_planning`).

    Examples
    --------
    >>> import pandas as pd
    >>> subs = pd.DataFrame({"model": ["x", "y", "z"] * 2, "task_id": ["t1"] * 3 + ["t2"] * 3})
    >>> plan = plan_matches(None, subs, ["j1", "j2"], 3, seed=0)
    >>> plan.columns.tolist()
    ['task_id', 'model_a', 'model_b', 'judge', 'phase', 'score']
    >>> sorted(plan["judge"].value_counts().tolist())
    [1, 2]
    """
    judges = check_judges(judges)
    n = check_count(n, "n", 1)
    min_matches = check_count(min_matches, "min_matches", 0)
    seed = check_seed(seed)
    if phase not in ("auto", "balanced", "active"):
        raise ValueError(f"`phase` must be 'auto', 'balanced' or 'active'; got {phase!r}.")
    anchor_name, anchor_rating = check_anchor(anchor)
    if fitted is not None and not isinstance(fitted, ratings.Ratings):
        raise TypeError(f"`fitted` must be a ratings.Ratings; got {type(fitted).__name__!r}.")

    history = history_frame(verdicts, scope)
    subs = submissions_frame(submissions, history)
    board = Board.build(history, subs, judges)
    board.report_unplannable(history, subs.listed_only, explicit=submissions is not None)
    plannable = board.plannable
    if plannable.sum() < 2:
        raise ValueError(
            f"Fewer than two models can be paired ({int(plannable.sum())}): a match needs two "
            "models with submissions on the same task. Check `submissions`."
        )
    cand = board.candidates()
    n_cand = int(cand.sum()) // 2
    if n > n_cand:
        raise ValueError(
            f"Cannot plan {n} matches: only {n_cand} distinct (task, model pair) candidates "
            f"exist ({int(plannable.sum())} models with shared submissions on "
            f"{int(board.usable.any(axis=0).sum())} tasks), and one batch never repeats a "
            f"candidate. Ask for n <= {n_cand}, or add submissions."
        )
    _warn_split(board, cand)

    def current_fit() -> ratings.Ratings | None:
        if fitted is not None:
            return _reanchor(fitted, anchor_name, anchor_rating)
        if len(history) == 0:
            return None
        return fit_for_planning(history.frame, anchor=anchor, fit_options=fit_options)

    rng = np.random.default_rng(seed)
    picker = _Picker(board, cand, rng, min_matches, JudgeTurns(board.judge_n, board.judge_total,
                                                               n, rng))  # fmt: skip
    if phase == "active":
        fit = current_fit()
        if fit is None:
            raise ValueError(
                "phase='active' needs a fit, but there are no verdicts yet. Use phase='auto' "
                "(or 'balanced') for the first batches."
            )
        picker.set_fit(fit)
        unfitted = [str(x) for x in board.models[plannable & ~picker.fitted]]
        if unfitted:
            raise ValueError(
                f"phase='active' cannot score {len(unfitted)} model(s) without verdicts: "
                f"{unfitted[:8]}. Use phase='auto' to give them balanced matches first."
            )

    picks = []
    for _ in range(n):
        mode = phase
        if phase == "auto":
            mode = "balanced" if picker.any_cold() else "active"
            if mode == "active" and picker.fit is None:
                fit = current_fit()
                if fit is None:
                    mode = "balanced"
                else:
                    picker.set_fit(fit)
        pick = picker.pick(mode) if mode == "active" else None
        if pick is None:
            mode, pick = "balanced", picker.pick("balanced")
        picker.record(*pick[:3])
        picks.append((*pick, mode))

    a, b, t, score, modes = (np.array(col) for col in zip(*picks, strict=True))
    a, b, t = a.astype(np.int64), b.astype(np.int64), t.astype(np.int64)
    judge = assign_judges(a, b, board.judge_n, board.judge_total, rng,
                          initial=np.array(picker.turns.given))  # fmt: skip
    swap = rng.random(n) < 0.5
    models = board.models.to_numpy(dtype=object)
    return pd.DataFrame(
        {
            "task_id": board.tasks.to_numpy(dtype=object)[t],
            "model_a": models[np.where(swap, b, a)],
            "model_b": models[np.where(swap, a, b)],
            "judge": board.judges.to_numpy(dtype=object)[judge],
            "phase": modes.astype(object),
            "score": score.astype(np.float64),
        }
    )


def _reanchor(fit: ratings.Ratings, name: str | None, rating: float) -> ratings.Ratings:
    if name is None or fit.anchor == name:
        return fit
    if name not in fit.models:
        raise ValueError(
            f"Anchor model {name!r} is not in the fitted ratings "
            f"({len(fit.models)} models, e.g. {[str(x) for x in fit.models[:5]]})."
        )
    return fit.reanchor(name, rating)


def _warn_split(board: Board, cand: NDArray[np.bool_]) -> None:
    """Warn when the models split into groups that neither share a task nor met before."""
    link = cand.any(axis=2) | (board.meet > 0)
    keep = np.flatnonzero(board.plannable)
    k, labels = connected_components(csr_matrix(link[np.ix_(keep, keep)]), directed=False)
    if k > 1:
        sizes = np.bincount(labels)
        small = [str(board.models[keep[i]]) for i in np.flatnonzero(labels == np.argmin(sizes))]
        warnings.warn(
            f"The models split into {k} groups (sizes {sorted(sizes.tolist(), reverse=True)}) "
            f"that share no task and never met, e.g. {small[:5]}: ratings across groups cannot "
            "be compared. Add submissions on shared tasks.",
            PlanWarning,
            stacklevel=3,
        )


class _Picker:
    """Greedy pick-by-pick state of one plan (counts live in the :class:`Board`)."""

    def __init__(self, board: Board, cand: NDArray[np.bool_], rng: np.random.Generator,
                 min_matches: int, turns: JudgeTurns) -> None:  # fmt: skip
        self.board, self.cand, self.rng, self.k, self.turns = board, cand, rng, min_matches, turns
        m, t = board.task_n.shape
        self.iu = np.triu_indices(m, 1)
        self.plan_task_n = np.zeros((m, t), dtype=np.int64)
        self.n_usable = board.usable.sum(axis=1)
        self.n_opponents = cand.any(axis=2).sum(axis=1)
        # Each pair plays its shared tasks in rounds: `fresh` marks the tasks of the pair's
        # current round that are not yet used (in history or in this plan).
        self.pair_round = np.where(cand, board.pair_n, np.iinfo(np.int32).max).min(axis=2)
        self.fresh = cand & (board.pair_n == self.pair_round[:, :, None])
        self.has_fresh = self.fresh.any(axis=2)
        self.planned: dict[tuple[int, int], list[int]] = {}
        _, self.comp = connected_components(csr_matrix(board.meet > 0), directed=False)
        self.cold = np.array([self._is_cold(i) for i in range(m)])
        self.fit: ratings.Ratings | None = None
        self.fitted = np.zeros(m, dtype=bool)

    # --- state ----------------------------------------------------------------------------
    def set_fit(self, fit: ratings.Ratings) -> None:
        """Take the strengths and covariance of ``fit`` (models outside the board ignored)."""
        b = self.board
        m = len(b.models)
        idx = b.models.get_indexer(fit.models.astype(str))
        keep = np.flatnonzero(idx >= 0)
        self.cov = np.zeros((m, m))
        self.cov[np.ix_(idx[keep], idx[keep])] = fit.cov[np.ix_(keep, keep)]
        strength = np.zeros(m)
        strength[idx[keep]] = fit.strength[keep]
        self.fitted = np.zeros(m, dtype=bool)
        self.fitted[idx[keep]] = True
        self.weight = comparison_weight(strength) * np.outer(self.fitted, self.fitted)
        self.scale2 = float(fit.scale) ** 2
        self.fit = fit

    def _is_cold(self, i: int) -> bool:
        b = self.board
        if not b.usable[i].any():
            return False
        tasks = int((b.task_n[i] > 0)[b.usable[i]].sum())
        opponents = int((b.meet[i] > 0).sum())
        return bool(
            b.meet[i].sum() < self.k
            or tasks < min(self.k, self.n_usable[i])
            or opponents < min(self.k, self.n_opponents[i])
        )

    def any_cold(self) -> bool:
        return bool(self.cold.any())

    def record(self, a: int, b: int, t: int) -> None:
        """Count a pick and update the rounds, components, warm-up and covariance."""
        self.board.add(a, b, t)
        self.turns.take(a, b)
        self.plan_task_n[a, t] += 1
        self.plan_task_n[b, t] += 1
        self.fresh[a, b, t] = self.fresh[b, a, t] = False
        used = self.planned.setdefault((min(a, b), max(a, b)), [])
        used.append(t)
        if not self.fresh[a, b].any():  # the pair played all its shared tasks: a new round
            pair_n = self.board.pair_n[a, b]
            self.pair_round[a, b] = self.pair_round[b, a] = pair_n[self.cand[a, b]].min()
            row = self.cand[a, b] & (pair_n == self.pair_round[a, b])
            row[used] = False  # never twice in one plan
            self.fresh[a, b] = self.fresh[b, a] = row
            self.has_fresh[a, b] = self.has_fresh[b, a] = row.any()
        self.comp[self.comp == self.comp[b]] = self.comp[a]
        for m in (a, b):  # warm-up only ever ends
            if self.cold[m]:
                self.cold[m] = self._is_cold(m)
        if self.fitted[a] and self.fitted[b]:
            self.cov = add_comparison(self.cov, a, b, self.weight[a, b])

    # --- picking --------------------------------------------------------------------------
    def _ranked(self, mode: str) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Pairs (indices into ``iu``) with a fresh task, best first, and their scores."""
        b = self.board
        i, j = self.iu
        ok_models = b.plannable & self.fitted if mode == "active" else b.plannable
        mask = ok_models[i] & ok_models[j] & self.has_fresh[i, j]
        tie = self.rng.random(i.size)
        idx = np.flatnonzero(mask)
        i, j = i[idx], j[idx]
        if mode == "active":
            score = trace_reduction(self.cov, self.weight)[i, j] * self.scale2
            order = np.lexsort((tie[idx], -score))
            return idx[order], score[order]
        played = b.meet.sum(axis=1)
        keys = (
            tie[idx],
            b.meet[i, j],
            played[i] + played[j],
            -(self.cold[i].astype(np.int64) + self.cold[j]),
            self.comp[i] == self.comp[j],
        )
        return idx[np.lexsort(keys)], np.full(idx.size, np.nan)

    def pick(self, mode: str) -> tuple[int, int, int, float] | None:
        """Best allowed ``(a, b, task, score)`` for ``mode``; ``None`` if no pair is allowed.

        A pair is allowed when it has a fresh task both models may play (:meth:`_task_levels`,
        strictest level first); at each level, pairs for which a judge both models have used
        least is left (:meth:`JudgeTurns.fits`) come first.
        """
        order, score = self._ranked(mode)
        if order.size == 0:
            return None
        fits = self.turns.fits()
        for ok in self._task_levels():
            for judged in (True, False):  # prefer pairs a judge can take without imbalance
                for k, p in enumerate(order):  # usually the first pair qualifies
                    a, c = int(self.iu[0][p]), int(self.iu[1][p])
                    if judged and not fits[a, c]:
                        continue
                    tasks = np.flatnonzero(ok[a] & ok[c] & self.fresh[a, c])
                    if tasks.size:
                        return a, c, self._task(a, c, tasks), float(score[k])
        return None

    def _task_levels(self):
        """Masks (M, T) of the tasks each model may play, strictest first.

        1. the model's lowest count in history + plan and, among those, in this plan;
        2. its lowest count in this plan, at most one above its lowest overall;
        3. its lowest count in this plan;
        4. then one, two, ... above its lowest count in this plan.
        """
        b = self.board
        big = np.iinfo(np.int64).max // 4
        total = np.where(b.usable, b.task_n, big)
        total_min = total.min(axis=1, keepdims=True)
        plan = np.where(b.usable, self.plan_task_n, big)
        plan_min = plan.min(axis=1, keepdims=True)
        at_min = total == total_min
        plan_at_min = np.where(at_min, plan, big)
        yield at_min & (plan_at_min == plan_at_min.min(axis=1, keepdims=True))
        yield (plan == plan_min) & (total <= total_min + 1)
        yield plan == plan_min
        spread = int(np.where(b.usable, self.plan_task_n - plan_min, 0).max())
        for slack in range(1, spread + 1):
            yield plan <= plan_min + slack

    def _task(self, a: int, c: int, tasks: NDArray[np.int64]) -> int:
        """Among allowed ``tasks``: fewest matches of the two models in this plan, then
        overall, then random."""
        b = self.board
        tie = self.rng.random(tasks.size)
        keys = (tie, b.task_n[a, tasks] + b.task_n[c, tasks],
                self.plan_task_n[a, tasks] + self.plan_task_n[c, tasks])  # fmt: skip
        return int(tasks[np.lexsort(keys)[0]])
