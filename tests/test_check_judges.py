"""One judge per rubric check: balanced, stable when checks are added, earlier assignments kept."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ratings.scopes.check_judges import assign_check_judges

PANEL = ["J1", "J2", "J3"]


def checks(n_tasks: int, per_task: int = 6) -> pd.DataFrame:
    return pd.DataFrame({"task_id": [f"t{i // per_task:02d}" for i in range(n_tasks * per_task)],
                         "check_id": [f"c{i % per_task}" for i in range(n_tasks * per_task)]})


def test_balanced_within_one_and_spread_within_each_task():
    for n_tasks, per_task in [(10, 6), (7, 5), (1, 2)]:
        out = assign_check_judges(checks(n_tasks, per_task), PANEL, seed=3)
        counts = out["judge"].value_counts().reindex(PANEL, fill_value=0)
        assert counts.max() - counts.min() <= 1 and len(out) == n_tasks * per_task
    out = assign_check_judges(checks(10, 6), PANEL, seed=3)
    per_task = out.groupby("task_id")["judge"].value_counts().unstack(fill_value=0)
    assert (per_task == 2).all().all()  # checks listed task by task: each judge 2 of 6


def test_appending_checks_keeps_every_judge_and_repeated_rows_are_one_check():
    first = assign_check_judges(checks(8), PANEL, seed=5)
    more = assign_check_judges(checks(11), PANEL, seed=5)
    pd.testing.assert_frame_equal(more.iloc[: len(first)], first)
    # a rubric results table (one row per model) names each check many times
    rows = checks(8).merge(pd.DataFrame({"model": ["a", "b", "c"]}), how="cross")
    pd.testing.assert_frame_equal(assign_check_judges(rows, PANEL, seed=5), first)
    assert not first.equals(assign_check_judges(checks(8), PANEL, seed=6))


def test_previous_assignment_is_kept_in_any_order():
    first = assign_check_judges(checks(8), PANEL, seed=1)
    shuffled = checks(12).sample(frac=1.0, random_state=2)
    out = assign_check_judges(shuffled, PANEL, seed=9, previous=first)
    both = out.merge(first, on=["task_id", "check_id"], suffixes=("", "_before"))
    assert len(both) == len(first) and (both["judge"] == both["judge_before"]).all()
    counts = out["judge"].value_counts()
    assert counts.max() - counts.min() <= 1
    # a judge leaves the panel: its checks must be reassigned explicitly
    with pytest.raises(ValueError, match=r"judge\(s\) \['J3'\] that are not in `judges`"):
        assign_check_judges(checks(8), ["J1", "J2"], seed=1, previous=first)
    clash = pd.concat([first, first.iloc[:1].assign(judge="J9")])
    with pytest.raises(ValueError, match=r"gives 2 row\(s\) of one check to different judges"):
        assign_check_judges(checks(8), PANEL, seed=1, previous=clash)


def test_bad_inputs():
    with pytest.raises(ValueError, match=r"Column 'check_id' not found in checks"):
        assign_check_judges(pd.DataFrame({"task_id": ["t"]}), PANEL, seed=0)
    with pytest.raises(ValueError, match=r"1 row\(s\) with a missing task_id or check_id, at "
                                         r"rows \[1\]"):  # fmt: skip
        assign_check_judges(pd.DataFrame({"task_id": ["t", None], "check_id": ["a", "b"]}),
                            PANEL, seed=0)  # fmt: skip
    with pytest.raises(ValueError, match=r"`judges` must be a non-empty list of distinct"):
        assign_check_judges(checks(1), ["J1", "J1"], seed=0)
    with pytest.raises(ValueError, match=r"`seed` must be a non-negative integer"):
        assign_check_judges(checks(1), PANEL, seed=np.float64(1.5))
