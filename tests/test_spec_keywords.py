"""The typed specs of ``ratings.audit`` and ``sampling.plan_matches``: the flat keywords of
earlier releases still work, with one DeprecationWarning naming the spec that now holds them,
through the same resolution as ``ratings.fit``; unknown keywords are a TypeError."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ratings
from ratings.datasets.simulate import random_matches, simulate_verdicts

MODELS = [f"m{i}" for i in range(5)]


@pytest.fixture(scope="module")
def log() -> pd.DataFrame:
    matches = random_matches(MODELS, 600, n_tasks=40, judges=["J1", "J2"], seed=2)
    strengths = pd.Series(np.linspace(-1, 1, 5), index=MODELS)
    return simulate_verdicts(matches, strengths, position_bias={"J1": 0.4}, seed=3)


def test_audit_flat_keywords_warn_naming_the_spec_and_give_the_spec_result(log):
    renamed = log.rename(columns={"model_a": "left"})
    typed = ratings.audit(renamed, effects="position", n_boot=20,
                          read=ratings.Read(columns={"left": "model_a"}),
                          solver=ratings.Solver(engine="numpy"),
                          model=ratings.CrowdBT(judge_quality={"J2": 0.9},
                                                fit_new_judges=True))  # fmt: skip
    with pytest.warns(DeprecationWarning, match=r"flat audit\(\) keywords are deprecated: "
                      r"columns= -> ratings\.Read\(columns=\), engine= -> ratings\.Solver"
                      r"\(engine=\), fit_new_judges= -> ratings\.CrowdBT\(fit_new_judges=\), "
                      r"judge_quality= -> ratings\.CrowdBT\(judge_quality=\)"):  # fmt: skip
        flat = ratings.audit(renamed, effects="position", n_boot=20, model="crowd-bt",
                             columns={"left": "model_a"}, engine="numpy",
                             judge_quality={"J2": 0.9}, fit_new_judges=True)  # fmt: skip
    pd.testing.assert_frame_equal(flat.judges, typed.judges)
    # the fixed eta is the one given, not an estimate
    assert typed.ratings.judges.loc["J2", "eta"] == 0.9


@pytest.mark.filterwarnings("ignore:flat audit:DeprecationWarning")
def test_audit_refuses_unknown_keywords_and_specs_beside_their_flat_fields(log):
    with pytest.raises(TypeError, match=r"audit\(\) got unexpected keyword.*\['penalty'\]"):
        ratings.audit(log, penalty=1.0)
    with pytest.raises(TypeError, match=r"inside `model=ratings\.CrowdBT"):
        ratings.audit(log, model=ratings.CrowdBT(), judge_quality={"J2": 0.9})
    with pytest.raises(ValueError, match="only available with `model='crowd-bt'`"):
        ratings.audit(log, judge_quality={"J2": 0.9})
    with pytest.raises(ValueError, match="fits no penalty"):
        ratings.audit(log, model=ratings.BT(penalty=1.0))


def test_plan_matches_takes_the_solver_and_max_memory_warns_naming_it(log):
    from ratings.core.errors import MemoryLimitError
    from sampling.design.plan import plan_matches

    # the fit inside planning gets the solver as a spec: no warning from inside the package
    typed = plan_matches(log, None, ["J1", "J2"], 6, seed=1, phase="active",
                         solver=ratings.Solver(max_memory="1GB"))  # fmt: skip
    with pytest.warns(DeprecationWarning, match=r"flat plan_matches\(\) keywords are "
                      r"deprecated: max_memory= -> ratings\.Solver\(max_memory=\)"):  # fmt: skip
        flat = plan_matches(log, None, ["J1", "J2"], 6, seed=1, phase="active",
                            max_memory="1GB")  # fmt: skip
    pd.testing.assert_frame_equal(flat, typed)
    with pytest.raises(MemoryLimitError):
        plan_matches(log, None, ["J1"], 6, seed=1, solver=ratings.Solver(max_memory="1KB"))
    with pytest.raises(TypeError, match=r"plan_matches\(\) got unexpected keyword.*\['tol'\]"):
        plan_matches(log, None, ["J1"], 6, seed=1, tol=1e-8)
