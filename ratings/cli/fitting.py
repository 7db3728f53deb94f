"""What the fitting subcommands share (``fit``, ``judges``, ``combine``, ``report``): the fit's
flags, turning them into one :class:`~ratings.api.specs.FitOptions` before any data is read,
reading the log for a fit, per-scope fits and the combined headline, and writing tables."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import ratings.api.specs  # noqa: F401 - the spec classes declare the defaults the flags show
from ratings.api.options import add_option
from ratings.cli.inputs import add_input_options, parse_mapping, read_log
from ratings.cli.kit import add_memory_option
from ratings.cli.tables import write_table
from ratings.core.errors import InvalidVerdictsError

__all__ = [
    "FIT_INPUTS",
    "add_combine_options",
    "add_fit_options",
    "check_suffix",
    "cluster_arg",
    "combined",
    "fit_options",
    "input_paths",
    "per_scope",
    "quality_arg",
    "read_for_fit",
    "weights_arg",
    "with_rubric",
    "write_or_print",
    "write_records",
]

#: Inputs of the fitting subcommands (dest -> label in messages).
FIT_INPUTS = {"verdicts": "VERDICTS", "judge_quality": "--judge-quality",
              "families": "--families"}


def add_fit_options(p: argparse.ArgumentParser, *, scope: bool = True, bt: bool = True,
                    model: bool = True, effects: bool = True,
                    ties: bool = False) -> None:  # fmt: skip
    """The fitting options: ``scope``, the ``bt`` ones (``--penalty``, ``--firth``, ``--ties``,
    ``--soft``; ``ties``: ``--ties`` and ``--soft`` alone), ``model`` (``--model``) and ``effects``
    (``--adjust``, ``--families``, ``--style``) where they mean something to the subcommand;
    the input options always."""
    add_input_options(p)
    g = p.add_argument_group("the fit")  # each flag as the option table declares it
    if scope:
        add_option(g, "scope")
    if model:
        add_option(g, "model")
    bt_options = ("penalty", "firth", "ties", "soft") if bt else ("ties", "soft") if ties else ()
    for name in ("anchor", "ci", "level", "n_boot", "seed", *bt_options):
        add_option(g, name)
    c = p.add_argument_group("judge quality (Crowd-BT)")
    add_option(c, "judge_quality", help_extra="; implies --model crowd-bt, an error with "
               "--model bt" if model else "")  # fmt: skip
    for name in ("fit_new_judges", "eta_known", "prior"):
        add_option(c, name)
    if effects:
        e = p.add_argument_group("judge effects and style")
        for name in ("adjust", "families", "style", "style_transform", "style_ridge"):
            add_option(e, name)
    add_memory_option(p)


def add_combine_options(p: argparse.ArgumentParser) -> None:
    """``--rubric``, ``--rubric-method``, ``--weights``, ``--method``, ``--drop-missing``."""
    p.add_argument("--rubric", metavar="RUBRIC",
                   help="rubric checks (task_id, model, check_id, passed) added as scope 'rubric'")
    p.add_argument("--rubric-method", choices=["rate", "check"], default="rate",
                   help="rubric to matches: pass rate per task (default) or per check")
    p.add_argument("--weights", metavar="SCOPE=W,...", help="scope weights (default equal)")
    p.add_argument("--method", choices=["joint", "independent"], default="joint",
                   help="headline interval: joint covariance over shared tasks (default) or "
                        "independent scopes")
    p.add_argument("--drop-missing", action="store_true",
                   help="leave models missing from some scope out of the headline")


def cluster_arg(args: argparse.Namespace) -> str | None:
    """``--cluster COLUMN`` / ``--no-cluster`` as the ``cluster`` argument of a fit."""
    if args.no_cluster:
        return None
    return args.cluster or "auto"


def fit_options(args: argparse.Namespace, model: str | None = None):
    """The fit's options given on the command line, as :class:`~ratings.api.specs.FitOptions`:
    built and checked once, before any data is read. The model's flags go to its spec by the
    option table (:mod:`ratings.api.options`); a Crowd-BT flag implies ``--model crowd-bt``."""
    from ratings.api.options import OPTIONS
    from ratings.api.specs import Adjust, Bootstrap, Solver, Style, model_spec, options_of

    read = {"prior": _prior_arg, "judge_quality": quality_arg}
    given = [(o, read.get(o.name, lambda v: v)(getattr(args, o.name))) for o in OPTIONS
             if o.spec in ("BT", "CrowdBT") and hasattr(args, o.name)]  # fmt: skip
    given = [(o, v) for o, v in given if v != o.default]
    implied = any(o.spec == "CrowdBT" for o, _ in given)
    model = model or args.model or ("crowd-bt" if implied else "bt")
    spec = model_spec(model, {o.field: v for o, v in given})

    def fields(spec: str) -> dict:  # the spec's fields the flags set, by the option table
        return {o.field: getattr(args, o.name) for o in OPTIONS
                if o.spec == spec and o.flag is not None and hasattr(args, o.name)}  # fmt: skip

    boot = Bootstrap(**fields("Bootstrap"))  # checked whether or not it is used
    ci = boot if args.ci == "bootstrap" else args.ci
    effects, style = getattr(args, "adjust", None), getattr(args, "style", None)
    return options_of(model=spec, ci=ci, anchor=args.anchor, scope=getattr(args, "scope", None),
                      cluster=cluster_arg(args), level=args.level,
                      adjust=Adjust(effects, **fields("Adjust")) if effects else None,
                      solver=Solver(**fields("Solver")),
                      style=Style(style, **fields("Style")) if style else None)  # fmt: skip


def _prior_arg(text: str):
    """'default', 'none', or 'AGREE,FLIP,SD'."""
    if text.lower() in ("default", "none"):
        return text.lower()
    try:
        return tuple(float(v) for v in text.split(","))
    except ValueError:
        raise ValueError(
            f"`--prior` must be 'default', 'none' or 'AGREE,FLIP,SD' (e.g. '1,1.5,2.24'); got "
            f"{text!r}."
        ) from None


def quality_arg(text: str | None):
    """One judge-quality file, or 'scope=file,...' for per-scope fits."""
    if text is None or Path(text).exists() or "=" not in text:
        return text
    return parse_mapping(text, "--judge-quality")


def check_suffix(path: str | None, flag: str, allowed: tuple[str, ...]) -> None:
    """Refuse, before any work, an output not ending in one of ``allowed``."""
    if path is not None and Path(path).suffix.lower() not in allowed:
        raise ValueError(f"`{flag}` must end in {' or '.join(allowed)}; got {path!r}.")


def read_for_fit(args: argparse.Namespace):
    """The verdict log of ``args`` (build the fit's options first: a bad one reads no data)."""
    style = _style_columns(args)
    if style:
        from ratings.api.fitting import check_style_source
        from ratings.cli.inputs import verdict_format
        from ratings.models.style import parse_style

        check_style_source(args.verdicts, parse_style(args.style),
                           parse_mapping(args.columns, "--columns"), verdict_format(args))
    return read_log(args, errors="report" if getattr(args, "rejected", None) else "raise",
                    keep=style, as_numbers=style)  # fmt: skip


def _style_columns(args: argparse.Namespace) -> list[str]:
    """The verdict columns ``--style`` reads (NAME_a, NAME_b per feature)."""
    from ratings.models.style import parse_style, style_columns

    return style_columns(parse_style(getattr(args, "style", None)))


def input_paths(args: argparse.Namespace) -> list[str]:
    """The files a fitting subcommand reads (no output may overwrite them)."""
    quality = quality_arg(args.judge_quality)
    files = list(quality.values()) if isinstance(quality, dict) else [quality]
    return [p for p in (args.verdicts, getattr(args, "rubric", None),
                        getattr(args, "families", None), *files) if p]  # fmt: skip


def write_records(table, out: str, args: argparse.Namespace) -> None:
    """A table in the format of ``out``'s suffix (:func:`ratings.cli.tables.write_table`)."""
    write_table(table, out, inputs=input_paths(args), csv_escape=args.csv_escape,
                precision=getattr(args, "precision", None))


def write_or_print(table, args: argparse.Namespace, text: str) -> None:
    """``table`` to ``--out`` when given, else ``text`` on standard output."""
    if args.out:
        write_records(table, args.out, args)
        print(f"wrote {len(table)} rows to {args.out}", file=sys.stderr)
    else:
        print(text)


def per_scope(args: argparse.Namespace, log, options) -> dict:
    """Every scope of ``log`` fitted (or ``--scope``'s)."""
    from ratings.scopes.combine import fit_scopes

    scope = getattr(args, "scope", None)
    scopes = None if scope is None else [scope]
    return fit_scopes(log, scopes=scopes, options=options, model=args.model or "auto")


def with_rubric(args: argparse.Namespace, log):
    """The verdicts with ``--rubric``'s synthetic matches added as scope 'rubric'."""
    import pandas as pd

    import ratings

    if args.rubric:
        from ratings.scopes.rubric import RUBRIC_SCOPE, read_rubric, rubric_to_matches

        if "scope" in log.verdicts.columns and (log.verdicts["scope"] == RUBRIC_SCOPE).any():
            raise InvalidVerdictsError(
                f"The verdicts already have a scope {RUBRIC_SCOPE!r} and `--rubric` adds the "
                f"rubric matches as scope {RUBRIC_SCOPE!r}: the two would be pooled into one "
                "fit. Drop one of them, or rename the verdicts' scope.")  # fmt: skip
        matches = rubric_to_matches(read_rubric(args.rubric), method=args.rubric_method)
        frame = pd.concat([log.verdicts.reset_index(drop=True), matches], ignore_index=True)
        log = ratings.read_verdicts(frame)
    return log


def combined(args: argparse.Namespace, log, weights, options) -> tuple[dict, object]:
    """Per-scope fits and the headline of ``--method``."""
    from ratings.scopes.combine import combine

    results = per_scope(args, log, options)
    missing = "drop" if args.drop_missing else "error"
    return results, combine(results, weights=weights, method=args.method, missing=missing)


def weights_arg(text: str | None) -> dict[str, float] | None:
    """``--weights 'a=1,b=2'`` as numbers, checked before any fit."""
    from ratings.core.bounds import MAX_WEIGHT, check_number

    weights = parse_mapping(text, "--weights")
    if weights is None:
        return None
    out = {}
    for scope, value in weights.items():
        try:
            number = float(value)
        except ValueError:
            number = value
        out[scope] = check_number(number, "weights", minimum=0.0, maximum=MAX_WEIGHT)
    return out
