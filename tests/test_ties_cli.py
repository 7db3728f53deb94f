"""The tie models and soft outcomes from the command line: ``ratings fit --ties KIND``,
``--soft``, and ``ratings ties LOG``, against the Python API's fits (themselves checked against
R and scipy in test_ties.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ratings
from ratings.cli import main

FOOTBALL = "tests/data/football_epl_2008_2013.csv"


@pytest.fixture
def season(tmp_path):
    games = pd.read_csv(FOOTBALL)
    games = games[games["season"] == "2008-9"]
    log = pd.DataFrame({"model_a": games["home"], "model_b": games["away"],
                        "winner": games["result"].map({1: "A", 0: "tie", -1: "B"}),
                        "task_id": np.arange(len(games)) % 38})
    path = tmp_path / "season.csv"
    log.to_csv(path, index=False)
    return log, path


@pytest.mark.parametrize("kind", ["davidson", "rao-kupper"])
def test_fit_ties_writes_the_tie_model_s_ratings(season, tmp_path, kind, capsys):
    log, path = season
    out = tmp_path / "out.csv"
    assert main(["fit", str(path), "--ties", kind, "--anchor", "Ars", "--out", str(out)]) == 0
    table = pd.read_csv(out).set_index("model")
    r = ratings.fit(log, model=ratings.BT(ties=kind), anchor="Ars")
    np.testing.assert_allclose(table.loc[r.models, "elo"], r.elo, atol=1e-8)
    np.testing.assert_allclose(table.loc[r.models, "upper"], r.to_frame()["upper"].loc[r.models],
                               atol=1e-8)
    assert set(table["method"]) == {kind}
    assert main(["fit", str(path), "--ties", kind]) == 0
    assert f"{'nu' if kind == 'davidson' else 'theta'} =" in capsys.readouterr().out


def test_fit_soft_and_its_refusal_name_the_flag(season, tmp_path, capsys):
    log, _ = season
    rng = np.random.default_rng(0)
    y = log["winner"].map({"A": 1.0, "B": 0.0, "tie": 0.5}) + rng.normal(0, 0.1, len(log))
    graded = log.assign(winner=y.clip(0, 1))
    path = tmp_path / "graded.csv"
    graded.to_csv(path, index=False)
    assert main(["fit", str(path)]) == 2
    err = capsys.readouterr().err
    assert "fractional winner score" in err and "`--soft`" in err and "soft=True" not in err
    out = tmp_path / "out.csv"
    assert main(["fit", str(path), "--soft", "--out", str(out)]) == 0
    table = pd.read_csv(out).set_index("model")
    r = ratings.fit(graded, model=ratings.BT(soft=True))
    np.testing.assert_allclose(table.loc[r.models, "elo"], r.elo, atol=1e-8)
    assert set(table["method"]) == {"bt-soft"}


def test_ties_subcommand_writes_the_comparison(season, tmp_path, capsys):
    log, path = season
    ranks, rates = tmp_path / "ranks.csv", tmp_path / "rates.csv"
    assert main(["ties", str(path), "--out", str(ranks), "--rates-out", str(rates)]) == 0
    printed = capsys.readouterr().out
    assert "AIC" in printed.upper() and "Tie rate by rating gap" in printed
    c = ratings.compare_ties(log)
    got = pd.read_csv(rates)
    np.testing.assert_allclose(got[["observed", "davidson", "rao-kupper"]],
                               c.tie_rates[["observed", "davidson", "rao-kupper"]], atol=1e-12)
    got = pd.read_csv(ranks).set_index("model")
    np.testing.assert_array_equal(got.loc[c.ranks.index, "rank_rao-kupper"],
                                  c.ranks["rank_rao-kupper"])


def test_ties_subcommand_refuses_a_log_without_ties(season, tmp_path, capsys):
    log, _ = season
    path = tmp_path / "decisive.csv"
    log[log["winner"] != "tie"].to_csv(path, index=False)
    assert main(["ties", str(path)]) == 2
    assert "no ties" in capsys.readouterr().err


def test_report_page_names_the_tie_model(season, tmp_path):
    _, path = season
    page = tmp_path / "report.html"
    assert main(["report", str(path), "--ties", "rao-kupper", "-o", str(page)]) == 0
    html = page.read_text()
    assert "Rao and Kupper" in html and "theta = " in html
