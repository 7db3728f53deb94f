"""Tests of :mod:`ratings.scopes.rubric`: reading rubrics, turning them into synthetic matches."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import expit

import ratings
from ratings.core.errors import InvalidVerdictsError
from ratings.scopes.rubric import MATCH_COLUMNS, read_rubric, rubric_to_matches

P, F = "pass", "fail"


def _rows(*entries: tuple[str, str, str, object]) -> pd.DataFrame:
    return pd.DataFrame(entries, columns=["task_id", "model", "check_id", "passed"])


@pytest.fixture
def small() -> pd.DataFrame:
    """A hand-made rubric (rows deliberately out of order, mixed spellings of passed).

    t1: x passes c1 c2 (2/3), y passes c1 (1/3), z passes c2 c3 (2/3).
    t2: x fails k1 k2 (0/2), y passes k1 and was not graded on k2 (1/1).
    t3: only x: no match.
    t4: x passes c1 (1/2), y passes c2 c3 of four (2/4): equal rates, a tie.
    """
    return _rows(
        ("t1", "z", "c1", F), ("t1", "z", "c2", True), ("t1", "z", "c3", "PASS"),
        ("t1", "x", "c1", "true"), ("t1", "x", "c2", 1), ("t1", "x", "c3", "no"),
        ("t1", "y", "c1", "Yes"), ("t1", "y", "c2", 0), ("t1", "y", "c3", False),
        ("t2", "y", "k1", P), ("t2", "x", "k1", F), ("t2", "x", "k2", "0"),
        ("t3", "x", "c1", P),
        ("t4", "x", "c1", P), ("t4", "x", "c2", F),
        ("t4", "y", "c1", F), ("t4", "y", "c2", P), ("t4", "y", "c3", P), ("t4", "y", "c4", F),
    )  # fmt: skip


def _expected(rows: list[tuple[str, ...]]) -> pd.DataFrame:
    out = pd.DataFrame(rows, columns=["match_id", "task_id", "model_a", "model_b", "winner"])
    out.insert(1, "scope", "rubric")
    out.insert(3, "judge", "deterministic")
    return out


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    """Values as Python objects, for dtype-agnostic comparison."""
    return frame.astype(object).reset_index(drop=True)


def test_rate_matches_hand_computed(small):
    got = rubric_to_matches(small, method="rate")
    expected = _expected([
        ("rubric:t1:x:y", "t1", "x", "y", "A"),
        ("rubric:t1:x:z", "t1", "x", "z", "tie"),
        ("rubric:t1:y:z", "t1", "y", "z", "B"),
        ("rubric:t2:x:y", "t2", "x", "y", "B"),
        ("rubric:t4:x:y", "t4", "x", "y", "tie"),
    ])  # fmt: skip
    assert list(got.columns) == list(MATCH_COLUMNS)
    pd.testing.assert_frame_equal(_plain(got), _plain(expected))


def test_check_matches_hand_computed(small):
    got = rubric_to_matches(small, method="check")
    expected = _expected([
        ("rubric:t1:x:y:c1", "t1", "x", "y", "tie"),
        ("rubric:t1:x:y:c2", "t1", "x", "y", "A"),
        ("rubric:t1:x:y:c3", "t1", "x", "y", "tie"),
        ("rubric:t1:x:z:c1", "t1", "x", "z", "A"),
        ("rubric:t1:x:z:c2", "t1", "x", "z", "tie"),
        ("rubric:t1:x:z:c3", "t1", "x", "z", "B"),
        ("rubric:t1:y:z:c1", "t1", "y", "z", "A"),
        ("rubric:t1:y:z:c2", "t1", "y", "z", "B"),
        ("rubric:t1:y:z:c3", "t1", "y", "z", "B"),
        ("rubric:t2:x:y:k1", "t2", "x", "y", "B"),
        ("rubric:t4:x:y:c1", "t4", "x", "y", "A"),
        ("rubric:t4:x:y:c2", "t4", "x", "y", "B"),
    ])  # fmt: skip
    pd.testing.assert_frame_equal(_plain(got), _plain(expected))


# --- an independent, obviously correct implementation -------------------------------------------


def _reference(rubric: pd.DataFrame, method: str) -> pd.DataFrame:
    """Plain loops over tasks, model pairs and checks (booleans already parsed)."""
    grades: dict[str, dict[str, dict[str, bool]]] = {}
    for task, model, check, passed in rubric[["task_id", "model", "check_id", "passed"]].itertuples(
        index=False
    ):
        grades.setdefault(task, {}).setdefault(model, {})[check] = bool(passed)
    rows = []
    for task in sorted(grades):
        for a, b in itertools.combinations(sorted(grades[task]), 2):
            ga, gb = grades[task][a], grades[task][b]
            if method == "rate":
                ra, rb = sum(ga.values()) / len(ga), sum(gb.values()) / len(gb)
                # exact comparison of the fractions (floats may round 1/3 and 2/6 differently)
                sa, sb = sum(ga.values()) * len(gb), sum(gb.values()) * len(ga)
                assert (sa > sb) == (ra > rb + 1e-12) or abs(ra - rb) < 1e-12
                winner = "A" if sa > sb else "B" if sa < sb else "tie"
                rows.append((f"rubric:{task}:{a}:{b}", task, a, b, winner))
            else:
                for check in sorted(set(ga) & set(gb)):
                    pa, pb = ga[check], gb[check]
                    winner = "A" if pa > pb else "B" if pa < pb else "tie"
                    rows.append((f"rubric:{task}:{a}:{b}:{check}", task, a, b, winner))
    return _expected(rows)


def _random_rubric(rng: np.random.Generator, n_models: int = 6, n_tasks: int = 25,
                   n_checks: int = 5) -> pd.DataFrame:  # fmt: skip
    """Every (task, model, check) graded with probability 0.7, passing with probability 0.5."""
    t, m, c = np.meshgrid(np.arange(n_tasks), np.arange(n_models), np.arange(n_checks),
                          indexing="ij")  # fmt: skip
    keep = rng.random(t.size) < 0.7
    frame = pd.DataFrame({
        "task_id": np.char.add("t", t.ravel()[keep].astype(str)),
        "model": np.char.add("m", m.ravel()[keep].astype(str)),
        "check_id": np.char.add("c", c.ravel()[keep].astype(str)),
        "passed": rng.random(int(keep.sum())) < 0.5,
    })  # fmt: skip
    return frame.sample(frac=1.0, random_state=rng).reset_index(drop=True)  # shuffle rows


@pytest.mark.parametrize("method", ["rate", "check"])
def test_matches_reference_implementation(rng, method):
    for _ in range(3):
        rubric = _random_rubric(rng)
        got = rubric_to_matches(rubric, method=method)
        pd.testing.assert_frame_equal(_plain(got), _plain(_reference(rubric, method)))


@pytest.mark.parametrize("method", ["rate", "check"])
def test_reference_agrees_on_hand_example(small, method):
    pd.testing.assert_frame_equal(
        _plain(rubric_to_matches(small, method=method)),
        _plain(_reference(read_rubric(small), method)),
    )


def test_pair_order_is_alphabetical_whatever_the_input_order():
    rubric = _rows(("t", "zeta", "c", P), ("t", "alpha", "c", F))
    got = rubric_to_matches(rubric, method="check")
    assert got[["model_a", "model_b", "winner"]].values.tolist() == [["alpha", "zeta", "B"]]


def test_task_with_one_model_gives_no_matches():
    got = rubric_to_matches(_rows(("t", "x", "c", P), ("t", "x", "d", F)))
    assert len(got) == 0 and list(got.columns) == list(MATCH_COLUMNS)


def test_matches_read_back_as_verdicts_without_rejections(small):
    log = ratings.read_verdicts(rubric_to_matches(small, method="check"))
    assert len(log.rejected) == 0
    assert set(log.verdicts["judge"]) == {"deterministic"}
    assert set(log.verdicts["scope"]) == {"rubric"}


def test_ambiguous_match_ids_are_refused():
    rubric = _rows(("t", "a:b", "c", P), ("t", "c", "c", F), ("t", "a", "c", P),
                   ("t", "b:c", "c", F))  # fmt: skip
    with pytest.raises(InvalidVerdictsError, match=r"share a match_id, e.g. \['rubric:t:a:b:c'\]"):
        rubric_to_matches(rubric)


def test_unknown_method_is_rejected(small):
    with pytest.raises(ValueError, match=r"`method` must be 'rate' or 'check'; got 'mean'"):
        rubric_to_matches(small, method="mean")


# --- reading ------------------------------------------------------------------------------------


def test_passed_spellings():
    values = [True, False, 1, 0, 1.0, "true", "FALSE", " yes ", "No", "pass", "FAIL", "Pass", "t",
              "F", np.True_]  # fmt: skip
    checks = [f"c{k}" for k in range(len(values))]
    rubric = pd.DataFrame({"task_id": "t", "model": "m", "check_id": checks,
                           "passed": pd.Series(values, dtype=object)})  # fmt: skip
    got = read_rubric(rubric)["passed"]
    assert got.dtype == np.float64  # the share of graders who passed: 1.0 or 0.0 here
    assert got.tolist() == [1, 0, 1, 0, 1, 1, 0, 1, 0, 1, 0, 1, 1, 0, 1]


def test_bad_passed_value_names_rows_and_values():
    rubric = _rows(("t", "m", "c1", P), ("t", "m", "c2", "maybe"), ("t", "m", "c3", F),
                   ("t", "m", "c4", 2))  # fmt: skip
    with pytest.raises(InvalidVerdictsError) as info:
        read_rubric(rubric)
    text = str(info.value)
    assert ("2 with passed is not a grade (boolean-like or a share in [0, 1]) (e.g. ['maybe', 2] "
            "at rows [1, 3])") in text
    assert "pass/fail" in text  # says what is accepted
    assert info.value.rows["row"].tolist() == [1, 3]
    assert info.value.rows["passed"].tolist() == ["maybe", 2]


def test_missing_grade_is_an_error_not_a_fail():
    rubric = _rows(("t", "m", "c1", P), ("t", "m", "c2", None), ("t", "m", "c3", ""))
    with pytest.raises(InvalidVerdictsError, match=r"2 with missing passed \(rows \[1, 2\]\)"):
        read_rubric(rubric)


@pytest.mark.parametrize("column", ["task_id", "model", "check_id"])
def test_missing_keys_name_rows(column):
    rubric = _rows(("t", "m", "c1", P), ("t", "m", "c2", P), ("t", "m", "c3", F))
    rubric[column] = rubric[column].astype(object)
    rubric.loc[1, column] = np.nan
    rubric.loc[2, column] = "  "
    with pytest.raises(InvalidVerdictsError, match=rf"2 with missing {column} \(rows \[1, 2\]\)"):
        read_rubric(rubric)


def test_duplicate_grading_raises_with_rows():
    rubric = _rows(("t", "m", "c1", P), ("t", "n", "c1", P), ("t", "m", "c1", F),
                   ("t", "m", "c2", P))  # fmt: skip
    with pytest.raises(InvalidVerdictsError) as info:
        read_rubric(rubric)
    assert "('t', 'm', 'c1') at rows [0, 2]" in str(info.value)
    assert "duplicates='last'" in str(info.value)
    assert info.value.rows["row"].tolist() == [0, 2]
    with pytest.raises(InvalidVerdictsError, match="graded more than once"):
        rubric_to_matches(rubric)


def test_duplicates_last_keeps_the_regrade():
    rubric = _rows(("t", "m", "c1", P), ("t", "n", "c1", P), ("t", "m", "c1", F))
    got = read_rubric(rubric, duplicates="last")
    assert got.index.tolist() == [1, 2]  # original row numbers
    assert got.set_index("model").loc["m", "passed"] == np.False_
    assert rubric_to_matches(got, method="check")["winner"].tolist() == ["B"]  # m < n; n passed


def test_bad_duplicates_argument():
    with pytest.raises(ValueError, match=r"`duplicates` must be 'error' or 'last'; got 'first'"):
        read_rubric(_rows(("t", "m", "c", P)), duplicates="first")


def test_missing_column_lists_available_and_mapping():
    rubric = _rows(("t", "m", "c", P)).rename(columns={"check_id": "criterion"})
    with pytest.raises(InvalidVerdictsError) as info:
        read_rubric(rubric)
    text = str(info.value)
    assert "Column(s) ['check_id'] not found in the rubric" in text
    assert "Available columns: ['task_id', 'model', 'criterion', 'passed']" in text
    assert "columns={'your_check_id': 'check_id'}" in text
    got = read_rubric(rubric, columns={"criterion": "check_id"})
    assert got["check_id"].tolist() == ["c"]


def test_mapped_column_not_found():
    with pytest.raises(InvalidVerdictsError, match=r"Column\(s\) \['grade'\] given in `columns`"):
        read_rubric(_rows(("t", "m", "c", P)), columns={"grade": "passed"})


def test_mapping_to_unknown_column_is_a_value_error():
    with pytest.raises(ValueError, match="not a rubric column"):
        read_rubric(_rows(("t", "m", "c", P)), columns={"passed": "score"})


def test_judge_column_is_kept():
    rubric = _rows(("t", "m", "c", P)).assign(judge=["grader-1"])
    assert read_rubric(rubric)["judge"].tolist() == ["grader-1"]
    # the synthetic matches are judged deterministically whatever graded the checks
    rubric = pd.concat([rubric, rubric.assign(model="n", passed=F)], ignore_index=True)
    assert rubric_to_matches(rubric)["judge"].tolist() == ["deterministic"]


def test_dataframe_input_is_not_modified(small):
    before = small.copy(deep=True)
    read_rubric(small, duplicates="last")
    rubric_to_matches(small, method="rate")
    rubric_to_matches(small, method="check")
    pd.testing.assert_frame_equal(small, before)


def test_reads_csv_keeping_ids_as_text(tmp_path, small):
    path = tmp_path / "rubric.csv"
    small.assign(task_id="00" + small["task_id"]).to_csv(path, index=False)
    got = read_rubric(path)
    assert got["task_id"].iloc[0] == "00t1"
    path.write_text("task_id,model,check_id,passed\n007,x,c,yes\n007,y,c,perhaps\n")
    with pytest.raises(InvalidVerdictsError, match=r"rubric.csv': 1 rubric row.*\['perhaps'\] at "
                                                   r"rows \[1\]"):  # fmt: skip
        read_rubric(path)
    path.write_text("task_id,model,check_id,passed\n007,x,c,yes\n007,y,c,0\n")
    assert rubric_to_matches(read_rubric(path))["match_id"].tolist() == ["rubric:007:x:y"]


def test_empty_dataframe_is_an_error():
    with pytest.raises(InvalidVerdictsError, match="empty"):
        read_rubric(_rows())


# --- end to end ---------------------------------------------------------------------------------


def test_fit_runs_on_rubric_matches(small):
    extra = _rows(("t5", "x", "c1", F), ("t5", "y", "c1", P), ("t5", "z", "c1", F),
                  ("t6", "z", "c1", P), ("t6", "x", "c1", F))  # fmt: skip
    matches = rubric_to_matches(pd.concat([small, extra], ignore_index=True), method="rate")
    r = ratings.fit(matches, anchor="x=1000")
    assert r.elo["x"] == pytest.approx(1000.0)
    assert r.cluster == "task_id"  # matches of one task are clustered by default
    assert set(r.models) == {"x", "y", "z"}


def _simulated_rubric(rng, skill, n_tasks=60, n_checks=8):
    """Pass probability expit(skill - difficulty of the check - task difficulty)."""
    m = skill.size
    difficulty = rng.normal(0.0, 1.0, (n_tasks, n_checks)) + rng.normal(0.0, 0.5, (n_tasks, 1))
    t, k, c = np.meshgrid(np.arange(n_tasks), np.arange(m), np.arange(n_checks), indexing="ij")
    p = expit(skill[k] - difficulty[t, c])
    names = np.array([f"model-{j:02d}" for j in rng.permutation(m)])  # names unrelated to skill
    return pd.DataFrame({
        "task_id": np.char.add("task", t.ravel().astype(str)),
        "model": names[k.ravel()],
        "check_id": np.char.add("check", c.ravel().astype(str)),
        "passed": np.where(rng.random(t.size) < p.ravel(), "pass", "fail"),
    }), pd.Series(skill, index=names)  # fmt: skip


@pytest.mark.parametrize("method", ["rate", "check"])
def test_fitted_rubric_ratings_recover_true_order(rng, method):
    skill = np.linspace(-1.5, 1.5, 8)
    rubric, truth = _simulated_rubric(rng, skill)
    anchor = truth.index[0]
    r = ratings.fit(rubric_to_matches(rubric, method=method), anchor=f"{anchor}=1000")
    rho = stats.spearmanr(r.elo[truth.index].to_numpy(), truth.to_numpy()).statistic
    assert rho > 0.9


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"Rubric file .*nope.csv' not found"):
        read_rubric(tmp_path / "nope.csv")
