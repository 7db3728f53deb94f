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
(:func:`ratings.api.covariates.fit_covariates` runs :func:`ratings.models.covariates.
fit_design`: the effects are covariate columns, :func:`effect_columns`; one Newton solver, its
row terms from any outcome family of :mod:`ratings.models.families`). Intervals come from the
sandwich H^-1 B H^-1 with B summed over clusters (tasks) times G/(G-1) (per verdict without
clusters), as for the ratings (:mod:`ratings.inference.covariance`), so the strengths'
covariance includes the effects' uncertainty.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.errors import option
from ratings.core.schema import DETERMINISTIC_JUDGE, ELO_SCALE
from ratings.data.slots import SlotCounts, own_matrix
from ratings.models.covariates import Remedy, wald

__all__ = ["EffectPlan", "effect_columns", "effects_remedy", "effects_table", "plan_effects"]


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
    d_own = own[slots.judge, slots.ii].astype(np.int64) - own[slots.judge, slots.jj]
    fav_a, fav_b = slots.wi + slots.tt, slots.wj + slots.tt
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
        across = in_fam[slots.ii] != in_fam[slots.jj]
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

    from ratings.kernels.style_ref import style_assemble

    pos, slf = np.flatnonzero(pos_note == ""), np.flatnonzero(self_note == "")
    if not (pos.size or slf.size):
        return
    keep = slots.n > 0
    a, b, judge = slots.ii[keep], slots.jj[keep], slots.judge[keep]
    x = _columns(judge, a, b, own, pos, slf)
    # X^T X of the design (strengths, the planned effects), the first model's strength removed
    gram = style_assemble(len(slots.models), 0, a, b, judge, x, np.ones(a.size), np.zeros(0),
                          np.zeros(0))[1:, 1:]  # fmt: skip
    s = len(slots.models) - 1
    g_ss, g_se, g_ee = gram[:s, :s], gram[:s, s:], gram[s:, s:]
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


def effect_columns(slots: SlotCounts, plan: EffectPlan) -> NDArray[np.float64]:
    """One covariate column per estimated effect, per row of ``slots``: judge k's position
    bias is the coefficient of a column that is 1 on its verdicts, its self-preference that of
    own_k(A) - own_k(B) on its verdicts (positions first, then self-preferences, by judge)."""
    return _columns(slots.judge, slots.ii, slots.jj, plan.own, np.flatnonzero(plan.position),
                    np.flatnonzero(plan.self_preference))  # fmt: skip


def _columns(judge: NDArray[np.int64], a: NDArray[np.int64], b: NDArray[np.int64],
             own: NDArray[np.bool_], pos: NDArray[np.int64],
             slf: NDArray[np.int64]) -> NDArray[np.float64]:  # fmt: skip
    """The effect columns (:func:`effect_columns`) of the judges ``pos`` (position bias) and
    ``slf`` (self-preference) on rows (``judge``, ``a``, ``b``): a row has at most its
    judge's two."""
    col = np.full((2, own.shape[0]), -1)
    col[0, pos], col[1, slf] = np.arange(pos.size), pos.size + np.arange(slf.size)
    c = col[:, judge].ravel()
    val = np.concatenate([np.ones(judge.size), own[judge, a].astype(np.float64) - own[judge, b]])
    on = c >= 0
    out = np.zeros((judge.size, pos.size + slf.size))
    out[np.tile(np.arange(judge.size), 2)[on], c[on]] = val[on]
    return out


def effects_remedy():
    """How the errors of a fit with judge effects (and no style features) name them
    (:class:`ratings.models.covariates.Remedy`)."""
    fewer = f"Fit fewer effects ({option('effects')} of the audit, {option('adjust')} of a fit)."
    return Remedy(
        "Judge-effects", "judge effects",
        "some judge's effect or the strengths grow without bound on these verdicts (e.g. a judge "
        "whose verdicts always follow the slot or the family). " + fewer,
        "some effect cannot be told apart from the strengths on these verdicts (e.g. a judge "
        "that saw every pair in one A/B order). " + fewer)  # fmt: skip


def effects_table(params: NDArray[np.float64], cov: NDArray[np.float64], plan: EffectPlan, *,
                  at: int, level: float, df: float | None) -> pd.DataFrame:  # fmt: skip
    """Per judge (judge-free ``deterministic`` verdicts left out): counts, position bias and
    self-preference in log-odds and Elo with intervals and p-values, and why an effect was not
    estimated (``position_note``, ``self_note``). The estimated effects are ``params[at:]``
    in the order of :func:`effect_columns`, with their covariance in ``cov``."""
    out = pd.DataFrame({"judge": [str(j) for j in plan.judges],
                        "family": plan.family, "n": plan.n.round().astype(np.int64),
                        "n_own": plan.n_own.round().astype(np.int64)})  # fmt: skip
    var = np.diag(cov)
    for name, mask, prefix in (("position_bias", plan.position, "position"),
                               ("self_preference", plan.self_preference, "self")):  # fmt: skip
        idx = at + np.arange(int(mask.sum()))
        est, se = np.full(mask.size, np.nan), np.full(mask.size, np.nan)
        est[mask], se[mask] = params[idx], np.sqrt(np.clip(var[idx], 0.0, None))
        at += int(mask.sum())
        lower, upper, p = wald(est, se, level, df)
        out[name] = est
        out[f"{prefix}_se"] = se
        out[f"{prefix}_lower"] = lower
        out[f"{prefix}_upper"] = upper
        out[f"{prefix}_p"] = p
        out[f"{name}_elo"] = ELO_SCALE * est
        out[f"{prefix}_lower_elo"] = ELO_SCALE * lower
        out[f"{prefix}_upper_elo"] = ELO_SCALE * upper
    out["position_note"] = plan.position_note
    out["self_note"] = plan.self_note
    keep = np.asarray(plan.judges != DETERMINISTIC_JUDGE)
    return out[keep].reset_index(drop=True)
