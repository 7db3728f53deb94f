"""The shape of the API: typed specs for fit's options, a lean Ratings, old names still working."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import sys

import numpy as np
import pandas as pd
import pytest
from helpers import simulate_verdicts

import ratings


@pytest.fixture(scope="module")
def log():
    rng = np.random.default_rng(7)
    frame = simulate_verdicts(rng, [0.0, 0.5, -0.4, 0.9], 400, 40, tie_fraction=0.1)
    return frame.assign(judge=np.where(np.arange(len(frame)) % 2, "j1", "j2"))


def test_fit_has_at_most_twelve_parameters():
    assert len(inspect.signature(ratings.fit).parameters) <= 12


def test_ratings_has_at_most_sixteen_fields():
    assert len(dataclasses.fields(ratings.Ratings)) <= 16


def test_an_unknown_keyword_is_an_error(log):
    with pytest.raises(TypeError, match=r"\['n_bootstrap'\]"):
        ratings.fit(log, n_bootstrap=10)


def test_specs_check_their_values_when_made():
    with pytest.raises(ValueError, match="`penalty`"):
        ratings.BT(penalty=-1.0)
    with pytest.raises(ValueError, match="`n_boot`"):
        ratings.Bootstrap(n=1)
    with pytest.raises(ValueError, match="`prior`"):
        ratings.CrowdBT(prior="strong")
    with pytest.raises(ValueError, match="`errors`"):
        ratings.Read(errors="ignore")
    with pytest.raises(ValueError, match="`engine`"):
        ratings.Solver(engine="fast")


def test_strings_are_the_specs_with_their_defaults(log):
    a = ratings.fit(log, model="crowd-bt", ci="model")
    b = ratings.fit(log, model=ratings.CrowdBT(), ci="model")
    np.testing.assert_array_equal(a.strength, b.strength)
    np.testing.assert_array_equal(a.cov, b.cov)


def test_ci_aliases(log):
    hc0 = ratings.fit(log, ci="hc0")
    per_verdict = ratings.fit(log, cluster=None)
    np.testing.assert_allclose(hc0.cov, per_verdict.cov, rtol=1e-12)
    cr1 = ratings.fit(log, ci="cr1")
    assert cr1.ci == "sandwich-z"
    with pytest.raises(ValueError, match="per verdict"):
        ratings.fit(log, ci="hc0", cluster="task_id")


@pytest.mark.parametrize(("legacy", "spec"), [
    (lambda: {"model": "crowd-bt", "prior": "none"},
     lambda: {"model": ratings.CrowdBT(prior="none")}),
    (lambda: {"penalty": 0.5}, lambda: {"model": ratings.BT(penalty=0.5)}),
    (lambda: {"ci": "bootstrap", "n_boot": 30, "seed": 2},
     lambda: {"ci": ratings.Bootstrap(n=30, seed=2)}),
    (lambda: {"anchor": "m00", "anchor_rating": 1500.0}, lambda: {"anchor": ("m00", 1500.0)}),
    (lambda: {"engine": "numpy", "tol": 1e-9}, lambda: {"solver": ratings.Solver("numpy", 1e-9)}),
])  # fmt: skip
def test_flat_keywords_still_work_with_a_warning(log, legacy, spec):
    with pytest.warns(DeprecationWarning, match="flat fit\\(\\) keywords"):
        old = ratings.fit(log, **legacy())
    new = ratings.fit(log, **spec())
    np.testing.assert_array_equal(old.strength, new.strength)
    np.testing.assert_array_equal(old.elo, new.elo)


@pytest.mark.parametrize("given, flat, inside", [
    ({"model": ratings.BT()}, {"penalty": 0.1}, r"\['penalty'\] inside `model=ratings\.BT"),
    ({"ci": ratings.Bootstrap(n=20)}, {"n_boot": 50, "seed": 3},
     r"\['n', 'seed'\] inside `ci=ratings\.Bootstrap"),
    ({"read": ratings.Read()}, {"errors": "report"}, r"\['errors'\] inside `read=ratings\.Read"),
    ({"solver": ratings.Solver()}, {"tol": 1e-8}, r"\['tol'\] inside `solver=ratings\.Solver"),
    ({"adjust": ratings.Adjust("position")}, {"families": {"x": "a"}},
     r"\['families'\] inside `adjust=ratings\.Adjust"),
])  # fmt: skip
def test_a_spec_and_its_flat_keyword_together_are_an_error(log, given, flat, inside):
    """A spec beside the flat keywords it replaces is refused, naming them, never one of the
    two silently dropped (the bootstrap's ``n_boot=`` and ``seed=`` were)."""
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match=inside):
        ratings.fit(log, **given, **flat)


def test_the_parts_read_through(log):
    r = ratings.fit(log, ci=ratings.Bootstrap(n=20, seed=1))
    assert r.ci == r.uncertainty.ci == "bootstrap"
    assert r.draws is r.uncertainty.draws and r.draws.shape == (20, 4)
    assert r.converged is r.fit_info.converged and r.loglik == r.fit_info.loglik
    assert r.combination is None and r.unbounded is None and r.adjust is None


@pytest.mark.parametrize(("old", "new"), [("ratings.crowd", "ratings.models.crowd.likelihood"),
                                          ("ratings.errors", "ratings.core.errors"),
                                          ("ratings.uncertainty", "ratings.inference.covariance")])
def test_old_module_paths_warn_and_lead_to_the_new_ones(old, new):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        module = importlib.import_module(old)
    target = importlib.import_module(new)  # a proxy handing out the new module's names
    assert all(getattr(module, name) is getattr(target, name) for name in target.__all__)
    sys.modules.pop(old, None)


def test_the_old_judges_module_keeps_both_halves():
    sys.modules.pop("ratings.judges", None)
    with pytest.warns(DeprecationWarning):
        module = importlib.import_module("ratings.judges")
    from ratings.models.crowd.quality import load_judge_quality
    from ratings.scopes.judge_files import save_judge_quality

    assert module.load_judge_quality is load_judge_quality
    assert module.save_judge_quality is save_judge_quality
    sys.modules.pop("ratings.judges", None)


def test_a_missing_part_reads_as_none_for_every_field():
    from ratings.result import Ratings

    log = ratings.read_verdicts(pd.DataFrame({
        "model_a": ["a", "b", "c", "a"] * 25, "model_b": ["b", "c", "a", "c"] * 25,
        "winner": ["A", "A", "B", "tie"] * 25, "task_id": [f"t{k % 10}" for k in range(100)]}))
    r = ratings.fit(log)
    parts = {"fit_info": ["loglik", "converged", "n_iter", "max_grad", "n_rejected", "penalty",
                          "firth", "unbounded"],
             "judge_effects": ["adjust"],
             "combination": ["scope_weights", "combine_method", "se_independent"]}  # fmt: skip
    for part, names in parts.items():
        bare = dataclasses.replace(r, **{part: None})
        assert all(getattr(bare, name) is None for name in names), part
        for name in names:  # each is documented as read from its part
            assert f"``{part}." in getattr(Ratings, name).__doc__


def test_the_old_vocabulary_warns_and_agrees_with_the_new():
    log = ratings.read_verdicts(pd.DataFrame({
        "model_a": ["a", "b", "c", "a"] * 25, "model_b": ["b", "c", "a", "c"] * 25,
        "winner": ["A", "A", "B", "tie"] * 25, "task_id": [f"t{k % 10}" for k in range(100)]}))
    r = ratings.fit(log)
    elo = r.cov_params()
    np.testing.assert_allclose(elo.to_numpy(), (400 / np.log(10)) ** 2 * r.cov, rtol=1e-12)
    np.testing.assert_allclose(r.cov_params(scale="log").to_numpy(), r.cov, rtol=0)
    assert list(elo.index) == list(r.models) == list(elo.columns)
    with pytest.raises(ValueError, match="`scale` must be"):
        r.cov_params(scale="elo2")
    assert r.n_verdicts == 100 and r.kind == "bt"
    for old, new in (("covariance", elo), ("n_matches", 100), ("model", "bt")):
        with pytest.warns(DeprecationWarning, match=rf"Ratings\.{old}.*0\.3\.0"):
            value = getattr(r, old)
        assert value.equals(new) if isinstance(new, pd.DataFrame) else value == new
