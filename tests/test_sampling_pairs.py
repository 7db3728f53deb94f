"""Each model's side of the pair counts (:meth:`sampling.board.pairs.PairCounts.by_model`) against
a count of the matches in plain Python."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from sampling.board.pairs import PairCounts


@pytest.mark.parametrize("m,t,n", [(2, 1, 1), (6, 3, 60), (40, 7, 3000), (9, 4, 0)])
def test_by_model_counts_each_models_cells(m, t, n):
    rng = np.random.default_rng(m * 100 + n)
    a = rng.integers(0, m - 1, n)  # the last model never plays
    b = (a + rng.integers(1, m - 1, n)) % (m - 1) if m > 2 else 1 - a
    task = rng.integers(0, t, n)
    key, count, start = PairCounts(m, t, a, b, task).by_model()
    for x in range(m):
        cells = Counter((int(y) * t + int(k)) for p, q, k in zip(a, b, task, strict=True)
                        for s, y in ((p, q), (q, p)) if s == x)  # fmt: skip
        expected = sorted(cells.items())
        got = list(zip(key[start[x]:start[x + 1]].tolist(), count[start[x]:start[x + 1]].tolist(),
                       strict=True))  # fmt: skip
        assert got == expected
    assert start[-1] == key.size == count.size
