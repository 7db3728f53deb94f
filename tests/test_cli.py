"""End-to-end tests of the ``ratings`` command line (in-process, through ``main``)."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from ratings.cli.app import main
from ratings.datasets.example import TRUE_ELO, example_path


@pytest.fixture
def log_csv(tmp_path):
    """A small connected board with tasks, written as CSV."""
    rng = np.random.default_rng(7)
    models = ["m0", "m1", "m2", "m3", "m4"]
    n = 600
    a = rng.integers(0, 5, n)
    b = (a + rng.integers(1, 5, n)) % 5
    s = np.array([0.0, 0.3, -0.2, 0.8, -0.6])
    p = 1 / (1 + np.exp(-(s[a] - s[b])))
    u = rng.random(n)
    winner = np.where(u < p - 0.05, "A", np.where(u < p + 0.05, "tie", "B"))
    frame = pd.DataFrame({"task_id": rng.integers(0, 30, n).astype(str),
                          "model_a": np.array(models)[a], "model_b": np.array(models)[b],
                          "winner": winner})  # fmt: skip
    path = tmp_path / "verdicts.csv"
    frame.to_csv(path, index=False)
    return path


def test_fit_prints_table_with_anchor(log_csv, capsys):
    assert main(["fit", str(log_csv), "--anchor", "m0=1600"]) == 0
    out = capsys.readouterr().out
    assert "clustered by 'task_id' (30 clusters)" in out
    assert "1600.0" in out


def test_fit_writes_csv_with_required_columns(log_csv, tmp_path):
    out = tmp_path / "r.csv"
    assert main(["fit", str(log_csv), "--anchor", "m0=1600", "--out", str(out)]) == 0
    table = pd.read_csv(out)
    required = ["model", "elo", "se", "lower", "upper", "rank", "n_matches", "wins", "losses",
                "ties"]  # fmt: skip
    assert set(required) <= set(table.columns)
    anchor = table.set_index("model").loc["m0"]
    assert anchor["elo"] == pytest.approx(1600) and anchor["se"] == 0
    assert table["n_matches"].sum() == 2 * 600
    assert (table["lower"] <= table["elo"]).all() and (table["elo"] <= table["upper"]).all()


def test_fit_writes_json_with_metadata(log_csv, tmp_path):
    out = tmp_path / "r.json"
    assert main(["fit", str(log_csv), "--no-cluster", "--ci", "model", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["ci"] == "model" and doc["cluster"] is None and doc["n_verdicts"] == 600
    assert np.mean([row["elo"] for row in doc["ratings"]]) == pytest.approx(1000)


def test_no_cluster_and_cluster_differ(log_csv, tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    main(["fit", str(log_csv), "--no-cluster", "--out", str(a)])
    main(["fit", str(log_csv), "--out", str(b)])
    ra, rb = pd.read_csv(a), pd.read_csv(b)
    np.testing.assert_allclose(ra["elo"], rb["elo"])
    assert not np.allclose(ra["se"], rb["se"])


def test_bad_rows_exit_2_and_name_rows(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("model_a,model_b,winner\nx,y,A\ny,z,draw\nz,x,A\nx,z,B\n")
    assert main(["fit", str(path)]) == 2
    err = capsys.readouterr().err
    assert "draw" in err and "lines [3]" in err and "header being line 1" in err


@pytest.mark.parametrize("threads", ["1", "2"])
def test_the_log_is_read_beside_the_fits_imports(monkeypatch, tmp_path, capsys, threads,
                                                 log_csv):  # fmt: skip
    """``ratings fit`` reads the log on the package's pool while it imports the fit's modules
    (one thread: in this one): a bad row's error is raised as it is read in place, its
    message spelling the command's flags (``--winner-map``, ``--rejected``), and a good log
    fits as usual."""
    import threading

    import ratings.cli.commands.fit as fit_command

    monkeypatch.setenv("RATINGS_NUM_THREADS", threads)
    where = []
    real = fit_command.read_for_fit
    monkeypatch.setattr(fit_command, "read_for_fit", lambda args: where.append(
        threading.current_thread().name) or real(args))  # fmt: skip
    path = tmp_path / "bad.csv"
    path.write_text("model_a,model_b,winner\nx,y,A\ny,z,draw\nz,x,A\nx,z,B\n")
    assert main(["fit", str(path)]) == 2
    err = capsys.readouterr().err
    assert "lines [3]" in err and "`--winner-map`" in err and "`--rejected FILE`" in err
    assert "winner_map=" not in err and "errors=" not in err  # not the Python arguments
    assert main(["fit", str(log_csv)]) == 0
    assert "600 verdicts" in capsys.readouterr().out
    assert len(where) == 2 and all(w.startswith("ratings_") == (threads == "2") for w in where)


#: Modules a fresh Bradley-Terry ``ratings fit`` never imports, and the fit's modules it imports
#: only once the log is being read (beside the read, on the pool).
NEVER_IMPORTED = ("ratings.audit", "ratings.audit.judge_audit", "ratings.audit.agreement")
IMPORTED_BESIDE_THE_READ = ("ratings.result", "ratings.inference", "ratings.core.tdist",
                            "ratings.models.covariates", "ratings.models.judge_effects")

_FRESH_FIT = """
import json, sys
import ratings.cli.commands.fit as fit_command
from ratings.cli.app import main
seen, real = {}, fit_command.read_for_fit
def read(args):
    seen["read"] = sorted(sys.modules)
    return real(args)
fit_command.read_for_fit = read
code = main(["fit", sys.argv[1], "--out", sys.argv[2], "-q"])
print(json.dumps({"code": code, "read": seen["read"], "end": sorted(sys.modules)}))
"""


def test_a_fresh_fit_imports_no_audit_and_the_fits_modules_beside_the_read(tmp_path, log_csv):
    """In a fresh process, ``ratings fit`` (``import ratings``, the flags, the fit's options)
    reaches the read of the log without the fit's modules (the result, the inference below it,
    the design fit's), imports them while the log is read, and never imports the judge audit."""
    import subprocess
    import sys

    out = tmp_path / "out.csv"
    done = subprocess.run([sys.executable, "-c", _FRESH_FIT, str(log_csv), str(out)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["code"] == 0 and len(pd.read_csv(out)) == 5
    assert [m for m in NEVER_IMPORTED if m in seen["end"]] == []
    assert [m for m in IMPORTED_BESIDE_THE_READ if m in seen["read"]] == []
    assert [m for m in IMPORTED_BESIDE_THE_READ if m not in seen["end"]] == []


def test_rejected_file_fits_good_rows(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("model_a,model_b,winner\nx,y,A\ny,z,draw\nz,x,A\nx,z,B\ny,x,A\ny,z,A\n")
    rej = tmp_path / "rejected.csv"
    assert main(["fit", str(path), "--rejected", str(rej)]) == 0
    rejected = pd.read_csv(rej)
    assert rejected["row"].tolist() == [1]
    assert "winner" in rejected["reason"].iloc[0]
    assert "5 verdicts" in capsys.readouterr().out


def test_output_equal_to_input_is_refused(log_csv, capsys):
    before = log_csv.read_bytes()
    assert main(["fit", str(log_csv), "--out", str(log_csv)]) == 2
    assert "input" in capsys.readouterr().err
    assert log_csv.read_bytes() == before


def test_missing_anchor_lists_close_matches(log_csv, capsys):
    assert main(["fit", str(log_csv), "--anchor", "m9=1000"]) == 2
    assert "Did you mean" in capsys.readouterr().err


def test_never_lost_exit_2(tmp_path, capsys):
    path = tmp_path / "v.csv"
    path.write_text("model_a,model_b,winner\nx,y,A\ny,z,A\nz,y,A\nx,z,A\n")
    assert main(["fit", str(path)]) == 2
    err = capsys.readouterr().err
    assert "never lost" in err and "'x'" in err


def test_penalty_makes_never_lost_finite(tmp_path, capsys):
    path = tmp_path / "v.csv"
    path.write_text("model_a,model_b,winner\nx,y,A\ny,z,A\nz,y,A\nx,z,A\n")
    assert main(["fit", str(path), "--penalty", "0.5", "--no-cluster"]) == 0
    out, err = capsys.readouterr()
    assert re.search(r"ratings: warning: .*only because of the penalty \(\['x'\]", err), err
    assert "ridge penalty 0.5" in out
    assert "Not estimable without the penalty (open intervals, no rank interval): x" in out
    assert re.search(r"\n\s*x\s+[\d.]+\s+inf\s+[\d.]+\s+inf\s+1\s+<NA>\s+<NA>", out), out


def test_several_scopes_need_scope(tmp_path, capsys):
    assert main(["fit", str(example_path())]) == 2
    assert "--scope" in capsys.readouterr().err
    assert main(["fit", str(example_path()), "--scope", "analytical",
                 "--anchor", "GPT-5.5 (medium)=1000"]) == 0  # fmt: skip


def test_demo_shows_every_scope_and_the_headline(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "simulated" in out
    for title in ("Crowd-BT, scope 'analytical'", "Crowd-BT, scope 'presentation'",
                  "Bradley-Terry, scope 'rubric'", "combined headline"):  # fmt: skip
        assert title in out
    assert out.count("GPT-5.5 (medium) 1000.0") >= 4


def test_example_is_reproducible_from_seed():
    from ratings.datasets.example import generate_example

    shipped = pd.read_csv(example_path(), dtype=str, keep_default_na=False)
    regenerated = generate_example().astype(str)
    pd.testing.assert_frame_equal(shipped, regenerated)
    assert set(shipped["model_a"]) | set(shipped["model_b"]) == set(TRUE_ELO)
    assert 0.07 < (shipped["winner"] == "tie").mean() < 0.13


def test_example_rubric_is_reproducible_from_seed():
    from ratings.datasets.example import generate_rubric

    shipped = pd.read_csv(example_path("rubric.csv"), dtype=str, keep_default_na=False)
    pd.testing.assert_frame_equal(shipped, generate_rubric().astype(str))


def test_plot_command_writes_png(log_csv, tmp_path):
    table, image = tmp_path / "r.csv", tmp_path / "bands.png"
    assert main(["fit", str(log_csv), "--anchor", "m0=1600", "--out", str(table)]) == 0
    assert main(["plot", str(table), "-o", str(image), "--highlight", "m3"]) == 0
    assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["plot", str(table), "-o", str(tmp_path / "bands.gif")]) == 2


def test_by_scope_and_combine_tables(tmp_path):
    out, comb = tmp_path / "s.csv", tmp_path / "c.csv"
    args = ["--model", "bt", "--anchor", "GPT-5.5 (medium)=1000"]
    assert main(["fit", str(example_path()), "--by", "scope", *args, "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert sorted(table["scope"].unique()) == ["analytical", "presentation"]
    assert main(["combine", str(example_path()), *args, "--out", str(comb)]) == 0
    both = pd.read_csv(comb)
    head = both[both["scope"] == "combined"].set_index("model")
    parts = table.pivot(index="model", columns="scope", values="elo")
    np.testing.assert_allclose(head["elo"], parts.mean(axis=1).reindex(head.index))
    assert head["se_independent"].notna().all()


def test_rank_intervals_in_tables_and_pairs_file(log_csv, tmp_path, capsys):
    out, pairs = tmp_path / "r.csv", tmp_path / "pairs.csv"
    assert main(["fit", str(log_csv), "--anchor", "m0=1000", "--out", str(out),
                 "--pairs", str(pairs)]) == 0  # fmt: skip
    assert "wrote 10 pairs" in capsys.readouterr().err
    table = pd.read_csv(out)
    assert {"rank_lower", "rank_upper", "df"} <= set(table.columns)
    assert (table["rank_lower"] <= table["rank"]).all()
    assert (table["rank"] <= table["rank_upper"]).all()
    got = pd.read_csv(pairs)
    assert list(got.columns[:4]) == ["model_a", "model_b", "elo_diff", "se"]
    assert {"p_win", "p_adjusted", "df"} <= set(got.columns) and len(got) == 10
    assert (got["p_adjusted"] >= got["p_value"] - 1e-12).all()
    as_json = tmp_path / "pairs.json"
    assert main(["fit", str(log_csv), "--pairs", str(as_json)]) == 0
    assert len(json.loads(as_json.read_text())) == 10
    # printed: the rank columns and who is statistically tied with the leader
    assert main(["fit", str(log_csv), "--anchor", "m0=1000"]) == 0
    text = capsys.readouterr().out
    assert "rank_lower  rank_upper" in text and "leader m3, statistically tied with it: m1" in text
    assert main(["fit", str(log_csv), "--pairs", str(tmp_path / "p.txt")]) == 2
    assert "`--pairs" in (err := capsys.readouterr().err) and "chosen by the suffix" in err
    assert main(["fit", str(log_csv), "--pairs", str(log_csv)]) == 2
    assert "refusing to overwrite the input file" in capsys.readouterr().err
