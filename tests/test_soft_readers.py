"""Soft outcomes read where the log lies (DuckDB, Dask) against the soft MLE's closed form: on a
one-baseline board each model's win probability against the baseline is the mean of its scores
against it, and its per-verdict (HC0) standard error is sqrt(sum (y - p)^2) / (n p (1 - p)) on the
log-odds scale. Without ``soft=True`` (``--soft``) a fractional winner is refused, naming it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ratings
from ratings.cli import main
from ratings.core.errors import InvalidVerdictsError

duckdb = pytest.importorskip("duckdb")
dd = pytest.importorskip("dask.dataframe")


@pytest.fixture(scope="module")
def baseline_log() -> pd.DataFrame:
    """Six models each meeting only ``base``, with graded scores and some exact 0, 1/2, 1,
    written as text (as a CSV or Parquet string column holds them)."""
    rng = np.random.default_rng(11)
    rows = []
    for k in range(6):
        y = rng.beta(2 + k, 3, 40 + 10 * k)
        exact = rng.random(y.size) < 0.25
        y[exact] = rng.choice([0.0, 0.5, 1.0], exact.sum())
        swap = rng.random(y.size) < 0.5  # the baseline in either slot
        rows.append(pd.DataFrame({
            "model_a": np.where(swap, "base", f"m{k}"), "model_b": np.where(swap, f"m{k}", "base"),
            "winner": [f"{v:.6g}" for v in np.where(swap, 1 - y, y)],
            "task_id": rng.integers(0, 15, y.size).astype(str)}))  # fmt: skip
    return pd.concat(rows, ignore_index=True)


def _closed_form(log: pd.DataFrame) -> pd.DataFrame:
    """Per model: the mean score against the baseline and the HC0 SE of its log-odds."""
    out = {}
    for k in range(6):
        name = f"m{k}"
        mine = log[(log["model_a"] == name) | (log["model_b"] == name)]
        y = mine["winner"].astype(float).to_numpy()
        y = np.where(mine["model_a"] == name, y, 1 - y)
        p = y.mean()
        out[name] = (p, np.sqrt(np.sum((y - p) ** 2)) / (y.size * p * (1 - p)))
    return pd.DataFrame(out, index=["p", "se"]).T


def _check(r, log: pd.DataFrame) -> None:
    ref = _closed_form(log)
    for name, (p, se) in ref.iterrows():
        got = r.win_probability(name, "base")["probability"]
        assert got == pytest.approx(p, abs=1e-8)
        assert r.to_frame().set_index("model").loc[name, "se"] == pytest.approx(
            ratings.Ratings.scale * se, rel=1e-7)  # fmt: skip


def _readers(log: pd.DataFrame):
    from ratings.data.dask import aggregate_counts
    from ratings.data.sql import aggregate_counts_sql

    yield "dask", lambda **kw: aggregate_counts(dd.from_pandas(log, npartitions=3), **kw)
    yield "duckdb", lambda **kw: aggregate_counts_sql(duckdb.from_df(log), **kw)


@pytest.mark.parametrize("reader", ["dask", "duckdb"])
def test_reader_soft_counts_fit_the_closed_form(baseline_log, reader):
    count = dict(_readers(baseline_log))[reader]
    table = count(soft=True)
    assert {"graded", "graded_score", "graded_square"} <= set(table.columns)
    n_graded = (~baseline_log["winner"].isin(["0", "0.5", "1"])).sum()
    assert table["graded"].sum() == n_graded
    r = ratings.fit(table.drop(columns="task_id"), model=ratings.BT(soft=True), anchor="base")
    _check(r, baseline_log)
    c = r.counts.loc["m3"]  # the counts say what was read
    mine = baseline_log[(baseline_log["model_a"] == "m3") | (baseline_log["model_b"] == "m3")]
    assert c["n_matches"] == len(mine)
    assert c["graded"] == (~mine["winner"].isin(["0", "0.5", "1"])).sum()


@pytest.mark.parametrize("reader", ["dask", "duckdb"])
def test_reader_refuses_fractional_winner_naming_soft(baseline_log, reader):
    count = dict(_readers(baseline_log))[reader]
    with pytest.raises(InvalidVerdictsError, match=r"fractional winner score.*`soft=True`"):
        count()
    table = count(soft=True)  # read with scores, fitted without the option: refused too
    with pytest.raises(InvalidVerdictsError, match=r"fractional winner score.*`soft=True`"):
        ratings.fit(table)


@pytest.mark.parametrize("reader", ["dask", "duckdb"])
def test_reader_soft_scores_of_0_1_and_half_equal_plain_counts(baseline_log, reader):
    """Whole scores only: the soft table's fit is today's fit of the same verdicts (the plain
    reader's table, whose counts are the verdicts' own)."""
    whole = baseline_log[baseline_log["winner"].isin(["0", "0.5", "1"])].reset_index(drop=True)
    count = dict(_readers(whole))[reader]
    soft = ratings.fit(count(soft=True), model=ratings.BT(soft=True))
    plain = ratings.fit(count())
    np.testing.assert_allclose(soft.elo, plain.elo, atol=1e-8)
    np.testing.assert_allclose(soft.cov, plain.cov, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("reader", [["--engine", "duckdb"], ["--dask", "local"]],
                         ids=["duckdb", "dask"])  # fmt: skip
def test_cli_reader_soft(baseline_log, tmp_path, capsys, reader):
    path = tmp_path / "graded.parquet"
    baseline_log.to_parquet(path, index=False)
    cmd = ["fit", str(path), *reader, "--no-cluster", "--anchor", "base"]
    assert main(cmd) != 0
    err = capsys.readouterr().err
    assert "fractional winner score" in err and "`--soft`" in err
    out = tmp_path / "soft.csv"
    assert main([*cmd, "--soft", "--out", str(out)]) == 0
    table = pd.read_csv(out).set_index("model")
    ref = _closed_form(baseline_log)
    elo = 1000 + ratings.Ratings.scale * np.log(ref["p"] / (1 - ref["p"]))
    np.testing.assert_allclose(table.loc[ref.index, "elo"], elo, atol=1e-6)
    np.testing.assert_allclose(table.loc[ref.index, "se"], ratings.Ratings.scale * ref["se"],
                               rtol=1e-6)  # fmt: skip
