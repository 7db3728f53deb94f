"""The peers' published rating functions reproduced on the same battles.

* arena-rank (installed): its Bradley-Terry estimate, and its sandwich built from its own
  Hessian and gradient covariance (``compute_hessian_and_covariance``) against ours with
  ``cluster=None`` (the per-verdict HC0 sandwich), 1e-6;
* FastChat's ``compute_bt`` and arena-hard-auto's ``compute_mle_elo``, ported in
  ``tests/peer_reference.py``;
* AlpacaEval's discrete win rates (``tests/test_formats.py`` and here per model), and its
  soft win rates from the soft-outcome fit (``ratings.BT(soft=True)``).

Where the numbers differ by design (arena-rank's ridge on its Hessian, our task clustering and
CR2), the difference is asserted to be what ``benchmarks_perf/README.md`` says it is.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from peer_reference import alpaca_win_rates, compute_mle_elo, fastchat_compute_bt

import ratings

DATA = Path(__file__).resolve().parent / "data"
BATTLES = DATA / "arena_hard_battles_2024_09.csv"
ALPACA = DATA / "alpaca_eval_annotations_sample.json.gz"


@pytest.fixture(scope="module")
def battles() -> pd.DataFrame:
    return pd.read_csv(BATTLES, dtype=str)


@pytest.fixture(scope="module")
def ours(battles):
    r = ratings.fit(battles, cluster=None)
    elo = pd.Series(r.elo, index=r.models)
    return elo - elo.mean(), pd.Series(r.se, index=r.models)


def _centred(s: pd.Series, index) -> pd.Series:
    s = s.loc[index].astype(float)
    return s - s.mean()


def test_arena_rank_estimate_and_sandwich(battles, ours):
    pytest.importorskip("arena_rank")
    import jax.numpy as jnp
    from arena_rank.models.bradley_terry import BradleyTerry
    from arena_rank.utils.data_utils import PairDataset

    elo, se = ours
    ds = PairDataset.from_pandas(battles)
    bt = BradleyTerry(len(ds.competitors), ftol=1e-13, gtol=1e-13)
    bt.fit(ds)
    out = bt.compute_ratings_and_cis(ds)
    theirs = pd.Series(np.asarray(out["ratings"]), index=ds.competitors)
    assert np.abs(_centred(theirs, elo.index) - elo).max() < 1e-6
    # its sandwich with no ridge: H^+ G H^+ from its own H and G (sum-zero ratings, as ours)
    h, g = BradleyTerry.compute_hessian_and_covariance(
        bt.params["ratings"], ds.pairs, ds.outcomes, ds.counts, ds.opt_weights, 0.0,
        len(ds.competitors))
    h_plus = np.linalg.pinv(np.asarray(h))
    sandwich = pd.Series(np.sqrt(np.diag(h_plus @ np.asarray(g) @ h_plus)) * bt.alpha,
                         index=ds.competitors)
    assert np.abs(sandwich.loc[se.index] / se - 1).max() < 1e-6
    # as published, its Hessian gets a ridge of 1e-5 x N: standard errors 3.3e-4 smaller here
    published = pd.Series(np.sqrt(np.asarray(out["variances"])), index=ds.competitors)
    gap = np.abs(published.loc[se.index] / se - 1).max()
    assert 1e-4 < gap < 1e-3
    del jnp


def test_fastchat_compute_bt(battles, ours):
    elo, _ = ours
    converged = fastchat_compute_bt(battles, converged=True)
    assert np.abs(_centred(converged, elo.index) - elo).max() < 1e-6
    # as published, L-BFGS-B stops on its default relative loss change: 0.002 Elo short here
    published = fastchat_compute_bt(battles)
    assert np.abs(_centred(published, elo.index) - elo).max() < 5e-3


def test_arena_hard_compute_mle_elo(battles, ours):
    elo, _ = ours
    theirs = compute_mle_elo(battles)
    # scikit-learn's lbfgs stops at its tol=1e-8: 1.2e-6 Elo from the optimum here
    assert np.abs(_centred(theirs, elo.index) - elo).max() < 2e-6


def test_task_clustering_widens_the_intervals_as_documented(battles, ours):
    """Ours by default: CR2 clustered by question (arena-hard's strong verdicts are copies of
    one verdict, and one question's verdicts are dependent); README: 1.56x to 2.26x."""
    _, se = ours
    r = ratings.fit(battles, cluster="question_id")
    ratio = pd.Series(r.se, index=r.models).loc[se.index] / se
    assert ratio.min() == pytest.approx(1.558, abs=1e-3)
    assert ratio.max() == pytest.approx(2.262, abs=1e-3)


def test_alpaca_eval_win_rates_per_model():
    with gzip.open(ALPACA, "rt", encoding="utf-8") as fh:
        records = json.load(fh)
    r = ratings.fit(ALPACA)
    soft = ratings.fit(ALPACA, model=ratings.BT(soft=True))
    base = "gpt4_1106_preview"
    for model in sorted({rec["generator_2"] for rec in records}):
        prefs = [float(rec["preference"]) for rec in records if rec["generator_2"] == model]
        published = alpaca_win_rates(prefs)
        ours = 100 * float(np.asarray(r.win_probability(model, base)).ravel()[0])
        assert abs(ours - published["discrete_win_rate"]) < 1e-8
        # soft outcomes: the preference as A's score, the quasi-likelihood fit
        ours = 100 * float(np.asarray(soft.win_probability(model, base)).ravel()[0])
        assert abs(ours - published["win_rate"]) < 1e-8
