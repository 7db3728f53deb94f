"""The fit's options, each declared once: its name, the spec that holds it, its default, its
command-line flag, its help and the argparse shape of the flag.

What is generated from :data:`OPTIONS`: the flat keywords of earlier releases and the spec each
moved to (:data:`ratings.api.specs.LEGACY`), the flag each option's messages name on the command
line (:func:`flags`, :func:`switches`: :data:`ratings.cli.flags.FLAGS`) and the fit's flags
themselves (:func:`add_option`, used by :func:`ratings.cli.fitting.add_fit_options`), the
list of options with their defaults and constraints in :func:`ratings.fit`'s docstring
(:func:`document_options`) and the checks of numbers, switches and values (:func:`check_option`,
:func:`check_spec`), which the specs (:mod:`ratings.api.specs`) run once when they are made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ratings.core.bounds import MAX_PENALTY, check_number
from ratings.core.errors import option
from ratings.models.style import TRANSFORMS

__all__ = ["OPTIONS", "Option", "add_option", "check_option", "check_spec", "constraint",
           "document_options", "flags", "keywords", "legacy", "option_named", "spelled",
           "switches"]  # fmt: skip


@dataclass(frozen=True)
class Option:
    """One option of :func:`ratings.fit`.

    ``name`` is how the Python API and messages spell it; ``spec`` and ``field`` where it lives
    (``"fit"``: a keyword of :func:`ratings.fit` itself; else the spec class and its field);
    ``flag`` its command-line flag (None: Python only), declared with ``default``, ``kind``
    (argparse ``type``), ``metavar``, ``choices`` and ``help`` (``switch``: a flag without a
    value, ``store_true``). An option without a flag, or whose flag is declared with the shared
    inputs (``--columns``, ``--cluster``, ``--max-memory``), has ``declared_here=False``.
    ``flat``: :func:`ratings.fit` of earlier releases took it as a keyword of its own.
    ``bounds``: the keywords of :func:`ratings.core.bounds.check_number` that check a number
    (``minimum``, ``maximum``, ``above``, ``integer``); ``values``: the values accepted in
    Python (default ``choices``); ``rule``: the constraint in words, where neither says it;
    ``settings``: values the command line sets with a flag of their own (``{None:
    "--no-cluster"}``).
    """

    name: str
    spec: str
    field: str
    flag: str | None = None
    default: object = None
    help: str | None = None
    kind: type | None = None
    metavar: str | None = None
    choices: tuple | None = None
    switch: bool = False
    declared_here: bool = True
    flat: bool = True
    bounds: dict | None = None
    values: tuple | None = None
    rule: str | None = None
    settings: dict | None = None


OPTIONS: tuple[Option, ...] = (
    Option("scope", "fit", "scope", "--scope",
           help="fit only verdicts of this scope (required if several)"),
    Option("model", "fit", "model", "--model", choices=("bt", "crowd-bt"),
           rule="'bt' (the default), 'crowd-bt', ratings.BT(...) or ratings.CrowdBT(...)",
           help="Bradley-Terry (default for one scope), or Crowd-BT with one quality eta per "
                "judge (default for judged scopes with --by scope / combine)"),
    Option("anchor", "fit", "anchor", "--anchor", metavar="NAME=RATING",
           rule="a model of the verdicts: NAME, NAME=RATING or (NAME, RATING)",
           help="pin one model at a rating, e.g. 'GPT-5.5 (medium)=1000'; default: centred at "
                "mean 1000"),
    Option("ci", "fit", "ci", "--ci", "sandwich",
           choices=("sandwich", "sandwich-z", "model", "bootstrap"),
           values=("sandwich", "sandwich-z", "cr1", "hc0", "model", "bootstrap"),
           help="sandwich (default; clustered: CR2 with df per contrast), sandwich-z (CR1, "
                "normal quantile), model (inverse Hessian) or bootstrap"),
    Option("level", "fit", "level", "--level", 0.95, kind=float, metavar="LEVEL",
           rule="strictly between 0 and 1",
           help="confidence level (default 0.95)"),
    Option("n_boot", "Bootstrap", "n", "--n-boot", 1000, kind=int, metavar="N",
           bounds={"minimum": 2, "maximum": 10_000_000, "integer": True},
           help="bootstrap resamples (default 1000)"),
    Option("seed", "Bootstrap", "seed", "--seed", 0, kind=int, metavar="SEED",
           bounds={"minimum": 0, "integer": True},
           help="bootstrap seed (default 0)"),
    Option("penalty", "BT", "penalty", "--penalty", 0.0, kind=float, metavar="LAMBDA",
           bounds={"minimum": 0.0, "maximum": MAX_PENALTY},
           help="bt: opt-in ridge penalty making ratings finite when a model never lost"),
    Option("firth", "BT", "firth", "--firth", False, switch=True, values=(False, True),
           help="bt: Firth's bias-reduced estimate, finite on every board (a model that never "
                "lost: open interval)"),
    Option("ties", "BT", "ties", "--ties", "half", choices=("half", "davidson", "rao-kupper"),
           flat=False,
           help="bt: a tie as half a win each (default), or a tie model with its tie parameter "
                "estimated with an interval: davidson (nu) or rao-kupper (theta)"),
    Option("soft", "BT", "soft", "--soft", False, switch=True, flat=False,
           help="bt: read winner as A's score in [0, 1] (fractional values allowed; 1, 0, 0.5 "
                "as A, B, tie), a quasi-likelihood fit"),
    Option("judge_quality", "CrowdBT", "judge_quality", "--judge-quality",
           metavar="FILE|SCOPE=FILE,...",
           help="fix eta from a file written by `ratings judges` (per scope: "
                "'analytical=a.json,presentation=p.json')"),
    Option("fit_new_judges", "CrowdBT", "fit_new_judges", "--fit-new-judges", False,
           switch=True, values=(False, True),
           help="estimate eta for judges missing from --judge-quality"),
    Option("eta_known", "CrowdBT", "eta_known", "--eta-known", False, switch=True,
           values=(False, True),
           help="treat --judge-quality etas as known (leave their uncertainty out of the "
                "intervals)"),
    Option("prior", "CrowdBT", "prior", "--prior", "default", metavar="PRIOR",
           rule="'default', 'none', a CrowdPrior or (agree, flip, sd) with agree, flip >= 0 "
                "and sd > 0",
           help="'default', 'none' or 'AGREE,FLIP,SD': weak priors on judge quality (Beta "
                "pseudo-counts) and strengths (sd, log units); 'none' fits the plain maximum "
                "likelihood"),
    Option("adjust", "fit", "adjust", "--adjust", metavar="EFFECT,...",
           help="position and/or self-preference: estimate these judge effects as nuisance "
                "parameters, so ratings are corrected for them (self-preference needs "
                "--families)"),
    Option("families", "Adjust", "families", "--families", metavar="FILE",
           help="CSV with columns name,family for models and judges"),
    Option("style", "fit", "style", "--style", metavar="NAME,...",
           help="style control: fit one shared coefficient per feature from the columns NAME_a "
                "and NAME_b (e.g. tokens,headers); ratings are those of answers of equal style"),
    Option("style_transform", "Style", "transform", "--style-transform", "normalized",
           choices=TRANSFORMS, flat=False,
           help="how a feature's two sides become one number (default normalized: (a - b) / "
                "(a + b))"),
    Option("style_ridge", "Style", "ridge", "--style-ridge", 0.0, kind=float, metavar="LAMBDA",
           bounds={"minimum": 0.0},
           flat=False, help="optional ridge on the style coefficients only (default 0)"),
    Option("cluster", "fit", "cluster", "--cluster", "auto", declared_here=False,
           settings={None: "--no-cluster"}),
    Option("columns", "Read", "columns", "--columns", declared_here=False),
    Option("winner_map", "Read", "winner_map", "--winner-map", declared_here=False),
    Option("errors", "Read", "errors", "--rejected", "raise", declared_here=False,
           values=("raise", "report"), settings={"report": "--rejected FILE"}),
    Option("max_memory", "Solver", "max_memory", "--max-memory", declared_here=False,
           rule="bytes or a size such as '8GB'; default half the memory available"),
    Option("engine", "Solver", "engine", default="auto", declared_here=False,
           values=("auto", "numba", "numpy")),
    Option("tol", "Solver", "tol", default=1e-10, declared_here=False,
           bounds={"above": 0.0, "maximum": 1.0}),
    Option("max_iter", "Solver", "max_iter", default=100, declared_here=False,
           bounds={"minimum": 1, "integer": True}),
)  # fmt: skip


def option_named(name: str) -> Option:
    """The option called ``name``."""
    for opt in OPTIONS:
        if opt.name == name:
            return opt
    raise KeyError(name)


def legacy() -> dict[str, tuple[str, str]]:
    """Flat keywords of earlier releases -> (the spec that holds them, its field): every option
    that lives in a spec."""
    return {o.name: (o.spec, o.field) for o in OPTIONS if o.spec != "fit" and o.flat}


def flags() -> dict[str, str]:
    """Option name -> the command-line flag that sets it."""
    return {o.name: o.flag for o in OPTIONS if o.flag is not None}


def switches() -> dict[tuple[str, object], str]:
    """(name, value) -> the flag without a value that sets it (``("firth", True)``,
    ``("cluster", None)``)."""
    out = {(o.name, True): o.flag for o in OPTIONS if o.switch and o.flag is not None}
    return out | {(o.name, v): f for o in OPTIONS for v, f in (o.settings or {}).items()}


def add_option(group: Any, name: str, *, default: object = ...,
               help_extra: str = "") -> None:  # fmt: skip
    """Add option ``name``'s flag to ``group`` as the table declares it (``default`` replaces
    the declared default; ``help_extra`` is appended to the help)."""
    o = option_named(name)
    kw: dict[str, object] = {"help": (o.help or "") + help_extra}
    if o.switch:
        kw["action"] = "store_true"
    else:
        kw |= {k: v for k, v in (("type", o.kind), ("metavar", o.metavar)) if v is not None}
        if o.choices is not None:
            kw["choices"] = list(o.choices)
        chosen = o.default if default is ... else default
        if chosen is not None:
            kw["default"] = chosen
    group.add_argument(o.flag, **kw)


def constraint(o: Option) -> str | None:
    """What option ``o`` accepts, in words: its ``rule``, its bounds or its values."""
    if o.rule is not None:
        return o.rule
    if o.bounds is not None:
        b = o.bounds
        parts = [f"{sign} {b[k]:g}" for k, sign in (("minimum", ">="), ("above", ">"),
                                                     ("maximum", "<=")) if k in b]
        return ("an integer " if b.get("integer") else "a number ") + " and ".join(parts)
    values = o.values if o.values is not None else o.choices
    if values is not None:
        return "one of " + ", ".join(repr(v) for v in values)
    return None


def check_option(name: str, value: object) -> object:
    """``value`` checked as option ``name`` is declared in :data:`OPTIONS` (a ValueError naming
    the option, the value and what it accepts): a number against its bounds (returned as a
    float, or an int), a switch's True or False (as a bool), anything else against its values."""
    o = option_named(name)
    if o.bounds is not None:
        try:
            number = check_number(value, name, **o.bounds)
        except ValueError as error:  # named as the user sets it
            raise ValueError(str(error).replace(option(name), spelled(name), 1)) from None
        return int(number) if o.bounds.get("integer") else number
    if o.switch or o.values == (False, True):
        if not isinstance(value, bool | np.bool_):
            raise ValueError(f"{spelled(name)} must be True or False; got {value!r}.")
        return bool(value)
    if (o.values or o.choices) is not None and value not in (o.values or o.choices):
        raise ValueError(f"{spelled(name)} must be {constraint(o)}; got {value!r}.")
    return value


def spelled(name: str) -> str:
    """Option ``name`` in messages as the user sets it: its flag on the command line; in
    Python its keyword, or the spec field of an option that never was a keyword of its own
    (``Style(ridge=)`` for ``style_ridge``)."""
    o, text = option_named(name), option(name)
    if text == f"`{name}`" and not o.flat and o.field != o.name:
        return f"`{o.spec}({o.field}=)`"
    return text


def check_spec(spec: object) -> None:
    """Check each field of ``spec`` the table declares with bounds, values or as a switch
    (:func:`check_option`), keeping the checked value: what a spec runs when it is made."""
    for o in OPTIONS:
        if o.spec == type(spec).__name__ and (o.bounds or o.values or o.choices or o.switch):
            object.__setattr__(spec, o.field, check_option(o.name, getattr(spec, o.field)))


def option_line(o: Option) -> str:
    """One option as :func:`ratings.fit`'s docstring lists it: where it lives, its flag, its
    default and its constraint."""
    where = f"``{o.name}=``" if o.spec == "fit" else f"``ratings.{o.spec}({o.field}=)``"
    flag = f", ``{o.flag}``" if o.flag is not None else ""
    rule = constraint(o)
    parts = [f"default ``{o.default!r}``" if o.default is not None else "optional", rule]
    flat = f" Earlier releases: ``{o.name}=``." if o.flat and o.spec != "fit" else ""
    return f"- {where}{flag}: " + "; ".join(p for p in parts if p is not None) + "." + flat


def keywords() -> str:
    """:func:`ratings.fit`'s options as its messages list them: its own keywords, then the
    specs that hold the others."""
    own = [o.name for o in OPTIONS if o.spec == "fit"] + ["read", "solver"]
    specs = dict.fromkeys(f"ratings.{o.spec}" for o in OPTIONS if o.spec != "fit")
    return ", ".join(f"{name}=" for name in own) + f" (see {', '.join(specs)})"


def document_options(doc: str | None, indent: str = "    ") -> str | None:
    """``doc`` with the list of every option of :data:`OPTIONS` (default and constraint) at the
    end of its Notes section (before Examples)."""
    if doc is None:  # python -OO
        return None
    head = f"{indent}Examples\n{indent}--------\n"
    block = "".join(f"{indent}{option_line(o)}\n" for o in OPTIONS)
    text = (f"{indent}Every option, where it lives, its flag, its default and what it accepts "
            f"(:data:`ratings.api.options.OPTIONS`):\n\n{block}\n")
    at = doc.find(head)
    return doc + "\n" + text if at < 0 else doc[:at] + text + doc[at:]
