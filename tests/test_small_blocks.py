"""The clusters' leverage and CR2 blocks of the sparse path (``small_blocks``): the NumPy twin
(which small boards run) and the numba kernel against a cluster-by-cluster reference with
dense design matrices and scipy's Schur-based matrix square root, on clusters large enough
for the twin's dense-row products and small ones over many parameters (its gathers)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from ratings.kernels import inference as kernels
from ratings.kernels import inference_ref as twins


def _rows(seed: int, m: int, sizes: tuple[int, int], n_clusters: int, judges: int):
    rng = np.random.default_rng(seed)
    size = rng.integers(*sizes, size=n_clusters)
    starts = np.concatenate([[0], np.cumsum(size)]).astype(np.int64)
    n = int(starts[-1])
    ii = rng.integers(0, m, n)
    jj = (ii + rng.integers(1, m, n)) % m
    kk = rng.integers(0, max(judges, 1), n)
    a = rng.uniform(0.1, 0.5, n)
    b = rng.uniform(-0.2, 0.2, n) if judges else np.zeros(0)
    p = m + judges
    x = rng.normal(size=(p, p))
    bread = np.linalg.inv(x @ x.T + 4.0 * n / n_clusters * np.eye(p))
    return starts, ii, jj, kk, a, b, m, bread


def _reference(starts, ii, jj, kk, a, b, m, bread):
    """Per cluster: X_g (dense), H = X_g B X_g^T, F = sqrtm(inv(I - H))."""
    h, f = [], []
    for g in range(starts.size - 1):
        r = np.arange(starts[g], starts[g + 1])
        x = np.zeros((r.size, bread.shape[0]))
        x[np.arange(r.size), ii[r]] += a[r]
        x[np.arange(r.size), jj[r]] -= a[r]
        if b.size:
            x[np.arange(r.size), m + kk[r]] += b[r]
        lev = x @ bread @ x.T
        h.append(lev.ravel())
        f.append(np.real(scipy.linalg.sqrtm(np.linalg.inv(np.eye(r.size) - lev))).ravel())
    return np.concatenate(h), np.concatenate(f)


@pytest.mark.parametrize(("m", "sizes", "judges"), [
    (30, (10, 36), 0),  # a few large clusters: dense design rows
    (30, (10, 36), 3),
    (40, (1, 5), 0),  # many small ones over many parameters: gathers of the bread
    (40, (1, 5), 3),
])  # fmt: skip
def test_small_blocks_match_a_dense_reference(m, sizes, judges):
    args = _rows(m + judges, m, sizes, 25, judges)
    want_h, want_f = _reference(*args)
    for module in (twins, kernels):
        h, f, deg = module.small_blocks(*args, 1e-8)
        np.testing.assert_allclose(h, want_h, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(f, want_f, rtol=1e-8, atol=1e-10)
        assert not deg.any()


def test_a_leverage_of_one_is_flagged_and_mapped_to_one():
    """A cluster holding a model's only rows determines it: a leverage of 1, which F maps to 1
    (the other leverage as usual)."""
    starts = np.array([0, 1, 3], dtype=np.int64)
    ii, jj = np.array([0, 0, 1]), np.array([1, 2, 2])
    a = np.ones(3)
    x = np.array([[1.0, -1.0, 0.0], [1.0, 0.0, -1.0], [0.0, 1.0, -1.0]])[:, 1:]
    bread = np.linalg.inv(x.T @ x)  # model 0 the reference: two free models, three rows
    full = np.zeros((3, 3))
    full[1:, 1:] = bread
    for module in (twins, kernels):
        h, f, deg = module.small_blocks(starts, ii, jj, ii, a, np.zeros(0), 3, full, 1e-8)
        lev = np.linalg.eigvalsh(h[1:].reshape(2, 2))
        assert deg[1] and lev.max() == pytest.approx(1.0)
        want = np.sort([1.0, 1.0 / np.sqrt(1.0 - lev.min())])  # 1 where the leverage is 1
        np.testing.assert_allclose(np.linalg.eigvalsh(f[1:].reshape(2, 2)), want, rtol=1e-8)


def test_inverse_square_root_iteration_matches_scipy_or_hands_over():
    """The Newton-Schulz iteration (the twin's, batched, and the kernel's) gives
    sqrtm(inv(I - H)) where it converges (largest leverages 0.02 to 0.95) and reports the
    blocks it leaves to the eigen-decomposition (a leverage of 1 - 1e-6)."""
    rng = np.random.default_rng(7)
    tops = [0.02, 0.3, 0.8, 0.95, 1.0 - 1e-6]
    blocks = []
    for top in tops:
        q, _ = np.linalg.qr(rng.normal(size=(12, 12)))
        lam = np.concatenate([[top], rng.uniform(0.0, top, 8), np.zeros(3)])
        blocks.append((q * lam) @ q.T)
    f, done = twins._inverse_sqrt(np.array(blocks))
    assert done.tolist() == [True, True, True, True, False]
    one = [kernels._inverse_sqrt(blk) for blk in blocks]  # the kernel's, block by block
    assert [d for _, d in one] == done.tolist()
    for k in range(4):
        want = np.real(scipy.linalg.sqrtm(np.linalg.inv(np.eye(12) - blocks[k])))
        np.testing.assert_allclose(f[k], want, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(one[k][0], want, rtol=1e-10, atol=1e-12)


def test_blocks_near_leverage_one_beside_small_ones():
    """Clusters of one size, some with a leverage near 1 (the eigen-decomposition) beside ones
    the iteration handles: every block as scipy's, none flagged degenerate."""
    m = 8
    starts = np.arange(0, 5 * 4, 4, dtype=np.int64)  # four clusters of 4 rows
    rng = np.random.default_rng(3)
    ii = rng.integers(1, m, 16)
    jj = (ii + rng.integers(1, m - 1, 16)) % m
    jj[jj == 0] = 1
    jj[ii == jj] = (ii[ii == jj] % (m - 1)) + 1
    # the first cluster alone holds model 0's rows: its leverage along model 0 is near 1
    ii[:4], jj[:4] = 0, np.array([1, 2, 3, 4])
    a = np.ones(16)
    x = np.zeros((16, m))
    x[np.arange(16), ii] += a
    x[np.arange(16), jj] -= a
    info = x[:, 1:].T @ x[:, 1:]
    bread = np.zeros((m, m))
    bread[1:, 1:] = np.linalg.inv(info + 1e-4 * np.eye(m - 1))  # model 0 the reference
    args = (starts, ii, jj, ii, a, np.zeros(0), m, bread)
    want_h, want_f = _reference(*args)
    lev = np.linalg.eigvalsh(want_h[:16].reshape(4, 4))
    assert 0.99 < lev.max() < 1.0 - 1e-8
    done = twins._inverse_sqrt(want_h.reshape(4, 4, 4))[1]
    assert done.any() and not done.all()  # both routes within one size
    for module in (twins, kernels):
        h, f, deg = module.small_blocks(*args, 1e-8)
        np.testing.assert_allclose(h, want_h, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(f, want_f, rtol=1e-7, atol=1e-9)
        assert not deg.any()
