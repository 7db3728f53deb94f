"""Invariances of the fit: labels, sides, duplication, aggregation, anchoring, engines, order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import assert_close, simulate_verdicts, statsmodels_bt
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import ratings
from ratings.api.fitting import fit
from ratings.data.comparisons import aggregate

FAST = settings(deadline=None, max_examples=30)
SWAP = {"A": "B", "B": "A", "tie": "tie"}


@st.composite
def boards(draw, min_models: int = 3, max_models: int = 6) -> pd.DataFrame:
    """A strongly connected simulated verdict log with ties and task effects."""
    seed = draw(st.integers(0, 2**32 - 1))
    m = draw(st.integers(min_models, max_models))
    rng = np.random.default_rng(seed)
    strengths = draw(st.floats(0.0, 1.5)) * rng.standard_normal(m)
    return simulate_verdicts(
        rng,
        strengths,
        draw(st.integers(40, 250)),
        draw(st.integers(3, 25)),
        tie_fraction=draw(st.sampled_from([0.0, 0.1, 0.3])),
        task_sd=draw(st.sampled_from([0.0, 0.5, 1.0])),
        tie_ring=True,
    )


# (ci, cluster column) for the three covariances
COVS = [("model", None), ("sandwich", None), ("sandwich", "task_id")]


def fit_log(log: pd.DataFrame, ci: str = "sandwich", cluster: str | None = "task_id", **kw):
    return fit(aggregate(log, cluster=cluster), ci=ci, **kw)


def assert_same_fit(r1, r2, *, atol: float = 1e-8) -> None:
    """Same labelled strengths and covariance (compared by model name)."""
    s1 = pd.Series(r1.strength, index=r1.models)
    s2 = pd.Series(r2.strength, index=r2.models).reindex(s1.index)
    np.testing.assert_allclose(s2.to_numpy(), s1.to_numpy(), rtol=0, atol=atol)
    c1 = r1.cov_params()
    c2 = r2.cov_params().reindex(index=c1.index, columns=c1.columns)
    assert_close(c2.to_numpy(), c1.to_numpy(), rtol=1e-7, atol_rel=1e-9)


@FAST
@given(log=boards(), seed=st.integers(0, 2**32 - 1))
def test_relabelling_models_permutes_ratings(log, seed):
    rng = np.random.default_rng(seed)
    old = sorted(set(log["model_a"]) | set(log["model_b"]))
    new = [f"z{k}" for k in rng.permutation(len(old))]  # another sorted order
    rename = dict(zip(old, new, strict=True))
    relabelled = log.assign(model_a=log["model_a"].map(rename), model_b=log["model_b"].map(rename))
    for ci, cluster in COVS:
        r1 = fit_log(log, ci, cluster)
        r2 = fit_log(relabelled, ci, cluster)
        back = {v: k for k, v in rename.items()}
        elo2 = r2.elo.rename(index=back).reindex(r1.models)
        np.testing.assert_allclose(elo2.to_numpy(), r1.elo.to_numpy(), atol=1e-6)
        cov2 = r2.cov_params().rename(index=back, columns=back).reindex(
            index=r1.models, columns=r1.models
        )
        assert_close(cov2.to_numpy(), r1.cov_params().to_numpy(), rtol=1e-7, atol_rel=1e-9)


@FAST
@given(log=boards())
def test_swapping_sides_together_with_the_verdict_changes_nothing(log):
    swapped = log.assign(
        model_a=log["model_b"], model_b=log["model_a"], winner=log["winner"].map(SWAP)
    )
    for ci, cluster in COVS:
        assert_same_fit(fit_log(log, ci, cluster), fit_log(swapped, ci, cluster))


@FAST
@given(log=boards())
def test_swapping_the_verdict_only_negates_strengths(log):
    flipped = log.assign(winner=log["winner"].map(SWAP))
    for ci, cluster in COVS:
        r1, r2 = fit_log(log, ci, cluster), fit_log(flipped, ci, cluster)
        np.testing.assert_allclose(r2.strength, -r1.strength, atol=1e-8)  # centred
        assert_close(r2.cov, r1.cov, rtol=1e-7, atol_rel=1e-9)  # cov(-s) = cov(s)


@FAST
@given(log=boards())
def test_duplicating_every_verdict(log):
    """Estimates stay; model-based and HC0 variances halve.

    Clustered: copies in their own cluster are perfectly dependent, so the covariance stays
    (H and the cluster scores both double, leverages stay: CR1 and CR2 alike). Copies in new
    clusters double G: for CR1 (``sandwich-z``) B doubles and the factor G/(G-1) becomes
    2G/(2G-1), so the covariance is multiplied by (G-1)/(2G-1).
    """
    twice = pd.concat([log, log], ignore_index=True)
    for ci, cluster in COVS[:2]:
        r1, r2 = fit_log(log, ci, cluster), fit_log(twice, ci, cluster)
        np.testing.assert_allclose(r2.strength, r1.strength, atol=1e-8)
        assert_close(r2.cov, r1.cov / 2, rtol=1e-7, atol_rel=1e-9)
    r1 = fit_log(log)
    same_cluster = fit_log(twice)
    np.testing.assert_allclose(same_cluster.strength, r1.strength, atol=1e-8)
    assert_close(same_cluster.cov, r1.cov, rtol=1e-7, atol_rel=1e-9)
    g = log["task_id"].nunique()
    copies = log.assign(task_id=log["task_id"] + "-copy")
    r1 = fit_log(log, "sandwich-z")
    new_clusters = fit_log(pd.concat([log, copies], ignore_index=True), "sandwich-z")
    assert new_clusters.n_clusters == 2 * g
    np.testing.assert_allclose(new_clusters.strength, r1.strength, atol=1e-8)
    assert_close(new_clusters.cov, r1.cov * (g - 1) / (2 * g - 1), rtol=1e-7, atol_rel=1e-9)


@FAST
@given(log=boards(max_models=4))
def test_aggregation_keeps_hc0_and_cluster_covariances(log):
    """Collapsing identical rows loses nothing: same fit as one row per verdict (own judge)."""
    unique = log.assign(judge=[f"j{k}" for k in range(len(log))])
    for ci, cluster in COVS:
        agg, raw = aggregate(log, cluster=cluster), aggregate(unique, cluster=cluster)
        assert raw.n_rows == len(log) and agg.n_rows < len(log)
        assert_same_fit(fit(agg, ci=ci), fit(raw, ci=ci))


@settings(deadline=None, max_examples=10)
@given(log=boards(max_models=4))
def test_aggregated_fit_matches_statsmodels_on_raw_rows(log):
    models = sorted(set(log["model_a"]) | set(log["model_b"]))
    textbook = [("model", None), ("sandwich", None), ("sandwich-z", "task_id")]  # CR1 clustered
    scale = None  # the model-based variance: robust entries far below it are rounding noise
    for (ci, cluster), cov_type in zip(textbook, ["nonrobust", "HC0", "cluster"], strict=True):
        _, params, cov = statsmodels_bt(log, cov_type, log["task_id"].to_numpy())
        r = fit_log(log, ci, cluster, anchor=models[0])
        scale = float(np.max(np.abs(cov))) if scale is None else scale
        # (a board whose estimate is exactly 0 leaves statsmodels' rounding, ~1e-17)
        assert_close(r.strength[1:], params, rtol=1e-7, atol_rel=1e-9, atol_min=1e-12)
        np.testing.assert_allclose(r.cov[1:, 1:], cov, rtol=1e-6, atol=1e-8 * scale)


@FAST
@given(log=boards(), rating=st.floats(-3000, 3000), which=st.integers(0, 5))
def test_reanchor_keeps_differences_and_their_intervals(log, rating, which):
    r = fit_log(log)
    name = r.models[which % len(r.models)]
    moved = r.reanchor(name, rating)
    assert moved.elo[name] == pytest.approx(rating, abs=1e-9)
    assert moved.se[name] == pytest.approx(0.0, abs=1e-9)
    d1 = r.elo.to_numpy()[:, None] - r.elo.to_numpy()[None, :]
    d2 = moved.elo.to_numpy()[:, None] - moved.elo.to_numpy()[None, :]
    np.testing.assert_allclose(d2, d1, atol=1e-8)
    for a in r.models:
        for b in r.models:
            pd.testing.assert_series_equal(moved.diff(a, b), r.diff(a, b), rtol=1e-9, atol=1e-8)
    # Anchoring at fit time is the same as re-anchoring afterwards, and back to centred.
    anchored = fit_log(log, anchor=(name, rating))
    assert_same_fit(anchored, moved)
    np.testing.assert_allclose(anchored.elo, moved.elo, atol=1e-6)
    back = anchored.reanchor(None, 1000.0)
    assert_same_fit(back, r)
    np.testing.assert_allclose(back.elo, r.elo, atol=1e-6)


@FAST
@given(log=boards())
def test_numpy_engine_equals_numba_engine(log):
    for ci, cluster in COVS:
        r1 = fit_log(log, ci, cluster, solver=ratings.Solver(engine="numba"))
        r2 = fit_log(log, ci, cluster, solver=ratings.Solver(engine="numpy"))
        np.testing.assert_allclose(r2.strength, r1.strength, rtol=0, atol=1e-10)
        assert_close(r2.cov, r1.cov, rtol=1e-10, atol_rel=1e-12)
        assert r2.loglik == pytest.approx(r1.loglik, rel=1e-12)


@FAST
@given(log=boards(), seed=st.integers(0, 2**32 - 1))
def test_row_order_does_not_matter(log, seed):
    shuffled = log.sample(frac=1.0, random_state=np.random.default_rng(seed))
    for ci, cluster in COVS:
        r1, r2 = fit_log(log, ci, cluster), fit_log(shuffled, ci, cluster)
        np.testing.assert_allclose(r2.strength, r1.strength, rtol=0, atol=1e-8)
        assert_close(r2.cov, r1.cov, rtol=1e-8, atol_rel=1e-10)


@FAST
@given(log=boards())
def test_narrower_intervals_at_lower_level(log):
    r = fit_log(log)
    wide = r.conf_int(0.95).reindex(r.models)  # best first: to the order of `elo`
    narrow = r.conf_int(0.9).reindex(r.models)
    # the critical value: Student t with each rating's own (Satterthwaite) df by default
    df = r.model_df
    ok = np.isfinite(r.se.to_numpy()) & (r.se.to_numpy() > 0)  # the anchor / undefined ones
    assert ok.any() and np.all(np.isfinite(df[ok])) and np.all(df[ok] > 0)
    assert (narrow["lower"] > wide["lower"])[ok].all()
    assert (narrow["upper"] < wide["upper"])[ok].all()
    ratio = ((narrow["upper"] - narrow["lower"]) / (wide["upper"] - wide["lower"]))[ok]
    crit = stats.t.ppf(0.95, df[ok]) / stats.t.ppf(0.975, df[ok])
    np.testing.assert_allclose(ratio, crit, rtol=1e-7)  # t quantiles of two implementations
    # Symmetric about the rating, half-width crit * se; no interval where there is no se.
    np.testing.assert_allclose(((wide["upper"] + wide["lower"]) / 2)[ok], r.elo[ok], rtol=1e-12)
    np.testing.assert_allclose(((wide["upper"] - wide["lower"]) / 2)[ok],
                               stats.t.ppf(0.975, df[ok]) * r.se[ok], rtol=1e-7)  # fmt: skip
    assert np.isinf(wide["lower"][np.isinf(r.se)]).all()
    table = r.to_frame(level=0.9).set_index("model")
    np.testing.assert_allclose(table.loc[r.models, "lower"], narrow["lower"], rtol=1e-12)


@FAST
@given(log=boards())
def test_win_probability_is_the_elo_formula(log):
    r = fit_log(log)
    elo = r.elo.sort_values()
    names = list(elo.index)
    for a in names:
        for b in names:
            if a == b:
                continue
            p = r.win_probability(a, b)
            expected = 1.0 / (1.0 + 10.0 ** (-(elo[a] - elo[b]) / 400.0))
            assert 0.0 < p["probability"] < 1.0
            assert p["probability"] == pytest.approx(expected, rel=1e-10)
            assert p["lower"] <= p["probability"] <= p["upper"]
            assert p["probability"] + r.win_probability(b, a)["probability"] == pytest.approx(1.0)
    # Monotone: against any fixed opponent, a stronger model has a higher win probability.
    for c in names:
        probs = [r.win_probability(a, c)["probability"] for a in names if a != c]
        assert np.all(np.diff(probs) >= -1e-12)  # equal Elo: equal up to rounding


@FAST
@given(log=boards())
def test_dataframe_input_equals_aggregated_input(log):
    """``fit`` reads a canonical DataFrame itself; clustering by ``task_id`` is the default."""
    for ci, cluster in COVS:
        kw = {} if cluster else {"cluster": None}
        assert_same_fit(ratings.fit(log, ci=ci, **kw), fit_log(log, ci, cluster), atol=1e-12)


def test_clustered_sandwich_needs_two_clusters(board):
    one_task = board.assign(task_id="only")
    with pytest.raises(ValueError, match=r"at least 2 clusters in `task_id`; got 1"):
        fit_log(one_task)
    assert np.all(np.isfinite(fit_log(one_task, cluster=None).cov))


@pytest.fixture(scope="module")
def big_board() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return simulate_verdicts(
        rng, [0.0, 0.5, -0.5, 1.0, -1.0, 0.25], 3000, 300, tie_fraction=0.1, task_sd=0.5
    )


@pytest.mark.parametrize("cluster", ["task_id", None])
def test_bootstrap_is_seeded_and_close_to_sandwich(big_board, cluster):
    data = aggregate(big_board, cluster=cluster)
    b1 = fit(data, ci=ratings.Bootstrap(n=50, seed=5))
    b2 = fit(data, ci=ratings.Bootstrap(n=50, seed=5))
    b3 = fit(data, ci=ratings.Bootstrap(n=50, seed=6))
    np.testing.assert_array_equal(b1.draws, b2.draws)
    pd.testing.assert_frame_equal(b1.to_frame(), b2.to_frame())
    assert not np.allclose(b1.draws, b3.draws)
    assert b1.draws.shape == (50, 6)
    sandwich = fit(data, ci="sandwich")
    np.testing.assert_allclose(b1.strength, sandwich.strength, atol=1e-12)
    ratio = b1.se / sandwich.se
    assert ((ratio > 1 / 1.5) & (ratio < 1.5)).all(), ratio
    ci = b1.conf_int().reindex(b1.models)  # best first: to the order of `elo`
    assert ((ci["lower"] < b1.elo) & (b1.elo < ci["upper"])).all()
