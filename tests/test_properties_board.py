"""Invariances of ``ratings.fit`` over random boards (hypothesis).

Each property builds a random, strongly connected board (a tie ring between neighbours keeps the
maximum-likelihood estimate finite whatever was drawn), transforms it in a way whose effect on the
fit is known exactly, and compares the two fits model by model:

* relabelling models permutes the ratings;
* swapping the A/B sides of a verdict together with its winner changes nothing;
* duplicating every verdict keeps the estimate, halves the per-verdict (HC0) and model-based
  variances, and keeps the clustered ones (each cluster's influence is unchanged);
* the counts table of a log (``from_counts``; split, reoriented and shuffled rows) fits exactly
  as the log does;
* changing the anchor (refit or ``reanchor``) leaves every difference and its interval unchanged;
* a disconnected model makes the fit raise :class:`~ratings.NonIdentifiableError` naming it;
* strengths up to +-20 logits fit without overflow, NaN or non-finite standard errors.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.special import expit

import ratings
from ratings.core.errors import NonIdentifiableError
from ratings.data.comparisons import from_counts

FAST = settings(
    deadline=None, max_examples=20, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
FLIP = {"A": "B", "B": "A", "tie": "tie"}
# (ci, cluster) covering the three covariances: model-based, per-verdict HC0, clustered.
COVS = [("model", None), ("sandwich", None), ("sandwich", "task_id")]


@pytest.fixture(scope="module", autouse=True)
def _compiled() -> None:
    ratings.warmup()  # numba kernels from the on-disk cache, outside hypothesis' timing


def simulate(
    seed: int, strengths: np.ndarray, n_verdicts: int, n_tasks: int, tie_fraction: float
) -> pd.DataFrame:
    """A verdict log with a tie ring between neighbours (in strength order), so the win graph is
    strongly connected: every model ties its neighbours, hence reaches every other model."""
    rng = np.random.default_rng(seed)
    m = strengths.size
    names = np.array([f"m{k:02d}" for k in range(m)], dtype=object)
    a = rng.integers(0, m, n_verdicts)
    b = (a + rng.integers(1, m, n_verdicts)) % m
    a_wins = rng.random(n_verdicts) < expit(strengths[a] - strengths[b])
    tie = rng.random(n_verdicts) < tie_fraction
    log = pd.DataFrame({
        "model_a": names[a],
        "model_b": names[b],
        "winner": np.where(tie, "tie", np.where(a_wins, "A", "B")),
        "task_id": [f"t{k:03d}" for k in rng.integers(0, n_tasks, n_verdicts)],
    })
    order = names[np.argsort(strengths, kind="stable")]
    ring = pd.DataFrame({
        "model_a": order[:-1], "model_b": order[1:], "winner": "tie",
        "task_id": [f"t{k % n_tasks:03d}" for k in range(m - 1)],
    })  # fmt: skip
    return pd.concat([log, ring], ignore_index=True)


@st.composite
def boards(draw, max_logit: float = 1.5) -> pd.DataFrame:
    seed = draw(st.integers(0, 2**32 - 1))
    m = draw(st.integers(3, 7))
    spread = draw(st.floats(0.0, max_logit))
    strengths = spread * np.random.default_rng(seed ^ 0x5EED).uniform(-1.0, 1.0, m)
    return simulate(
        seed, strengths, draw(st.integers(30, 200)), draw(st.integers(3, 20)),
        draw(st.sampled_from([0.0, 0.1, 0.3])),
    )  # fmt: skip


def fit(log, ci: str = "sandwich", cluster: str | None = "task_id", **kw) -> ratings.Ratings:
    return ratings.fit(log, ci=ci, cluster=cluster, **kw)


def assert_same(r1: ratings.Ratings, r2: ratings.Ratings, *, rename=None, var_ratio=1.0) -> None:
    """Same Elo per model (r2's names mapped back by ``rename``) and covariance * ``var_ratio``."""
    names = list(r1.models)
    other = names if rename is None else [rename[n] for n in names]
    np.testing.assert_allclose(r2.elo[other].to_numpy(), r1.elo[names].to_numpy(),
                               rtol=0, atol=1e-6)  # fmt: skip
    c1 = r1.cov_params().loc[names, names].to_numpy()
    c2 = r2.cov_params().loc[other, other].to_numpy()
    scale = max(float(np.abs(c1).max()), 1e-12)
    np.testing.assert_allclose(c2, var_ratio * c1, rtol=1e-6, atol=1e-9 * scale)


@FAST
@given(log=boards(), seed=st.integers(0, 2**32 - 1), cov=st.sampled_from(COVS))
def test_relabelling_models_permutes_ratings(log, seed, cov):
    names = sorted(set(log["model_a"]) | set(log["model_b"]))
    shuffled = np.random.default_rng(seed).permutation(len(names))
    # New names sort in another order than the old ones: the model index really changes.
    rename = {n: f"x{int(k):02d}-{n}" for n, k in zip(names, shuffled, strict=True)}
    relabelled = log.assign(model_a=log["model_a"].map(rename), model_b=log["model_b"].map(rename))
    ci, cluster = cov
    assert_same(fit(log, ci, cluster), fit(relabelled, ci, cluster), rename=rename)


@FAST
@given(log=boards(), seed=st.integers(0, 2**32 - 1), cov=st.sampled_from(COVS))
def test_swapping_sides_with_flipped_winner_changes_nothing(log, seed, cov):
    swap = np.random.default_rng(seed).random(len(log)) < 0.5
    swapped = log.copy()
    swapped.loc[swap, "model_a"] = log.loc[swap, "model_b"]
    swapped.loc[swap, "model_b"] = log.loc[swap, "model_a"]
    swapped.loc[swap, "winner"] = log.loc[swap, "winner"].map(FLIP)
    ci, cluster = cov
    assert_same(fit(log, ci, cluster), fit(swapped, ci, cluster))


@FAST
@given(log=boards(), cov=st.sampled_from(COVS))
def test_duplicating_every_verdict_halves_per_verdict_and_model_variances(log, cov):
    ci, cluster = cov
    doubled = pd.concat([log, log], ignore_index=True)
    once, twice = fit(log, ci, cluster), fit(doubled, ci, cluster)
    # Per-verdict (HC0) and model-based: twice the information, half the variance. Clustered by
    # task: each cluster's score doubles and so does the Hessian, so its influence is unchanged.
    assert_same(once, twice, var_ratio=1.0 if cluster else 0.5)
    assert twice.n_verdicts == 2 * once.n_verdicts


def counts_table(log: pd.DataFrame, seed: int) -> pd.DataFrame:
    """The log's counts per (task, model_a, model_b), with rows split in two, some pairs written
    in the other order (wins swapped), and rows shuffled: ``from_counts`` must sum them back."""
    rng = np.random.default_rng(seed)
    cells = ["wins_a", "wins_b", "ties"]
    counts = (log.assign(wins_a=log["winner"].eq("A").astype(np.int64),
                         wins_b=log["winner"].eq("B").astype(np.int64),
                         ties=log["winner"].eq("tie").astype(np.int64))
              .groupby(["task_id", "model_a", "model_b"], as_index=False)[cells].sum())  # fmt: skip
    part = counts.copy()
    for col in cells:
        part[col] = rng.integers(0, counts[col].to_numpy() + 1)
    rest = counts.copy()
    rest[cells] = counts[cells] - part[cells]
    flip = rng.random(len(rest)) < 0.5
    rest.loc[flip, ["model_a", "model_b", "wins_a", "wins_b"]] = rest.loc[
        flip, ["model_b", "model_a", "wins_b", "wins_a"]].to_numpy()  # fmt: skip
    table = pd.concat([part, rest], ignore_index=True)
    return table.iloc[rng.permutation(len(table))].reset_index(drop=True)


@FAST
@given(log=boards(), seed=st.integers(0, 2**32 - 1), cov=st.sampled_from(COVS))
def test_fit_on_log_equals_fit_on_its_counts_table(log, seed, cov):
    ci, cluster = cov
    table = counts_table(log, seed)
    assert int(table[["wins_a", "wins_b", "ties"]].to_numpy().sum()) == len(log)
    on_log = fit(log, ci, cluster)
    assert_same(on_log, fit(table, ci, cluster))  # a counts DataFrame, read by ratings.fit
    assert_same(on_log, ratings.fit(from_counts(table, cluster=cluster), ci=ci))
    assert on_log.counts.equals(fit(table, ci, cluster).counts)


@FAST
@given(log=boards(), data=st.data(), cov=st.sampled_from(COVS),
       rating=st.floats(-5000.0, 5000.0, allow_nan=False))  # fmt: skip
def test_anchor_change_keeps_differences_and_their_intervals(log, data, cov, rating):
    names = sorted(set(log["model_a"]) | set(log["model_b"]))
    first = data.draw(st.sampled_from(names))
    second = data.draw(st.sampled_from([*names, None]))
    ci, cluster = cov
    base = fit(log, ci, cluster, anchor=first)
    moved = base.reanchor(second, rating)
    refit = fit(log, ci, cluster, anchor=(second, rating))
    centred = fit(log, ci, cluster)
    for a, b in itertools.permutations(names, 2):
        want = base.diff(a, b)
        for other in (moved, refit, centred):
            np.testing.assert_allclose(other.diff(a, b).to_numpy(), want.to_numpy(),
                                       rtol=1e-7, atol=1e-6)  # fmt: skip
    if second is not None:
        assert moved.elo[second] == pytest.approx(rating, abs=1e-9)
        assert moved.se[second] == pytest.approx(0.0, abs=1e-9)
        assert refit.elo[second] == pytest.approx(rating, abs=1e-6)
    else:
        assert moved.elo.mean() == pytest.approx(rating, abs=1e-6)
    assert_same(moved, refit)


@FAST
@given(log=boards(), data=st.data())
def test_disconnected_models_raise_naming_them(log, data):
    names = sorted(set(log["model_a"]) | set(log["model_b"]))
    # Two new models that only play each other (both ways, so they form their own group).
    island = pd.DataFrame({"model_a": ["zz-new-1", "zz-new-2"], "model_b": ["zz-new-2", "zz-new-1"],
                           "winner": data.draw(st.sampled_from([["A", "A"], ["tie", "B"]])),
                           "task_id": "t-island"})  # fmt: skip
    with pytest.raises(NonIdentifiableError, match=r"never compared") as err:
        ratings.fit(pd.concat([log, island], ignore_index=True))
    assert "zz-new-1" in str(err.value) and "zz-new-2" in str(err.value)
    assert sorted(["zz-new-1", "zz-new-2"]) in [sorted(g) for g in err.value.groups]

    # A new model that only ever won: connected, but its rating would be infinite.
    victim = data.draw(st.sampled_from(names))
    champ = pd.DataFrame({"model_a": [victim, "zz-champ"], "model_b": ["zz-champ", victim],
                          "winner": ["B", "A"], "task_id": "t-champ"})  # fmt: skip
    with pytest.raises(NonIdentifiableError, match=r"never lost or tied: \['zz-champ'\]") as err:
        ratings.fit(pd.concat([log, champ], ignore_index=True))
    assert err.value.never_lost == ["zz-champ"]


@st.composite
def extreme_boards(draw) -> pd.DataFrame:
    """Strengths spread over [-L, L] with L up to 20 logits: nearly every verdict is decided by
    strength, and only the tie ring keeps the estimate finite."""
    seed = draw(st.integers(0, 2**32 - 1))
    m = draw(st.integers(3, 9))
    limit = draw(st.floats(5.0, 20.0))
    s = np.sort(np.random.default_rng(seed ^ 0xE1).uniform(-limit, limit, m))
    s[0], s[-1] = -limit, limit
    return simulate(seed, s, draw(st.integers(50, 400)), draw(st.integers(3, 30)),
                    tie_fraction=0.0)  # fmt: skip


@FAST
@given(log=extreme_boards(), cov=st.sampled_from(COVS))
def test_extreme_strengths_fit_without_overflow(log, cov):
    ci, cluster = cov
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # NumPy code must not overflow
        r = fit(log, ci, cluster)
    assert r.converged
    assert np.isfinite(r.strength).all() and np.isfinite(r.cov).all()
    assert np.isfinite(r.elo).all()
    se = r.se.to_numpy()
    assert np.isfinite(se).all() and (se > 0).all()
    table = r.to_frame()
    assert np.isfinite(table[["elo", "se", "lower", "upper"]].to_numpy()).all()
    assert (table["lower"] <= table["elo"]).all() and (table["elo"] <= table["upper"]).all()
    p = r.win_probability(table["model"].iloc[0], table["model"].iloc[-1])
    prob = p[["probability", "lower", "upper"]]  # df is NaN for a normal quantile
    assert np.isfinite(prob.to_numpy()).all() and 0.5 <= p["probability"] <= 1.0
