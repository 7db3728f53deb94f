"""The one inference builder: every fit's covariance and per-cluster influences from its bread
and its scores, whatever the family and design.

A fit hands over its bread (the inverse of the information over the free parameters, embedded
with zeros; :func:`~ratings.inference.covariance.inverse_free`) and how to read its scores
(:class:`Scores`: the per-verdict meat, each cluster's summed score, or the clusters' meat summed
one block at a time), and for the default clustered interval its CR2 pieces (a callable returning
:class:`~ratings.inference.cluster.ClusterInference`: :func:`~ratings.inference.bt_inference`,
:func:`ratings.models.covariates.pair_built`'s, or a design's working rows through
:func:`~ratings.inference.cluster.cluster_inference`). :func:`build` then gives, by ``ci``:

* ``"sandwich"`` with clusters: CR2 (influences adjusted by (I - H_gg)^(-1/2), Satterthwaite df
  per contrast from the returned inference);
* ``"sandwich"`` without clusters: HC0, ``bread @ meat @ bread`` with the per-verdict meat;
* ``"sandwich-z"`` (CR1) with clusters: ``G/(G-1) bread (sum_g s_g s_g^T) bread``;
* ``"model"``: the bread itself;

and, with clusters, the per-cluster influences ``s_g @ bread`` that combining scopes stacks
(whatever ``ci``), except past :data:`~ratings.core.memory.MAX_INFLUENCE_CELLS`, where the
clusters' meat is summed block by block and no influences are kept. CR2's influences (G x P:
80 MB for an arena's 50,000 prompts over 200 models) are not needed for its covariance or its
degrees of freedom, so they are handed over :class:`OnRequest` and computed when read
(:attr:`ratings.result.Uncertainty.influence`). The model-based variance
where a robust one collapses (:mod:`ratings.inference.degenerate`), the one-judge profile
widening (:mod:`ratings.models.crowd.onejudge`, which rescales a CR2 inference) and the bootstrap
(:func:`~ratings.inference.covariance.bootstrap_draws`) act on what this returns.

Parameters fixed at an earlier fit's estimates (Crowd-BT judge qualities reused from a
judge-quality file) carry their covariance into every fit that reuses them, plain or with
covariates, by one two-step term: :func:`two_step_factor` (Murphy & Topel 1985) in factored
form, added to what :func:`build` returned by :func:`with_two_step`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
from numpy.typing import NDArray

from ratings.inference.cluster import ClusterInference, check_clusters
from ratings.inference.covariance import (
    PendingBread,
    bread_meat_bread,
    gram,
    identified_inverse,
    ready,
)

__all__ = ["Built", "OnRequest", "Scores", "build", "cluster_factor", "psd_root",
           "row_scores_of", "two_step_factor", "with_known", "with_two_step"]


@dataclass(frozen=True)
class Scores:
    """How the builder reads a fit's scores at its estimate (each called at most once).

    ``verdict_meat() -> (P, P)``: the sum over verdicts of the per-verdict score's outer product
    (HC0); ``cluster_scores() -> (G, P)``: each cluster's summed score; ``cluster_meat()
    -> (P, P)``: sum_g s_g s_g^T without holding the G x P scores (None: from
    ``cluster_scores``).
    """

    verdict_meat: Callable[[], NDArray[np.float64]]
    cluster_scores: Callable[[], NDArray[np.float64]]
    cluster_meat: Callable[[], NDArray[np.float64]] | None = None


@dataclass(frozen=True, eq=False)
class OnRequest:
    """An array computed when asked for (called): ``make()`` (a fresh array, or None), then
    the functions ``then`` in turn (not on None). Indexing adds a selection without computing
    anything (``x[:, :m]``: the strengths' columns); :meth:`and_then` another step. Picklable
    when its functions are (bound methods, ``functools.partial`` of module functions)."""

    make: Callable[[], NDArray[np.float64] | None]
    then: tuple[Callable[[NDArray[np.float64]], NDArray[np.float64]], ...] = ()

    def __call__(self) -> NDArray[np.float64] | None:
        x = self.make()
        for step in self.then:
            if x is None:
                break
            x = step(x)
        return x

    def and_then(self, step: Callable[[NDArray[np.float64]], NDArray[np.float64]]) -> OnRequest:
        """The same array passed through ``step`` once computed."""
        return OnRequest(self.make, (*self.then, step))

    def __getitem__(self, key) -> OnRequest:
        return self.and_then(partial(_select, key=key))


def _select(x: NDArray[np.float64], key) -> NDArray[np.float64]:
    return x[key]


@dataclass(frozen=True, eq=False)
class Built:
    """A fit's covariance for the interval kind asked (P x P), its per-cluster influences
    (G x P, None, or for CR2 an :class:`OnRequest` computing them (or None) when asked), for
    CR2 the inference giving each contrast its df, and the bread it was built from (the
    model-based covariance; None where none was built)."""

    cov: NDArray[np.float64]
    influence: NDArray[np.float64] | OnRequest | None = None
    inference: ClusterInference | None = None
    bread: NDArray[np.float64] | None = None


def build(bread: NDArray[np.float64] | PendingBread, ci: str, scores: Scores, *,
          n_clusters: int | None, cr2: Callable[[], ClusterInference] | None = None,
          cluster_name: str | None = None) -> Built:  # fmt: skip
    """The covariance of kind ``ci`` (see the module notes); ``n_clusters`` None for a fit per
    verdict. ``cr2`` builds the CR2 inference of a clustered ``ci="sandwich"`` (without it, CR1
    is used there). A bread still being computed (:func:`~ratings.inference.covariance.
    start_bread`) is waited for once needed: after the per-verdict meat, or by ``cr2``."""
    from ratings.inference import covariance  # its MAX_INFLUENCE_CELLS, read when called

    meat, scale = scores.verdict_meat, 1.0
    if n_clusters is not None:
        g = n_clusters
        check_clusters(g, cluster_name)
        if ci == "sandwich" and cr2 is not None:
            inference = cr2()
            return Built(inference.covariance(), OnRequest(inference.influence), inference,
                         ready(bread))  # fmt: skip
        bread, scale = ready(bread), g / (g - 1)
        if g * bread.shape[0] <= covariance.MAX_INFLUENCE_CELLS:
            influence = scores.cluster_scores() @ bread
            return Built(bread if ci == "model" else gram(influence, scale), influence,
                         bread=bread)  # fmt: skip
        # too many cells to keep the influences: the clusters' meat summed by blocks
        meat = scores.cluster_meat or (lambda: gram(scores.cluster_scores()))
    cov = None if ci == "model" else bread_meat_bread(bread, meat())
    if cov is not None and scale != 1.0:
        cov *= scale
    bread = ready(bread)
    return Built(bread if cov is None else cov, bread=bread)


def row_scores_of(data, n_params: int, k, row_scores,
                  verdict_meat: Callable[[], NDArray[np.float64]],
                  slot: NDArray[np.int64] | None = None) -> Scores:  # fmt: skip
    """:class:`Scores` of a fit over the rows of a :class:`~ratings.data.comparisons.Comparisons`
    (the collapsed-counts and Crowd-BT paths): ``row_scores(rows, wi, wj, tt) -> (score_d,
    score_eta or None)`` per row, ``score_eta`` on parameter ``n_models + slot`` (the rows'
    judges unless ``slot`` is given); the clusters' scores from
    :meth:`~ratings.data.comparisons.Comparisons.cluster_score_matrix`, their meat from the
    ``cluster_meat`` kernel (rows grouped by cluster)."""

    def meat() -> NDArray[np.float64]:
        score_d, score_eta = row_scores(data, data.wi, data.wj, data.tt)
        return k.cluster_meat(data.n_models, n_params, data.ii, data.jj,
                              data.judge if slot is None else slot, score_d,
                              np.zeros(0) if score_eta is None else score_eta,
                              data.cluster_starts)  # fmt: skip

    return Scores(verdict_meat, lambda: data.cluster_score_matrix(n_params, row_scores, k, slot),
                  meat)  # fmt: skip


def cluster_factor(n_clusters: int, cr2: bool) -> float:
    """The factor of per-cluster influences whose cross-product is a fit's clustered covariance:
    1 for CR2 (its influences are adjusted already), sqrt(G/(G-1)) for CR1 (what stacking the
    influences of several fits, :mod:`ratings.scopes.combine`, multiplies them by)."""
    g = n_clusters
    return 1.0 if cr2 else float(np.sqrt(g / (g - 1)))


def psd_root(v: NDArray[np.float64]) -> NDArray[np.float64]:
    """R with R R^T = V for a symmetric positive semi-definite ``v`` (its eigenvectors scaled
    by the roots of its eigenvalues, negative rounding clipped to zero)."""
    vals, vecs = np.linalg.eigh((v + v.T) / 2.0)
    return vecs * np.sqrt(np.clip(vals, 0.0, None))


def two_step_factor(information: NDArray[np.float64], free: NDArray[np.int64],
                    cross: NDArray[np.float64],
                    first_cov: NDArray[np.float64]) -> NDArray[np.float64] | None:  # fmt: skip
    """The two-step term of parameters e fixed at an earlier fit's estimates, in factored form.

    The estimate x (the coordinates ``free``) solves the current verdicts' score equations at
    the fixed e; to first order x - x0 = -H_xx^-1 (g_x + H_xe (e - e0)), and when e comes from
    other verdicts (independent of the current ones) with covariance V_e the sandwich of x
    gains

        H_xx^-1 H_xe V_e H_ex H_xx^-1

    (Murphy & Topel 1985; Newey & McFadden 1994, section 6).

    Parameters
    ----------
    information : ndarray, shape (P, P)
        H, the Hessian of the objective the fit solves over all its parameters (the
        likelihood's, with the penalties the caller counts as information); only its ``free``
        block is inverted.
    free : ndarray of int
        The estimated coordinates (with a covariance).
    cross : ndarray, shape (P, K_e)
        H's columns of the fixed parameters e (H_xe on the rows ``free``; other rows unused).
    first_cov : ndarray, shape (K_e, K_e)
        V_e, the covariance of the fixed parameters from their own fit.

    Returns
    -------
    ndarray, shape (K_e, P), or None
        F with ``F.T @ F`` the term (zero outside ``free``): F = (H_xx^-1 H_xe L)^T with
        V_e = L L^T; None where V_e is zero.

    Raises
    ------
    numpy.linalg.LinAlgError
        H's ``free`` block is not positive definite (or only by rounding).
    """
    v = np.asarray(first_cov, dtype=np.float64)
    if not v.size or not np.any(v):
        return None
    bread = identified_inverse(information, free)  # zero outside ``free``
    return (bread @ cross @ psd_root(v)).T


def with_two_step(built: Built, factor: NDArray[np.float64] | None) -> Built:
    """``built`` with the two-step term ``factor.T @ factor`` (:func:`two_step_factor`) in its
    covariance; for CR2, in its inference as a known variance (each contrast's df by
    Welch-Satterthwaite, :meth:`~ratings.inference.cluster.ClusterInference.with_extra`,
    after any term it carries already). The per-cluster influences leave it out (it is not a
    sum over the current verdicts' clusters)."""
    if factor is None:
        return built
    if built.inference is None:
        return Built(built.cov + factor.T @ factor, built.influence, None, built.bread)
    inference = with_known(built.inference, factor)
    return Built(inference.covariance(), built.influence, inference, built.bread)


def with_known(inference: ClusterInference, factor: NDArray[np.float64]) -> ClusterInference:
    """``inference`` with one more variance term taken as known, ``factor.T @ factor``
    (``factor``'s columns the first of its parameters, zero after them), after any it
    carries: the two-step term (:func:`with_two_step`), the model-based variance where the
    sandwich collapsed (:func:`ratings.inference.degenerate.fill_collapsed`)."""
    extra = np.zeros((factor.shape[0], inference.n_params))
    extra[:, :factor.shape[1]] = factor
    before = inference.extra
    return inference.with_extra(extra if before is None else np.vstack([before, extra]))
