"""Plan the next batch of matches: a balanced, connected start, then the most informative pairs."""

from __future__ import annotations

import dataclasses
import numbers
import warnings
from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

import ratings
from ratings.kit import (
    DETERMINISTIC_JUDGE,
    LEGACY,
    PenaltyOnlyWarning,
    format_names,
    legacy_specs,
    option,
)
from sampling.board.inputs import (
    Board,
    PlanWarning,
    check_anchor,
    check_count,
    check_judges,
    check_seed,
    history_frame,
    submissions_frame,
)
from sampling.judges.assign import JudgeTurns, assign_judges
from sampling.judges.routing import routing_mask
from sampling.picks import compiled
from sampling.picks.picker import Objective, Picker, share_cap

__all__ = [
    "DEFAULT_MAX_SHARE",
    "DEFAULT_MIN_MATCHES",
    "FALLBACK_PENALTY",
    "FORFEIT_COLUMNS",
    "PLAN_COLUMNS",
    "Phase",
    "fit_for_planning",
    "plan_matches",
]

Phase = Literal["auto", "balanced", "active"]
PLAN_COLUMNS = ("task_id", "model_a", "model_b", "judge", "phase", "score")
FORFEIT_COLUMNS = ("winner", "failed_a", "failed_b")  # added when forfeits are planned
DEFAULT_MIN_MATCHES = 10
DEFAULT_MAX_SHARE = 3.0  # a model's matches in a batch: at most 3x its fair share
FALLBACK_PENALTY = 0.1  # ridge used when the MLE does not exist yet (planning only)
#: Plans with at least this many matches x models pick their active phase in one compiled
#: loop (:mod:`sampling.picks.picker_numba`, the same picks) once it is compiled or cached;
#: smaller ones, where loading numba (0.5-0.7 s in a fresh process) would cost more than the
#: NumPy picker's 0.3-1 ms per pick, use the picker unless the loop is loaded already.
KERNEL_MIN_WORK = 100_000
_OPTIONS = ("phase=, min_matches=, scope=, anchor=, objective=, max_share=, task_judges=, "
            "forfeits=, fit_options=, fitted=, solver= (see ratings.Solver)")


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
        ``penalty=FALLBACK_PENALTY`` (0.1), whose intervals are approximate (read as they are:
        the flags of ratings that exist only because of the penalty are dropped); that fallback
        leaves out ``style`` (a penalty does not combine with style control).
    """
    options = {"ci": "model", **(fit_options or {})}
    name, rating = check_anchor(anchor)
    kw = {"anchor": (name, rating) if name is not None else None}
    try:
        return ratings.fit(source, **kw, **options)
    except ratings.NonIdentifiableError:
        if "penalty" in options or isinstance(options.get("model"), ratings.BT):
            raise
        with warnings.catch_warnings():  # planning reads the penalised fit as it is
            warnings.simplefilter("ignore", PenaltyOnlyWarning)
            penalised = ratings.BT(penalty=FALLBACK_PENALTY)
            options.pop("style", None)  # a penalty does not combine with style control
            r = ratings.fit(source, **kw, **(options | {"model": penalised}))
        return dataclasses.replace(r, fit_info=dataclasses.replace(r.fit_info, unbounded=None))


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
    objective: Objective = "pairwise",
    max_share: float | None = DEFAULT_MAX_SHARE,
    task_judges: pd.DataFrame | Mapping[str, Sequence[str]] | None = None,
    forfeits: bool = False,
    fit_options: Mapping[str, object] | None = None,
    fitted: ratings.Ratings | None = None,
    solver: ratings.Solver | None = None,
    **legacy: object,
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
        model that has no submission yet. An optional ``failed`` column (true/false, 1/0,
        yes/no; empty is false) marks submissions that failed to render: they are never sent
        to a judge (see ``forfeits``).
    judges : list of str
        The judge panel; judges are used in turn.
    n : int
        Number of judged matches to plan.
    seed : int
        Seed of every random choice (ties, A/B order); same inputs and seed, same plan.
    phase : {"auto", "balanced", "active"}, default="auto"
        ``"auto"`` plans balanced matches while some model is below ``min_matches`` (counting
        the matches planned so far in this batch), then active ones. ``"active"`` needs every
        model with submissions to have verdicts.
    min_matches : int, default=10
        A model's exposure target: it leaves the balanced phase once it has this many matches
        (history + plan), on at least ``min(min_matches, its tasks)`` distinct tasks. Whom it
        met does not count (a log where every model met only a baseline model is past the
        balanced phase once every model has its matches; the active phase then picks the
        informative pairs).
    scope : str, optional
        Plan for the verdicts of this scope (required when the log holds several). A scope
        with no verdicts yet is planned from an empty log (with a :class:`PlanWarning` when
        the log holds other scopes, naming them). :func:`sampling.plan_scopes` plans several.
    anchor : str, optional
        ``"NAME"`` or ``"NAME=RATING"``: the model the fit is anchored at. Only
        ``objective="anchored"`` depends on it. Default: centred ratings.
    objective : {"pairwise", "anchored"}, default="pairwise"
        What active picks reduce: the mean variance of all pairwise rating differences (does
        not depend on the anchor), or the sum of the variances relative to ``anchor``
        (requires ``anchor``; it sends many matches to the anchor, see Notes).
    max_share : float or None, default=3.0
        A model plays at most ``max_share`` times its fair share of the batch
        (``2 n / M`` matches among ``M`` models that can play), rounded up. ``None`` or
        ``inf``: no bound.
    task_judges : DataFrame or mapping, optional
        Routing: ``task_id`` and ``judge`` columns (one row per allowed judge), or
        ``{task_id: [judges]}``. Matches on a listed task go to one of its judges; other tasks
        allow the whole panel. Default: every judge on every task.
    forfeits : bool, default=False
        Also plan matches on failed submissions, as forfeit rows that need no judge: judge
        ``"deterministic"``, ``winner`` set (the failed side loses; two failures tie), and
        ``failed_a`` / ``failed_b``. They are not counted in ``n``. Without it, failed
        submissions are left out (with a :class:`PlanWarning`).
    fit_options : mapping, optional
        Keyword arguments for the :func:`ratings.fit` that scores candidates; default
        ``{"ci": "model"}`` (see Notes). E.g. ``{"style": ratings.Style(["tokens"])}`` scores
        candidates with style-controlled ratings (the verdicts then carry ``tokens_a`` and
        ``tokens_b``).
    fitted : ratings.Ratings, optional
        A current fit of ``verdicts`` to use instead of fitting them again (reanchored at
        ``anchor`` when given; ``fit_options`` is then unused).
    solver : ratings.Solver, optional
        The fit's solver (:class:`ratings.Solver`, as in :func:`ratings.fit`; unless
        ``fit_options`` sets one); its ``max_memory`` (bytes, or e.g. ``"8GB"``; default half
        the available memory, see :mod:`ratings.core.memory`) also stops planning before it
        would need more memory than that.
    **legacy
        ``max_memory=`` of earlier releases still works, with a :class:`DeprecationWarning`
        naming ``ratings.Solver(max_memory=)``; any other keyword is a ``TypeError``.

    Returns
    -------
    pandas.DataFrame
        One row per match in the order picked (``attrs["phase_reason"]``: one line saying why
        the plan has a balanced phase or none), columns ``task_id``, ``model_a``, ``model_b``
        (A/B order random), ``judge``, ``phase`` (``"balanced"`` or ``"active"``) and ``score``:
        for active picks the expected reduction of the objective at the time of the pick
        (Elo^2: the mean variance over pairs, or the sum of the variances relative to the
        anchor); ``NaN`` for balanced picks, which are chosen by the rules below. With
        ``forfeits``, also ``winner``, ``failed_a`` and ``failed_b`` (judged rows: no winner,
        both flags false).

    Raises
    ------
    ValueError
        Bad arguments or columns, neither ``verdicts`` nor ``submissions``, fewer than two models
        that can be paired, ``n`` above the number of distinct ``(task, pair)`` candidates,
        ``phase="active"`` without verdicts for every model, or a routing table naming a judge
        outside the panel.

    Warns
    -----
    PlanWarning
        Models for which no match can be planned: in the verdicts but without submissions
        (kept in the fit), listed without any task, or sharing no task with another model; a
        board that splits into groups sharing no task; failed submissions left out; a scope
        without verdicts in a log of other scopes; routed tasks without submissions; panel
        judges that the verdicts never name (a typo, or a new judge).

    Notes
    -----
    Models, tasks and judges are compared as strings. Every pick obeys, in this order:

    * **No repeats**: a pair plays its shared tasks in rounds: a ``(task, unordered pair)`` is
      not planned again, counting the history, until the pair has played every task both
      models have as often; and never twice in one plan.
    * **Share of the batch**: a model already at ``max_share`` times its fair share is not
      picked while another pair is allowed (the bound is relaxed only when none is).
    * **Tasks per model**: a model plays a task with its lowest count in this plan, so within
      a plan its per-task counts differ by at most one; and, whenever some pair allows it,
      also with its lowest count in history + plan, so across history + plan they stay within
      one. Where no pair allows both, the history + plan rule is relaxed first (by one match;
      later picks restore it), and the plan rule last (seen only on boards of a few models
      whose active phase keeps a model in most of a batch).
    * **Balanced picks** take, lexicographically: a pair joining two groups not yet connected,
      not two new models while rated ones exist (below), more models below ``min_matches``,
      the rated opponent nearest the new model's next rung of the ladder (below), fewer
      matches of the two models, fewer past meetings of the pair, then a seeded random
      tie-break. The first ``M - 1`` picks of a new board therefore connect every model that
      can be connected (the first fit exists once results go both ways), and the next ones
      follow random near-regular cycles.
    * **New models** (models added to a board whose other models are past ``min_matches``):
      *rated* models are those out of the balanced phase before the plan, the others are
      *new*. A new model plays rated models, not other new ones, while it is in the balanced
      phase and some rated opponent is allowed. Its ``k``-th match against a rated model goes
      to the rated model whose rank (by current rating, weakest 0, strongest 1) is nearest to
      the ``k``-th point of the van der Corput sequence 1/2, 1/4, 3/4, 1/8, 5/8, 3/8, ...:
      the median first, then the quartiles, so its first matches span the ladder and place it
      whatever its strength. Only after that (in the active phase, or when no rated pair is
      left) do new models meet each other.
    * **Active picks** take the pair with the largest expected reduction of the objective.
      One more comparison of a and b changes the covariance ``C`` of the log-strengths by
      the rank-one update ``-w C x x^T C / (1 + w x^T C x)`` (Sherman-Morrison), with
      ``x = e_a - e_b``, ``w = p (1 - p)`` and ``p`` the fitted probability that a beats b,
      so ``trace(C)`` falls by ``w ||C x||^2 / (1 + w x^T C x)``: close ratings and large
      uncertainty score high. ``objective="pairwise"`` applies this to the centred
      covariance ``P C P`` (``P = I - 11^T / M``), whose trace is the sum of the variances of
      all pairwise differences divided by ``M``: the same for every anchor.
      ``objective="anchored"`` applies it to ``C`` anchored at ``anchor``, the variances of
      the differences to the anchor: every comparison with the anchor reduces them all, so
      without the share bound the anchor takes about half of a batch. After each pick the
      covariance gets the update, so a batch spreads over pairs rather than repeating the best
      one. By default ``C`` is the model-based inverse Hessian, the inverse information that
      the update assumes; a sandwich ``C`` (``fit_options={"ci": "sandwich"}``) is treated as
      one, but it collapses for a model that has never won (its scores are all near zero),
      which would then never be picked again.
    * **Judges** are assigned after the picks: per-judge quotas keep the panel's counts level
      (within one) in this plan and across history + plan (when the history was level); then
      each model's per-judge counts are levelled the same way where an assignment exists
      (greedy pass, alternating-path repairs, then an integer programme for plans of up to
      500 matches with three judges, or repairs on the weighted violation for larger ones;
      see :mod:`sampling.judges.assign`). With ``task_judges``, each match goes to a judge its task
      allows, and the panel's totals are the most even the routing allows: forced matches go
      to their judges, the free ones fill the judges with the fewest
      (:mod:`sampling.judges.routing`;
      :func:`sampling.check_balance` reports the best spread alongside the one reached). A/B
      order is a fair coin per match.
    * **Failed submissions** are never sent to a judge; with ``forfeits`` they play like any
      other submission under the rules above, and their matches come out as forfeit rows.

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
    given = legacy_specs(legacy, names={"max_memory": LEGACY["max_memory"]},
                         where="plan_matches", options=_OPTIONS).get("Solver")
    if given is not None and solver is not None:
        raise TypeError("pass `max_memory` inside `solver=ratings.Solver(...)`, not beside it.")
    solver = ratings.Solver(**given) if given is not None else solver
    max_memory = None if solver is None else solver.max_memory
    judges = check_judges(judges)
    n = check_count(n, "n", 1)
    min_matches = check_count(min_matches, "min_matches", 0)
    seed = check_seed(seed)
    if phase not in ("auto", "balanced", "active"):
        raise ValueError(f"{option('phase')} must be 'auto', 'balanced' or 'active'; got "
                         f"{phase!r}.")  # fmt: skip
    anchor_name, anchor_rating = check_anchor(anchor)
    _check_objective(objective, anchor_name)
    max_share = _check_max_share(max_share)
    if fitted is not None and not isinstance(fitted, ratings.Ratings):
        raise TypeError(f"`fitted` must be a ratings.Ratings; got {type(fitted).__name__!r}.")

    history = history_frame(verdicts, scope)
    subs = submissions_frame(submissions, history)
    board = Board.build(history, subs, judges, forfeits=bool(forfeits), max_memory=max_memory)
    if solver is not None:
        fit_options = {"solver": solver, **(fit_options or {})}
    board.report_unplannable(history, subs.listed_only, explicit=submissions is not None)
    _warn_failed(board, subs, bool(forfeits))
    _warn_unseen_judges(history, judges)
    allowed = routing_mask(task_judges, board.tasks, board.judges)
    plannable = board.plannable
    if plannable.sum() < 2:
        raise ValueError(
            f"Fewer than two models can be paired ({int(plannable.sum())}): a match needs two "
            "models with submissions on the same task. Check `submissions`."
        )
    shared = board.shared()
    n_cand = int(board.shared(exclude=board.failed).sum()) // 2  # judged (task, pair) cells
    if n > n_cand:
        raise ValueError(
            f"Cannot plan {n} matches: only {n_cand} distinct (task, model pair) candidates "
            f"exist ({int(plannable.sum())} models with shared submissions on "
            f"{int(board.usable.any(axis=0).sum())} tasks), and one batch never repeats a "
            f"candidate. Ask for n <= {n_cand}, or add submissions."
        )
    _warn_split(board, shared)

    def current_fit() -> ratings.Ratings | None:
        if fitted is not None:
            return _reanchor(fitted, anchor_name, anchor_rating)
        if len(history) == 0:
            return None
        return fit_for_planning(history.frame, anchor=anchor, fit_options=fit_options)

    rng = np.random.default_rng(seed)
    turns = JudgeTurns(board.judge_n, board.judge_total, n, rng, routed=allowed is not None)
    picker = Picker(board, rng, min_matches, turns, objective=objective,
                    cap=share_cap(max_share, n, int(plannable.sum())), allowed=allowed)  # fmt: skip
    if phase == "active":
        fit = current_fit()
        if fit is None:
            raise ValueError(
                f"{option('phase', 'active')} needs a fit, but there are no verdicts yet. Use "
                f"{option('phase', 'auto')} (or 'balanced') for the first batches."
            )
        picker.set_fit(fit)
        unfitted = [str(x) for x in board.models[plannable & ~picker.fitted]]
        if unfitted:
            raise ValueError(
                f"{option('phase', 'active')} cannot score {len(unfitted)} model(s) without "
                f"verdicts: {unfitted[:8]}. Use {option('phase', 'auto')} to give them balanced "
                "matches first."
            )
    elif picker.needs_ladder():  # new models are placed on the rated models' ladder
        picker.set_fit(current_fit())

    reason = _phase_reason(phase, board, picker, min_matches)
    picks, columns, n_judged = [], None, 0
    if (phase == "active" or (phase == "auto" and not picker.any_cold())) and _compiled_picks(
        picker, n, len(board.models)
    ):  # every pick is active: the compiled loop makes them all
        if picker.fit is None:
            fit = current_fit()
            if fit is not None:
                picker.set_fit(fit)
        if picker.fit is not None:
            columns = picker.run_active(n)  # the whole plan, or None
            n_judged = n if columns is not None else 0
    while n_judged < n:
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
        a, c, t = pick[:3]
        is_judged = not (board.failed[a, t] or board.failed[c, t])
        picker.record(a, c, t, judged=is_judged)
        picks.append((*pick, mode, is_judged))
        n_judged += is_judged

    if columns is None:
        columns = tuple(np.array(col) for col in zip(*picks, strict=True))
    a, b, t, score, modes, is_judged = columns
    a, b, t = a.astype(np.int64), b.astype(np.int64), t.astype(np.int64)
    is_judged = is_judged.astype(bool)
    judge = np.full(a.size, -1, dtype=np.int64)
    judge[is_judged] = assign_judges(
        a[is_judged], b[is_judged], board.judge_n, board.judge_total, rng,
        initial=np.array(turns.given), allowed=None if allowed is None else allowed[t[is_judged]],
    )  # fmt: skip
    swap = rng.random(a.size) < 0.5
    models = board.models.to_numpy(dtype=object)
    names = np.append(board.judges.to_numpy(dtype=object), DETERMINISTIC_JUDGE)
    out = pd.DataFrame(
        {
            "task_id": board.tasks.to_numpy(dtype=object)[t],
            "model_a": models[np.where(swap, b, a)],
            "model_b": models[np.where(swap, a, b)],
            "judge": names[judge],
            "phase": modes.astype(object),
            "score": score.astype(np.float64),
        }
    )
    out.attrs["phase_reason"] = reason
    if forfeits:
        fail_a = board.failed[np.where(swap, b, a), t]
        fail_b = board.failed[np.where(swap, a, b), t]
        winner = np.where(fail_a & fail_b, "tie", np.where(fail_a, "B", "A")).astype(object)
        out["winner"] = np.where(is_judged, None, winner)
        out["failed_a"], out["failed_b"] = fail_a, fail_b
    return out


def _compiled_picks(picker: Picker, n: int, n_models: int) -> bool:
    """Whether the compiled loop picks the active phase: any plan once the loop is loaded in
    this process; plans of :data:`KERNEL_MIN_WORK` matches x models or more when the loop and
    the judge repair run without compiling (:func:`sampling.picks.compiled.ready`: numba's
    on-disk cache holds them); never for a picker that overrides :meth:`Picker.pick` or
    :meth:`Picker.record`, which the loop implements. Otherwise the picker makes the same
    picks."""
    own = type(picker).pick is Picker.pick and type(picker).record is Picker.record
    return own and (compiled.loaded() or (n * n_models >= KERNEL_MIN_WORK and compiled.ready()))


def _phase_reason(phase: str, board: Board, picker: Picker, min_matches: int) -> str:
    """One line: why the plan starts with a balanced phase, or why it does not."""
    if phase != "auto":
        return f"{phase} matches only, as asked ({option('phase', phase)})"
    target = (f"the exposure target of {min_matches} matches on {min_matches} distinct tasks "
              "(or all of a model's tasks)")  # fmt: skip
    cold = np.flatnonzero(picker.cold)
    if cold.size == 0:
        return f"no balanced phase: every model meets {target}"
    matches, tasks = picker.exposure()
    shown = ", ".join(f"{board.models[i]} ({matches[i]} matches, {tasks[i]} tasks)"
                      for i in cold[:3])
    more = f" and {cold.size - 3} more" if cold.size > 3 else ""
    return (f"balanced phase: {cold.size} of {int(board.plannable.sum())} models are below "
            f"{target}: {shown}{more}")


def _check_objective(objective: str, anchor: str | None) -> None:
    if objective not in ("pairwise", "anchored"):
        raise ValueError(f"{option('objective')} must be 'pairwise' or 'anchored'; got "
                         f"{objective!r}.")  # fmt: skip
    if objective == "anchored" and anchor is None:
        raise ValueError(
            f"{option('objective', 'anchored')} reduces the variances relative to the anchor, "
            f"so it needs {option('anchor')}; without one use {option('objective', 'pairwise')} "
            "(the default)."
        )


def _check_max_share(max_share: float | None) -> float | None:
    if max_share is None:
        return None
    if isinstance(max_share, bool) or not isinstance(max_share, numbers.Real) or not (
        max_share >= 1.0
    ):  # fmt: skip
        raise ValueError(
            "`max_share` must be a number >= 1 (times a model's fair share of the batch), or "
            f"None / inf for no bound; got {max_share!r}."
        )
    return float(max_share)


def _warn_unseen_judges(history, judges: list[str]) -> None:
    """Warn about panel judges that the history's judge column never names (typos)."""
    if history.judge is None or len(history) == 0:
        return
    seen = set(history.judge.names.tolist()) - {"", DETERMINISTIC_JUDGE}
    unseen = [j for j in judges if j not in seen]
    if seen and unseen:
        warnings.warn(
            f"Judge(s) {format_names(unseen)} in {option('judges')} never appear in the "
            f"verdicts so far (their judges: {format_names(sorted(seen))}). If that is a typo, "
            "fix it; a new judge gets matches until the panel's counts are level.",
            PlanWarning,
            stacklevel=3,
        )


def _warn_failed(board: Board, subs, forfeits: bool) -> None:
    """Say how many failed submissions are left out when no forfeits are planned."""
    if forfeits or subs.failed is None or not subs.failed.any():
        return
    models = sorted(set(subs.model[subs.failed].tolist()))
    warnings.warn(
        f"{int(board.failed.sum())} failed submission(s) of {len(models)} model(s) "
        f"({format_names(models)}) are not sent to a judge and no match is planned on them. Pass "
        f"{option('forfeits', True)} to plan their forfeit rows.",
        PlanWarning,
        stacklevel=3,
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


def _warn_split(board: Board, shared: NDArray[np.int64]) -> None:
    """Warn when the models split into groups that neither share a task nor met before."""
    link = (shared > 0) | (board.meet > 0)
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
