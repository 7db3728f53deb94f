"""Crowd-BT on a one-judge board where every model meets one baseline (AlpacaEval's shape: 57
models against a baseline, 805 tasks, one verdict per (task, model)).

There the likelihood is flat in the judge's quality: each model's win rate against the baseline,
p_i = eta sigma(s_i) + (1 - eta) sigma(-s_i), is matched for every eta whose flips fit inside it,
so the plain estimate's information is singular and only rounding makes it look positive
definite. The fit must say so (the one-judge warning, or open intervals), never stop with a
linear-algebra message.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import expit, logit

import ratings
from ratings.inference.covariance import identified_inverse
from ratings.models.crowd.likelihood import fit_crowd_bt

N_MODELS, N_TASKS = 57, 805


def baseline_board(seed: int, sd: float = 2.5, eta: float = 0.9) -> pd.DataFrame:
    """57 models each judged once per task against ``baseline`` by one judge of quality
    ``eta`` (strengths N(-1, sd), a per-task difficulty shared by the models)."""
    rng = np.random.default_rng(seed)
    s = rng.normal(-1.0, sd, N_MODELS)
    models = np.repeat([f"m{i:02d}" for i in range(N_MODELS)], N_TASKS)
    tasks = np.tile([f"t{t}" for t in range(N_TASKS)], N_MODELS)
    d = np.repeat(s, N_TASKS) + np.tile(rng.normal(0.0, 0.5, N_TASKS), N_MODELS)
    p = eta * expit(d) + (1 - eta) * expit(-d)
    won = rng.random(d.size) < p
    return pd.DataFrame({"model_a": models, "model_b": "baseline",
                         "winner": np.where(won, "A", "B"), "task_id": tasks, "judge": "gpt4"})


@pytest.fixture(scope="module")
def board() -> pd.DataFrame:
    return baseline_board(0)  # raised "Matrix is not positive definite" before


def _profile_nll(log: pd.DataFrame, eta: float) -> float:
    """The negative log-likelihood maximised over the strengths at a fixed eta, in closed form
    (each model's own win rate against the baseline, where the flips fit inside it)."""
    wins = (log["winner"] == "A").groupby(log["model_a"]).agg(["sum", "count"])
    k, n = wins["sum"].to_numpy(float), wins["count"].to_numpy(float)
    p = np.clip(k / n, 1 - eta, eta)
    s = logit((p - (1 - eta)) / (2 * eta - 1))
    q = eta * expit(s) + (1 - eta) * expit(-s)
    return float(-(k * np.log(q) + (n - k) * np.log1p(-q)).sum())


def test_the_likelihood_is_flat_in_eta_on_a_baseline_board(board):
    """Independent of the package: the profile likelihood has the same maximum over a range
    of eta (every eta whose flips fit inside the extreme win rates)."""
    wins = (board["winner"] == "A").groupby(board["model_a"]).mean()
    top = float(max(wins.max(), 1 - wins.min()))
    lows = [_profile_nll(board, e) for e in np.linspace(top + 1e-3, 0.999, 5)]
    assert np.ptp(lows) < 1e-6
    best = minimize_scalar(lambda e: _profile_nll(board, e), bounds=(0.55, 0.9999),
                           method="bounded")  # fmt: skip
    assert best.fun == pytest.approx(lows[0], abs=1e-6)


def test_the_plain_information_counts_as_singular(board):
    data = ratings.aggregate(board)
    plain = fit_crowd_bt(data.collapsed(), prior=None, ref=int(data.models.get_loc("baseline")))
    with pytest.raises(np.linalg.LinAlgError):
        identified_inverse(plain.information, plain.free)


@pytest.mark.parametrize("seed", [0, 2, 4])
def test_crowd_bt_fits_with_the_one_judge_warning(seed):
    log = board_log = baseline_board(seed)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        r = ratings.fit(board_log, model="crowd-bt", anchor="baseline")
    messages = [str(w.message) for w in seen if issubclass(w.category, ratings.JudgeWarning)]
    assert any("Only one judge ('gpt4')" in m for m in messages), messages
    assert len(r.models) == N_MODELS + 1 and r.fit_info.converged
    se = r.se.drop("baseline")
    assert np.all(se > 0)  # open (inf) or finite, never zero width
    # the posterior mode sits where the verdicts put the models: the order of the win rates
    wins = (log["winner"] == "A").groupby(log["model_a"]).mean()
    elo = r.elo.drop("baseline")[wins.index]
    assert np.corrcoef(elo.rank(), wins.rank())[0, 1] > 0.99


def test_the_command_line_fits_the_board(board, tmp_path, capsys):
    from ratings.cli.app import main

    path = tmp_path / "board.csv"
    board.to_csv(path, index=False)
    assert main(["fit", str(path), "--model", "crowd-bt", "--anchor", "baseline"]) == 0
    captured = capsys.readouterr()
    assert "Only one judge ('gpt4')" in captured.err
    assert "positive definite" not in captured.out + captured.err
