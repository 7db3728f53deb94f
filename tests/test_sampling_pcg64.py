"""The pick loop's own PCG64 stream (:mod:`sampling.picks.pcg64_numba`) against numpy's generator,
and its lazily computed tie-breaks against numpy's draws."""

from __future__ import annotations

import numpy as np
import pytest

from sampling.picks import pcg64_numba, picker_numba


def test_draws_match_numpy_draw_for_draw():
    rng = np.random.default_rng(20240601)
    rng.random(3)  # any position in the stream
    words = pcg64_numba.state_words(rng.bit_generator)
    expected = rng.random(1000)
    got = np.array([pcg64_numba.next_double(words) for _ in range(1000)])
    np.testing.assert_array_equal(got, expected)
    assert pcg64_numba.state_words(rng.bit_generator).tolist() == words.tolist()


@pytest.mark.parametrize("delta", [0, 1, 2, 63, 4950, 44_850, 1_000_003])
def test_advance_and_draw_at_match_drawing(delta):
    rng = np.random.default_rng(delta)
    start = pcg64_numba.state_words(rng.bit_generator)
    drawn = rng.random(delta + 1)
    assert pcg64_numba.draw_at(start, delta, np.empty(4, dtype=np.uint64)) == drawn[delta]
    words = start.copy()
    pcg64_numba.advance(words, delta + 1)
    assert words.tolist() == pcg64_numba.state_words(rng.bit_generator).tolist()


def test_set_state_words_moves_the_generator():
    rng = np.random.default_rng(5)
    words = pcg64_numba.state_words(rng.bit_generator)
    pcg64_numba.advance(words, 10)
    pcg64_numba.set_state_words(rng.bit_generator, words)
    np.testing.assert_array_equal(rng.random(4), np.random.default_rng(5).random(14)[10:])


@pytest.mark.parametrize("m", [8, 40])  # 28 pairs: every tie-break computed alone; 780: drawn
def test_equal_scores_go_to_the_lowest_numpy_tie_break(m):
    """All pairs score the same, so the pick is the pair with the lowest of the tie-breaks
    numpy draws from the same state (pairs in triu order), among those a judge fits."""
    rng = np.random.default_rng(m)
    start = pcg64_numba.state_words(rng.bit_generator)
    n_pairs = m * (m - 1) // 2
    tie = rng.random(n_pairs)
    eye = np.eye(m)
    level = np.full((m, m), 2, dtype=np.int8)
    least = np.zeros((m, 1), dtype=bool)
    least[: m // 2] = True  # a judge fits the pairs among the first half only
    ties = (start, np.empty(n_pairs), np.zeros(2, dtype=np.int64), np.empty(4, dtype=np.uint64))
    for n_at in (n_pairs, 1):  # rows scored in one pass, and pair by pair
        ties[2][:] = 0
        a, c, score = picker_numba._best_at(
            2, False, n_at, level, np.ones(m, dtype=bool), ties, np.ones(m), np.ones(m), eye,
            eye, np.full((m, m), 0.25), 1.0, least, np.ones(1, dtype=np.int64), np.empty(m),
        )  # fmt: skip
        i, j = np.triu_indices(m, 1)
        fits = (i < m // 2) & (j < m // 2)
        k = np.flatnonzero(fits)[np.argmin(tie[fits])]
        assert (a, c) == (i[k], j[k])
        assert score == pytest.approx(0.25 * 2.0 / (1.0 + 0.25 * 2.0))
