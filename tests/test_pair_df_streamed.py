"""Every pair's large-board df streamed over blocks of clusters equals the formula on the whole
clusters x models matrix, written out pair by pair (:func:`helpers.one_direction_pairs_df`)."""

import pickle

import numpy as np
import pytest
from helpers import one_direction_pairs_df

import ratings
from ratings.inference import pairdf
from ratings.inference.pairdf import streamed_pairs_df
from ratings.inference.working import WorkingRows


def _rows(seed: int, n_models: int, sizes, *, n_judges: int = 0, repeat: int = 1) -> WorkingRows:
    """Random working rows: clusters of ``sizes`` rows; one-row clusters drawn from few designs
    (``repeat`` clusters per design) so that merging them is exercised."""
    rng = np.random.default_rng(seed)
    ii, jj, kk, cl, a, b = [], [], [], [], [], []
    designs = {}
    for g, size in enumerate(sizes):
        for _ in range(size):
            if size == 1 and repeat > 1:
                d = int(rng.integers(0, max(1, len(sizes) // repeat)))
                if d not in designs:
                    i, j = rng.choice(n_models, 2, replace=False)
                    designs[d] = (min(i, j), max(i, j), int(rng.integers(0, max(n_judges, 1))),
                                  rng.uniform(0.2, 0.5), rng.uniform(-0.3, 0.3))
                i, j, k, ar, br = designs[d]
            else:
                i, j = sorted(rng.choice(n_models, 2, replace=False))
                k, ar, br = int(rng.integers(0, max(n_judges, 1))), rng.uniform(0.2, 0.5), \
                    rng.uniform(-0.3, 0.3)
            ii.append(i), jj.append(j), kk.append(k), cl.append(g), a.append(ar), b.append(br)
    n_params = n_models + n_judges
    return WorkingRows(np.array(ii), np.array(jj), np.array(kk), np.array(cl), np.array(a),
                       np.array(b) if n_judges else np.zeros(0), len(sizes), n_params,
                       n_models)  # fmt: skip


def _reference(rows: WorkingRows, n: np.ndarray) -> np.ndarray:
    return one_direction_pairs_df(rows.quadratic(n).T)


@pytest.mark.parametrize(("sizes", "n_judges", "repeat"), [
    ([1] * 600, 0, 4),                      # an arena: one-verdict tasks, designs repeated
    ([1] * 400 + [3, 7, 12] * 5, 0, 3),     # mixed: many singletons and a few larger tasks
    ([2, 5, 1, 1, 9] * 40, 2, 1),           # Crowd-BT rows (judge qualities)
    ([1] * 30 + [40] * 2, 0, 1),            # concentrated models (few, large clusters)
])  # fmt: skip
def test_streamed_equals_whole_matrix(monkeypatch, sizes, n_judges, repeat):
    rows = _rows(7, 12, sizes, n_judges=n_judges, repeat=repeat)
    rng = np.random.default_rng(3)
    n = rng.normal(size=(rows.n_params, rows.n_models))
    monkeypatch.setattr(pairdf, "BLOCK_CELLS", 12 * 37)  # many blocks of 37 groups
    got = streamed_pairs_df(rows, n)
    want = _reference(rows, n)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=0)


def test_concentrated_cases_are_taken():
    # one model seen in a single cluster carries its whole variance there: share 1
    rows = _rows(2, 6, [1] * 50 + [30], repeat=1)
    n = np.random.default_rng(1).normal(size=(rows.n_params, rows.n_models))
    u = rows.quadratic(n).T
    share = (u / u.sum(axis=1, keepdims=True)).max(axis=1)
    assert (share > 0.02).any()
    np.testing.assert_allclose(streamed_pairs_df(rows, n), one_direction_pairs_df(u), rtol=1e-10)


def test_fit_pair_df_past_the_budget_equals_whole_matrix(monkeypatch):
    """An arena-shaped fit past the exact budget: the result's pair df through the streamed
    path equals the whole-matrix formula on the same fit's clusters."""
    from ratings.inference import cluster

    rng = np.random.default_rng(5)
    m, n = 15, 3000
    s = rng.normal(size=m)
    i = rng.integers(0, m, n)
    j = (i + rng.integers(1, m, n)) % m
    win = np.where(rng.random(n) < 1 / (1 + np.exp(-(s[i] - s[j]))), "A", "B").astype(object)
    win[rng.random(n) < 0.1] = "tie"
    names = np.array([f"m{k:02d}" for k in range(m)])
    import pandas as pd

    df = pd.DataFrame({"model_a": names[i], "model_b": names[j], "winner": win,
                       "task_id": np.arange(n)})  # fmt: skip
    monkeypatch.setattr(cluster, "EXACT_BUDGET", 1.0)
    r = ratings.fit(df)
    got = r.pair_df()
    inf = r.inference
    c = inf._free_contrasts(np.eye(m) - 1.0 / m)
    want = one_direction_pairs_df(inf.rows.quadratic(inf._directions(c)).T)
    np.fill_diagonal(want, np.nan)
    np.testing.assert_allclose(got, want, rtol=1e-10)
    assert np.isfinite(got[~np.eye(m, dtype=bool)]).all()


def test_pair_df_read_first_hold_the_ratings_shares(monkeypatch):
    """On the series path the pairs' df read before the ratings' make the ratings' shares
    and sum theirs: one pass over the rows for both (not the pairs' streamed pass and the
    ratings' again), with the df of a fit whose ratings' df were read first."""
    from helpers import simulate_verdicts

    from ratings.inference import cluster

    rng = np.random.default_rng(5)
    log = simulate_verdicts(rng, [0.0, 0.6, -0.4, 1.0, -0.8, 0.3, 0.5, -0.1], 1500, 40,
                            tie_fraction=0.1, task_sd=0.5)  # fmt: skip
    monkeypatch.setattr(cluster, "EXACT_BUDGET", 0.0)  # the series path
    monkeypatch.setenv("RATINGS_NUM_THREADS", "1")  # no shares made by the fit, ahead
    first = ratings.fit(log)
    assert first.inference.shape == "series"
    want_models, want_pairs = first.model_df, first.pair_df()  # the ratings' first
    r = ratings.fit(log)
    passes = []
    for name in ("quadratic", "quadratic_block"):
        real = getattr(WorkingRows, name)
        monkeypatch.setattr(WorkingRows, name,
                            lambda self, *a, _real=real, _n=name, **k: passes.append(_n)
                            or _real(self, *a, **k))  # fmt: skip
    np.testing.assert_array_equal(r.pair_df(), want_pairs)
    np.testing.assert_array_equal(r.model_df, want_models)
    assert passes == ["quadratic"]


@pytest.mark.parametrize("anchor", [None, "m3"])
def test_the_fit_makes_the_centred_shares_beside_the_series(monkeypatch, anchor):
    """On two threads a fit on the series path makes the designs' shares of the centred
    contrasts beside the series (:func:`ratings.inference.cluster._start_shares`): held
    before any df is read, they give the pairs' df of the whole-matrix formula and, without
    an anchor, the ratings' df with no further pass over the rows; with one, the ratings' df
    of their own contrasts. Every df equals a one-thread fit's, which made no shares."""
    from helpers import simulate_verdicts

    from ratings.inference import cluster

    rng = np.random.default_rng(8)
    s = [0.0, 0.6, -0.4, 1.0, -0.8, 0.3, 0.5, -0.1]
    log = simulate_verdicts(rng, s, 1500, 40, tie_fraction=0.1, task_sd=0.5)
    log = log.assign(model_a=log["model_a"].str.replace("m0", "m"),
                     model_b=log["model_b"].str.replace("m0", "m"))  # fmt: skip
    monkeypatch.setattr(cluster, "EXACT_BUDGET", 0.0)  # the series path
    monkeypatch.setenv("RATINGS_NUM_THREADS", "1")
    alone = ratings.fit(log, anchor=anchor)
    assert alone.inference._held_shares(alone.inference._free_contrasts(np.eye(8) - 1 / 8)) is None
    want_models, want_pairs = alone.model_df, alone.pair_df()
    monkeypatch.setenv("RATINGS_NUM_THREADS", "2")
    r = ratings.fit(log, anchor=anchor)
    inf, m = r.inference, len(r.models)
    back = pickle.loads(pickle.dumps(inf))  # (the shares, maybe still being made, waited for)
    c = inf._free_contrasts(np.eye(m) - 1.0 / m)
    assert inf.shape == "series" and inf._held_shares(c) is not None
    np.testing.assert_array_equal(back._held_shares(c)[0], inf._held_shares(c)[0])
    passes = []
    real = WorkingRows.quadratic
    monkeypatch.setattr(WorkingRows, "quadratic",
                        lambda self, *a, **k: passes.append(1) or real(self, *a, **k))
    np.testing.assert_array_equal(r.model_df, want_models)
    np.testing.assert_array_equal(r.pair_df(), want_pairs)
    assert len(passes) == (0 if anchor is None else 1)
    want = one_direction_pairs_df(real(inf.rows, inf._directions(c)).T)
    np.fill_diagonal(want, np.nan)
    np.testing.assert_allclose(r.pair_df(), want, rtol=1e-10)


def test_no_shares_ahead_where_the_df_would_load_numba(monkeypatch):
    """Where the shares' product would take the compiled kernels, the fit does not make them
    beside the series (the series looks for loaded kernels); the df make them when read."""
    from ratings.inference import cluster
    from ratings.kernels import engine

    rows = _rows(4, 10, [30] * 20)
    free = np.arange(1, 10)
    bread = np.eye(9)
    monkeypatch.setenv("RATINGS_NUM_THREADS", "2")
    ahead = cluster._start_shares(rows, free, bread)
    assert ahead is not None
    c, u = ahead.result()
    np.testing.assert_array_equal(u, rows.quadratic(cluster.lifted(c.T, free, 10)))
    monkeypatch.setattr(engine, "resolve", lambda *a: "numba")
    assert cluster._start_shares(rows, free, bread) is None
    monkeypatch.setenv("RATINGS_NUM_THREADS", "1")
    monkeypatch.undo()
    monkeypatch.setenv("RATINGS_NUM_THREADS", "1")
    assert cluster._start_shares(rows, free, bread) is None
