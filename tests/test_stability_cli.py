"""The publish, place, drift cycle and fragility on the command line (``ratings fit --cov``,
``place``, ``drift``, ``fragility``, ``freeze``, ``report --old --fragility``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import simulate_verdicts

import ratings
from ratings.cli.app import main
from ratings.stability.board import read_board

ANCHOR = "m00=1000"


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    d = tmp_path_factory.mktemp("cycle")
    rng = np.random.default_rng(21)
    log = simulate_verdicts(rng, [0.0, 0.4, -0.3, 0.8, -0.6, 0.2, 0.5], 1400, 100,
                            tie_fraction=0.08, task_sd=0.3)
    log["judge"] = np.where(np.arange(len(log)) % 2, "j1", "j2")
    new = log["model_a"].isin(["m05", "m06"]) | log["model_b"].isin(["m05", "m06"])
    log[~new].to_csv(d / "published.csv", index=False)
    log[new].to_csv(d / "new.csv", index=False)
    log.to_csv(d / "all.csv", index=False)
    return d, log, new


def test_publish_place_drift(logs, capsys):
    d, log, new = logs
    assert main(["fit", str(d / "published.csv"), "--anchor", ANCHOR, "--out",
                 str(d / "board.csv"), "--cov"]) == 0
    assert (d / "board.cov.csv").exists()
    assert main(["place", str(d / "new.csv"), "--reference", str(d / "board.csv"), "--out",
                 str(d / "placed.csv")]) == 0
    board = pd.read_csv(d / "board.csv").set_index("model")
    placed = pd.read_csv(d / "placed.csv").set_index("model")
    assert (placed.loc[board.index, "elo"] - board["elo"]).abs().max() == 0.0
    assert set(placed.index[placed["placed"]]) == {"m05", "m06"}
    assert placed["reference_cov"].all()
    ref = ratings.fit(log[~new], anchor=ANCHOR)
    expected = ratings.place(log[new], reference=ref)
    np.testing.assert_allclose(placed.loc[["m05", "m06"], "elo"],
                               expected.elo[["m05", "m06"]], atol=1e-8)
    np.testing.assert_allclose(placed.loc[["m05", "m06"], "se"],
                               expected.se[["m05", "m06"]], rtol=1e-6)
    assert main(["drift", str(d / "board.csv"), str(d / "placed.csv"), "--out",
                 str(d / "drift.csv"), "--plot", str(d / "drift.png")]) == 0
    drift = pd.read_csv(d / "drift.csv")
    assert sorted(drift.loc[drift["status"] == "new", "model"]) == ["m05", "m06"]
    assert drift.loc[drift["status"] == "kept", "change"].abs().max() == 0.0
    assert (d / "drift.png").stat().st_size > 5_000


def test_place_without_the_covariance_file_says_so(logs, capsys, tmp_path):
    d, _, _ = logs
    main(["fit", str(d / "published.csv"), "--anchor", ANCHOR, "--out", str(tmp_path / "b.csv")])
    assert main(["place", str(d / "new.csv"), "--reference", str(tmp_path / "b.csv"),
                 "--out", str(tmp_path / "p.csv")]) == 0
    assert "ignore the reference's own uncertainty" in capsys.readouterr().err
    assert not pd.read_csv(tmp_path / "p.csv")["reference_cov"].any()
    assert read_board(tmp_path / "b.csv").cov is None


def test_cov_needs_out(logs, capsys):
    d, _, _ = logs
    assert main(["fit", str(d / "published.csv"), "--cov"]) == 2
    assert "`--cov`" in capsys.readouterr().err


def test_fragility_command_and_the_report_sections(logs, capsys, tmp_path):
    d, log, _ = logs
    out = tmp_path / "frag.csv"
    assert main(["fragility", str(d / "all.csv"), "--anchor", ANCHOR, "--out", str(out),
                 "--loo-out", str(tmp_path / "loo.csv")]) == 0
    frag = pd.read_csv(out)
    assert len(frag) == 6
    for row in frag[frag["confirmed"]].itertuples():
        rows = [int(x) for x in str(row.verdicts).split(";")]
        r = ratings.fit(log.drop(index=rows), anchor=ANCHOR, ci="model")
        assert r.elo[row.model_a] < r.elo[row.model_b]
    assert set(pd.read_csv(tmp_path / "loo.csv")["value"]) == {"j1", "j2"}
    page = tmp_path / "page.html"
    main(["fit", str(d / "published.csv"), "--anchor", ANCHOR, "--out", str(tmp_path / "b.csv"),
          "--cov"])
    assert main(["report", str(d / "all.csv"), "--anchor", ANCHOR, "--old",
                 str(tmp_path / "b.csv"), "--fragility", "-o", str(page)]) == 0
    html = page.read_text()
    assert 'id="drift"' in html and 'id="fragility"' in html
    assert html.count("<svg") >= 3


def test_freeze_names_a_frozen_model_moved_beyond_its_interval(logs, capsys, tmp_path):
    d, _, _ = logs
    main(["fit", str(d / "published.csv"), "--anchor", ANCHOR, "--out", str(tmp_path / "b.csv")])
    reg = tmp_path / "registry.csv"
    assert main(["freeze", str(tmp_path / "b.csv"), "--registry", str(reg), "--date",
                 "2026-01-01"]) == 0
    moved = pd.read_csv(tmp_path / "b.csv")
    moved.loc[moved["model"] == "m03", "elo"] += 500.0
    moved.to_csv(tmp_path / "moved.csv", index=False)
    capsys.readouterr()
    assert main(["freeze", str(tmp_path / "moved.csv"), "--registry", str(reg)]) == 0
    err = capsys.readouterr().err
    assert "moved beyond its frozen interval: m03" in err and "m01" not in err
