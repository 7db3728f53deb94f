"""A catalogue of bad inputs: one test per kind, each checking that the error says what is wrong
and where (file, row numbers, column, value).

Kinds are grouped by input: verdict logs, fitting, counts tables, rubric files, judge-quality
files, registries, submissions (``ratings next`` / :mod:`sampling.cli`) and command-line
arguments. Tests through the CLI also check the exit status (2 for data errors, 2 from argparse
for bad choices) and that nothing was written: the directory holds the same files, byte for byte.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pandas as pd
import pytest

import ratings
from ratings import InvalidVerdictsError, NonIdentifiableError, read_verdicts
from ratings.cli import main
from ratings.data import from_counts
from ratings.judges import load_judge_quality
from ratings.registry import freeze, load_registry
from ratings.rubric import read_rubric

GOOD = "model_a,model_b,winner\nx,y,A\ny,z,A\nz,x,A\nx,y,B\n"  # a connected three-model board
SCOPED = (
    "model_a,model_b,winner,task_id,scope,judge\n"
    "x,y,A,t1,s1,j1\ny,z,A,t2,s1,j2\nz,x,A,t3,s1,j1\nx,z,tie,t4,s1,j2\nx,y,B,t5,s1,j1\n"
    "y,x,B,t1,s2,j1\nx,y,A,t2,s2,j2\ny,x,A,t3,s2,j1\n"
)
REGISTRY_HEADER = "model,elo,lower,upper,index,frozen_on,source\n"


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def run_cli(argv: list[str], capsys, directory: Path, *, entry=main) -> str:
    """Run the CLI; assert exit status 2 and that no file in ``directory`` appeared or changed.
    Returns stderr."""
    before = snapshot(directory)
    try:
        code = entry([str(a) for a in argv])
    except SystemExit as exc:  # argparse usage errors
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert snapshot(directory) == before, "the CLI wrote or changed a file"
    return err


@pytest.fixture
def good(tmp_path) -> Path:
    return write(tmp_path / "good.csv", GOOD)


@pytest.fixture
def scoped(tmp_path) -> Path:
    return write(tmp_path / "scoped.csv", SCOPED)


@pytest.fixture
def ratings_csv(tmp_path, good, capsys) -> Path:
    out = tmp_path / "r.csv"
    assert main(["fit", str(good), "--out", str(out)]) == 0
    capsys.readouterr()
    return out


def judge_file(path: Path, scope: str | None, judges: dict[str, float]) -> Path:
    doc = {"format": "ratings.judge_quality/1", "scope": scope, "model": "crowd-bt",
           "judges": [{"judge": j, "eta": eta} for j, eta in judges.items()]}  # fmt: skip
    return write(path, json.dumps(doc))


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
    assert "unknown winner value (e.g. ['draw'] at rows [1])" in stderr


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
    with pytest.raises(InvalidVerdictsError, match=r"Column\(s\) \['lhs'\] given in `columns=` "
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
    with pytest.raises(ValueError, match=r"Cannot tell the format of '.*v\.xlsx' from its "
                       r"extension\. Supported: \.csv"):  # fmt: skip
        read_verdicts(path)


def test_verdicts_file_not_found(tmp_path, capsys):
    path = tmp_path / "nope.csv"
    with pytest.raises(FileNotFoundError, match=r"Verdict file '.*nope\.csv' not found"):
        read_verdicts(path)
    assert "nope.csv' not found" in run_cli(["fit", path], capsys, tmp_path)


# ----------------------------------------------------------------------------------------------
# Fitting
# ----------------------------------------------------------------------------------------------


def test_fit_model_that_never_lost(tmp_path, capsys):
    path = write(tmp_path / "v.csv", "model_a,model_b,winner\nx,y,A\ny,z,A\nz,y,A\nx,z,A\n")
    with pytest.raises(NonIdentifiableError, match=r"1 model\(s\) never lost or tied: \['x'\]"):
        ratings.fit(path)
    err = run_cli(["fit", path, "--out", tmp_path / "r.csv"], capsys, tmp_path)
    assert "never lost or tied: ['x']" in err and "--penalty" in err


def test_fit_disconnected_board(tmp_path):
    log = pd.DataFrame({"model_a": ["x", "y", "z", "p", "q"], "model_b": ["y", "z", "x", "q", "p"],
                        "winner": ["A", "A", "A", "A", "A"]})  # fmt: skip
    with pytest.raises(NonIdentifiableError, match=r"splits into 2 groups never compared with "
                       r"each other \(sizes \[3, 2\]\); e\.g\. \['p', 'q'\]") as err:
        ratings.fit(log)
    assert sorted(map(sorted, err.value.groups)) == [["p", "q"], ["x", "y", "z"]]


def test_fit_anchor_not_in_data(tmp_path, good, capsys):
    with pytest.raises(ValueError, match=r"Anchor model 'xx' is not in the verdicts\. Did you "
                       r"mean \['x'\]\?"):  # fmt: skip
        ratings.fit(good, anchor="xx=1000")
    err = run_cli(["fit", good, "--anchor", "w=1000", "--out", tmp_path / "r.csv"], capsys,
                  tmp_path)  # fmt: skip
    assert "Anchor model 'w' is not in the verdicts" in err


def test_fit_scope_missing_with_several_scopes(tmp_path, scoped, capsys):
    with pytest.raises(InvalidVerdictsError, match=r"The verdicts hold 2 scopes \['s1', 's2'\].*"
                       r"Pass `scope=`"):  # fmt: skip
        ratings.fit(scoped)
    err = run_cli(["fit", scoped, "--out", tmp_path / "r.csv"], capsys, tmp_path)
    assert "2 scopes ['s1', 's2']" in err and "--scope" in err


def test_fit_unknown_scope(tmp_path, scoped, capsys):
    with pytest.raises(InvalidVerdictsError, match=r"Scope 's3' not in the verdicts\. Did you "
                       r"mean \['s2', 's1'\]\?"):  # fmt: skip
        ratings.fit(scoped, scope="s3")
    assert "Scope 's3' not in the verdicts" in run_cli(["fit", scoped, "--scope", "s3"], capsys,
                                                       tmp_path)  # fmt: skip


def test_fit_cluster_column_absent(tmp_path, good, capsys):
    with pytest.raises(InvalidVerdictsError, match=r"Column\(s\) \['question'\] not found in "
                       r"verdicts.*cluster=None"):  # fmt: skip
        ratings.fit(good, cluster="question")
    assert "['question'] not found" in run_cli(["fit", good, "--cluster", "question"], capsys,
                                                tmp_path)  # fmt: skip


# ----------------------------------------------------------------------------------------------
# Counts tables
# ----------------------------------------------------------------------------------------------

COUNTS = "model_a,model_b,wins_a,wins_b,ties\nx,y,3,1,0\ny,z,-2,1,0\nz,x,1,1,1\n"


def test_counts_negative(tmp_path, capsys):
    table = pd.read_csv(write(tmp_path / "c.csv", COUNTS))
    with pytest.raises(InvalidVerdictsError, match=r"1 verdict\(s\) have counts that are not "
                       r"finite numbers >= 0: rows \[1\]") as err:  # fmt: skip
        from_counts(table)
    assert err.value.rows["row"].tolist() == [1]
    err_text = run_cli(["fit", tmp_path / "c.csv", "--out", tmp_path / "r.csv"], capsys, tmp_path)
    assert "rows [1]" in err_text


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
                       r"be used: 1 with passed is not boolean-like \(e\.g\. \['maybe'\] at rows "
                       r"\[0\]\)"):  # fmt: skip
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
# Judge-quality files
# ----------------------------------------------------------------------------------------------


def test_judge_quality_corrupt_json(tmp_path, scoped, capsys):
    path = write(tmp_path / "jq.json", '{"format": "ratings.judge_quality/1", "judges": [')
    with pytest.raises(InvalidVerdictsError, match=r"Cannot read judge-quality file "
                       r"'.*jq\.json': Expecting value: line 1 column \d+"):  # fmt: skip
        load_judge_quality(path)
    err = run_cli(["fit", scoped, "--scope", "s1", "--model", "crowd-bt", "--judge-quality",
                   path, "--out", tmp_path / "r.csv"], capsys, tmp_path)  # fmt: skip
    assert "jq.json" in err and "Cannot read judge-quality file" in err


def test_judge_quality_not_a_judge_quality_file(tmp_path):
    path = write(tmp_path / "jq.json", json.dumps({"judges": {"j1": 0.9}}))
    with pytest.raises(InvalidVerdictsError, match=r"'.*jq\.json' is not a judge-quality file "
                       r"\(expected a JSON object with format 'ratings\.judge_quality/2'"):
        load_judge_quality(path)


def test_judge_quality_wrong_scope(tmp_path, scoped, capsys):
    path = judge_file(tmp_path / "jq.json", "s1", {"j1": 0.9, "j2": 0.8})
    with pytest.raises(ValueError, match=r"The judge-quality file '.*jq\.json' was fitted on "
                       r"scope 's1', not 's2'"):  # fmt: skip
        ratings.fit(scoped, scope="s2", model="crowd-bt", judge_quality=path)
    err = run_cli(["fit", scoped, "--scope", "s2", "--model", "crowd-bt", "--judge-quality",
                   path, "--out", tmp_path / "r.csv"], capsys, tmp_path)  # fmt: skip
    assert "fitted on scope 's1', not 's2'" in err


def test_judge_quality_eta_out_of_range(tmp_path, scoped, capsys):
    path = judge_file(tmp_path / "jq.json", "s1", {"j1": 1.3, "j2": 0.8})
    with pytest.raises(ValueError, match=re.escape("eta must lie in [0.5, 1]; got {'j1': 1.3}")):
        ratings.fit(scoped, scope="s1", model="crowd-bt", judge_quality=path)
    err = run_cli(["fit", scoped, "--scope", "s1", "--model", "crowd-bt", "--judge-quality",
                   path, "--out", tmp_path / "r.csv"], capsys, tmp_path)  # fmt: skip
    assert "{'j1': 1.3}" in err


def test_judge_quality_unknown_judge(tmp_path, scoped, capsys):
    path = judge_file(tmp_path / "jq.json", "s1", {"j1": 0.9})
    with pytest.raises(ValueError, match=r"Judge\(s\) \['j2'\] have no eta in the judge-quality "
                       r"source \(it has \['j1'\]\).*fit_new_judges"):  # fmt: skip
        ratings.fit(scoped, scope="s1", model="crowd-bt", judge_quality=path)
    err = run_cli(["fit", scoped, "--scope", "s1", "--model", "crowd-bt", "--judge-quality",
                   path, "--out", tmp_path / "r.csv"], capsys, tmp_path)  # fmt: skip
    assert "['j2']" in err and "--fit-new-judges" in err


# ----------------------------------------------------------------------------------------------
# Registries
# ----------------------------------------------------------------------------------------------


def test_registry_corrupt_missing_columns(tmp_path, ratings_csv, capsys):
    path = write(tmp_path / "registry.csv", "model,elo\nx,1500\n")
    with pytest.raises(InvalidVerdictsError, match=r"Registry '.*registry\.csv' is corrupt: "
                       r"column\(s\) \['lower', 'upper', 'index', 'frozen_on', 'source'\] "
                       r"missing"):  # fmt: skip
        load_registry(path)
    err = run_cli(["freeze", ratings_csv, "--registry", path], capsys, tmp_path)
    assert "registry.csv' is corrupt" in err and "left unchanged" in err


def test_registry_unparseable(tmp_path):
    path = write(tmp_path / "registry.csv", REGISTRY_HEADER + '"x,1500,,,0.5,2026-01-01,\n')
    with pytest.raises(InvalidVerdictsError, match=r"Registry '.*registry\.csv' is corrupt: it "
                       r"cannot be read as CSV"):  # fmt: skip
        load_registry(path)


def test_registry_duplicate_model(tmp_path, ratings_csv, capsys):
    path = write(tmp_path / "registry.csv", REGISTRY_HEADER
                 + "x,1500,,,0.5,2026-01-01,\ny,1000,,,0.25,2026-01-01,\nx,1600,,,0.55,"
                 "2026-01-02,\n")  # fmt: skip
    with pytest.raises(InvalidVerdictsError, match=r"Registry '.*registry\.csv' is corrupt: 2 "
                       r"row\(s\) unusable: 2 with duplicate model \(e\.g\. \['x'\] at rows "
                       r"\[0, 2\]\)"):  # fmt: skip
        load_registry(path)
    table = pd.read_csv(ratings_csv)
    with pytest.raises(InvalidVerdictsError, match="duplicate model"):
        freeze(table, path, date="2026-02-01")
    err = run_cli(["freeze", ratings_csv, "--registry", path], capsys, tmp_path)
    assert "duplicate model (e.g. ['x'] at rows [0, 2])" in err


def test_registry_index_inconsistent_with_elo(tmp_path):
    path = write(tmp_path / "registry.csv", REGISTRY_HEADER + "x,1500,,,0.7,2026-01-01,\n")
    with pytest.raises(InvalidVerdictsError, match=re.escape(
            "1 with index inconsistent with elo: (elo, index) must satisfy index = clip((elo - "
            "500) / 2000, 0, 1) (e.g. [('1500', '0.7')] at rows [0])")):  # fmt: skip
        load_registry(path)


def test_registry_bad_frozen_on_date(tmp_path):
    path = write(tmp_path / "registry.csv", REGISTRY_HEADER + "x,1500,,,0.5,01/02/2026,\n")
    with pytest.raises(InvalidVerdictsError, match=r"1 with frozen_on is not a YYYY-MM-DD date "
                       r"\(e\.g\. \['01/02/2026'\] at rows \[0\]\)"):  # fmt: skip
        load_registry(path)


def test_freeze_ratings_table_with_duplicate_model(tmp_path):
    table = pd.DataFrame({"model": ["x", "y", "x"], "elo": [1500.0, 1000.0, 1600.0]})
    with pytest.raises(InvalidVerdictsError, match=r"The ratings table: 2 row\(s\) unusable: 2 "
                       r"with duplicate model \(e\.g\. \['x'\] at rows \[0, 2\]\)"):
        freeze(table, tmp_path / "registry.csv", date="2026-02-01")
    assert not (tmp_path / "registry.csv").exists()


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
        pytest.skip("`ratings next` is not wired into ratings/cli.py yet")
    assert code == 0


# ----------------------------------------------------------------------------------------------
# Command-line arguments
# ----------------------------------------------------------------------------------------------


def test_cli_output_path_equal_to_input(tmp_path, good, capsys):
    err = run_cli(["fit", good, "--out", good], capsys, tmp_path)
    assert re.search(r"Refusing to write '.*good\.csv': it is an input file", err), err


def test_cli_bad_anchor_syntax(tmp_path, good, capsys):
    err = run_cli(["fit", good, "--anchor", "x=abc", "--out", tmp_path / "r.csv"], capsys,
                  tmp_path)  # fmt: skip
    assert "`anchor` must look like 'NAME=RATING'" in err and "got 'x=abc'" in err


def test_cli_level_out_of_range(tmp_path, good, capsys):
    err = run_cli(["fit", good, "--level", "1.5", "--out", tmp_path / "r.csv"], capsys, tmp_path)
    assert "`level` must be a float strictly between 0 and 1; got 1.5" in err


def test_cli_unknown_ci(tmp_path, good, capsys):
    err = run_cli(["fit", good, "--ci", "wald", "--out", tmp_path / "r.csv"], capsys, tmp_path)
    assert "argument --ci: invalid choice: 'wald'" in err


def test_cli_out_with_unsupported_extension(tmp_path, good, capsys):
    err = run_cli(["fit", good, "--out", tmp_path / "r.txt"], capsys, tmp_path)
    assert re.search(r"`--out` must end in \.csv or \.json; got '.*r\.txt'", err), err


def test_cli_plot_output_gif(tmp_path, ratings_csv, capsys):
    err = run_cli(["plot", ratings_csv, "-o", tmp_path / "bands.gif"], capsys, tmp_path)
    assert re.search(r"Cannot save a figure to '.*bands\.gif': the extension must be one of "
                     r"\.png, \.svg, \.pdf; got '\.gif'", err), err  # fmt: skip


def test_cli_bad_columns_mapping(tmp_path, good, capsys):
    err = run_cli(["fit", good, "--columns", "left", "--out", tmp_path / "r.csv"], capsys,
                  tmp_path)  # fmt: skip
    assert "`--columns` must look like 'old=new,old2=new2'; got 'left'" in err


def test_cli_bad_winner_map(tmp_path, good, capsys):
    err = run_cli(["fit", good, "--winner-map", "draw=D", "--out", tmp_path / "r.csv"], capsys,
                  tmp_path)  # fmt: skip
    assert "`winner_map` values must be 'A', 'B' or 'tie'; got 'draw': 'D'" in err


def test_cli_judges_out_without_crowd_bt(tmp_path, good, capsys):
    err = run_cli(["fit", good, "--judges-out", tmp_path / "j.json"], capsys, tmp_path)
    assert "`--judges-out` needs `--model crowd-bt`" in err


def test_cli_negative_penalty(tmp_path, good, capsys):
    err = run_cli(["fit", good, "--penalty", "-1", "--out", tmp_path / "r.csv"], capsys, tmp_path)
    assert "`penalty` must be a finite float >= 0; got -1.0" in err


def test_cli_freeze_bad_date(tmp_path, ratings_csv, capsys):
    err = run_cli(["freeze", ratings_csv, "--registry", tmp_path / "registry.csv", "--date",
                   "2026-13-01"], capsys, tmp_path)  # fmt: skip
    assert "`date` must be an ISO date 'YYYY-MM-DD'; got '2026-13-01'" in err


def test_cli_freeze_refreeze_unknown_model(tmp_path, ratings_csv, capsys):
    err = run_cli(["freeze", ratings_csv, "--registry", tmp_path / "registry.csv", "--refreeze",
                   "w"], capsys, tmp_path)  # fmt: skip
    assert "`refreeze` names ['w'], not in the ratings table" in err


def test_cli_rubric_output_equal_to_input(tmp_path, capsys):
    path = write(tmp_path / "rubric.csv", "task_id,model,check_id,passed\nt1,x,c1,1\nt1,y,c1,0\n")
    err = run_cli(["rubric", path, "--out", path], capsys, tmp_path)
    assert re.search(r"Refusing to write '.*rubric\.csv': it is an input file", err), err
