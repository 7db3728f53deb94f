"""The CR2 series' models compared in one cluster only (``_lone_directions``), against a
brute-force scan of the rows, on boards where the row-count screen decides and where it
cannot."""

import numpy as np
import pytest

from ratings.inference import cluster as cluster_module
from ratings.inference.working import WorkingRows


def _rows(ii, jj, cl, m, g) -> WorkingRows:
    return WorkingRows(ii=ii, jj=jj, judge=np.zeros(ii.size, dtype=np.int64), cluster=cl,
                       a=np.ones(ii.size), b=np.zeros(0), n_clusters=g, n_params=m,
                       n_models=m)  # fmt: skip


def _lone_by_scan(ii, jj, cl, m) -> set[int]:
    """Models whose rows all lie in one cluster, by a loop over the rows."""
    seen: dict[int, set[int]] = {}
    for i, j, c in zip(ii.tolist(), jj.tolist(), cl.tolist(), strict=True):
        seen.setdefault(i, set()).add(c)
        seen.setdefault(j, set()).add(c)
    return {k for k, cs in seen.items() if len(cs) == 1}


@pytest.mark.parametrize("seed", range(40))
def test_lone_models_match_a_scan_of_the_rows(seed):
    rng = np.random.default_rng(seed)
    m, g, r = int(rng.integers(3, 9)), int(rng.integers(2, 7)), int(rng.integers(4, 60))
    cl = np.sort(rng.integers(0, g, r))
    ii = rng.integers(0, m, r)
    jj = (ii + rng.integers(1, m, r)) % m
    free = np.arange(1, m)
    out = cluster_module._lone_directions(_rows(ii, jj, cl, m, g), free)
    lone = _lone_by_scan(ii, jj, cl, m)
    want = sorted(k for k in lone if k != 0)  # free models: e_k; the reference: the free sum
    got = [int(free[np.flatnonzero(row)[0]]) for row in out[:len(want)]]
    assert got == want
    assert out.shape[0] == len(want) + (0 in lone)
    if 0 in lone:
        np.testing.assert_array_equal(out[-1], np.ones(free.size))


def test_no_lone_model_when_every_model_outnumbers_the_largest_cluster():
    """Each model with more rows than any cluster holds must span two clusters: none is lone,
    as the scan says (the screen that skips the per-model cluster range)."""
    rng = np.random.default_rng(3)
    m, g = 6, 4
    pairs = np.array([(i, j) for i in range(m) for j in range(i + 1, m)])
    blocks = [pairs[rng.permutation(len(pairs))] for _ in range(g)]
    ii = np.concatenate([b[:, 0] for b in blocks])
    jj = np.concatenate([b[:, 1] for b in blocks])
    cl = np.repeat(np.arange(g), len(pairs))
    assert _lone_by_scan(ii, jj, cl, m) == set()
    out = cluster_module._lone_directions(_rows(ii, jj, cl, m, g), np.arange(1, m))
    assert out.shape == (0, m - 1)
