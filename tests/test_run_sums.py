"""Sums over runs of sorted codes (``ratings.core.arrays.run_sums``) against NumPy's scatter
``np.bincount`` of the same values."""

from __future__ import annotations

import numpy as np
import pytest

from ratings.core.arrays import run_starts, run_sums


@pytest.mark.parametrize("seed", range(5))
def test_run_sums_equal_bincount(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 40))
    codes = np.sort(rng.integers(0, m, int(rng.integers(1, 500))))  # some codes without rows
    values = rng.normal(size=codes.size)
    code, starts = run_starts(codes)
    assert np.array_equal(code, np.unique(codes))
    np.testing.assert_allclose(run_sums((code, starts), values, m),
                               np.bincount(codes, values, m), rtol=1e-13, atol=1e-13)


def test_run_sums_of_no_rows() -> None:
    empty = np.zeros(0, dtype=np.int64)
    assert np.array_equal(run_sums(run_starts(empty), np.zeros(0), 3), np.zeros(3))
