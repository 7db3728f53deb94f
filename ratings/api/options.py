"""The fit's options, each declared once: its name, the spec that holds it, its default, its
command-line flag, its help and the argparse shape of the flag, its Python type and description.
A spec option's default is declared by its field in the spec class (:data:`SPECS`), a keyword
of :func:`ratings.fit`'s here.

What is generated from :data:`OPTIONS`: the flat keywords of earlier releases and the spec each
moved to (:data:`ratings.api.specs.LEGACY`), the flag each option's messages name on the command
line (:func:`flags`, :func:`switches`: :data:`ratings.cli.flags.FLAGS`) and the fit's flags
themselves (:func:`add_option`, used by :func:`ratings.cli.fitting.add_fit_options`), the
numpydoc *Parameters* sections of :func:`ratings.fit` (:func:`document_fit`) and of every spec
(:func:`spec`, both by :func:`parameters`), the list of options with their defaults and
constraints in :func:`ratings.fit`'s Notes (:func:`document_fit`), the keywords and
defaults :func:`ratings.api.specs.options_of` resolves (:func:`fit_keywords`) and the checks of
numbers, switches and values (:func:`check_option`), which the specs
(:mod:`ratings.api.specs`, :func:`spec`) run once when they are made.
"""

from __future__ import annotations

import sys
import textwrap
from dataclasses import dataclass
from typing import Any, TypeVar, dataclass_transform

import numpy as np

from ratings.core.bounds import MAX_PENALTY, check_number
from ratings.core.errors import option
from ratings.models.families.ties import TIE_FAMILIES
from ratings.models.style import TRANSFORMS

__all__ = ["OPTIONS", "SPECS", "Option", "add_option", "check_option", "constraint", "document_fit",
           "fit_keywords", "flags", "keywords", "legacy", "option_named", "parameters", "spec",
           "spelled", "switches"]  # fmt: skip


@dataclass(frozen=True)
class Option:
    """One option of :func:`ratings.fit`.

    ``name`` is how the Python API and messages spell it; ``spec`` and ``field`` where it lives
    (``"fit"``: a keyword of :func:`ratings.fit` itself; else the spec class and its field);
    ``flag`` its command-line flag (None: Python only), declared with :attr:`default`
    (``cli_default`` where the command line's differs), ``kind`` (argparse ``type``),
    ``metavar``, ``choices`` and ``help`` (``switch``: a flag without a value, ``store_true``;
    the option's values are then False and True, its type ``bool``).
    An option without a flag, or whose flag is declared with the shared inputs (``--columns``,
    ``--cluster``, ``--max-memory``), has ``declared_here=False``. ``types`` and ``doc``: its
    type and description in the numpydoc *Parameters* section of the docstring that documents
    it (:func:`ratings.fit`'s or its spec's, :func:`document`); ``lead``: for a keyword of
    :func:`ratings.fit` whose value is a spec's first field (``adjust``, ``style``), that
    spec, field, type and description.
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
    fit_default: object = None
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
    types: str = ""
    doc: str = ""
    lead: tuple[str, str, str, str] | None = None
    cli_default: object = ...

    @property
    def default(self) -> object:
        """The option's default: a keyword of :func:`ratings.fit`'s as the table declares it
        (``fit_default``), a spec field's as its spec class declares it (:func:`spec`)."""
        if self.spec == "fit":
            return self.fit_default
        if self.spec not in SPECS:
            raise LookupError(f"The spec class {self.spec} is not registered yet: it is when "
                              "`ratings.api.specs` is imported (`ratings.fit` imports it).")
        return SPECS[self.spec].__dataclass_fields__[self.field].default

    @property
    def accepted(self) -> tuple | None:
        """The values accepted in Python: a switch's False and True, else ``values`` (default
        ``choices``); None for any other option."""
        if self.switch:
            return False, True
        return self.values if self.values is not None else self.choices


OPTIONS: tuple[Option, ...] = (
    Option("scope", "fit", "scope", "--scope",
           help="fit only verdicts of this scope (required if several)",
           types="str", doc="Fit only verdicts of this scope; required when the log holds "
                            "several."),
    Option("model", "fit", "model", "--model", "bt", choices=("bt", "crowd-bt"),
           cli_default=None,
           rule="'bt' (the default), 'crowd-bt', ratings.BT(...) or ratings.CrowdBT(...)",
           help="Bradley-Terry (default for one scope), or Crowd-BT with one quality eta per "
                "judge (default for judged scopes with --by scope / combine)",
           types='"bt", "crowd-bt", ratings.BT or ratings.CrowdBT',
           doc="Bradley-Terry (:class:`~ratings.api.specs.BT`: ``penalty``, ``firth``, "
               "``ties``, ``soft``), or Crowd-BT with one quality eta in [1/2, 1] per judge "
               "(:class:`~ratings.api.specs.CrowdBT`: ``prior``, ``judge_quality``, "
               "``eta_known``, ``fit_new_judges``; see :mod:`ratings.models.crowd.likelihood`); "
               "judge ``\"deterministic\"`` always has eta = 1. The strings are the specs with "
               "their defaults."),
    Option("anchor", "fit", "anchor", "--anchor", metavar="NAME=RATING",
           rule="a model of the verdicts: NAME, NAME=RATING or (NAME, RATING)",
           help="pin one model at a rating, e.g. 'GPT-5.5 (medium)=1000'; default: centred at "
                "mean 1000",
           types="str, (str, float) or {str: float}",
           doc="Model pinned at a rating: ``\"NAME=RATING\"``, ``(NAME, RATING)``, "
               "``{NAME: RATING}`` or ``NAME`` (at 1000). Its interval has zero width and every "
               "other interval is that of the difference to it. Without an anchor the ratings "
               "are centred at a mean of 1000."),
    Option("ci", "fit", "ci", "--ci", "sandwich",
           choices=("sandwich", "sandwich-z", "model", "bootstrap"),
           values=("sandwich", "sandwich-z", "cr1", "hc0", "model", "bootstrap"),
           help="sandwich (default; clustered: CR2 with df per contrast), sandwich-z (CR1, "
                "normal quantile), model (inverse Hessian) or bootstrap",
           types="str or ratings.Bootstrap",
           doc="Robust sandwich H^-1 B H^-1 (default); clustered, the bias-reduced CR2 "
               "sandwich with a Student t quantile whose Satterthwaite degrees of freedom "
               "belong to each contrast (the ``df`` column; :mod:`ratings.inference`), for "
               "Bradley-Terry and Crowd-BT alike (Crowd-BT: ``docs/crowd.md``); per verdict, "
               "HC0 with a normal quantile. ``\"hc0\"`` is the sandwich per verdict "
               "(``cluster=None``). ``\"sandwich-z\"`` (or ``\"cr1\"``) is the textbook "
               "cluster sandwich (CR1, factor G/(G-1)) with a normal quantile. ``\"model\"``: "
               "model-based H^-1, which under-covers when verdicts on a task are dependent; "
               "``\"bootstrap\"`` or :class:`~ratings.api.specs.Bootstrap` (``n``, ``seed``): "
               "a seeded cluster (or verdict) bootstrap, percentile intervals."),
    Option("level", "fit", "level", "--level", 0.95, kind=float, metavar="LEVEL",
           rule="strictly between 0 and 1",
           help="confidence level (default 0.95)",
           types="float", doc="Confidence level of the reported intervals."),
    Option("n_boot", "Bootstrap", "n", "--n-boot", kind=int, metavar="N",
           bounds={"minimum": 2, "maximum": 10_000_000, "integer": True},
           help="bootstrap resamples (default 1000)",
           types="int", doc="Resamples."),
    Option("seed", "Bootstrap", "seed", "--seed", kind=int, metavar="SEED",
           bounds={"minimum": 0, "integer": True},
           help="bootstrap seed (default 0)",
           types="int", doc="Seed of the resampling."),
    Option("penalty", "BT", "penalty", "--penalty", kind=float, metavar="LAMBDA",
           bounds={"minimum": 0.0, "maximum": MAX_PENALTY},
           help="bt: opt-in ridge penalty making ratings finite when a model never lost",
           types="float", doc="Opt-in ridge penalty that makes ratings finite when a model "
                              "never lost."),
    Option("firth", "BT", "firth", "--firth", switch=True,
           help="bt: Firth's bias-reduced estimate, finite on every board (a model that never "
                "lost: open interval)",
           doc="Firth's bias-reduced estimate, finite on every board (a model that never lost "
               "has an open interval)."),
    Option("ties", "BT", "ties", "--ties", choices=("half", *TIE_FAMILIES),
           flat=False,
           help="bt: a tie as half a win each (default), or a tie model with its tie parameter "
                "estimated with an interval: davidson (nu) or rao-kupper (theta)",
           doc="How a tie enters the likelihood: half a win each (``\"half\"``), or a tie "
               "model with a tie parameter estimated with its interval (``Ratings.ties``): "
               "Davidson (1970) or Rao & Kupper (1967); see :mod:`ratings.models.ties`."),
    Option("soft", "BT", "soft", "--soft", switch=True, flat=False,
           help="bt: read winner as A's score in [0, 1] (fractional values allowed; 1, 0, 0.5 "
                "as A, B, tie), a quasi-likelihood fit",
           doc="Read ``winner`` as A's score in [0, 1] (fractional values allowed; 1, 0 and "
               "1/2 as A, B and a tie) and fit the Bernoulli quasi-likelihood (see "
               ":mod:`ratings.data.soft`)."),
    Option("judge_quality", "CrowdBT", "judge_quality", "--judge-quality",
           metavar="FILE|SCOPE=FILE,...",
           help="fix eta from a file written by `ratings judges` (per scope: "
                "'analytical=a.json,presentation=p.json')",
           types="path, DataFrame or mapping",
           doc="Fix eta from a judge-quality file, a judges table or ``{judge: eta}``."),
    Option("fit_new_judges", "CrowdBT", "fit_new_judges", "--fit-new-judges", switch=True,
           help="estimate eta for judges missing from --judge-quality",
           doc="Estimate eta for judges missing from ``judge_quality``."),
    Option("eta_known", "CrowdBT", "eta_known", "--eta-known", switch=True,
           help="treat --judge-quality etas as known (leave their uncertainty out of the "
                "intervals)",
           doc="Treat ``judge_quality``'s etas as known (leave their uncertainty out of the "
               "intervals)."),
    Option("prior", "CrowdBT", "prior", "--prior", metavar="PRIOR",
           rule="'default', 'none', a CrowdPrior or (agree, flip, sd) with agree, flip >= 0 "
                "and sd > 0",
           help="'default', 'none' or 'AGREE,FLIP,SD': weak priors on judge quality (Beta "
                "pseudo-counts) and strengths (sd, log units); 'none' fits the plain maximum "
                "likelihood",
           types='"default", "none", CrowdPrior or (agree, flip, sd)',
           doc="Weak priors on judge quality (Beta pseudo-counts) and strengths (sd, log "
               "units); ``\"none\"`` fits the plain maximum likelihood "
               "(:mod:`ratings.models.crowd.prior`)."),
    Option("adjust", "fit", "adjust", "--adjust", metavar="EFFECT,...",
           help="position and/or self-preference: estimate these judge effects as nuisance "
                "parameters, so ratings are corrected for them (self-preference needs "
                "--families)",
           types="str, list of str or ratings.Adjust",
           doc="Judge effects to estimate as nuisance parameters (:class:`~ratings.api.specs."
               "Adjust`): ratings are then corrected for them and intervals include their "
               "uncertainty. Not with the bootstrap or a penalty. See :mod:`ratings.api.adjust` "
               "for when adjusting is appropriate and :func:`ratings.audit` for the report.",
           lead=("Adjust", "effects", "str or sequence of str",
                 "``\"position\"`` (each judge's bias towards slot A) and/or "
                 "``\"self-preference\"`` (towards models of its own family; needs "
                 "``families``), comma-separated or a list.")),
    Option("families", "Adjust", "families", "--families", metavar="FILE",
           help="CSV with columns name,family for models and judges",
           types="path, DataFrame or mapping",
           doc="Model and judge families (a CSV with columns ``name,family``); "
               "self-preference needs them."),
    Option("style", "fit", "style", "--style", metavar="NAME,...",
           help="style control: fit one shared coefficient per feature from the columns NAME_a "
                "and NAME_b (e.g. tokens,headers); ratings are those of answers of equal style",
           types="list of str or ratings.Style",
           doc="Style control (:class:`~ratings.api.specs.Style`). Each feature enters the "
               "linear predictor with one shared coefficient; the ratings are then those of "
               "answers of equal style, with intervals joint with the coefficients "
               "(``Ratings.style``; ``rank_change`` in :meth:`~ratings.result.Ratings."
               "to_frame`). See :mod:`ratings.models.style`.",
           lead=("Style", "features", "str or sequence of str",
                 "Feature names (e.g. ``[\"tokens\", \"headers\"]`` or "
                 "``\"tokens,headers\"``) whose per-side columns ``NAME_a`` and ``NAME_b`` the "
                 "verdict log carries.")),
    Option("style_transform", "Style", "transform", "--style-transform", choices=TRANSFORMS,
           flat=False,
           help="how a feature's two sides become one number (default normalized: (a - b) / "
                "(a + b))",
           doc="How a feature's two sides become one number (``\"normalized\"``: (a - b) / "
               "(a + b), scaled to unit root-mean-square; :mod:`ratings.models.style`)."),
    Option("style_ridge", "Style", "ridge", "--style-ridge", kind=float, metavar="LAMBDA",
           bounds={"minimum": 0.0},
           flat=False, help="optional ridge on the style coefficients only (default 0)",
           types="float", doc="Optional ridge ``ridge / 2 |beta|^2`` on the style "
                              "coefficients only."),
    Option("cluster", "fit", "cluster", "--cluster", "auto", declared_here=False,
           settings={None: "--no-cluster"}, types="str or None",
           doc="Column whose values cluster verdicts for the sandwich (``\"auto\"``: "
               "``task_id`` when present); ``None`` treats verdicts as independent (HC0). "
               "Ignored for pre-aggregated ``Comparisons``, whose clusters were fixed by "
               ":func:`ratings.aggregate`."),
    Option("read", "fit", "read", declared_here=False, flat=False, types="ratings.Read",
           doc="How the log is read (:class:`~ratings.api.specs.Read`: ``columns``, "
               "``winner_map``, ``errors``, ``format``)."),
    Option("columns", "Read", "columns", "--columns", declared_here=False, types="mapping",
           doc="Column names to map, e.g. ``{\"left\": \"model_a\", \"question\": "
               "\"task_id\"}``."),
    Option("winner_map", "Read", "winner_map", "--winner-map", declared_here=False,
           types="mapping",
           doc="Extra winner spellings, e.g. ``{\"tie (bothbad)\": \"tie\"}``."),
    Option("errors", "Read", "errors", "--rejected", declared_here=False,
           values=("raise", "report"), settings={"report": "--rejected FILE"},
           doc="A bad row is an error, or the readable rows are fitted and the rest counted "
               "in the result (the command line's ``--rejected FILE`` writes them)."),
    Option("format", "Read", "format", "--format", declared_here=False, flat=False,
           types="str or ratings.io.formats.PeerFormat",
           doc="The file's format: ``\"csv\"``, ``\"parquet\"``, ``\"jsonl\"`` (default: "
               "from the extension), or a peer tool's log, ``\"fastchat\"``, "
               "``\"arena-hard\"``, ``\"alpaca-eval\"`` (default: recognised from its "
               "fields), or a spec with options, e.g. ``ratings.io.formats.ArenaHard("
               "strong_weight=3)`` (:mod:`ratings.io.formats`)."),
    Option("solver", "fit", "solver", declared_here=False, flat=False, types="ratings.Solver",
           doc="How the fit is computed (:class:`~ratings.api.specs.Solver`: ``engine``, "
               "``tol``, ``max_iter``, ``max_memory``)."),
    Option("max_memory", "Solver", "max_memory", "--max-memory", declared_here=False,
           rule="bytes or a size such as '8GB'; default half the memory available",
           types="int or str",
           doc="Stop before the fit's dense model x model matrices would need more memory "
               "than this (default half the memory available; :mod:`ratings.core.memory`)."),
    Option("engine", "Solver", "engine", declared_here=False,
           values=("auto", "numba", "numpy"),
           doc="numba's compiled kernels or their NumPy twins, tested equal (``\"auto\"`` "
               "uses the twins below 200,000 verdicts, and below 2,000,000 while numba is not "
               "loaded; :mod:`ratings.kernels.engine`)."),
    Option("tol", "Solver", "tol", declared_here=False,
           bounds={"above": 0.0, "maximum": 1.0}, types="float",
           doc="Newton's convergence tolerance (the largest change of a parameter)."),
    Option("max_iter", "Solver", "max_iter", declared_here=False,
           bounds={"minimum": 1, "integer": True}, types="int",
           doc="Newton's iteration limit."),
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
        chosen = (o.default if o.cli_default is ... else o.cli_default) if default is ... \
            else default
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
    if o.accepted is not None:
        return "one of " + ", ".join(repr(v) for v in o.accepted)
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
    if o.switch:
        if not isinstance(value, bool | np.bool_):
            raise ValueError(f"{spelled(name)} must be True or False; got {value!r}.")
        return bool(value)
    if o.accepted is not None and value not in o.accepted:
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
    own = [o.name for o in OPTIONS if o.spec == "fit"]
    specs = dict.fromkeys(f"ratings.{o.spec}" for o in OPTIONS if o.spec != "fit")
    return ", ".join(f"{name}=" for name in own) + f" (see {', '.join(specs)})"


def fit_keywords() -> dict[str, object]:
    """:func:`ratings.fit`'s own keywords (beside the verdicts) with their defaults."""
    return {o.name: o.default for o in OPTIONS if o.spec == "fit"}


def _default(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


def _parameter(name: str, types: str, doc: str, default: object = None, *,
               required: bool = False, indent: str = "    ") -> str:  # fmt: skip
    """One numpydoc parameter: ``name : types, default=...`` (``optional`` for a default of
    None, nothing more when ``required``) and its description, wrapped."""
    tail = "" if required else ", optional" if default is None else f", default={_default(default)}"
    body = textwrap.fill(doc, _WIDTH, initial_indent=indent + "    ",
                         subsequent_indent=indent + "    ", break_on_hyphens=False)
    return f"{indent}{name} : {types}{tail}\n{body}\n"


_WIDTH = 92  # the generated lines' width, indentation included
T = TypeVar("T")
#: The spec classes by name (:func:`spec` adds each): where a spec option's default is declared.
SPECS: dict[str, type] = {}


def _types(o: Option) -> str:
    """Option ``o``'s type as numpydoc writes it: declared, ``bool`` for a switch, else its
    values."""
    if o.types or o.switch:
        return o.types or "bool"
    return "{" + ", ".join(_default(v) for v in o.accepted) + "}"


def parameters(spec: str, names: list[str], indent: str = "    ") -> str:
    """The numpydoc entries of the options that live in ``spec`` (``"fit"``: the keywords of
    :func:`ratings.fit`; else a spec class's fields), in the order of ``names`` (the signature's
    keywords, or the fields): each option's type, default and description from the table (a
    spec's first field from the ``lead`` of the keyword it is the value of)."""
    by_field = {o.field: o for o in OPTIONS if o.spec == spec}
    leads = {o.lead[1]: o.lead for o in OPTIONS if o.lead is not None and o.lead[0] == spec}
    out = []
    for name in names:
        if name in leads:
            _, field, types, doc = leads[name]
            out.append(_parameter(field, types, doc, required=True, indent=indent))
        elif name in by_field:
            o = by_field[name]
            out.append(_parameter(o.field, _types(o), o.doc, o.default, indent=indent))
    return "".join(out)


def document_fit(doc: str | None, names: list[str], indent: str = "    ") -> str | None:
    """:func:`ratings.fit`'s docstring ``doc`` with its options' parameters (:func:`parameters`,
    in the order of ``names``, its signature's) before ``**legacy``, and the list of every
    option of :data:`OPTIONS` (:func:`option_line`: default and constraint) at the end of its
    Notes section (before Examples)."""
    if doc is None:  # python -OO
        return None
    at = doc.index(f"{indent}**legacy")
    doc = doc[:at] + parameters("fit", names, indent) + doc[at:]
    head = f"{indent}Examples\n{indent}--------\n"
    block = "".join(f"{indent}{option_line(o)}\n" for o in OPTIONS)
    text = (f"{indent}Every option, where it lives, its flag, its default and what it accepts "
            f"(:data:`ratings.api.options.OPTIONS`):\n\n{block}\n")
    at = doc.find(head)
    return doc + "\n" + text if at < 0 else doc[:at] + text + doc[at:]


@dataclass_transform(frozen_default=True)
def spec(cls: type[T]) -> type[T]:
    """Make ``cls`` a spec of :func:`ratings.fit`: a frozen dataclass that checks the fields
    the table declares with bounds, values or as a switch when it is made (:func:`check_option`,
    keeping the checked value, before the class's own ``__post_init__``), its docstring's
    *Parameters* section written from the table (:func:`parameters`, its fields in order) and
    its fields' defaults, the options' (in :data:`SPECS`)."""
    own = cls.__dict__.get("__post_init__")

    def __post_init__(self) -> None:
        for o in OPTIONS:  # the fields the table declares with bounds, values or as a switch
            if o.spec == type(self).__name__ and (o.bounds or o.accepted):
                object.__setattr__(self, o.field, check_option(o.name, getattr(self, o.field)))
        if own is not None:
            own(self)

    __post_init__.__qualname__ = f"{cls.__qualname__}.__post_init__"
    cls.__post_init__ = __post_init__
    cls = dataclass(frozen=True)(cls)
    SPECS[cls.__name__] = cls
    if sys.flags.optimize < 2:  # python -OO: no docstrings (a dataclass writes its signature)
        cls.__doc__ = (f"{cls.__doc__.rstrip()}\n\n    Parameters\n    ----------\n"
                       f"{parameters(cls.__name__, list(cls.__dataclass_fields__))}    ")
    return cls
