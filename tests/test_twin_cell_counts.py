"""The aggregation twin's sorted (key, outcome) cells counted as pandas counts them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ratings.kernels import fit_ref


@pytest.mark.parametrize("dtype", [np.uint32, np.int32, np.int64])
@pytest.mark.parametrize("seed", range(4))
def test_sorted_cells_count_as_pandas(dtype, seed: int) -> None:
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 50 + 400 * seed, 5000) if seed < 3 else \
        rng.choice(10**6, 5000, replace=False)  # every key once
    outcome = rng.integers(0, 3, keys.size)
    cell = ((keys << 2) | outcome).astype(dtype)
    uniq, counts = fit_ref._sorted_cells(cell.copy())
    table = (pd.DataFrame({"key": keys, "o": outcome}).value_counts()
             .unstack(fill_value=0).reindex(columns=[0, 1, 2], fill_value=0)
             .sort_index())  # fmt: skip
    assert uniq.dtype == cell.dtype and counts.dtype == np.float64  # keys in the cells' type
    np.testing.assert_array_equal(uniq, table.index.to_numpy())
    np.testing.assert_array_equal(counts, table.to_numpy().T.astype(np.float64))


@pytest.mark.parametrize(("m", "groups"), [(40, 3_000), (200, 15_000)])
def test_sorted_path_of_the_aggregation_counts_as_pandas(m: int, groups: int) -> None:
    """Past the dense table's size (3,000 x 40 x 40 keys; 15,000 x 200 x 200 keys, whose cells
    take 32 unsigned bits)."""
    rng = np.random.default_rng(4)
    n, codes = 20_000, np.int8 if m < 128 else np.int16  # as _orient narrows them
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    g = rng.integers(0, groups, n)
    o = rng.integers(0, 3, n)
    i, j = np.minimum(a, b), np.maximum(a, b)
    out = fit_ref._aggregate_rows(g.astype(np.int16), i.astype(codes), j.astype(codes),
                                  o.astype(np.int8), np.zeros(0), m)  # fmt: skip
    table = (pd.DataFrame({"g": g, "i": i, "j": j, "o": o}).value_counts()
             .unstack(fill_value=0).reindex(columns=[0, 1, 2], fill_value=0)
             .sort_index())  # fmt: skip
    for got, level in zip(out[:3], ("g", "i", "j"), strict=True):
        np.testing.assert_array_equal(got, table.index.get_level_values(level))
    for got, k in zip(out[3:], (0, 1, 2), strict=True):
        np.testing.assert_array_equal(got, table[k].to_numpy(dtype=np.float64))


@pytest.mark.parametrize("order", ["sorted", "reversed"])
def test_twin_aggregation_counts_as_pandas(order: str) -> None:
    """Codes whose maps are the identity (a log read with sorted categories) are copied, others
    looked up: both give pandas' counts per pair."""
    from ratings.data.comparisons import aggregate
    from ratings.io import read_verdicts

    rng = np.random.default_rng(7)
    names = np.array([f"m{k:02d}" for k in range(12)], dtype=object)
    a = rng.integers(0, 12, 5000)
    b = (a + rng.integers(1, 12, a.size)) % 12
    df = pd.DataFrame({"model_a": names[a], "model_b": names[b],
                       "winner": rng.choice(["A", "B", "tie"], a.size)})  # fmt: skip
    models = sorted(names) if order == "sorted" else sorted(names)[::-1]
    data = aggregate(read_verdicts(df).verdicts, cluster=None, engine="numpy",
                     models=models)  # fmt: skip
    got = {(data.models[i], data.models[j]): (wi, wj, tt)
           for i, j, wi, wj, tt in zip(data.ii, data.jj, data.wi, data.wj, data.tt, strict=True)}
    pos = {m: k for k, m in enumerate(models)}
    want: dict[tuple, list] = {}
    for ma, mb, w in df.itertuples(index=False):
        flip = pos[ma] > pos[mb]
        row = want.setdefault((mb, ma) if flip else (ma, mb), [0.0, 0.0, 0.0])
        row[2 if w == "tie" else (w == "B") ^ flip] += 1.0
    assert got == {k: tuple(v) for k, v in want.items()}


@pytest.mark.parametrize("dtype", [np.uint32, np.int32, np.int64])
def test_keys_split_into_group_and_pair_as_python_divides_them(dtype) -> None:
    """Keys of 32 bits (the sorted cells' type past 2^31 / 4 keys) are split as wide ones."""
    rng = np.random.default_rng(5)
    m = 1_000
    key = np.sort(rng.integers(0, 1_000 * m * m, 2_000)).astype(dtype)
    got = fit_ref._split_keys(key, m)
    want = [(k // (m * m), k // m % m, k % m) for k in key.tolist()]
    assert all(a.dtype == np.int64 for a in got)
    assert list(zip(*(a.tolist() for a in got), strict=True)) == want
