"""Judge effects fitted jointly with the strengths: position bias and self-preference.

Model
-----
For a verdict of judge k between model A (shown in slot A) and model B (slot B),

    x = s_A - s_B + beta_k + gamma_k (own_k(A) - own_k(B)),

where own_k(m) = 1 when model m is of judge k's family, and P(A wins | k) = sigma(x)
(Bradley-Terry) or eta_k sigma(x) + (1 - eta_k) sigma(-x) (Crowd-BT); a tie is one observation
with outcome 1/2, as in the fits. ``beta_k`` is the order ("home advantage") effect of the
Bradley-Terry model with an order effect (Agresti 2013, ch. 11; Turner & Firth 2012);
``gamma_k`` is self-preference (the self-enhancement bias of Zheng et al. 2023; Panickssery
et al. 2024): the log-odds by which judge k favours its own family beyond the strengths that
all verdicts support. Both are in log-odds; times 400 / ln 10 they are Elo points.

Identification
--------------
``beta_k`` needs verdicts of judge k favouring each slot (otherwise its MLE is infinite).
``gamma_k`` needs a family for the judge, verdicts pitting its family's models against other
models with both outcomes, and verdicts of some judge outside that family comparing the
family's models with others: without those, adding c to gamma of the family's judges and to the
strengths of the family's models changes no probability (e.g. a board with one judge), and
self-preference cannot be told from strength. Effects failing a condition are not estimated
and :class:`EffectPlan` says why.

Inference
---------
Strengths and effects are one fit of the design with covariates that style control also uses
(:func:`ratings.models.style.fit_style`: the effects are covariate columns,
:func:`effect_columns`; one Newton solver, its row terms from the outcome family of
:mod:`ratings.models.families`). Intervals come from the sandwich H^-1 B H^-1 with B summed over
clusters (tasks) times G/(G-1) (per verdict without clusters), as for the ratings
(:mod:`ratings.inference.covariance`), so the strengths' covariance includes the effects'
uncertainty.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.errors import option
from ratings.core.schema import DETERMINISTIC_JUDGE, ELO_SCALE
from ratings.core.tdist import critical_value
from ratings.data.comparisons import Comparisons
from ratings.data.slots import SlotCounts, own_matrix
from ratings.kernels.engine import Engine
from ratings.models.families import BRADLEY_TERRY, CROWD_BT

__all__ = ["EffectPlan", "EffectsFit", "crowd_judges", "effect_columns", "effects_table",
           "fit_effects", "plan_effects", "two_sided_p"]  # fmt: skip


NOT_FITTED = "not fitted"
JUDGE_FREE = "judge-free verdicts (render forfeits, rubric matches)"
NO_FAMILY = "no family given"
NO_OWN = "no verdicts between its family's models and other models"
#: Reasons for not estimating an effect that leave nothing to adjust for (every other reason
#: means the effect exists in the data but has no finite, identified estimate).
NOTHING_TO_ADJUST = frozenset({NOT_FITTED, JUDGE_FREE, NO_FAMILY, NO_OWN, "no verdicts"})


@dataclass(frozen=True, eq=False)
class EffectPlan:
    """Which judge effects are estimated, and why the others are not.

    Arrays run over ``judges``; ``own`` is judges x models. ``position_note`` and
    ``self_note`` are empty where the effect is estimated.
    """

    judges: pd.Index
    family: list[str | None]
    own: NDArray[np.bool_]
    position: NDArray[np.bool_]
    self_preference: NDArray[np.bool_]
    n: NDArray[np.float64]
    n_own: NDArray[np.float64]
    position_note: list[str]
    self_note: list[str]

    def blocked(self) -> list[str]:
        """Effects present in the data without a finite, identified estimate, as
        ``"judge (position bias): why"`` sentences (empty when every requested effect is
        estimated or has nothing to adjust for)."""
        out = []
        for what, notes in (("position bias", self.position_note),
                            ("self-preference", self.self_note)):  # fmt: skip
            out += [f"{j} ({what}): {note}" for j, note in zip(self.judges, notes, strict=True)
                    if note and note not in NOTHING_TO_ADJUST]
        return out


def _per_judge(slots: SlotCounts, weights: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.bincount(slots.judge, weights, len(slots.judges))


def plan_effects(slots: SlotCounts, families: Mapping[str, str], *, position: bool,
                 self_preference: bool) -> EffectPlan:  # fmt: skip
    """Decide which of the requested effects are identified on these verdicts."""
    slots = slots.collapsed  # the same counts per (judge, a, b)
    judges, k = slots.judges, len(slots.judges)
    own = own_matrix(judges, slots.models, families)
    family = [families.get(str(j)) for j in judges]
    det = np.asarray(judges == DETERMINISTIC_JUDGE)
    n = _per_judge(slots, slots.n)
    d_own = own[slots.judge, slots.a].astype(np.int64) - own[slots.judge, slots.b]
    fav_a, fav_b = slots.wa + slots.tt, slots.wb + slots.tt
    n_own = _per_judge(slots, np.where(d_own != 0, slots.n, 0.0))
    own_fav = _per_judge(slots, np.where(d_own > 0, fav_a, np.where(d_own < 0, fav_b, 0.0)))
    other_fav = _per_judge(slots, np.where(d_own > 0, fav_b, np.where(d_own < 0, fav_a, 0.0)))
    a_fav, b_fav = _per_judge(slots, fav_a), _per_judge(slots, fav_b)

    pos_note = np.full(k, "", dtype=object)
    pos_note[b_fav == 0] = "always chose slot A: the position bias is +infinite"
    pos_note[a_fav == 0] = "always chose slot B: the position bias is -infinite"
    pos_note[n == 0] = "no verdicts"
    pos_note[det] = JUDGE_FREE
    if not position:
        pos_note[:] = NOT_FITTED

    self_note = np.full(k, "", dtype=object)
    self_note[other_fav == 0] = ("its family's models won every verdict against others: the "
                                 "self-preference is +infinite")  # fmt: skip
    self_note[own_fav == 0] = ("its family's models never won or tied against others: the "
                               "self-preference is -infinite")  # fmt: skip
    self_note[n_own == 0] = NO_OWN
    self_note[np.array([f is None for f in family], dtype=bool)] = NO_FAMILY
    self_note[det] = JUDGE_FREE
    if not self_preference:
        self_note[:] = NOT_FITTED
    _confounded(slots, families, family, self_note)
    _spanned(slots, own, pos_note, self_note)
    return EffectPlan(judges=judges, family=family, own=own, position=pos_note == "",
                      self_preference=self_note == "", n=n, n_own=n_own,
                      position_note=pos_note.tolist(), self_note=self_note.tolist())  # fmt: skip


def _confounded(slots: SlotCounts, families: Mapping[str, str], family: list[str | None],
                note: NDArray) -> None:  # fmt: skip
    """Mark self-preference not estimable for a family when no verdict of a judge outside the
    family's estimated judges compares the family's models with other models (``note`` is
    updated in place)."""
    model_family = np.array([families.get(str(m)) for m in slots.models], dtype=object)
    for fam in sorted({f for f, t in zip(family, note, strict=True) if f is not None and t == ""}):
        members = np.array([f == fam and t == "" for f, t in zip(family, note, strict=True)])
        in_fam = model_family == fam
        across = in_fam[slots.a] != in_fam[slots.b]
        if not (across & ~members[slots.judge] & (slots.n > 0)).any():
            note[members] = (f"no judge outside family {fam!r} compared its models with other "
                             "models: self-preference cannot be told apart from the family's "
                             "strength")  # fmt: skip


def _spanned(slots: SlotCounts, own: NDArray[np.bool_], pos_note: NDArray,
             self_note: NDArray) -> None:
    """Mark the effects still planned that the strengths (and the effects kept before them)
    already explain, with the reason (``pos_note`` and ``self_note`` are updated in place).

    An effect's column of the design is kept when it adds a direction to the columns before it
    (the strengths, then position effects, then self-preferences, by judge): the pivots of a
    Cholesky factorisation of the effects' Schur complement, in that order. Row weights do
    not change which columns are spanned, so the unweighted design of the rows with verdicts
    decides it (its strengths' block is positive definite once the win graph is connected,
    which the callers check first).
    """
    import scipy.linalg
    from scipy import sparse

    pos, slf = np.flatnonzero(pos_note == ""), np.flatnonzero(self_note == "")
    if not (pos.size or slf.size):
        return
    keep = slots.n > 0
    a, b, judge = slots.a[keep], slots.b[keep], slots.judge[keep]
    m, r = len(slots.models), int(keep.sum())
    d_own = own[judge, a].astype(np.float64) - own[judge, b]
    col_pos = np.full(len(slots.judges), -1)
    col_pos[pos] = np.arange(pos.size)
    col_self = np.full(len(slots.judges), -1)
    col_self[slf] = pos.size + np.arange(slf.size)
    rows = np.arange(r)
    eff = sparse.csr_matrix(
        (np.concatenate([np.ones(r), d_own])[np.concatenate([col_pos[judge] >= 0,
                                                             col_self[judge] >= 0])],
         (np.concatenate([rows[col_pos[judge] >= 0], rows[col_self[judge] >= 0]]),
          np.concatenate([col_pos[judge][col_pos[judge] >= 0],
                          col_self[judge][col_self[judge] >= 0]]))),
        shape=(r, pos.size + slf.size))  # fmt: skip
    strengths = sparse.csr_matrix((np.r_[np.ones(r), -np.ones(r)], (np.r_[rows, rows],
                                                                     np.r_[a, b])),
                                  shape=(r, m))[:, 1:]  # fmt: skip
    g_ss = (strengths.T @ strengths).toarray()
    g_se = (strengths.T @ eff).toarray()
    g_ee = (eff.T @ eff).toarray()
    try:
        solved = scipy.linalg.solve(g_ss, g_se, assume_a="pos")
    except (np.linalg.LinAlgError, ValueError):
        solved = np.linalg.lstsq(g_ss, g_se, rcond=None)[0]
    schur = g_ee - g_se.T @ solved
    spanned = np.zeros(schur.shape[0], dtype=bool)
    for i in range(schur.shape[0]):  # one step per effect (judges x 2), not per verdict
        if schur[i, i] <= 1e-9 * max(g_ee[i, i], 1.0):
            spanned[i] = True
            continue
        schur -= np.outer(schur[:, i], schur[i, :]) / schur[i, i]
    for k in pos[spanned[: pos.size]]:
        pos_note[k] = _slot_reason(slots.models, a[judge == k], b[judge == k])
    for k in slf[spanned[pos.size:]]:
        self_note[k] = ("cannot be told apart from the strengths and its position bias on "
                        "these verdicts (e.g. its family's models sit in one slot whenever "
                        "they meet others)")  # fmt: skip


def _slot_reason(models: pd.Index, a: NDArray[np.int64], b: NDArray[np.int64]) -> str:
    """Why a judge's position bias is spanned by the strengths: a model in one slot in every
    verdict of the judge, when there is one."""
    for slot, side, other in (("A", a, b), ("B", b, a)):
        always = np.flatnonzero(np.bincount(side, minlength=len(models)) == side.size)
        always = [i for i in always if not (other == i).any()]
        if always:
            return (f"model {str(models[always[0]])!r} is in slot {slot} in every verdict of "
                    f"this judge: its position bias cannot be told apart from that model's "
                    "strength")  # fmt: skip
    return ("cannot be told apart from the strengths on these verdicts: shifting some models' "
            "strengths reproduces a slot effect (each pair it judged is in one A/B order)")


@dataclass(frozen=True, eq=False)
class EffectsFit:
    """The joint fit: parameters x = (s, beta, gamma, eta[, phi]) of length M + 3K (+ 1 with
    a tie model, ``ties`` its family).

    ``cov`` is over x, zero outside the coordinates with a covariance (strengths but the
    reference, estimated effects, estimated etas off the boundary); ``influence`` (G x P) holds
    each cluster's first-order effect on x (clustered fits), with
    ``cov = G/(G-1) influence.T @ influence`` for the sandwich.
    """

    x: NDArray[np.float64]
    n_models: int
    n_judges: int
    ref: int
    eta_estimated: NDArray[np.bool_]
    eta_boundary: NDArray[np.bool_]
    cov: NDArray[np.float64]
    influence: NDArray[np.float64] | None
    hessian: NDArray[np.float64]
    nll: float
    converged: bool
    n_iter: int
    max_grad: float
    ties: object | None = None

    def part(self, name: str) -> slice:
        """Slice of ``x`` holding ``"s"``, ``"beta"``, ``"gamma"``, ``"eta"`` or ``"tie"`` (a
        tie model's parameter, last; empty without)."""
        m, k = self.n_models, self.n_judges
        start = {"s": 0, "beta": m, "gamma": m + k, "eta": m + 2 * k, "tie": m + 3 * k}[name]
        size = {"s": m, "tie": int(self.ties is not None)}.get(name, k)
        return slice(start, start + size)

    def estimate(self, name: str) -> NDArray[np.float64]:
        return self.x[self.part(name)]

    def se(self, name: str) -> NDArray[np.float64]:
        sl = self.part(name)
        return np.sqrt(np.clip(np.diag(self.cov)[sl], 0.0, None))


def effect_columns(slots: SlotCounts, plan: EffectPlan) -> NDArray[np.float64]:
    """One covariate column per estimated effect, per row of ``slots``: judge k's position
    bias is the coefficient of a column that is 1 on its verdicts, its self-preference that of
    own_k(A) - own_k(B) on its verdicts (positions first, then self-preferences, by judge)."""
    cols = [(slots.judge == k).astype(np.float64) for k in np.flatnonzero(plan.position)]
    own = plan.own.astype(np.float64)
    cols += [np.where(slots.judge == k, own[k, slots.a] - own[k, slots.b], 0.0)
             for k in np.flatnonzero(plan.self_preference)]  # fmt: skip
    return np.column_stack(cols) if cols else np.zeros((slots.a.size, 0))


def fit_effects(
    data: Comparisons,
    slots: SlotCounts,
    plan: EffectPlan,
    *,
    model: str = "bt",
    ref: int = 0,
    fixed_eta: Mapping[str, float] | None = None,
    ci: str = "sandwich",
    engine: Engine = "auto",
    tol: float = 1e-10,
    max_iter: int = 100,
    ties=None,
) -> EffectsFit:
    """Fit strengths and the planned judge effects jointly (see the module notes).

    The effects are covariate columns of the design (:func:`effect_columns`), fitted by the
    one design with covariates (:func:`ratings.models.style.fit_style`, the one Newton solver
    and its inference). ``data`` is the package's aggregation of the same verdicts (its win
    graph must be strongly connected: check with
    :func:`ratings.models.existence.check_identifiable` first); the fit starts from its
    Bradley-Terry or Crowd-BT estimate with no judge effects. ``ci="model"`` returns the
    inverse Hessian, otherwise the sandwich: clustered (CR1, factor G/(G-1)) when ``slots``
    has clusters, else per verdict (HC0). ``ties``: a tie model's fit without effects
    (:class:`ratings.models.ties.TieFit`), the start of the same model with them (its tie
    parameter one more parameter of the design).
    """
    from ratings.models.bt import fit_bt
    from ratings.models.crowd.likelihood import fit_crowd_bt
    from ratings.models.style import fit_style, style_rows

    m, nj = len(slots.models), len(slots.judges)
    rows = data.collapsed(engine=engine)
    crowd, family = model != "bt", CROWD_BT if model != "bt" else BRADLEY_TERRY
    if ties is not None:
        family, theta0 = ties.family, ties.theta
        eta0, eta_est = np.array([ties.phi]), np.zeros(nj, dtype=bool)
    elif crowd:
        start = fit_crowd_bt(rows, ref=ref, fixed_eta=dict(fixed_eta or {}), tol=1e-8,
                             engine=engine)  # fmt: skip
        theta0, eta0, eta_est = start.theta, start.eta, start.estimated
    else:
        theta0 = fit_bt(rows, ref=ref, tol=1e-8, engine=engine).theta
        eta0, eta_est = None, np.zeros(nj, dtype=bool)
    fit = fit_style(style_rows(slots, effect_columns(slots, plan), engine), theta0, ref=ref,
                    family=family, eta0=eta0, eta_free=eta_est if family is CROWD_BT else None,
                    engine=engine, tol=tol, max_iter=max_iter,
                    ci="sandwich-z" if ci == "sandwich" else ci, remedy=_remedy())  # fmt: skip
    # (s, position, self, eta) of the fit -> (s, beta, gamma, eta) over every judge
    at = np.concatenate([np.arange(m), m + np.flatnonzero(plan.position),
                         m + nj + np.flatnonzero(plan.self_preference),
                         m + 2 * nj + np.arange(nj if crowd else 0),
                         m + 3 * nj + np.arange(fit.eta.size if ties is not None else 0)])
    n = m + 3 * nj + int(ties is not None)
    x = np.concatenate([np.zeros(m + 2 * nj), np.ones(nj), np.zeros(n - m - 3 * nj)])
    x[at] = fit.params
    cov, hessian = np.zeros((n, n)), np.zeros((n, n))
    cov[np.ix_(at, at)], hessian[np.ix_(at, at)] = fit.cov, fit.hessian
    influence = None
    if fit.influence is not None:
        influence = np.zeros((fit.influence.shape[0], n))
        influence[:, at] = fit.influence
    boundary = np.zeros(nj, dtype=bool) if fit.eta_boundary is None else fit.eta_boundary
    return EffectsFit(x=x, n_models=m, n_judges=nj, ref=ref, eta_estimated=eta_est,
                      eta_boundary=boundary, cov=cov, influence=influence, hessian=hessian,
                      nll=fit.nll, converged=fit.converged, n_iter=fit.n_iter,
                      max_grad=fit.max_grad, ties=None if ties is None else family)  # fmt: skip


def _remedy():
    from ratings.models.style import Remedy

    return Remedy(
        "Judge-effects", "judge effects",
        "some judge's effect or the strengths grow without bound on these verdicts (e.g. a judge "
        "whose verdicts always follow the slot or the family). " + _fewer(),
        "some effect cannot be told apart from the strengths on these verdicts (e.g. a judge "
        "that saw every pair in one A/B order). " + _fewer())  # fmt: skip


def _fewer() -> str:
    return (f"Fit fewer effects ({option('effects')} of the audit, {option('adjust')} of a "
            "fit).")


def two_sided_p(t: NDArray[np.float64], df: float | None) -> NDArray[np.float64]:
    """Two-sided p-values of t statistics: Student t with ``df`` degrees of freedom, or normal."""
    from scipy.special import ndtr, stdtr

    t = np.abs(np.asarray(t, dtype=np.float64))
    if df is None or not np.isfinite(df):
        return 2.0 * ndtr(-t)
    return 2.0 * stdtr(df, -t)


def effects_table(fit: EffectsFit, plan: EffectPlan, *, level: float,
                  df: float | None) -> pd.DataFrame:  # fmt: skip
    """Per judge (judge-free ``deterministic`` verdicts left out): counts, position bias and
    self-preference in log-odds and Elo with intervals and p-values, and why an effect was not
    estimated (``position_note``, ``self_note``)."""
    z = critical_value(level, df)
    out = pd.DataFrame({"judge": [str(j) for j in plan.judges],
                        "family": plan.family, "n": plan.n.round().astype(np.int64),
                        "n_own": plan.n_own.round().astype(np.int64)})  # fmt: skip
    for name, part, mask, prefix in (("position_bias", "beta", plan.position, "position"),
                                     ("self_preference", "gamma", plan.self_preference,
                                      "self")):  # fmt: skip
        est = np.where(mask, fit.estimate(part), np.nan)
        se = np.where(mask, fit.se(part), np.nan)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = two_sided_p(est / se, df)
        out[name] = est
        out[f"{prefix}_se"] = se
        out[f"{prefix}_lower"] = est - z * se
        out[f"{prefix}_upper"] = est + z * se
        out[f"{prefix}_p"] = p
        out[f"{name}_elo"] = ELO_SCALE * est
        out[f"{prefix}_lower_elo"] = ELO_SCALE * (est - z * se)
        out[f"{prefix}_upper_elo"] = ELO_SCALE * (est + z * se)
    out["position_note"] = plan.position_note
    out["self_note"] = plan.self_note
    keep = np.asarray(plan.judges != DETERMINISTIC_JUDGE)
    return out[keep].reset_index(drop=True)


def crowd_judges(fit: EffectsFit, data: Comparisons, level: float, df: float | None):
    """The Crowd-BT judges table (:func:`ratings.models.crowd.judge_table.judge_table`: eta with
    intervals) of a joint fit."""
    from ratings.models.crowd.judge_table import joint_judges

    keep = np.r_[np.arange(fit.n_models), np.arange(fit.part("eta").start, fit.part("eta").stop)]
    return joint_judges(fit.estimate("s"), fit.estimate("eta"), fit.eta_estimated,
                        fit.eta_boundary, fit.hessian[np.ix_(keep, keep)],
                        fit.cov[np.ix_(keep, keep)], data, level, df, ref=fit.ref)  # fmt: skip
