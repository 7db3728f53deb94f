"""Every number of a fixed set of command-line runs equals its committed value (1e-8).

The runs and their outputs are declared in ``tests/golden_runs.py``; they cover every interval
kind, Crowd-BT estimated and from a judge file, ``--by scope``, rubric, combine, freeze, audit,
``--adjust``, ``--firth``, ``assign-judges`` and ``next``. A new column or key in an output is
allowed (a later feature may add one); a missing or changed one is not.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from golden_runs import RUNS, VOLATILE, Run, execute, golden_file

TOL = 1e-8


def _close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= TOL * max(1.0, abs(b))


def _compare_json(new, old, where: str, found: list[str]) -> None:
    if isinstance(old, dict):
        if not isinstance(new, dict):
            found.append(f"{where}: not an object")
            return
        for key, value in old.items():
            if key in VOLATILE:
                continue
            if key not in new:
                found.append(f"{where}.{key}: missing")
            else:
                _compare_json(new[key], value, f"{where}.{key}", found)
    elif isinstance(old, list):
        if not isinstance(new, list) or len(new) != len(old):
            found.append(f"{where}: length {len(new) if isinstance(new, list) else '-'} "
                         f"!= {len(old)}")  # fmt: skip
            return
        for k, (a, b) in enumerate(zip(new, old, strict=True)):
            _compare_json(a, b, f"{where}[{k}]", found)
    elif isinstance(old, bool) or old is None or isinstance(old, str):
        if new != old:
            found.append(f"{where}: {new!r} != {old!r}")
    elif isinstance(new, int | float) and not isinstance(new, bool):
        if not _close(float(new), float(old)):
            found.append(f"{where}: {new!r} != {old!r}")
    else:
        found.append(f"{where}: {new!r} != {old!r}")


def _compare_table(new: pd.DataFrame, old: pd.DataFrame, found: list[str]) -> None:
    if len(new) != len(old):
        found.append(f"{len(new)} rows != {len(old)}")
        return
    for column in old.columns:
        if column in VOLATILE:
            continue
        if column not in new.columns:
            found.append(f"column {column!r} missing")
            continue
        a, b = new[column], old[column]
        if pd.api.types.is_numeric_dtype(b) and pd.api.types.is_numeric_dtype(a):
            x, y = a.to_numpy(float), b.to_numpy(float)
            bad = ~np.array([_close(p, q) for p, q in zip(x, y, strict=True)])
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                found.append(f"{column}: {bad.sum()} values differ, first row {k}: "
                             f"{x[k]!r} != {y[k]!r}")  # fmt: skip
        elif not a.astype(str).equals(b.astype(str)):
            k = int(np.flatnonzero(a.astype(str).to_numpy() != b.astype(str).to_numpy())[0])
            found.append(f"{column}: first row {k}: {a.iloc[k]!r} != {b.iloc[k]!r}")


@pytest.mark.parametrize("run", RUNS, ids=[r.name for r in RUNS])
def test_outputs_equal_the_committed_ones(run: Run, tmp_path):
    status, _ = execute(run, tmp_path)
    assert status == 0
    found: list[str] = []
    for name in run.outputs:
        old_path = golden_file(run, name)
        new_path = tmp_path / name
        if name.endswith(".json"):
            _compare_json(json.loads(new_path.read_text(encoding="utf-8")),
                          json.loads(old_path.read_text(encoding="utf-8")), name, found)
        else:
            before = len(found)
            _compare_table(pd.read_csv(new_path, keep_default_na=False, na_values=[""]),
                           pd.read_csv(old_path, keep_default_na=False, na_values=[""]), found)
            found[before:] = [f"{name}: {f}" for f in found[before:]]
    assert not found, "\n".join(found[:20])


def test_the_comparison_finds_a_changed_number():
    found: list[str] = []
    _compare_json({"a": [1.0, 2.0 + 1e-6]}, {"a": [1.0, 2.0]}, "x", found)
    _compare_table(pd.DataFrame({"elo": [1.0, 3.0]}), pd.DataFrame({"elo": [1.0, 3.00001]}), found)
    _compare_table(pd.DataFrame({"m": ["a", "c"]}), pd.DataFrame({"m": ["a", "b"]}), found)
    assert len(found) == 3
