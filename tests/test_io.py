"""Tests for :mod:`ratings.io`: reading, validating and normalising verdict logs; atomic writes."""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ratings.io.readers as rio
from ratings.errors import InvalidVerdictsError
from ratings.io import (
    CANONICAL,
    STRING_DTYPE,
    VerdictLog,
    read_verdicts,
    write_atomic,
    write_rejected,
)

HEADER = "model_a,model_b,winner,task_id\n"


def write(path: Path, text: str | bytes) -> Path:
    """Write exact bytes (no newline translation)."""
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


@pytest.fixture(params=["pyarrow", "c"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with the pyarrow CSV engine and again as if pyarrow were not installed."""
    if request.param == "c":
        monkeypatch.setattr(rio, "pa", None)
    return request.param


def winners(log: VerdictLog) -> list[str]:
    return log.verdicts["winner"].tolist()


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
    assert info.value.rows["reason"].tolist() == [
        "unknown winner value", "missing winner", "unknown winner value"]


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
    from ratings import _threads

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


# ----------------------------------------------------------------------------------------------
# Columns
# ----------------------------------------------------------------------------------------------


def test_column_mapping(tmp_path: Path) -> None:
    text = "left,right,verdict,question_id,notes\nx,y,right,q1,hi\nx,y,left,q2,ho\n"
    path = write(tmp_path / "v.csv", text)
    log = read_verdicts(path, columns={"left": "model_a", "right": "model_b",
                                       "verdict": "winner", "question_id": "task_id"},
                        winner_map={"left": "A", "right": "B"})  # fmt: skip
    assert log.verdicts.columns.tolist() == ["model_a", "model_b", "winner", "task_id",
                                             "failed_a", "failed_b"]  # fmt: skip
    assert winners(log) == ["B", "A"]
    assert log.verdicts["task_id"].tolist() == ["q1", "q2"]


def test_column_mapping_swaps_and_header_blanks(tmp_path: Path) -> None:
    path = write(tmp_path / "v.csv", "model_b, model_a, winner\nx,y,A\n")
    log = read_verdicts(path, columns={"model_b": "model_a", "model_a": "model_b"})
    assert log.verdicts[["model_a", "model_b"]].to_numpy().tolist() == [["x", "y"]]


def test_mapping_to_non_canonical_name() -> None:
    df = pd.DataFrame({"a": ["x"], "model_b": ["y"], "winner": ["A"]})
    with pytest.raises(ValueError, match=r"maps 'a' to 'model_x'.*Canonical columns: \['model_a'"):
        read_verdicts(df, columns={"a": "model_x"})
    with pytest.raises(ValueError, match="maps both 'a' and 'b' to 'model_a'"):
        read_verdicts(df, columns={"a": "model_a", "b": "model_a"})


def test_missing_column_lists_available(tmp_path: Path, engine: str) -> None:
    path = write(tmp_path / "v.csv", "model_a,model_b,result\nx,y,A\n")
    expected = (f"{str(path)!r}: Column(s) ['winner'] not found in verdicts. Available columns: "
                "['model_a', 'model_b', 'result']. Pass `columns={'your_name': 'winner'}` to map "
                "your names.")  # fmt: skip
    with pytest.raises(InvalidVerdictsError) as info:
        read_verdicts(path)
    assert str(info.value) == expected


def test_missing_column_suggests_close_name() -> None:
    df = pd.DataFrame({"model_a": ["x"], "model_b": ["y"], "Winner": ["A"]})
    with pytest.raises(InvalidVerdictsError, match=r"Pass `columns=\{'Winner': 'winner'\}`"):
        read_verdicts(df)


def test_mapped_column_not_in_file() -> None:
    df = pd.DataFrame({"model_a": ["x"], "model_b": ["y"], "winner": ["A"]})
    with pytest.raises(InvalidVerdictsError, match=r"Column\(s\) \['qid'\] given in `columns`"):
        read_verdicts(df, columns={"qid": "task_id"})


def test_semicolon_delimiter_hint(tmp_path: Path, engine: str) -> None:
    path = write(tmp_path / "v.csv", "model_a;model_b;winner\nx;y;A\n")
    with pytest.raises(InvalidVerdictsError, match="may use ';' as delimiter"):
        read_verdicts(path)


def test_tsv(tmp_path: Path, engine: str) -> None:
    log = read_verdicts(write(tmp_path / "v.tsv", "model_a\tmodel_b\twinner\nx, 1\ty\tB\n"))
    assert log.verdicts[["model_a", "winner"]].to_numpy().tolist() == [["x, 1", "B"]]


# ----------------------------------------------------------------------------------------------
# File-level errors
# ----------------------------------------------------------------------------------------------


def test_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"Verdict file '.*nope\.csv' not found"):
        read_verdicts(tmp_path / "nope.csv")


def test_unknown_extension(tmp_path: Path) -> None:
    path = write(tmp_path / "v.txt", HEADER + "x,y,A,t\n")
    with pytest.raises(ValueError, match=r"Supported: \.csv, \.tsv, \.parquet"):
        read_verdicts(path)
    assert len(read_verdicts(path, format="csv")) == 1


@pytest.mark.parametrize("content", ["", "\n\n", "\ufeff", "  \r\n"])
def test_empty_file(tmp_path: Path, engine: str, content: str) -> None:
    for name in ("v.csv", "v.jsonl"):
        path = write(tmp_path / name, content)
        with pytest.raises(InvalidVerdictsError, match="contains no verdicts: the file is empty"):
            read_verdicts(path)


def test_header_only(tmp_path: Path, engine: str) -> None:
    path = write(tmp_path / "v.csv", HEADER)
    with pytest.raises(InvalidVerdictsError,
                       match=r"contains no verdicts: it has a header \['model_a', 'model_b', "
                             r"'winner', 'task_id'\] but no data rows"):  # fmt: skip
        read_verdicts(path)


def test_non_utf8(tmp_path: Path, engine: str) -> None:
    data = (HEADER + "x,y,A,t\n").encode() + b"caf\xe9,y,A,t\n"
    path = write(tmp_path / "v.csv", data)
    offset = data.index(b"\xe9")
    with pytest.raises(InvalidVerdictsError,
                       match=rf"is not valid UTF-8: first bad byte at line 3 \(byte offset "
                             rf"{offset}\)\. Re-export as UTF-8"):  # fmt: skip
        read_verdicts(path)


def test_non_utf8_jsonl_and_gzip(tmp_path: Path) -> None:
    data = b'{"model_a": "x", "model_b": "y", "winner": "A"}\n{"model_a": "\xff"}\n'
    with pytest.raises(InvalidVerdictsError, match=r"line 2 \(byte offset 61\)"):
        read_verdicts(write(tmp_path / "v.jsonl", data))
    gz = tmp_path / "v.csv.gz"
    gz.write_bytes(gzip.compress(b"model_a,model_b,winner\nx,\xff,A\n"))
    with pytest.raises(InvalidVerdictsError, match=r"line 2 \(byte offset 25\)"):
        read_verdicts(gz)


def test_bom_is_stripped(tmp_path: Path, engine: str) -> None:
    log = read_verdicts(write(tmp_path / "v.csv", "\ufeff" + HEADER + "x,y,A,t\n"))
    assert log.verdicts.columns[0] == "model_a"
    line = '\ufeff{"model_a": "x", "model_b": "y", "winner": "A"}\n'
    jl = read_verdicts(write(tmp_path / "v.jsonl", line))
    assert winners(jl) == ["A"]


def test_truncated_last_line(tmp_path: Path, engine: str) -> None:
    path = write(tmp_path / "v.csv", HEADER + "x,y,A,t\nx,y,B,t\nx,y")
    with pytest.raises(InvalidVerdictsError,
                       match=r"last line \(line 4\) looks truncated: it has 2 field\(s\) but the "
                             r"header has 4"):  # fmt: skip
        read_verdicts(path)
    gz = tmp_path / "v.csv.gz"
    gz.write_bytes(gzip.compress((HEADER + "x,y,A,t\nx,y,").encode()))
    with pytest.raises(InvalidVerdictsError, match=r"last line \(line 3\) looks truncated"):
        read_verdicts(gz)


def test_no_final_newline_is_fine_when_complete(tmp_path: Path, engine: str) -> None:
    log = read_verdicts(write(tmp_path / "v.csv", HEADER + "x,y,A,t\nx,y,B,t"))
    assert winners(log) == ["A", "B"]
    # An empty last field is still a complete line (4 fields).
    text = "model_a,model_b,winner,failed_a\nx,y,A,\nx,y,B,"
    assert winners(read_verdicts(write(tmp_path / "w.csv", text))) == ["A", "B"]


def test_short_line_with_newline_is_a_row_problem(tmp_path: Path, engine: str) -> None:
    path = write(tmp_path / "v.csv", HEADER + "x,y,A,t\nx,y\n")
    with pytest.raises(InvalidVerdictsError, match=r"1 with missing winner \(rows \[1\]\)"):
        read_verdicts(path)


def test_parse_error_names_the_line(tmp_path: Path, engine: str) -> None:
    path = write(tmp_path / "v.csv", HEADER + "x,y,A,t\nx,y,A,t\nx,y,A,t,extra\n")
    expected = "could not be parsed as CSV: Expected 4 fields in line 4, saw 5"
    with pytest.raises(InvalidVerdictsError, match=expected):
        read_verdicts(path)
    first = write(tmp_path / "w.csv", HEADER + "x,y,A,t,extra\n")
    with pytest.raises(InvalidVerdictsError, match="first data row has more fields than the hea"):
        read_verdicts(first)


def test_engines_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every result and message is the same with and without pyarrow."""
    files = {
        "ok.csv": HEADER + " x ,y,A,007\nx,y,NA,t\nx,y,,\nx,y,draw,t\n",
        "short.csv": HEADER + "x,y,A,t\nx,y\nx,y,B,t\n",
        "blank.csv": HEADER + "\n\nx,y,A,t\n   \nx,y,B,t\n",
        "quoted.csv": HEADER + '"x,1","y\n2",A,t\n',
        "bad.csv": HEADER.encode() + b"x,\xff,A,t\n",
        "trunc.csv": HEADER + "x,y,A,t\nx",
        "wide.csv": HEADER + "x,y,A,t\nx,y,A,t,u\n",
        "semi.csv": "model_a;model_b;winner\nx;y;A\n",
        "dup.csv": "model_a,model_b,winner,winner\nx,y,A,B\n",
    }

    def outcome(path: Path) -> object:
        try:
            log = read_verdicts(path, errors="report")
        except InvalidVerdictsError as exc:
            return str(exc), exc.rows.astype(object).to_numpy().tolist()
        return (log.verdicts.reset_index().astype(object).to_numpy().tolist(),
                log.rejected.astype(object).to_numpy().tolist())  # fmt: skip

    paths = [write(tmp_path / name, text) for name, text in files.items()]
    with_pyarrow = [outcome(p) for p in paths]
    monkeypatch.setattr(rio, "pa", None)
    without = [outcome(p) for p in paths]
    for path, a, b in zip(paths, with_pyarrow, without, strict=True):
        assert repr(a) == repr(b), path.name


# ----------------------------------------------------------------------------------------------
# Formats and DataFrames
# ----------------------------------------------------------------------------------------------


ROWS = [
    {"model_a": "gpt", "model_b": "claude", "winner": "A", "task_id": "007", "judge": "j1",
     "match_id": "m1", "failed_a": "false"},
    {"model_a": "gpt", "model_b": "claude", "winner": "claude", "task_id": "008", "judge": "j2",
     "match_id": "m2", "failed_a": "true"},
    {"model_a": "claude", "model_b": "gemini", "winner": "tie", "task_id": "007", "judge": "j1",
     "match_id": "m3", "failed_a": ""},
]  # fmt: skip


def test_parquet_and_jsonl_match_csv(tmp_path: Path, engine: str) -> None:
    frame = pd.DataFrame(ROWS)
    frame.to_csv(tmp_path / "v.csv", index=False)
    frame.to_parquet(tmp_path / "v.parquet", index=False)
    frame.to_json(tmp_path / "v.jsonl", orient="records", lines=True)
    frame.to_json(tmp_path / "v.json", orient="records")  # a JSON array
    (tmp_path / "v.ndjson").write_text(
        "\n".join(json.dumps({**r, "failed_a": {"true": True, "false": False}.get(r["failed_a"])})
                  for r in ROWS) + "\n")  # fmt: skip
    reference = read_verdicts(tmp_path / "v.csv").verdicts
    assert reference["winner"].tolist() == ["A", "B", "tie"]
    assert reference["failed_a"].tolist() == [False, True, False]
    for name in ("v.parquet", "v.jsonl", "v.json", "v.ndjson"):
        pd.testing.assert_frame_equal(read_verdicts(tmp_path / name).verdicts, reference)
    pd.testing.assert_frame_equal(read_verdicts(frame).verdicts, reference)


def test_parquet_text_is_read_as_categories_and_rejected_rows_as_text(tmp_path: Path) -> None:
    frame = pd.DataFrame({"model_a": ["x", "y", None, "x "], "model_b": ["y", "y", "x", "z"],
                          "winner": ["A", "tie", "B", "draw"], "task_id": ["t1", "t2", "t3", "t1"],
                          "match_id": ["m1", "m2", "m3", "m4"]})  # fmt: skip
    frame.to_parquet(tmp_path / "v.parquet", index=False)
    frame.to_csv(tmp_path / "v.csv", index=False)
    raw = rio.read_file(str(tmp_path / "v.parquet"), None)
    assert all(isinstance(raw[c].dtype, pd.CategoricalDtype) for c in frame.columns)
    got = read_verdicts(tmp_path / "v.parquet", errors="report")
    want = read_verdicts(tmp_path / "v.csv", errors="report")
    pd.testing.assert_frame_equal(got.verdicts, want.verdicts)
    assert got.rejected["reason"].tolist() == ["model_a equals model_b", "missing model_a",
                                               "unknown winner value"]  # fmt: skip
    assert got.rejected["winner"].tolist() == ["tie", "B", "draw"]
    assert not any(isinstance(d, pd.CategoricalDtype) for d in got.rejected.dtypes)
    assert got.rejected["model_a"].isna().tolist() == [False, True, False]


def test_jsonl_with_numbers_and_nulls(tmp_path: Path) -> None:
    lines = [{"model_a": "x", "model_b": "y", "winner": 1, "task_id": 7},
             {"model_a": "x", "model_b": "y", "winner": 0.5, "task_id": None},
             {"model_a": "x", "model_b": "y", "winner": 0, "task_id": 8}]  # fmt: skip
    path = tmp_path / "v.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n\n")
    log = read_verdicts(path, errors="report")
    assert winners(log) == ["A", "B"]
    assert log.verdicts["task_id"].tolist() == ["7", "8"]  # not "7.0"
    assert log.rejected["reason"].tolist() == ["missing task_id"]


def test_bad_jsonl_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "v.jsonl", '{"model_a": "x", "model_b": "y", "winner": "A"}\n'
                                       '{"model_a": "x",\n')  # fmt: skip
    with pytest.raises(InvalidVerdictsError, match="is not valid JSON Lines at line 2"):
        read_verdicts(path)


def test_corrupt_compressed_and_empty_json(tmp_path: Path, engine: str) -> None:
    data = gzip.compress((HEADER + "x,y,A,t\n" * 5000).encode())
    path = write(tmp_path / "v.csv.gz", data[: len(data) // 2])
    with pytest.raises(InvalidVerdictsError, match="could not be decompressed as gzip"):
        read_verdicts(path)
    with pytest.raises(InvalidVerdictsError, match="contains no verdicts: it has no records"):
        read_verdicts(write(tmp_path / "v.json", "[]"))


def test_bad_parquet(tmp_path: Path) -> None:
    path = write(tmp_path / "v.parquet", "not parquet at all")
    with pytest.raises(InvalidVerdictsError, match="could not be read as Parquet"):
        read_verdicts(path)


def test_dataframe_input_unchanged() -> None:
    df = pd.DataFrame({"left": [" gpt ", "gpt", "claude"], "model_b": ["claude", "claude", "x"],
                       "winner": ["a", "draw", "claude"], "task_id": [1, 2, 3],
                       "failed_a": ["no", "yes", None]},
                      index=[10, 20, 30])  # fmt: skip
    before = df.copy(deep=True)
    log = read_verdicts(df, columns={"left": "model_a"}, errors="report")
    pd.testing.assert_frame_equal(df, before)
    assert log.source is None
    assert log.verdicts.index.tolist() == [0, 2]  # positional rows, not the caller's labels
    assert log.verdicts["model_a"].tolist() == ["gpt", "claude"]
    assert log.verdicts["task_id"].tolist() == ["1", "3"]
    assert log.rejected["row"].tolist() == [1]
    assert log.rejected["model_a"].tolist() == ["gpt"]  # the caller's raw value
    log.verdicts.loc[0, "model_a"] = "claude"  # categorical output: an existing category
    log.verdicts.loc[0, "task_id"] = "3"
    pd.testing.assert_frame_equal(df, before)


def test_empty_dataframe() -> None:
    with pytest.raises(InvalidVerdictsError, match="contains no verdicts"):
        read_verdicts(pd.DataFrame({c: [] for c in CANONICAL}))


def test_bad_arguments(tmp_path: Path) -> None:
    df = pd.DataFrame({"model_a": ["x"], "model_b": ["y"], "winner": ["A"]})
    with pytest.raises(ValueError, match="`errors` must be 'raise' or 'report'; got 'ignore'"):
        read_verdicts(df, errors="ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`format` must be"):
        read_verdicts(df, format="xlsx")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="path or a pandas DataFrame"):
        read_verdicts(42)  # type: ignore[arg-type]


def test_large_log_is_vectorised() -> None:
    n = 200_000
    rng = np.random.default_rng(0)
    models = np.array([f"m{i}" for i in range(20)])
    a = rng.integers(0, 20, n)
    b = (a + rng.integers(1, 20, n)) % 20
    w = np.array(["A", "B", "tie", "1", "0"])[rng.integers(0, 5, n)]
    w[::1000] = "draw"
    df = pd.DataFrame({"model_a": models[a], "model_b": models[b], "winner": w,
                       "match_id": np.arange(n).astype(str)})  # fmt: skip
    log = read_verdicts(df, errors="report")
    assert len(log) + len(log.rejected) == n
    assert log.rejected["row"].tolist() == list(range(0, n, 1000))
    assert set(log.verdicts["winner"].unique()) == {"A", "B", "tie"}


# ----------------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------------


def test_write_atomic_formats(tmp_path: Path) -> None:
    df = pd.DataFrame({"a": ["007", "x"], "b": [1, 2]})
    write_atomic(df, tmp_path / "o.csv")
    assert (tmp_path / "o.csv").read_text() == "a,b\n007,1\nx,2\n"
    write_atomic(df, tmp_path / "o.json")
    assert json.loads((tmp_path / "o.json").read_text()) == [{"a": "007", "b": 1},
                                                             {"a": "x", "b": 2}]  # fmt: skip
    write_atomic(df, tmp_path / "o.csv.gz")
    assert gzip.decompress((tmp_path / "o.csv.gz").read_bytes()) == b"a,b\n007,1\nx,2\n"
    write_atomic(df, tmp_path / "o.parquet")
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "o.parquet"), df)
    write_atomic("héllo\n", tmp_path / "o.txt")
    assert (tmp_path / "o.txt").read_text(encoding="utf-8") == "héllo\n"
    with pytest.raises(ValueError, match="Cannot tell how to write a DataFrame"):
        write_atomic(df, tmp_path / "o.xlsx")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "o.csv", "o.csv.gz", "o.json", "o.parquet", "o.txt"]


def test_write_atomic_refuses_to_overwrite_input(tmp_path: Path) -> None:
    src = write(tmp_path / "v.csv", HEADER + "x,y,A,t\n")
    df = pd.DataFrame({"a": [1]})
    with pytest.raises(ValueError, match="refusing to overwrite the input file"):
        write_atomic(df, src, inputs=[src])
    # Another spelling of the same path, and a hard link, are the same file too.
    other = tmp_path / "sub" / ".." / "v.csv"
    (tmp_path / "sub").mkdir()
    with pytest.raises(ValueError, match="refusing to overwrite the input file"):
        write_atomic("text", other, inputs=[str(src)])
    os.link(src, tmp_path / "link.csv")
    with pytest.raises(ValueError, match="refusing to overwrite the input file"):
        write_atomic(df, tmp_path / "link.csv", inputs=[src])
    assert src.read_text() == HEADER + "x,y,A,t\n"


def test_write_atomic_keeps_old_file_when_writing_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = write(tmp_path / "out.csv", "old,content\n1,2\n")
    target.chmod(0o640)

    def broken_to_csv(self: pd.DataFrame, path: str, *args: object, **kwargs: object) -> None:
        with open(path, "w") as fh:  # a partial write, then a failure
            fh.write("a,b\n1,")
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_csv", broken_to_csv)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(pd.DataFrame({"a": [1], "b": [2]}), target)
    assert target.read_text() == "old,content\n1,2\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]  # no temporary file left
    monkeypatch.undo()
    write_atomic(pd.DataFrame({"a": [1]}), target)
    assert target.read_text() == "a\n1\n"
    assert target.stat().st_mode & 0o777 == 0o640  # permissions kept


def test_write_atomic_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_atomic("x", tmp_path / "no" / "such.txt")


def test_write_rejected(tmp_path: Path) -> None:
    src = write(tmp_path / "v.csv", HEADER + "x,y,A,007\nx,y,draw,008\n")
    log = read_verdicts(src, errors="report")
    write_rejected(log, tmp_path / "rejected.csv")
    back = pd.read_csv(tmp_path / "rejected.csv", dtype=str)
    assert back.to_dict("records") == [{"row": "1", "reason": "unknown winner value",
                                        "model_a": "x", "model_b": "y", "winner": "draw",
                                        "task_id": "008"}]  # fmt: skip
    write_rejected(log, tmp_path / "rejected.txt")
    assert (tmp_path / "rejected.txt").read_text().startswith("row,reason,model_a")
    expected = f"refusing to overwrite the input file {str(src)!r}"
    with pytest.raises(ValueError, match=re.escape(expected)):
        write_rejected(log, src)


def test_quoted_line_breaks_in_a_large_file(tmp_path: Path) -> None:
    # pyarrow (as pandas runs it) splits files over 1 MB at line breaks even inside quotes and
    # misread the last value here as 'z"'; such files go to the C reader.
    import csv

    long, broken = "m" + '"' * 99_999 + "z", "m\nz"
    rows = [(long, broken, "A")] * 5 + [(broken, long, "A")]
    path = tmp_path / "v.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["model_a", "model_b", "winner"])
        writer.writerows(rows)
    assert path.stat().st_size > 1_000_000
    v = read_verdicts(path).verdicts
    assert v["model_a"].tolist() == [r[0] for r in rows]
    assert v["model_b"].tolist() == [r[1] for r in rows]


@pytest.mark.parametrize("chunk", [5, 64, 1 << 20])  # the tail slides over many small reads
def test_truncated_last_record_found_past_quotes_and_crlf(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(rio, "_CHUNK", chunk)
    rows = ['x,"multi\r\nline",A,m0'] + [f"x,y,{'AB'[k % 2]},m{k + 1}" for k in range(40)]
    body = "model_a,model_b,winner,match_id\r\n" + "\r\n".join(rows)
    lines = body.count("\r\n") + 1  # physical lines of the complete file
    complete = write(tmp_path / "ok.csv", body + "\r\n" + 'y,"a\r\nb",B,')
    log = read_verdicts(complete)
    assert log.verdicts["model_b"].tolist()[-1] == "a\r\nb"
    cut = write(tmp_path / "cut.csv", body + "\r\n" + 'y,"a\r\nb",B')
    expected = rf"last line \(line {lines + 1}\) looks truncated"
    with pytest.raises(InvalidVerdictsError, match=expected):
        read_verdicts(cut)
