"""Judge audit: position bias, self-preference and agreement, before publishing a board.

:func:`audit` fits the strengths jointly with each judge's position bias (beta_k) and
self-preference (gamma_k),

    P(A wins | judge k) = sigma(s_A - s_B + beta_k + gamma_k (own_k(A) - own_k(B))),

(Crowd-BT: inside eta_k sigma(.) + (1 - eta_k) sigma(-.)), with task-clustered sandwich
intervals (:mod:`ratings.models.judge_effects`), and reports per judge the effects in log-odds and
Elo
points with intervals, p-values and a plain-language flag, the judge's agreement with the board,
and per pair of judges their agreement and Cohen's kappa on shared (task, pair) items
(:mod:`ratings.audit.agreement`). ``ratings audit VERDICTS`` is the command-line form.

Reading the report: ``position_bias`` > 0 means the judge favours whatever is shown in slot A
(with A/B randomised this adds noise to the ratings, not bias); ``self_preference`` > 0 means
it favours models of its own family beyond what the other verdicts support (this biases the
ratings of that family: refit with ``adjust="self-preference"``). An effect is flagged when its
interval excludes 0 (p below 1 - level); NaN means not estimable, and ``position_note`` /
``self_note`` say why (no family, no verdicts on its family, confounded with the family's
strength, a model shown in slot A in every verdict of the judge, ...).

No dead ends: effects the verdicts cannot estimate (an infinite estimate, or a column of the
design the strengths and the effects before it already span, found from the design's rank by
:func:`ratings.models.judge_effects.plan_effects`) are left out with their reason and an
:class:`AuditWarning`, and the rest is fitted; ``effects=`` (``--effects``) chooses which
effects to fit at all.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ratings.api.adjust import ADJUSTMENTS, parse_adjust
from ratings.api.specs import (
    BT,
    LEGACY,
    CrowdBT,
    Read,
    Solver,
    legacy_specs,
    model_spec,
    options_of,
)
from ratings.audit.agreement import board_agreement, judge_agreement, self_judged
from ratings.core.errors import option
from ratings.result import Ratings

__all__ = ["EFFECTS", "Audit", "AuditWarning", "audit", "parse_effects"]

#: The judge effects the audit fits.
EFFECTS = ADJUSTMENTS

#: Flat keywords of earlier releases the audit still takes -> (spec, field).
_LEGACY = {k: LEGACY[k] for k in ("judge_quality", "fit_new_judges", "errors", "columns",
                                  "winner_map", "engine")}  # fmt: skip
_OPTIONS = ("families=, scope=, model=, effects=, cluster=, level=, n_boot=, seed=, read=, "
            "solver= (see ratings.BT, ratings.CrowdBT, ratings.Read, ratings.Solver)")


class AuditWarning(UserWarning):
    """A finding of the audit the user should see (e.g. a judge that judged itself)."""


@dataclass(frozen=True, eq=False, repr=False)
class Audit:
    """The result of :func:`audit`.

    Attributes
    ----------
    judges : pandas.DataFrame
        One row per judge: ``judge, family, n, n_own`` (verdicts, and verdicts between its
        family's models and others), ``position_bias, position_se, position_lower,
        position_upper, position_p`` and ``self_preference, self_se, self_lower, self_upper,
        self_p`` (log-odds), the same in Elo points (``*_elo``), ``position_flagged``,
        ``self_flagged``, ``self_judged`` (verdicts in which it judged itself), the board
        agreement (``board_n, board_agreement, board_lower, board_upper``), for Crowd-BT
        ``eta, eta_lower, eta_upper``, the notes on effects not estimated, and ``flag`` (plain
        language).
    agreement : pandas.DataFrame
        One row per pair of judges with shared (task, pair) items: ``judge_a, judge_b,
        n_items, n_tasks, agreement, agreement_lower, agreement_upper, kappa, kappa_lower,
        kappa_upper``.
    ratings : Ratings
        The strengths of the joint fit (corrected for every estimated effect).
    notes : tuple of str
        Findings also issued as :class:`AuditWarning`.
    effects : tuple of str
        The effects asked for (``effects=``); ``ratings.adjust`` holds those estimated.
    """

    judges: pd.DataFrame
    agreement: pd.DataFrame
    ratings: Ratings
    scope: str | None
    model: str
    level: float
    families: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    effects: tuple[str, ...] = EFFECTS

    def to_frame(self) -> pd.DataFrame:
        """The per-judge table."""
        return self.judges.copy()

    def to_json(self) -> str:
        """The whole report as JSON: metadata, ``judges`` and ``agreement`` records."""
        doc = {"scope": self.scope, "model": self.model, "level": self.level,
               "cluster": self.ratings.cluster, "n_clusters": self.ratings.n_clusters,
               "df": self.ratings.df, "n_verdicts": self.ratings.n_verdicts,
               "effects": list(self.effects), "notes": list(self.notes)}  # fmt: skip
        for name in ("judges", "agreement"):
            frame = getattr(self, name)
            doc[name] = json.loads(frame.to_json(orient="records", double_precision=15))
        return json.dumps(doc, indent=2) + "\n"

    def write(self, path: str | os.PathLike, *, inputs: Sequence[str | os.PathLike] = (),
              csv_escape: bool = True) -> None:  # fmt: skip
        """Write the per-judge table (``.csv``) or the whole report (``.json``) atomically,
        never over one of ``inputs``; ``csv_escape`` as in :func:`ratings.io.write_atomic`."""
        from ratings.io import write_atomic

        suffix = os.path.splitext(os.fspath(path))[1].lower()
        if suffix not in (".csv", ".json"):
            raise ValueError(f"The audit is written as .csv or .json; got {os.fspath(path)!r}.")
        write_atomic(self.judges if suffix == ".csv" else self.to_json(), path, inputs=inputs,
                     csv_escape=csv_escape)

    def summary(self) -> str:
        """A readable report: the flags per judge, then the effects and agreement tables."""
        r = self.ratings
        clus = (f"clustered by {r.cluster!r} ({r.n_clusters} clusters)" if r.cluster
                else "per verdict (HC0)")  # fmt: skip
        lines = [f"Judge audit ({'Crowd-BT' if self.model == 'crowd-bt' else 'Bradley-Terry'}"
                 f"{', scope ' + repr(self.scope) if self.scope else ''}): "
                 f"{len(r.models)} models, {r.n_verdicts} verdicts, {len(self.judges)} judge(s); "
                 f"{self.level:.0%} sandwich intervals {clus}", ""]  # fmt: skip
        lines += [f"{j}: {f}" for j, f in zip(self.judges["judge"], self.judges["flag"],
                                               strict=True)]  # fmt: skip
        cols = ["judge", "n", "position_bias_elo", "position_lower_elo", "position_upper_elo",
                "position_p", "n_own", "self_preference_elo", "self_lower_elo",
                "self_upper_elo", "self_p", "board_agreement"]  # fmt: skip
        if "eta" in self.judges.columns:
            cols.append("eta")
        lines += ["", "Effects (Elo points):",
                  self.judges[cols].to_string(index=False, float_format="{:.3g}".format)]
        if len(self.agreement):
            lines += ["", "Agreement on shared (task, pair) items:",
                      self.agreement.to_string(index=False, float_format="{:.3f}".format)]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"<Audit {len(self.judges)} judges, {len(self.agreement)} judge pairs, "
                f"scope={self.scope!r}>")  # fmt: skip


def audit(
    verdicts,
    *,
    families=None,
    scope: str | None = None,
    model: str | BT | CrowdBT = "bt",
    effects: str | Sequence[str] = EFFECTS,
    cluster: str | None = "auto",
    level: float = 0.95,
    n_boot: int = 1000,
    seed: int = 0,
    read: Read | None = None,
    solver: Solver | None = None,
    **legacy: object,
) -> Audit:
    """Audit the judges of a verdict log: position bias, self-preference, agreement.

    Parameters
    ----------
    verdicts : path, DataFrame or VerdictLog
        A verdict log as :func:`ratings.fit` reads it (or a counts table by task, judge,
        model_a, model_b: slot order is what matters).
    families : path, DataFrame or mapping, optional
        Family of each model and judge: a CSV with columns ``name,family``. A judge's
        self-preference is estimated only when it has a family; names not listed have none.
    scope : str, optional
        The scope to audit (required when the log holds several).
    model : "bt", "crowd-bt", ratings.BT or ratings.CrowdBT, default="bt"
        Crowd-BT adds each judge's quality eta (reported with its interval);
        ``ratings.CrowdBT(judge_quality=..., fit_new_judges=...)`` fixes etas as in
        :func:`ratings.fit`. Its estimate is that of :func:`ratings.fit` with judge effects:
        the plain maximum likelihood wherever it exists, else the posterior mode under
        ``ratings.CrowdBT(prior=...)``'s weak priors (``prior=None``: the plain estimate or an
        error). The audit fits no penalty: ``ratings.BT()`` only.
    effects : str or sequence of str, default=("position", "self-preference")
        The judge effects to fit (a comma-separated string or a list); the others are
        reported as not fitted. Effects the verdicts cannot estimate (a model in slot A in
        every verdict of a judge, a judge that always chose one slot, a family never met by
        another judge, ...) are left out whatever is asked, with the reason in
        ``position_note`` / ``self_note`` and an :class:`AuditWarning`, and the rest is fitted.
    cluster : str or None, default="auto"
        Cluster column of the sandwich (``task_id`` when present); agreement between judges
        needs it to define items.
    level : float, default=0.95
        Confidence level of intervals and flags (an effect is flagged when p < 1 - level).
    n_boot, seed : int
        Task-bootstrap resamples and seed of the agreement intervals.
    read : ratings.Read, optional
        How the log is read (``columns``, ``winner_map``, ``errors``), as in :func:`ratings.fit`.
    solver : ratings.Solver, optional
        ``engine``, ``tol``, ``max_iter`` and ``max_memory``, as in :func:`ratings.fit`.
    **legacy
        The flat keywords of earlier releases (``judge_quality``, ``fit_new_judges``,
        ``errors``, ``columns``, ``winner_map``, ``engine``) still work, with a
        :class:`DeprecationWarning` naming their spec; any other keyword is a ``TypeError``.

    Returns
    -------
    Audit

    Warns
    -----
    AuditWarning
        A judge that is also a rated model judged matches it played in; an effect asked for
        that the verdicts cannot estimate (left out, the rest fitted).

    Examples
    --------
    >>> import ratings
    >>> a = ratings.audit("verdicts.csv", families="families.csv")   # doctest: +SKIP
    >>> a.judges[["judge", "position_bias_elo", "self_preference_elo", "flag"]]  # doctest: +SKIP
    """
    from ratings.api.covariates import fit_covariates
    from ratings.api.loading import load_with
    from ratings.core.memory import limit_scope
    from ratings.core.threads import one_blas_thread
    from ratings.data.slots import check_families_cover, read_families, slot_counts
    from ratings.kernels.engine import resolve
    from ratings.models.existence import check_identifiable
    from ratings.models.judge_effects import plan_effects

    by_spec = legacy_specs(legacy, names=_LEGACY, where="audit", options=_OPTIONS)
    spec = model_spec(model, by_spec.get("CrowdBT", {}))
    if isinstance(spec, BT) and (spec.penalty or spec.firth):
        raise ValueError(f"The audit fits no penalty: {option('model')} must be 'bt' or "
                         f"'crowd-bt' without penalty or firth; got {spec!r}.")  # fmt: skip
    read = read if read is not None else Read(**by_spec.get("Read", {}))
    solver = solver if solver is not None else Solver(**by_spec.get("Solver", {}))
    options = options_of(model=spec, scope=scope, cluster=cluster, level=level, read=read,
                         solver=solver)  # fmt: skip
    model, engine = spec.name, solver.engine
    wanted = parse_effects(effects)
    fams = read_families(families)
    loaded = load_with(verdicts, options)
    data, scope = loaded.data, loaded.scope
    if loaded.frame is None:
        raise TypeError("The audit needs to know which model was in slot A, which `Comparisons` "
                        "do not keep; pass the verdict log (a path, DataFrame or VerdictLog).")
    check_families_cover(fams, [*data.models, *data.judges])
    engine = resolve(engine, data.n_verdicts)
    slots = slot_counts(loaded.frame, data, engine)
    check_identifiable(data.collapsed(engine=engine))
    plan = plan_effects(slots, fams, position="position" in wanted,
                        self_preference="self-preference" in wanted)  # fmt: skip
    fitted = tuple(e for e, on in zip(EFFECTS, (plan.position, plan.self_preference),
                                      strict=True) if on.any())  # fmt: skip
    with one_blas_thread(), limit_scope(solver.max_memory):
        r = fit_covariates(loaded, replace(options, adjust=fitted, families=fams), plan=plan,
                           slots=slots)  # fmt: skip
    table = r.judge_effects.table.copy()
    table = table.join(board_agreement(slots, r.strength, level=level, df=r.df),
                       on="judge")  # fmt: skip
    mine = self_judged(slots)
    table["self_judged"] = table["judge"].map(mine).fillna(0).astype(np.int64)
    if r.judges is not None:
        eta = r.judges[["eta", "lower", "upper", "status", "uninformative"]].rename(
            columns={"lower": "eta_lower", "upper": "eta_upper", "status": "eta_status"})
        table = table.join(eta, on="judge")
    alpha = 1.0 - float(level)
    table["position_flagged"] = (table["position_p"] < alpha).to_numpy()
    table["self_flagged"] = (table["self_p"] < alpha).to_numpy()
    table["flag"] = [_flag(row) for row in table.to_dict("records")]
    notes = tuple(f"Judge {j!r} is also a rated model and judged {n} verdict(s) of matches it "
                  "played in: " + ("its self-preference towards its family is in its row."
                                   if j in fams else f"give it a family ({option('families')}) "
                                   "to estimate its self-preference.")
                  for j, n in mine.items())  # fmt: skip
    notes += tuple(f"Not estimable, left out of the fit: judge {why}." for why in plan.blocked())
    for note in notes:
        warnings.warn(note, AuditWarning, stacklevel=2)
    if data.clusters is None:
        pairs = judge_agreement(_no_items(slots), level=level, n_boot=n_boot, seed=seed)
    else:
        pairs = judge_agreement(slots, level=level, n_boot=n_boot, seed=seed)
    return Audit(judges=table, agreement=pairs, ratings=r, scope=scope, model=model,
                 level=float(level), families=fams, notes=notes, effects=wanted)  # fmt: skip


def parse_effects(effects: str | Sequence[str]) -> tuple[str, ...]:
    """``"position,self-preference"`` (or a list) -> the effects in :data:`EFFECTS` order;
    unknown or no effects are a ValueError naming them."""
    return parse_adjust(effects, "effects", required=True)


def _no_items(slots):
    """Without a task column there are no (task, pair) items to compare judges on."""
    import dataclasses

    empty = np.zeros(0, dtype=np.int64)
    return dataclasses.replace(slots, cluster=empty, judge=empty, ii=empty, jj=empty,
                               wi=empty.astype(float), wj=empty.astype(float),
                               tt=empty.astype(float))  # fmt: skip


def _flag(row: dict) -> str:
    """One plain-language sentence per finding of a judge."""
    parts = []
    if row["position_note"]:
        parts.append(f"position bias not estimated: {row['position_note']}")
    elif row["position_flagged"]:
        slot = "A" if row["position_bias"] > 0 else "B"
        parts.append(f"favours slot {slot} by {abs(row['position_bias_elo']):.0f} Elo "
                     f"(p = {row['position_p']:.2g})")  # fmt: skip
    else:
        parts.append("no detectable position bias")
    if row["self_note"]:
        parts.append(f"self-preference not estimable: {row['self_note']}")
    elif row["self_flagged"]:
        verb = "favours" if row["self_preference"] > 0 else "disfavours"
        parts.append(f"{verb} its own family {row['family']!r} by "
                     f"{abs(row['self_preference_elo']):.0f} Elo (p = {row['self_p']:.2g})")
    else:
        parts.append(f"no detectable self-preference towards family {row['family']!r}")
    if row["self_judged"]:
        parts.append(f"judged itself in {row['self_judged']} verdict(s)")
    if row.get("uninformative") in (True,):  # also numpy booleans; NaN when not Crowd-BT
        parts.append("its eta interval reaches 1/2 (verdicts like coin flips)")
    return "; ".join(parts)
