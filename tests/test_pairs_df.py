"""Every pair's exact Satterthwaite df from the unit contrasts' cross products
(:func:`ratings.inference.batched.pairs_df`, what the rank intervals read) against the
verdict-level textbook formula (Bell & McCaffrey's adjustment, Pustejovsky & Tipton's df with
N x N matrices, ``test_inference.py``), on the sparse path (designs merged, weights above 1)
and on the dense one, and against the one Gram product per pair it replaces."""

from __future__ import annotations

import numpy as np
import pytest
from test_batched_df import _board
from test_inference import _contrast, bt_reference

import ratings
import ratings.inference.batched as batched
import ratings.inference.small as small_module


def _fit_counting_pairs(log, monkeypatch, small: bool):
    calls = []
    real = batched.pairs_df

    def spy(*args):
        calls.append(args[1].size)
        return real(*args)

    with monkeypatch.context() as mp:
        mp.setattr(small_module, "use_small_path", lambda *a: small)
        mp.setattr(batched, "pairs_df", spy)
        r = ratings.fit(log, anchor="m0")
        pairs = r.pair_df()
    return r, pairs, calls


@pytest.mark.parametrize("small", [True, False])
@pytest.mark.parametrize("seed", [3, 5])
def test_pairs_df_match_the_textbook_formula(seed, small, monkeypatch):
    log = _board(seed)
    r, pairs, calls = _fit_counting_pairs(log, monkeypatch, small)
    m = len(r.models)
    assert calls == [m * (m - 1) // 2]  # every pair, by the unit contrasts' products
    if small:
        assert not np.all(r.inference._basis.weight == 1.0)  # designs standing for several
    ref = bt_reference(log, r)
    models = list(r.models)
    for j in range(m):
        for k in range(j + 1, m):
            want = ref.df(_contrast(models, models[j], models[k]))
            assert pairs[j, k] == pytest.approx(want, rel=1e-6)
            assert pairs[k, j] == pairs[j, k]


def test_pairs_df_equal_one_gram_product_per_pair(monkeypatch):
    log = _board(6)
    r = ratings.fit(log)
    got = r.inference.pair_df()
    monkeypatch.setattr(batched, "MAX_PAIR_BLOCKS", 0)  # the per-pair Gram products
    want = r.inference.pair_df()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_pair_batches_do_not_change_the_df(monkeypatch):
    r = ratings.fit(_board(7))
    whole = r.inference.pair_df()
    monkeypatch.setattr(batched, "PAIR_GRAM_CELLS", 1)  # one pair a batch
    np.testing.assert_allclose(r.inference.pair_df(), whole, rtol=1e-14)
