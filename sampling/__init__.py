"""Match planning: which matches to run next, and offline plan -> judge -> refit simulation.

* :func:`plan_matches` plans a batch (task, model_a, model_b, judge) from the verdicts so far:
  a balanced, connected start (new models placed on the rated models' ladder), then the pairs
  that most reduce the rating uncertainty, under balance rules for tasks, pairs, judges (with
  routing per task) and each model's share of the batch; failed submissions never reach a
  judge. :func:`plan_scopes` plans several scopes at once; :func:`check_balance` measures the
  rules.
* :mod:`sampling.design.simulate` draws verdicts for planned matches from known strengths
  (:func:`~sampling.design.simulate.judge_matches`) and runs whole campaigns
  (:func:`~sampling.design.simulate.simulate_loop`).
* :mod:`sampling.cli` provides the ``next`` subcommand (:data:`~sampling.cli.COMMAND`).

>>> import sampling
>>> plan = sampling.plan_matches(verdicts, subs, ["j1", "j2", "j3"], 100, seed=0)  # doctest: +SKIP
"""

from __future__ import annotations

from ratings.kit import add_moved, lazy_exports

# Public names and the submodule that defines each; loaded on first use (PEP 562) so that
# `ratings --help` and `ratings fit` do not pay for the planner's imports.
_EXPORTS = {
    "PlanWarning": "sampling.board.inputs",
    "check_balance": "sampling.design.checks",
    "DEFAULT_MAX_SHARE": "sampling.design.plan",
    "DEFAULT_MIN_MATCHES": "sampling.design.plan",
    "FALLBACK_PENALTY": "sampling.design.plan",
    "PLAN_COLUMNS": "sampling.design.plan",
    "fit_for_planning": "sampling.design.plan",
    "plan_matches": "sampling.design.plan",
    "plan_scopes": "sampling.design.scopes",
    "panel_targets": "sampling.judges.routing",
    "LoopResult": "sampling.design.simulate",
    "SimulatedBoard": "sampling.design.simulate",
    "judge_matches": "sampling.design.simulate",
    "make_board": "sampling.design.simulate",
    "simulate_loop": "sampling.design.simulate",
    "uniform_matches": "sampling.design.simulate",
}

__all__ = sorted(_EXPORTS)

#: Module paths of earlier releases: they warn and lead to the new ones.
add_moved({
    "sampling._board": "sampling.board.inputs",
    "sampling.pairs": "sampling.board.pairs",
    "sampling.feasibility": "sampling.board.feasibility",
    "sampling.routing": "sampling.judges.routing",
    "sampling._repair": "sampling.judges.assign_numba",
    "sampling.criteria": "sampling.picks.criteria",
    "sampling.picker": "sampling.picks.picker",
    "sampling._pickloop": "sampling.picks.picker_numba",
    "sampling._pcg64": "sampling.picks.pcg64_numba",
    "sampling.plan": "sampling.design.plan",
    "sampling.scopes": "sampling.design.scopes",
    "sampling.checks": "sampling.design.checks",
    "sampling.oracle": "sampling.design.oracle",
    "sampling.simulate": "sampling.design.simulate",
})


__getattr__ = lazy_exports(__name__, _EXPORTS)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
