"""The two ways `read_verdicts` encodes a text column (plain Python for few distinct values,
pandas past `_FEW`) give the same verdicts, rejected rows and categories, and those equal a
plain pandas reading of the same cells (stripped, missing markers as missing, sorted)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ratings.io.verdicts as verdicts
from ratings.io.cells import NA_TOKENS


def _frame(n_tasks: int, dtype) -> pd.DataFrame:
    rng = np.random.default_rng(n_tasks)
    n = 3 * n_tasks
    models = np.array(["m1", " m2", "m3 ", "m4"], dtype=object)
    tasks = np.array([f" t{k:05d}" if k % 7 == 0 else f"t{k:05d}" for k in range(n_tasks)]
                     + ["NA", "  ", "t00001 "], dtype=object)  # fmt: skip
    a = rng.integers(0, 4, n)
    b = (a + rng.integers(1, 4, n)) % 4
    return pd.DataFrame({
        "model_a": models[a], "model_b": models[b],
        "winner": np.array(["A", "B", "tie"], dtype=object)[rng.integers(0, 3, n)],
        "task_id": tasks[rng.integers(0, len(tasks), n)],
    }).astype(dtype)


def _plain_tasks(df: pd.DataFrame) -> pd.Series:
    t = df["task_id"].astype(object).map(lambda v: v.strip())
    return t.where(~t.isin(NA_TOKENS) & (t != ""))


@pytest.mark.parametrize("dtype", [object, "str"])
@pytest.mark.parametrize("n_tasks", [50, 6_000])
def test_python_and_pandas_encodings_agree(monkeypatch, n_tasks, dtype):
    df = _frame(n_tasks, dtype)
    logs = []
    for few in (10**9, 0):
        monkeypatch.setattr(verdicts, "_FEW", few)
        logs.append(verdicts.read_verdicts(df, errors="report"))
    python, pandas_ = logs
    pd.testing.assert_frame_equal(python.verdicts, pandas_.verdicts)
    assert python.rejected["row"].tolist() == pandas_.rejected["row"].tolist()
    # against plain pandas: the kept rows are those with a task, their tasks the stripped text
    tasks = _plain_tasks(df)
    kept = tasks.notna().to_numpy()
    assert len(python.verdicts) == kept.sum()
    got = python.verdicts["task_id"].astype(object).tolist()
    assert got == tasks[kept].tolist()
    assert list(python.verdicts["task_id"].cat.categories) == sorted(set(tasks[kept]))
