"""DuckDB's validation in SQL rejects the rows :func:`ratings.read_verdicts` rejects, for the
same reasons, and counts the rest as the in-memory path does."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ratings
from ratings.core.errors import DataWarning
from ratings.datasets.example import example_path

duckdb = pytest.importorskip("duckdb")
from ratings.data.sql import relation_of  # noqa: E402 - only with duckdb installed


@pytest.fixture(scope="module")
def full():
    v = pd.read_csv(example_path(), dtype=str)
    return v[v["scope"] == "analytical"].reset_index(drop=True).assign(failed_a="false",
                                                                        failed_b="")


@pytest.fixture(scope="module")
def log(full):
    return full.head(60)


def _rejected_by_duckdb(frame: pd.DataFrame, path) -> pd.DataFrame:
    frame.to_parquet(path, index=False)
    with pytest.raises(ratings.InvalidVerdictsError) as error:
        ratings.aggregate(relation_of(path))
    found = error.value.rows[["row", "reason"]].astype({"row": np.int64, "reason": object})
    return found.sort_values("row", ignore_index=True)


def _rejected_in_memory(frame: pd.DataFrame) -> pd.DataFrame:
    want = ratings.read_verdicts(frame, errors="report").rejected[["row", "reason"]]
    return want.astype({"row": np.int64, "reason": object}).sort_values("row", ignore_index=True)


# one row broken per rule, in read_verdicts' order of reasons
BROKEN = [
    ("missing model_a", {"model_a": " "}),
    ("missing model_b", {"model_b": "NA"}),
    ("model_a equals model_b", {"model_b": "@model_a"}),
    ("missing winner", {"winner": None}),
    ("unknown winner value", {"winner": "draw"}),
    ("winner names a model not in this match", {"winner": "@other"}),
    ("failed_a is not boolean-like", {"failed_a": "maybe"}),
    ("failed_b is not boolean-like", {"failed_b": "2"}),
    ("missing task_id", {"task_id": ""}),
    ("missing judge", {"judge": "null"}),
    ("missing scope", {"scope": None}),
]


def _break(v: pd.DataFrame, row: int, change: dict) -> None:
    for column, value in change.items():
        if value == "@model_a":
            value = v.loc[row, "model_a"]
        elif value == "@other":  # a model of the log that plays in neither side of this row
            names = set(v["model_a"]) - {v.loc[row, "model_a"], v.loc[row, "model_b"]}
            value = sorted(names)[0]
        v.loc[row, column] = value


@pytest.mark.parametrize(("reason", "change"), BROKEN, ids=[r for r, _ in BROKEN])
def test_each_rule_rejects_as_read_verdicts(log, tmp_path, reason, change):
    v = log.copy()
    _break(v, 7, change)
    want = _rejected_in_memory(v)
    assert want["reason"].tolist() == [reason]  # the rule this case is about
    pd.testing.assert_frame_equal(_rejected_by_duckdb(v, tmp_path / "log.parquet"), want)


@pytest.mark.parametrize("enum_most", [20_000, 0])  # text grouped by position, or by value
def test_all_rules_at_once_named_as_read_verdicts(log, tmp_path, enum_most, monkeypatch):
    import ratings.data.sql as sql

    monkeypatch.setattr(sql, "_ENUM_MOST", enum_most)
    v = log.copy()
    for row, (_, change) in enumerate(BROKEN, start=3):
        _break(v, 3 * row, change)
    v.loc[[40, 41], "failed_b"] = "true"  # forfeits with a winner that cannot be read
    v.loc[40, "winner"], v.loc[41, "winner"] = "draw", " "
    want = _rejected_in_memory(v)
    assert len(want) == len(BROKEN) + 1  # the forfeit fills in the empty winner only
    pd.testing.assert_frame_equal(_rejected_by_duckdb(v, tmp_path / "log.parquet"), want)


def test_ambiguous_winner_rejected_as_read_verdicts(log, tmp_path):
    v = log.copy()
    v.loc[5, "model_b"] = "A"  # "A" is a spelling of side A and the name of side B
    v.loc[5, "winner"] = "A"
    v.loc[9, "model_a"] = "B"  # "B" names side A: ambiguous too
    v.loc[9, "winner"] = "b"
    want = _rejected_in_memory(v)
    assert set(want["reason"]) == {"ambiguous winner: a winner spelling that is also a model "
                                   "name in this match"}  # fmt: skip
    pd.testing.assert_frame_equal(_rejected_by_duckdb(v, tmp_path / "log.parquet"), want)


@pytest.mark.parametrize(("enum_most", "case_most"), [(20_000, 64), (0, 64), (20_000, 0)])
def test_spellings_forfeits_and_mapped_columns_count_as_in_memory(
        full, tmp_path, enum_most, case_most, monkeypatch):  # fmt: skip
    import ratings.data.sql as sql

    monkeypatch.setattr(sql, "_ENUM_MOST", enum_most)  # text by position, or by value
    monkeypatch.setattr(sql, "_CASE_MOST", case_most)  # codes written in SQL, or a table
    v = full.copy()
    v.loc[::5, "winner"] = v.loc[::5, "winner"].map({"A": " 1", "B": "0.0", "tie": "0.5"})
    v.loc[1::5, "winner"] = v.loc[1::5, "winner"].map({"A": "model_a", "B": "B ", "tie": "Tie"})
    v.loc[2::5, "winner"] = v.loc[2::5, "winner"].replace("tie", "draw")  # mapped below
    a_won = v.index[(v["winner"] == "A") & (v.index % 5 == 3)]
    v.loc[a_won, "winner"] = v.loc[a_won, "model_a"]  # a winner written as its name
    v.loc[4::9, "failed_a"] = "yes"  # forfeits: some with a winner they contradict
    v.loc[4::18, "winner"] = ""
    v.loc[[0, 1], "model_a"] = " " + v.loc[[0, 1], "model_a"]  # blanks around a name
    renamed = v.rename(columns={"model_a": "left", "model_b": "right"})
    renamed.to_parquet(tmp_path / "log.parquet", index=False)
    columns, winner_map = {"left": "model_a", "right": "model_b"}, {"draw": "tie"}
    with pytest.warns(DataWarning, match="failure flags contradict") as caught:
        memory = ratings.read_verdicts(v, winner_map=winner_map).verdicts
    from ratings.data.sql import aggregate_counts_sql

    with pytest.warns(DataWarning, match="failure flags contradict") as duck_caught:
        counts = aggregate_counts_sql(relation_of(tmp_path / "log.parquet"), columns=columns,
                                      winner_map=winner_map)  # fmt: skip
    n = str(caught[0].message).split(" ")[0]
    assert str(duck_caught[0].message).startswith(n + " verdict")  # as many rows named
    fitted = ratings.fit(counts, model="crowd-bt", anchor="GPT-5.5 (medium)")
    want = ratings.fit(memory, model="crowd-bt", anchor="GPT-5.5 (medium)")
    np.testing.assert_allclose(fitted.strength, want.strength, rtol=0, atol=1e-10)
    np.testing.assert_allclose(fitted.cov, want.cov, rtol=0, atol=1e-10)
    pd.testing.assert_frame_equal(fitted.counts, want.counts, check_dtype=False)


def test_numeric_task_ids_and_boolean_flags_count_as_in_memory(full, tmp_path):
    v = full.assign(task_id=full["task_id"].str.slice(5).astype(np.int64),
                    failed_a=np.arange(len(full)) % 41 == 0, failed_b=False)  # fmt: skip
    v.loc[v["failed_a"], "winner"] = None
    v.to_parquet(tmp_path / "log.parquet", index=False)
    want = ratings.fit(v, anchor="GPT-5.5 (medium)")
    fitted = ratings.fit(ratings.aggregate(relation_of(tmp_path / "log.parquet")),
                         anchor="GPT-5.5 (medium)")  # fmt: skip
    np.testing.assert_allclose(fitted.strength, want.strength, rtol=0, atol=1e-10)
    np.testing.assert_allclose(fitted.cov, want.cov, rtol=0, atol=1e-10)
    pd.testing.assert_frame_equal(fitted.counts, want.counts, check_dtype=False)


def test_look_alike_names_refused_as_read_verdicts(log, tmp_path):
    v = log.copy()
    v.loc[3, "model_a"] = "caf\u00e9"  # composed
    v.loc[8, "model_b"] = "cafe\u0301"  # decomposed: looks the same, another string
    with pytest.raises(ratings.InvalidVerdictsError, match="Unicode normalisation"):
        ratings.read_verdicts(v)
    v.to_parquet(tmp_path / "log.parquet", index=False)
    with pytest.raises(ratings.InvalidVerdictsError, match=r"distinct values.*Unicode norm"):
        ratings.aggregate(relation_of(tmp_path / "log.parquet"))


def test_rows_of_a_query_named_by_position_as_read_verdicts(log, tmp_path):
    v = log.copy()
    _break(v, 4, {"winner": "draw"})
    _break(v, 33, {"model_b": "@model_a"})
    want = _rejected_in_memory(v)
    v.to_parquet(tmp_path / "log.parquet", index=False)
    con = duckdb.connect()  # insertion order kept: positions are the file's rows
    relation = con.sql(f"SELECT * FROM read_parquet('{tmp_path / 'log.parquet'}')")
    with pytest.raises(ratings.InvalidVerdictsError, match=r"rows \[4\].*rows \[33\]") as error:
        ratings.aggregate(relation)
    found = error.value.rows[["row", "reason"]].astype({"row": np.int64, "reason": object})
    pd.testing.assert_frame_equal(found.sort_values("row", ignore_index=True), want)
