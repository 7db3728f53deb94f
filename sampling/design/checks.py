"""Check a plan against the balance rules of :func:`sampling.plan_matches`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

import ratings
from ratings.kit import DETERMINISTIC_JUDGE, require_columns
from sampling.board.inputs import Board, check_judges, history_frame, str_array, submissions_frame
from sampling.judges.routing import panel_targets, routing_mask

__all__ = ["check_balance"]


def _spread(counts: np.ndarray, mask: np.ndarray | None = None) -> int:
    """Largest (max - min) over rows, restricted to ``mask`` entries; 0 for no rows."""
    if counts.size == 0:
        return 0
    if mask is None:
        return int((counts.max(axis=1) - counts.min(axis=1)).max())
    big = np.iinfo(np.int64).max // 4
    hi = np.where(mask, counts, -big).max(axis=1)
    lo = np.where(mask, counts, big).min(axis=1)
    rows = mask.any(axis=1)
    return int((hi - lo)[rows].max()) if rows.any() else 0


def check_balance(
    plan: pd.DataFrame,
    verdicts: pd.DataFrame | ratings.VerdictLog | None,
    submissions: pd.DataFrame | None,
    judges: Sequence[str],
    *,
    scope: str | None = None,
    task_judges: pd.DataFrame | Mapping[str, Sequence[str]] | None = None,
    forfeits: bool = False,
) -> pd.Series:
    """Measure how well ``plan`` keeps the balance rules, given the history.

    Parameters
    ----------
    plan : pandas.DataFrame
        ``task_id``, ``model_a``, ``model_b``, ``judge`` in planned order (as returned by
        :func:`sampling.plan_matches`; forfeit rows, judge ``"deterministic"``, count for the
        task rules and no judge).
    verdicts, submissions, judges, scope, task_judges, forfeits
        As passed to :func:`sampling.plan_matches`.

    Returns
    -------
    pandas.Series of int
        * ``invalid_matches``: planned matches on a task one of the two models has no
          submission for (or where both sides are the same model), judged matches on a failed
          submission, and forfeit rows without one;
        * ``routing_violations``: judged matches whose judge the task's routing does not allow;
        * ``premature_repeats``: planned matches whose ``(task, pair)`` had been played more
          often than another task the pair shares, or that appear twice in the plan;
        * ``task_spread_plan`` / ``task_spread_total``: over models, the largest difference
          between a model's match counts on two of its playable tasks, in the plan / in history
          plus plan;
        * ``judge_spread_plan`` / ``judge_spread_total``: the same between judges overall;
        * ``judge_spread_total_best``: the smallest ``judge_spread_total`` any assignment of
          the plan's judged matches to judges their tasks allow could reach (with the
          history's counts; :func:`sampling.judges.routing.panel_targets`); without routing, 0 or 1;
        * ``judge_model_spread_plan`` / ``judge_model_spread_total``: the same between judges
          within one model's matches (models in the plan).

        Without routing the rules hold when the first three counts are 0 and every spread is
        at most 1; with routing, the panel's totals are as even as the routing allows when
        ``judge_spread_total == judge_spread_total_best``.
    """
    judges = check_judges(judges)
    history = history_frame(verdicts, scope)
    subs = submissions_frame(submissions, history)
    board = Board.build(history, subs, judges, forfeits=bool(forfeits))
    require_columns(plan, ["task_id", "model_a", "model_b", "judge"], "`plan`", error=ValueError)
    a = board.models.get_indexer(str_array(plan["model_a"]))
    b = board.models.get_indexer(str_array(plan["model_b"]))
    t = board.tasks.get_indexer(str_array(plan["task_id"]))
    judge_names = str_array(plan["judge"])
    forfeit = judge_names == DETERMINISTIC_JUDGE
    j = board.judges.get_indexer(judge_names)
    unknown = (a < 0) | (b < 0) | (t < 0) | ((j < 0) & ~forfeit)
    if unknown.any():
        raise ValueError(
            f"{int(unknown.sum())} planned match(es) name a model, task or judge not in the "
            f"inputs, e.g. row {int(np.flatnonzero(unknown)[0])}."
        )

    playable = board.playable
    task_hist = board.task_n.copy()
    judge_hist, judge_total_hist = board.judge_n.copy(), board.judge_total.copy()
    on_failed = board.failed[a, t] | board.failed[b, t]
    invalid = ~(playable[a, t] & playable[b, t]) | (a == b) | (on_failed != forfeit)
    allowed = routing_mask(task_judges, board.tasks, board.judges)
    if allowed is None:
        allowed = np.ones((len(board.tasks), len(board.judges)), dtype=bool)
    premature, seen = 0, set()
    for k in np.flatnonzero(~invalid):  # sequential: the rule depends on the counts so far
        counts = board.pairs.row(a[k], b[k])
        shared = counts[playable[a[k]] & playable[b[k]]]
        key = (min(a[k], b[k]), max(a[k], b[k]), t[k])
        premature += int(counts[t[k]] > shared.min() or key in seen)
        seen.add(key)
        board.add(a[k], b[k], t[k])

    n_judges = len(board.judges)
    jd, aj, bj, tj = j[~forfeit], a[~forfeit], b[~forfeit], t[~forfeit]
    plan_judge_n = np.zeros_like(judge_hist)
    np.add.at(plan_judge_n, (aj, jd), 1)
    np.add.at(plan_judge_n, (bj, jd), 1)
    in_plan = np.zeros(len(board.models), dtype=bool)
    in_plan[aj], in_plan[bj] = True, True
    plan_total = np.bincount(jd, minlength=n_judges)
    best = judge_total_hist + panel_targets(allowed[tj], judge_total_hist).plan
    usable = board.usable
    out = {
        "invalid_matches": int(invalid.sum()),
        "routing_violations": int((~allowed[tj, jd]).sum()),
        "premature_repeats": premature,
        "task_spread_plan": _spread(board.task_n - task_hist, usable),
        "task_spread_total": _spread(board.task_n, usable),
        "judge_spread_plan": _spread(plan_total[None, :]),
        "judge_spread_total": _spread((judge_total_hist + plan_total)[None, :]),
        "judge_spread_total_best": _spread(best[None, :]),
        "judge_model_spread_plan": _spread(plan_judge_n[in_plan]),
        "judge_model_spread_total": _spread((judge_hist + plan_judge_n)[in_plan]),
    }
    return pd.Series(out, dtype=np.int64, name="balance")
