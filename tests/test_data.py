"""Aggregation: bad canonical frames passed straight to ``aggregate`` are rejected by row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ratings
import ratings.data.comparisons as data_module
from ratings import InvalidVerdictsError, aggregate
from ratings.core import threads as _threads
from ratings.kernels import aggregate as _kernels_aggregate
from ratings.kernels import fit as _kernels
from ratings.kernels import fit_ref as _kernels_ref


def _frame(**over):
    base = {"model_a": ["x", "y", "z", "x"], "model_b": ["y", "z", "x", "z"],
            "winner": ["A", "B", "B", "tie"], "task_id": ["t1", "t2", "t3", "t1"],
            "judge": ["j", "j", "k", "k"]}  # fmt: skip
    base.update(over)
    return pd.DataFrame(base)


@pytest.mark.parametrize(
    ("column", "values", "message"),
    [
        ("winner", ["A", None, "B", "tie"], r"missing winner: rows \[1\]"),
        ("model_a", ["x", None, "z", "x"], r"missing model name: rows \[1\]"),
        ("model_b", ["y", "z", "x", "x"], r"against itself .*rows \[3\]"),
        ("task_id", ["t1", "t2", None, "t1"], r"missing task_id: rows \[2\]"),
        ("judge", ["j", None, "k", "k"], r"missing judge: rows \[1\]"),
    ],
)
def test_aggregate_rejects_missing_values_and_self_matches(column, values, message):
    with pytest.raises(InvalidVerdictsError, match=message) as err:
        aggregate(_frame(**{column: values}))
    assert len(err.value.rows) == 1


def test_forfeits_override_the_judge():
    frame = _frame(failed_a=[True, False, True, False], failed_b=[False, False, True, False])
    data = aggregate(frame, cluster=None)
    det = list(data.judges).index("deterministic")
    rows = data.judge == det
    # row 0: x failed vs y -> y wins; row 2: both failed -> tie
    assert sorted(zip(data.ii[rows], data.jj[rows], data.wi[rows], data.wj[rows], data.tt[rows],
                      strict=True)) == [(0, 1, 0.0, 1.0, 0.0), (0, 2, 0.0, 0.0, 1.0)]  # fmt: skip


def _random_verdict_rows(seed: int, n: int, m: int, groups: int):
    """Oriented verdicts: (group, i, j, outcome, weight), i < j."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    group, outcome = rng.integers(0, groups, n), rng.integers(0, 3, n)
    return group, np.minimum(a, b), np.maximum(a, b), outcome, rng.exponential(size=n)


@settings(deadline=None, max_examples=30)
@given(seed=st.integers(0, 2**32 - 1), with_eta=st.booleans())
def test_cluster_scores_kernel_matches_twin(seed, with_eta):
    rng = np.random.default_rng(seed)
    r, m, k, g = 40, 5, 3, 6
    ii = rng.integers(0, m, r)
    jj = (ii + rng.integers(1, m, r)) % m
    kk, cl = rng.integers(0, k, r), rng.integers(0, g, r)
    sd = rng.normal(size=r)
    se = rng.normal(size=r) if with_eta else np.zeros(0)
    p = m + k if with_eta else m
    args = (g, p, ii, jj, kk, cl, sd, se, m)
    np.testing.assert_allclose(_kernels.cluster_scores(*args), _kernels_ref.cluster_scores(*args),
                               rtol=1e-12, atol=1e-12)  # fmt: skip
    _kernels.cluster_scores.py_func(*args)


@settings(deadline=None, max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 300), m=st.integers(2, 7),
       judges=st.integers(1, 4))  # fmt: skip
def test_collapse_rows_kernel_matches_twin(seed, n, m, judges):
    rng = np.random.default_rng(seed)
    _, i, j, _, _ = _random_verdict_rows(seed, n, m, 1)
    k = rng.integers(0, judges, n)
    wi, wj, tt = rng.exponential(size=(3, n))
    args = (k, i, j, wi, wj, tt, judges, m)
    fast, slow = _kernels.collapse_rows(*args), _kernels_ref.collapse_rows(*args)
    for f, s in zip(fast, slow, strict=True):  # both sorted by (judge, i, j)
        np.testing.assert_allclose(f, s, rtol=1e-12)
    _kernels.collapse_rows.py_func(*args)


@settings(deadline=None, max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 300), m=st.integers(2, 7),
       judges=st.integers(1, 4), groups=st.integers(1, 5), threads=st.sampled_from([1, 2, 3]),
       one_pass=st.booleans())  # fmt: skip
def test_aggregate_codes_counts_unusable_rows_as_its_twin(seed, n, m, judges, groups, threads,
                                                          one_pass):  # fmt: skip
    rng = np.random.default_rng(seed)
    amap, bmap = rng.permutation(m).astype(np.int64), rng.permutation(m).astype(np.int64)
    amap[rng.random(m) < 0.1] = -1  # names outside a given model list
    ca, cb = rng.integers(-1, m, n), rng.integers(-1, m, n)  # -1: missing
    wmap = rng.integers(-1, 3, 4).astype(np.int64)  # -1: an unknown spelling
    wc, jc, gc = rng.integers(-1, 4, n), rng.integers(-1, judges, n), rng.integers(-1, groups, n)
    fa, fb = rng.random(n) < 0.2, rng.random(n) < 0.2
    args = (ca, cb, amap, bmap, wc, wmap, jc, gc, fa, fb, judges, m, judges + 1, groups,
            np.zeros(0))  # fmt: skip
    with pytest.MonkeyPatch.context() as mp:  # passes split in `threads` pieces
        mp.setattr(_threads, "CONCURRENT_ROWS", 0)
        mp.setattr(_threads, "workers", lambda: threads)
        mp.setattr(_kernels_aggregate, "_dense_fits", lambda space, n: one_pass)
        fast = _kernels.aggregate_codes(*args)
    slow = _kernels_ref.aggregate_codes(*args)
    assert fast.n_unusable == slow.n_unusable  # unusable rows: missing codes, unknown names or
    # spellings, self-matches (forfeits need no winner spelling)
    if fast.n_unusable == 0:
        for f, s in zip(fast.used, slow.used, strict=True):  # used models, judges, clusters
            np.testing.assert_array_equal(f, s)


@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_aggregate_with_sides_naming_different_models(engine):
    # model_a holds one name, model_b two: the used-model flags span all three labels.
    frame = pd.DataFrame({"model_a": ["x", "x", "x"], "model_b": ["y", "z", "y"],
                          "winner": ["A", "B", "tie"]})  # fmt: skip
    data = aggregate(frame, cluster=None, engine=engine)
    assert data.models.tolist() == ["x", "y", "z"]
    got = sorted(zip(data.ii.tolist(), data.jj.tolist(), data.wi.tolist(), data.wj.tolist(),
                     data.tt.tolist(), strict=True))  # fmt: skip
    assert got == [(0, 1, 1.0, 0.0, 1.0), (0, 2, 0.0, 1.0, 0.0)]


@settings(deadline=None, max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 300), m=st.integers(2, 7),
       judges=st.integers(1, 3), groups=st.integers(1, 5),
       path=st.sampled_from(["one pass", "dense", "sort"]), weighted=st.booleans(),
       optional=st.booleans(), threads=st.sampled_from([1, 2, 3]))  # fmt: skip
def test_aggregate_codes_kernel_matches_twin(seed, n, m, judges, groups, path, weighted,
                                             optional, threads):  # fmt: skip
    rng = np.random.default_rng(seed)
    amap = rng.permutation(m).astype(np.int64)
    bmap = amap.copy()  # with ca != cb, no self-matches
    ca = rng.integers(0, m, n)
    cb = (ca + rng.integers(1, m, n)) % m
    wmap = np.array([0, 1, 2], dtype=np.int64)
    wc = rng.integers(0, 3, n)
    if optional:  # judge, cluster and forfeit columns present
        jc, gc = rng.integers(0, judges, n), rng.integers(0, groups, n)
        fa, fb = rng.random(n) < 0.2, rng.random(n) < 0.2
        nj, ng = judges + 1, groups
    else:
        jc = gc = np.zeros(0, dtype=np.int64)
        fa = fb = np.zeros(0, dtype=bool)
        nj, ng = 1, 1
    weight = rng.exponential(size=n) if weighted else np.zeros(0)
    args = (ca, cb, amap, bmap, wc, wmap, jc, gc, fa, fb, nj - 1, m, nj, ng, weight)
    calls = []

    def fits(space, n):  # one pass over every key, a counting pass then dense, or sort
        calls.append(space)
        return {"one pass": True, "dense": len(calls) > 1, "sort": False}[path]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_kernels_aggregate, "_dense_fits", fits)
        mp.setattr(_threads, "CONCURRENT_ROWS", 0)  # passes split in `threads` pieces
        mp.setattr(_threads, "workers", lambda: threads)
        fast = _kernels.aggregate_codes(*args)
        n_calls = len(calls)
        bare = _kernels.aggregate_codes(*args, collapse=False)  # rows only: the same rows
    assert n_calls == (1 if path == "one pass" else 2)
    assert bare.collapsed is None
    for f, b in zip(fast.rows, bare.rows, strict=True):
        np.testing.assert_array_equal(f, b)
    slow = _kernels_ref.aggregate_codes(*args)
    assert fast.n_unusable == slow.n_unusable == 0
    for f, s in zip(fast.used, slow.used, strict=True):  # used models, judges, clusters
        np.testing.assert_array_equal(f, s)
    f_order, s_order = np.lexsort(fast.rows[3::-1]), np.lexsort(slow.rows[3::-1])
    for f, s in zip(fast.rows, slow.rows, strict=True):
        np.testing.assert_allclose(f[f_order], s[s_order], rtol=1e-12)
    assert np.all(np.diff(fast.rows.cluster) >= 0)  # rows grouped (sorted) by cluster
    # summed on the way on the sort path of clustered logs, unless their groups are deduplicated
    # in order of their first model (groups of FIRST_GROUPS x n_models verdicts on average)
    groups_seen = np.unique(fast.rows.cluster * nj + fast.rows.judge).size
    by_first = _kernels_aggregate.FIRST_GROUPS * groups_seen * m <= n
    assert (fast.collapsed is not None) == (path == "sort" and ng > 1 and not by_first)
    if fast.collapsed is not None:  # rows summed over clusters on the way: as collapsing after
        want = _kernels_ref.collapse_rows(*slow.rows[1:], nj, m)
        np.testing.assert_array_equal(fast.collapsed.cluster, 0)
        for f, s in zip(fast.collapsed[1:], want, strict=True):
            np.testing.assert_allclose(f, s, rtol=1e-12)


def _verdicts(rng, n: int, m: int, weighted: bool):
    """Random usable verdict codes: (model_a, model_b, the models' map, winner, weights)."""
    ca = rng.integers(0, m, n)
    cb = (ca + rng.integers(1, m, n)) % m
    amap = rng.permutation(m).astype(np.int64)
    return ca, cb, amap, rng.integers(0, 3, n), rng.exponential(size=n) if weighted else \
        np.zeros(0)


def _loop_counts(ca, cb, amap, wc, weight, outer) -> dict[tuple[int, int, int], list[float]]:
    """Wins of i, wins of j and ties per (outer key, i, j), i < j, by a loop over the
    verdicts (each weighted, or 1)."""
    want: dict[tuple[int, int, int], list[float]] = {}
    for v in range(ca.size):  # i < j, the outcome seen from i
        a, b, o = int(amap[ca[v]]), int(amap[cb[v]]), int(wc[v])
        if a > b:
            a, b, o = b, a, (1 - o if o < 2 else o)
        want.setdefault((int(outer[v]), a, b), [0.0, 0.0, 0.0])[o] += \
            weight[v] if weight.size else 1.0
    return want


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize(("m", "n", "judges"), [(300, 2_000, 1), (40, 3_000, 3), (5, 400, 2)])
def test_unclustered_rows_are_sorted_sums_as_a_loop_counts_them(m, n, judges, weighted):
    """An unclustered log's sort path (each judge's verdicts put in order of their first model,
    then summed per partner): one row per (judge, i, j) in order of (judge, i) (and of j
    where each model meets many partners), each with the wins and ties a loop over the
    verdicts counts, on boards with few and with many partners per model."""
    rng = np.random.default_rng(m + n + judges)
    (ca, cb, amap, wc, weight), jc = _verdicts(rng, n, m, weighted), rng.integers(0, judges, n)
    none = np.zeros(0, dtype=bool)
    args = (ca, cb, amap, amap, wc, np.arange(3, dtype=np.int64), jc, np.zeros(0, dtype=np.int64),
            none, none, 0, m, judges, 1, weight)
    want = _loop_counts(ca, cb, amap, wc, weight, jc)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_kernels_aggregate, "_dense_fits", lambda space, n: False)  # the sort path
        mp.setattr(_kernels_aggregate, "FIRST_GROUPS", 4)  # in order of first model
        rows = _kernels.aggregate_codes(*args).rows
    got = list(zip(rows.judge.tolist(), rows.ii.tolist(), rows.jj.tolist(), strict=True))
    assert got == sorted(got, key=lambda k: k[:2])  # in order of (judge, i)
    if m <= 40:  # every model's run has many partners: in order of j too
        assert got == sorted(want)
    assert sorted(got) == sorted(want)
    np.testing.assert_allclose(np.column_stack([rows.wi, rows.wj, rows.tt]),
                               [want[k] for k in got], rtol=1e-12)  # fmt: skip
    np.testing.assert_array_equal(rows.cluster, 0)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize(("m", "n", "groups"), [(60, 2_000, 9), (30, 400, 40), (8, 300, 3)])
def test_clustered_rows_summed_over_clusters_as_a_loop_counts_them(m, n, groups, weighted):
    """A clustered log of one judge whose (i, j) table is too large to sum on the way is summed
    over clusters after its per-cluster rows, as one group in order of first model: one row
    per (i, j) in order of (i, j), each with the wins and ties a loop over the verdicts counts
    (boards where models meet many and few partners)."""
    rng = np.random.default_rng(m + n)
    (ca, cb, amap, wc, weight), gc = _verdicts(rng, n, m, weighted), rng.integers(0, groups, n)
    none = np.zeros(0, dtype=bool)
    args = (ca, cb, amap, amap, wc, np.arange(3, dtype=np.int64), np.zeros(0, dtype=np.int64),
            gc, none, none, 0, m, 1, groups, weight)
    want = {k[1:]: v for k, v in _loop_counts(ca, cb, amap, wc, weight, np.zeros(n)).items()}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_kernels_aggregate, "_dense_fits", lambda space, n: False)  # the sort path
        mp.setattr(_kernels_aggregate, "_COLLAPSE_ON_THE_WAY", 0)  # not summed on the way
        mp.setattr(_kernels_aggregate, "WHOLE_SCAN", 10**6)
        mp.setattr(_kernels_aggregate, "FIRST_GROUPS", 10**6)  # clusters by the slot table
        out = _kernels.aggregate_codes(*args)
    summed = out.collapsed
    got = list(zip(summed.ii.tolist(), summed.jj.tolist(), strict=True))
    assert got == sorted(want)
    np.testing.assert_allclose(np.column_stack([summed.wi, summed.wj, summed.tt]),
                               [want[k] for k in got], rtol=1e-12)  # fmt: skip
    np.testing.assert_array_equal(summed.judge, 0)
    np.testing.assert_array_equal(summed.cluster, 0)
    assert out.rows.ii.size >= summed.ii.size  # the per-cluster rows are kept as they were
    np.testing.assert_array_equal(out.rows.cluster, np.sort(out.rows.cluster))


@pytest.mark.parametrize("groups", [1, 7])
def test_many_models_rows_are_sums_as_a_loop_counts_them(groups):
    """Unweighted logs of more models than the slot table's cache-sized bound (TWIN_SLOTS):
    the compiled module's aggregation gives one row per (cluster, i, j), grouped by cluster,
    with the wins and ties a loop over the verdicts counts (and, clustered, the rows summed
    over clusters where it returns them)."""
    m = int(np.sqrt(_kernels_aggregate.TWIN_SLOTS)) + 1
    rng = np.random.default_rng(groups)
    (ca, cb, amap, wc, weight), gc = _verdicts(rng, 3_000, m, False), rng.integers(0, groups, 3_000)
    none = np.zeros(0, dtype=bool)
    out = _kernels.aggregate_codes(ca, cb, amap, amap, wc, np.arange(3, dtype=np.int64),
                                   np.zeros(0, dtype=np.int64), gc, none, none, 0, m, 1, groups,
                                   weight)  # fmt: skip
    rows = out.rows
    want = _loop_counts(ca, cb, amap, wc, weight, gc)
    got = list(zip(rows.cluster.tolist(), rows.ii.tolist(), rows.jj.tolist(), strict=True))
    assert sorted(got) == sorted(want) and len(got) == len(want)
    assert np.all(np.diff(rows.cluster) >= 0)
    np.testing.assert_array_equal(np.column_stack([rows.wi, rows.wj, rows.tt]),
                                  [want[k] for k in got])  # fmt: skip
    if out.collapsed is not None:
        pooled = _loop_counts(ca, cb, amap, wc, weight, np.zeros(3_000))
        summed = out.collapsed
        got = list(zip(summed.ii.tolist(), summed.jj.tolist(), strict=True))
        assert got == sorted(k[1:] for k in pooled)
        np.testing.assert_array_equal(np.column_stack([summed.wi, summed.wj, summed.tt]),
                                      [pooled[(0, *k)] for k in got])  # fmt: skip


@pytest.mark.parametrize(("m", "n", "groups", "judges"), [(40, 900, 300, 1), (12, 500, 200, 2)])
def test_twin_sums_rows_over_clusters_on_the_way_as_a_loop_counts_them(m, n, groups, judges):
    """Where nearly every verdict is a row of its own cluster (many small tasks), the twin sums
    the rows over clusters from the verdicts while aggregating: one row per (judge, i, j) in
    that order, with the wins and ties a loop over the verdicts counts, and the per-cluster
    rows as without it; weighted verdicts are left to ``collapse_rows``."""
    rng = np.random.default_rng(m + n)
    (ca, cb, amap, wc, _), jc = _verdicts(rng, n, m, False), rng.integers(0, judges, n)
    gc = rng.integers(0, groups, n)
    none = np.zeros(0, dtype=bool)
    args = (ca, cb, amap, amap, wc, np.arange(3, dtype=np.int64), jc, gc, none, none, 0,
            m + 3, judges, groups)  # fmt: skip (three models without verdicts)
    out = _kernels_ref.aggregate_codes(*args, np.zeros(0))
    assert out.rows.ii.size * 3 >= n * 2  # the rows nearly as many as the verdicts
    want = _loop_counts(ca, cb, amap, wc, np.zeros(0), jc)
    summed = out.collapsed
    got = list(zip(summed.judge.tolist(), summed.ii.tolist(), summed.jj.tolist(), strict=True))
    assert got == sorted(want)
    np.testing.assert_array_equal(np.column_stack([summed.wi, summed.wj, summed.tt]),
                                  [want[k] for k in got])  # fmt: skip
    np.testing.assert_array_equal(summed.cluster, 0)
    bare = _kernels_ref.aggregate_codes(*args, np.zeros(0), collapse=False)
    assert bare.collapsed is None
    seen = {m for k in want for m in k[1:]}  # the models used, read off the summed rows
    np.testing.assert_array_equal(out.used[0], [k in seen for k in range(m + 3)])
    np.testing.assert_array_equal(bare.used[0], out.used[0])
    for a, b in zip(out.rows, bare.rows, strict=True):
        np.testing.assert_array_equal(a, b)
    assert _kernels_ref.aggregate_codes(*args, np.ones(n)).collapsed is None  # weighted


def test_aggregate_codes_counts_unusable_rows():
    one = np.array([0], dtype=np.int64)
    args = (np.array([0, 0, -1]), np.array([1, 0, 1]), np.array([0, 1]), np.array([0, 1]),
            np.array([0, 0, 0]), one, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=bool), np.zeros(0, dtype=bool), 0, 2, 1, 1, np.zeros(0))
    for k in (_kernels, _kernels_ref):
        assert k.aggregate_codes(*args).n_unusable == 2  # a self-match and a missing name


def test_boards_too_large_for_a_slot_table_aggregate_the_same(monkeypatch):
    rng = np.random.default_rng(3)
    n, m = 500, 12
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    frame = pd.DataFrame({"model_a": [f"m{k}" for k in a], "model_b": [f"m{k}" for k in b],
                          "winner": rng.choice(["A", "B", "tie"], n),
                          "judge": rng.choice(["j1", "j2"], n),
                          "task_id": [f"t{k}" for k in rng.integers(0, 7, n)]})  # fmt: skip
    want = aggregate(frame, engine="numba")
    monkeypatch.setattr(data_module, "_DENSE_SLOTS", 1)  # the sort-based reduction
    got = aggregate(frame, engine="numba")
    assert got.models.equals(want.models) and got.clusters.equals(want.clusters)
    order_g = np.lexsort((got.jj, got.ii, got.judge, got.cluster))
    order_w = np.lexsort((want.jj, want.ii, want.judge, want.cluster))
    for name in ("ii", "jj", "judge", "cluster", "wi", "wj", "tt"):
        np.testing.assert_array_equal(getattr(got, name)[order_g], getattr(want, name)[order_w])


def _random_codes(rng, n, m, judges, groups, weighted, forfeits):
    """Usable verdict codes as ``aggregate`` passes them (``aggregate_codes``'s arguments)."""
    amap = rng.permutation(m).astype(np.int64)
    ca = rng.integers(0, m, n)
    cb = (ca + rng.integers(1, m, n)) % m
    wc, jc, gc = rng.integers(0, 3, n), rng.integers(0, judges, n), rng.integers(0, groups, n)
    if forfeits:
        fa, fb = rng.random(n) < 0.2, rng.random(n) < 0.2
    else:
        fa = fb = np.zeros(0, dtype=bool)
    weight = rng.exponential(size=n) if weighted else np.zeros(0)
    return (ca, cb, amap, amap.copy(), wc, np.array([0, 1, 2], dtype=np.int64), jc, gc, fa, fb,
            judges, m, judges + 1, groups, weight)  # fmt: skip


@settings(deadline=None, max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 300), m=st.integers(2, 7),
       judges=st.integers(1, 3), groups=st.integers(1, 6), weighted=st.booleans(),
       forfeits=st.booleans(), with_eta=st.booleans(),
       threads=st.sampled_from([1, 2, 3]))  # fmt: skip
def test_collapse_codes_and_verdict_cluster_scores_match_twins_and_rows(
    seed, n, m, judges, groups, weighted, forfeits, with_eta, threads
):
    rng = np.random.default_rng(seed)
    args = _random_codes(rng, n, m, judges, groups, weighted, forfeits)
    nj, ng = judges + 1, groups
    with pytest.MonkeyPatch.context() as mp:  # passes split in `threads` pieces
        mp.setattr(_threads, "CONCURRENT_ROWS", 0)
        mp.setattr(_threads, "workers", lambda: threads)
        fast = _kernels.collapse_codes(*args)
        slow = _kernels_ref.collapse_codes(*args)
        assert fast.n_unusable == slow.n_unusable == 0
        for f, s in zip((*fast.rows, *fast.used), (*slow.rows, *slow.used), strict=True):
            np.testing.assert_allclose(f, s, rtol=1e-12)  # rows sorted by (judge, i, j); flags
        key = (slow.rows.judge * m + slow.rows.ii) * m + slow.rows.jj
        np.testing.assert_array_equal(fast.slot[key], np.arange(key.size))  # slots of the rows
        # the rows are the per-cluster rows summed over clusters
        per_cluster = _kernels_ref.aggregate_codes(*args)
        want = _kernels_ref.collapse_rows(*per_cluster.rows[1:], nj, m)
        np.testing.assert_array_equal(fast.rows.cluster, 0)
        for f, s in zip(fast.rows[1:], want, strict=True):
            np.testing.assert_allclose(f, s, rtol=1e-12)
        # scores per outcome of each collapsed row -> per-cluster sums, as from per-cluster rows
        r = key.size
        tab_d, tab_e = rng.normal(size=3 * r), (rng.normal(size=3 * r) if with_eta else np.zeros(0))
        score_args = (*args[:14], args[14], fast.slot, tab_d, tab_e)
        got = _kernels.verdict_cluster_scores(*score_args)
        np.testing.assert_allclose(got, _kernels_ref.verdict_cluster_scores(*score_args),
                                   rtol=1e-10, atol=1e-12)  # fmt: skip
    g, rk, ri, rj, wi, wj, tt = per_cluster.rows
    row = np.searchsorted(key, (rk * m + ri) * m + rj)  # each per-cluster row's collapsed row
    sd = wi * tab_d[3 * row] + wj * tab_d[3 * row + 1] + tt * tab_d[3 * row + 2]
    se = (wi * tab_e[3 * row] + wj * tab_e[3 * row + 1] + tt * tab_e[3 * row + 2]) if tab_e.size \
        else np.zeros(0)
    p = m + (nj if tab_e.size else 0)  # (no rows: no eta columns either)
    want = _kernels_ref.cluster_scores(ng, p, ri, rj, rk, g, sd, se, m)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("forfeits", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_twins_share_one_orientation_of_read_only_codes(forfeits, weighted):
    """Read-only codes (a categorical's): collapse_codes, verdict_cluster_scores and
    aggregate_codes orient them once, with the results of codes each twin orients itself;
    aggregate_codes lets the shared orientation go."""
    rng = np.random.default_rng(5)
    own = _random_codes(rng, 500, 6, 2, 4, weighted, forfeits)
    shared = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in own)
    for a in (*shared[:2], *shared[4:5], *shared[6:10]):
        a.setflags(write=False)
    results = []
    for args in (own, shared):
        collapsed = _kernels_ref.collapse_codes(*args)
        assert bool(_kernels_ref._ORIENTED) == (args is shared)
        tab = np.random.default_rng(1).normal(size=3 * collapsed.rows.judge.size)
        scores = _kernels_ref.verdict_cluster_scores(*args, collapsed.slot, tab, np.zeros(0))
        rows = _kernels_ref.aggregate_codes(*args)
        assert not _kernels_ref._ORIENTED
        results.append((collapsed, scores, rows))
    (c0, s0, r0), (c1, s1, r1) = results
    for a, b in (*zip((*c0.rows, *c0.used, c0.slot), (*c1.rows, *c1.used, c1.slot), strict=True),
                 (s0, s1), *zip((*r0.rows, *r0.used), (*r1.rows, *r1.used), strict=True)):
        np.testing.assert_array_equal(a, b)


def test_shared_orientation_hands_the_per_cluster_rows_the_codes_used():
    """aggregate_codes after collapse_codes over the same read-only codes takes the codes
    collapse_codes found used (not marked again): those a loop over the verdicts finds, unused
    models, judges and clusters left out, and as copies (a caller marking more in one result
    leaves the other alone)."""
    rng = np.random.default_rng(11)
    n, m, judges, groups = 400, 8, 2, 6
    args = list(_random_codes(rng, n, m, judges, groups, False, False))
    args[0], args[1] = args[0] % (m - 1), args[1] % (m - 1)  # label code m - 1 unused
    args[1] = np.where(args[0] == args[1], (args[1] + 1) % (m - 1), args[1])
    args[7] = np.where(args[7] == 3, 2, args[7])  # cluster 3 unused
    for k in (0, 1, 4, 6, 7):
        args[k] = args[k].copy()
        args[k].setflags(write=False)
    want_m, want_j, want_g = np.zeros(m, bool), np.zeros(judges + 1, bool), np.zeros(groups, bool)
    for v in range(n):
        want_m[args[2][args[0][v]]] = want_m[args[3][args[1][v]]] = True
        want_j[args[6][v]] = want_g[args[7][v]] = True
    collapsed = _kernels_ref.collapse_codes(*args)
    collapsed.used.judges[:] = True  # as _Labels.compacted marks the deterministic judge
    rows = _kernels_ref.aggregate_codes(*args)
    for got, want in zip(rows.used, (want_m, want_j, want_g), strict=True):
        np.testing.assert_array_equal(got, want)
    assert not want_g[3] and not want_j[judges] and want_m.sum() == m - 1


def _scoped_log(rng, n=3000, m=9, tasks=40):
    """Two scopes over one set of tasks, judges and models, with a few render forfeits."""
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    fa, fb = rng.random(n) < 0.03, rng.random(n) < 0.03
    winner = rng.choice(["A", "B", "tie"], n, p=[0.45, 0.45, 0.1]).astype(object)
    winner[fa | fb] = None  # the flags decide: no winner needed
    return pd.DataFrame({
        "model_a": [f"m{k}" for k in a], "model_b": [f"m{k}" for k in b],
        "winner": winner,
        "task_id": [f"t{k}" for k in rng.integers(0, tasks, n)],
        "judge": rng.choice(["j1", "j2", "j3"], n),
        "scope": rng.choice(["s1", "s2"], n),
        "failed_a": fa, "failed_b": fb,
    })  # fmt: skip


@pytest.mark.parametrize("engine", ["numba", "numpy"])
@pytest.mark.parametrize("model", ["bt", "crowd-bt"])
def test_kept_codes_fit_as_the_per_cluster_rows(rng, engine, model):

    log = ratings.read_verdicts(_scoped_log(rng)).verdicts
    # one scope, a model seen only in the other and some tasks only there: labels are dropped
    part = log[(log["scope"] == "s1") & ~((log["model_a"] == "m8") | (log["model_b"] == "m8"))
               & ~log["task_id"].isin(["t1", "t2"])]  # fmt: skip
    kept = aggregate(part, engine=engine)
    rows = data_module._aggregate(part, cluster="task_id", models=None, weights=None,
                                  engine=engine, lazy=False)  # fmt: skip
    assert kept.keeps_codes and not rows.keeps_codes
    assert kept.models.equals(rows.models) and kept.judges.equals(rows.judges)
    assert kept.clusters.equals(rows.clusters) and "deterministic" in kept.judges
    assert kept.n_verdicts == rows.n_verdicts == len(part)
    # (random verdicts: the judges look like coin flips, so the default Crowd-BT intervals are
    # open; the plain maximum-likelihood fit has finite ones to compare)
    spec = ratings.CrowdBT(prior=None) if model == "crowd-bt" else ratings.BT()
    a = ratings.fit(kept, model=spec, solver=ratings.Solver(engine=engine), ci="sandwich-z")
    assert kept.keeps_codes  # the fit and its clustered intervals built no per-cluster rows
    b = ratings.fit(rows, model=spec, solver=ratings.Solver(engine=engine), ci="sandwich-z")
    np.testing.assert_allclose(a.strength, b.strength, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.cov, b.cov, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(a.influence, b.influence, rtol=1e-10, atol=1e-14)
    # CR2 (the default) reads each cluster's rows, and gives the same from either
    a2, b2 = (
        ratings.fit(d, model=model, solver=ratings.Solver(engine=engine)) for d in (kept, rows)
    )
    np.testing.assert_allclose(a2.cov, b2.cov, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(a2.model_df, b2.model_df, rtol=1e-10)
    kept = aggregate(part, engine=engine)
    # reading the rows builds them: the same rows as the per-cluster path (in its order)
    for name in ("ii", "jj", "judge", "cluster", "wi", "wj", "tt"):
        np.testing.assert_array_equal(getattr(kept, name), getattr(rows, name))
    assert not kept.keeps_codes


def test_kept_codes_with_a_model_list_keep_unused_models(rng):
    log = _scoped_log(rng)
    models = [*sorted(set(log["model_a"]) | set(log["model_b"])), "unseen"]
    kept = aggregate(log.drop(columns=["scope"]), models=models)
    assert kept.keeps_codes and list(kept.models) == models

    def score(rows, wi, wj, tt):
        return wi - wj, None

    u = kept.cluster_score_matrix(len(models), score, _kernels)
    assert u.shape == (len(kept.clusters), len(models)) and not u[:, -1].any()
    assert kept.n_rows > 0 and not kept.keeps_codes  # reading the rows built them
    np.testing.assert_allclose(u, kept.cluster_score_matrix(len(models), score, _kernels),
                               atol=1e-12)  # fmt: skip


@pytest.mark.parametrize("model", ["bt", "crowd-bt"])
def test_cluster_meat_fallback_equals_the_influence_path(rng, monkeypatch, model):
    # Above MAX_INFLUENCE_CELLS the meat is summed cluster by cluster from per-cluster rows
    # (built from the kept codes on demand): the same covariance, no influences.
    import ratings.inference.covariance as unc

    log = ratings.read_verdicts(_scoped_log(rng).drop(columns=["scope"])).verdicts
    spec = ratings.CrowdBT(prior=None) if model == "crowd-bt" else ratings.BT()  # (see above)
    want = ratings.fit(aggregate(log), model=spec, ci="sandwich-z")
    monkeypatch.setattr(unc, "MAX_INFLUENCE_CELLS", 0)
    data = aggregate(log)
    got = ratings.fit(data, model=spec, ci="sandwich-z")
    assert got.influence is None and want.influence is not None and not data.keeps_codes
    np.testing.assert_allclose(got.cov, want.cov, rtol=1e-10, atol=1e-14)
