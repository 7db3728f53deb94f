"""Grow a simulated verdict log with the planner, for the sampling tests."""

from __future__ import annotations

import pandas as pd

from sampling import plan_matches
from sampling.design.simulate import judge_matches


def grow(board, subs, n_batches, n, *, seed=0, log=None, **kw):
    """Plan and judge ``n_batches`` batches of ``n`` from ``log``; the log afterwards."""
    for k in range(n_batches):
        plan = plan_matches(log, subs, board.judges, n, seed=seed + k, **kw)
        v = judge_matches(plan, board, seed=seed + 100 + k)
        log = v if log is None else pd.concat([log, v], ignore_index=True)
    return log
