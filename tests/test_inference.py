"""CR2 covariances and Satterthwaite degrees of freedom against an independent computation.

The reference is written out verdict by verdict with dense NumPy, nothing from the package:
the GLM working model of each verdict (x = grad p / sqrt(p (1 - p)), e = (y - p) / sqrt(p (1 - p)),
grad p by central differences of p itself), the bias-reduced linearisation
A_g = (I - X_g M X_g^T)^(-1/2) by an explicit eigen-decomposition per cluster (Bell & McCaffrey
2002), and the Satterthwaite degrees of freedom of Pustejovsky & Tipton (2018) from the N x G
matrix with columns (I - H)_{., g} A_g X_g M c (their working model Phi = I). The package works
on aggregated rows (one per task, judge and pair, with counts) and never forms an N x N matrix,
so agreement also checks the aggregation algebra. With A_g = I the reference is statsmodels'
cluster-robust covariance, which anchors the reference itself.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from helpers import Y_OF_WINNER, design, simulate_verdicts
from scipy.special import expit

import ratings
import ratings.inference as inf
import ratings.inference.cluster as cluster_module
from ratings.inference.satterthwaite import pair_contrasts
from ratings.result import ELO_SCALE


def sparse_board(seed: int = 5, k: int = 3) -> pd.DataFrame:
    """Six models on 25 tasks with ties and task effects, and model "new" on ``k`` tasks."""
    rng = np.random.default_rng(seed)
    log = simulate_verdicts(rng, [0.0, 0.6, -0.4, 1.0, -0.8, 0.2], 500, 25, tie_fraction=0.1,
                            task_sd=0.5)  # fmt: skip
    tasks = rng.choice(sorted(log["task_id"].unique()), k, replace=False)
    rows = []
    for t in tasks:
        for _ in range(12):
            opp = f"m{rng.integers(0, 6):02d}"
            y = rng.random() < expit(0.3 - 0.0)
            rows.append(("new", opp, "A" if y else "B", t) if rng.random() < 0.5 else
                        (opp, "new", "B" if y else "A", t))  # fmt: skip
    extra = pd.DataFrame(rows, columns=["model_a", "model_b", "winner", "task_id"])
    return pd.concat([log, extra], ignore_index=True)


def _msqrt_inv(a: np.ndarray) -> np.ndarray:
    lam, u = np.linalg.eigh(a)
    return (u / np.sqrt(lam)) @ u.T


class Reference:
    """Dense verdict-level CR2 for a working design ``xt`` (N x P), residuals ``e``."""

    def __init__(self, xt: np.ndarray, e: np.ndarray, groups: np.ndarray,
                 penalty: np.ndarray | None = None) -> None:  # fmt: skip
        self.xt, self.e = xt, e
        self.m = np.linalg.inv(xt.T @ xt + (0.0 if penalty is None else penalty))
        self.groups = [np.flatnonzero(groups == g) for g in np.unique(groups)]
        self.a = [_msqrt_inv(np.eye(idx.size) - xt[idx] @ self.m @ xt[idx].T)
                  for idx in self.groups]  # fmt: skip

    def cov(self, adjusted: bool = True) -> np.ndarray:
        meat = np.zeros_like(self.m)
        for idx, a in zip(self.groups, self.a, strict=True):
            s = self.xt[idx].T @ ((a if adjusted else np.eye(idx.size)) @ self.e[idx])
            meat += np.outer(s, s)
        return self.m @ meat @ self.m

    def df(self, c: np.ndarray) -> float:
        n = self.e.size
        i_h = np.eye(n) - self.xt @ self.m @ self.xt.T
        p = np.zeros((n, len(self.groups)))
        for k, (idx, a) in enumerate(zip(self.groups, self.a, strict=True)):
            p[:, k] = i_h[:, idx] @ (a @ self.xt[idx] @ self.m @ c)
        omega = p.T @ p
        return float(np.trace(omega) ** 2 / np.sum(omega**2))


def _working(prob, x0: np.ndarray, y: np.ndarray, free: np.ndarray):
    """x = grad p / sqrt(p (1 - p)) by central differences, e = (y - p) / sqrt(p (1 - p))."""
    p0 = prob(x0)
    grad = np.empty((p0.size, x0.size))
    for q in range(x0.size):
        step = np.zeros(x0.size)
        step[q] = 1e-6
        grad[:, q] = (prob(x0 + step) - prob(x0 - step)) / 2e-6
    w = np.sqrt(p0 * (1.0 - p0))
    return grad[:, free] / w[:, None], (y - p0) / w


def bt_reference(log: pd.DataFrame, r: ratings.Ratings) -> Reference:
    models = list(r.models)
    x = design(log["model_a"], log["model_b"], models)
    y = log["winner"].map(Y_OF_WINNER).to_numpy(dtype=np.float64)
    free = np.arange(1, len(models))  # anchored at models[0]
    xt, e = _working(lambda th: expit(x @ th), np.asarray(r.strength), y, free)
    return Reference(xt, e, pd.factorize(log["task_id"])[0])


def _contrast(models, a: str, b: str) -> np.ndarray:
    c = np.zeros(len(models))
    c[list(models).index(a)] += 1.0
    c[list(models).index(b)] -= 1.0
    return c[1:]  # the free coordinates (models[0] is the anchor)


@pytest.fixture(scope="module")
def bt_case():
    log = sparse_board()
    r = ratings.fit(log, anchor="m00")
    return log, r, bt_reference(log, r)


def test_reference_with_identity_is_statsmodels_cluster(bt_case):
    log, r, ref = bt_case
    x = design(log["model_a"], log["model_b"], list(r.models))[:, 1:]
    y = log["winner"].map(Y_OF_WINNER).to_numpy(dtype=np.float64)
    groups = pd.factorize(log["task_id"])[0]
    sm_fit = sm.GLM(y, x, family=sm.families.Binomial()).fit(
        tol=1e-13, cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False})
    np.testing.assert_allclose(sm_fit.params, r.strength[1:], atol=1e-8)
    np.testing.assert_allclose(ref.cov(adjusted=False), sm_fit.cov_params(), rtol=1e-6)


def test_bt_cr2_covariance_matches_verdict_level(bt_case):
    log, r, ref = bt_case
    assert r.inference is not None and r.inference.exact
    np.testing.assert_allclose(r.cov[1:, 1:], ref.cov(), rtol=1e-6, atol=1e-12)
    np.testing.assert_array_equal(r.cov[0], 0.0)
    # CR2 is larger than CR0 and differs from the textbook CR1 most for the sparse model
    cr1 = ratings.fit(log, anchor="m00", ci="sandwich-z")
    ratio = (r.se / cr1.se).drop("m00")
    assert ratio.idxmax() == "new" and ratio["new"] > 1.05


def test_bt_degrees_of_freedom_match_verdict_level(bt_case):
    _, r, ref = bt_case
    models = list(r.models)
    want = [ref.df(_contrast(models, m, "m00")) for m in models[1:]]
    np.testing.assert_allclose(r.model_df[1:], want, rtol=1e-6)
    assert np.isnan(r.model_df[0])  # the anchor: no interval to calibrate
    # the sparse model's df is small (3 tasks), the others' near the number of tasks
    df = pd.Series(r.model_df, index=models)
    assert df["new"] < 4 and (df.drop(["new", "m00"]) > 15).all()
    for a, b in (("new", "m03"), ("m01", "m04"), ("m05", "new")):
        assert r.diff(a, b)["df"] == pytest.approx(ref.df(_contrast(models, a, b)), rel=1e-6)
        assert r.win_probability(a, b)["df"] == pytest.approx(r.diff(a, b)["df"])
    pairs = r.pair_df()
    assert pairs[models.index("new"), models.index("m03")] == pytest.approx(
        ref.df(_contrast(models, "new", "m03")), rel=1e-6)


def test_intervals_use_each_contrasts_t_quantile(bt_case):
    from scipy import stats

    _, r, _ = bt_case
    ci = r.conf_int().reindex(r.models)  # best first: back to the models' order
    df, se = r.model_df[1:], r.se.to_numpy()[1:]
    half = stats.t.ppf(0.975, df) * se
    np.testing.assert_allclose(ci["upper"].to_numpy()[1:] - r.elo.to_numpy()[1:], half,
                               rtol=1e-9)  # fmt: skip
    d = r.diff("new", "m02")
    assert d["upper"] - d["estimate"] == pytest.approx(stats.t.ppf(0.975, d["df"]) * d["se"])
    table = r.to_frame().set_index("model")
    np.testing.assert_allclose(table.loc[r.models[1:], "df"], df)
    assert np.isnan(table.loc["m00", "df"])


def test_reanchoring_keeps_differences_and_their_df(bt_case):
    _, r, _ = bt_case
    moved = r.reanchor("m03", 1200.0)
    assert moved.diff("new", "m01")["df"] == pytest.approx(r.diff("new", "m01")["df"])
    assert moved.to_frame().set_index("model").loc["m01", "df"] == pytest.approx(
        r.diff("m01", "m03")["df"])
    centred = r.reanchor(None)
    c = np.full(len(r.models), -1.0 / len(r.models))
    c[list(r.models).index("new")] += 1.0
    assert centred.model_df[list(r.models).index("new")] == pytest.approx(
        float(r.inference.df(c)[0]))


def _crowd_board(seed: int = 3, n: int = 1500) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    m = 6
    s = np.linspace(-1.0, 1.0, m)
    eta = {"j1": 0.95, "j2": 0.8, "j3": 0.7}
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    judge = np.array(list(eta))[np.arange(n) % 3]
    e = np.array([eta[j] for j in judge])
    p = e * expit(s[a] - s[b]) + (1 - e) * expit(s[b] - s[a])
    win = np.where(rng.random(n) < 0.1, "tie", np.where(rng.random(n) < p, "A", "B"))
    return pd.DataFrame({"model_a": [f"m{k}" for k in a], "model_b": [f"m{k}" for k in b],
                         "winner": win, "task_id": rng.integers(0, 30, n), "judge": judge})


def _crowd_reference(log: pd.DataFrame, r: ratings.Ratings, prior) -> Reference:
    """Dense CR2 of a Crowd-BT fit over the decisive verdicts (ties are not in its
    likelihood), the bread with the prior's curvature written out here: the ridge
    (s - mean s)^2 / (2 sd^2) on the strengths and -(a log u + b log(1 - u)), u = 2 eta - 1."""
    m = len(r.models)
    log = log[log["winner"] != "tie"]
    free_eta = (r.judges["status"] == "estimated").to_numpy()
    models, judges = list(r.models), list(r.judges.index)
    ia = np.array([models.index(x) for x in log["model_a"]])
    ib = np.array([models.index(x) for x in log["model_b"]])
    kj = np.array([judges.index(x) for x in log["judge"]])

    def prob(x):
        d, et = x[ia] - x[ib], x[m:][kj]
        return et / (1 + np.exp(-d)) + (1 - et) / (1 + np.exp(d))

    eta = r.judges["eta"].to_numpy()
    x0 = np.concatenate([r.strength, eta])
    y = log["winner"].map(Y_OF_WINNER).to_numpy(dtype=np.float64)
    free = np.concatenate([np.arange(1, m), m + np.flatnonzero(free_eta)])
    penalty = np.zeros((free.size, free.size))
    if prior is not None:
        penalty[: m - 1, : m - 1] = (np.eye(m) - 1.0 / m)[1:, 1:] / prior.strength_sd**2
        u = 2 * eta[free_eta] - 1
        k = np.arange(m - 1, free.size)
        penalty[k, k] = 4 * (prior.agree / u**2 + prior.flip / (1 - u) ** 2)
    return Reference(*_working(prob, x0, y, free), log["task_id"].to_numpy(), penalty)


@pytest.mark.parametrize("prior", ["default", None])
def test_crowd_bt_cr2_matches_verdict_level(prior):
    """The default Crowd-BT interval is CR2 with Satterthwaite df, the bread counting the
    prior's curvature where the prior is used (the posterior mode's sandwich)."""
    from ratings.models.crowd.prior import DEFAULT_PRIOR

    log = _crowd_board()
    r = ratings.fit(log, model=ratings.CrowdBT(prior=prior), anchor="m0")
    assert r.inference is not None and r.crowd.prior_used == (prior is not None)
    assert ("Estimate: posterior mode" if prior else "Estimate: plain maximum") in r.summary()
    m = len(r.models)
    ref = _crowd_reference(log, r, None if prior is None else DEFAULT_PRIOR)
    want = ref.cov()
    np.testing.assert_allclose(r.cov[1:, 1:], want[: m - 1, : m - 1], rtol=1e-5, atol=1e-12)
    # The package's df use Omega's closed form for an idempotent I - H (exact without a
    # penalty); with the prior's curvature in the bread I - H is not idempotent and the exact
    # df differ by O(penalty / information): here under 1%.
    rel = 1e-5 if prior is None else 1e-2
    c = np.zeros(want.shape[0])
    c[2] = 1.0  # m3 - m0
    assert r.model_df[3] == pytest.approx(ref.df(c), rel=rel)
    d = r.diff("m3", "m1")
    c[0] = -1.0
    assert d["df"] == pytest.approx(ref.df(c), rel=rel)
    assert d["se"] == pytest.approx(ELO_SCALE * np.sqrt(c @ want @ c), rel=1e-5)
    # the etas' covariance (judge files, two-step terms): the same CR2; the judges table's
    # intervals: CR2 with the likelihood's information alone (the strengths' prior only)
    free_eta = (r.judges["status"] == "estimated").to_numpy()
    names = r.judges.index[free_eta]
    np.testing.assert_allclose(r.crowd.eta_cov.loc[names, names], want[m - 1:, m - 1:],
                               rtol=1e-5)  # fmt: skip
    lik = want if prior is None else _crowd_reference(log, r, DEFAULT_PRIOR._replace(
        agree=0.0, flip=0.0)).cov()
    np.testing.assert_allclose(r.judges["se"].to_numpy()[free_eta],
                               np.sqrt(np.diag(lik)[m - 1:]), rtol=1e-5)  # fmt: skip
    # sandwich-z keeps the textbook CR1 with a normal quantile
    z = ratings.fit(log, model=ratings.CrowdBT(prior=prior), anchor="m0", ci="sandwich-z")
    assert z.inference is None and np.isinf(z.model_df).all()


def test_large_board_path_agrees_with_the_exact_one(monkeypatch):
    log = sparse_board(seed=8, k=4)
    exact = ratings.fit(log, anchor="m00")
    monkeypatch.setattr(cluster_module, "EXACT_BUDGET", 0.0)
    approx = ratings.fit(log, anchor="m00")
    assert exact.inference.exact and not approx.inference.exact
    # the series for the adjusted influences converges to the exact decomposition
    np.testing.assert_allclose(approx.cov, exact.cov, rtol=1e-8, atol=1e-14)
    # the one-direction degrees of freedom: close where it matters (few tasks) and for the rest
    df_exact, df_approx = exact.model_df[1:], approx.model_df[1:]
    np.testing.assert_allclose(df_approx, df_exact, rtol=0.15)
    new = list(exact.models).index("new")
    assert approx.model_df[new] == pytest.approx(exact.model_df[new], rel=0.1)
    np.testing.assert_allclose(approx.pair_df()[new], exact.pair_df()[new], rtol=0.3)


def test_one_direction_df_is_exact_for_equal_clusters():
    """A contrast spread equally over k clusters with leverage 1/k each: df = k - 1."""
    for k in (2, 3, 6, 12):
        omega = np.full((1, k), 1.0 / k)
        assert inf.satterthwaite(omega, None, None)[0] == pytest.approx(k - 1)
        # the exact formula on the same one-dimensional structure: d = l/(1-l), y = l/sqrt(1-l)
        lam = 1.0 / k
        d = np.full((1, k), lam / (1 - lam))
        y = np.full((1, k, 1), lam / np.sqrt(1 - lam))
        assert inf.satterthwaite(omega, d, y)[0] == pytest.approx(k - 1)


def test_model_seen_on_one_task_has_no_clustered_interval():
    log = sparse_board(seed=2, k=1)
    r = ratings.fit(log, anchor="m00")
    assert np.isinf(r.se["new"]) and r.se.drop("new").pipe(np.isfinite).all()
    lo, hi = r.conf_int().loc["new"]
    assert (lo, hi) == (-np.inf, np.inf)
    assert np.isnan(r.model_df[list(r.models).index("new")])
    d = r.diff("new", "m01")
    assert np.isinf(d["se"]) and np.isinf(d["upper"]) and np.isnan(d["df"])
    table = r.to_frame().set_index("model")
    assert pd.isna(table.loc["new", "rank_lower"]) and table["rank_upper"].max() == len(r.models)
    # the textbook CR1 reports a confident interval here: the score of "new" sums to zero in
    # its only cluster, so its interval is narrower than any well-connected model's
    cr1 = ratings.fit(log, anchor="m00", ci="sandwich-z")
    assert cr1.se["new"] < cr1.se.drop(["m00", "new"]).min()


@pytest.mark.parametrize("anchor", ["m00", "new", None])
def test_large_board_path_leaves_a_model_seen_on_one_task_open(monkeypatch, anchor):
    """Past EXACT_BUDGET the series never sees the leverage-1 direction of a model compared on
    one task (its score is zero in its only cluster): it is found from the rows' clusters, and
    the same ratings, pairs and rank intervals are left open as on the exact path."""
    log = sparse_board(seed=2, k=1)
    exact = ratings.fit(log, anchor=anchor)
    monkeypatch.setattr(cluster_module, "EXACT_BUDGET", 0.0)
    approx = ratings.fit(log, anchor=anchor)
    assert exact.inference.exact and not approx.inference.exact
    np.testing.assert_array_equal(np.isinf(approx.se), np.isinf(exact.se))
    np.testing.assert_array_equal(np.isnan(approx.model_df), np.isnan(exact.model_df))
    np.testing.assert_array_equal(np.isnan(approx.pair_df()), np.isnan(exact.pair_df()))
    want = exact.to_frame().set_index("model")["rank_lower"].isna()
    got = approx.to_frame().set_index("model")["rank_lower"].isna()
    pd.testing.assert_series_equal(got, want)
    if anchor == "m00":
        assert np.isinf(approx.se["new"]) and np.isfinite(approx.se.drop("new")).all()
        assert approx.conf_int().loc["new"].tolist() == [-np.inf, np.inf]
        d = approx.diff("new", "m01")
        assert np.isinf(d["se"]) and np.isnan(d["df"])


def test_pair_df_marks_the_same_pairs_undefined_as_their_contrasts():
    """pair_df finds undefined pairs from the models' whitened contrasts (no pairs x models
    array); the pairs it leaves without degrees of freedom are those `undefined` names."""
    r = ratings.fit(sparse_board(seed=2, k=1), anchor="m00")
    info = r.inference
    assert info.degenerate.size
    m = len(r.models)
    jj, kk = np.triu_indices(m, 1)
    want = info.undefined(pair_contrasts(m, jj, kk))
    new = list(r.models).index("new")
    assert want.sum() == m - 1 and want[(jj == new) | (kk == new)].all()
    pdf = r.pair_df()
    np.testing.assert_array_equal(np.isnan(pdf[jj, kk]), want)


def test_large_board_df_do_not_depend_on_what_was_asked_first(monkeypatch):
    """The large-board path keeps its last omega: the pairs' df after the ratings' df (the same
    unanchored contrasts) equal those of a fit asked for the pairs first."""
    monkeypatch.setattr(cluster_module, "EXACT_BUDGET", 0.0)
    log = sparse_board(seed=8, k=4)
    first, second = ratings.fit(log), ratings.fit(log)
    assert not first.inference.exact
    model_df = first.model_df.copy()
    np.testing.assert_allclose(first.pair_df(), second.pair_df(), rtol=1e-12)
    np.testing.assert_allclose(second.model_df, model_df, rtol=1e-12)
    anchored = ratings.fit(log, anchor="m00")  # other contrasts: not the kept omega
    assert not np.allclose(anchored.model_df[1:], model_df[1:])
    np.testing.assert_allclose(first.inference.df(anchored._contrasts), anchored.model_df,
                               rtol=1e-12)  # fmt: skip


def test_elo_scale_of_standard_errors(bt_case):
    _, r, ref = bt_case
    np.testing.assert_allclose(r.se.to_numpy()[1:], ELO_SCALE * np.sqrt(np.diag(ref.cov())),
                               rtol=1e-6)  # fmt: skip


def _sorted_rows(rng, m: int, nj: int, g: int, r: int, with_eta: bool) -> tuple:
    """``r`` random working rows (ii < jj, judge, cluster sorted, a, b) of ``m`` models, ``nj``
    judges and ``g`` clusters; ``b`` empty unless ``with_eta``."""
    ii = rng.integers(0, m - 1, r)
    jj = ii + 1 + rng.integers(0, m - 1 - ii)
    kk = rng.integers(0, nj, r)
    cluster = np.sort(rng.integers(0, g, r))
    a = rng.exponential(size=r)
    b = rng.normal(size=r) if with_eta else np.zeros(0)
    return ii, jj, kk, cluster, a, b


@pytest.mark.parametrize("rowwise_up_to", [8, 0])  # the twin's two ways to sum the squares
@pytest.mark.parametrize("with_eta", [False, True])
def test_kernels_match_their_numpy_twins(with_eta, rowwise_up_to, monkeypatch):
    from ratings.kernels import inference as fast
    from ratings.kernels import inference_ref as slow

    monkeypatch.setattr(slow, "_ROWWISE_UP_TO", rowwise_up_to)
    rng = np.random.default_rng(11)
    m, nj, g = 7, 3, 5
    ii, jj, kk, cluster, a, b = _sorted_rows(rng, m, nj, g, 60, with_eta)
    q = m + (nj if with_eta else 0)
    v = rng.normal(size=(g, q))
    n = rng.normal(size=(q, 4))
    np.testing.assert_allclose(fast.cluster_times(ii, jj, kk, cluster, a, b, m, v),
                               slow.cluster_times(ii, jj, kk, cluster, a, b, m, v), rtol=1e-12,
                               atol=1e-12)  # fmt: skip
    np.testing.assert_allclose(fast.cluster_quadratic(g, ii, jj, kk, cluster, a, b, m, n),
                               slow.cluster_quadratic(g, ii, jj, kk, cluster, a, b, m, n),
                               rtol=1e-12, atol=1e-12)  # fmt: skip
    # each model's lowest and highest cluster, kernel, twin and written out (model m - 1 never
    # in slot ii, and one model without rows)
    got = fast.model_clusters(ii, jj, cluster, m + 1, g)
    want = slow.model_clusters(ii, jj, cluster, m + 1, g)
    rows_of = [np.flatnonzero((ii == k) | (jj == k)) for k in range(m + 1)]
    spans = np.array([[cluster[i].min(), cluster[i].max()] if i.size else [g, -1]
                      for i in rows_of])  # fmt: skip
    for lo, hi in (got, want):
        np.testing.assert_array_equal(np.column_stack([lo, hi]), spans)


@pytest.mark.parametrize("rowwise_up_to", [0, 8])
@pytest.mark.parametrize("count_space", [1 << 16, 0])
@pytest.mark.parametrize("with_eta", [False, True])
def test_twins_in_pieces_and_unsorted_rows_match_the_kernels(with_eta, count_space,
                                                             rowwise_up_to,
                                                             monkeypatch):  # fmt: skip
    """The twins group rows by design (counted in a table or sorted) and work in passes, or,
    for a few contrasts, sum row by row: rows in any order and several passes over the
    contrasts give the kernels' results."""
    from ratings.kernels import inference as fast
    from ratings.kernels import inference_ref as slow

    monkeypatch.setattr(slow, "_ROWWISE_UP_TO", rowwise_up_to)
    monkeypatch.setattr(slow, "_CELLS", 10)
    monkeypatch.setattr(slow, "_COUNT_SPACE", count_space)
    rng = np.random.default_rng(12)
    m, nj, g, r = 20, 2, 4, 16
    ii = rng.integers(0, m, r)
    jj = (ii + rng.integers(1, m, r)) % m  # both orders of a pair
    ii, jj = np.concatenate([ii, ii[:6]]), np.concatenate([jj, jj[:6]])  # repeated designs
    r = ii.size
    kk = rng.integers(0, nj, r)
    cluster = rng.integers(0, g, r)  # not sorted
    a = rng.exponential(size=r)
    b = rng.normal(size=r) if with_eta else np.zeros(0)
    n = rng.normal(size=(m + (nj if with_eta else 0), 7))
    np.testing.assert_allclose(slow.cluster_quadratic(g, ii, jj, kk, cluster, a, b, m, n),
                               fast.cluster_quadratic(g, ii, jj, kk, cluster, a, b, m, n),
                               rtol=1e-12, atol=1e-12)  # fmt: skip



@pytest.mark.parametrize("with_eta", [False, True])
def test_twin_in_passes_equals_the_written_out_design(with_eta, monkeypatch):
    """The twin's products over the distinct designs, in several passes of columns, give each
    cluster's n_c^T X_g^T X_g n_c from its design written out row by row and dense algebra."""
    from ratings.kernels import inference_ref as slow

    monkeypatch.setattr(slow, "_CELLS", 30)  # several passes of columns
    rng = np.random.default_rng(13)
    m, nj, g, r = 9, 2, 6, 80
    ii, jj, kk, cluster, a, b = _sorted_rows(rng, m, nj, g, r, with_eta)
    q = m + (nj if with_eta else 0)
    n = rng.normal(size=(q, 12))
    x = np.zeros((r, q))  # each row's design vector a (e_i - e_j) + b e_{m + k}
    x[np.arange(r), ii] = a
    x[np.arange(r), jj] = -a
    if with_eta:
        x[np.arange(r), m + kk] = b
    want = np.array([np.sum((x[cluster == c] @ n) ** 2, axis=0) for c in range(g)])
    np.testing.assert_allclose(slow.cluster_quadratic(g, ii, jj, kk, cluster, a, b, m, n), want,
                               rtol=1e-12, atol=1e-12)  # fmt: skip


@pytest.mark.parametrize("per_model", [False, True])
def test_pair_max_matches_a_loop_over_pairs(per_model, monkeypatch):
    """The draws' max of weighted differences, in several passes, against a plain loop."""
    from ratings.inference import ranks

    monkeypatch.setattr(ranks, "_PASS_CELLS", 100)
    rng = np.random.default_rng(13)
    m, d = 7, 11
    z = rng.normal(size=(d, m)).astype(np.float32)
    w = (rng.random((m, m)) * (rng.random((m, m)) < 0.6)).astype(np.float32)
    w_in = (rng.random((m, m)) * (rng.random((m, m)) < 0.6)).astype(np.float32)
    want = np.zeros((d, m if per_model else 1))
    for t in range(d):
        for j in range(m):
            for k in range(m):
                up = float(z[t, j] - z[t, k]) * float(w[j, k])
                down = float(z[t, k] - z[t, j]) * float(w_in[j, k]) if per_model else 0.0
                col = j if per_model else 0
                want[t, col] = max(want[t, col], up, down)
    got = ranks.pair_max(z, w, w_in if per_model else np.zeros((0, 0), np.float32))
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_pair_max_over_the_bounded_pairs_equals_the_full_pass(monkeypatch):
    """The draws' max over the pairs that can attain it: the very values of a pass over every
    pair (ties, all-zero and constant weights, passes of a few pairs, heavy draws included);
    with each draw's maximising pair, from the bounded pairs and from the pass over every
    pair: the first (in j M + k order) whose weighted difference is the max, found by a loop
    here, or -1 where no pair is positive."""
    from ratings.inference import ranks

    rng = np.random.default_rng(3)
    none = np.zeros((0, 0), np.float32)
    for trial in range(200):
        m, d = int(rng.integers(1, 30)), int(rng.integers(1, 50))
        z = rng.normal(size=(d, m)).astype(np.float32)
        if trial % 3 == 0:
            z = np.round(z, 1)  # ties
        w = (rng.random((m, m)) * (rng.random((m, m)) < rng.random())).astype(np.float32)
        if trial % 5 == 0:
            w[:] = 0.0
        if trial % 7 == 0:
            w[:] = 1.0
        monkeypatch.setattr(ranks, "_PASS_CELLS", int(rng.integers(1, 200)))
        np.testing.assert_array_equal(ranks.pair_max(z, w, none), ranks._full_pass(z, w, none))
        got, arg = ranks._bounded_max(z, w, with_arg=True)
        full, full_arg = ranks._full_pass(z, w, none, with_arg=True)
        np.testing.assert_array_equal(got, ranks._full_pass(z, w, none)[:, 0])
        np.testing.assert_array_equal(full, got)
        for t in range(d):
            vals = [(z[t, j] - z[t, k]) * w[j, k] for j in range(m) for k in range(m)]
            want = vals.index(max(vals)) if max(vals) > 0 else -1
            assert arg[t] == want and full_arg[t] == want, (trial, t)


@pytest.mark.parametrize("n_models", [3, 30])  # a sigma per pair of models, or per row
def test_bt_working_rows_weigh_each_row_by_n_p_q(n_models):
    from ratings.data.comparisons import aggregate
    from ratings.inference.working import bt_rows

    rng = np.random.default_rng(4)
    data = aggregate(simulate_verdicts(rng, np.zeros(n_models), 400, 40, tie_fraction=0.1))
    assert (data.ii.size > n_models**2) == (n_models == 3)
    theta = rng.normal(0.0, 15.0, n_models)  # gaps up to ~70: 1 - sigma(d) cancels to 0
    rows = bt_rows(theta, data)
    d = theta[data.ii] - theta[data.jj]
    n = data.wi + data.wj + data.tt
    np.testing.assert_allclose(rows.a**2, n * expit(d) * expit(-d), rtol=1e-12)
    assert (rows.a > 0).all()


@pytest.mark.parametrize("n_models", [3, 30])  # a sigma per pair of models, or per row
def test_bt_rows_and_scores_from_one_pass(n_models):
    """The working rows and the scores from one pass: the rows' own function, scipy's
    expit for the scores, and the NumPy twin's scores bitwise (the values it replaces)."""
    from ratings.data.comparisons import aggregate
    from ratings.inference.working import bt_rows, bt_rows_and_scores
    from ratings.kernels import fit_ref

    rng = np.random.default_rng(5)
    data = aggregate(simulate_verdicts(rng, np.zeros(n_models), 400, 40, tie_fraction=0.1))
    theta = rng.normal(0.0, 15.0, n_models)
    rows, score = bt_rows_and_scores(theta, data)
    np.testing.assert_array_equal(rows.a, bt_rows(theta, data).a)
    d = theta[data.ii] - theta[data.jj]
    want = data.wi + 0.5 * data.tt - (data.wi + data.wj + data.tt) * expit(d)
    np.testing.assert_allclose(score, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(score, fit_ref.bt_scores(theta, data.ii, data.jj, data.wi,
                                                           data.wj, data.tt))  # fmt: skip
