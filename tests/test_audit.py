"""The judge audit: report columns and flags, agreement against statsmodels' Cohen's kappa, board
agreement against a direct count, the self-judging warning, the CLI, and the simulator's
planted judge effects."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from statsmodels.stats.inter_rater import cohens_kappa

import ratings
from ratings.audit.judge_audit import AuditWarning
from ratings.cli.app import main
from ratings.datasets.simulate import random_matches, simulate_verdicts

FAMILIES = {"m0": "red", "m1": "red", "m2": "blue", "m3": "blue", "J1": "red", "J2": "blue"}
MODELS = [f"m{i}" for i in range(8)]


@pytest.fixture(scope="module")
def log() -> pd.DataFrame:
    matches = random_matches(MODELS, 4000, n_tasks=100, judges=["J1", "J2", "J3"], seed=4)
    strengths = pd.Series(np.linspace(-1, 1, 8), index=MODELS)
    return simulate_verdicts(matches, strengths, position_bias={"J1": 0.5},
                             self_preference={"J1": 0.8}, families=FAMILIES, tie_rate=0.2,
                             task_corr=0.3, seed=5)  # fmt: skip


@pytest.fixture(scope="module")
def report(log):
    return ratings.audit(log, families=FAMILIES, n_boot=200, seed=1)


def test_report_columns_and_flags(report):
    j = report.judges.set_index("judge")
    for col in ("n", "position_bias", "position_lower", "position_upper", "self_preference",
                "self_lower", "self_upper", "position_bias_elo", "self_preference_elo",
                "position_p", "self_p", "flag", "board_agreement", "self_judged"):  # fmt: skip
        assert col in j.columns
    assert j.loc["J1", "position_lower"] < 0.5 < j.loc["J1", "position_upper"]
    assert j.loc["J1", "self_lower"] < 0.8 < j.loc["J1", "self_upper"]
    assert "favours slot A" in j.loc["J1", "flag"]
    assert "favours its own family 'red'" in j.loc["J1", "flag"]
    assert j.loc["J1", "position_bias_elo"] == pytest.approx(
        j.loc["J1", "position_bias"] * 400 / np.log(10))
    assert "self-preference not estimable: no family given" in j.loc["J3", "flag"]
    assert np.isnan(j.loc["J3", "self_p"])
    assert j["n"].sum() == 4000
    text = report.summary()
    assert "J1: favours slot A" in text and "Agreement on shared" in text


def test_audit_ratings_are_the_adjusted_fit(log, report):
    adj = ratings.fit(log, adjust=ratings.Adjust("position,self-preference", families=FAMILIES))
    np.testing.assert_allclose(report.ratings.strength, adj.strength, atol=1e-10)


def _canonical(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per verdict: item (task, sorted pair) and the category seen from the pair's
    first model: 0 first wins, 1 second wins, 2 tie."""
    first = np.where(frame["model_a"] < frame["model_b"], frame["model_a"], frame["model_b"])
    second = np.where(frame["model_a"] < frame["model_b"], frame["model_b"], frame["model_a"])
    a_first = frame["model_a"].to_numpy() == first
    cat = np.select([frame["winner"] == "tie", (frame["winner"] == "A") == a_first], [2, 0], 1)
    return pd.DataFrame({"item": frame["task_id"] + "|" + first + "|" + second,
                         "judge": frame["judge"], "cat": cat})  # fmt: skip


def test_agreement_and_kappa_match_statsmodels():
    """One verdict per judge per item: p_o is the share of equal verdicts and kappa is Cohen's
    kappa of the symmetrised 3 x 3 table (statsmodels' ``cohens_kappa``)."""
    rng = np.random.default_rng(0)
    matches = random_matches(MODELS, 600, n_tasks=150, seed=3)
    both = pd.concat([matches.assign(judge="J1"), matches.assign(judge="J2")], ignore_index=True)
    swap = rng.random(len(both)) < 0.5  # each judge sees its own A/B order
    both.loc[swap, ["model_a", "model_b"]] = both.loc[swap, ["model_b", "model_a"]].to_numpy()
    both = both.drop_duplicates(["task_id", "model_a", "model_b", "judge"])
    log = simulate_verdicts(both, pd.Series(np.linspace(-1, 1, 8), index=MODELS),
                            tie_rate=0.3, seed=2, judge_eta={"J1": 0.9, "J2": 0.75})  # fmt: skip
    cat = _canonical(log)
    once = cat[~cat.duplicated(["item", "judge"], keep=False)]
    wide = once.pivot(index="item", columns="judge", values="cat").dropna()
    log = log[_canonical(log)["item"].isin(wide.index)]  # items judged once by each judge
    table = pd.crosstab(wide["J1"], wide["J2"]).reindex(index=[0, 1, 2], columns=[0, 1, 2],
                                                          fill_value=0).to_numpy(float)
    sym = (table + table[[1, 0, 2]][:, [1, 0, 2]]) / 2
    a = ratings.audit(log, n_boot=300, seed=0)
    row = a.agreement.iloc[0]
    assert row["n_items"] == len(wide)
    assert row["agreement"] == pytest.approx(np.trace(table) / table.sum(), abs=1e-12)
    assert row["kappa"] == pytest.approx(cohens_kappa(sym)["kappa"], abs=1e-12)
    assert row["agreement_lower"] < row["agreement"] < row["agreement_upper"]
    assert row["kappa_lower"] < row["kappa"] < row["kappa_upper"]
    again = ratings.audit(log, n_boot=300, seed=0).agreement
    pd.testing.assert_frame_equal(a.agreement, again)  # seeded


def test_board_agreement_is_the_share_naming_the_favourite(log, report):
    s = pd.Series(report.ratings.strength, index=report.ratings.models)
    fav_a = s.reindex(log["model_a"]).to_numpy() > s.reindex(log["model_b"]).to_numpy()
    score = np.where(log["winner"] == "tie", 0.5, (log["winner"] == "A") == fav_a)
    want = pd.Series(score, index=log.index).groupby(log["judge"]).mean()
    got = report.judges.set_index("judge")["board_agreement"]
    np.testing.assert_allclose(got.loc[want.index], want, rtol=1e-12)
    j = report.judges
    assert (j["board_lower"] < j["board_agreement"]).all()
    assert (j["board_agreement"] < j["board_upper"]).all()


def test_a_judge_that_judged_itself_is_warned(log):
    frame = log.copy()
    frame.loc[frame.index[:60], "judge"] = "m3"
    mine = frame.iloc[:60]
    n_self = int(((mine["model_a"] == "m3") | (mine["model_b"] == "m3")).sum())
    with pytest.warns(AuditWarning, match=rf"'m3' is also a rated model and judged {n_self} "):
        a = ratings.audit(frame, families=FAMILIES, n_boot=50)
    assert a.judges.set_index("judge").loc["m3", "self_judged"] == n_self
    assert f"judged itself in {n_self} verdict(s)" in a.judges.set_index("judge").loc["m3", "flag"]


def test_crowd_bt_audit_reports_eta(log):
    a = ratings.audit(log, families=FAMILIES, model="crowd-bt", n_boot=50)
    j = a.judges
    assert {"eta", "eta_lower", "eta_upper"} <= set(j.columns)
    assert ((j["eta"] >= 0.5) & (j["eta"] <= 1.0)).all()


def test_without_task_column_there_are_no_agreement_items(log):
    a = ratings.audit(log.drop(columns="task_id"), families=FAMILIES, n_boot=50)
    assert a.agreement.empty and a.ratings.cluster is None
    assert np.isfinite(a.judges["board_lower"]).all()


def test_cli_audit_writes_csv_and_json(log, tmp_path, capsys):
    path = tmp_path / "v.csv"
    log.to_csv(path, index=False)
    fam = tmp_path / "families.csv"
    pd.DataFrame({"name": list(FAMILIES), "family": list(FAMILIES.values())}).to_csv(fam,
                                                                                      index=False)
    assert main(["audit", str(path), "--families", str(fam), "--n-boot", "50"]) == 0
    assert "J1: favours slot A" in capsys.readouterr().out
    out = tmp_path / "audit.csv"
    assert main(["audit", str(path), "--families", str(fam), "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert list(table["judge"]) == ["J1", "J2", "J3"]
    out_json = tmp_path / "audit.json"
    assert main(["audit", str(path), "--families", str(fam), "--out", str(out_json),
                 "--n-boot", "50"]) == 0  # fmt: skip
    doc = json.loads(out_json.read_text())
    assert {"judges", "agreement", "notes", "n_clusters"} <= set(doc)
    before = fam.read_text()
    assert main(["audit", str(path), "--families", str(fam), "--out", str(fam)]) == 2
    assert "input file" in capsys.readouterr().err and fam.read_text() == before
    assert main(["audit", str(path), "--out", str(tmp_path / "a.txt")]) == 2
    assert "as .csv or .json" in capsys.readouterr().err


def test_cli_fit_adjust_and_by_scope(log, tmp_path, capsys):
    two = pd.concat([log.assign(scope="s1"), log.assign(scope="s2")], ignore_index=True)
    path = tmp_path / "v.csv"
    two.to_csv(path, index=False)
    fam = tmp_path / "families.csv"
    pd.DataFrame({"name": list(FAMILIES), "family": list(FAMILIES.values())}).to_csv(fam,
                                                                                      index=False)
    assert main(["fit", str(path), "--scope", "s1", "--adjust", "self-preference",
                 "--families", str(fam)]) == 0  # fmt: skip
    assert "Adjusted for judge effects: self-preference" in capsys.readouterr().out
    out = tmp_path / "scopes.csv"
    assert (
        main(
            [
                "fit",
                str(path),
                "--by",
                "scope",
                "--model",
                "bt",
                "--adjust",
                "position,self-preference",
                "--families",
                str(fam),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    table = pd.read_csv(out)
    want = ratings.fit(
        log, adjust=ratings.Adjust("position,self-preference", families=FAMILIES)
    ).to_frame()
    got = table[table["scope"] == "s1"].reset_index(drop=True)
    np.testing.assert_allclose(got["elo"], want["elo"], atol=1e-6)
    assert main(["combine", str(path), "--model", "bt", "--adjust", "position",
                 "--out", str(tmp_path / "board.csv")]) == 0  # fmt: skip
    assert main(["fit", str(path), "--scope", "s1", "--adjust", "self-preference"]) == 2
    assert "`--families`" in capsys.readouterr().err


def test_simulator_plants_position_bias_and_self_preference():
    n = 40_000
    matches = random_matches(["a", "b"], n, n_tasks=10, judges=["J1", "J2"], seed=1)
    v = simulate_verdicts(matches, {"a": 0.0, "b": 0.0}, position_bias={"J1": 1.0},
                          self_preference={"J2": 0.7}, families={"a": "F", "J2": "F"},
                          seed=2)  # fmt: skip
    j1 = v[v["judge"] == "J1"]
    assert (j1["winner"] == "A").mean() == pytest.approx(expit(1.0), abs=0.015)
    j2 = v[v["judge"] == "J2"]
    a_won = np.where(j2["model_a"] == "a", j2["winner"] == "A", j2["winner"] == "B")
    assert a_won.mean() == pytest.approx(expit(0.7), abs=0.015)
    with pytest.raises(ValueError, match="needs `families`"):
        simulate_verdicts(matches, {"a": 0.0, "b": 0.0}, self_preference=0.5)


def test_plot_audit_draws_effects_with_intervals(report, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from ratings.plot.bands import plot_audit, save_figure

    ax = plot_audit(report, title="audit")
    gids = {a.get_gid() for a in ax.get_children()}
    assert {"audit-bands-position_bias", "audit-flagged-self_preference", "audit-zero",
            "audit-na-self_preference"} <= gids  # fmt: skip
    j1 = report.judges.set_index("judge").loc["J1"]
    flagged = next(a for a in ax.get_lines() if a.get_gid() == "audit-flagged-self_preference")
    np.testing.assert_allclose(flagged.get_xdata(), [j1["self_preference_elo"]])
    assert ax.get_yticklabels()[0].get_text().startswith("J1 (n=")
    assert ax.get_xlabel() == "effect in Elo points"
    save_figure(ax, tmp_path / "audit.png")
    ax2 = plot_audit(report.judges, unit="log-odds")
    assert ax2.get_xlabel() == "effect in log-odds"
    with pytest.raises(ValueError, match=r"\['self_upper'\] not found in the audit's judges"):
        plot_audit(report.judges.drop(columns="self_upper"))
    with pytest.raises(TypeError, match="Audit or its judges DataFrame"):
        plot_audit([1, 2])
    import matplotlib.pyplot as plt

    plt.close("all")


def test_ratings_audit_is_the_function_however_the_package_was_imported():
    """``ratings.audit`` (exported on first use, beside the package of that name) is the
    function whether the package's modules were imported first or not, in a fresh process."""
    import subprocess
    import sys

    code = """
import ratings, sys
assert "ratings.audit" not in sys.modules  # nothing of the audit imported by ``import ratings``
import ratings.audit.agreement  # binds the package as ``ratings.audit``, but for the export
from ratings import audit
from ratings.audit import judge_audit
assert ratings.audit is audit is judge_audit.audit and callable(ratings.audit)
assert ratings.Audit is judge_audit.Audit
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.stdout.strip() == "ok", done.stderr
