"""The audit finds the judge effects the verdicts cannot estimate, says why, and fits the rest.

The real Arena-Hard board (``tests/data/arena_hard_battles_2024_09.csv``: one model in slot A
of every verdict, no judge column) used to stop on a singular information matrix. Which
effects are spanned by the strengths is checked against the rank of the design (numpy's SVD),
and what is fitted against statsmodels' GLM.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from helpers import statsmodels_bt

import ratings
from ratings.audit.judge_audit import AuditWarning
from ratings.cli.app import main
from ratings.core.errors import NonIdentifiableError
from ratings.data.comparisons import aggregate
from ratings.data.slots import slot_counts
from ratings.models.judge_effects import plan_effects

ARENA = Path(__file__).parent / "data" / "arena_hard_battles_2024_09.csv"
BASELINE = "claude-3-haiku-20240307"
Y = {"A": 1.0, "B": 0.0, "tie": 0.5}


def arena() -> pd.DataFrame:
    return pd.read_csv(ARENA).rename(columns={"question_id": "task_id"}).assign(
        winner=lambda f: f["winner"].map({"model_a": "A", "model_b": "B", "tie": "tie"}))


def test_arena_hard_audit_names_the_model_always_in_slot_a_and_fits_the_rest():
    log = arena()
    assert (log["model_a"] == BASELINE).all()  # the board's design: one model always in A
    with pytest.warns(AuditWarning, match=rf"position bias.*'{BASELINE}' is in slot A in every"):
        a = ratings.audit(log, n_boot=20)
    row = a.judges.iloc[0]
    assert np.isnan(row["position_bias"]) and not row["position_flagged"]
    assert f"model '{BASELINE}' is in slot A in every verdict" in row["position_note"]
    assert "position bias not estimated" in row["flag"]
    assert a.ratings.adjust == ()  # nothing estimable to adjust for: the plain fit
    models, params, cov = statsmodels_bt(log, "cluster", log["task_id"])
    r = a.ratings.reanchor(models[0], 0.0)
    assert r.strength[1:] == pytest.approx(params, abs=1e-7)  # models sorted, as statsmodels
    # the covariance is the task-clustered sandwich (G/(G-1), as statsmodels with the factor)
    assert np.sqrt(np.diag(r.cov)[1:]) == pytest.approx(np.sqrt(np.diag(cov)), rel=1e-6)
    assert list(r.models) == models


def test_arena_hard_through_the_command_line(tmp_path, capsys):
    out = tmp_path / "audit.json"
    code = main(["audit", str(ARENA), "--columns", "question_id=task_id", "--n-boot", "20",
                 "--out", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    assert f"'{BASELINE}' is in slot A in every verdict" in err
    doc = pd.read_json(out, typ="series")
    assert doc["effects"] == ["position", "self-preference"]
    code = main(["audit", str(ARENA), "--columns", "question_id=task_id", "--n-boot", "20",
                 "--effects", "self-preference"])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "position bias not estimated: not fitted" in captured.out
    assert "slot A in every verdict" not in captured.err  # not asked for: nothing to warn about


def test_adjusting_a_fit_for_it_is_an_error_naming_the_model():
    with pytest.raises(NonIdentifiableError, match=rf"'{BASELINE}' is in slot A in every"):
        ratings.fit(arena(), adjust="position")


def _board(seed: int, fixed: dict[str, str], alone: bool = True) -> pd.DataFrame:
    """Three judges over five models; a judge in ``fixed`` always shows that model in slot A
    (it judges only that model's matches) and, with ``alone``, the other judges never see it."""
    rng = np.random.default_rng(seed)
    names = np.array([f"m{i}" for i in range(5)], dtype=object)
    hidden = [list(names).index(m) for m in fixed.values()] if alone else []
    seen = np.array([i for i in range(5) if i not in hidden])
    rows = []
    for judge in ("J1", "J2", "J3"):
        n = 300
        if judge in fixed:
            a = np.full(n, list(names).index(fixed[judge]))
            b = rng.choice(seen[seen != a[0]], n)
        else:
            a = rng.choice(seen, n)
            b = (a + rng.integers(1, 5, n)) % 5
            keep = np.isin(b, seen)
            a, b = a[keep], b[keep]
        p = 1.0 / (1.0 + np.exp(-(0.3 * (b - a) + 0.2)))
        u = rng.random(a.size)
        winner = np.where(u < p - 0.05, "A", np.where(u < p + 0.05, "tie", "B"))
        rows.append(pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner,
                                  "judge": judge, "task_id": rng.integers(0, 40, a.size)}))
    return pd.concat(rows, ignore_index=True).astype({"task_id": str})


def _design(log: pd.DataFrame, judges: list[str]) -> np.ndarray:
    models = sorted(set(log["model_a"]) | set(log["model_b"]))
    x = np.zeros((len(log), len(models)))
    rows = np.arange(len(log))
    x[rows, [models.index(v) for v in log["model_a"]]] = 1.0
    x[rows, [models.index(v) for v in log["model_b"]]] -= 1.0
    return np.hstack([x[:, 1:], *[(log["judge"] == j).to_numpy(float)[:, None]
                                  for j in judges]])  # fmt: skip


@pytest.mark.parametrize(("fixed", "alone"), [({"J1": "m0"}, True), ({"J1": "m0"}, False),
                                              ({"J2": "m3", "J3": "m1"}, True), ({}, True)])
def test_position_effects_dropped_exactly_when_the_design_loses_rank(fixed, alone):
    """An effect is left out exactly when its column adds no rank to the strengths' and the
    effects' before it (numpy's SVD rank of the per-verdict design)."""
    log = _board(7, fixed, alone)
    kept: list[str] = []
    spanned = []
    for j in ("J1", "J2", "J3"):
        if np.linalg.matrix_rank(_design(log, [*kept, j])) > np.linalg.matrix_rank(
                _design(log, kept)):  # fmt: skip
            kept.append(j)
        else:
            spanned.append(j)
    assert spanned == (sorted(fixed) if alone else [])  # the boards are built for that
    data = aggregate(log)
    plan = plan_effects(slot_counts(log, data, "numpy"), {}, position=True,
                        self_preference=False)  # fmt: skip
    notes = dict(zip(plan.judges, plan.position_note, strict=True))
    assert [j for j in ("J1", "J2", "J3") if notes[j]] == spanned
    for j in spanned:
        assert f"model '{fixed[j]}' is in slot A in every verdict" in notes[j]


def test_a_judge_whose_pairs_form_a_tree_gets_the_general_reason():
    """One judge, each pair in one A/B order along a path m0 > m1 > m2 > m3 (no cycle): a
    strength shift reproduces any slot effect, with no model in one slot throughout."""
    pairs = [("m0", "m1"), ("m1", "m2"), ("m2", "m3")] * 30
    rng = np.random.default_rng(0)
    log = pd.DataFrame({"model_a": [a for a, _ in pairs], "model_b": [b for _, b in pairs],
                        "winner": rng.choice(["A", "B", "tie"], len(pairs)),
                        "task_id": [f"t{k % 20}" for k in range(len(pairs))]})  # fmt: skip
    base = np.linalg.matrix_rank(_design(log.assign(judge="x"), []))
    assert np.linalg.matrix_rank(_design(log.assign(judge="x"), ["x"])) == base
    with pytest.warns(AuditWarning, match="shifting some models' strengths reproduces a slot"):
        a = ratings.audit(log, n_boot=20)
    assert np.isnan(a.judges.loc[0, "position_bias"])


def test_the_rest_is_fitted_as_statsmodels_fits_it():
    """J1 always shows m0 first: its position bias is left out; J2's and J3's are estimated,
    with the strengths, as statsmodels' GLM estimates them with those columns only."""
    log = _board(3, {"J1": "m0"})
    with pytest.warns(AuditWarning, match=r"J1 \(position bias\): model 'm0' is in slot A"):
        a = ratings.audit(log, effects="position", n_boot=20)
    glm = sm.GLM(log["winner"].map(Y).to_numpy(), _design(log, ["J2", "J3"]),
                 family=sm.families.Binomial()).fit(tol=1e-13)  # fmt: skip
    table = a.judges.set_index("judge")
    assert np.isnan(table.loc["J1", "position_bias"])
    assert table.loc[["J2", "J3"], "position_bias"].to_numpy() == pytest.approx(
        glm.params[-2:], abs=1e-6)  # fmt: skip
    r = a.ratings.reanchor("m0", 0.0)
    assert r.strength[1:] == pytest.approx(glm.params[:4], abs=1e-6)
    assert a.ratings.adjust == ("position",)
    assert (table["self_note"] == "not fitted").all()


@pytest.mark.parametrize("effects", ["bogus", "", ["position", "style"]])
def test_unknown_effects_are_named(effects):
    with pytest.raises(ValueError, match=r"`effects` must name judge effects among"):
        ratings.audit(_board(1, {}), effects=effects)
