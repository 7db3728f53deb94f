"""The peers' own rating functions, as published, for the reproduction tests and benchmark.

Nothing here uses :mod:`ratings`. The packages are not installable here (FastChat pulls a
serving stack; alpaca_eval, an API client), so each function is ported unchanged in its
arithmetic, with its source:

* :func:`fastchat_compute_bt`: ``compute_bt`` of lm-sys/FastChat,
  ``fastchat/serve/monitor/rating_systems.py`` (``preprocess_for_bt``, ``bt_loss_and_grad``,
  ``fit_bt``, ``scale_and_offset``; Apache-2.0);
* :func:`compute_mle_elo`: ``compute_mle_elo`` of lmarena/arena-hard-auto, ``utils_math.py``
  (commit 0489bf3; the notebook version FastChat's leaderboard used; Apache-2.0);
* :func:`alpaca_win_rates`: AlpacaEval's ``get_winrate`` (tatsu-lab/alpaca_eval,
  ``src/alpaca_eval/metrics/winrate.py`` and ``helpers.py``: ``AbsoluteScoringRule`` and
  ``ZeroOneScoringRule``; Apache-2.0).

arena-rank (installed) is called as a package, not ported.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.special import expit

__all__ = ["alpaca_win_rates", "compute_mle_elo", "fastchat_compute_bt"]


def _matchups_models(df: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    n_rows = len(df)
    model_indices, models = pd.factorize(pd.concat([df["model_a"], df["model_b"]]))
    return np.column_stack([model_indices[:n_rows], model_indices[n_rows:]]), models.to_list()


def _preprocess_for_bt(df: pd.DataFrame):
    n_rows = len(df)
    schedule = np.full((n_rows, 3), fill_value=1, dtype=np.int32)
    schedule[:, [0, 1]], models = _matchups_models(df)
    schedule[(df["winner"] == "model_a").to_numpy(), 2] = 2
    schedule[(df["winner"] == "model_b").to_numpy(), 2] = 0
    matchups_outcomes, weights = np.unique(schedule, return_counts=True, axis=0)
    matchups = matchups_outcomes[:, [0, 1]]
    outcomes = matchups_outcomes[:, 2].astype(np.float64) / 2.0
    return matchups, outcomes, models, weights.astype(np.float64)


def _bt_loss_and_grad(ratings, matchups, outcomes, weights, alpha=1.0):
    matchup_ratings = ratings[matchups]
    logits = alpha * (matchup_ratings[:, 0] - matchup_ratings[:, 1])
    probs = expit(logits)
    loss = -((np.log(probs) * outcomes + np.log(1.0 - probs) * (1.0 - outcomes))
             * weights).sum()
    matchups_grads = -alpha * (outcomes - probs) * weights
    model_grad = np.zeros_like(ratings)
    np.add.at(model_grad, matchups[:, [0, 1]],
              matchups_grads[:, None] * np.array([1.0, -1.0], dtype=np.float64))
    return loss, model_grad


def fastchat_compute_bt(df: pd.DataFrame, base: float = 10.0, scale: float = 400.0,
                        init_rating: float = 1000, tol: float = 1e-6,
                        converged: bool = False) -> pd.Series:
    """FastChat's ``compute_bt`` (winner ``model_a`` / ``model_b`` / anything else a tie).

    As published, L-BFGS-B stops on SciPy's default relative loss change (``ftol`` 2.2e-9)
    before ``gtol`` is met, a few thousandths of an Elo point short of the optimum;
    ``converged=True`` (not in FastChat) runs the same loss to ``ftol=0``, ``gtol=1e-12``.
    """
    matchups, outcomes, models, weights = _preprocess_for_bt(df)
    options = {"disp": False, "maxiter": 100, "gtol": tol}
    if converged:
        options.update(ftol=0.0, gtol=1e-12, maxiter=10_000)
    with warnings.catch_warnings():  # SciPy deprecates the published `disp` option
        warnings.simplefilter("ignore", DeprecationWarning)
        result = minimize(fun=_bt_loss_and_grad, x0=np.zeros(len(models)),
                          args=(matchups, outcomes, weights, math.log(base)), jac=True,
                          method="L-BFGS-B", options=options)
    scaled = result["x"] * scale + init_rating
    return pd.Series(scaled, index=models).sort_values(ascending=False)


def compute_mle_elo(df: pd.DataFrame, SCALE=400, BASE=10, INIT_RATING=1000,
                    baseline_model="gpt-4-0314") -> pd.Series:
    """arena-hard-auto's (and FastChat's notebook) ``compute_mle_elo``: scikit-learn's
    unpenalised logistic regression on the battles doubled, a tie one win each way."""
    from sklearn.linear_model import LogisticRegression

    models = pd.concat([df["model_a"], df["model_b"]]).unique()
    models = pd.Series(np.arange(len(models)), index=models)
    df = pd.concat([df, df], ignore_index=True)
    p, n = len(models.index), df.shape[0]
    x = np.zeros([n, p])
    x[np.arange(n), models[df["model_a"]]] = +math.log(BASE)
    x[np.arange(n), models[df["model_b"]]] = -math.log(BASE)
    y = np.zeros(n)
    y[(df["winner"] == "model_a").to_numpy()] = 1.0
    tie_idx = np.array((df["winner"] == "tie") | (df["winner"] == "tie (bothbad)"))
    tie_idx[len(tie_idx) // 2:] = False
    y[tie_idx] = 1.0
    with warnings.catch_warnings():  # scikit-learn deprecates the published `penalty=None`
        warnings.simplefilter("ignore", FutureWarning)
        lr = LogisticRegression(fit_intercept=False, penalty=None, tol=1e-8)
        lr.fit(x, y)
    elo_scores = SCALE * lr.coef_[0] + INIT_RATING
    if baseline_model in models.index:
        elo_scores += 1000 - elo_scores[models[baseline_model]]
    return pd.Series(elo_scores, index=models.index).sort_values(ascending=False)


def alpaca_win_rates(preferences) -> dict[str, float]:
    """AlpacaEval's ``get_winrate``: ``win_rate`` (the soft one, the mean of preference - 1)
    and ``discrete_win_rate`` (1.5 a draw, the rest rounded), in percent, with the counts."""
    soft = pd.Series(preferences).replace({0: 1.5}).astype(float)
    n_draws = int(((soft == 1.5) | (soft == 0)).sum())
    soft = soft.astype(float).replace({0.0: 1.5})
    soft = soft[(soft >= 1) & (soft <= 2)] - 1
    discrete = pd.Series(preferences).replace({1.5: 0}).round().astype(pd.Int64Dtype())
    discrete = discrete.astype(float).replace({0.0: 1.5})
    discrete = discrete[(discrete >= 1) & (discrete <= 2)] - 1
    return {"win_rate": float(soft.mean() * 100), "discrete_win_rate":
            float(discrete.mean() * 100), "n_wins": int((soft > 0.5).sum()),
            "n_wins_base": int((soft < 0.5).sum()), "n_draws": n_draws,
            "n_total": len(soft)}
