"""Ratings adjusted for judge effects: ``ratings.fit(..., adjust=...)``.

The strengths are fitted jointly with judge position bias and/or self-preference as nuisance
parameters (:mod:`ratings.models.judge_effects`; the fit is
:func:`ratings.api.covariates.fit_covariates`), so the ratings are those of judges without these
biases, and their sandwich intervals include the effects' uncertainty. This module reads and
checks the option.

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

from ratings.api.options import spelled
from ratings.core.errors import NonIdentifiableError, option
from ratings.data.slots import check_families_cover, read_families

__all__ = ["ADJUSTMENTS", "check_adjust_options", "identified_plan", "parse_adjust"]

#: Judge effects ``adjust=`` accepts.
ADJUSTMENTS = ("position", "self-preference")


def parse_adjust(adjust: str | Iterable[str] | None, name: str = "adjust", *,
                 required: bool = False) -> tuple[str, ...]:  # fmt: skip
    """``"position,self-preference"`` (or a list) -> ``("position", "self-preference")``, in
    :data:`ADJUSTMENTS` order; unknown effects (or none, when ``required``) are a ValueError
    naming option ``name`` (the audit's ``effects``)."""
    if adjust is None:
        adjust = ()
    items = str(adjust).split(",") if isinstance(adjust, str) else [str(a) for a in adjust]
    items = [a.strip() for a in items if a.strip()]
    bad = [a for a in items if a not in ADJUSTMENTS]
    if bad or (required and not items):
        raise ValueError(f"{option(name)} must name judge effects among {list(ADJUSTMENTS)} "
                         f"(comma-separated); got {bad or adjust!r}.")  # fmt: skip
    return tuple(a for a in ADJUSTMENTS if a in items)


def check_adjust_options(adjust: tuple[str, ...], families, *, ci: str, penalty: float,
                         firth: bool = False, style: tuple[str, ...] = ()) -> None:  # fmt: skip
    """Raise for options a fit with covariates (judge effects ``adjust``, style features
    ``style``) does not take, before any data is read: the bootstrap, a penalty or Firth's
    reduction, self-preference without families."""
    covariates = " and ".join(option(n) for n, on in (("style", style), ("adjust", adjust)) if on)
    if ci == "bootstrap":
        raise ValueError(f"{option('ci', ci)}: the bootstrap is not available with "
                         f"{covariates}; use 'sandwich', 'sandwich-z' or 'model'.")  # fmt: skip
    if penalty or firth:
        ridge = f" (a ridge on the style coefficients: {spelled('style_ridge')})" if style else ""
        raise ValueError(f"{option('penalty') if penalty else option('firth', True)} is not "
                         f"available with {covariates}{ridge}.")  # fmt: skip
    if "self-preference" in adjust and families is None:
        raise ValueError(_needs_families())


def _needs_families() -> str:
    return ("Adjusting for self-preference needs the judges' and models' families: pass "
            f"{option('families')} (a CSV with name,family).")


def identified_plan(slots, families, adjust: Sequence[str], data):
    """The plan of judge effects ``adjust`` (:func:`ratings.models.judge_effects.plan_effects`)
    with the families read (:func:`ratings.data.slots.read_families`), required for
    self-preference and covering every model and judge of ``data``; an error naming the
    requested effects that have no finite, identified estimate."""
    from ratings.models.judge_effects import plan_effects  # the fit's (flags are parsed without)

    fams = read_families(families)
    if "self-preference" in adjust and not fams:
        raise ValueError(_needs_families())
    check_families_cover(fams, [*data.models, *data.judges])
    plan = plan_effects(slots, fams, position="position" in adjust,
                        self_preference="self-preference" in adjust)  # fmt: skip
    blocked = plan.blocked()
    if blocked:
        raise NonIdentifiableError(
            "Cannot adjust for judge effects that have no finite, identified estimate: "
            + "; ".join(blocked[:5]) + ". Drop that adjustment or add verdicts."
        )
    return plan
