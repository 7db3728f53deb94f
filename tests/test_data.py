"""Aggregation: bad canonical frames passed straight to ``aggregate`` are rejected by row."""

from __future__ import annotations

import pandas as pd
import pytest

from ratings import InvalidVerdictsError, aggregate


def _frame(**over):
    base = {"model_a": ["x", "y", "z", "x"], "model_b": ["y", "z", "x", "z"],
            "winner": ["A", "B", "B", "tie"], "task_id": ["t1", "t2", "t3", "t1"],
            "judge": ["j", "j", "k", "k"]}  # fmt: skip
    base.update(over)
    return pd.DataFrame(base)


@pytest.mark.parametrize(
    ("column", "values", "message"),
    [
        ("winner", ["A", None, "B", "tie"], r"missing winner: rows \[1\]"),
        ("model_a", ["x", None, "z", "x"], r"missing model name: rows \[1\]"),
        ("model_b", ["y", "z", "x", "x"], r"against itself .*rows \[3\]"),
        ("task_id", ["t1", "t2", None, "t1"], r"missing task_id: rows \[2\]"),
        ("judge", ["j", None, "k", "k"], r"missing judge: rows \[1\]"),
    ],
)
def test_aggregate_rejects_missing_values_and_self_matches(column, values, message):
    with pytest.raises(InvalidVerdictsError, match=message) as err:
        aggregate(_frame(**{column: values}))
    assert len(err.value.rows) == 1


def test_forfeits_override_the_judge():
    frame = _frame(failed_a=[True, False, True, False], failed_b=[False, False, True, False])
    data = aggregate(frame, cluster=None)
    det = list(data.judges).index("deterministic")
    rows = data.judge == det
    # row 0: x failed vs y -> y wins; row 2: both failed -> tie
    assert sorted(zip(data.ii[rows], data.jj[rows], data.wi[rows], data.wj[rows], data.tt[rows],
                      strict=True)) == [(0, 1, 0.0, 1.0, 0.0), (0, 2, 0.0, 0.0, 1.0)]  # fmt: skip
