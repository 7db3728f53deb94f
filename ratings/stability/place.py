"""New models placed against a frozen board (:func:`place`), with two-step intervals.

A published board keeps its Elo: its models' log-strengths ``s_R`` enter the Bradley-Terry
likelihood of the new verdicts as fixed offsets, and only the new models' strengths
``theta`` are estimated (the package's Newton solver over the new models' coordinates, the
reference's held where they are). The estimate is a two-step estimator (Murphy & Topel 1985;
Newey & McFadden 1994, section 6): ``theta`` solves ``g(theta; s_R) = 0`` with ``s_R``
estimated beforehand from other verdicts, so its variance has two parts,

    V = V_2 + A V_R A^T,    A = d theta / d s_R = -H_NN^-1 H_NR,

``V_2`` the new models' sandwich with the reference held fixed (clustered by task and CR2 by
default, like every interval of :func:`ratings.fit`), ``V_R`` the reference's covariance and
``H`` the Hessian of the new verdicts' negative log-likelihood (``N`` the new models, ``R``
the reference's). The cross term vanishes because the new verdicts are not the ones the
reference was fitted from. The reference's part enters the CR2 inference as a known variance
term (its factor ``F``, ``F^T F = V_R``, pushed through ``[I, A^T]``): a contrast's degrees of
freedom combine the two by Welch-Satterthwaite, the reference's part counted as known. The
reference models' own intervals are then their published covariance (a normal quantile).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.api.loading import Source, load_log, warn_unclustered
from ratings.api.specs import Bootstrap, Read, options_of
from ratings.core.errors import DataWarning, NonIdentifiableError, format_names, option
from ratings.core.linalg import block
from ratings.core.schema import ELO_SCALE
from ratings.core.threads import one_blas_thread
from ratings.data.comparisons import Comparisons
from ratings.inference import bt_inference
from ratings.inference.builder import build, row_scores_of, with_known
from ratings.inference.covariance import inverse_free
from ratings.inference.degenerate import fill_collapsed
from ratings.kernels.engine import kernels
from ratings.kernels.engine import resolve as resolve_engine
from ratings.models.bt import penalised_terms, start
from ratings.models.estimate import Estimate
from ratings.models.existence import check_identifiable
from ratings.models.newton import newton
from ratings.result import FitInfo, Placement, Ratings, Uncertainty
from ratings.stability.board import Board, as_board

__all__ = ["REFERENCE_BOARD", "place", "placed_comparisons", "reference_factor"]

#: The name the existence check gives the frozen board as a whole.
REFERENCE_BOARD = "the reference board"


def place(
    verdicts: Source,
    *,
    reference: Ratings | pd.DataFrame | str | Board,
    reference_cov: pd.DataFrame | NDArray[np.float64] | str | None = None,
    scope: str | None = None,
    cluster: str | None = "auto",
    ci: str = "sandwich",
    level: float | None = None,
    read: Read | None = None,
    engine: str = "auto",
    tol: float = 1e-10,
    max_iter: int = 100,
) -> Ratings:
    """Place new models on a frozen board without moving it.

    Parameters
    ----------
    verdicts : path, DataFrame, VerdictLog or Comparisons
        Verdicts of the new models, against the reference's models and each other (as for
        :func:`ratings.fit`). Verdicts between two reference models are kept but cannot move a
        frozen board (a :class:`~ratings.core.errors.DataWarning` counts them).
    reference : Ratings, DataFrame or path
        The published board: a :class:`~ratings.Ratings`, a ratings table with ``model``,
        ``elo`` and the scale columns (``anchor``, ``anchor_rating``) that ``ratings fit --out``
        writes, or its path (the covariance file beside it, ``board.cov.csv``, is read when
        present; :mod:`ratings.stability.board`).
    reference_cov : DataFrame, array or path, optional
        The reference's Elo covariance (Elo^2) when ``reference`` is a table without one.
    scope, cluster, ci, level, read
        As for :func:`ratings.fit` (``ci``: ``"sandwich"`` (CR2 clustered by task, or HC0
        per verdict), ``"sandwich-z"`` / ``"cr1"``, ``"hc0"`` or ``"model"``; no bootstrap).
        ``level`` defaults to the reference's.
    engine, tol, max_iter
        Kernels and Newton's tolerance and most iterations (:class:`ratings.Solver`).

    Returns
    -------
    Ratings
        The reference's models with their published Elo (bit for bit) and the new models, on
        the reference's scale and anchor. ``placement`` says which were placed; the tables'
        columns ``placed`` and ``reference_cov`` say so per row. Intervals of the new models
        carry the reference's uncertainty (see the module notes) when its covariance is known.
        The counts (``n_matches``, ``wins``, ...) are those of ``verdicts``.

    Raises
    ------
    ValueError
        No model of the log is new; a new model has no verdict against any reference model
        (named); the bootstrap was asked for.
    NonIdentifiableError
        A new model (or a group of them) never lost or never won against the others and the
        board: its strength has no finite estimate.

    Warns
    -----
    DataWarning
        The reference has no covariance: the new models' intervals then ignore its
        uncertainty (too narrow), and the tables' ``reference_cov`` column is False.
    """
    if isinstance(ci, Bootstrap) or ci == "bootstrap":
        raise ValueError("Placement has no bootstrap interval: its intervals are the two-step "
                         f"sandwich ({option('ci', 'sandwich')}).")
    board = as_board(reference, covariance=reference_cov,
                     what=f"The reference board ({option('reference')})")
    options = options_of(ci=ci, scope=scope, cluster=cluster,
                         level=board.level if level is None else level, read=read)  # fmt: skip
    rd = options.read
    loaded = load_log(verdicts, scope=options.scope, cluster=options.cluster, errors=rd.errors,
                      columns=rd.columns, winner_map=rd.winner_map, engine=engine)  # fmt: skip
    if options.cluster == "auto" and loaded.data.clusters is None and loaded.frame is not None \
            and options.ci != "model":
        warn_unclustered(verdicts, loaded.scope, stacklevel=3)
    data, new = placed_comparisons(loaded.data, board.models)
    with one_blas_thread():
        return _place(data, new, board, loaded, options.ci, options.level, engine, tol, max_iter)


def placed_comparisons(data: Comparisons, reference: pd.Index) -> tuple[Comparisons,
                                                                        NDArray[np.int64]]:
    """``data`` on the models ``reference`` followed by the log's other models (sorted), and
    the positions of those new models. Rows keep their order (by cluster), ``ii < jj``."""
    ref = pd.Index(reference)
    fresh = sorted(set(map(str, data.models)) - set(map(str, ref)))
    if not fresh:
        raise ValueError(
            "Every model of the verdicts is on the reference board: there is nothing to place. "
            "To update the published models' ratings, refit the board with all verdicts.")
    models = pd.Index([*ref, *fresh], dtype=object)
    code = models.get_indexer(data.models.astype(str))
    i, j = code[data.ii], code[data.jj]
    swap = i > j
    out = Comparisons(models, data.judges, data.clusters, data.cluster_name,
                      np.where(swap, j, i), np.where(swap, i, j), data.judge, data.cluster,
                      np.where(swap, data.wj, data.wi), np.where(swap, data.wi, data.wj),
                      data.tt)  # fmt: skip
    return out, np.arange(len(ref), len(models), dtype=np.int64)


def _check_placeable(data: Comparisons, new: NDArray[np.int64]) -> int:
    """Refuse new models without a verdict against the reference, or without a finite
    estimate; return the number of verdicts between two reference models."""
    is_new = np.zeros(data.n_models, dtype=bool)
    is_new[new] = True
    a, b = is_new[data.ii], is_new[data.jj]
    n = data.wi + data.wj + data.tt
    n_ref_only = round(float(n[~a & ~b].sum()))
    mixed = (a ^ b) & (n > 0)
    touched = np.zeros(data.n_models, dtype=bool)
    touched[data.ii[mixed]] = touched[data.jj[mixed]] = True
    alone = new[~touched[new]]
    if alone.size:
        raise ValueError(
            f"{alone.size} new model(s) have no verdict against any model of the reference "
            f"board: {format_names([str(data.models[k]) for k in alone])}. A placement ties "
            "each new model to the frozen board through its own verdicts against it; add "
            "verdicts of these models against reference models (or refit the whole board).")
    # The MLE exists iff the win graph of the new models and the board (as one node) is
    # strongly connected: the board's strengths are known, so it acts as a single opponent.
    keep = a | b
    code = np.where(is_new, np.arange(data.n_models) - new[0] + 1, 0)
    i, j = code[data.ii[keep]], code[data.jj[keep]]
    names = pd.Index([REFERENCE_BOARD, *map(str, data.models[new])], dtype=object)
    merged = Comparisons(names, data.judges, None, None, i, j, data.judge[keep],
                         np.zeros(int(keep.sum()), dtype=np.int64), data.wi[keep],
                         data.wj[keep], data.tt[keep])  # fmt: skip
    try:
        check_identifiable(merged)
    except NonIdentifiableError as exc:
        raise NonIdentifiableError(
            f"The new models cannot be placed (the frozen board counts as one opponent, "
            f"{REFERENCE_BOARD!r}): {exc}") from None
    return n_ref_only


def reference_factor(cov_strength: NDArray[np.float64]) -> NDArray[np.float64]:
    """``F`` with ``F^T F = cov_strength`` (rows: the covariance's nonzero directions)."""
    known = np.flatnonzero(np.diag(cov_strength) > 0)  # the anchor's row is exactly zero
    c = cov_strength[np.ix_(known, known)]
    lam, u = np.linalg.eigh((c + c.T) / 2.0)
    keep = lam > 1e-14 * max(float(lam.max(initial=0.0)), 1e-300)
    out = np.zeros((int(keep.sum()), cov_strength.shape[0]))
    out[:, known] = (u[:, keep] * np.sqrt(lam[keep])).T
    return out


def _place(data: Comparisons, new: NDArray[np.int64], board: Board, loaded, ci: str,
           level: float, engine: str, tol: float, max_iter: int) -> Ratings:  # fmt: skip
    n_ref_only = _check_placeable(data, new)
    if n_ref_only:
        warnings.warn(
            f"{n_ref_only} verdict(s) compare two models of the reference board: a frozen "
            "board does not move, so they do not change the placement (refit the board to "
            "use them).", DataWarning, stacklevel=4)
    engine = resolve_engine(engine, data.n_verdicts)
    k = kernels(engine, data.n_verdicts)
    n_ref = len(board.models)
    rows = data.collapsed(engine=engine)
    x0 = np.zeros(data.n_models)
    x0[:n_ref] = board.strength
    x0[new] = start(rows)[new] + float(np.mean(board.strength))
    try:
        res = newton(lambda th: penalised_terms(th, rows, 0.0, k), x0, new, tol=tol,
                     max_iter=max_iter, what="Placement")  # fmt: skip
        bread = inverse_free(res.hessian, new)
    except (FloatingPointError, np.linalg.LinAlgError):
        raise NonIdentifiableError(
            "The new models' strengths have no finite estimate against the frozen board "
            "(numerically: their verdicts carry no information). Add verdicts against "
            "reference models of similar strength.") from None
    theta = res.x
    clustered = data.clusters is not None

    def row_scores(r: Comparisons, wi, wj, tt):
        return k.bt_scores(theta, r.ii, r.jj, wi, wj, tt), None

    def verdict_meat():
        _, _, _, meat = k.bt_row_terms(theta, data.ii, data.jj, data.wi, data.wj, data.tt)
        return k.laplacian(data.n_models, data.ii, data.jj, meat)

    built = build(bread, ci, row_scores_of(data, data.n_models, k, row_scores, verdict_meat),
                  n_clusters=data.n_clusters if clustered else None,
                  cluster_name=data.cluster_name,
                  cr2=lambda: bt_inference(theta, data, ref=0, k=k, bread=bread, free=new))
    cov, inference = built.cov, built.inference
    est = Estimate(theta=theta, cov=cov, nll=res.f, converged=res.converged, n_iter=res.n_iter,
                   max_grad=res.max_grad, model_cov=bread, inference=inference)
    model_based = None
    if ci != "model":
        cov, inference, model_based = fill_collapsed(est, data.models, ci, stacklevel=5)
    has_cov = board.cov is not None
    if has_cov:
        extra = _two_step_factor(res.hessian, board.cov / ELO_SCALE**2, new, n_ref)
        cov = cov + extra.T @ extra
        if inference is not None:
            inference = with_known(inference, extra)
    else:
        warnings.warn(
            "The reference board has no covariance (no covariance file beside it): the new "
            "models' intervals ignore the reference's own uncertainty and are too narrow (the "
            "tables' column reference_cov is False). Write the board with `ratings fit --out`, "
            "which writes its covariance file.", DataWarning, stacklevel=4)
    uncertainty = Uncertainty(ci=ci, cluster=data.cluster_name if clustered else None,
                              n_clusters=data.n_clusters, inference=inference,
                              model_based=model_based)  # fmt: skip
    placement = Placement(new=tuple(map(str, data.models[new])), reference_cov=has_cov,
                          n_reference_only=n_ref_only, source=board.source)  # fmt: skip
    info = FitInfo(loglik=-res.f, converged=res.converged, n_iter=res.n_iter,
                   max_grad=res.max_grad, n_rejected=loaded.n_rejected,
                   placement=placement)  # fmt: skip
    return Ratings(models=data.models, strength=theta, cov=cov,
                   counts=rows.model_counts().copy(), uncertainty=uncertainty,
                   anchor=board.scale.anchor, offset=board.scale.rating, level=level,
                   kind="bt", scope=loaded.scope, fit_info=info)  # fmt: skip


def _two_step_factor(hessian: NDArray[np.float64], cov_ref: NDArray[np.float64],
                     new: NDArray[np.int64], n_ref: int) -> NDArray[np.float64]:
    """Rows ``F [I, A^T]`` over all models: ``extra.T @ extra`` is the reference's covariance
    with its image ``A V_R A^T`` on the new models (A = -H_NN^-1 H_NR) and their cross terms."""
    ref = np.arange(n_ref)
    h_nn, h_nr = block(hessian, new), hessian[np.ix_(new, ref)]
    a = -np.linalg.solve(h_nn, h_nr)
    f = reference_factor(cov_ref)
    extra = np.zeros((f.shape[0], hessian.shape[0]))
    extra[:, ref] = f
    extra[:, new] = f @ a.T
    return extra
