"""The pieces the large-log paths share: partial counts summed like pandas' group-by, DuckDB's
counts equal to the in-memory path's, the counts-table kernel and its twin, and counts tables
stored as doubles (a SQL ``SUM``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ratings
from ratings.data.grouped import PartialCounts, combine_partials, no_rejected, sum_keys
from ratings.datasets.example import example_path


@pytest.fixture(scope="module")
def log():
    v = pd.read_csv(example_path(), dtype=str)
    return v[v["scope"] == "analytical"].reset_index(drop=True)


def _partial(rng, n, cats):
    codes = {k: rng.integers(-1, len(c), n).astype(np.int32) for k, c in cats.items()}
    return PartialCounts(cats, codes, rng.integers(0, 5, (n, 4)).astype(np.int64),
                         no_rejected(), 0)  # fmt: skip


def _by_pandas(partials):
    """Sums per key by label, with pandas' own group-by (missing labels as their own key)."""
    frames = []
    for p in partials:
        f = pd.DataFrame({k: np.asarray(p.categories[k], dtype=object)[p.codes[k]]
                          for k in p.categories})  # fmt: skip
        for k in p.categories:
            f.loc[p.codes[k] < 0, k] = "<missing>"
        f[["wins_a", "wins_b", "ties", "forfeits"]] = p.counts
        frames.append(f)
    keys = list(partials[0].categories)
    return pd.concat(frames).groupby(keys).sum().sort_index()


@pytest.mark.parametrize("n_tasks", [7, 300_000])  # keys counted in place, and hashed
def test_combined_partials_sum_like_pandas_groupby(n_tasks):
    rng = np.random.default_rng(3)
    models = [f"m{i}" for i in range(6)]
    partials = [
        _partial(rng, 400, {"task_id": pd.Index([f"t{i}" for i in range(n_tasks)]),
                            "model_a": pd.Index(models[:4]), "model_b": pd.Index(models[2:])}),
        _partial(rng, 300, {"task_id": pd.Index([f"t{i}" for i in range(0, n_tasks, 2)]),
                            "model_a": pd.Index(models), "model_b": pd.Index(models[1:])}),
    ]  # fmt: skip
    total = combine_partials(partials)
    assert len(pd.DataFrame(total.codes).drop_duplicates()) == len(total.counts)  # summed
    got = _by_pandas([total])
    pd.testing.assert_frame_equal(got, _by_pandas(partials))
    sizes = {k: len(c) for k, c in total.categories.items()}
    codes, counts = sum_keys(total.categories, total.codes, total.counts)
    assert all(codes[k].max() < sizes[k] for k in sizes) and (counts == total.counts).all()


def test_duckdb_forfeits_and_judges_equal_in_memory(log, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    v = log.copy()
    v.loc[::50, "failed_a"] = "true"  # render forfeits: the flags decide, no winner
    v.loc[::50, "winner"] = ""
    v.to_parquet(tmp_path / "log.parquet", index=False)
    relation = duckdb.sql(f"SELECT * FROM read_parquet('{tmp_path / 'log.parquet'}')")
    for model in ("bt", "crowd-bt"):
        memory = ratings.fit(v, model=model, anchor="GPT-5.5 (medium)")
        duck = ratings.fit(ratings.aggregate(relation), model=model, anchor="GPT-5.5 (medium)")
        np.testing.assert_allclose(duck.strength, memory.strength, rtol=0, atol=1e-10)
        np.testing.assert_allclose(duck.cov, memory.cov, rtol=0, atol=1e-10)
        pd.testing.assert_frame_equal(duck.counts, memory.counts, check_dtype=False)


def test_duckdb_one_bad_row_is_named(log, tmp_path):
    pytest.importorskip("duckdb")
    import ratings.data.sql as sql

    v = log.head(30).copy()
    v.loc[7, "winner"] = "draw"
    v.to_parquet(tmp_path / "log.parquet", index=False)
    with pytest.raises(ratings.InvalidVerdictsError,
                       match=r"^1 verdict.*unknown winner value \(log.parquet rows \[7\]\)"):
        ratings.aggregate(sql.relation_of(tmp_path / "log.parquet"))


@pytest.mark.parametrize("dtype", ["int64", "float64", "object"])
def test_counts_stored_as_numbers_fit_alike(log, dtype):
    v = ratings.read_verdicts(log).verdicts
    counts = pd.DataFrame({
        "task_id": v["task_id"].astype(str), "model_a": v["model_a"].astype(str),
        "model_b": v["model_b"].astype(str),
        "wins_a": v["winner"] == "A", "wins_b": v["winner"] == "B", "ties": v["winner"] == "tie",
    }).groupby(["task_id", "model_a", "model_b"], as_index=False).sum()  # fmt: skip
    counts[["wins_a", "wins_b", "ties"]] = counts[["wins_a", "wins_b", "ties"]].astype(dtype)
    memory = ratings.fit(log.drop(columns="judge"), anchor="GPT-5.5 (medium)")
    fitted = ratings.fit(counts, anchor="GPT-5.5 (medium)")
    np.testing.assert_allclose(fitted.strength, memory.strength, rtol=0, atol=1e-10)
    np.testing.assert_allclose(fitted.cov, memory.cov, rtol=0, atol=1e-10)


@pytest.mark.parametrize(("value", "what"), [
    (0.5, "not whole numbers"), (-1.0, "negative"), (np.nan, "missing or not numbers"),
    (np.inf, "not finite"), (2.0**60, "exceed 2\\*\\*53"),
])  # fmt: skip
def test_float_counts_still_named_when_bad(value, what):
    counts = pd.DataFrame({"model_a": ["x", "y", "x"], "model_b": ["y", "z", "z"],
                           "wins_a": [3.0, 1.0, 2.0], "wins_b": [1.0, 2.0, 1.0],
                           "ties": [0.0, 1.0, 0.0]})  # fmt: skip
    counts.loc[2, "ties"] = value
    with pytest.raises(ratings.InvalidVerdictsError, match=rf"{what}.*rows \[2\]"):
        ratings.fit(counts)


@pytest.mark.parametrize(("seed", "threads"), [(0, "1"), (1, "3"), (2, "2")])
def test_count_rows_kernel_and_twin_sum_like_pandas(seed, threads, monkeypatch):
    from ratings.core import threads as _threads
    from ratings.kernels import fit as fast
    from ratings.kernels import fit_ref as slow

    monkeypatch.setenv("RATINGS_NUM_THREADS", threads)  # the rows split across 1-3 threads
    monkeypatch.setattr(_threads, "CONCURRENT_ROWS", 100)
    rng = np.random.default_rng(seed)
    n, m, nj, ng = 500, 6, 2, 7
    amap = rng.permutation(m + 2).astype(np.int64) - 2  # names 0..m+1; two name no model
    names = np.flatnonzero(amap >= 0)
    ca = rng.choice(names, n).astype(np.int8)
    a = amap[ca]
    b = (a + rng.integers(1, m, n)) % m  # never a == b; both orders of a pair occur
    bmap = np.arange(m, dtype=np.int64)
    cb = b.astype(np.int16)
    g, k = rng.integers(0, ng, n).astype(np.int16), rng.integers(0, nj, n).astype(np.int8)
    wa, wb, tt = rng.integers(0, 4, (3, n)).astype(float)
    swap = a > b
    want = pd.DataFrame({"cluster": g, "judge": k, "ii": np.minimum(a, b),
                         "jj": np.maximum(a, b), "wi": np.where(swap, wb, wa),
                         "wj": np.where(swap, wa, wb), "tt": tt}).groupby(
        ["cluster", "judge", "ii", "jj"], as_index=False).sum()  # fmt: skip
    args = (ca, cb, amap, bmap, k, g, wa, wb, tt, m, nj, ng)
    rows = []
    for kernels in (fast, slow):
        found = kernels.count_rows(*args)
        assert found.n_unusable == 0
        assert found.used.models.all() and found.used.clusters.all()
        got = pd.DataFrame(dict(zip(want.columns, found.rows, strict=True)))
        assert (np.diff(got["cluster"]) >= 0).all()  # rows grouped by cluster
        pd.testing.assert_frame_equal(got.sort_values(list(want.columns[:4]), ignore_index=True),
                                      want, check_dtype=False)  # fmt: skip
        rows.append(got)
    monkeypatch.setenv("RATINGS_NUM_THREADS", "1")  # on one thread: the same rows, same order
    pd.testing.assert_frame_equal(pd.DataFrame(dict(zip(want.columns, fast.count_rows(
        *args).rows, strict=True))), rows[0])  # fmt: skip
    bad = ca.copy()
    bad[[3, 9]] = np.flatnonzero(amap < 0)[0]  # a name of no model
    k2 = k.copy()
    k2[5] = -1  # a missing judge
    wb2, tt2 = wb.copy(), tt.copy()
    wb2[[11, 12]], tt2[13] = [0.5, np.nan], 2.0**54  # counts of no whole number of verdicts
    for kernels in (fast, slow):
        assert kernels.count_rows(bad, cb, amap, bmap, k2, g, wa, wb2, tt2, m, nj,
                                  ng).n_unusable == 6  # fmt: skip
    empty = np.zeros(0, dtype=np.int64)  # no judge or cluster column: every row in one key
    for kernels in (fast, slow):
        found = kernels.count_rows(ca, cb, amap, bmap, empty, empty, wa, wb, tt, m, 1, 1)
        assert found.rows.wi.sum() + found.rows.wj.sum() == wa.sum() + wb.sum()
        assert len(found.rows.ii) == len(want.groupby(["ii", "jj"]))


def test_counts_with_repeats_zero_rows_and_both_orders_equal_verdicts(log):
    v = ratings.read_verdicts(log).verdicts
    counts = pd.DataFrame({
        "task_id": v["task_id"].astype(str), "judge": v["judge"].astype(str),
        "model_a": v["model_a"].astype(str), "model_b": v["model_b"].astype(str),
        "wins_a": (v["winner"] == "A").astype(int), "wins_b": (v["winner"] == "B").astype(int),
        "ties": (v["winner"] == "tie").astype(int)})  # one row per verdict: keys repeat
    flip = counts.index % 3 == 0  # some rows name their pair the other way round
    counts.loc[flip, ["model_a", "model_b", "wins_a", "wins_b"]] = counts.loc[
        flip, ["model_b", "model_a", "wins_b", "wins_a"]].to_numpy()
    zero = counts.iloc[:5].assign(wins_a=0, wins_b=0, ties=0)  # checked, then no row
    counts = pd.concat([counts, zero], ignore_index=True)
    memory = ratings.fit(log, anchor="GPT-5.5 (medium)")
    fitted = ratings.fit(counts, anchor="GPT-5.5 (medium)")  # judges kept apart in the rows
    np.testing.assert_allclose(fitted.strength, memory.strength, rtol=0, atol=1e-10)
    np.testing.assert_allclose(fitted.cov, memory.cov, rtol=0, atol=1e-10)
    with pytest.raises(ratings.InvalidVerdictsError, match=r"against itself.*rows \[3\]"):
        ratings.fit(counts.assign(model_b=np.where(counts.index == 3, counts["model_a"],
                                                   counts["model_b"])))  # fmt: skip


def test_duckdb_canonical_and_other_winners_alike(log, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    v = log.copy()
    v.loc[::7, "winner"] = v.loc[::7, "winner"].map({"A": "model_a", "B": "b", "tie": "TIE"})
    v.loc[3::11, "winner"] = np.where(v.loc[3::11, "winner"] == "A", v.loc[3::11, "model_a"],
                                      v.loc[3::11, "winner"])  # a winner written as a name
    v.to_parquet(tmp_path / "log.parquet", index=False)
    relation = duckdb.sql(f"SELECT * FROM read_parquet('{tmp_path / 'log.parquet'}')")
    memory = ratings.fit(v, anchor="GPT-5.5 (medium)")
    duck = ratings.fit(ratings.aggregate(relation), anchor="GPT-5.5 (medium)")
    np.testing.assert_allclose(duck.strength, memory.strength, rtol=0, atol=1e-10)
    np.testing.assert_allclose(duck.cov, memory.cov, rtol=0, atol=1e-10)


def test_duckdb_self_match_named_whatever_its_winners(log, tmp_path):
    pytest.importorskip("duckdb")
    from ratings.data.sql import relation_of

    v = log.head(40).copy()
    v.loc[[4, 6], ["task_id", "model_b"]] = [v.loc[4, "task_id"], v.loc[4, "model_a"]]
    v.loc[[4, 6], "model_a"] = v.loc[4, "model_a"]
    v.loc[4, "winner"], v.loc[6, "winner"] = "A", "tie"  # one group, counted per outcome
    v.to_parquet(tmp_path / "log.parquet", index=False)
    with pytest.raises(ratings.InvalidVerdictsError, match=r"^2 verdict.*rows \[4, 6\]"):
        ratings.aggregate(relation_of(tmp_path / "log.parquet"))


def test_duckdb_models_named_like_outcomes(log, tmp_path):
    pytest.importorskip("duckdb")
    from ratings.data.sql import relation_of

    v = log.copy()
    names = {v["model_a"].iloc[0]: "A", v["model_b"].iloc[0]: "tie"}
    v[["model_a", "model_b"]] = v[["model_a", "model_b"]].replace(names)
    v.to_parquet(tmp_path / "log.parquet", index=False)
    want = ratings.read_verdicts(v, errors="report").rejected
    with pytest.raises(ratings.InvalidVerdictsError, match="ambiguous winner") as error:
        ratings.aggregate(relation_of(tmp_path / "log.parquet"))
    assert sorted(error.value.rows["row"]) == sorted(want["row"])


def test_duckdb_connection_limit_follows_max_memory():
    pytest.importorskip("duckdb")
    from ratings.core.memory import limit_scope
    from ratings.data.sql import connect

    def limit() -> str:  # DuckDB reports it in its own units, e.g. '953.6 MiB'
        return connect().execute("SELECT current_setting('memory_limit')").fetchone()[0]

    assert limit() == "953.6 MiB"  # the default 1 GB (10^9 bytes)
    with limit_scope("800MB"):
        assert limit() == "381.0 MiB"  # half of 800 MB (10^6 bytes), in whole MiB
