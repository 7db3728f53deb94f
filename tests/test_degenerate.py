"""Degenerate boards and extreme numbers: an error (or an honest interval), never a zero-width
interval from no information, and every numeric argument finite, in range and named."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

import ratings
from ratings.core.errors import (
    DataWarning,
    DegenerateBoardError,
    InvalidVerdictsError,
    NonIdentifiableError,
)
from ratings.data.comparisons import from_counts
from ratings.result import ELO_SCALE


def all_ties(n_each: int = 2) -> pd.DataFrame:
    pairs = [("x", "y"), ("y", "z"), ("z", "x")] * n_each
    return pd.DataFrame({"model_a": [a for a, _ in pairs], "model_b": [b for _, b in pairs],
                         "winner": "tie", "task_id": [f"t{k}" for k in range(len(pairs))]})


def _glm_design(log: pd.DataFrame, names: list[str]) -> np.ndarray:
    """+1 for the model in slot A, -1 for slot B, over ``names`` (the others are references)."""
    x = np.zeros((len(log), len(names)))
    for k, (a, b) in enumerate(zip(log["model_a"], log["model_b"], strict=True)):
        for name, sign in ((a, 1.0), (b, -1.0)):
            if name in names:
                x[k, names.index(name)] = sign
    return x


def _outcome(log: pd.DataFrame) -> np.ndarray:
    return log["winner"].map({"A": 1.0, "B": 0.0, "tie": 0.5}).to_numpy()


@pytest.mark.filterwarnings("ignore::statsmodels.tools.sm_exceptions.PerfectSeparationWarning")
@pytest.mark.parametrize("kwargs", [{}, {"ci": "sandwich-z"}, {"cluster": None}])
def test_all_tie_board_gets_model_based_intervals_flagged(kwargs):
    """A board of ties only: the sandwich is zero everywhere, so every interval is the
    model-based one, which statsmodels' GLM (non-robust covariance) gives independently."""
    with pytest.warns(DataWarning, match=r"sandwich variance of 3 rating difference"
                      r".*board of ties only.*model-based variance"):  # fmt: skip
        r = ratings.fit(all_ties(), anchor="x", **kwargs)
    log = all_ties()
    glm = sm.GLM(_outcome(log), _glm_design(log, ["y", "z"]),
                 family=sm.families.Binomial()).fit(scale=1.0)  # fmt: skip
    assert r.se[["y", "z"]].to_numpy() == pytest.approx(ELO_SCALE * glm.bse, rel=1e-6)
    table = r.to_frame()
    assert table["model_based"].to_dict() == {"x": False, "y": True, "z": True}
    assert (table.drop("x")["upper"] - table.drop("x")["lower"] > 700).all()
    assert r.pairwise()["model_based"].all()
    assert r.diff("y", "z")["se"] == pytest.approx(
        ELO_SCALE * np.sqrt(glm.cov_params()[0, 0] + glm.cov_params()[1, 1]
                            - 2 * glm.cov_params()[0, 1]), rel=1e-6)  # fmt: skip


def test_all_tie_board_bootstrap_is_refused():
    with pytest.raises(DegenerateBoardError, match=r"would have zero width.*board of ties only"
                       r".*`ci='model'`") as info:  # fmt: skip
        ratings.fit(all_ties(), anchor="x", ci=ratings.Bootstrap(n=20))
    assert {frozenset(p) for p in info.value.pairs} == {
        frozenset(p) for p in [("x", "y"), ("x", "z"), ("y", "z")]}  # fmt: skip


@pytest.mark.filterwarnings("ignore::statsmodels.tools.sm_exceptions.PerfectSeparationWarning")
def test_all_tie_board_model_based_interval_matches_the_information():
    """Each pair tied twice: information 2 * 1/4 per pair; var(s_y - s_x) = 4/3 on the cycle.
    statsmodels' GLM (a binomial outcome of 1/2 per tie, the same likelihood) agrees."""
    r = ratings.fit(all_ties(), anchor="x", ci="model")
    assert r.elo.tolist() == pytest.approx([1000.0] * 3)
    assert r.se["y"] == pytest.approx(ELO_SCALE * np.sqrt(4 / 3), rel=1e-9)
    log = all_ties()
    glm = sm.GLM(np.full(len(log), 0.5), _glm_design(log, ["y", "z"]),
                 family=sm.families.Binomial()).fit(scale=1.0)  # fmt: skip
    assert r.se[["y", "z"]].to_numpy() == pytest.approx(ELO_SCALE * glm.bse, rel=1e-6)
    table = r.to_frame().set_index("model")
    assert (table.drop("x")["upper"] - table.drop("x")["lower"] > 700).all()
    assert "model_based" not in table  # nothing collapsed: model-based intervals asked for


ONLY_TIED = pd.DataFrame({
    "model_a": ["x", "y", "z", "x", "y", "w", "w"],
    "model_b": ["y", "z", "x", "z", "x", "x", "x"],
    "winner": ["A", "A", "A", "B", "B", "tie", "tie"],
    "task_id": [f"t{k}" for k in range(7)],
})  # fmt: skip


def test_model_that_only_tied_one_opponent_gets_the_model_based_variance():
    """w only ever tied x: s_w - s_x has no sandwich variance. Its interval takes the
    model-based variance (statsmodels' non-robust GLM covariance), flagged; the pairs of the
    other models keep the sandwich (statsmodels' HC0 on the board without w: w's verdicts have
    zero residuals and a separate parameter, so they change neither bread nor meat there)."""
    log = ONLY_TIED
    with pytest.warns(DataWarning, match=r"\('w' - 'x'\)"):
        r = ratings.fit(log, cluster=None, anchor="x")
    names = ["w", "y", "z"]
    glm = sm.GLM(_outcome(log), _glm_design(log, names), family=sm.families.Binomial())
    nonrobust = glm.fit(scale=1.0)
    assert r.diff("w", "x")["se"] == pytest.approx(ELO_SCALE * nonrobust.bse[0], rel=1e-6)
    rest = log[log["model_a"] != "w"]
    hc0 = sm.GLM(_outcome(rest), _glm_design(rest, ["y", "z"]),
                 family=sm.families.Binomial()).fit(cov_type="HC0")  # fmt: skip
    assert r.se[["y", "z"]].to_numpy() == pytest.approx(ELO_SCALE * hc0.bse, rel=1e-6)
    assert r.to_frame()["model_based"].to_dict() == {"w": True, "x": False, "y": False,
                                                     "z": False}  # fmt: skip
    pairs = r.pairwise().set_index(["model_a", "model_b"])["model_based"]
    assert {frozenset(p) for p in pairs[pairs].index} == {
        frozenset(p) for p in [("w", "x"), ("w", "y"), ("w", "z")]}  # fmt: skip
    # clustered CR2: the same flags; the collapsed contrast is a known variance (normal quantile)
    with pytest.warns(DataWarning, match="'w' - 'x'"):
        c = ratings.fit(log, anchor="x")
    assert c.diff("w", "x")["se"] == pytest.approx(ELO_SCALE * nonrobust.bse[0], rel=1e-6)
    d = c.diff("w", "x")
    assert np.isnan(d["df"]) and d["upper"] == pytest.approx(1.959964 * d["se"], rel=1e-6)
    assert c.to_frame()["model_based"].to_dict() == {"w": True, "x": False, "y": False,
                                                     "z": False}  # fmt: skip
    r = ratings.fit(log, ci="model")  # honest: w - x is barely known
    assert r.diff("w", "x")["se"] > 200


def test_a_board_with_decisive_verdicts_is_not_flagged(rng):
    n = 400
    a = rng.integers(0, 4, n)
    b = (a + rng.integers(1, 4, n)) % 4
    names = np.array(["m0", "m1", "m2", "m3"])
    winner = np.where(rng.random(n) < 0.5, "A", np.where(rng.random(n) < 0.8, "B", "tie"))
    log = pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner,
                        "task_id": rng.integers(0, 40, n).astype(str)})  # fmt: skip
    for kwargs in ({}, {"cluster": None}, {"ci": ratings.Bootstrap(n=30)}):
        r = ratings.fit(log, **kwargs)
        assert np.all(np.isfinite(r.se)) and (r.se.drop(r.se.idxmin()) > 0).all()


def test_separated_groups_are_an_error_not_an_interval():
    log = pd.DataFrame({"model_a": ["x", "y", "p", "q"], "model_b": ["y", "x", "q", "p"],
                        "winner": ["A", "A", "A", "A"]})  # fmt: skip
    with pytest.raises(NonIdentifiableError, match="splits into 2 groups"):
        ratings.fit(log)


@pytest.mark.parametrize("kwargs, match", [
    (lambda: {"anchor": "x=1e300"},
     r"`anchor` must be a finite number >= -1e6 and <= 1e6; got 1e\+300"),
    (lambda: {"anchor": ("x", float("inf"))}, r"`anchor_rating` .*got inf"),
    (lambda: {"anchor": ("x", float("nan"))}, r"`anchor_rating` .*got nan"),
    (lambda: {"model": ratings.BT(penalty=1e308)},
     r"`penalty` must be a finite number >= 0 and <= 1e6; got 1e\+308"),
    (lambda: {"model": ratings.BT(penalty=float("nan"))}, r"`penalty` .*got nan"),
    (lambda: {"level": float("nan")}, r"`level` must be a float strictly between 0 and 1; got nan"),
    (lambda: {"level": 1e308}, r"`level` .*got 1e\+308"),
    (lambda: {"ci": ratings.Bootstrap(n=1e300)}, r"`n_boot` must be an integer >= 2 .*got 1e\+300"),
    (lambda: {"ci": ratings.Bootstrap(n=2.5)}, r"`n_boot` must be an integer"),
    (lambda: {"ci": ratings.Bootstrap(seed=-1)}, r"`seed` must be an integer >= 0; got -1"),
    (lambda: {"solver": ratings.Solver(tol=0.0)},
     r"`tol` must be a finite number > 0 and <= 1; got 0\.0"),
    (lambda: {"solver": ratings.Solver(max_iter=float("inf"))},
     r"`max_iter` must be an integer >= 1; got inf"),
])  # fmt: skip
def test_extreme_numeric_arguments_are_named(kwargs, match):
    log = pd.DataFrame({"model_a": ["x", "y", "z", "x"], "model_b": ["y", "z", "x", "y"],
                        "winner": ["A", "A", "A", "B"]})  # fmt: skip
    with pytest.raises(ValueError, match=match):  # the specs check their values when made
        ratings.fit(log, **kwargs())


@pytest.mark.parametrize("value, what", [
    (1e308, "exceed 2\\*\\*53"), (1e300, "exceed 2\\*\\*53"), (float("inf"), "are not finite"),
    (float("nan"), "are missing or not numbers"), (2.5, "are not whole numbers"),
    (-1, "are negative"), ("many", "are missing or not numbers"),
])  # fmt: skip
def test_extreme_counts_are_refused_with_the_value(value, what):
    counts = pd.DataFrame({"model_a": ["x", "y", "z"], "model_b": ["y", "z", "x"],
                           "wins_a": [3, value, 1], "wins_b": [1, 1, 1], "ties": [0, 0, 0]})
    with pytest.raises(InvalidVerdictsError, match=rf"counts that {what}.*rows \[1\] \(e\.g\. "
                       rf"wins_a = "):  # fmt: skip
        from_counts(counts)


@pytest.mark.parametrize("weights", [{"a": 1e308, "b": 1e308}, {"a": float("inf"), "b": 1.0},
                                     {"a": float("nan"), "b": 1.0}, {"a": -1.0, "b": 1.0},
                                     {"a": 0.0, "b": 0.0}])  # fmt: skip
def test_extreme_scope_weights_are_refused(weights):
    from ratings.scopes.combine import combine, fit_scopes

    base = pd.DataFrame({"model_a": ["x", "y", "z", "x"], "model_b": ["y", "z", "x", "y"],
                         "winner": ["A", "A", "A", "B"], "task_id": ["1", "2", "3", "4"]})
    log = pd.concat([base.assign(scope="a"), base.assign(scope="b")], ignore_index=True)
    with pytest.raises(ValueError, match=r"`weights` must be"):
        combine(fit_scopes(log, model="bt", ci="model"), weights=weights, method="independent")


def test_collapsed_contrasts_matches_a_check_of_every_pair(rng):
    """The O(M log M) candidate search finds exactly the pairs a full scan of all pairs finds."""
    import itertools

    from ratings.inference.covariance import collapsed_contrasts

    def every_pair(cov, model_cov, rtol=1e-8):
        d, e = np.diag(cov), np.diag(model_cov)
        return [(i, j) for i, j in itertools.combinations(range(len(d)), 2)
                if (v := e[i] + e[j] - 2 * model_cov[i, j]) > 0
                and d[i] + d[j] - 2 * cov[i, j] <= rtol * v]  # fmt: skip

    for _ in range(150):
        m = int(rng.integers(2, 12))
        a = rng.normal(size=(m, m + 3))
        cov = a @ a.T
        for _ in range(int(rng.integers(0, 3))):  # rows made equal: a collapsed contrast
            i, j = rng.choice(m, 2, replace=False)
            cov[i, :] = cov[j, :]
            cov[:, i] = cov[:, j]
        if rng.random() < 0.2:
            cov[0, :] = cov[:, 0] = 0.0  # collapsed against the reference
        if rng.random() < 0.1:
            cov[:] = 0.0  # all ties
        b = rng.normal(size=(m, m + 3))
        model_cov = b @ b.T + np.eye(m)
        found = sorted(map(tuple, collapsed_contrasts(cov, model_cov).tolist()))
        assert found == every_pair(cov, model_cov)


def test_crowd_bt_all_tie_board_gets_model_based_intervals_too():
    log = all_ties(3).assign(judge=["j1", "j2", "j3"] * 3)
    crowd = ratings.CrowdBT(judge_quality={"j1": 0.9, "j2": 0.8, "j3": 0.7})
    with pytest.warns(DataWarning, match="sandwich variance of 3 rating difference"):
        r = ratings.fit(log, model=crowd, anchor="x")
    model = ratings.fit(log, model=crowd, anchor="x", ci="model")
    assert r.se.to_numpy() == pytest.approx(model.se.to_numpy(), rel=1e-6)
    assert r.to_frame()["model_based"].tolist() == [False, True, True]


def test_command_line_fits_a_board_of_ties_and_flags_it(tmp_path, capsys):
    from ratings.cli.app import main

    log = tmp_path / "v.csv"
    all_ties().to_csv(log, index=False)
    code = main(["fit", str(log), "--anchor", "x=1000", "--out", str(tmp_path / "r.csv"),
                 "--pairs", str(tmp_path / "p.csv")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    assert "warning: The sandwich variance of 3 rating difference(s) is zero" in err
    table = pd.read_csv(tmp_path / "r.csv").set_index("model")
    assert table["model_based"].to_dict() == {"x": False, "y": True, "z": True}
    assert table.loc["y", "se"] == pytest.approx(ELO_SCALE * np.sqrt(4 / 3), rel=1e-9)
    assert pd.read_csv(tmp_path / "p.csv")["model_based"].all()
