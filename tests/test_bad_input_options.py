"""Bad inputs beside a good verdict log: fitting choices the data cannot meet (a model that
never lost, a disconnected board, an unknown anchor, scope or cluster column), judge-quality
files, registries and command-line arguments; one test per kind, each checking that the error
says what is wrong and where.

Tests through the CLI also check the exit status (2 for data errors, 2 from argparse for bad
choices) and that nothing was written: the directory holds the same files, byte for byte.

Bad verdict logs, counts, rubric and submission tables are in ``test_bad_input_tables.py``;
every kind through the command line in ``test_bad_input_catalogue.py``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from bad_inputs import GOOD, REGISTRY_HEADER, SCOPED, judge_file, run_cli, write

import ratings
from ratings import InvalidVerdictsError, NonIdentifiableError
from ratings.cli.app import main
from ratings.models.crowd.quality import load_judge_quality
from ratings.scopes.registry import freeze, load_registry


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
                       r"Choose one with `scope`"):  # fmt: skip
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
        ratings.fit(scoped, scope="s2", model=ratings.CrowdBT(judge_quality=path))
    err = run_cli(["fit", scoped, "--scope", "s2", "--model", "crowd-bt", "--judge-quality",
                   path, "--out", tmp_path / "r.csv"], capsys, tmp_path)  # fmt: skip
    assert "fitted on scope 's1', not 's2'" in err


def test_judge_quality_eta_out_of_range(tmp_path, scoped, capsys):
    path = judge_file(tmp_path / "jq.json", "s1", {"j1": 1.3, "j2": 0.8})
    with pytest.raises(ValueError, match=re.escape("eta must lie in [0.5, 1]; got {'j1': 1.3}")):
        ratings.fit(scoped, scope="s1", model=ratings.CrowdBT(judge_quality=path))
    err = run_cli(["fit", scoped, "--scope", "s1", "--model", "crowd-bt", "--judge-quality",
                   path, "--out", tmp_path / "r.csv"], capsys, tmp_path)  # fmt: skip
    assert "{'j1': 1.3}" in err


def test_judge_quality_unknown_judge(tmp_path, scoped, capsys):
    path = judge_file(tmp_path / "jq.json", "s1", {"j1": 0.9})
    with pytest.raises(ValueError, match=r"Judge\(s\) \['j2'\] have no eta in the judge-quality "
                       r"source \(it has \['j1'\]\).*fit_new_judges"):  # fmt: skip
        ratings.fit(scoped, scope="s1", model=ratings.CrowdBT(judge_quality=path))
    err = run_cli(["fit", scoped, "--scope", "s1", "--model", "crowd-bt", "--judge-quality",
                   path, "--out", tmp_path / "r.csv"], capsys, tmp_path)  # fmt: skip
    assert "['j2']" in err and "--fit-new-judges" in err


# ----------------------------------------------------------------------------------------------
# Registries
# ----------------------------------------------------------------------------------------------


def test_registry_corrupt_missing_columns(tmp_path, ratings_csv, capsys):
    path = write(tmp_path / "registry.csv", "model,elo\nx,1500\n")
    with pytest.raises(InvalidVerdictsError, match=r"Registry '.*registry\.csv' is corrupt: "
                       r"Column\(s\) \['lower', 'upper', 'index', 'frozen_on', 'source'\] "
                       r"not found in the registry"):  # fmt: skip
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
# Command-line arguments
# ----------------------------------------------------------------------------------------------


def test_cli_output_path_equal_to_input(tmp_path, good, capsys):
    err = run_cli(["fit", good, "--out", good], capsys, tmp_path)
    assert re.search(r"refusing to overwrite the input file '.*good\.csv' \(VERDICTS\) with "
                     r"`--out`", err), err


def test_cli_bad_anchor_syntax(tmp_path, good, capsys):
    err = run_cli(["fit", good, "--anchor", "x=abc", "--out", tmp_path / "r.csv"], capsys,
                  tmp_path)  # fmt: skip
    assert "`--anchor` must look like 'NAME=RATING'" in err and "got 'x=abc'" in err


def test_cli_level_out_of_range(tmp_path, good, capsys):
    err = run_cli(["fit", good, "--level", "1.5", "--out", tmp_path / "r.csv"], capsys, tmp_path)
    assert "`--level` must be a float strictly between 0 and 1; got 1.5" in err


def test_cli_unknown_ci(tmp_path, good, capsys):
    err = run_cli(["fit", good, "--ci", "wald", "--out", tmp_path / "r.csv"], capsys, tmp_path)
    assert "argument --ci: invalid choice: 'wald'" in err


def test_cli_out_with_unsupported_extension(tmp_path, good, capsys):
    err = run_cli(["fit", good, "--out", tmp_path / "r.txt"], capsys, tmp_path)
    assert re.search(r"`--out .*r\.txt`: the format is chosen by the suffix: \.csv, \.tsv, "
                     r"\.json, \.jsonl, \.parquet", err), err


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
    assert "`--winner-map` values must be 'A', 'B' or 'tie'; got 'draw': 'D'" in err


def test_cli_judges_out_without_crowd_bt(tmp_path, good, capsys):
    err = run_cli(["fit", good, "--judges-out", tmp_path / "j.json"], capsys, tmp_path)
    assert "`--judges-out` needs `--model crowd-bt`" in err


def test_cli_negative_penalty(tmp_path, good, capsys):
    err = run_cli(["fit", good, "--penalty", "-1", "--out", tmp_path / "r.csv"], capsys, tmp_path)
    assert "`--penalty` must be a finite number >= 0 and <= 1e6; got -1.0" in err


def test_cli_freeze_bad_date(tmp_path, ratings_csv, capsys):
    err = run_cli(["freeze", ratings_csv, "--registry", tmp_path / "registry.csv", "--date",
                   "2026-13-01"], capsys, tmp_path)  # fmt: skip
    assert "`--date` must be an ISO date 'YYYY-MM-DD'; got '2026-13-01'" in err


def test_cli_freeze_refreeze_unknown_model(tmp_path, ratings_csv, capsys):
    err = run_cli(["freeze", ratings_csv, "--registry", tmp_path / "registry.csv", "--refreeze",
                   "w"], capsys, tmp_path)  # fmt: skip
    assert "`--refreeze` names ['w'], not in the ratings table" in err


def test_cli_rubric_output_equal_to_input(tmp_path, capsys):
    path = write(tmp_path / "rubric.csv", "task_id,model,check_id,passed\nt1,x,c1,1\nt1,y,c1,0\n")
    err = run_cli(["rubric", path, "--out", path], capsys, tmp_path)
    assert re.search(r"refusing to overwrite the input file '.*rubric\.csv' \(RUBRIC\)", err), err
