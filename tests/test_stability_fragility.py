"""Fragility (``Ratings.fragility()``): every reported flip set reverses its pair when the
board is refitted without it (by ``ratings.fit`` on the log without those rows), on several
boards; leave-one-judge-out changes equal refits without that judge."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import simulate_verdicts

import ratings
from ratings.datasets.example import example_path


def _example(scope: str) -> pd.DataFrame:
    v = pd.read_csv(example_path())
    return v[v["scope"] == scope].drop(columns="scope").reset_index(drop=True)


def _simulated(seed: int, ties: float) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return simulate_verdicts(rng, [0.0, 0.15, 0.3, -0.2, 0.5, 0.05], 900, 60,
                             tie_fraction=ties, task_sd=0.3)


BOARDS = {
    "example-analytical": lambda: (_example("analytical"), "GPT-5.5 (medium)=1000"),
    "example-presentation": lambda: (_example("presentation"), None),
    "simulated": lambda: (_simulated(5, 0.0), "m00=1000"),
    "simulated-ties": lambda: (_simulated(6, 0.15), None),
}


@pytest.fixture(scope="module", params=sorted(BOARDS))
def board(request):
    log, anchor = BOARDS[request.param]()
    r = ratings.fit(log, anchor=anchor)
    return log, anchor, r, r.fragility(max_refits=6)


def _order(log: pd.DataFrame, anchor, a: str, b: str) -> float:
    r = ratings.fit(log, anchor=anchor, ci="model")
    return float(r.elo[a] - r.elo[b])


def test_every_reported_flip_set_reverses_its_pair_when_refitted(board):
    log, anchor, r, frag = board
    pairs = frag.pairs
    assert list(pairs["model_a"]) == list(r.ranked_models[:-1])
    assert list(pairs["model_b"]) == list(r.ranked_models[1:])
    assert pairs["confirmed"].any()
    for row in pairs[pairs["confirmed"]].itertuples():
        assert row.n_verdicts == len(row.verdicts) >= 1
        assert _order(log, anchor, row.model_a, row.model_b) > 0
        assert _order(log.drop(index=row.verdicts), anchor, row.model_a, row.model_b) < 0


def test_every_reported_task_set_reverses_its_pair_when_refitted(board):
    log, anchor, _, frag = board
    done = frag.pairs[frag.pairs["confirmed_tasks"]]
    assert len(done)
    for row in done.itertuples():
        assert row.n_tasks == len(row.tasks)
        kept = log[~log["task_id"].astype(str).isin(row.tasks)]
        assert _order(kept, anchor, row.model_a, row.model_b) < 0


def test_leave_one_judge_out_equals_refits_without_that_judge(board):
    log, anchor, r, frag = board
    loo = frag.leave_one_out
    judges = sorted(log["judge"].unique()) if "judge" in log else []
    if len(judges) < 2:
        assert loo.empty
        return
    assert sorted(loo["value"].unique()) == judges
    for judge in judges:
        refit = ratings.fit(log[log["judge"] != judge], anchor=anchor, ci="model")
        got = loo[loo["value"] == judge].set_index("model")
        np.testing.assert_allclose(got["elo"].to_numpy(), refit.elo[got.index].to_numpy(),
                                   atol=1e-8)
        np.testing.assert_allclose(got["elo_change"].to_numpy(),
                                   (refit.elo - r.elo)[got.index].to_numpy(), atol=1e-8)


def test_standard_errors_scale_as_one_over_root_n():
    """The premise of ``more_verdicts``: the same mix twice over halves a difference's
    variance (the log duplicated on new tasks, fitted afresh)."""
    log = _simulated(7, 0.0)
    twice = pd.concat([log, log.assign(task_id=log["task_id"].astype(str) + "-copy")])
    r1, r2 = ratings.fit(log), ratings.fit(twice)
    for a, b in (("m00", "m01"), ("m02", "m04")):
        ratio = r2.diff(a, b)["se"] / r1.diff(a, b)["se"]
        assert ratio == pytest.approx(1 / np.sqrt(2), rel=0.03)


def test_more_verdicts_only_where_the_rank_intervals_do_not_separate(board):
    frag = board[3]
    p = frag.pairs
    assert p.loc[p["separated"], "more_verdicts"].isna().all()
    unsep = p[~p["separated"]]
    assert (unsep["more_verdicts"] >= 0).all()


def test_a_fit_without_its_verdicts_is_refused():
    r = ratings.fit(_simulated(5, 0.0), ci="model")
    r2 = ratings.fit(ratings.aggregate(_simulated(5, 0.0)))
    with pytest.raises(ValueError, match="plain Bradley-Terry fit of a verdict log"):
        r2.fragility()
    assert r.fragility(max_refits=2).pairs.shape[0] == len(r.models) - 1
