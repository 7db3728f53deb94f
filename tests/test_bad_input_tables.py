"""Bad tables: verdict logs, counts tables, rubric files and submission lists (``ratings next``
/ :mod:`sampling.cli`); one test per kind, each checking that the error says what is wrong and
where (file, row numbers, column, value).

Tests through the CLI also check the exit status (2 for data errors, 2 from argparse for bad
choices) and that nothing was written: the directory holds the same files, byte for byte.

More bad inputs: ``test_bad_input_options.py`` (fitting choices, judge-quality files,
registries, command-line arguments) and ``test_bad_input_catalogue.py`` (every kind through
the command line).
"""

from __future__ import annotations

import gzip
import re

import pandas as pd
import pytest
from bad_inputs import COUNTS, GOOD, run_cli, write

from ratings import InvalidVerdictsError, read_verdicts
from ratings.cli.app import main
from ratings.data.comparisons import from_counts
from ratings.scopes.rubric import read_rubric

# ----------------------------------------------------------------------------------------------
# Verdict logs
# ----------------------------------------------------------------------------------------------


def test_verdicts_missing_column(tmp_path, capsys):
    path = write(tmp_path / "v.csv", "model_a,model_b,outcome\nx,y,A\n")
    with pytest.raises(InvalidVerdictsError, match=r"v\.csv': Column\(s\) \['winner'\] not "
                       r"found in verdicts\. Available columns: \['model_a', 'model_b', "
                       r"'outcome'\]"):  # fmt: skip
        read_verdicts(path)
    err = run_cli(["fit", path, "--out", tmp_path / "r.csv"], capsys, tmp_path)
    assert "['winner'] not found" in err and "v.csv" in err


def test_verdicts_empty_file(tmp_path, capsys):
    path = write(tmp_path / "v.csv", "")
    with pytest.raises(InvalidVerdictsError, match=r"'.*v\.csv' contains no verdicts: the file "
                       r"is empty"):  # fmt: skip
        read_verdicts(path)
    assert "the file is empty" in run_cli(["fit", path, "--out", tmp_path / "r.csv"], capsys,
                                          tmp_path)  # fmt: skip


def test_verdicts_header_only(tmp_path):
    path = write(tmp_path / "v.csv", "model_a,model_b,winner\n")
    with pytest.raises(InvalidVerdictsError, match=r"'.*v\.csv' contains no verdicts: it has a "
                       r"header \['model_a', 'model_b', 'winner'\] but no data rows"):  # fmt: skip
        read_verdicts(path)


def test_verdicts_unknown_winner_value(tmp_path, capsys):
    path = write(tmp_path / "v.csv", "model_a,model_b,winner\nx,y,A\nx,y,draw\ny,x,B\n")
    expected = (r"'.*v\.csv': 1 row\(s\) rejected: 1 with unknown winner value \(e\.g\. "
                r"\['draw'\] at rows \[1\]\).*winner_map")
    with pytest.raises(InvalidVerdictsError, match=expected) as err:
        read_verdicts(path)
    assert err.value.rows[["row", "reason", "winner"]].values.tolist() == [
        [1, "unknown winner value", "draw"]]  # fmt: skip
    stderr = run_cli(["fit", path, "--out", tmp_path / "r.csv"], capsys, tmp_path)
    assert "unknown winner value (e.g. ['draw'] at lines [3])" in stderr  # header: line 1


def test_verdicts_nan_model(tmp_path):
    path = write(tmp_path / "v.csv", "model_a,model_b,winner\nx,y,A\nNaN,y,A\nx,,B\n")
    with pytest.raises(InvalidVerdictsError, match=r"2 row\(s\) rejected: 1 with missing "
                       r"model_a \(rows \[1\]\); 1 with missing model_b \(rows \[2\]\)") as err:
        read_verdicts(path)
    assert err.value.rows["row"].tolist() == [1, 2]


def test_verdicts_nan_winner(tmp_path):
    path = write(tmp_path / "v.jsonl",
                 '{"model_a": "x", "model_b": "y", "winner": "A"}\n'
                 '{"model_a": "x", "model_b": "y", "winner": NaN}\n'
                 '{"model_a": "y", "model_b": "x", "winner": null}\n')  # fmt: skip
    with pytest.raises(InvalidVerdictsError, match=r"'.*v\.jsonl': 2 row\(s\) rejected: 2 with "
                       r"missing winner \(rows \[1, 2\]\)"):  # fmt: skip
        read_verdicts(path)


def test_verdicts_model_a_equals_model_b(tmp_path):
    path = write(tmp_path / "v.csv", "model_a,model_b,winner\nx,y,A\nx, x ,A\n")
    with pytest.raises(InvalidVerdictsError, match=r"1 with model_a equals model_b \(e\.g\. "
                       r"\['x'\] at rows \[1\]\)"):  # fmt: skip
        read_verdicts(path)


def test_verdicts_duplicate_match_id(tmp_path):
    path = write(tmp_path / "v.csv",
                 "match_id,model_a,model_b,winner\nm1,x,y,A\nm2,y,x,A\nm1,y,x,B\n")  # fmt: skip
    with pytest.raises(InvalidVerdictsError, match=r"1 with duplicate match_id \(e\.g\. \['m1'\] "
                       r"at rows \[2\]\)") as err:  # fmt: skip
        read_verdicts(path)
    assert err.value.rows["reason"].tolist() == ["duplicate match_id 'm1' (first at row 0)"]


def test_verdicts_winner_naming_a_third_model(tmp_path):
    path = write(tmp_path / "v.csv", "model_a,model_b,winner\nx,y,x\ny,z,A\nx,y,z\n")
    with pytest.raises(InvalidVerdictsError, match=r"1 with winner names a model not in this "
                       r"match \(e\.g\. \['z'\] at rows \[2\]\)"):  # fmt: skip
        read_verdicts(path)


def test_verdicts_ambiguous_winner_spelling(tmp_path):
    # Models named "A" and "B" playing on the other sides: is winner "A" side A or model "A"?
    path = write(tmp_path / "v.csv", "model_a,model_b,winner\nB,A,A\nx,y,A\n")
    with pytest.raises(InvalidVerdictsError, match=r"1 with ambiguous winner.*\(e\.g\. \['A'\] "
                       r"at rows \[0\]\)"):  # fmt: skip
        read_verdicts(path)


def test_verdicts_non_utf8_bytes(tmp_path, capsys):
    path = tmp_path / "v.csv"
    path.write_bytes(b"model_a,model_b,winner\nx,y,A\nG\xe9mini,y,A\n")  # Latin-1 "é"
    with pytest.raises(InvalidVerdictsError, match=r"'.*v\.csv' is not valid UTF-8: first bad "
                       r"byte at line 3 \(byte offset 30\)"):  # fmt: skip
        read_verdicts(path)
    assert "line 3" in run_cli(["fit", path, "--out", tmp_path / "r.csv"], capsys, tmp_path)


def test_verdicts_truncated_last_line(tmp_path, capsys):
    path = write(tmp_path / "v.csv", "model_a,model_b,winner\nx,y,A\ny,z")
    with pytest.raises(InvalidVerdictsError, match=r"'.*v\.csv': last line \(line 3\) looks "
                       r"truncated: it has 2 field\(s\) but the header has 3"):  # fmt: skip
        read_verdicts(path)
    assert "truncated" in run_cli(["fit", path, "--out", tmp_path / "r.csv"], capsys, tmp_path)


def test_verdicts_truncated_last_line_number_with_cr_line_ends(tmp_path):
    path = write(tmp_path / "v.csv", "model_a,model_b,winner\rx,y,A\ry,z")
    with pytest.raises(InvalidVerdictsError, match=r"last line \(line 3\) looks truncated"):
        read_verdicts(path)


def test_verdicts_first_row_with_more_fields_than_header(tmp_path):
    path = write(tmp_path / "v.csv", "model_a,model_b,winner\nx,y,A,extra\ny,x,B\n")
    with pytest.raises(InvalidVerdictsError, match=r"'.*v\.csv' could not be parsed as CSV: the "
                       r"first data row has more fields than the header \(3\)"):  # fmt: skip
        read_verdicts(path)


def test_verdicts_wrong_delimiter(tmp_path):
    path = write(tmp_path / "v.csv", "model_a;model_b;winner\nx;y;A\n")
    with pytest.raises(InvalidVerdictsError, match=r"Available columns: \['model_a;model_b;"
                       r"winner'\].*may use ';' as delimiter"):  # fmt: skip
        read_verdicts(path)


def test_verdicts_failed_flag_not_boolean(tmp_path):
    path = write(tmp_path / "v.csv", "model_a,model_b,winner,failed_a\nx,y,A,maybe\ny,x,A,no\n")
    with pytest.raises(InvalidVerdictsError, match=r"1 with failed_a is not boolean-like "
                       r"\(e\.g\. \['maybe'\] at rows \[0\]\)"):  # fmt: skip
        read_verdicts(path)


def test_verdicts_missing_task_id_in_present_column(tmp_path):
    path = write(tmp_path / "v.csv", "model_a,model_b,winner,task_id\nx,y,A,t1\ny,x,A,NA\n")
    with pytest.raises(InvalidVerdictsError, match=r"1 with missing task_id \(rows \[1\]\)"):
        read_verdicts(path)


def test_verdicts_columns_mapping_names_absent_column(tmp_path):
    path = write(tmp_path / "v.csv", "left,right,winner\nx,y,A\n")
    with pytest.raises(InvalidVerdictsError, match=r"Column\(s\) \['lhs'\] given in `columns` "
                       r"not found in verdicts\. Available columns: \['left', 'right', "
                       r"'winner'\]"):  # fmt: skip
        read_verdicts(path, columns={"lhs": "model_a", "right": "model_b"})


def test_verdicts_duplicate_column_in_dataframe():
    frame = pd.DataFrame([["x", "y", "A", "B"]], columns=["model_a", "model_b", "winner", "winner"])
    with pytest.raises(InvalidVerdictsError, match=r"Column 'winner' \(for 'winner'\) appears "
                       r"more than once"):  # fmt: skip
        read_verdicts(frame)


def test_verdicts_duplicate_column_in_csv_header(tmp_path):
    path = write(tmp_path / "v.csv", "model_a,model_b,winner,winner\nx,y,A,B\ny,x,A,B\n")
    with pytest.raises(InvalidVerdictsError, match=r"'winner'.*appears more than once"):
        read_verdicts(path)


def test_verdicts_corrupt_gzip(tmp_path):
    path = tmp_path / "v.csv.gz"
    path.write_bytes(gzip.compress(GOOD.encode())[:-12])  # cut off: no CRC, no size
    with pytest.raises(InvalidVerdictsError, match=r"'.*v\.csv\.gz' could not be decompressed "
                       r"as gzip.*truncated"):  # fmt: skip
        read_verdicts(path)


def test_verdicts_invalid_json_lines(tmp_path):
    path = write(tmp_path / "v.jsonl",
                 '{"model_a": "x", "model_b": "y", "winner": "A"}\n{"model_a": "y", "model_b"\n')
    with pytest.raises(InvalidVerdictsError, match=r"'.*v\.jsonl' is not valid JSON Lines at "
                       r"line 2"):  # fmt: skip
        read_verdicts(path)


def test_verdicts_corrupt_parquet(tmp_path):
    path = tmp_path / "v.parquet"
    path.write_bytes(b"PAR1 this is not a parquet file")
    with pytest.raises(InvalidVerdictsError, match=r"'.*v\.parquet' could not be read as "
                       r"Parquet"):  # fmt: skip
        read_verdicts(path)


def test_verdicts_unknown_extension(tmp_path):
    path = write(tmp_path / "v.xlsx", GOOD)
    with pytest.raises(ValueError, match=r"'.*v\.xlsx' is a spreadsheet \(\.xlsx\).*export the "
                       r"sheet as CSV"):  # fmt: skip
        read_verdicts(path)
    path = write(tmp_path / "v.xyz", GOOD)
    with pytest.raises(ValueError, match=r"Cannot tell the format of '.*v\.xyz' from its "
                       r"extension\. Supported: \.csv"):  # fmt: skip
        read_verdicts(path)


def test_verdicts_file_not_found(tmp_path, capsys):
    path = tmp_path / "nope.csv"
    with pytest.raises(FileNotFoundError, match=r"Verdict file '.*nope\.csv' not found"):
        read_verdicts(path)
    assert "nope.csv' not found" in run_cli(["fit", path], capsys, tmp_path)


# ----------------------------------------------------------------------------------------------
# Counts tables
# ----------------------------------------------------------------------------------------------


def test_counts_negative(tmp_path, capsys):
    table = pd.read_csv(write(tmp_path / "c.csv", COUNTS))
    with pytest.raises(InvalidVerdictsError, match=r"1 row\(s\) of the counts table have "
                       r"counts that are negative: rows \[1\]") as err:  # fmt: skip
        from_counts(table)
    assert err.value.rows["row"].tolist() == [1]
    err_text = run_cli(["fit", tmp_path / "c.csv", "--out", tmp_path / "r.csv"], capsys, tmp_path)
    assert "lines [3]" in err_text and "at line 3" in err_text  # the header is line 1


def test_counts_negative_names_column_and_value(tmp_path):
    with pytest.raises(InvalidVerdictsError, match=r"wins_a.*-2"):
        from_counts(pd.read_csv(write(tmp_path / "c.csv", COUNTS)))


def test_counts_missing_column():
    with pytest.raises(InvalidVerdictsError, match=r"Column\(s\) \['ties'\] not found in the "
                       r"counts table\. Available columns: \['model_a', 'model_b', 'wins_a', "
                       r"'wins_b'\]"):  # fmt: skip
        from_counts(pd.DataFrame({"model_a": ["x"], "model_b": ["y"], "wins_a": [1],
                                  "wins_b": [2]}))  # fmt: skip


# ----------------------------------------------------------------------------------------------
# Rubric files
# ----------------------------------------------------------------------------------------------


def test_rubric_passed_not_boolean(tmp_path, capsys):
    path = write(tmp_path / "rubric.csv",
                 "task_id,model,check_id,passed\nt1,x,c1,maybe\nt1,y,c1,yes\n")  # fmt: skip
    with pytest.raises(InvalidVerdictsError, match=r"'.*rubric\.csv': 1 rubric row\(s\) cannot "
                       r"be used: 1 with passed is not a grade \(boolean-like or a share in "
                       r"\[0, 1\]\) \(e\.g\. \['maybe'\] at rows \[0\]\)"):  # fmt: skip
        read_rubric(path)
    err = run_cli(["rubric", path, "--out", tmp_path / "m.csv"], capsys, tmp_path)
    assert "['maybe'] at rows [0]" in err


def test_rubric_missing_grade(tmp_path):
    path = write(tmp_path / "rubric.csv", "task_id,model,check_id,passed\nt1,x,c1,yes\nt1,y,c1,\n")
    with pytest.raises(InvalidVerdictsError, match=r"1 with missing passed \(rows \[1\]\).*a "
                       r"missing grade is not a fail"):  # fmt: skip
        read_rubric(path)


def test_rubric_duplicate_check(tmp_path, capsys):
    path = write(tmp_path / "rubric.csv", "task_id,model,check_id,passed\n"
                 "t1,x,c1,yes\nt1,y,c1,yes\nt1,x,c1,no\n")  # fmt: skip
    with pytest.raises(InvalidVerdictsError, match=re.escape(
            "1 check(s) were graded more than once for the same submission (task_id, model, "
            "check_id), in 2 rows: ('t1', 'x', 'c1') at rows [0, 2]")) as err:  # fmt: skip
        read_rubric(path)
    assert err.value.rows["row"].tolist() == [0, 2]
    assert "duplicates" in run_cli(["rubric", path, "--out", tmp_path / "m.csv"], capsys,
                                   tmp_path)  # fmt: skip


def test_rubric_missing_column(tmp_path):
    path = write(tmp_path / "rubric.csv", "task_id,model,check,passed\nt1,x,c1,yes\n")
    with pytest.raises(InvalidVerdictsError, match=re.escape(
            "Column(s) ['check_id'] not found in the rubric. Available columns: ['task_id', "
            "'model', 'check', 'passed']")) as err:  # fmt: skip
        read_rubric(path)
    assert "columns={'check': 'check_id'}" in str(err.value)


# ----------------------------------------------------------------------------------------------
# Submissions (`ratings next`, from sampling/cli.py)
# ----------------------------------------------------------------------------------------------


def _next_entry():
    """`ratings next` when the main CLI has it, else sampling's own entry point."""
    try:
        code = main(["next", "--help"])
    except SystemExit as exc:
        code = exc.code
    if code == 0:
        return main
    sampling_cli = pytest.importorskip("sampling.cli")
    return sampling_cli.main


def _next(tmp_path, capsys, submissions_text: str, name: str = "subs.csv") -> str:
    entry = _next_entry()
    capsys.readouterr()  # drop the --help text
    verdicts = write(tmp_path / "verdicts.csv", "model_a,model_b,winner,task_id\n")
    subs = write(tmp_path / name, submissions_text)
    return run_cli(["next", verdicts, "--submissions", subs, "--judges", "j1", "--n", "2",
                    "--seed", "1", "--out", tmp_path / "plan.csv"], capsys, tmp_path,
                   entry=entry)  # fmt: skip


def test_submissions_missing_column(tmp_path, capsys):
    err = _next(tmp_path, capsys, "model,task\nx,t1\ny,t1\n")
    assert "Column(s) ['task_id'] not found in submissions" in err
    assert "Available columns: ['model', 'task']" in err


def test_submissions_empty_file(tmp_path, capsys):
    err = _next(tmp_path, capsys, "")
    assert re.search(r"Submissions file '.*subs\.csv' is empty", err), err


def test_submissions_missing_model(tmp_path, capsys):
    err = _next(tmp_path, capsys, "model,task_id\nx,t1\n,t1\ny,t1\n")
    assert "Submissions column 'model' has 1 missing value(s) at rows [1]" in err


def test_submissions_wrong_extension(tmp_path, capsys):
    err = _next(tmp_path, capsys, "model,task_id\nx,t1\ny,t1\n", name="subs.xlsx")
    assert re.search(r"`--submissions` must be a \.csv or \.tsv file; got '.*subs\.xlsx'", err)


def test_next_is_wired_into_ratings_cli(capsys):
    try:
        code = main(["next", "--help"])
    except SystemExit as exc:
        code = exc.code
    capsys.readouterr()
    if code != 0:
        pytest.skip("`ratings next` is not wired into ratings/cli/app.py yet")
    assert code == 0
