"""Firth's bias-reduced Bradley-Terry fit (``firth=True``, CLI ``--firth``).

The reference is a direct maximisation of l(s) + 1/2 log det I(s) written here with one design
row per verdict (the package works on aggregated rows), its gradient from the trace formula
d/ds_a 1/2 log det I = 1/2 tr(I^-1 dI/ds_a), solved by scipy.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize, root
from scipy.special import expit

import ratings
from ratings.cli.app import main
from ratings.core.errors import PenaltyOnlyWarning
from tests.helpers import Y_OF_WINNER, simulate_verdicts


def _design(log: pd.DataFrame, models: list[str], ref: str):
    """Per-verdict design (columns: models but ``ref``) and outcomes (ties 1/2)."""
    x = np.zeros((len(log), len(models)))
    rows = np.arange(len(log))
    x[rows, [models.index(m) for m in log["model_a"]]] += 1.0
    x[rows, [models.index(m) for m in log["model_b"]]] -= 1.0
    return np.delete(x, models.index(ref), axis=1), log["winner"].map(Y_OF_WINNER).to_numpy()


def _direct_firth(log: pd.DataFrame, models: list[str], ref: str) -> pd.Series:
    """argmax l(b) + 1/2 log det(X^T W X) over the anchored strengths b."""
    x, y = _design(log, models, ref)

    def objective(b):
        p = expit(x @ b)
        info = x.T @ (x * (p * (1 - p))[:, None])
        loglik = np.sum(y * np.log(p) + (1 - y) * np.log1p(-p))
        return -(loglik + 0.5 * np.linalg.slogdet(info)[1])

    def gradient(b):
        p = expit(x @ b)
        w = p * (1 - p)
        inv = np.linalg.inv(x.T @ (x * w[:, None]))
        dw = w * (1 - 2 * p)  # dw/d eta
        # tr(inv dI/db_a) with dI/db_a = X^T diag(dw x_a) X
        trace = np.array([np.trace(inv @ (x.T @ (x * (dw * x[:, a])[:, None])))
                          for a in range(x.shape[1])])  # fmt: skip
        return -(x.T @ (y - p) + 0.5 * trace)

    b0 = minimize(objective, np.zeros(x.shape[1]), jac=gradient, method="BFGS",
                  options={"gtol": 1e-9}).x  # fmt: skip
    sol = root(gradient, b0, tol=1e-13)
    assert np.abs(gradient(sol.x)).max() < 1e-9
    full = np.insert(sol.x, models.index(ref), 0.0)
    return pd.Series(full, index=models)


def _board(seed: int, strengths, n: int, *, ties: float = 0.0) -> pd.DataFrame:
    return simulate_verdicts(np.random.default_rng(seed), strengths, n, 20, tie_fraction=ties)


def _separated_board() -> pd.DataFrame:
    """m00 never lost (no ties), every other model is connected."""
    for seed in range(100):
        log = _board(seed, [5.0, 1.0, 0.5, 0.0, -0.5, -1.0], 150)
        a_lost = ((log["model_a"] == "m00") & (log["winner"] == "B")).any()
        b_lost = ((log["model_b"] == "m00") & (log["winner"] == "A")).any()
        if not (a_lost or b_lost):
            return log
    raise AssertionError("no separated board drawn")


@pytest.mark.parametrize("kind", ["separated", "connected-with-ties"])
def test_firth_matches_a_direct_maximisation(kind):
    if kind == "separated":
        log = _separated_board()
        with pytest.raises(ratings.NonIdentifiableError, match="firth=True"):
            ratings.fit(log)
    else:
        log = _board(1, [1.5, 0.7, 0.0, -0.4, -1.2], 200, ties=0.15)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PenaltyOnlyWarning)
        r = ratings.fit(log, model=ratings.BT(firth=True), anchor="m03=1000")
    expected = _direct_firth(log, list(r.models), "m03")
    np.testing.assert_allclose(r.strength, expected[r.models].to_numpy(), atol=1e-6)
    assert r.firth and r.converged


def test_bias_reduction_shrinks_towards_zero_and_vanishes_like_one_over_n():
    log = _board(2, [1.2, 0.6, 0.0, -0.5, -1.3], 300, ties=0.1)
    mle, firth = ratings.fit(log), ratings.fit(log, model=ratings.BT(firth=True))  # centred ratings
    top, bottom = mle.strength.argmax(), mle.strength.argmin()
    assert 0 < firth.strength[top] < mle.strength[top]
    assert mle.strength[bottom] < firth.strength[bottom] < 0
    # the same board ten times over: the correction is O(1/n)
    big = pd.concat([log.assign(task_id=log["task_id"] + f"-{k}") for k in range(10)])
    gap1 = np.abs(firth.strength - mle.strength).max()
    gap10 = np.abs(
        ratings.fit(big, model=ratings.BT(firth=True)).strength - ratings.fit(big).strength
    ).max()
    assert 0.07 < gap10 / gap1 < 0.13


def test_separated_model_gets_an_open_interval_and_a_warning():
    log = _separated_board()
    with pytest.warns(PenaltyOnlyWarning, match="Firth's penalty.*m00"):
        r = ratings.fit(log, model=ratings.BT(firth=True), anchor="m03=1000")
    table = r.to_frame().set_index("model")
    assert np.isfinite(table.loc["m00", "elo"])
    assert table.loc["m00", "upper"] == np.inf and np.isfinite(table.loc["m00", "lower"])
    assert pd.isna(table.loc["m00", "rank_lower"])
    others = table.drop(index=["m00", "m03"])
    assert np.isfinite(others[["lower", "upper", "se"]].to_numpy()).all()
    assert "Firth" in r.summary()


def test_per_verdict_sandwich_at_the_firth_estimate():
    """HC0 intervals: the likelihood's information and scores at the Firth estimate."""
    log = _board(4, [1.0, 0.3, 0.0, -0.8], 160, ties=0.1)
    r = ratings.fit(log, model=ratings.BT(firth=True), anchor="m02=1000", cluster=None)
    x, y = _design(log, list(r.models), "m02")
    b = np.delete(r.strength, 2)
    p = expit(x @ b)
    bread = np.linalg.inv(x.T @ (x * (p * (1 - p))[:, None]))
    meat = x.T @ (x * ((y - p) ** 2)[:, None])
    se = r.scale * np.sqrt(np.diag(bread @ meat @ bread))
    np.testing.assert_allclose(np.delete(r.se.to_numpy(), 2), se, rtol=1e-8)
    model_based = ratings.fit(log, model=ratings.BT(firth=True), anchor="m02=1000", ci="model")
    np.testing.assert_allclose(np.delete(model_based.se.to_numpy(), 2),
                               r.scale * np.sqrt(np.diag(bread)), rtol=1e-8)  # fmt: skip


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [(lambda: {"model": ratings.BT(firth=True, penalty=0.1)}, r"`firth=True` and `penalty`"),
     (lambda: {"model": ratings.BT(firth=True), "adjust": "position"},
      r"`firth=True` is not available with `adjust`")],
)  # fmt: skip
def test_python_errors_name_arguments(kwargs, message):
    log = _board(5, [0.5, 0.0, -0.5], 60)
    with pytest.raises(ValueError, match=message):  # the spec itself checks its values
        ratings.fit(log, **kwargs())


def test_firth_with_crowd_bt_names_the_model():
    log = _board(5, [0.5, 0.0, -0.5], 60)
    with pytest.warns(DeprecationWarning, match="firth= -> ratings.BT"):
        with pytest.raises(ValueError, match=r"`firth`.*only available with `model='bt'`"):
            ratings.fit(log, model="crowd-bt", firth=True)


def test_cli_firth_fits_and_errors_name_flags(tmp_path, capsys):
    path = tmp_path / "verdicts.csv"
    _separated_board().to_csv(path, index=False)
    assert main(["fit", str(path)]) == 2
    assert "`--firth`" in capsys.readouterr().err
    out = tmp_path / "ratings.csv"
    assert main(["fit", str(path), "--firth", "--anchor", "m03=1000", "--out", str(out)]) == 0
    assert "Firth's penalty" in capsys.readouterr().err
    table = pd.read_csv(out).set_index("model")
    assert table.loc["m00", "upper"] == np.inf and table.loc["m03", "elo"] == 1000.0
    assert main(["fit", str(path), "--firth", "--penalty", "0.1"]) == 2
    assert "`--firth` and `--penalty`" in capsys.readouterr().err
    assert main(["fit", str(path), "--firth", "--model", "crowd-bt"]) == 2
    assert "`--model bt`" in capsys.readouterr().err


def test_bootstrap_refits_firth_on_separated_resamples():
    """Resamples in which some model never lost are refitted (Firth is finite on every board),
    not skipped: every draw is kept."""
    log = _board(6, [2.5, 0.5, 0.0, -0.5], 80)
    r = ratings.fit(
        log, model=ratings.BT(firth=True), anchor="m02=1000", ci=ratings.Bootstrap(n=40, seed=1)
    )
    assert r.draws.shape == (40, 4) and np.isfinite(r.draws).all()
    assert np.isfinite(r.conf_int().drop(index="m02").to_numpy()).all()
