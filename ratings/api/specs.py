"""Typed options of :func:`ratings.fit`: the model, the interval, reading and the solver.

Each spec (:func:`ratings.api.options.spec`) checks its own values when it is made
(``ratings.BT(penalty=-1)`` raises at once), so a fit's options are checked in one place,
before any data is read. Strings stay as shortcuts: ``model="crowd-bt"`` is
``model=ratings.CrowdBT()``, ``ci="bootstrap"`` is ``ci=ratings.Bootstrap()``.

>>> import ratings
>>> ratings.CrowdBT(prior="none", judge_quality="judges.json")  # doctest: +ELLIPSIS
CrowdBT(prior=None, judge_quality='judges.json', eta_known=False, fit_new_judges=False)
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ratings.api.options import check_option, fit_keywords, keywords, legacy, option_named, spec
from ratings.core.bounds import MAX_ANCHOR_RATING, check_level, check_number
from ratings.core.errors import option
from ratings.core.memory import MaxMemory, parse_size
from ratings.data.slots import Families
from ratings.io.formats import peer_format
from ratings.kernels.engine import Engine
from ratings.models.crowd.prior import PriorArg, check_prior
from ratings.models.crowd.quality import JudgeQuality

__all__ = [
    "BT",
    "CI_KINDS",
    "LEGACY",
    "TIE_KINDS",
    "Adjust",
    "Bootstrap",
    "CIKind",
    "CrowdBT",
    "FitOptions",
    "Read",
    "Solver",
    "Style",
    "legacy_specs",
    "model_spec",
    "options_of",
    "parse_anchor",
]

#: Interval kinds by name; ``"cr1"`` is ``"sandwich-z"`` and ``"hc0"`` the sandwich per verdict.
CI_KINDS: tuple[str, ...] = option_named("ci").values
CIKind = Literal["sandwich", "sandwich-z", "cr1", "hc0", "model", "bootstrap"]
#: How ties enter a Bradley-Terry fit (:class:`BT`'s ``ties``).
TIE_KINDS: tuple[str, ...] = option_named("ties").choices


@spec
class BT:
    """Bradley-Terry (ties as half wins by default)."""

    penalty: float = 0.0
    firth: bool = False
    ties: Literal["half", "davidson", "rao-kupper"] = "half"
    soft: bool = False
    name = "bt"

    def __post_init__(self) -> None:  # after the table's checks (penalty, firth, ties, soft)
        if self.firth and self.penalty:
            raise ValueError(f"{option('firth', True)} and {option('penalty')} are two "
                             "penalties on the same likelihood; use one of them.")  # fmt: skip
        if self.ties != "half" and (self.penalty or self.firth or self.soft):
            other = "soft" if self.soft else "firth" if self.firth else "penalty"
            why = ("soft outcomes are graded scores, which the tie models do not read (they "
                   "need winner A, B or tie)" if self.soft else
                   "the penalty and Firth's bias reduction are fits of ties as half wins")
            raise ValueError(f"{option('ties', self.ties)} cannot be combined with "
                             f"{option(other)}: {why}. Fit {option('ties', 'half')} with "
                             f"{option(other)}, or the tie model without it.")  # fmt: skip


@spec
class CrowdBT:
    """Crowd-BT: one quality eta per judge (Chen et al. 2013)."""

    prior: PriorArg = "default"
    judge_quality: JudgeQuality = None
    eta_known: bool = False
    fit_new_judges: bool = False
    name = "crowd-bt"

    def __post_init__(self) -> None:
        object.__setattr__(self, "prior", check_prior(self.prior))


@spec
class Bootstrap:
    """Percentile intervals from a seeded bootstrap (of clusters when the fit is clustered)."""

    n: int = 1000
    seed: int = 0


@spec
class Read:
    """How a verdict file or frame is read."""

    columns: Mapping[str, str] | None = None
    winner_map: Mapping[object, str] | None = None
    errors: Literal["raise", "report"] = "raise"
    format: object = None

    def __post_init__(self) -> None:
        peer_format(self.format)  # an unknown format fails here


@spec
class Solver:
    """How the fit is computed."""

    engine: Engine = "auto"
    tol: float = 1e-10
    max_iter: int = 100
    max_memory: MaxMemory = None

    def __post_init__(self) -> None:
        parse_size(self.max_memory)


def parse_anchor(text: str) -> tuple[str, float]:
    """Parse ``"NAME=RATING"`` (the last ``=`` separates; the name may contain ``=``)."""
    name, sep, value = str(text).rpartition("=")
    try:
        rating = float(value)
    except ValueError:
        rating = float("nan")
    if not sep or not name.strip() or not np.isfinite(rating):
        raise ValueError(f"{option('anchor')} must look like 'NAME=RATING', e.g. 'GPT-5.5 "
                         f"(medium)=1000'; got {text!r}.")  # fmt: skip
    return name.strip(), check_number(rating, "anchor", minimum=-MAX_ANCHOR_RATING,
                                      maximum=MAX_ANCHOR_RATING)  # fmt: skip


@spec
class Adjust:
    """Judge effects estimated as nuisance parameters, so the ratings are corrected for them."""

    effects: str | Sequence[str]
    families: Families = None

    def __post_init__(self) -> None:
        from ratings.api.adjust import parse_adjust

        object.__setattr__(self, "effects", parse_adjust(self.effects))


@spec
class Style:
    """Style control: per-side answer features entering the linear predictor."""

    features: str | Sequence[str]
    transform: str = "normalized"
    ridge: float = 0.0

    def __post_init__(self) -> None:
        from ratings.models.style import parse_style

        features = parse_style(self.features)
        if not features:
            raise ValueError(f"{option('style')} names no feature.")
        object.__setattr__(self, "features", features)


@dataclass(frozen=True)
class FitOptions:
    """Every option of one fit, checked: what :func:`ratings.fit` resolves its arguments to."""

    model: BT | CrowdBT
    ci: Literal["sandwich", "sandwich-z", "model", "bootstrap"]
    bootstrap: Bootstrap
    anchor: str | None
    rating: float
    scope: str | None
    cluster: str | None
    level: float
    read: Read
    adjust: tuple[str, ...]
    families: Families
    solver: Solver
    style: Style | None = None

    @property
    def bt(self) -> BT:
        """The Bradley-Terry options (their defaults for Crowd-BT)."""
        return self.model if isinstance(self.model, BT) else BT()

    @property
    def crowd(self) -> CrowdBT:
        """The Crowd-BT options (their defaults for Bradley-Terry)."""
        return self.model if isinstance(self.model, CrowdBT) else CrowdBT()


#: Flat keywords of earlier releases -> (the spec that holds them, its field), from the
#: option table (:mod:`ratings.api.options`).
LEGACY = legacy()


def _spec_of(spec: object, cls: type, given: Mapping[str, object], argument: str, *args: object):
    """``spec`` when it is a ``cls``, else a ``cls`` made with ``args`` and ``given`` (flat
    keywords of its fields); a spec beside flat keywords is a ``TypeError`` naming
    ``argument``."""
    if not isinstance(spec, cls):
        return cls(*args, **given)
    if given:
        raise TypeError(f"pass {sorted(given)} inside `{argument}=ratings.{cls.__name__}(...)`, "
                        "not beside it.")  # fmt: skip
    return spec


def model_spec(model: object, given: Mapping[str, object]) -> BT | CrowdBT:
    """``model`` (``"bt"``, ``"crowd-bt"`` or a spec) as its spec, made with ``given`` (flat
    keywords of its fields); a spec beside flat keywords is a ``TypeError``."""
    if isinstance(model, BT | CrowdBT):
        return _spec_of(model, type(model), given, "model")
    check_option("model", model)  # 'bt' or 'crowd-bt', as the option table says
    spec = BT if model == "bt" else CrowdBT
    wrong = sorted(set(given) - set(spec.__dataclass_fields__))
    if wrong:
        names = ", ".join(option(LEGACY_NAME.get(w, w)) for w in wrong)
        raise ValueError(f"{names} {'is' if len(wrong) == 1 else 'are'} only available with "
                         f"{option('model', 'crowd-bt' if model == 'bt' else 'bt')}.")
    return spec(**given)


#: Spec field -> the flat keyword of earlier releases (for messages).
LEGACY_NAME = {fld: key for key, (_, fld) in LEGACY.items() if fld != key}




def legacy_specs(
    legacy: Mapping[str, object],
    *,
    names: Mapping[str, tuple[str, str]],
    where: str,
    options: str,
    warn: bool = True,
    moved: Mapping[str, str] | None = None,
    stacklevel: int = 3,
) -> dict[str, dict[str, object]]:
    """Flat keywords of earlier releases grouped by the spec that now holds them.

    ``names`` maps each accepted keyword to (spec, field) (:data:`LEGACY` or a part of it);
    ``moved`` names keywords handled by the caller, with where they went. Any other keyword is
    a ``TypeError`` naming ``where``'s ``options``; the accepted ones raise one
    :class:`DeprecationWarning` naming their specs when ``warn``.
    """
    moved = dict(moved or {})
    unknown = sorted(set(legacy) - set(names) - set(moved))
    if unknown:
        raise TypeError(f"{where}() got unexpected keyword argument(s) {unknown}; the options "
                        f"are {options}.")  # fmt: skip
    if warn and legacy:
        text = ", ".join(f"{k}= -> ratings.{names[k][0]}({names[k][1]}=)" if k in names
                         else f"{k}= -> {moved[k]}" for k in sorted(legacy))  # fmt: skip
        warnings.warn(f"flat {where}() keywords are deprecated: {text}.", DeprecationWarning,
                      stacklevel=stacklevel)  # fmt: skip
    by_spec: dict[str, dict[str, object]] = {}
    for key, value in legacy.items():
        if key in names:
            spec, fld = names[key]
            by_spec.setdefault(spec, {})[fld] = value
    return by_spec


def options_of(*, legacy: Mapping[str, object] | None = None, warn: bool = True,
               **given: object) -> FitOptions:
    """Check and resolve :func:`ratings.fit`'s keywords ``given`` (the others at their defaults,
    :func:`ratings.api.options.fit_keywords`) into :class:`FitOptions`.

    ``legacy`` holds flat keywords of earlier releases (``penalty=``, ``prior=``, ``n_boot=``,
    ...): each goes to its spec, with a :class:`DeprecationWarning` when ``warn``. Any other
    keyword is a ``TypeError`` naming it.
    """
    from ratings.api.adjust import check_adjust_options

    defaults = fit_keywords()
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        raise TypeError(f"options_of() got unexpected keyword argument(s) {unknown}.")
    model, ci, anchor, scope, cluster, level, read, adjust, solver, style = (
        given.get(k, defaults[k]) for k in ("model", "ci", "anchor", "scope", "cluster", "level",
                                            "read", "adjust", "solver", "style"))
    legacy = dict(legacy or {})
    by_spec = legacy_specs(legacy, names=LEGACY, where="fit", options=keywords(), warn=warn,
                           moved={"anchor_rating": "anchor=(NAME, RATING)"}, stacklevel=4)
    # each spec given as one, or made from its flat keywords
    boot = _spec_of(ci, Bootstrap, by_spec.get("Bootstrap", {}), "ci")
    ci = "bootstrap" if isinstance(ci, Bootstrap) else ci
    read = _spec_of(read, Read, by_spec.get("Read", {}), "read")
    solver = _spec_of(solver, Solver, by_spec.get("Solver", {}), "solver")
    adjust = _spec_of(adjust, Adjust, by_spec.get("Adjust", {}), "adjust", adjust or ())
    spec_model = model_spec(model, {**by_spec.get("BT", {}), **by_spec.get("CrowdBT", {})})
    if ci not in CI_KINDS:
        raise ValueError(f"{option('ci')} must be one of {list(CI_KINDS)} or "
                         f"ratings.Bootstrap(...); got {ci!r}.")  # fmt: skip
    if ci == "cr1":
        ci = "sandwich-z"
    if ci == "hc0":
        if cluster not in ("auto", None):
            raise ValueError(f"{option('ci', 'hc0')} is the sandwich per verdict; it does not "
                             f"go with {option('cluster', cluster)}.")  # fmt: skip
        ci, cluster = "sandwich", None
    check_level(level)
    rating = legacy.get("anchor_rating")
    if isinstance(anchor, Mapping):  # {"NAME": RATING}, the command line's NAME=RATING
        if len(anchor) != 1:
            raise ValueError(f"{option('anchor')} pins one model: give {{NAME: RATING}} with "
                             f"one entry (or 'NAME=RATING'); got {dict(anchor)!r}.")  # fmt: skip
        ((anchor, rating),) = anchor.items()
    if isinstance(anchor, tuple):
        anchor, rating = anchor
    elif anchor is not None and rating is None and "=" in str(anchor):
        anchor, rating = parse_anchor(anchor)
    rating = 1000.0 if rating is None else check_number(
        rating, "anchor_rating", minimum=-MAX_ANCHOR_RATING, maximum=MAX_ANCHOR_RATING)
    style = style if isinstance(style, Style) or not style else Style(style)
    if adjust.effects or style:  # a fit with covariates
        check_adjust_options(adjust.effects, adjust.families, ci=ci,
                             penalty=getattr(spec_model, "penalty", 0.0),
                             firth=getattr(spec_model, "firth", False),
                             style=style.features if style else ())  # fmt: skip
    return FitOptions(model=spec_model, ci=ci, bootstrap=boot, anchor=anchor,
                      rating=float(rating), scope=scope, cluster=cluster, level=float(level),
                      read=read, adjust=adjust.effects, families=adjust.families, solver=solver,
                      style=style or None)  # fmt: skip
