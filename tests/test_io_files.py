"""Tests for :mod:`ratings.io`: reading verdict files: column mappings and missing columns,
file-level errors (missing, empty, not UTF-8, truncated, unparseable), CSV, TSV, JSON lines,
Parquet and compressed files, DataFrames, and large files (quoted line breaks, truncation found
past quotes)."""

from __future__ import annotations

import gzip
import json
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

import ratings.io.readers as rio
from ratings.core.errors import InvalidVerdictsError
from ratings.io import CANONICAL, read_verdicts

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
                "['model_a', 'model_b', 'result']. Pass `columns={'result': 'winner'}` to map your "
                "names.")  # fmt: skip
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


def test_categorical_frames_read_as_their_text_and_keep_no_view_of_the_input() -> None:
    """A frame of categoricals (the codes taken as they are where the categories are already
    the sorted union, as a Parquet file's dictionaries read back; renumbered otherwise; a
    winner category no row uses) reads as the same frame of text does, and the log's codes
    are its own, not views of the caller's."""
    text = pd.DataFrame({"model_a": ["a", "b", "c", "a", "b"], "model_b": ["b", "c", "a", "c", "b"],
                         "winner": ["A", "B", "B", "b", "A"],
                         "task_id": ["t1", "t1", "t2", "t3", "t3"],
                         "failed_a": ["false", "false", "true", "false", "false"]})  # fmt: skip
    cats = text.astype("category")
    cats["winner"] = cats["winner"].cat.add_categories(["never used"])
    cats["model_b"] = cats["model_b"].cat.reorder_categories(["c", "b", "a"])  # renumbered
    want = read_verdicts(text, errors="report")
    got = read_verdicts(cats, errors="report")
    pd.testing.assert_frame_equal(got.verdicts, want.verdicts)
    pd.testing.assert_frame_equal(got.rejected.drop(columns=list(text.columns)),
                                  want.rejected.drop(columns=list(text.columns)))  # fmt: skip
    assert got.rejected["reason"].tolist() == ["model_a equals model_b"]
    for c in ("model_a", "model_b", "task_id"):
        assert not np.shares_memory(got.verdicts[c].cat.codes.to_numpy(),
                                    cats[c].cat.codes.to_numpy())  # fmt: skip


def test_parquet_categories_without_bad_rows_give_an_empty_rejected_table_of_text(
        tmp_path: Path) -> None:  # fmt: skip
    frame = pd.DataFrame({"model_a": ["x", "y", "x"], "model_b": ["y", "z", "z"],
                          "winner": ["A", "tie", "B"], "task_id": ["t1", "t2", "t1"]})  # fmt: skip
    frame.astype("category").to_parquet(tmp_path / "v.parquet", index=False)
    frame.to_csv(tmp_path / "v.csv", index=False)
    raw = rio.read_file(str(tmp_path / "v.parquet"), None)
    got = read_verdicts(tmp_path / "v.parquet")
    pd.testing.assert_frame_equal(got.verdicts, read_verdicts(tmp_path / "v.csv").verdicts)
    assert len(got.rejected) == 0
    assert list(got.rejected.columns) == ["row", "reason", *frame.columns]
    for c in frame.columns:  # the file's text, as the rows would be shown (not categories)
        assert got.rejected[c].dtype == raw[c].dtype.categories.dtype
