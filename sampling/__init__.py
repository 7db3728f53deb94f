"""Match planning: which matches to run next, and offline plan -> judge -> refit simulation.

* :func:`plan_matches` plans a batch (task, model_a, model_b, judge) from the verdicts so far:
  a balanced, connected start, then the pairs that most reduce the rating uncertainty, under
  balance rules for tasks, pairs and judges; :func:`check_balance` measures those rules.
* :mod:`sampling.simulate` draws verdicts for planned matches from known strengths
  (:func:`~sampling.simulate.judge_matches`) and runs whole campaigns
  (:func:`~sampling.simulate.simulate_loop`).
* :mod:`sampling.cli` provides the ``next`` subcommand (:func:`~sampling.cli.add_next_parser`).

>>> import sampling
>>> plan = sampling.plan_matches(verdicts, subs, ["j1", "j2", "j3"], 100, seed=0)  # doctest: +SKIP
"""

from sampling._board import PlanWarning
from sampling.checks import check_balance
from sampling.plan import (
    DEFAULT_MIN_MATCHES,
    FALLBACK_PENALTY,
    PLAN_COLUMNS,
    fit_for_planning,
    plan_matches,
)
from sampling.simulate import (
    LoopResult,
    SimulatedBoard,
    judge_matches,
    make_board,
    simulate_loop,
    uniform_matches,
)

__all__ = [
    "DEFAULT_MIN_MATCHES",
    "FALLBACK_PENALTY",
    "PLAN_COLUMNS",
    "LoopResult",
    "PlanWarning",
    "SimulatedBoard",
    "check_balance",
    "fit_for_planning",
    "judge_matches",
    "make_board",
    "plan_matches",
    "simulate_loop",
    "uniform_matches",
]
