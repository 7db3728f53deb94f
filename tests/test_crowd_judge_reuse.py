"""Crowd-BT judge reuse through the command line: ``ratings judges`` writes a judge-quality
file, ``ratings fit --judge-quality`` reuses it (checked against the independent reference of
:mod:`crowd_reference` with those etas fixed), new judges need ``--fit-new-judges``, and files
of another scope, corrupt, missing or with bad etas are clear errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from crowd_reference import Reference, draw_board

import ratings
from ratings.cli.app import main


@pytest.fixture
def judge_files(tmp_path):
    """A past log (scopes s and t) to fit etas on, and new logs with known and unknown judges."""
    s = np.linspace(-1.0, 1.0, 6)
    past = draw_board(21, s, {"j1": 0.9, "j2": 0.7}, 6000, n_tasks=100, tie_rate=0.1)
    past["scope"] = "s"
    other = draw_board(22, s, {"j1": 0.6, "j2": 0.95}, 3000, n_tasks=100)
    other["scope"] = "t"
    new = draw_board(23, s, {"j1": 0.9, "j2": 0.7}, 2000, n_tasks=50)
    new["scope"] = "s"
    with_new = draw_board(24, s, {"j1": 0.9, "j2": 0.7, "j3": 0.8}, 3000, n_tasks=50)
    with_new["scope"] = "s"
    paths = {}
    for name, frame in (
        ("past", pd.concat([past, other], ignore_index=True)),
        ("new", new),
        ("with_new", with_new),
    ):
        paths[name] = tmp_path / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    paths["frames"] = {"past": past, "new": new, "with_new": with_new}
    return paths


def _judges_json(path, scope: str, out) -> dict:
    assert main(["judges", str(path), "--scope", scope, "--out", str(out)]) == 0
    return json.loads(out.read_text())


def test_judges_cli_writes_quality_file(judge_files, tmp_path, capsys):
    out = tmp_path / "judges.json"
    doc = _judges_json(judge_files["past"], "s", out)
    assert "wrote judge quality for 2 judge(s)" in capsys.readouterr().err
    assert doc["scope"] == "s" and doc["model"] == "crowd-bt" and doc["created"]
    pd.Timestamp(doc["created"])  # parseable ISO time
    rows = pd.DataFrame(doc["judges"]).set_index("judge")
    assert {"eta", "se", "n", "lower", "upper", "status"} <= set(rows.columns)
    assert sorted(rows.index) == ["j1", "j2"]
    assert rows["n"].sum() == 6000
    # The same numbers as the API fit of that scope (task-clustered by default).
    r = ratings.fit(judge_files["frames"]["past"], model="crowd-bt")
    np.testing.assert_allclose(
        rows.loc[["j1", "j2"], "eta"], r.judges.loc[["j1", "j2"], "eta"], rtol=1e-13
    )
    np.testing.assert_allclose(
        rows.loc[["j1", "j2"], "se"], r.judges.loc[["j1", "j2"], "se"], rtol=1e-13
    )


def test_fit_reuses_judge_quality(judge_files, tmp_path, capsys):
    qual = tmp_path / "judges.json"
    doc = _judges_json(judge_files["past"], "s", qual)
    eta = {row["judge"]: row["eta"] for row in doc["judges"]}
    jout = tmp_path / "used.json"
    args = [
        "fit",
        str(judge_files["new"]),
        "--model",
        "crowd-bt",
        "--judge-quality",
        str(qual),
        "--scope",
        "s",
        "--judges-out",
        str(jout),
    ]
    capsys.readouterr()
    assert main(args) == 0
    assert "Crowd-BT" in capsys.readouterr().out
    used = pd.DataFrame(json.loads(jout.read_text())).set_index("judge")
    assert (used["status"] == "reused").all()  # with their covariance carried
    # (--judges-out writes 10 decimals; the quality file itself keeps 15)
    np.testing.assert_allclose(used.loc[list(eta), "eta"], list(eta.values()), atol=1e-10)
    se = {row["judge"]: row["se"] for row in doc["judges"]}
    np.testing.assert_allclose(used.loc[list(se), "se"], list(se.values()), atol=1e-10)
    # The API with the file uses exactly the file's etas; the strengths are the reference's
    # with eta fixed, and equal to passing the same etas as a mapping (treated as known, so
    # the intervals are narrower than with the file's covariance).
    new = judge_files["frames"]["new"]
    r = ratings.fit(
        new,
        model=ratings.CrowdBT(judge_quality=str(qual), prior=None),
        scope="s",
        anchor="m00",
        cluster=None,
    )
    assert r.judges["eta"].to_dict() == eta
    z = Reference(new, fixed=eta).fit()
    np.testing.assert_allclose(r.strength[1:], z, atol=1e-6)
    same = ratings.fit(
        new, model=ratings.CrowdBT(judge_quality=eta, prior=None), anchor="m00", cluster=None
    )
    np.testing.assert_array_equal(same.strength, r.strength)
    assert (same.judges["status"] == "fixed").all()
    assert (np.diag(r.cov)[1:] > np.diag(same.cov)[1:]).all()


def test_unknown_judge_needs_fit_new_judges(judge_files, tmp_path, capsys):
    qual = tmp_path / "judges.json"
    doc = _judges_json(judge_files["past"], "s", qual)
    base = [
        "fit",
        str(judge_files["with_new"]),
        "--model",
        "crowd-bt",
        "--judge-quality",
        str(qual),
        "--scope",
        "s",
    ]
    capsys.readouterr()
    assert main(base) == 2
    err = capsys.readouterr().err
    assert "j3" in err and "--fit-new-judges" in err
    jout = tmp_path / "used.json"
    assert main([*base, "--fit-new-judges", "--judges-out", str(jout), "--prior", "none"]) == 0
    used = pd.DataFrame(json.loads(jout.read_text())).set_index("judge")
    assert used.loc["j3", "status"] == "estimated" and np.isfinite(used.loc["j3", "se"])
    assert (used.loc[["j1", "j2"], "status"] == "reused").all()
    fixed = {row["judge"]: row["eta"] for row in doc["judges"]}
    np.testing.assert_allclose(used.loc[["j1", "j2"], "eta"], [fixed["j1"], fixed["j2"]])
    z = Reference(judge_files["frames"]["with_new"], fixed=fixed).fit()
    assert used.loc["j3", "eta"] == pytest.approx(z[-1], abs=1e-6)


def test_quality_file_of_another_scope_is_refused(judge_files, tmp_path, capsys):
    qual = tmp_path / "judges_t.json"
    _judges_json(judge_files["past"], "t", qual)
    capsys.readouterr()
    args = [
        "fit",
        str(judge_files["new"]),
        "--model",
        "crowd-bt",
        "--judge-quality",
        str(qual),
        "--scope",
        "s",
    ]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "'t'" in err and "'s'" in err and "scope" in err
    with pytest.raises(ValueError, match="fitted on scope 't'"):
        ratings.fit(
            judge_files["frames"]["new"], model=ratings.CrowdBT(judge_quality=str(qual)), scope="s"
        )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"format": "ratings.judge_quality/1", "judges": [', "Cannot read judge-quality file"),
        ("\x00\xff garbage", "Cannot read judge-quality file"),
        ('{"judges": []}', "is not a judge-quality file"),
        ("[1, 2, 3]", "is not a judge-quality file"),
        (
            '{"format": "ratings.judge_quality/1", "scope": "s", "judges": [{"eta": 0.9}]}',
            "needs 'judge' and 'eta'",
        ),
        (
            '{"format": "ratings.judge_quality/1", "scope": "s", "judges": '
            '[{"judge": "j1", "eta": 1.5}, {"judge": "j2", "eta": 0.7}]}',
            "must lie in [0.5, 1]",
        ),
    ],
)
def test_corrupt_quality_file_is_a_clear_error(judge_files, tmp_path, capsys, text, message):
    qual = tmp_path / "judges.json"
    qual.write_text(text, encoding="latin-1")
    args = [
        "fit",
        str(judge_files["new"]),
        "--model",
        "crowd-bt",
        "--judge-quality",
        str(qual),
        "--scope",
        "s",
    ]
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("ratings: error:") and message in err
    assert "Traceback" not in err


def test_missing_quality_file_is_a_clear_error(judge_files, tmp_path, capsys):
    args = [
        "fit",
        str(judge_files["new"]),
        "--model",
        "crowd-bt",
        "--judge-quality",
        str(tmp_path / "nope.json"),
        "--scope",
        "s",
    ]
    assert main(args) == 2
    assert "nope.json" in capsys.readouterr().err


def test_quality_file_of_another_scope_is_refused_without_scope_flag(judge_files, tmp_path, capsys):
    """Without --scope, the log's single scope is what the file is checked against."""
    qual = tmp_path / "judges_t.json"
    _judges_json(judge_files["past"], "t", qual)
    capsys.readouterr()
    args = ["fit", str(judge_files["new"]), "--model", "crowd-bt", "--judge-quality", str(qual)]
    assert main(args) == 2  # new.csv holds scope 's' only
    err = capsys.readouterr().err
    assert "scope 't'" in err and "'s'" in err


def test_non_numeric_eta_is_an_error(judge_files, tmp_path, capsys):
    qual = tmp_path / "judges.json"
    doc = {
        "format": "ratings.judge_quality/1",
        "scope": "s",
        "judges": [{"judge": "j1", "eta": "abc"}, {"judge": "j2", "eta": 0.7}],
    }
    qual.write_text(json.dumps(doc))
    args = ["fit", str(judge_files["new"]), "--model", "crowd-bt", "--judge-quality", str(qual)]
    assert main([*args, "--scope", "s"]) == 2
    assert "abc" in capsys.readouterr().err


def test_non_scalar_eta_is_a_clear_error(judge_files, tmp_path, capsys):
    qual = tmp_path / "judges.json"
    doc = {
        "format": "ratings.judge_quality/1",
        "scope": "s",
        "judges": [{"judge": "j1", "eta": {"x": 1}}, {"judge": "j2", "eta": 0.7}],
    }
    qual.write_text(json.dumps(doc))
    args = ["fit", str(judge_files["new"]), "--model", "crowd-bt", "--judge-quality", str(qual)]
    assert main([*args, "--scope", "s"]) == 2
    err = capsys.readouterr().err
    assert "'j1'" in err and "must be a number in [0.5, 1]" in err
