"""Placement against a frozen board (:func:`ratings.place`), checked against things it did not
compute: a plain scipy maximum likelihood with the board's strengths as fixed offsets,
statsmodels' GLM with an offset (HC0 and clustered sandwiches), and the two-step term against
finite differences of refits."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from helpers import Y_OF_WINNER, simulate_verdicts
from scipy.optimize import minimize

import ratings
from ratings.core.errors import DataWarning, NonIdentifiableError
from ratings.core.schema import ELO_SCALE
from ratings.scopes.scale import board_info
from ratings.stability.board import covariance_path, read_board, write_covariance

TRUE = [0.0, 0.5, -0.3, 0.9, -0.8, 0.2, 1.2, -0.1]  # the last three are the new models
NEW = ["m05", "m06", "m07"]


def _logs(seed: int = 3, n_ref: int = 1500, n_new: int = 700, ties: float = 0.1):
    """A reference log of m00..m04 and a log of the new models against everyone."""
    rng = np.random.default_rng(seed)
    old = simulate_verdicts(rng, TRUE[:5], n_ref, 120, tie_fraction=ties, task_sd=0.4)
    both = simulate_verdicts(rng, TRUE, 4 * n_new, 150, tie_fraction=ties, task_sd=0.4)
    touches = both["model_a"].isin(NEW) | both["model_b"].isin(NEW)
    new = both[touches].head(n_new).reset_index(drop=True)
    new["task_id"] = "n" + new["task_id"].astype(str)
    return old, new


@pytest.fixture(scope="module")
def boards():
    old, new = _logs()
    ref = ratings.fit(old, anchor="m00=1000")
    return old, new, ref


def _scipy_placement(new: pd.DataFrame, fixed: dict[str, float], names: list[str]):
    """The new models' MLE with the board's log-strengths ``fixed``, written out plainly:
    log L = sum_v y_v log sigma(s_a - s_b) + (1 - y_v) log sigma(s_b - s_a)."""
    y = new["winner"].map(Y_OF_WINNER).to_numpy(float)
    pos = {m: k for k, m in enumerate(names)}

    def strengths(x):
        return np.array([fixed[m] if m in fixed else x[pos[m]] for m in new["model_a"]]), \
            np.array([fixed[m] if m in fixed else x[pos[m]] for m in new["model_b"]])

    def nll(x):
        sa, sb = strengths(x)
        d = sa - sb
        return -np.sum(y * -np.logaddexp(0.0, -d) + (1.0 - y) * -np.logaddexp(0.0, d))

    def grad(x):
        sa, sb = strengths(x)
        r = y - 1.0 / (1.0 + np.exp(-(sa - sb)))
        g = np.zeros(len(names))
        for k, m in enumerate(names):
            g[k] = -(r[(new["model_a"] == m).to_numpy()].sum() - r[(new["model_b"] == m)
                                                                    .to_numpy()].sum())
        return g

    res = minimize(nll, np.zeros(len(names)), jac=grad, method="BFGS",
                   options={"gtol": 1e-12, "maxiter": 10_000})
    res = minimize(nll, res.x, jac=grad, method="Newton-CG",
                   options={"xtol": 1e-14, "maxiter": 200})
    return res.x


def test_reference_ratings_move_by_exactly_zero(boards):
    _, new, ref = boards
    placed = ratings.place(new, reference=ref)
    assert (placed.elo[ref.models] - ref.elo).abs().max() == 0.0
    table = placed.to_frame()
    assert set(table.loc[table["placed"], "model"]) == set(NEW)
    assert table["reference_cov"].all()
    assert placed.anchor == "m00" and placed.offset == 1000.0


def test_placement_equals_a_scipy_mle_with_fixed_offsets(boards):
    _, new, ref = boards
    placed = ratings.place(new, reference=ref)
    fixed = {m: float(ref.strength[k]) for k, m in enumerate(ref.models)}
    expected = _scipy_placement(new, fixed, NEW)
    got = np.array([placed.strength[placed.models.get_loc(m)] for m in NEW])
    np.testing.assert_allclose(got, expected, atol=1e-8, rtol=0)


def _glm(new, ref, groups=None):
    """statsmodels: the new models' logistic regression with the board as an offset."""
    fixed = {m: float(ref.strength[k]) for k, m in enumerate(ref.models)}
    x = np.zeros((len(new), len(NEW)))
    for k, m in enumerate(NEW):
        x[:, k] = (new["model_a"] == m).to_numpy(float) - (new["model_b"] == m).to_numpy(float)
    off = new["model_a"].map(fixed).fillna(0.0).to_numpy() - new["model_b"].map(fixed) \
        .fillna(0.0).to_numpy()
    y = new["winner"].map(Y_OF_WINNER).to_numpy(float)
    kw = {} if groups is None else {"cov_kwds": {"groups": pd.factorize(groups)[0],
                                                 "use_correction": False}}
    res = sm.GLM(y, x, family=sm.families.Binomial(), offset=off).fit(
        tol=1e-13, maxiter=100, cov_type="HC0" if groups is None else "cluster", **kw)
    return np.asarray(res.params), np.asarray(res.cov_params())


def test_hc0_without_the_reference_uncertainty_is_statsmodels_glm_with_an_offset(boards):
    _, new, ref = boards
    table = ref.to_frame().assign(**board_info(ref))
    with pytest.warns(DataWarning, match="no covariance"):
        placed = ratings.place(new, reference=table, ci="hc0")
    assert not placed.to_frame()["reference_cov"].any()
    params, cov = _glm(new, ref)
    idx = placed.models.get_indexer(NEW)
    np.testing.assert_allclose(placed.strength[idx], params, atol=1e-8)
    np.testing.assert_allclose(placed.cov[np.ix_(idx, idx)], cov, atol=1e-10, rtol=1e-7)


def test_clustered_cr1_part_is_statsmodels_cluster_times_g_over_g_minus_1(boards):
    _, new, ref = boards
    table = ref.to_frame().assign(**board_info(ref))
    with pytest.warns(DataWarning):
        placed = ratings.place(new, reference=table, ci="sandwich-z")
    _, cov = _glm(new, ref, groups=new["task_id"])
    g = new["task_id"].nunique()
    idx = placed.models.get_indexer(NEW)
    np.testing.assert_allclose(placed.cov[np.ix_(idx, idx)], cov * g / (g - 1), rtol=1e-7,
                               atol=1e-10)


def test_two_step_term_is_the_reference_covariance_through_finite_difference_refits(boards):
    """V = V_2 + J V_R J^T with J = d theta_new / d s_ref, here from refits with each reference
    strength nudged (not from the Hessian the placement uses)."""
    _, new, ref = boards
    table = ref.to_frame().assign(**board_info(ref)).reset_index(drop=True)
    with pytest.warns(DataWarning):
        base = ratings.place(new, reference=table, ci="hc0")
    idx = base.models.get_indexer(NEW)
    h = 1e-5
    jac = np.zeros((len(NEW), len(ref.models)))
    for k, m in enumerate(ref.models):
        if m == ref.anchor:
            continue
        cols = []
        for sign in (1.0, -1.0):
            t = table.copy()
            t.loc[t["model"] == m, "elo"] += sign * h * ELO_SCALE
            with pytest.warns(DataWarning):
                cols.append(ratings.place(new, reference=t, ci="hc0").strength[idx])
        jac[:, k] = (cols[0] - cols[1]) / (2 * h)
    full = ratings.place(new, reference=ref, ci="hc0")
    expected = base.cov[np.ix_(idx, idx)] + jac @ np.asarray(ref.cov) @ jac.T
    np.testing.assert_allclose(full.cov[np.ix_(idx, idx)], expected, rtol=1e-5, atol=1e-10)
    ridx = full.models.get_indexer(ref.models)
    np.testing.assert_allclose(full.cov[np.ix_(ridx, ridx)], ref.cov, atol=1e-12)
    assert (full.se[NEW] > base.se[NEW]).all()


def test_the_board_file_and_its_covariance_round_trip(tmp_path, boards):
    _, new, ref = boards
    path = tmp_path / "board.csv"
    ref.to_frame().assign(**board_info(ref)).to_csv(path, index=False)
    written = write_covariance(ref, path)
    assert written == covariance_path(path) == str(tmp_path / "board.cov.csv")
    board = read_board(path)
    np.testing.assert_allclose(board.cov, np.asarray(ref.cov)[np.ix_(
        ref.models.get_indexer(board.models), ref.models.get_indexer(board.models))]
        * ELO_SCALE**2, atol=1e-9)
    from_file = ratings.place(new, reference=str(path))
    from_fit = ratings.place(new, reference=ref)
    assert (from_file.elo[ref.models] - ref.elo).abs().max() == 0.0
    np.testing.assert_allclose(from_file.elo[NEW], from_fit.elo[NEW], atol=1e-8)
    np.testing.assert_allclose(from_file.se[NEW], from_fit.se[NEW], rtol=1e-8)


def test_default_intervals_are_cr2_by_task_with_the_reference_term(boards):
    _, new, ref = boards
    placed = ratings.place(new, reference=ref)
    assert placed.cluster == "task_id" and placed.inference is not None
    table = placed.to_frame()
    assert table.loc[table["placed"], "df"].notna().all()
    assert np.isfinite(placed.rank_intervals()["rank_lower"].astype(float)).all()


def test_a_new_model_without_a_verdict_against_the_board_is_refused(boards):
    _, new, ref = boards
    lone = pd.DataFrame({"model_a": ["x1", "x2", "x1"], "model_b": ["x2", "x1", "m00"],
                         "winner": ["A", "A", "B"], "task_id": ["t1", "t2", "t3"]})
    extra = pd.DataFrame({"model_a": ["x3", "x3"], "model_b": ["x1", "x2"],
                          "winner": ["A", "B"], "task_id": ["t4", "t5"]})
    with pytest.raises(ValueError, match=r"no verdict against any model of the reference.*x3"):
        ratings.place(pd.concat([new, lone, extra]), reference=ref)


def test_a_new_model_that_never_lost_is_refused_naming_it(boards):
    _, new, ref = boards
    win = pd.DataFrame({"model_a": ["champ"] * 4, "model_b": ["m00", "m01", "m02", "m03"],
                        "winner": ["A"] * 4, "task_id": ["a", "b", "c", "d"]})
    with pytest.raises(NonIdentifiableError, match="champ"):
        ratings.place(pd.concat([new, win]), reference=ref)


def test_nothing_new_is_refused_and_reference_only_verdicts_are_counted(boards):
    old, new, ref = boards
    with pytest.raises(ValueError, match="nothing to place"):
        ratings.place(old, reference=ref)
    with pytest.warns(DataWarning, match=r"\d+ verdict\(s\) compare two models of the reference"):
        placed = ratings.place(pd.concat([new, old.head(50)]), reference=ref)
    assert placed.placement.n_reference_only == 50
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        alone = ratings.place(new, reference=ref)
    np.testing.assert_allclose(placed.elo[NEW], alone.elo[NEW], atol=1e-9)


def test_a_centred_reference_keeps_its_scale(boards):
    old, new, _ = boards
    ref = ratings.fit(old)
    placed = ratings.place(new, reference=ref)
    assert placed.anchor is None
    assert (placed.elo[ref.models] - ref.elo).abs().max() == 0.0
