"""Tests for :mod:`ratings.io`: winner spellings (canonical, case-insensitive, numeric, model
names, ``winner_map``) and the row checks, with ``errors="report"`` returning the good rows and
a table of rejected ones.

Columns, file-level errors and formats are in ``test_io_files.py``; atomic writes and the
rejected-rows file in ``test_io_write.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from verdict_files import (
    HEADER,
    csv_engine,  # noqa: F401  (the `engine` fixture)
    winners,
    write,
)

from ratings.core.errors import InvalidVerdictsError
from ratings.io import STRING_DTYPE, read_verdicts

# ----------------------------------------------------------------------------------------------
# Winner spellings
# ----------------------------------------------------------------------------------------------


def test_canonical_and_case_insensitive_spellings(tmp_path: Path, engine: str) -> None:
    values = ["A", "b", "TIE", "tie", " a ", "model_a", "MODEL_B", "Model_A"]
    body = "".join(f"x,y,{v},t{i}\n" for i, v in enumerate(values))
    log = read_verdicts(write(tmp_path / "v.csv", HEADER + body))
    assert winners(log) == ["A", "B", "tie", "tie", "A", "A", "B", "A"]
    dtype = log.verdicts["winner"].dtype
    assert isinstance(dtype, pd.CategoricalDtype)
    assert dtype.categories.tolist() == ["A", "B", "tie"]
    assert dtype.categories.dtype == STRING_DTYPE
    assert len(log) == len(values) and log.rejected.empty


def test_numeric_winners(tmp_path: Path, engine: str) -> None:
    body = "x,y,1,t\nx,y,1.0,t\nx,y,0,t\nx,y,0.0,t\nx,y,0.5,t\nx,y,.5,t\n"
    log = read_verdicts(write(tmp_path / "v.csv", HEADER + body))
    assert winners(log) == ["A", "A", "B", "B", "tie", "tie"]


def test_numeric_winners_in_dataframe() -> None:
    df = pd.DataFrame({"model_a": ["x"] * 4, "model_b": ["y"] * 4,
                       "winner": [1.0, 0.0, 0.5, 1.0]})  # fmt: skip
    assert winners(read_verdicts(df)) == ["A", "B", "tie", "A"]
    ints = df.assign(winner=[1, 0, 1, 0])
    assert winners(read_verdicts(ints)) == ["A", "B", "A", "B"]


def test_booleans_are_not_winners() -> None:
    df = pd.DataFrame({"model_a": ["x", "x"], "model_b": ["y", "y"], "winner": [True, False]})
    with pytest.raises(InvalidVerdictsError, match=r"unknown winner value \(e\.g\. \['True'"):
        read_verdicts(df)


def test_model_own_name(tmp_path: Path, engine: str) -> None:
    body = "gpt,claude,gpt,t1\ngpt,claude,claude,t2\ngpt,claude, claude ,t3\n"
    log = read_verdicts(write(tmp_path / "v.csv", HEADER + body))
    assert winners(log) == ["A", "B", "B"]


def test_model_name_is_case_sensitive(tmp_path: Path) -> None:
    body = "gpt,claude,GPT,t1\n"
    with pytest.raises(InvalidVerdictsError, match="unknown winner value"):
        read_verdicts(write(tmp_path / "v.csv", HEADER + body))


def test_third_model_rejected(tmp_path: Path, engine: str) -> None:
    body = "gpt,claude,A,t1\ngpt,gemini,claude,t2\ngemini,claude,B,t3\n"
    path = write(tmp_path / "v.csv", HEADER + body)
    with pytest.raises(InvalidVerdictsError,
                       match=r"1 with winner names a model not in this match "
                             r"\(e\.g\. \['claude'\] at rows \[1\]\)"):  # fmt: skip
        read_verdicts(path)
    log = read_verdicts(path, errors="report")
    assert log.verdicts.index.tolist() == [0, 2]
    assert log.rejected["reason"].tolist() == ["winner names a model not in this match"]


def test_unknown_winner_raises_with_rows_and_values(tmp_path: Path, engine: str) -> None:
    body = ("x,y,A,t0\nx,y,draw,t1\nx,y,B,t2\nx,y,x,t3\nx,x,A,t4\n"
            "x,y,tie,t5\nx,y,B,t6\nx,y,Tie(bothbad),t7\n")  # fmt: skip
    path = write(tmp_path / "v.csv", HEADER + body)
    expected = (
        "3 row(s) rejected: 2 with unknown winner value (e.g. ['draw', 'Tie(bothbad)'] at rows "
        "[1, 7]); 1 with model_a equals model_b (e.g. ['x'] at rows [4]). Map tie spellings "
        "with `winner_map`, fix the rows, or pass `errors='report'` to fit on the good rows "
        "and list the rest."
    )
    with pytest.raises(InvalidVerdictsError) as info:
        read_verdicts(path)
    assert str(info.value) == f"{str(path)!r}: {expected}"
    rows = info.value.rows
    assert rows["row"].tolist() == [1, 4, 7]
    assert rows["reason"].tolist() == ["unknown winner value", "model_a equals model_b",
                                       "unknown winner value"]  # fmt: skip


def test_tie_variants_need_winner_map(tmp_path: Path, engine: str) -> None:
    body = "x,y,tie (bothbad),t0\nx,y,A,t1\nx,y, draw ,t2\n"
    path = write(tmp_path / "v.csv", HEADER + body)
    with pytest.raises(InvalidVerdictsError, match=r"'tie \(bothbad\)', 'draw'\] at rows \[0, 2\]"):
        read_verdicts(path)
    log = read_verdicts(path, winner_map={"tie (bothbad)": "tie", "draw ": "tie"})
    assert winners(log) == ["tie", "A", "tie"]


def test_winner_map_is_applied_first_and_numeric_keys(tmp_path: Path) -> None:
    body = "x,y,a,t0\nx,y,2,t1\nx,y,2.0,t2\n"
    log = read_verdicts(write(tmp_path / "v.csv", HEADER + body),
                        winner_map={"a": "B", 2: "tie"})  # fmt: skip
    assert winners(log) == ["B", "tie", "tie"]


def test_winner_map_values_are_checked() -> None:
    df = pd.DataFrame({"model_a": ["x"], "model_b": ["y"], "winner": ["draw"]})
    with pytest.raises(ValueError, match=r"'A', 'B' or 'tie'; got 'draw': 'Tie'"):
        read_verdicts(df, winner_map={"draw": "Tie"})


def test_unknown_is_never_a_tie(tmp_path: Path) -> None:
    body = "x,y,none of them,t0\nx,y,,t1\nx,y,0.7,t2\n"
    log_or_error = pytest.raises(InvalidVerdictsError, match="All 3 row")
    with log_or_error as info:
        read_verdicts(write(tmp_path / "v.csv", HEADER + body), errors="report")
    assert info.value.rows["reason"].tolist() == [  # 0.7: a score, read only with soft=True
        "unknown winner value", "missing winner", "fractional winner score"]


def test_spelling_that_is_a_model_name_on_the_other_side_is_ambiguous(tmp_path: Path) -> None:
    # Model "B" plays as model_a: winner "B" could mean model_b or the model named "B".
    body = "B,y,B,t0\nA,y,A,t1\nx,y,B,t2\n"
    log = read_verdicts(write(tmp_path / "v.csv", HEADER + body), errors="report")
    assert winners(log) == ["A", "B"]
    assert log.rejected["row"].tolist() == [0]
    assert log.rejected["reason"].str.startswith("ambiguous winner").all()


# ----------------------------------------------------------------------------------------------
# errors="report" and row checks
# ----------------------------------------------------------------------------------------------


def test_report_returns_good_rows_and_rejected_table(tmp_path: Path, engine: str) -> None:
    body = "x,y,A,t0\nx,y,draw,t1\n,y,A,t2\nx,y,B,t3\nx,x,tie,t4\n"
    path = write(tmp_path / "v.csv", HEADER + body)
    log = read_verdicts(path, errors="report")
    assert log.source == str(path)
    assert log.verdicts.index.name == "row"
    assert log.verdicts.index.tolist() == [0, 3]
    assert winners(log) == ["A", "B"]
    rej = log.rejected
    assert rej.columns.tolist() == ["row", "reason", "model_a", "model_b", "winner", "task_id"]
    assert rej["row"].dtype == np.int64
    assert rej["row"].tolist() == [1, 2, 4]
    assert rej["reason"].tolist() == ["unknown winner value", "missing model_a",
                                      "model_a equals model_b"]  # fmt: skip
    assert rej["winner"].tolist() == ["draw", "A", "tie"]  # raw values as read
    assert rej["model_a"].tolist()[1] == ""


def test_columns_validated_on_threads_as_in_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """Large logs factorize their columns side by side: same rows, codes and reasons."""
    rng = np.random.default_rng(3)
    n = 3000
    names = np.array(["m1", " m2", "m3 ", "NA", "", "x"], dtype=object)
    df = pd.DataFrame({
        "model_a": names[rng.integers(0, 6, n)], "model_b": names[rng.integers(0, 6, n)],
        "winner": np.array(["A", "b", "tie", "draw", "m1", ""], dtype=object)[
            rng.integers(0, 6, n)],
        "task_id": rng.integers(0, 40, n).astype(str), "judge": rng.choice(["j1", "j2", ""], n),
        "scope": rng.choice(["s", "s "], n),
    })  # fmt: skip
    serial = read_verdicts(df, errors="report")
    from ratings.core import threads as _threads

    monkeypatch.setattr(_threads, "CONCURRENT_ROWS", 0)
    monkeypatch.setenv("RATINGS_NUM_THREADS", "4")
    monkeypatch.setattr(_threads, "_POOL", None)
    threaded = read_verdicts(df, errors="report")
    assert _threads._POOL is not None  # the threaded path ran
    assert 0 < len(serial.rejected) < n
    pd.testing.assert_frame_equal(threaded.verdicts, serial.verdicts)
    pd.testing.assert_frame_equal(threaded.rejected, serial.rejected)


def test_report_with_nothing_rejected_has_empty_table() -> None:
    df = pd.DataFrame({"model_a": ["x"], "model_b": ["y"], "winner": ["A"], "judge": ["j"]})
    log = read_verdicts(df, errors="report")
    assert log.rejected.empty
    assert log.rejected.columns.tolist() == ["row", "reason", "model_a", "model_b", "winner",
                                             "judge"]  # fmt: skip


def test_all_rejected_raises_even_in_report_mode(tmp_path: Path) -> None:
    path = write(tmp_path / "v.csv", HEADER + "x,x,A,t0\ny,y,B,t1\n")
    expected = ("All 2 row(s) rejected, nothing to fit: 2 with model_a equals model_b (e.g. "
                "['x', 'y'] at rows [0, 1]). Fix the rows.")  # fmt: skip
    with pytest.raises(InvalidVerdictsError, match=re.escape(expected) + "$"):
        read_verdicts(path, errors="report")


def test_nan_model_rejected(tmp_path: Path, engine: str) -> None:
    body = "x,y,A,t0\n,y,A,t1\nx,  ,A,t2\nNA,y,A,t3\nx,None,A,t4\n"
    with pytest.raises(InvalidVerdictsError) as info:
        read_verdicts(write(tmp_path / "v.csv", HEADER + body))
    msg = str(info.value)
    assert "4 row(s) rejected" in msg
    assert "2 with missing model_a (rows [1, 3])" in msg
    assert "2 with missing model_b (rows [2, 4])" in msg
    df = pd.DataFrame({"model_a": ["x", None, np.nan], "model_b": ["y", "y", "y"],
                       "winner": ["A", "A", "A"]})  # fmt: skip
    log = read_verdicts(df, errors="report")
    assert log.rejected["row"].tolist() == [1, 2]


def test_model_a_equals_model_b(tmp_path: Path) -> None:
    body = "x,y,A,t0\nx, x ,A,t1\n"
    expected = "1 with model_a equals model_b (e.g. ['x'] at rows [1])"
    with pytest.raises(InvalidVerdictsError, match=re.escape(expected)):
        read_verdicts(write(tmp_path / "v.csv", HEADER + body))


def test_duplicate_match_id(tmp_path: Path, engine: str) -> None:
    text = ("model_a,model_b,winner,match_id\nx,y,A,m1\nx,y,B,m2\nx,y,A,m1\nx,y,A,\n"
            "x,y,B,\nx,y,tie,m1\nx,y,A,m2\n")  # fmt: skip
    path = write(tmp_path / "v.csv", text)
    with pytest.raises(InvalidVerdictsError,
                       match=r"3 with duplicate match_id \(e\.g\. \['m1', 'm2'\] at rows "
                             r"\[2, 5, 6\]\)"):  # fmt: skip
        read_verdicts(path)
    log = read_verdicts(path, errors="report")
    assert log.verdicts.index.tolist() == [0, 1, 3, 4]  # missing match_ids are not duplicates
    assert log.verdicts["match_id"].isna().tolist() == [False, False, True, True]
    assert log.rejected["reason"].tolist() == [
        "duplicate match_id 'm1' (first at row 0)",
        "duplicate match_id 'm1' (first at row 0)",
        "duplicate match_id 'm2' (first at row 1)",
    ]


def test_failed_flags(tmp_path: Path, engine: str) -> None:
    values = ["true", "False", "1", "0", "YES", "no", "t", "F", "", " true "]
    body = "".join(f"x,y,B,{v},\n" for v in values)  # B: never contradicted by failed_a
    path = write(tmp_path / "v.csv", "model_a,model_b,winner,failed_a,failed_b\n" + body)
    log = read_verdicts(path)
    assert log.verdicts["failed_a"].dtype == bool
    assert log.verdicts["failed_a"].tolist() == [True, False, True, False, True, False,
                                                 True, False, False, True]  # fmt: skip
    assert not log.verdicts["failed_b"].any()


def test_failed_flags_missing_column_and_bad_values(tmp_path: Path) -> None:
    log = read_verdicts(write(tmp_path / "v.csv", HEADER + "x,y,A,t\n"))
    assert log.verdicts.columns.tolist() == ["model_a", "model_b", "winner", "task_id",
                                             "failed_a", "failed_b"]  # fmt: skip
    assert log.verdicts[["failed_a", "failed_b"]].to_numpy().tolist() == [[False, False]]
    bad = "model_a,model_b,winner,failed_b\nx,y,A,maybe\nx,y,A,2\n"
    expected = "2 with failed_b is not boolean-like (e.g. ['maybe', '2'] at rows [0, 1])"
    with pytest.raises(InvalidVerdictsError, match=re.escape(expected)):
        read_verdicts(write(tmp_path / "w.csv", bad))


def test_failed_flags_from_dataframe_booleans_and_floats() -> None:
    df = pd.DataFrame({"model_a": ["x"] * 3, "model_b": ["y"] * 3, "winner": ["tie", "A", "A"],
                       "failed_a": [True, False, None],
                       "failed_b": [1.0, np.nan, 0.0]})  # fmt: skip
    log = read_verdicts(df)
    assert log.verdicts["failed_a"].tolist() == [True, False, False]
    assert log.verdicts["failed_b"].tolist() == [True, False, False]


def test_missing_task_judge_scope_rejected(tmp_path: Path) -> None:
    text = ("model_a,model_b,winner,task_id,judge,scope\nx,y,A,t,j,s\nx,y,A,,j,s\n"
            "x,y,A,t, ,s\nx,y,A,t,j,NaN\n")  # fmt: skip
    log = read_verdicts(write(tmp_path / "v.csv", text), errors="report")
    assert log.rejected["reason"].tolist() == ["missing task_id", "missing judge",
                                               "missing scope"]  # fmt: skip
    assert log.verdicts.columns.tolist() == ["model_a", "model_b", "winner", "task_id", "judge",
                                             "scope", "failed_a", "failed_b"]  # fmt: skip


def test_leading_zeros_and_whitespace(tmp_path: Path, engine: str) -> None:
    text = ("model_a,model_b,winner,task_id,judge\n  gpt-5 ,claude\t,A, 007 , j1 \n"
            "gpt-5,claude,b,0042,j1\n")  # fmt: skip
    log = read_verdicts(write(tmp_path / "v.csv", text))
    v = log.verdicts
    assert v["task_id"].tolist() == ["007", "0042"]
    assert v["model_a"].tolist() == ["gpt-5", "gpt-5"]
    assert v["model_b"].tolist() == ["claude", "claude"]
    assert v["judge"].tolist() == ["j1", "j1"]
    for c in ("model_a", "model_b", "winner", "task_id", "judge"):
        assert isinstance(v[c].dtype, pd.CategoricalDtype), c
        assert v[c].dtype.categories.dtype == STRING_DTYPE, c
        assert v[c].cat.categories.is_monotonic_increasing, c
    assert v["model_a"].dtype == v["model_b"].dtype  # shared categories: comparable codes


def test_categories_hold_only_kept_values(tmp_path: Path) -> None:
    text = ("model_a,model_b,winner,task_id,judge\nx,y,A,t1,j1\nz,y,draw,t2,j2\n"
            "y,x,B,t1,j1\n")  # fmt: skip
    v = read_verdicts(write(tmp_path / "v.csv", text), errors="report").verdicts
    assert v["model_a"].cat.categories.tolist() == ["x", "y"]  # z only in the rejected row
    assert v["model_b"].cat.categories.tolist() == ["x", "y"]
    assert v["model_a"].cat.codes.tolist() == [0, 1]
    assert v["model_b"].cat.codes.tolist() == [1, 0]
    assert v["task_id"].cat.categories.tolist() == ["t1"]
    assert v["judge"].cat.categories.tolist() == ["j1"]


def test_optional_columns_only_when_present(tmp_path: Path) -> None:
    log = read_verdicts(write(tmp_path / "v.csv", "winner,model_b,model_a,extra\nA,y,x,z\n"))
    assert log.verdicts.columns.tolist() == ["model_a", "model_b", "winner", "failed_a",
                                             "failed_b"]  # fmt: skip
