"""The maximum-likelihood ratings exist only for a strongly connected win graph."""

from __future__ import annotations

import re
import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from helpers import strongly_connected
from hypothesis import given, settings
from hypothesis import strategies as st

import ratings
from ratings.api.fitting import fit
from ratings.core.errors import DataWarning, NonIdentifiableError
from ratings.data.comparisons import aggregate


def log_of(*rows: tuple[str, str, str]) -> pd.DataFrame:
    """Verdicts from ``(model_a, model_b, winner)`` triples, one task per verdict."""
    a, b, w = zip(*rows, strict=True)
    return pd.DataFrame(
        {"model_a": a, "model_b": b, "winner": w, "task_id": [f"t{k}" for k in range(len(rows))]}
    )


def cycle(*names: str, times: int = 2) -> list[tuple[str, str, str]]:
    """Each model beats the next in a ring, ``times`` times: a strongly connected group."""
    ring = list(zip(names, names[1:] + names[:1], strict=True))
    return [(a, b, "A") for a, b in ring] * times


NEVER_LOST = log_of(*cycle("a", "b", "c"), ("top", "a", "A"), ("b", "top", "B"), ("c", "top", "B"))
NEVER_WON = log_of(*cycle("a", "b", "c"), ("a", "low", "A"), ("low", "b", "B"))
DISCONNECTED = log_of(*cycle("a", "b", "c"), *cycle("x", "y", "z"))
DOMINATING = log_of(
    *cycle("a", "b", "c"), *cycle("x", "y", "z"), ("a", "x", "A"), ("y", "b", "B"), ("c", "z", "A")
)
CASES = {
    "never_lost": NEVER_LOST,
    "never_won": NEVER_WON,
    "disconnected": DISCONNECTED,
    "dominating": DOMINATING,
}


def fit_log(log: pd.DataFrame, **kw):
    return fit(aggregate(log, cluster="task_id"), **kw)


def test_cases_are_what_they_claim():
    for log in CASES.values():
        assert not strongly_connected(log)
    assert strongly_connected(log_of(*cycle("a", "b", "c")))


def test_model_that_never_lost_is_named():
    with pytest.raises(NonIdentifiableError, match=r"1 model\(s\) never lost or tied: \['top'\]"):
        fit_log(NEVER_LOST)
    with pytest.raises(NonIdentifiableError) as info:
        fit_log(NEVER_LOST)
    assert info.value.never_lost == ["top"] and info.value.never_won == []
    assert info.value.groups[0] == ["top"]
    assert "a positive `penalty`" in str(info.value)


def test_model_that_never_won_is_named():
    with pytest.raises(NonIdentifiableError, match=r"1 model\(s\) never won or tied: \['low'\]"):
        fit_log(NEVER_WON)
    with pytest.raises(NonIdentifiableError) as info:
        fit_log(NEVER_WON)
    assert info.value.never_won == ["low"] and info.value.never_lost == []
    assert info.value.groups[-1] == ["low"]


def test_disconnected_groups_are_reported():
    with pytest.raises(NonIdentifiableError, match=r"splits into 2 groups never compared") as info:
        fit_log(DISCONNECTED)
    assert sorted(map(sorted, info.value.groups)) == [["a", "b", "c"], ["x", "y", "z"]]
    assert info.value.never_lost == [] and info.value.never_won == []


def test_dominating_group_is_named():
    pattern = re.escape("the group ['a', 'b', 'c'] never lost to the other 3 model(s)")
    with pytest.raises(NonIdentifiableError, match=pattern) as info:
        fit_log(DOMINATING)
    assert [sorted(g) for g in info.value.groups] == [["a", "b", "c"], ["x", "y", "z"]]


def test_groups_come_before_every_group_they_beat():
    """A diamond of groups (top beats left and right, both beat bottom) and a group that only
    beat bottom: in the error's order, each group precedes every group one of its models won
    or tied against, checked pair by pair on the verdicts themselves."""
    log = log_of(*cycle("t1", "t2"), *cycle("l1", "l2"), *cycle("r1", "r2"), *cycle("b1", "b2"),
                 ("t1", "l1", "A"), ("r2", "t2", "B"), ("l2", "b1", "A"), ("r1", "b2", "A"),
                 ("s", "b1", "A"), ("b2", "s", "B"))  # fmt: skip
    with pytest.raises(NonIdentifiableError) as info:
        fit_log(log)
    position = {name: n for n, group in enumerate(info.value.groups) for name in group}
    assert sorted(position) == sorted(set(log["model_a"]) | set(log["model_b"]))
    for a, b, winner in log[["model_a", "model_b", "winner"]].itertuples(index=False):
        beat = [(a, b)] if winner == "A" else [(b, a)] if winner == "B" else [(a, b), (b, a)]
        for i, j in beat:  # i won or tied against j: i's group comes first (or is j's)
            assert position[i] <= position[j], (i, j, info.value.groups)
    assert len(info.value.groups) == 5


def test_ties_connect_both_ways():
    """One tie between the groups makes the dominating board identifiable."""
    fixed = pd.concat([DOMINATING, log_of(("x", "a", "tie"))], ignore_index=True)
    assert strongly_connected(fixed)
    r = fit_log(fixed, ci="model")
    assert np.all(np.isfinite(r.strength)) and np.all(np.isfinite(r.cov))


#: the models each case leaves to the penalty (centred ratings: the reference group is the
#: largest, the first in sorted order on a tie), and the side the data leave unbounded
FLAGGED = {
    "never_lost": ({"top": 1}, "a"),
    "never_won": ({"low": -1}, "a"),
    "disconnected": ({"x": 0, "y": 0, "z": 0}, "a"),
    "dominating": ({"x": -1, "y": -1, "z": -1}, "a"),
}


def fit_penalised(log, penalty: float, **kw):
    with pytest.warns(RuntimeWarning, match="only because of the penalty"):
        return fit_log(log, model=ratings.BT(penalty=penalty), **kw)


@pytest.mark.parametrize("name", list(CASES))
def test_penalty_gives_finite_ratings_and_open_intervals(name):
    log = CASES[name]
    flagged, anchor = FLAGGED[name]
    for ci in ("model", "sandwich"):
        r = fit_penalised(log, penalty=0.5, ci=ci, anchor=anchor)
        assert r.converged
        assert np.all(np.isfinite(r.strength)) and np.all(np.isfinite(r.cov))
        assert list(r.unbounded.index) == list(flagged)
        assert r.unbounded["direction"].to_dict() == flagged
        ci_ = r.conf_int()
        for model, side in flagged.items():
            lo, hi = ci_.loc[model]
            assert hi == np.inf if side >= 0 else np.isfinite(hi)
            assert lo == -np.inf if side <= 0 else np.isfinite(lo)
            assert np.isinf(r.se[model])
        others = [m for m in r.models if m not in flagged]
        assert np.isfinite(ci_.loc[others].to_numpy()).all()
        table = r.to_frame().set_index("model")
        assert table.loc[list(flagged), "rank_lower"].isna().all()
        assert table.loc[others, "rank_upper"].notna().all()
    r = fit_penalised(log, penalty=0.5)
    # The ridge acts on centred strengths, so the anchor only moves the scale.
    anchored = fit_penalised(log, penalty=0.5, anchor="a=1500")
    np.testing.assert_allclose(anchored.elo, r.reanchor("a", 1500).elo, atol=1e-6)
    np.testing.assert_allclose(anchored.cov, r.reanchor("a", 1500).cov, atol=1e-12)
    pd.testing.assert_frame_equal(anchored.conf_int(), r.reanchor("a", 1500).conf_int())
    if name == "never_lost":
        assert r.elo.idxmax() == "top"
    if name == "never_won":
        assert r.elo.idxmin() == "low"
    if name == "dominating":
        assert r.elo[["a", "b", "c"]].min() > r.elo[["x", "y", "z"]].max()


def test_open_interval_of_a_model_that_never_lost_covers_its_rating():
    """A strong model that never lost in 6 verdicts against a board near 0: the ridge pulls
    it to an Elo far above the truth with a narrow Wald interval; the open interval's lower
    bound is the Bradley-Terry tail bound of its perfect record and covers the truth."""
    rng = np.random.default_rng(7)
    board = [(a, b, "A" if rng.random() < 0.5 else "B") for a in "abcd" for b in "abcd" if a < b
             for _ in range(10)]  # fmt: skip
    log = log_of(*board, *[("new", "abcd"[k % 4], "A") for k in range(6)])
    r = fit_penalised(log, penalty=0.1, anchor="a=1000")
    lower, upper = r.conf_int().loc["new"]
    assert upper == np.inf and np.isfinite(lower)
    # P(6 wins) = sigma(d)^6 >= 0.025 at the bound: d = logit(0.025 ** (1 / 6)) for the
    # opponents near 1000 (their fitted Elo), so the bound sits about that far above them
    d = np.log(0.025 ** (1 / 6) / (1 - 0.025 ** (1 / 6)))
    opponents = r.elo[list("abcd")].mean()
    assert lower == pytest.approx(opponents + 400 / np.log(10) * d, abs=40)
    assert lower < r.elo["new"]
    with pytest.raises(ValueError, match="only because of the penalty"):
        r.reanchor("new")


def test_penalty_shrinks_towards_the_mean():
    spread = [np.ptp(fit_penalised(NEVER_LOST, penalty=p).strength) for p in (0.1, 1.0, 10.0)]
    assert spread[0] > spread[1] > spread[2] > 0


@settings(deadline=None, max_examples=60)
@given(
    rows=st.lists(
        st.tuples(st.integers(0, 3), st.integers(1, 3), st.sampled_from(["A", "B", "tie"])),
        min_size=1,
        max_size=10,
    )
)
def test_error_exactly_when_not_strongly_connected(rows):
    names = ["m0", "m1", "m2", "m3"]
    log = log_of(*[(names[a], names[(a + d) % 4], w) for a, d, w in rows])
    if strongly_connected(log):
        r = fit(aggregate(log, cluster=None), ci="model")
        assert np.all(np.isfinite(r.strength)) and np.all(np.isfinite(r.cov))
        with warnings.catch_warnings(record=True) as seen:  # the sandwich exists too; where it
            warnings.simplefilter("always")  # collapses (every residual 0: ties) it is filled
            r = fit(aggregate(log, cluster=None))  # with the model-based variance, flagged
        assert np.all(np.isfinite(r.cov))
        collapsed = [w for w in seen if issubclass(w.category, DataWarning)]
        flagged = "model_based" in r.to_frame()
        assert flagged == bool(collapsed)
        if flagged:
            assert "sandwich variance" in str(collapsed[0].message)
    else:
        with pytest.raises(NonIdentifiableError, match="do not exist"):
            fit(aggregate(log, cluster=None))


def test_unknown_anchor_suggests_a_close_name():
    log = log_of(*cycle("gpt-4o", "claude-3-opus", "llama-3"))
    with pytest.raises(
        ValueError,
        match=r"Anchor model 'gpt4o' is not in the verdicts\. "
        r"Did you mean \['gpt-4o'\]\?",
    ):
        fit_log(log, anchor="gpt4o")
    with pytest.raises(ValueError, match=r"'zzz' is not in the verdicts"):
        fit_log(log, anchor="zzz=1200")
    with pytest.raises(KeyError, match=r"Did you mean \['llama-3'\]"):
        fit_log(log).reanchor("llama3", 1000)


@pytest.mark.parametrize("m", [5, 400, 600])  # numpy's path, scipy.linalg's, single precision
def test_solve_pd_matches_numpy_and_refuses_indefinite(m):
    from ratings.core.linalg import LAPACK_FROM, SINGLE_FROM, solve_pd

    assert (m >= LAPACK_FROM) == (m >= 400) and (m >= SINGLE_FROM) == (m == 600)
    rng = np.random.default_rng(m)
    x = rng.normal(size=(m, m))
    h = x @ x.T + m * np.eye(m)
    g = rng.normal(size=m)
    np.testing.assert_allclose(solve_pd(h, g), np.linalg.solve(h, g), rtol=1e-10, atol=1e-12)
    bad = h.copy()
    bad[0, 0] = -1.0
    with pytest.raises(np.linalg.LinAlgError):
        solve_pd(bad, g)


@pytest.mark.parametrize("smallest", [1e-3, 1e-9])  # refined; beyond single precision: double
def test_solve_pd_in_single_precision_is_refined_to_double(smallest):
    from ratings.core.linalg import SINGLE_FROM, solve_pd

    m = SINGLE_FROM + 100
    rng = np.random.default_rng(3)
    q, _ = np.linalg.qr(rng.normal(size=(m, m)))
    h = (q * np.geomspace(smallest, 1.0, m)) @ q.T  # condition number 1 / smallest
    h = (h + h.T) / 2.0
    g = rng.normal(size=m)
    want = np.linalg.solve(h, g)
    got = solve_pd(h, g)
    # as accurate as a double-precision solve: the residual at rounding level
    assert np.abs(h @ got - g).max() <= 1e-12 * np.abs(h).max() * np.abs(got).max() * m
    np.testing.assert_allclose(got, want, rtol=1e-13 / smallest, atol=0.0)


@pytest.mark.parametrize("change", ["close", "far", "same diagonal, far"])
def test_solve_pd_refines_on_a_kept_factor_while_it_serves(change, monkeypatch):
    """A sequence of systems (Newton's steps): the next system is solved on the kept factor
    when its diagonal is within KEPT_CHANGE (no factorisation), else factorised afresh; a kept
    factor that does not serve (same diagonal, other off-diagonal cells) is given up. Every
    solution is numpy's to a double-precision solve's accuracy."""
    from ratings.core import linalg

    m = linalg.SINGLE_FROM + 50
    rng = np.random.default_rng(11)
    x = rng.normal(size=(m, m))
    h = x @ x.T / m + np.eye(m)
    d = 1.0 + 0.01 * rng.random(m)  # every cell scaled by at most 1 %: the diagonal too
    e = rng.normal(size=(m, m))
    e = 0.25 * (e + e.T) / np.sqrt(m)  # spectral radius about 0.7: h's smallest is about 1
    np.fill_diagonal(e, 0.0)
    nearby = {"close": h * np.sqrt(d)[:, None] * np.sqrt(d)[None, :],
              "far": h + 0.5 * np.diag(np.diag(h)),
              "same diagonal, far": h + e}[change]  # fmt: skip
    assert np.all(np.linalg.eigvalsh(nearby) > 0)
    factorised = []
    real = linalg._factor_single
    monkeypatch.setattr(linalg, "_factor_single", lambda a: factorised.append(1) or real(a))
    kept = linalg.KeptFactor()
    for a in (h, nearby):
        g = rng.normal(size=m)
        got = linalg.solve_pd(a, g, kept)
        want = np.linalg.solve(a, g)
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-13 * np.abs(want).max())
    assert len(factorised) == (1 if change == "close" else 2)


def test_inverse_free_large_matches_numpy_inverse():
    from ratings.inference.covariance import inverse_free

    m = 300
    rng = np.random.default_rng(1)
    x = rng.normal(size=(m, m))
    h = x @ x.T + m * np.eye(m)
    free = np.delete(np.arange(m), 7)
    got = inverse_free(h, free)
    want = np.linalg.inv(h[np.ix_(free, free)])
    np.testing.assert_allclose(got[np.ix_(free, free)], want, rtol=1e-9, atol=1e-14)
    assert np.all(got[7] == 0.0) and np.all(got[:, 7] == 0.0)
    np.testing.assert_array_equal(got, got.T)


@pytest.mark.parametrize("m", [5, 300])  # numpy's path, and LAPACK's potrf + potri
def test_inverse_pd_refuses_indefinite(m):
    from ratings.core.linalg import inverse_pd

    rng = np.random.default_rng(m)
    x = rng.normal(size=(m, m))
    h = x @ x.T + m * np.eye(m)
    kept = h.copy()
    np.testing.assert_allclose(inverse_pd(h), np.linalg.inv(h), rtol=1e-9, atol=1e-14)
    np.testing.assert_array_equal(h, kept)  # the input is not overwritten
    h[3, 3] = -1.0
    with pytest.raises(np.linalg.LinAlgError):
        inverse_pd(h)


@pytest.mark.parametrize("shape", [(40, 7), (500, 300), (0, 200)])  # matmul, syrk, empty
def test_gram_is_a_symmetric_cross_product(shape):
    from ratings.inference.covariance import gram

    a = np.random.default_rng(2).normal(size=shape)
    got = gram(a, 1.5)
    np.testing.assert_allclose(got, 1.5 * np.einsum("ki,kj->ij", a, a), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(got, got.T)


def test_one_blas_thread_within_the_callers_limit():
    from threadpoolctl import threadpool_info, threadpool_limits

    from ratings.core.threads import one_blas_thread

    def threads():
        return {d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"}

    outside = threads()
    if not outside:
        pytest.skip("no BLAS library visible to threadpoolctl")
    with one_blas_thread():
        assert threads() == {1}
    with threadpool_limits(limits=1), one_blas_thread():
        assert threads() == {1}
    assert threads() == outside


@settings(deadline=None, max_examples=80)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(2, 12), density=st.floats(0.05, 0.6))
def test_dense_reachability_agrees_with_scipy_components(seed, m, density):
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    from ratings.models.existence import connected

    rng = np.random.default_rng(seed)
    src, dst = np.nonzero(rng.random((m, m)) < density)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    graph = csr_matrix((np.ones(src.size), (src, dst)), shape=(m, m))
    n_strong, _ = connected_components(graph, directed=True, connection="strong")
    adj = np.zeros((m, m), dtype=bool)
    adj[src, dst] = True
    assert connected(adj) == (n_strong == 1)


@settings(deadline=None, max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 9), drop=st.integers(0, 8),
       kind=st.sampled_from(["one left out", "all", "subset"]))  # fmt: skip
def test_block_and_embed_match_fancy_indexing(seed, n, drop, kind):
    from ratings.core.linalg import block, block_view, embed

    rng = np.random.default_rng(seed)
    h = rng.normal(size=(n, n))
    idx = {"one left out": np.delete(np.arange(n), drop % n), "all": np.arange(n),
           "subset": np.flatnonzero(rng.random(n) < 0.5)}[kind]  # fmt: skip
    np.testing.assert_array_equal(block(h, idx), h[np.ix_(idx, idx)])
    view = block_view(h, idx)
    np.testing.assert_array_equal(view, h[np.ix_(idx, idx)])
    if kind == "one left out" and drop % n in (0, n - 1):  # the first or last left out: a view
        assert np.shares_memory(view, h)
    a = rng.normal(size=(idx.size, idx.size))
    want = np.zeros((n, n))
    want[np.ix_(idx, idx)] = a
    np.testing.assert_array_equal(embed(a, idx, n), want)


@settings(deadline=None, max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 9), drop=st.integers(0, 8),
       kind=st.sampled_from(["one left out", "all", "subset"]),
       order=st.sampled_from(["C", "F"]), rows=st.sampled_from([1, 2, 3, 64]))  # fmt: skip
def test_embed_upper_is_the_mirrored_triangle_embedded(seed, n, drop, kind, order, rows):
    """Whatever lies below the diagonal (LAPACK's factorisation leaves the input there), in
    either memory order, mirrored a block of ``rows`` rows at a time."""
    from unittest import mock

    from ratings.core import linalg
    from ratings.core.linalg import embed_upper, mirror_upper

    rng = np.random.default_rng(seed)
    idx = {"one left out": np.delete(np.arange(n), drop % n), "all": np.arange(n),
           "subset": np.flatnonzero(rng.random(n) < 0.5)}[kind]  # fmt: skip
    sym = rng.normal(size=(idx.size, idx.size))
    sym = sym + sym.T
    below = np.tril(rng.normal(size=sym.shape), -1)  # not read
    upper = np.asarray(np.triu(sym) + below, order=order)
    want = np.zeros((n, n))
    want[np.ix_(idx, idx)] = sym
    with mock.patch.object(linalg, "MIRROR_ROWS", rows):
        np.testing.assert_array_equal(embed_upper(upper, idx, n), want)
        np.testing.assert_array_equal(mirror_upper(upper), sym)


def test_large_inverse_and_gram_embedded_match_numpy():
    """The triangles LAPACK and BLAS leave, mirrored where they are embedded: numpy's inverse
    and product on the same matrices."""
    from ratings.inference.covariance import gram_embedded, inverse_free

    m = 303
    rng = np.random.default_rng(5)
    x = rng.normal(size=(m, m))
    h = x @ x.T + m * np.eye(m)
    for drop in (0, 150, m - 1):
        free = np.delete(np.arange(m), drop)
        want = np.zeros((m, m))
        want[np.ix_(free, free)] = np.linalg.inv(h[np.ix_(free, free)])
        got = inverse_free(h, free)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * np.abs(want).max())
        np.testing.assert_array_equal(got, got.T)
        a = rng.normal(size=(40, free.size))
        want = np.zeros((m, m))
        want[np.ix_(free, free)] = 0.5 * a.T @ a
        got = gram_embedded(a, free, m, 0.5)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * np.abs(want).max())
        np.testing.assert_array_equal(got, got.T)


@pytest.mark.parametrize("m", [5, 300])  # plain products, and the meat's Cholesky factor
@pytest.mark.parametrize("meat_pd", [True, False])
def test_bread_meat_bread_matches_the_plain_products(m, meat_pd):
    from ratings.inference.covariance import bread_meat_bread, inverse_free

    rng = np.random.default_rng(m)
    x = rng.normal(size=(m, m))
    h = x @ x.T + m * np.eye(m)
    y = rng.normal(size=(m, m // 2 if not meat_pd else m))  # rank m / 2: not positive definite
    meat = y @ y.T
    free = np.delete(np.arange(m), 3)
    bread = inverse_free(h, free)
    kept = (bread.copy(), meat.copy())
    got = bread_meat_bread(bread, meat)
    scale = np.abs(got).max()
    np.testing.assert_allclose(got, bread @ meat @ bread, rtol=1e-10, atol=1e-14 * scale)
    np.testing.assert_array_equal(got, got.T)
    assert np.all(got[3] == 0.0) and np.all(got[:, 3] == 0.0)
    np.testing.assert_array_equal(bread, kept[0])  # inputs untouched
    np.testing.assert_array_equal(meat, kept[1])


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("meat_pd", [True, False])
def test_pending_bread_meat_bread_matches_numpy(monkeypatch, threads, meat_pd):
    """A bread still being computed on the pool (the meat's factor formed meanwhile) and the
    triangular product in blocks of rows: numpy's inverse and plain products on the same
    matrices."""
    from ratings.core import threads as _threads
    from ratings.inference.covariance import PendingBread, bread_meat_bread, start_bread

    monkeypatch.setattr(_threads, "workers", lambda: threads)
    monkeypatch.setattr(_threads, "SPLIT_FLOPS", 0)  # split even this product
    m = 301
    rng = np.random.default_rng(threads)
    x = rng.normal(size=(m, m))
    h = x @ x.T + m * np.eye(m)
    y = rng.normal(size=(m, m if meat_pd else m // 2))
    meat = y @ y.T
    free = np.delete(np.arange(m), 7)
    pending = start_bread(h, free)
    assert isinstance(pending, PendingBread)
    got = bread_meat_bread(pending, meat)
    bread = np.zeros((m, m))
    bread[np.ix_(free, free)] = np.linalg.inv(h[np.ix_(free, free)])
    np.testing.assert_allclose(pending.result(), bread, rtol=0, atol=1e-12 * np.abs(bread).max())
    want = bread @ meat @ bread
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * np.abs(want).max())
    np.testing.assert_array_equal(got, got.T)
    assert np.all(got[7] == 0.0) and np.all(got[:, 7] == 0.0)


@pytest.mark.parametrize("threads", [1, 2])
def test_pending_bread_of_a_singular_hessian_raises_when_read(monkeypatch, threads):
    from ratings.core import threads as _threads
    from ratings.inference.covariance import ready, start_bread

    monkeypatch.setattr(_threads, "workers", lambda: threads)
    for m in (5, 300):  # at once below LAPACK_FROM, on the pool from it
        x = np.random.default_rng(m).normal(size=(m, m - 5))
        pending = start_bread(x @ x.T, np.arange(m))  # rank m - 5
        with pytest.raises(np.linalg.LinAlgError):
            ready(pending)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("cluster", [None, "task_id"])
def test_singular_bread_is_reported_first(monkeypatch, threads, cluster):
    """A bread that cannot be inverted (stood in for by a LinAlgError of the inverse) is named
    whatever the interval's own work raised beside it (one cluster: too few for a clustered
    interval), as when the bread was computed before that work."""
    import pandas as pd

    import ratings
    from ratings.core import threads as _threads
    from ratings.inference import covariance

    def singular(h, free):
        raise np.linalg.LinAlgError("not positive definite")

    monkeypatch.setattr(_threads, "workers", lambda: threads)
    monkeypatch.setattr(covariance, "inverse_free", singular)
    log = pd.DataFrame({"model_a": ["a", "a", "b", "b", "c", "c"],
                        "model_b": ["b", "c", "c", "a", "a", "b"],
                        "winner": ["A", "A", "A", "A", "A", "A"], "task_id": "t"})
    with pytest.raises(NonIdentifiableError, match="information matrix is singular"):
        ratings.fit(log, cluster=cluster)


@settings(deadline=None, max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(2, 9), density=st.floats(0.1, 1.0))
def test_win_matrix_of_unique_pairs_is_the_edge_lists_graph(seed, m, density):
    """The adjacency written row by row (one row per pair, i < j) against the graph built from
    its win and tie counts here, and scipy's strong components of that graph."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    from ratings.models.existence import connected, win_matrix

    rng = np.random.default_rng(seed)
    ii, jj = np.triu_indices(m, 1)
    met = rng.random(ii.size) < density
    ii, jj = ii[met], jj[met]
    wi, wj, tt = (rng.integers(0, 2, ii.size).astype(float) for _ in range(3))
    rows = SimpleNamespace(n_models=m, ii=ii, jj=jj, wi=wi, wj=wj, tt=tt)
    expected = np.zeros((m, m), dtype=bool)
    for i, j, a, b, t in zip(ii, jj, wi, wj, tt, strict=True):
        expected[i, j] |= a + t > 0
        expected[j, i] |= b + t > 0
    adj = win_matrix(rows)
    np.testing.assert_array_equal(adj, expected)
    n_strong, _ = connected_components(csr_matrix(expected), directed=True, connection="strong")
    assert connected(adj) == (n_strong == 1)
    swapped = SimpleNamespace(**{**vars(rows), "ii": jj, "jj": ii})  # j > i: from the edges
    np.testing.assert_array_equal(win_matrix(swapped), expected.T)
    # the fit's pair table (rows shuffled, either orientation, a pair repeated) writes the same
    from ratings.models.bt import PairTable

    order = rng.permutation(ii.size)
    flip = rng.random(ii.size) < 0.5
    a, b = np.where(flip, jj, ii)[order], np.where(flip, ii, jj)[order]
    x, y = np.where(flip, wj, wi)[order], np.where(flip, wi, wj)[order]
    shuffled = SimpleNamespace(n_models=m, ii=np.concatenate([a, a[:2]]),
                               jj=np.concatenate([b, b[:2]]), wi=np.concatenate([x, 0 * x[:2]]),
                               wj=np.concatenate([y, 0 * y[:2]]),
                               tt=np.concatenate([tt[order], 0 * tt[:2]]))  # fmt: skip
    np.testing.assert_array_equal(PairTable(shuffled).win_matrix(), expected)
