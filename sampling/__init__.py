"""Match planning: which matches to run next, and offline plan -> judge -> refit simulation.

* :func:`plan_matches` plans a batch (task, model_a, model_b, judge) from the verdicts so far:
  a balanced, connected start (new models placed on the rated models' ladder), then the pairs
  that most reduce the rating uncertainty, under balance rules for tasks, pairs, judges (with
  routing per task) and each model's share of the batch; failed submissions never reach a
  judge. :func:`plan_scopes` plans several scopes at once; :func:`check_balance` measures the
  rules.
* :mod:`sampling.simulate` draws verdicts for planned matches from known strengths
  (:func:`~sampling.simulate.judge_matches`) and runs whole campaigns
  (:func:`~sampling.simulate.simulate_loop`).
* :mod:`sampling.cli` provides the ``next`` subcommand (:data:`~sampling.cli.COMMAND`).

>>> import sampling
>>> plan = sampling.plan_matches(verdicts, subs, ["j1", "j2", "j3"], 100, seed=0)  # doctest: +SKIP
"""

from __future__ import annotations

from ratings.kit import lazy_exports

# Public names and the submodule that defines each; loaded on first use (PEP 562) so that
# `ratings --help` and `ratings fit` do not pay for the planner's imports.
_EXPORTS = {
    "PlanWarning": "sampling._board",
    "check_balance": "sampling.checks",
    "DEFAULT_MAX_SHARE": "sampling.plan",
    "DEFAULT_MIN_MATCHES": "sampling.plan",
    "FALLBACK_PENALTY": "sampling.plan",
    "PLAN_COLUMNS": "sampling.plan",
    "fit_for_planning": "sampling.plan",
    "plan_matches": "sampling.plan",
    "plan_scopes": "sampling.scopes",
    "panel_targets": "sampling.routing",
    "LoopResult": "sampling.simulate",
    "SimulatedBoard": "sampling.simulate",
    "judge_matches": "sampling.simulate",
    "make_board": "sampling.simulate",
    "simulate_loop": "sampling.simulate",
    "uniform_matches": "sampling.simulate",
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_exports(__name__, _EXPORTS)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
