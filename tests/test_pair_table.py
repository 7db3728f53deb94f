"""Bradley-Terry's pair totals (:class:`ratings.models.bt.PairTable`), the objective of every
Newton step of the fit: against a likelihood written here from scipy's ``log_expit`` over the
rows as given (either orientation, repeated pairs), its finite differences, and the optimum
scipy's own minimiser finds."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.special import log_expit

from ratings.api.loading import load_log
from ratings.models.bt import PairTable, fit_bt, jacobi_step


def rows_of(m: int, n_rows: int, seed: int, *, spread: float = 1.0) -> SimpleNamespace:
    """Rows in either orientation, pairs repeated (as several judges give them), unsorted."""
    rng = np.random.default_rng(seed)
    ii = rng.integers(0, m, n_rows)
    jj = (ii + rng.integers(1, m, n_rows)) % m
    wi, wj, tt = (rng.integers(0, 6, n_rows).astype(float) for _ in range(3))
    return SimpleNamespace(n_models=m, ii=ii, jj=jj, wi=wi, wj=wj, tt=tt,
                           theta=spread * rng.standard_normal(m))  # fmt: skip


def nll_scipy(theta, rows) -> float:
    """A tie is one observation with outcome 1/2, row by row as given."""
    d = theta[rows.ii] - theta[rows.jj]
    yi, yj = rows.wi + 0.5 * rows.tt, rows.wj + 0.5 * rows.tt
    return -float(yi @ log_expit(d) + yj @ log_expit(-d))


@pytest.mark.parametrize("spread", [1e-3, 1.0, 5.0, 40.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_terms_match_an_independent_likelihood(spread, seed):
    rows = rows_of(7, 60, seed, spread=spread)
    table = PairTable(rows)
    assert np.all(table.i < table.j) and np.unique(table.cells).size == table.cells.size
    theta = rows.theta
    nll, grad, hess = table.terms(theta)
    np.testing.assert_allclose(nll, nll_scipy(theta, rows), rtol=1e-12)
    h, eye = 1e-6 * max(1.0, spread), np.eye(theta.size)
    central = np.array([(nll_scipy(theta + h * e, rows) - nll_scipy(theta - h * e, rows)) / (2 * h)
                        for e in eye])  # fmt: skip
    scale = max(1.0, np.abs(grad).max())
    np.testing.assert_allclose(grad, central, rtol=1e-6, atol=1e-6 * scale)
    h = 1e-5
    jac = np.column_stack([(table.terms(theta + h * e)[1] - table.terms(theta - h * e)[1]) / (2 * h)
                           for e in eye])  # fmt: skip
    np.testing.assert_allclose(hess, jac, rtol=1e-6, atol=1e-6 * max(1.0, np.abs(hess).max()))
    np.testing.assert_array_equal(hess, hess.T)
    np.testing.assert_allclose(hess.sum(axis=1), 0.0, atol=1e-12 * max(1.0, np.abs(hess).max()))


def test_extreme_differences_stay_finite():
    rows = rows_of(5, 30, 3)
    theta = np.array([-745.0, -700.0, 0.0, 700.0, 1e4])
    nll, grad, hess = PairTable(rows).terms(theta)
    assert np.isfinite(nll) and np.all(np.isfinite(grad)) and np.all(np.isfinite(hess))
    np.testing.assert_allclose(nll, nll_scipy(theta, rows), rtol=1e-12)


def test_jacobi_step_moves_towards_the_optimum():
    rows = rows_of(8, 200, 4)
    table = PairTable(rows)
    found = minimize(nll_scipy, np.zeros(8), args=(rows,), method="BFGS",
                     options={"gtol": 1e-10}).x  # fmt: skip
    x0 = np.zeros(8)
    x1 = jacobi_step(x0, table)
    assert nll_scipy(x1, rows) < nll_scipy(x0, rows)

    def gap(x):
        return np.abs((x - x.mean()) - (found - found.mean())).max()

    assert gap(x1) < gap(x0)


def test_fit_matches_scipy_minimiser_with_several_judges():
    """Three judges give the same pairs: the fit's rows repeat them, the table sums them."""
    rng = np.random.default_rng(5)
    m, n = 6, 600
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    names = np.array([f"m{k}" for k in range(m)], dtype=object)
    df = pd.DataFrame({"model_a": names[a], "model_b": names[b],
                       "winner": rng.choice(["A", "B", "tie"], n, p=[0.45, 0.4, 0.15]),
                       "judge": rng.choice(["j1", "j2", "j3"], n)})  # fmt: skip
    rows = load_log(df, cluster=None).data.collapsed()
    assert np.unique(rows.ii * m + rows.jj).size < rows.ii.size  # pairs repeat across judges
    codes = pd.Index(rows.models).get_indexer
    verdicts = SimpleNamespace(ii=codes(df.model_a), jj=codes(df.model_b),
                               wi=(df.winner == "A").to_numpy(float),
                               wj=(df.winner == "B").to_numpy(float),
                               tt=(df.winner == "tie").to_numpy(float))  # fmt: skip
    res = fit_bt(rows, ref=2, engine="numpy")
    found = minimize(nll_scipy, np.zeros(m), args=(verdicts,), method="BFGS",
                     options={"gtol": 1e-10}).x  # fmt: skip
    np.testing.assert_allclose(res.theta, found - found[2], atol=1e-6)
    assert res.converged and res.theta[2] == 0.0
    np.testing.assert_allclose(res.nll, nll_scipy(res.theta, verdicts), rtol=1e-12)


def test_ranges_filled_side_by_side_give_the_single_pass_bitwise():
    rows = rows_of(40, 3000, 6)
    whole, split = PairTable(rows), PairTable(rows)
    whole.__dict__["_blocks"] = [(0, whole.i.size)]
    split.__dict__["_blocks"] = [(0, 8), (8, 1000), (1000, split.i.size)]
    for got, want in zip(split.terms(rows.theta), whole.terms(rows.theta), strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(jacobi_step(rows.theta, split), jacobi_step(rows.theta, whole))
    np.testing.assert_array_equal(split.meat(rows.theta), whole.meat(rows.theta))


@pytest.mark.parametrize("spread", [1.0, 40.0])
def test_meat_is_the_sum_of_squared_verdict_scores(spread):
    """HC0's meat, verdict by verdict: (y - P(i beats j))^2 (e_i - e_j)(e_i - e_j)^T."""
    rows = rows_of(6, 50, 7, spread=spread)
    theta = rows.theta
    want = np.zeros((6, 6))
    p = np.exp(log_expit(theta[rows.ii] - theta[rows.jj]))
    for r in range(rows.ii.size):
        e = np.zeros(6)
        e[rows.ii[r]], e[rows.jj[r]] = 1.0, -1.0
        sq = (rows.wi[r] * (1.0 - p[r]) ** 2 + rows.wj[r] * p[r] ** 2
              + rows.tt[r] * (0.5 - p[r]) ** 2)  # fmt: skip
        want += sq * np.outer(e, e)
    table = PairTable(rows)
    np.testing.assert_allclose(table.meat(theta), want, rtol=1e-12,
                               atol=1e-14 * np.abs(want).max())  # fmt: skip
    # the meat reads the probabilities of the table's last pass only when it was at theta
    for at in (theta + 0.3 * np.arange(6), theta.copy()):
        table.terms(at)
        np.testing.assert_allclose(table.meat(theta), want, rtol=1e-12,
                                   atol=1e-14 * np.abs(want).max())  # fmt: skip


def test_pieces_of_a_pass_give_the_whole_pass_bitwise(monkeypatch):
    """A pass over the pairs in pieces (:data:`ratings.models.bt.CHUNK` pairs each, the last
    shorter) gives what one piece does, every output and the meat."""
    import ratings.models.bt as bt

    rows = rows_of(30, 2000, 8)
    whole = [PairTable(rows).terms(rows.theta), PairTable(rows).meat(rows.theta)]
    monkeypatch.setattr(bt, "CHUNK", 97)
    pieces = [PairTable(rows).terms(rows.theta), PairTable(rows).meat(rows.theta)]
    for got, want in zip([*pieces[0], pieces[1]], [*whole[0], whole[1]], strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("repeated", [False, True])
def test_pairs_sorted_and_summed_as_a_dictionary_sums_them(repeated):
    """Rows in a shuffled order (as hashed aggregation hands them over), each pair once or
    repeated (several judges), in either orientation: the table holds each pair once, ``i < j``
    in increasing order, with i's wins, j's wins and the ties summed as a loop over the rows
    sums them."""
    rng = np.random.default_rng(9)
    m = 12
    i, j = np.triu_indices(m, 1)
    pick = rng.permutation(i.size)[:50]
    i, j = i[pick], j[pick]
    if repeated:
        i, j = np.concatenate([i, i[:20]]), np.concatenate([j, j[:20]])
    flip = rng.random(i.size) < 0.5
    ii, jj = np.where(flip, j, i), np.where(flip, i, j)
    wi, wj, tt = (rng.integers(0, 6, i.size).astype(float) for _ in range(3))
    rows = SimpleNamespace(n_models=m, ii=ii, jj=jj, wi=wi, wj=wj, tt=tt)
    want: dict[tuple[int, int], list[float]] = {}
    for r in range(ii.size):
        a, b, x, y = int(ii[r]), int(jj[r]), wi[r], wj[r]
        if a > b:
            a, b, x, y = b, a, y, x
        cell = want.setdefault((a, b), [0.0, 0.0, 0.0])
        cell[0], cell[1], cell[2] = cell[0] + x, cell[1] + y, cell[2] + tt[r]
    table = PairTable(rows)
    keys = sorted(want)
    np.testing.assert_array_equal(table.i, [a for a, _ in keys])
    np.testing.assert_array_equal(table.j, [b for _, b in keys])
    for c, got in enumerate((table.wi, table.wj, table.tt)):
        np.testing.assert_array_equal(got, [want[k][c] for k in keys])
