"""The aggregation twin's sorted (key, outcome) cells counted as pandas counts them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ratings.kernels import fit_ref


@pytest.mark.parametrize("dtype", [np.uint32, np.int32, np.int64])
@pytest.mark.parametrize("seed", range(3))
def test_sorted_cells_count_as_pandas(dtype, seed: int) -> None:
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 50 + 400 * seed, 5000)
    outcome = rng.integers(0, 3, keys.size)
    cell = ((keys << 2) | outcome).astype(dtype)
    uniq, counts = fit_ref._sorted_cells(cell.copy())
    table = (pd.DataFrame({"key": keys, "o": outcome}).value_counts()
             .unstack(fill_value=0).reindex(columns=[0, 1, 2], fill_value=0)
             .sort_index())  # fmt: skip
    assert uniq.dtype == np.int64 and counts.dtype == np.float64
    np.testing.assert_array_equal(uniq, table.index.to_numpy())
    np.testing.assert_array_equal(counts, table.to_numpy().T.astype(np.float64))


def test_sorted_path_of_the_aggregation_counts_as_pandas() -> None:
    rng = np.random.default_rng(4)
    n, m, groups = 20_000, 40, 3_000  # 3,000 x 40 x 40 keys: past the dense table's size
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    g = rng.integers(0, groups, n)
    o = rng.integers(0, 3, n)
    i, j = np.minimum(a, b), np.maximum(a, b)
    out = fit_ref._aggregate_rows(g.astype(np.int16), i.astype(np.int8), j.astype(np.int8),
                                  o.astype(np.int8), np.zeros(0), m)  # fmt: skip
    table = (pd.DataFrame({"g": g, "i": i, "j": j, "o": o}).value_counts()
             .unstack(fill_value=0).reindex(columns=[0, 1, 2], fill_value=0)
             .sort_index())  # fmt: skip
    for got, level in zip(out[:3], ("g", "i", "j"), strict=True):
        np.testing.assert_array_equal(got, table.index.get_level_values(level))
    for got, k in zip(out[3:], (0, 1, 2), strict=True):
        np.testing.assert_array_equal(got, table[k].to_numpy(dtype=np.float64))
