"""Ratings adjusted for judge effects: ``ratings.fit(..., adjust=...)``.

The strengths are fitted jointly with judge position bias and/or self-preference as nuisance
parameters (:mod:`ratings.models.judge_effects`), so the ratings are those of judges without these
biases, and their sandwich intervals include the effects' uncertainty.

When to adjust
--------------
* **Self-preference biases ratings.** A judge that favours its own family lifts that family's
  models in every verdict it gives on them; randomisation does not cancel it. Adjusting
  (``adjust="self-preference"`` with ``families=``) rates them as an unbiased judge would. It
  needs verdicts by judges outside the family on the family's models (otherwise it raises).
* **Position bias with randomised A/B order adds noise, not bias.** Each model sits in slot A
  about half the time, so beta_k cancels on average; adjusting then changes ratings by far less
  than their standard errors and intervals barely move. When the order was not randomised (a
  model shown mostly first), position bias does bias ratings, and adjusting removes it.
* An adjustment costs a little precision (one parameter per judge); on a board without these
  biases adjusted and plain ratings agree within their standard errors
  (``benchmarks_perf/audit_study.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ratings.api.loading import LoadedLog
from ratings.api.results import labelled
from ratings.api.ties import tie_start, with_ties
from ratings.core.errors import NonIdentifiableError, option
from ratings.data.comparisons import Comparisons
from ratings.data.slots import Families, check_families_cover, read_families, slot_counts
from ratings.kernels.engine import resolve as resolve_engine
from ratings.models.estimate import Estimate
from ratings.models.existence import check_identifiable
from ratings.models.families.ties import tie_family
from ratings.models.judge_effects import (
    EffectPlan,
    EffectsFit,
    crowd_judges,
    effects_table,
    fit_effects,
    plan_effects,
)
from ratings.result import JudgeEffects, Ratings

__all__ = ["ADJUSTMENTS", "check_adjust_options", "checked_families", "fit_adjusted",
           "identified_plan", "parse_adjust", "ratings_from_fit"]

#: Judge effects ``adjust=`` accepts.
ADJUSTMENTS = ("position", "self-preference")


def parse_adjust(adjust: str | Iterable[str] | None) -> tuple[str, ...]:
    """``"position,self-preference"`` (or a list) -> ``("position", "self-preference")``."""
    if adjust is None:
        return ()
    items = str(adjust).split(",") if isinstance(adjust, str) else [str(a) for a in adjust]
    items = [a.strip() for a in items if a.strip()]
    bad = [a for a in items if a not in ADJUSTMENTS]
    if bad:
        raise ValueError(f"{option('adjust')} must name judge effects among {list(ADJUSTMENTS)} "
                         f"(comma-separated); got {bad!r}.")  # fmt: skip
    return tuple(a for a in ADJUSTMENTS if a in items)


def check_adjust_options(adjust: tuple[str, ...], families, *, ci: str, penalty: float) -> None:
    """Raise for options :func:`fit_adjusted` does not take (before any data is read)."""
    if ci not in ("sandwich", "sandwich-z", "model"):
        raise ValueError(f"{option('ci')} must be 'sandwich', 'sandwich-z' or 'model' with "
                         f"{option('adjust')}; got {ci!r} (the bootstrap is not available for "
                         "adjusted fits).")  # fmt: skip
    if penalty:
        raise ValueError(f"{option('penalty')} is not available with {option('adjust')}.")
    if "self-preference" in adjust and families is None:
        raise ValueError(_needs_families())


def _needs_families() -> str:
    return ("Adjusting for self-preference needs the judges' and models' families: pass "
            f"{option('families')} (a CSV with name,family).")


def checked_families(families, adjust: Sequence[str], data) -> dict:
    """The families read (:func:`ratings.data.slots.read_families`), required for
    self-preference and covering every model and judge of ``data``."""
    fams = read_families(families)
    if "self-preference" in adjust and not fams:
        raise ValueError(_needs_families())
    check_families_cover(fams, [*data.models, *data.judges])
    return fams


def identified_plan(slots, fams: dict, adjust: Sequence[str]):
    """The plan of judge effects (:func:`ratings.models.judge_effects.plan_effects`); an error
    naming the requested effects that have no finite, identified estimate."""
    plan = plan_effects(slots, fams, position="position" in adjust,
                        self_preference="self-preference" in adjust)  # fmt: skip
    blocked = plan.blocked()
    if blocked:
        raise NonIdentifiableError(
            "Cannot adjust for judge effects that have no finite, identified estimate: "
            + "; ".join(blocked[:5]) + ". Drop that adjustment or add verdicts."
        )
    return plan


def fit_adjusted(
    loaded: LoadedLog,
    *,
    adjust: tuple[str, ...],
    families: Families = None,
    model: str = "bt",
    judge_quality=None,
    fit_new_judges: bool = False,
    anchor: str | None = None,
    rating: float = 1000.0,
    ci: str = "sandwich",
    level: float = 0.95,
    engine: str = "auto",
    tol: float = 1e-10,
    max_iter: int = 100,
    ties: str = "half",
) -> Ratings:
    """Ratings with judge effects as nuisance parameters: the body of :func:`ratings.fit` with
    ``adjust=`` (arguments as there; ``loaded`` is the verdicts read and aggregated by
    :func:`ratings.api.fitting.load_log`, ``rating`` the anchor's rating).

    Raises
    ------
    ValueError
        Self-preference without families.
    NonIdentifiableError
        The win graph is not strongly connected, or a requested effect exists in the data but
        has no finite, identified estimate (the message names the judge and why).
    """
    from ratings.models.crowd.quality import resolve_judge_quality

    data, frame = loaded.data, loaded.frame
    if frame is None:
        raise TypeError(
            "Judge effects need to know which model was in slot A, which `Comparisons` do not "
            "keep; pass the verdict log (a path, DataFrame or VerdictLog) instead."
        )
    fams = checked_families(families, adjust, data)
    engine = resolve_engine(engine, data.n_verdicts)
    slots = slot_counts(frame, data, engine)
    check_identifiable(data.collapsed(engine=engine))
    plan = identified_plan(slots, fams, adjust)
    fixed = {}
    if model == "crowd-bt":
        fixed = resolve_judge_quality(judge_quality, data.judges, scope=loaded.scope,
                                      fit_new_judges=fit_new_judges).eta  # fmt: skip
    ref = 0 if anchor is None else int(data.models.get_loc(anchor))
    rows = data.collapsed(engine=engine)
    start = None
    if ties != "half" and rows.tt.sum() > 0:  # a tie model's parameter joins the design
        start = tie_start(rows, tie_family(ties), ref=ref, engine=engine)
    fit = fit_effects(data, slots, plan, model=model, ref=ref, fixed_eta=fixed, ci=ci,
                      engine=engine, tol=tol, max_iter=max_iter, ties=start)  # fmt: skip
    out = ratings_from_fit(fit, plan, data, model=model if start is None else ties, ci=ci,
                           level=level, scope=loaded.scope, n_rejected=loaded.n_rejected,
                           adjust=adjust, anchor=anchor, rating=rating)  # fmt: skip
    return with_ties(out, fit.x, fit.cov, None, None if ties == "half" else tie_family(ties),
                     rows, level=level, at=fit.x.size - 1, stacklevel=4)


def ratings_from_fit(fit: EffectsFit, plan: EffectPlan, data: Comparisons, *, model: str,
                     ci: str, level: float, scope: str | None, n_rejected: int,
                     adjust: tuple[str, ...], anchor: str | None = None,
                     rating: float = 1000.0) -> Ratings:  # fmt: skip
    """The strengths of a joint fit as :class:`Ratings` (``anchor`` at ``rating``, or centred
    there), with the judge effects (``judge_effects``) and, for Crowd-BT, the judges' eta."""
    df = float(data.n_clusters - 1) if (data.clusters is not None and ci == "sandwich") else None
    est = Estimate(theta=fit.estimate("s"), cov=fit.cov, nll=fit.nll, converged=fit.converged,
                   n_iter=fit.n_iter, max_grad=fit.max_grad, influence=fit.influence,
                   judges=None if model != "crowd-bt" else crowd_judges(fit, data, level, df))
    return labelled(est, data, model=model, ci=ci, level=level, scope=scope,
                    n_rejected=n_rejected, anchor=anchor, rating=rating, df=df,
                    judge_effects=JudgeEffects(effects_table(fit, plan, level=level, df=df),
                                               adjust))  # fmt: skip
