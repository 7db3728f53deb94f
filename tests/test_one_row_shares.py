"""The one-direction df's pieces on boards of one-row clusters (an arena's prompts): the
twin's quadratic forms without grouping, and the clusters' share sums taken in blocks, against
the formulas written out cluster by cluster."""

import importlib

import numpy as np
import pytest

from ratings.inference.satterthwaite import DEGENERATE, share_sums
from ratings.kernels import inference_ref as slow

sat = importlib.import_module("ratings.inference.satterthwaite")  # the package's name is a function


def _one_row_board(seed: int, with_eta: bool, gaps: bool):
    """One row per cluster, pairs repeated; ``gaps``: some cluster numbers have no row."""
    rng = np.random.default_rng(seed)
    m, nj, r = 9, 3, 40
    ii = rng.integers(0, m, r)
    jj = (ii + rng.integers(1, m, r)) % m
    kk = rng.integers(0, nj, r)
    cluster = np.sort(rng.choice(2 * r, r, replace=False)) if gaps else np.arange(r)
    g = int(cluster[-1]) + 3 if gaps else r
    a = rng.exponential(size=r)
    b = rng.normal(size=r) if with_eta else np.zeros(0)
    n = rng.normal(size=(m + (nj if with_eta else 0), 11))  # past the row-wise few contrasts
    return g, ii, jj, kk, cluster, a, b, m, n


@pytest.mark.parametrize("cells", [65_536, 30])  # one pass, or several
@pytest.mark.parametrize("gaps", [False, True])
@pytest.mark.parametrize("with_eta", [False, True])
def test_one_row_quadratic_matches_design_vectors(with_eta, gaps, cells, monkeypatch):
    """n_c^T x_r x_r^T n_c from each row's design vector written out, and the same as the
    twin's grouped path (rows made unsorted, so it groups them) and the kernel."""
    from ratings.kernels import inference as fast

    monkeypatch.setattr(slow, "_ONE_ROW_CELLS", cells)
    g, ii, jj, kk, cluster, a, b, m, n = _one_row_board(3, with_eta, gaps)
    want = np.zeros((g, n.shape[1]))
    for r in range(ii.size):
        x = np.zeros(n.shape[0])
        x[ii[r]] += a[r]
        x[jj[r]] -= a[r]
        if with_eta:
            x[m + kk[r]] += b[r]
        want[cluster[r]] = (x @ n) ** 2
    got = slow.cluster_quadratic(g, ii, jj, kk, cluster, a, b, m, n)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    flip = np.arange(ii.size)[::-1]  # unsorted clusters: the grouped path
    grouped = slow.cluster_quadratic(g, ii[flip], jj[flip], kk[flip], cluster[flip], a[flip],
                                     b[flip] if with_eta else b, m, n)  # fmt: skip
    np.testing.assert_allclose(grouped, want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fast.cluster_quadratic(g, ii, jj, kk, cluster, a, b, m, n), want,
                               rtol=1e-12, atol=1e-14)  # fmt: skip


@pytest.mark.parametrize("block", [sat.SHARE_BLOCK_CELLS, 7, 1])
@pytest.mark.parametrize("weighted", [False, True])
def test_share_sums_in_blocks_match_the_formula(weighted, block, monkeypatch):
    """Sums of w pi^2, w a and w a^2 (a = pi^2 / max(1 - pi, floor)) cluster by cluster, with
    a cluster holding all of a contrast's variance (pi = 1: the floor) and a contrast without
    variance; blocks of any size give the same."""
    monkeypatch.setattr(sat, "SHARE_BLOCK_CELLS", block)
    rng = np.random.default_rng(5)
    c, g = 4, 23
    omega = rng.exponential(size=(c, g))
    omega[1] = 0.0
    omega[1, 4] = 2.5  # one cluster alone
    omega[2] = 0.0  # no variance
    w = rng.integers(1, 6, g).astype(float) if weighted else None
    tr = omega @ (np.ones(g) if w is None else w)
    want = np.zeros((3, c))
    for k in range(c):
        for j in range(g):
            wt = 1.0 if w is None else w[j]
            with np.errstate(divide="ignore", invalid="ignore"):
                pi = omega[k, j] / tr[k]
            aa = pi * pi / max(1.0 - pi, DEGENERATE) if np.isfinite(pi) else np.nan
            want[:, k] += wt * np.array([pi * pi, aa, aa * aa])
    got = share_sums(omega, tr, w)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0.0)
    assert np.all(np.isnan(got[:, 2]))
