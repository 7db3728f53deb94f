"""Rank intervals and the pairwise table.

Coverage is checked on boards simulated by the independent helper (task effects make verdicts
on a task dependent; they flatten the Bradley-Terry strengths but keep their order, so the true
ranks are known): at the least favourable board (all models equally strong, where the joint
error rate of a max-|t| procedure is exactly its level) the simultaneous intervals must cover all
true ranks on about 95% of boards and per-comparison (unadjusted) intervals must not; on a
spread board they must be narrower than Bonferroni's from the same covariance and degrees of
freedom (computed here).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import simulate_verdicts
from scipy import stats
from statsmodels.stats.multitest import multipletests

import ratings
from ratings.inference.ranks import rank_intervals

EQUAL = np.zeros(6)
SPREAD = np.array([-0.8, -0.45, -0.15, 0.15, 0.45, 0.8])


def true_ranks(s: np.ndarray) -> np.ndarray:
    """1 + the number of strictly stronger models (ties share the better rank)."""
    return 1 + (s[None, :] > s[:, None]).sum(axis=1)


def board(seed: int, s: np.ndarray, n: int = 600, tasks: int = 30) -> pd.DataFrame:
    return simulate_verdicts(np.random.default_rng(seed), s, n, tasks, tie_fraction=0.1,
                             task_sd=0.5)  # fmt: skip


def decided(r: ratings.Ratings, crit: np.ndarray) -> pd.DataFrame:
    """Rank intervals from one critical value per pair (reference construction)."""
    ps = r.pair_stats
    better = np.isfinite(ps.se) & (ps.t > crit)
    m = len(r.models)
    return pd.DataFrame({"rank_lower": 1 + better.sum(axis=0), "rank_upper": m - better.sum(1)},
                        index=r.models)  # fmt: skip


def study(s: np.ndarray, n_boards: int, seed: int) -> dict:
    truth = pd.Series(true_ranks(s), index=[f"m{k:02d}" for k in range(s.size)])
    out = {"joint": [], "model": [], "naive": [], "width": [], "bonferroni": []}
    for b in range(n_boards):
        r = ratings.fit(board(seed + b, s))
        t = truth.reindex(r.models).to_numpy()
        ours = rank_intervals(r.pair_stats, r.models, r.level, n_draws=1000, seed=b)
        df = np.nan_to_num(r.pair_stats.df, nan=np.inf)
        k = s.size * (s.size - 1) / 2
        naive = decided(r, stats.t.ppf(0.975, df))
        bonf = decided(r, stats.t.ppf(1 - 0.05 / (2 * k), df))
        inside = (ours["rank_lower"].to_numpy() <= t) & (t <= ours["rank_upper"].to_numpy())
        out["joint"].append(inside.all())
        out["model"].append(inside)
        out["naive"].append(((naive["rank_lower"] <= t) & (t <= naive["rank_upper"])).all())
        out["width"].append((ours["rank_upper"] - ours["rank_lower"]).mean())
        out["bonferroni"].append((bonf["rank_upper"] - bonf["rank_lower"]).mean())
    return {k: np.mean(np.concatenate(v) if k == "model" else v) for k, v in out.items()}


def test_joint_coverage_at_the_least_favourable_board():
    res = study(EQUAL, 120, seed=100)
    # all true ranks are 1: a miss is any pair declared different (family-wise error ~ 5%)
    assert 0.9 <= res["joint"] <= 0.995, res
    assert res["model"] >= 0.95, res
    assert res["naive"] <= 0.8, res  # per-comparison 95% intervals: many false orderings


def test_narrower_than_bonferroni_on_a_spread_board():
    res = study(SPREAD, 60, seed=500)
    assert res["joint"] >= 0.95 and res["model"] >= 0.95, res
    assert res["width"] < res["bonferroni"] - 0.05, res


@pytest.fixture(scope="module")
def fitted() -> ratings.Ratings:
    return ratings.fit(board(7, np.linspace(-1.0, 1.0, 8), n=1500, tasks=40), anchor="m03")


def test_intervals_contain_the_point_rank_and_marginal_ones_are_inside(fitted):
    table = fitted.to_frame().set_index("model")
    assert (table["rank_lower"] <= table["rank"]).all()
    assert (table["rank"] <= table["rank_upper"]).all()
    marginal = fitted.rank_intervals(kind="marginal")
    assert (marginal["rank_lower"] >= table["rank_lower"].reindex(marginal.index)).all()
    assert (marginal["rank_upper"] <= table["rank_upper"].reindex(marginal.index)).all()
    # seeded: the same intervals again, from a fresh result
    again = ratings.fit(board(7, np.linspace(-1.0, 1.0, 8), n=1500, tasks=40), anchor="m03")
    pd.testing.assert_frame_equal(again.rank_intervals(), fitted.rank_intervals())


def test_pairwise_table(fitted):
    pw = fitted.pairwise()
    m = len(fitted.models)
    assert len(pw) == m * (m - 1) // 2
    assert (pw["elo_diff"] >= 0).all()  # the better-rated model first
    for _, row in pw.sample(6, random_state=0).iterrows():
        d = fitted.diff(row["model_a"], row["model_b"])
        p = fitted.win_probability(row["model_a"], row["model_b"])
        assert row["elo_diff"] == pytest.approx(d["estimate"])
        assert (row["lower"], row["upper"]) == pytest.approx((d["lower"], d["upper"]))
        assert row["df"] == pytest.approx(d["df"])
        assert (row["p_win"], row["p_win_lower"]) == pytest.approx((p["probability"],
                                                                    p["lower"]))  # fmt: skip
    t = pw["elo_diff"] / pw["se"]
    np.testing.assert_allclose(pw["p_value"], 2 * stats.t.sf(t, pw["df"]), rtol=1e-8)
    holm = fitted.pairwise(correction="holm")
    np.testing.assert_allclose(holm["p_adjusted"],
                               multipletests(holm["p_value"], method="holm")[1], rtol=1e-12)
    # max-t: between the raw p-value and Bonferroni's
    assert (pw["p_adjusted"] >= pw["p_value"] - 1e-12).all()
    bonf = np.minimum(1.0, len(pw) * pw["p_value"])
    assert (pw["p_adjusted"] <= bonf + 2.0 / 4000).all()
    with pytest.raises(ValueError, match="`correction` must be"):
        fitted.pairwise(correction="bonf")
    with pytest.warns(DeprecationWarning, match=r"pairwise\(correction=...\).*0\.3\.0"):
        old = fitted.pairwise(adjust="holm")
    pd.testing.assert_frame_equal(old, holm)


def test_tied_with_leader(fitted):
    ranks = fitted.rank_intervals()
    tied = fitted.tied_with_leader()
    assert tied[0] == fitted.elo.idxmax()
    assert set(tied) == set(ranks.index[ranks["rank_lower"] == 1])
    others = ", ".join(tied[1:]) or "none (ahead of every other model)"
    assert f"leader {tied[0]}, statistically tied with it: {others}" in fitted.summary()


def test_bootstrap_and_model_based_fits_have_rank_intervals():
    log = board(3, SPREAD)
    for kw in ({"ci": "model"}, {"ci": ratings.Bootstrap(n=60)}, {"cluster": None}):
        r = ratings.fit(log, **kw)
        table = r.to_frame()
        assert table["rank_lower"].notna().all() and (table["rank_lower"] >= 1).all()
        assert (table["rank_upper"] <= len(r.models)).all()


@pytest.mark.parametrize("share", [0.02, 0.6])
def test_step_down_reuses_the_draws_maxes_exactly(share):
    """After pairs are rejected, only draws whose max a removed pair attained are recomputed
    (found from the removed pairs when they are few): the maxes equal a full pass's."""
    from ratings.inference import ranks

    r = ratings.fit(board(3, SPREAD, n=2000, tasks=40))
    ps = r.pair_stats
    z = ranks._draws(ps, 300, seed=1)
    finite = np.isfinite(ps.se)
    before, arg = ranks._draw_argmax(ps, finite, z)
    np.testing.assert_array_equal(before, ranks._draw_max(ps, finite, z))
    removed = finite & (np.random.default_rng(2).random(finite.shape) < share)
    w = ranks._weights(ps, finite)
    top = (z[0][:, None] - z[0][None, :]) * w  # draw 0's max: its pair is removed
    removed[np.unravel_index(np.argmax(top), top.shape)] = True
    allowed = finite & ~removed
    got, got_arg = ranks._fewer_pairs(ps, allowed, z, before, arg, removed)
    want, want_arg = ranks._draw_argmax(ps, allowed, z)
    np.testing.assert_array_equal(got, ranks._draw_max(ps, allowed, z))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_arg, want_arg)
    assert not np.array_equal(got, before)


def test_each_pair_is_tested_at_its_own_t_quantile():
    """A pair is beyond its critical value when |t| exceeds scipy's t quantile at the
    one-sided rate of the Gaussian critical value (few df, many, infinite; NaN never), in the
    direction it may still be rejected."""
    from scipy.special import stdtrit

    from ratings.inference.ranks import _beyond

    rng = np.random.default_rng(5)
    m = 40
    df = rng.choice([1.5, 3.0, 7.0, 29.0, 400.0, 2500.0, np.inf, np.nan], (m, m))
    t = rng.normal(0.0, 4.0, (m, m))
    open_ = rng.random((m, m)) < 0.8
    for c in (1.8, 2.9, np.linspace(1.5, 3.5, m)[:, None]):
        rate = stats.norm.sf(np.broadcast_to(c, (m, m)))
        crit = np.where(np.isnan(df), np.inf, stdtrit(np.where(np.isnan(df), 1.0, df), 1 - rate))
        expected = open_ & (np.abs(t) > crit)
        margin = np.abs(np.abs(t) / crit - 1.0) > 1e-9  # away from rounding ties
        got = _beyond(c, df, t, open_)
        assert expected.any() and (~expected & open_).any()
        np.testing.assert_array_equal(got[margin], expected[margin])


def test_pairs_clearly_beyond_their_quantile_are_found_by_the_bounding_quantiles(monkeypatch):
    """A large board's many pairs beyond their critical value are found from the quantiles of
    a few of their degrees of freedom (each bounds those of more df): the same decisions as
    scipy's quantile of each pair's own df, and as each pair's tail probability, also for
    |t| a hair either side of the quantile, below one df and at exactly a bounding df."""
    from scipy.special import stdtrit

    from ratings.inference import ranks

    rng = np.random.default_rng(8)
    m = 120
    df = rng.choice(rng.uniform(0.8, 999.0, 40), (m, m))  # some exactly a bounding df
    spread = rng.random((m, m)) < 0.5
    df[spread] = rng.uniform(0.8, 999.0, spread.sum())
    few = rng.random((m, m)) < 0.05
    df[few] = rng.uniform(0.3, 3.0, few.sum())
    c = 3.7
    rate = stats.norm.sf(c)
    crit = stdtrit(df, 1.0 - rate)
    t = crit * rng.choice([0.5, 1.0 - 1e-7, 1.0 - 5e-10, 1.0 + 1e-7, 1.0 + 2e-9, 1.3, 6.0],
                          (m, m))  # fmt: skip
    open_ = rng.random((m, m)) < 0.9
    expected = open_ & (np.abs(t) > crit)
    found = []
    spy = ranks._clearly_beyond
    monkeypatch.setattr(ranks, "_clearly_beyond", lambda *a: found.append(spy(*a)) or found[-1])
    got = ranks._beyond(c, df, t, open_)
    assert found and found[0].sum() > 0.3 * expected.sum()  # many decided by the bound
    np.testing.assert_array_equal(got, expected)
    monkeypatch.setattr(ranks, "_BOUND_FROM", 10**9)  # every pair by its tail probability
    np.testing.assert_array_equal(ranks._beyond(c, df, t, open_), got)


# --- one order and one index across the tables ------------------------------------------------


def test_tables_share_one_order_and_index(fitted):
    """to_frame, conf_int, rank_intervals and pairwise: best first, indexed by model, ranks as
    integers (as statsmodels keeps params and conf_int on one index)."""
    table, ci, ranks = fitted.to_frame(), fitted.conf_int(), fitted.rank_intervals()
    best_first = fitted.elo.sort_values(ascending=False).index
    assert list(table.index) == list(best_first) == list(table["model"])
    assert ci.index.equals(table.index) and ranks.index.equals(table.index)
    pd.testing.assert_frame_equal(ci, table[["lower", "upper"]])
    pd.testing.assert_frame_equal(ranks, table[["rank_lower", "rank_upper"]])
    assert all(str(ranks[c].dtype) == "Int64" for c in ranks)
    pw = fitted.pairwise()
    position = {m: k for k, m in enumerate(table.index)}
    keys = [(position[a], position[b]) for a, b in zip(pw["model_a"], pw["model_b"],
                                                         strict=True)]  # fmt: skip
    assert keys == sorted(keys) and all(a < b for a, b in keys)
    assert list(pw.index) == list(zip(pw["model_a"], pw["model_b"], strict=True))
    assert pw.loc[(table.index[0], table.index[1]), "elo_diff"] == pytest.approx(
        table["elo"].iloc[0] - table["elo"].iloc[1])  # fmt: skip


def test_equal_ratings_are_ordered_by_name_in_every_table():
    cycle = pd.DataFrame({"model_a": ["c", "b", "a"] * 4, "model_b": ["b", "a", "c"] * 4,
                          "winner": ["A", "A", "A", "B", "B", "B"] * 2})  # fmt: skip
    r = ratings.fit(cycle, cluster=None)
    assert r.elo.nunique() == 1
    for frame in (r.to_frame(), r.conf_int(), r.rank_intervals()):
        assert list(frame.index) == ["a", "b", "c"]
    assert list(r.pairwise().index) == [("a", "b"), ("a", "c"), ("b", "c")]


# --- p_adjusted: the max-|t| probability, exact beyond the draws' reach -------------------------


def _pair_correlation(r: ratings.Ratings, pairs: list[tuple[int, int]]) -> np.ndarray:
    c = np.zeros((len(pairs), len(r.models)))
    for k, (j, i) in enumerate(pairs):
        c[k, j], c[k, i] = 1.0, -1.0
    v = c @ r.cov @ c.T
    d = np.sqrt(np.diag(v))
    return v / d[:, None] / d[None, :]


def _both_beyond(z: float, rho: float) -> float:
    """P(|X| >= z, |Y| >= z) for a standard bivariate normal with correlation rho (Simpson's
    rule over x beyond z, with Y | x normal)."""
    from scipy.integrate import simpson

    s = np.sqrt(1.0 - rho * rho)
    x = np.linspace(z, z + 12.0, 4001)
    f = stats.norm.pdf(x) * (stats.norm.sf((z - rho * x) / s) + stats.norm.cdf((-z - rho * x) / s))
    return 2.0 * float(simpson(f, x=x))


def test_p_adjusted_is_the_max_t_probability_in_the_body_and_the_tail():
    """On a per-verdict (normal) fit of five models, p_adjusted of every pair is
    P(max_i |T_i| >= |t|) over the ten pairs' joint normal law: against 400,000 plain draws of
    that law within the simulation's error where it is resolvable, and in the tail
    (p_value ~ 1e-11, where the draws reach no further than 1/4001) between the second-order
    Bonferroni bound (pairwise joint tails by numerical integration) and the first-order one,
    which agree there to 1e-3."""
    s = np.array([-1.2, -0.05, 0.0, 0.1, 1.3])
    r = ratings.fit(board(11, s, n=1200, tasks=60), cluster=None)
    pw = r.pairwise()
    index = {m: k for k, m in enumerate(r.models)}
    pairs = [(index[a], index[b]) for a, b in zip(pw["model_a"], pw["model_b"], strict=True)]
    corr = _pair_correlation(r, pairs)
    k = len(pairs)
    z = stats.norm.isf(pw["p_value"].to_numpy() / 2.0)
    tail = (pw["p_value"].to_numpy() < 1e-7) & (pw["p_value"].to_numpy() > 1e-14)
    body = pw["p_value"].to_numpy() > 1e-3
    assert tail.sum() >= 2 and body.sum() >= 3
    # the ten statistics live in four dimensions (a singular law): 400,000 plain draws
    lam, u = np.linalg.eigh(corr)
    factor = u[:, lam > 1e-10] * np.sqrt(lam[lam > 1e-10])
    rng = np.random.default_rng(2024)
    top = np.concatenate([np.abs(rng.standard_normal((100_000, factor.shape[1])) @ factor.T
                                 ).max(axis=1) for _ in range(4)])  # fmt: skip
    for i in np.flatnonzero(body):
        exact = float((top >= z[i]).mean())
        mc = 4.0 * np.sqrt(exact * (1.0 - exact) / 4000) + 2.0 / 4001
        assert abs(pw["p_adjusted"].iloc[i] - exact) <= mc + 4.0 * np.sqrt(exact / 400_000)
    for i in np.flatnonzero(tail):
        first = k * pw["p_value"].iloc[i]
        second = first - sum(_both_beyond(z[i], corr[u, v])
                             for u in range(k) for v in range(u + 1, k))  # fmt: skip
        assert second <= pw["p_adjusted"].iloc[i] <= first * (1 + 1e-12)
        assert first - second <= 1e-3 * first
        assert pw["p_adjusted"].iloc[i] < 1e-6  # not the 1 / 4001 floor


def test_a_first_step_computed_before_the_df_gives_the_same_intervals():
    """The step-down's first step (the draws and their maxes) needs no degrees of freedom: taken
    from the pairs' statistics before their df were known, it gives the intervals the
    step-down computes itself; one of other draws (seed, number) is not used."""
    from ratings.inference import ranks

    r = ratings.fit(board(5, SPREAD, n=2000, tasks=40))
    args, keywords = r._pair_inputs()
    geometry = ranks.pair_stats(*args, None, **keywords)
    assert geometry.df is None
    ps = ranks.with_df(geometry, r.pair_df())
    np.testing.assert_array_equal(ps.df, r.pair_stats.df)
    want = rank_intervals(r.pair_stats, r.models, r.level, n_draws=500, seed=4)
    first = ranks.first_step(geometry, 500, 4)
    z = ranks._draws(r.pair_stats, 500, 4)
    np.testing.assert_array_equal(first.z, z)
    np.testing.assert_array_equal(first.maxes, ranks._draw_max(ps, np.isfinite(ps.se), z))
    pd.testing.assert_frame_equal(rank_intervals(ps, r.models, r.level, n_draws=500, seed=4,
                                                 first=first), want)  # fmt: skip
    other = ranks.first_step(geometry, 500, 5)._replace(maxes=np.zeros(500))  # not these draws
    pd.testing.assert_frame_equal(rank_intervals(ps, r.models, r.level, n_draws=500, seed=4,
                                                 first=other), want)  # fmt: skip


@pytest.mark.parametrize("threads", ["1", "2"])
def test_the_table_starts_the_rank_intervals_beside_the_df(monkeypatch, threads):
    """``to_frame`` of a CR2 fit starts the rank intervals' first step on the pool (or at once
    on one thread) before the df, and reads it back: the table's rank intervals are those of
    :meth:`rank_intervals` on a fresh fit, where the step-down computes everything itself."""
    from ratings.inference import ranks

    monkeypatch.setenv("RATINGS_NUM_THREADS", threads)
    log = board(6, SPREAD, n=2000, tasks=40)
    calls = []
    real = ranks.first_step
    monkeypatch.setattr(ranks, "first_step", lambda *a: calls.append(a[1:]) or real(*a))
    r = ratings.fit(log)
    table = r.to_frame()
    assert calls == [(ranks.default_draws(len(r.models)), 0)] and not r._first_steps
    fresh = ratings.fit(log)
    assert fresh.pair_stats.df is not None  # df first: nothing started, the step-down draws
    want = fresh.rank_intervals()
    assert not fresh._first_steps and len(calls) == 2
    pd.testing.assert_frame_equal(table[["rank_lower", "rank_upper"]], want)
    pd.testing.assert_frame_equal(fresh.to_frame(), table)
