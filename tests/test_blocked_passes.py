"""The NumPy row passes taken block by block (:mod:`ratings.kernels.inference_ref`) against
loops over the rows written here, and equal bit for bit to the same passes over all rows at
once: a block holds whole clusters, so each cluster's sums see its rows in their order."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ratings.kernels import inference_ref as ref


def _rows(seed: int, g: int = 9, m: int = 6, sizes=None):
    """Rows sorted by cluster (some clusters empty, one larger than the blocks below)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 5, g) if sizes is None else np.asarray(sizes)
    sizes[g // 2] = 13
    cluster = np.repeat(np.arange(g), sizes)
    n = cluster.size
    ii = rng.integers(0, m - 1, n)
    jj = ii + 1 + (rng.integers(0, m, n) % (m - 1 - ii))
    a = rng.uniform(0.1, 2.0, n)
    a[::5] = 0.0
    starts = np.searchsorted(cluster, np.arange(g + 1))
    return ii, jj, cluster, a, starts, g, m


def test_cluster_blocks_cover_whole_clusters() -> None:
    *_, starts, g, _ = _rows(0)
    for rows in (1, 4, 7, 1000):
        blocks = ref.cluster_blocks(starts, rows)
        assert blocks[0][0] == 0 and blocks[-1][1] == g
        for (c0, c1, r0, r1), nxt in zip(blocks, [*blocks[1:], None], strict=True):
            assert c0 < c1 and (r0, r1) == (starts[c0], starts[c1])
            if nxt is not None:
                assert nxt[0] == c1
        if rows >= starts[-1]:
            assert len(blocks) == 1


def test_cluster_blocks_of_no_rows() -> None:
    assert ref.cluster_blocks(np.zeros(4, dtype=np.int64), 8) == [(0, 3, 0, 0)]
    assert ref.cluster_blocks(np.zeros(1, dtype=np.int64), 8) == []


@pytest.mark.parametrize("rows", [1, 3, 8, 10_000])
def test_times_by_blocks_is_the_rows_loop(rows: int) -> None:
    ii, jj, cluster, a, starts, g, m = _rows(1)
    v = np.random.default_rng(2).normal(size=(g, m))
    want = np.zeros((g, m))
    for r in range(ii.size):  # H_g v_g = sum_r a_r^2 (v_i - v_j) (e_i - e_j)
        x = a[r] ** 2 * (v[cluster[r], ii[r]] - v[cluster[r], jj[r]])
        want[cluster[r], ii[r]] += x
        want[cluster[r], jj[r]] -= x
    got = ref.times_by_blocks(ii, jj, cluster, a, v, ref.cluster_blocks(starts, rows))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    whole = ref.times_at(*ref.cell_positions(ii, jj, cluster, m), a * a, v)
    assert np.array_equal(got, whole)  # the same sums, in the same order


@pytest.mark.parametrize("rows", [1, 5, 10_000])
def test_scores_by_blocks_is_the_rows_loop(rows: int) -> None:
    ii, jj, cluster, _, starts, g, m = _rows(3)
    x = np.random.default_rng(4).normal(size=ii.size)
    want = np.zeros((g, m))
    for r in range(ii.size):
        want[cluster[r], ii[r]] += x[r]
        want[cluster[r], jj[r]] -= x[r]
    got = ref.scores_by_blocks(ii, jj, cluster, x, g, m, ref.cluster_blocks(starts, rows))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    at_i, at_j = ref.cell_positions(ii, jj, cluster, m)
    whole = np.bincount(at_i, x, g * m) - np.bincount(at_j, x, g * m)
    assert np.array_equal(got.ravel(), whole)


@pytest.mark.parametrize("n_rows", [20, 60])  # rows below and above the pairs (the table path)
def test_bt_row_weights_in_blocks_is_the_rows_loop(monkeypatch, n_rows: int) -> None:
    rng = np.random.default_rng(5)
    m = 5
    theta = rng.normal(scale=2.0, size=m)
    ii = rng.integers(0, m - 1, n_rows)
    jj = np.minimum(ii + 1 + rng.integers(0, 3, n_rows), m - 1)
    wi, wj, tt = (rng.integers(0, 4, n_rows).astype(np.float64) for _ in range(3))
    whole = ref.bt_row_weights(theta, ii, jj, wi, wj, tt)
    monkeypatch.setattr(ref, "BLOCK_ROWS", 7)
    a, score = ref.bt_row_weights(theta, ii, jj, wi, wj, tt)
    for r in range(n_rows):
        p = 1.0 / (1.0 + math.exp(-(theta[ii[r]] - theta[jj[r]])))
        n = wi[r] + wj[r] + tt[r]
        assert a[r] == pytest.approx(math.sqrt(n * p * (1.0 - p)), rel=1e-12, abs=1e-300)
        assert score[r] == pytest.approx(wi[r] + tt[r] / 2 - n * p, rel=1e-12, abs=1e-12)
    assert np.array_equal(a, whole[0]) and np.array_equal(score, whole[1])


def test_quadratic_design_columns_in_blocks_are_the_rows_loop(monkeypatch) -> None:
    ii, jj, cluster, a, _, g, m = _rows(6, g=12, m=7)
    n = np.random.default_rng(7).normal(size=(m, 11))  # past the row-wise few contrasts
    whole = ref.cluster_quadratic(g, ii, jj, np.zeros(0, np.int64), cluster, a, np.zeros(0), m,
                                  n)  # fmt: skip
    monkeypatch.setattr(ref, "BLOCK_ROWS", 5)
    got = ref.cluster_quadratic(g, ii, jj, np.zeros(0, np.int64), cluster, a, np.zeros(0), m, n)
    want = np.zeros((g, n.shape[1]))
    for r in range(ii.size):  # n_c^T H_g n_c = sum_r a_r^2 (n_i - n_j)^2
        want[cluster[r]] += a[r] ** 2 * (n[ii[r]] - n[jj[r]]) ** 2
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    assert np.array_equal(got, whole)
