"""Published Bradley-Terry fits: Stigler's journal citations, Wikipedia's example, a cycle."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ratings
from ratings.api.fitting import fit
from ratings.data.comparisons import aggregate

JOURNALS = ["Biometrika", "CommStat", "JASA", "JRSSB"]
# CITES[y][x]: citations of journal x by journal y (Stigler 1994, via Agresti's "Categorical Data
# Analysis", Table 11.6). A citation of x by y is a win for x; self-citations are ignored.
CITES = {
    "Biometrika": {"Biometrika": 714, "CommStat": 33, "JASA": 320, "JRSSB": 284},
    "CommStat": {"Biometrika": 730, "CommStat": 425, "JASA": 813, "JRSSB": 276},
    "JASA": {"Biometrika": 498, "CommStat": 68, "JASA": 1072, "JRSSB": 325},
    "JRSSB": {"Biometrika": 221, "CommStat": 17, "JASA": 142, "JRSSB": 188},
}
# Published abilities (standard errors), Biometrika = 0 (Agresti, Table 11.7; BradleyTerry2).
PUBLISHED = {
    "CommStat": (-2.9490725, 0.10254534),
    "JASA": (-0.4795698, 0.06058873),
    "JRSSB": (0.2689541, 0.07082997),
}


def verdicts_from_wins(wins: dict[tuple[str, str], int]) -> pd.DataFrame:
    """One canonical verdict row per win: ``wins[(x, y)]`` rows where x beat y."""
    pairs = [(x, y) for (x, y), n in wins.items() for _ in range(n)]
    a, b = zip(*pairs, strict=True)
    return pd.DataFrame({"model_a": a, "model_b": b, "winner": "A"})


@pytest.fixture(scope="module")
def citations() -> pd.DataFrame:
    wins = {
        (cited, citing): n
        for citing, row in CITES.items()
        for cited, n in row.items()
        if cited != citing
    }
    log = verdicts_from_wins(wins)
    assert len(log) == 3727
    return log


@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_stigler_journal_citations(citations, engine):
    r = fit(
        aggregate(citations, cluster=None),
        anchor="Biometrika",
        ci="model",
        solver=ratings.Solver(engine=engine),
    )
    assert list(r.models) == JOURNALS
    strength = pd.Series(r.strength, index=r.models)
    se = pd.Series(np.sqrt(np.diag(r.cov)), index=r.models)
    assert strength["Biometrika"] == 0.0 and se["Biometrika"] == 0.0
    for journal, (ability, stderr) in PUBLISHED.items():
        assert strength[journal] == pytest.approx(ability, abs=1e-6)
        assert se[journal] == pytest.approx(stderr, abs=1e-6)
        assert r.se[journal] == pytest.approx(
            400 / np.log(10) * stderr, abs=400 / np.log(10) * 1e-6
        )
    assert r.elo["Biometrika"] == 1000.0


def test_stigler_with_a_random_verdict_order_and_sides(citations, rng):
    """Rows in any order, and A/B sides swapped together with the verdict, change nothing."""
    log = citations.sample(frac=1.0, random_state=rng).reset_index(drop=True)
    flip = rng.random(len(log)) < 0.5
    log.loc[flip, ["model_a", "model_b"]] = log.loc[flip, ["model_b", "model_a"]].to_numpy()
    log.loc[flip, "winner"] = "B"
    r = fit(aggregate(log, cluster=None), anchor="Biometrika=0", ci="model")
    assert r.elo["Biometrika"] == 0.0
    for journal, (ability, stderr) in PUBLISHED.items():
        i = r.models.get_loc(journal)
        assert r.strength[i] == pytest.approx(ability, abs=1e-6)
        assert np.sqrt(r.cov[i, i]) == pytest.approx(stderr, abs=1e-6)


# Wikipedia, "Bradley-Terry model", worked example: wins of the row team against the column team.
WIKI_TEAMS = ["A", "B", "C", "D"]
WIKI_WINS = np.array([[0, 2, 0, 1], [3, 0, 5, 0], [0, 3, 0, 1], [4, 0, 3, 0]])


def zermelo_mle(wins: np.ndarray, n_iter: int = 5000) -> np.ndarray:
    """Zermelo's (MM) iteration p_i <- W_i / sum_j n_ij / (p_i + p_j), geometric mean 1."""
    n = wins + wins.T
    p = np.ones(wins.shape[0])
    for _ in range(n_iter):
        p = wins.sum(axis=1) / (n / (p[:, None] + p[None, :])).sum(axis=1)
        p /= np.exp(np.log(p).mean())
    return p


def test_wikipedia_worked_example():
    wins = {
        (WIKI_TEAMS[i], WIKI_TEAMS[j]): int(WIKI_WINS[i, j])
        for i in range(4)
        for j in range(4)
        if WIKI_WINS[i, j]
    }
    r = fit(aggregate(verdicts_from_wins(wins), cluster=None), ci="model")
    p = np.exp(r.strength)  # centred log-strengths: geometric mean of p is 1
    # The article's normalised scores after its iterations converge.
    np.testing.assert_allclose(p, [0.640, 1.043, 0.660, 2.270], atol=5e-4)
    np.testing.assert_allclose(p, zermelo_mle(WIKI_WINS), rtol=1e-9)
    assert list(r.elo.sort_values(ascending=False).index) == ["D", "B", "C", "A"]
    # P(D beats A) = p_D / (p_D + p_A).
    prob = r.win_probability("D", "A")["probability"]
    assert prob == pytest.approx(p[3] / (p[3] + p[0]), rel=1e-12)


@pytest.mark.parametrize("ci", ["model", "sandwich"])
@pytest.mark.parametrize("ties", [0, 3])
def test_balanced_cycle_has_equal_ratings(ci, ties):
    """A beats B, B beats C, C beats A, n times each: every strength is 0.

    At p = 1/2 each verdict carries information 1/4 and squared score 1/4 (a tie: 0), so
    H = (n/4) L for the triangle Laplacian L, and the centred model-based covariance is
    (4 / (3n)) (I - J/3). The HC0 meat is (n/4) L as well without ties.
    """
    n = 6
    wins = {("A", "B"): n, ("B", "C"): n, ("C", "A"): n}
    log = verdicts_from_wins(wins)
    tie_rows = pd.DataFrame(
        {"model_a": ["A", "B", "C"] * ties, "model_b": ["B", "C", "A"] * ties, "winner": "tie"}
    )
    log = pd.concat([log, tie_rows], ignore_index=True)
    r = fit(aggregate(log, cluster=None), ci=ci)
    np.testing.assert_allclose(r.strength, 0.0, atol=1e-12)
    np.testing.assert_allclose(r.elo, 1000.0, atol=1e-9)
    n_pair = n + ties
    centre = np.eye(3) - 1.0 / 3.0
    expected = 4.0 / (3.0 * n_pair) * centre
    if ci == "sandwich":  # meat (n/4) L: ties score 0 at p = 1/2
        expected = expected * n / n_pair
    np.testing.assert_allclose(r.cov, expected, rtol=1e-10, atol=1e-14)
