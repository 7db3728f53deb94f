"""The ratings' degrees of freedom started beside the CR2 series (``cluster_inference``'s
``ahead``): the clusters' shares against a brute-force sum over each cluster's rows, and the
ratings' and pairs' df as computed afterwards on one thread."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import simulate_verdicts

import ratings
import ratings.inference.cluster as cluster_module


@pytest.fixture(scope="module")
def log():
    rng = np.random.default_rng(5)
    return simulate_verdicts(rng, [0.0, 0.6, -0.4, 1.0, -0.8, 0.3, 0.5, -0.1], 1500, 40,
                             tie_fraction=0.1, task_sd=0.5)  # fmt: skip


def _fit(log, monkeypatch, threads: int, anchor: str | None):
    monkeypatch.setenv("RATINGS_NUM_THREADS", str(threads))
    monkeypatch.setattr(cluster_module, "EXACT_BUDGET", 0.0)  # the series path
    return ratings.fit(log, anchor=anchor)


@pytest.mark.parametrize("anchor", [None, "m03"])
def test_shares_started_beside_the_series_are_the_clusters_quadratic_forms(log, monkeypatch,
                                                                           anchor):  # fmt: skip
    """Each cluster's share v^T H_g v of each rating's contrast c (v = B c), H_g summed here
    from the cluster's working rows as dense outer products, one cluster at a time."""
    r = _fit(log, monkeypatch, 2, anchor)
    inf = r.inference
    assert inf.shape == "series" and inf.ahead is not None
    rows, free, m = inf.rows, inf.free, inf.n_models
    names = list(r.models)
    c = np.eye(m) - (1.0 / m if anchor is None else np.eye(m)[names.index(anchor)])
    v = np.zeros((m, m))
    v[free] = inf.bread @ c[:, free].T  # directions over all models (zero at the reference)
    want = np.zeros((rows.n_clusters, m))
    for g in range(rows.n_clusters):
        h = np.zeros((m, m))
        for r_ in np.flatnonzero(rows.cluster == g):
            x = np.zeros(m)
            x[rows.ii[r_]] += rows.a[r_]
            x[rows.jj[r_]] -= rows.a[r_]
            h += np.outer(x, x)
        want[g] = np.einsum("ic,ij,jc->c", v, h, v)
    np.testing.assert_allclose(inf.ahead[0], c[:, free], rtol=0, atol=0)
    np.testing.assert_allclose(inf.ahead[1].result(), want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("anchor", [None, "m03"])
def test_df_from_the_started_shares_equal_those_computed_on_request(log, monkeypatch, anchor):
    """The ratings' df, the pairs' and the table: bit for bit those of the fit on one thread,
    whose shares are computed when the df are asked for."""
    ahead = _fit(log, monkeypatch, 2, anchor)
    later = _fit(log, monkeypatch, 1, anchor)
    assert ahead.inference.ahead is not None and later.inference.ahead is None
    np.testing.assert_array_equal(ahead.model_df, later.model_df)
    np.testing.assert_array_equal(ahead.pair_df(), later.pair_df())
    np.testing.assert_array_equal(ahead.cov, later.cov)
    assert ahead.to_frame().equals(later.to_frame())


def test_other_contrasts_are_computed_on_request(log, monkeypatch):
    """A contrast other than the ratings' (a pair's difference) does not read the shares
    started for the ratings'."""
    r = _fit(log, monkeypatch, 2, None)
    c = np.zeros(r.inference.n_models)
    c[[1, 2]] = [1.0, -1.0]
    one = _fit(log, monkeypatch, 1, None)
    np.testing.assert_array_equal(r.inference.df(c), one.inference.df(c))


def test_pairs_df_read_first_wait_for_the_started_shares(log, monkeypatch):
    """The table's rank intervals read the pairs' df before the ratings' (see
    ``Ratings.pair_stats``): they take the shares started beside the series, with no pass of
    their own over the rows, and equal the one-thread fit's."""
    from ratings.inference.working import WorkingRows

    one = _fit(log, monkeypatch, 1, None)
    want_pairs, want_models = one.pair_df(), one.model_df
    r = _fit(log, monkeypatch, 2, None)
    passes = []
    real = WorkingRows.quadratic
    monkeypatch.setattr(WorkingRows, "quadratic",
                        lambda self, n: passes.append(n.shape) or real(self, n))  # fmt: skip
    np.testing.assert_array_equal(r.pair_df(), want_pairs)
    np.testing.assert_array_equal(r.model_df, want_models)
    assert passes == []


def test_nothing_is_started_where_the_shares_would_take_the_compiled_kernels(log, monkeypatch):
    """The shares are started only on the NumPy twin (numba is never loaded on the thread):
    where the quadratic forms would take the compiled kernels, the df are computed when asked
    for, as on one thread."""
    from ratings.inference.working import WorkingRows
    from ratings.kernels import inference_ref

    chosen = []

    def compiled(self, n_columns):
        chosen.append(n_columns)
        return object()  # not the twin

    monkeypatch.setattr(WorkingRows, "quadratic_kernels", compiled)
    r = _fit(log, monkeypatch, 2, None)
    assert chosen and r.inference.ahead is None
    monkeypatch.setattr(WorkingRows, "quadratic_kernels", lambda self, n: inference_ref)
    one = _fit(log, monkeypatch, 1, None)
    np.testing.assert_array_equal(r.model_df, one.model_df)


def test_pairs_df_read_first_on_one_thread_make_one_pass(log, monkeypatch):
    """With nothing started (one thread), the pairs' df read before the ratings' hold the
    ratings' shares: one pass over the rows for both, not the pairs' streamed pass and the
    ratings' again; the same df as when the ratings' are read first."""
    from ratings.inference.working import WorkingRows

    first = _fit(log, monkeypatch, 1, None)
    want_models, want_pairs = first.model_df, first.pair_df()  # the ratings' first
    r = _fit(log, monkeypatch, 1, None)
    passes = []
    for name in ("quadratic", "quadratic_block"):
        real = getattr(WorkingRows, name)
        monkeypatch.setattr(WorkingRows, name,
                            lambda self, *a, _real=real, _n=name, **k: passes.append(_n)
                            or _real(self, *a, **k))  # fmt: skip
    np.testing.assert_array_equal(r.pair_df(), want_pairs)
    np.testing.assert_array_equal(r.model_df, want_models)
    assert passes == ["quadratic"]
