"""The Dask reduction equals the in-memory path; pre-aggregated counts are accepted as input."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import ratings
from ratings.data.comparisons import from_counts
from ratings.datasets.example import example_path

dd = pytest.importorskip("dask.dataframe")


@pytest.fixture(scope="module")
def log():
    v = pd.read_csv(example_path(), dtype=str)
    v = v[v["scope"] == "analytical"].reset_index(drop=True)
    v.loc[::97, "failed_b"] = "true"  # a few render forfeits: the flags decide, no winner
    v.loc[::97, "winner"] = ""
    return v


def _same(a, b):
    """Equal fits: strengths, covariance and the per-model counts (the table's intervals follow
    from these and the clusters, compared by the callers)."""
    assert a.models.equals(b.models)
    np.testing.assert_allclose(a.strength, b.strength, rtol=0, atol=1e-10)
    np.testing.assert_allclose(a.cov, b.cov, rtol=0, atol=1e-10)
    pd.testing.assert_frame_equal(a.counts, b.counts, check_dtype=False)
    assert a.uncertainty.n_clusters == b.uncertainty.n_clusters


@pytest.fixture(scope="module")
def cluster():
    """A real multi-process LocalCluster (2 worker processes), or a clean skip without one."""
    distributed = pytest.importorskip("distributed")
    import dask

    try:
        with dask.config.set({"distributed.comm.timeouts.connect": "30s"}):
            local = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                             dashboard_address=":0", silence_logs=50)
    except Exception as error:  # no processes, ports or spawn here: nothing to test
        pytest.skip(f"a multi-process LocalCluster cannot start here: {error!r}")
    with local, distributed.Client(local) as client:
        yield client


@pytest.fixture(scope="module")
def dask_data(log, cluster):
    assert len(cluster.scheduler_info()["workers"]) == 2
    return ratings.aggregate(dd.from_pandas(log, npartitions=5))


@pytest.mark.parametrize("model", ["bt", "crowd-bt"])
def test_dask_path_equals_in_memory_on_a_multiprocess_cluster(log, dask_data, model):
    data = dask_data
    memory = ratings.fit(log, model=model, anchor="GPT-5.5 (medium)")
    dask_fit = ratings.fit(data, model=model, anchor="GPT-5.5 (medium)")
    _same(memory, dask_fit)
    assert data.n_clusters == memory.n_clusters
    if model == "crowd-bt":
        pd.testing.assert_frame_equal(memory.judges.sort_index(), dask_fit.judges.sort_index(),
                                      rtol=0, atol=1e-10)  # fmt: skip


def test_dask_categorical_keys_and_empty_partitions_alike(log, cluster):
    categorical = log.astype({c: "category" for c in ("model_a", "model_b", "winner", "task_id",
                                                       "judge")})  # fmt: skip
    ddf = dd.from_pandas(categorical, npartitions=4)
    start = ddf.divisions[2]  # the first two partitions are left empty
    after = lambda part: part[part.index >= start]  # noqa: E731 - shipped to the workers
    data = ratings.aggregate(ddf.map_partitions(after))
    memory = ratings.fit(log.iloc[start:], anchor="GPT-5.5 (medium)")
    _same(memory, ratings.fit(data, anchor="GPT-5.5 (medium)"))


def test_dask_bad_rows_named_by_partition_and_row(log, cluster):
    bad = log.copy()
    last = len(bad) - 3
    bad.loc[[5, last], "winner"] = "draw"
    bad.loc[9, "model_b"] = bad.loc[9, "model_a"]
    ddf = dd.from_pandas(bad, npartitions=4)
    k = int(np.searchsorted(ddf.divisions[1:-1], last, side="right"))  # dask's own split
    pattern = (rf"^3 verdict row\(s\) rejected: unknown winner value \(partition 0 rows \[5\]; "
               rf"partition {k} rows \[{last - ddf.divisions[k]}\], e.g. winner='draw'\); "
               r"model_a equals model_b \(partition 0 rows \[9\]")
    with pytest.raises(ratings.InvalidVerdictsError, match=pattern) as error:
        ratings.aggregate(ddf)
    assert error.value.rows[["partition", "row"]].values.tolist() == [
        [0, 5], [0, 9], [k, last - ddf.divisions[k]]]


def test_counts_table_and_file_equal_verdicts(log, tmp_path):
    v = ratings.read_verdicts(log).verdicts
    forfeit = v["failed_b"].to_numpy()
    counts = pd.DataFrame({
        "task_id": v["task_id"], "model_a": v["model_a"], "model_b": v["model_b"],
        "judge": np.where(forfeit, "deterministic", v["judge"]),
        "wins_a": ((v["winner"] == "A") | forfeit).astype(int),
        "wins_b": ((v["winner"] == "B") & ~forfeit).astype(int),
        "ties": ((v["winner"] == "tie") & ~forfeit).astype(int),
        "forfeits": forfeit.astype(int),
    }).groupby(["task_id", "judge", "model_a", "model_b"], as_index=False).sum()  # fmt: skip
    assert counts["forfeits"].sum() > 0
    memory = ratings.fit(log, anchor="GPT-5.5 (medium)")
    _same(memory, ratings.fit(counts, anchor="GPT-5.5 (medium)"))
    path = tmp_path / "counts.csv"
    counts.to_csv(path, index=False)
    _same(memory, ratings.fit(str(path), anchor="GPT-5.5 (medium)"))


def test_counts_pairs_in_either_order_are_merged():
    counts = pd.DataFrame({"model_a": ["x", "y", "y", "z"], "model_b": ["y", "x", "z", "x"],
                           "wins_a": [3, 1, 2, 2], "wins_b": [1, 0, 1, 1], "ties": [0, 1, 0, 1]})
    data = from_counts(counts)
    xy = (data.ii == 0) & (data.jj == 1)
    assert (data.wi[xy], data.wj[xy], data.tt[xy]) == (np.array([3.0]), np.array([2.0]),
                                                      np.array([1.0]))  # fmt: skip


def test_counts_must_be_finite_and_non_negative():
    counts = pd.DataFrame({"model_a": ["x", "y"], "model_b": ["y", "x"],
                           "wins_a": [3, -1], "wins_b": [1, 0], "ties": [0, "a"]})
    with pytest.raises(ratings.InvalidVerdictsError, match=r"missing or not numbers: rows \[1\]"):
        from_counts(counts)


@pytest.mark.parametrize(("row", "what"), [
    ({"model_b": "y"}, "pit a model against itself"),
    ({"model_b": " "}, "have a missing model name"),
    ({"task_id": ""}, "have a missing task_id"),
])  # fmt: skip
def test_counts_bad_rows_are_named_once(tmp_path, row, what):
    counts = pd.DataFrame({"task_id": ["t1", "t1", "t2"], "model_a": ["x", "y", "x"],
                           "model_b": ["y", "z", "z"], "wins_a": [3, 1, 2],
                           "wins_b": [1, 2, 1], "ties": [1, 1, 0]})  # fmt: skip
    for column, value in row.items():
        counts.loc[1, column] = value
    path = tmp_path / "counts.parquet"
    counts.to_parquet(path, index=False)
    pattern = rf"^{re.escape(repr(str(path)))}: 1 row\(s\) of the counts table {what}.*: rows \[1\]"
    with pytest.raises(ratings.InvalidVerdictsError, match=pattern):
        ratings.fit(str(path))


def test_duckdb_relation_equals_in_memory(log, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    from ratings.data.sql import relation_of

    for k, part in enumerate(np.array_split(np.arange(len(log)), 3)):
        log.iloc[part].to_parquet(tmp_path / f"part-{k}.parquet", index=False)
    memory = ratings.fit(log, anchor="GPT-5.5 (medium)")
    relation = duckdb.sql(f"SELECT * FROM read_parquet('{tmp_path}/*.parquet')")
    _same(memory, ratings.fit(ratings.aggregate(relation), anchor="GPT-5.5 (medium)"))
    _same(memory, ratings.fit(ratings.aggregate(relation_of(tmp_path / "*.parquet")),
                              anchor="GPT-5.5 (medium)"))  # fmt: skip


def test_duckdb_bad_rows_named_by_file_and_row(log, tmp_path):
    pytest.importorskip("duckdb")
    from ratings.data.sql import relation_of

    bad = log.copy()
    bad.loc[[5, 9], "winner"] = "draw"
    bad.loc[12, "model_b"] = bad.loc[12, "model_a"]
    bad.iloc[:10].to_parquet(tmp_path / "a.parquet", index=False)
    bad.iloc[10:].to_parquet(tmp_path / "b.parquet", index=False)
    pattern = (r"3 verdict.*unknown winner value \(a.parquet rows \[5, 9\]\); "
               r"model_a equals model_b \(b.parquet rows \[2\]\)")
    with pytest.raises(ratings.InvalidVerdictsError, match=pattern):
        ratings.aggregate(relation_of(tmp_path / "*.parquet"))


def test_cli_engine_duckdb_equals_in_memory(log, tmp_path):
    pytest.importorskip("duckdb")
    from ratings.cli.app import main

    log.to_parquet(tmp_path / "log.parquet", index=False)
    for engine, out in (("pandas", "mem.csv"), ("duckdb", "duck.csv")):
        assert main(["fit", str(tmp_path / "log.parquet"), "--engine", engine,
                     "--out", str(tmp_path / out)]) == 0  # fmt: skip
    a, b = (pd.read_csv(tmp_path / f) for f in ("mem.csv", "duck.csv"))
    pd.testing.assert_frame_equal(a, b, rtol=0, atol=1e-10)
