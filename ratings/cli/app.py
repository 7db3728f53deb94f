"""The ``ratings`` command line.

``ratings fit VERDICTS`` fits Elo ratings with intervals; ``ratings demo`` fits the bundled
simulated example. Data errors exit with status 2 and a message naming rows; outputs are
written atomically and never over an input.

:func:`main` is the one runner: every subcommand's parser sets ``func`` (subcommands other
packages register, such as ``ratings next`` from ``sampling``, come from
:mod:`ratings.cli.commands`), and the errors of all of them map to exit statuses here, in
:func:`main`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from ratings.cli.allocator import leave, tune_allocator
from ratings.cli.commands import CommandKit, HelpFormatter, add_registered
from ratings.cli.flags import FLAGS, render_option
from ratings.cli.inputs import (
    add_input_options,
    parse_mapping,
    read_log,
    relabel,
    staged_verdicts,
)
from ratings.cli.lines import name_lines, rows_table
from ratings.cli.notes import report_judges, show_warnings
from ratings.cli.style_features import add_parser as add_style_features
from ratings.cli.tables import (
    add_precision_option,
    check_table_suffix,
    rounded,
    write_table,
)
from ratings.core.errors import (
    ConvergenceWarning,
    DataWarning,
    InvalidVerdictsError,
    JudgeWarning,
    MemoryLimitError,
    NonIdentifiableError,
    OutputError,
    PenaltyOnlyWarning,
    options_rendered_by,
)
from ratings.core.memory import limit_scope
from ratings.models.style import TRANSFORMS

__all__ = ["DESCRIPTIONS", "EXAMPLES", "EXIT_DATA", "FLAGS", "USER_ERRORS", "build_parser", "main",
           "program"]

#: Exit status of a run stopped by its input (data, arguments, files); argparse's usage
#: errors exit with 2 as well.
EXIT_DATA = 2
#: Errors caused by the input or the environment (unwritable outputs, the memory limit),
#: reported in one line (and, for bad rows, a table of them) with status :data:`EXIT_DATA`;
#: any other exception is a bug and keeps its traceback.
USER_ERRORS = (InvalidVerdictsError, NonIdentifiableError, ValueError, KeyError, OSError,
               MemoryLimitError)  # fmt: skip

_mapping = parse_mapping  # "a=b,c=d" on the command line (a key given twice is an error)


def _add_fit_options(p: argparse.ArgumentParser, *, scope: bool = True, bt: bool = True,
                     model: bool = True, effects: bool = True) -> None:  # fmt: skip
    """The fitting options: ``scope``, the ``bt`` ones (``--penalty``, ``--firth``), ``model``
    (``--model``) and ``effects`` (``--adjust``, ``--families``, ``--style``) where they mean
    something to the subcommand; the input options always."""
    add_input_options(p)
    g = p.add_argument_group("the fit")
    if scope:
        g.add_argument("--scope", help="fit only verdicts of this scope (required if several)")
    if model:
        g.add_argument("--model", choices=["bt", "crowd-bt"], default=None,
                       help="Bradley-Terry (default for one scope), or Crowd-BT with one quality "
                            "eta per judge (default for judged scopes with --by scope / "
                            "combine)")  # fmt: skip
    g.add_argument("--anchor", metavar="NAME=RATING",
                   help="pin one model at a rating, e.g. 'GPT-5.5 (medium)=1000'; "
                        "default: centred at mean 1000")  # fmt: skip
    g.add_argument("--ci", choices=["sandwich", "sandwich-z", "model", "bootstrap"],
                   default="sandwich",
                   help="sandwich (default; clustered: CR2 with df per contrast), sandwich-z "
                        "(CR1, normal quantile), model (inverse Hessian) or bootstrap")
    g.add_argument("--level", type=float, default=0.95, metavar="LEVEL",
                   help="confidence level (default 0.95)")
    g.add_argument("--n-boot", type=int, default=1000, metavar="N",
                   help="bootstrap resamples (default 1000)")
    g.add_argument("--seed", type=int, default=0, metavar="SEED",
                   help="bootstrap seed (default 0)")
    if bt:
        g.add_argument("--penalty", type=float, default=0.0, metavar="LAMBDA",
                       help="bt: opt-in ridge penalty making ratings finite when a model never "
                            "lost")  # fmt: skip
        g.add_argument("--firth", action="store_true", help="bt: Firth's bias-reduced estimate, "
                       "finite on every board (a model that never lost: open interval)")
    c = p.add_argument_group("judge quality (Crowd-BT)")
    c.add_argument("--judge-quality", metavar="FILE|SCOPE=FILE,...",
                   help="fix eta from a file written by `ratings judges` (per scope: "
                        "'analytical=a.json,presentation=p.json')"
                        + ("; implies --model crowd-bt, an error with --model bt"
                           if model else ""))  # fmt: skip
    c.add_argument("--fit-new-judges", action="store_true",
                   help="estimate eta for judges missing from --judge-quality")
    c.add_argument("--eta-known", action="store_true",
                   help="treat --judge-quality etas as known (leave their uncertainty out of "
                        "the intervals)")  # fmt: skip
    c.add_argument("--prior", default="default", metavar="PRIOR",
                   help="'default', 'none' or 'AGREE,FLIP,SD': weak priors on judge quality "
                        "(Beta pseudo-counts) and strengths (sd, log units); 'none' fits the "
                        "plain maximum likelihood")  # fmt: skip
    if effects:
        e = p.add_argument_group("judge effects and style")
        e.add_argument("--adjust", metavar="EFFECT,...",
                       help="position and/or self-preference: estimate these judge effects as "
                            "nuisance parameters, so ratings are corrected for them "
                            "(self-preference needs --families)")  # fmt: skip
        e.add_argument("--families", metavar="FILE",
                       help="CSV with columns name,family for models and judges")
        e.add_argument("--style", metavar="NAME,...",
                       help="style control: fit one shared coefficient per feature from the "
                            "columns NAME_a and NAME_b (e.g. tokens,headers); ratings are those "
                            "of answers of equal style")  # fmt: skip
        e.add_argument("--style-transform", default="normalized",
                       choices=list(TRANSFORMS),
                       help="how a feature's two sides become one number (default normalized: "
                            "(a - b) / (a + b))")
        e.add_argument("--style-ridge", type=float, default=0.0, metavar="LAMBDA",
                       help="optional ridge on the style coefficients only (default 0)")
    _add_memory_option(p)


def _add_combine_options(p: argparse.ArgumentParser) -> None:
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


def _add_memory_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-memory", metavar="SIZE",
                   help="stop before dense model x model matrices would need more memory than "
                        "SIZE (e.g. 8GB; default: half the available memory)")  # fmt: skip


def _add_output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-csv-escape", dest="csv_escape", action="store_false",
                   help="write CSV text cells as they are; by default cells starting with =, +, "
                        "-, @, tab or carriage return (formulas in a spreadsheet) get a leading "
                        "' (numbers never)")


def _declare_io(p: argparse.ArgumentParser, inputs: dict[str, str],
                outputs: dict[str, str]) -> None:  # fmt: skip
    """Name a subcommand's input and output arguments (dest -> label in messages); every
    output is checked against the inputs and the other outputs before the command runs."""
    p.set_defaults(io_inputs=inputs, io_outputs=outputs)


#: Inputs of the fitting subcommands (dest -> label in messages).
_FIT_INPUTS = {"verdicts": "VERDICTS", "judge_quality": "--judge-quality",
               "families": "--families"}


def _version() -> str:
    from ratings.core.version import __version__

    return __version__


#: Subcommands defined here; any other is looked up among the registered ones
#: (:mod:`ratings.cli.commands`), which are loaded only when asked for or listed.
BUILTIN = ("fit", "judges", "combine", "rubric", "assign-judges", "freeze", "plot", "audit",
           "report", "demo", "style-features")


def _wants_registered(argv: Sequence[str] | None) -> bool:
    """Does this command line need the registered subcommands (another command, or help)?"""
    words = sys.argv[1:] if argv is None else list(argv)
    first = next((w for w in words if not w.startswith("-")), None)
    return first is None or first not in BUILTIN


#: One or two examples per subcommand, shown at the end of its --help (and in docs/cli.md).
EXAMPLES: dict[str, tuple[str, ...]] = {
    "fit": ("ratings fit battles.csv --columns question_id=task_id --out ratings.csv",
            "ratings fit battles.csv --cluster question_id --pairs pairs.csv -o ratings.json"),
    "judges": ("ratings judges verdicts.csv --out judges.json",),
    "combine": ("ratings combine verdicts.csv --rubric rubric.csv -o board.csv",),
    "rubric": ("ratings rubric rubric.csv -o matches.csv",),
    "assign-judges": ("ratings assign-judges rubric.csv --judges j1,j2 --seed 1 -o judges.csv",),
    "freeze": ("ratings freeze ratings.csv --registry registry.csv",),
    "plot": ("ratings plot ratings.csv -o bands.png --top 20",),
    "audit": ("ratings audit verdicts.csv --families families.csv",
              "ratings audit verdicts.csv -o audit.csv"),
    "report": ("ratings report verdicts.csv -o board.html",
               "ratings report --from ratings.csv --pairs pairs.csv -o board.html"),
    "demo": ("ratings demo",),
    "next": ("ratings next battles.csv --columns question_id=task_id --judges j1,j2 --n 50 "
             "--seed 7 -o next.csv",),
}  # fmt: skip

#: What each subcommand does, at the top of its --help.
DESCRIPTIONS: dict[str, str] = {
    "fit": "Fit Elo ratings with confidence intervals (and rank intervals) from a verdict log: "
           "one row per verdict with model_a, model_b, winner (A, B or tie) and, to cluster the "
           "intervals, task_id. Prints the table, or writes it with --out.",
    "judges": "Fit each judge's quality (Crowd-BT eta: how often it agrees with the stronger "
              "model) and write it for reuse by later fits (--judge-quality). `judges` always "
              "fits Crowd-BT.",
    "combine": "Fit every scope of a log (Crowd-BT for judged scopes, Bradley-Terry for "
               "deterministic ones) and combine them into one headline Elo per model.",
    "rubric": "Turn rubric checks (task_id, model, check_id, passed) into synthetic matches "
              "between models on the same task (scope 'rubric'), ready to append to a log.",
    "freeze": "Add the models of a ratings table to a frozen registry: a model keeps the index "
              "value it was frozen with until refrozen.",
    "plot": "Plot each model's Elo and its interval as a band, from a table written by "
            "`fit --out` or `combine --out`.",
    "audit": "Audit the judges: position bias (slot A), self-preference (with --families) and "
             "agreement with the fitted ratings, with intervals.",
    "report": "Write one self-contained HTML page of the board: fit a verdict log, or render "
              "saved tables (--from).",
    "demo": "Fit the bundled simulated example and print every scope and the headline.",
}  # fmt: skip


def _sub(sub, name: str, help: str) -> argparse.ArgumentParser:
    """A subcommand's parser with its description and examples."""
    return sub.add_parser(name, help=help, description=DESCRIPTIONS.get(name, help),
                          epilog=_examples(name),
                          formatter_class=HelpFormatter)  # fmt: skip


def _examples(name: str) -> str | None:
    shown = EXAMPLES.get(name)
    return None if not shown else "examples:\n" + "\n".join(f"  {e}" for e in shown)


def _add_verdicts(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument("verdicts", metavar="VERDICTS",
                   help=help + "; '-' reads standard input (CSV, or TSV with --delimiter tab)")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``ratings`` parser with every subcommand (the registered ones when ``argv`` asks for
    one of them, or for help)."""
    return _parser(argv)


def _parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ratings",
        description="Elo ratings with confidence intervals from pairwise verdicts.",
        epilog="Start with `ratings demo`, then `ratings fit YOUR.csv`; `ratings COMMAND --help` "
               "describes each command.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = _sub(sub, "fit", "fit Elo ratings with intervals from a verdict log")
    _add_verdicts(p, "verdict log: .csv, .tsv, .parquet or .jsonl (or counts: wins_a, wins_b, "
                     "ties)")
    _add_fit_options(p)
    o = p.add_argument_group("outputs")
    o.add_argument("-o", "--out", metavar="FILE",
                   help="write the ratings table to FILE (.csv, .tsv, .json with the fit's "
                        "settings, .jsonl or .parquet)")  # fmt: skip
    p.add_argument("--by", choices=["scope"],
                   help="fit every scope (Crowd-BT for judged scopes, BT for deterministic "
                        "ones, unless --model is given) into one table with a scope column")
    o.add_argument("--judges-out", metavar="FILE",
                   help="crowd-bt: write the judges table to FILE (a table format)")
    o.add_argument("--style-out", metavar="FILE",
                   help="with --style: write the style coefficients table to FILE")
    o.add_argument("--pairs", metavar="FILE",
                   help="write every pair's Elo difference, interval, win probability and "
                        "multiplicity-adjusted p-value to FILE")
    o.add_argument("--rejected", metavar="FILE",
                   help="fit on the readable rows and write the rejected ones (with their "
                        "lines and reasons) to FILE; without it, any bad row is an "
                        "error")  # fmt: skip
    p.add_argument("--engine", choices=["pandas", "duckdb"], default="pandas",
                   help="duckdb: validate and count the log (a Parquet or CSV file or glob) in "
                        "DuckDB, for logs larger than memory (pip install '.[duckdb]')")
    p.add_argument("--dask", nargs="?", const="local", metavar="ADDRESS",
                   help="validate and count the log (a Parquet file or glob) on a Dask cluster "
                        "at ADDRESS, or a local one without it (pip install '.[dask]')")
    _add_output_options(o)
    add_precision_option(o)
    _declare_io(p, _FIT_INPUTS, {"out": "--out", "rejected": "--rejected",
                                 "judges_out": "--judges-out", "pairs": "--pairs",
                                 "style_out": "--style-out"})  # fmt: skip
    p.set_defaults(func=_cmd_fit)

    j = _sub(sub, "judges", "fit judge quality (Crowd-BT eta) for reuse in later fits")
    _add_verdicts(j, "verdict log with a `judge` column")
    _add_fit_options(j, bt=False, model=False, effects=False)
    j.add_argument("--model", help=argparse.SUPPRESS)  # refused with a reason, see _cmd_judges
    j.add_argument("-o", "--out", metavar="JUDGES", required=True,
                   help="write eta, SE, interval and counts per judge (JSON)")
    _declare_io(j, _FIT_INPUTS, {"out": "--out"})
    j.set_defaults(func=_cmd_judges, families=None)

    c = _sub(sub, "combine", "per-scope fits and the combined headline Elo")
    _add_verdicts(c, "verdict log with a `scope` column")
    _add_fit_options(c, scope=False, bt=False)
    _add_combine_options(c)
    c.add_argument("-o", "--out", metavar="FILE",
                   help="write the table (all scopes + combined; .csv, .tsv, .json, .jsonl or "
                        ".parquet)")  # fmt: skip
    _add_output_options(c)
    add_precision_option(c)
    _declare_io(c, {**_FIT_INPUTS, "rubric": "--rubric"}, {"out": "--out"})
    c.set_defaults(func=_cmd_combine, by=None, judges_out=None, rejected=None,
                   pairs=None, scope=None)

    rb = _sub(sub, "rubric", "turn rubric checks into synthetic matches (scope rubric)")
    rb.add_argument("rubric", metavar="RUBRIC",
                    help="rubric results: task_id, model, check_id, passed")
    rb.add_argument("--method", choices=["rate", "check"], default="rate",
                    help="one match per pair and task by pass rate (default), or one per check")
    rb.add_argument("--duplicates", choices=["error", "last"], default="error",
                    help="a check graded twice for one submission: error (default) or keep last")
    rb.add_argument("--columns", metavar="OLD=NEW,...", help="map column names")
    rb.add_argument("-o", "--out", required=True, metavar="MATCHES",
                    help="synthetic matches (.csv, .tsv, .json, .jsonl or .parquet)")
    _add_output_options(rb)
    _declare_io(rb, {"rubric": "RUBRIC"}, {"out": "--out"})
    rb.set_defaults(func=_cmd_rubric)

    from ratings.scopes.check_judges import add_assign_judges_parser  # one judge per rubric check

    aj = add_assign_judges_parser(sub)
    aj.epilog, aj.formatter_class = _examples("assign-judges"), HelpFormatter
    _add_output_options(aj)
    _declare_io(aj, {"checks": "CHECKS", "previous": "--previous"}, {"out": "--out"})

    fz = _sub(sub, "freeze", "add new models' index values to a frozen registry")
    fz.add_argument("ratings_table", metavar="RATINGS",
                    help="headline table (`combine --out`; its 'combined' rows) or `fit --out`")
    fz.add_argument("--registry", required=True, metavar="REGISTRY",
                    help="registry CSV (created if absent; written in place)")
    fz.add_argument("--refreeze", action="append", default=[], metavar="MODEL",
                    help="replace this model's frozen entry (repeatable)")
    fz.add_argument("--date", help="freeze date (default: today, UTC)")
    fz.add_argument("--scale", metavar="NAME=RATING",
                    help="the board's anchor, for a table that does not record it ('mean=1000': "
                         "centred)")  # fmt: skip
    fz.add_argument("--convert", action="store_true",
                    help="shift a board on another scale onto the registry's (its anchor model "
                         "must be on the board; intervals are not carried over); without it, "
                         "such a board is refused")  # fmt: skip
    _add_output_options(fz)
    _declare_io(fz, {"ratings_table": "RATINGS"}, {"registry": "--registry"})
    fz.set_defaults(func=_cmd_freeze)

    pl = _sub(sub, "plot", "plot Elo bands (95%% CI) from a ratings table")
    pl.add_argument("ratings_table", metavar="RATINGS", help="table written by `fit --out` "
                    "(.csv or .json); several scopes give one band per scope; an `audit --out` "
                    "table draws the judge audit, a `fit --style-out` table the coefficients")
    pl.add_argument("-o", "--out", required=True, metavar="IMAGE",
                    help="image file: .png, .svg or .pdf")
    pl.add_argument("--top", type=int, metavar="K",
                    help="show the best K models and summarise the rest")
    pl.add_argument("--highlight", metavar="A,B", help="models to highlight")
    pl.add_argument("--title", help="plot title (long titles wrap)")
    pl.add_argument("--size", metavar="W,H", help="figure size in inches (default: fitted to "
                    "the rows)")
    pl.add_argument("--dpi", type=float, metavar="DPI",
                    help="resolution of a PNG in dots per inch (default 100)")
    pl.add_argument("--raw", metavar="RAW", help="with a style-controlled RATINGS (`fit "
                    "--style ... --out`): the plain fit's table; draws both side by side")
    pl.add_argument("--style-table", metavar="STYLE", help="with an audit table as RATINGS "
                    "(`audit --out`): the style coefficients (`fit --style-out`) to draw below "
                    "the judges")  # fmt: skip
    _declare_io(pl, {"ratings_table": "RATINGS", "raw": "--raw", "style_table": "--style-table"},
                {"out": "--out"})  # fmt: skip
    pl.set_defaults(func=_cmd_plot)

    au = _sub(sub, "audit", "judge audit: position bias, self-preference, agreement")
    _add_verdicts(au, "verdict log: .csv, .tsv, .parquet or .jsonl")
    add_input_options(au)
    au.add_argument("--scope", help="audit only verdicts of this scope (required if several)")
    au.add_argument("--families", metavar="FILE",
                    help="CSV with columns name,family for models and judges (self-preference "
                         "is estimated for judges with a family)")
    au.add_argument("--model", choices=["bt", "crowd-bt"], default="bt",
                    help="Bradley-Terry (default) or Crowd-BT (adds each judge's eta)")
    au.add_argument("--effects", metavar="EFFECT,...",
                    default="position,self-preference",
                    help="judge effects to fit: position and/or self-preference (default both); "
                         "effects the verdicts cannot estimate are reported as such and left "
                         "out")  # fmt: skip
    au.add_argument("--judge-quality", metavar="JUDGES", help="crowd-bt: fix eta (a JSON file "
                    "from `ratings judges`)")
    au.add_argument("--fit-new-judges", action="store_true",
                    help="crowd-bt: estimate eta for judges missing from --judge-quality")
    au.add_argument("--level", type=float, default=0.95, metavar="LEVEL",
                    help="confidence level (default 0.95)")
    au.add_argument("--n-boot", type=int, default=1000, metavar="N",
                    help="task-bootstrap resamples for agreement intervals (default 1000)")
    au.add_argument("--seed", type=int, default=0, metavar="SEED",
                    help="bootstrap seed (default 0)")
    au.add_argument("-o", "--out", metavar="FILE",
                    help="write the per-judge table (.csv) or the whole report (.json)")
    _add_output_options(au)
    _declare_io(au, _FIT_INPUTS, {"out": "--out"})
    au.set_defaults(func=_cmd_audit)

    rp = _sub(sub, "report", "one self-contained HTML page of the board: fit a verdict log, "
              "or render saved tables (--from)")
    rp.add_argument("verdicts", nargs="?", metavar="VERDICTS",
                    help="verdict log to fit (several scopes or --rubric: per-scope boards and "
                         "the combined headline, as `combine`)")  # fmt: skip
    _add_fit_options(rp)
    _add_combine_options(rp)
    rp.add_argument("--from", dest="from_table", metavar="BOARD",
                    help="render a saved table (`fit --out` or `combine --out`) instead of "
                         "fitting")  # fmt: skip
    rp.add_argument("--pairs", metavar="PAIRS",
                    help="with --from: the pairwise table (`fit --pairs`) for the heatmap")
    rp.add_argument("--audit", metavar="AUDIT",
                    help="the judge audit's table (`audit --out audit.csv`) to include")
    rp.add_argument("--title", help="the page's title (default 'Leaderboard')")
    rp.add_argument("-o", "--out", required=True, metavar="PAGE",
                    help="the HTML page (.html)")
    _declare_io(rp, {**_FIT_INPUTS, "rubric": "--rubric", "from_table": "--from",
                     "pairs": "--pairs", "audit": "--audit"}, {"out": "--out"})  # fmt: skip
    rp.set_defaults(func=_cmd_report, by=None, judges_out=None, rejected=None, precision=None)

    d = _sub(sub, "demo", "fit the bundled simulated example and print the tables")
    d.set_defaults(func=_cmd_demo)
    kit = CommandKit(_add_memory_option, _add_output_options, _declare_io)
    add_style_features(sub, kit)
    if _wants_registered(argv):
        add_registered(sub, kit)
    return parser


def _cluster_arg(args: argparse.Namespace) -> str | None:
    if args.no_cluster:
        return None
    return args.cluster or "auto"


def _fit_options(args: argparse.Namespace, model: str | None = None):
    """The fit's options given on the command line, as :class:`~ratings.api.specs.FitOptions`:
    built and checked once, before any data is read."""
    from ratings.api.specs import BT, Adjust, Bootstrap, CrowdBT, Solver, Style, options_of
    from ratings.models.firth import check_firth_option

    penalty, firth = getattr(args, "penalty", 0.0), getattr(args, "firth", False)
    crowd_only = args.judge_quality or args.fit_new_judges  # these imply Crowd-BT
    implied = crowd_only or args.eta_known or args.prior.lower() != "default"
    model = model or args.model or ("crowd-bt" if implied else "bt")
    if crowd_only and model == "bt":
        flag = "--judge-quality" if args.judge_quality else "--fit-new-judges"
        raise ValueError(f"`{flag}` sets Crowd-BT judge qualities; it does not go with "
                         "`--model bt` (drop one of them).")  # fmt: skip
    if model == "bt":
        if args.eta_known or args.prior.lower() != "default":
            flag = "--eta-known" if args.eta_known else "--prior"
            raise ValueError(f"`{flag}` is only available with `--model crowd-bt`.")
        spec = BT(penalty=penalty, firth=firth)
    else:
        if penalty:
            raise ValueError("`--penalty` is only available with `--model bt`.")
        check_firth_option(firth, model=model)
        spec = CrowdBT(prior=_prior_arg(args.prior), judge_quality=_quality_arg(args.judge_quality),
                       eta_known=args.eta_known, fit_new_judges=args.fit_new_judges)
    boot = Bootstrap(n=args.n_boot, seed=args.seed)  # checked whether or not it is used
    ci = boot if args.ci == "bootstrap" else args.ci
    effects = getattr(args, "adjust", None)
    adjust = Adjust(effects, families=args.families) if effects else None
    style = None
    if getattr(args, "style", None):
        style = Style(args.style, transform=args.style_transform, ridge=args.style_ridge)
    return options_of(model=spec, ci=ci, anchor=args.anchor, scope=getattr(args, "scope", None),
                      cluster=_cluster_arg(args), level=args.level, adjust=adjust,
                      solver=Solver(max_memory=args.max_memory), style=style)  # fmt: skip


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


def _quality_arg(text: str | None):
    """One judge-quality file, or 'scope=file,...' for per-scope fits."""
    if text is None or Path(text).exists() or "=" not in text:
        return text
    return _mapping(text, "--judge-quality")


def _ratings_json(r, precision: int | None = None) -> str:
    """The ratings table with its metadata as JSON."""
    meta = {
        "model": r.model, "scope": r.scope, "anchor": r.anchor, "anchor_rating": r.offset,
        "ci": r.ci, "cluster": r.cluster, "n_clusters": r.n_clusters, "level": r.level,
        "df": r.df, "small_sample": "CR2, Satterthwaite df per contrast (column df)"
        if r.inference is not None else None,
        "n_verdicts": r.n_matches, "converged": r.converged, "loglik": r.loglik,
    }  # fmt: skip
    table = rounded(r.to_frame(), precision)
    meta["ratings"] = json.loads(table.to_json(orient="records", double_precision=15))
    return json.dumps(meta, indent=2) + "\n"


def _write_table(r, args: argparse.Namespace) -> None:
    from ratings.io import write_atomic

    suffix = Path(args.out).suffix.lower()
    if suffix == ".json":
        write_atomic(_ratings_json(r, args.precision), args.out, inputs=_inputs(args))
    else:
        from ratings.scopes.scale import board_info

        write_table(r.to_frame().assign(**board_info(r)), args.out, inputs=_inputs(args),
                    csv_escape=args.csv_escape, precision=args.precision)  # fmt: skip


def _check_suffix(path: str | None, flag: str, allowed: tuple[str, ...]) -> None:
    if path is not None and Path(path).suffix.lower() not in allowed:
        raise ValueError(f"`{flag}` must end in {' or '.join(allowed)}; got {path!r}.")


def _read(args: argparse.Namespace):
    """The verdict log of ``args`` (build the fit's options first: a bad one reads no data)."""
    if _style_columns(args):
        from ratings.api.style import check_style_columns, parse_style
        from ratings.io import peek_columns

        rename = _mapping(args.columns, "--columns") or {}
        check_style_columns([rename.get(str(c), c) for c in peek_columns(args.verdicts)],
                            parse_style(args.style))  # fmt: skip
    style = _style_columns(args)
    return read_log(args, errors="report" if getattr(args, "rejected", None) else "raise",
                    keep=style, as_numbers=style)  # fmt: skip


def _style_columns(args: argparse.Namespace) -> list[str]:
    """The verdict columns ``--style`` reads (NAME_a, NAME_b per feature)."""
    from ratings.api.style import parse_style, style_columns

    return style_columns(parse_style(getattr(args, "style", None)))


def _inputs(args: argparse.Namespace) -> list[str]:
    quality = _quality_arg(args.judge_quality)
    files = list(quality.values()) if isinstance(quality, dict) else [quality]
    return [p for p in (args.verdicts, getattr(args, "rubric", None),
                        getattr(args, "families", None), *files) if p]  # fmt: skip


def _cmd_fit(args: argparse.Namespace) -> int:
    from ratings.api.fitting import fit_with

    if args.judges_out and args.model != "crowd-bt":
        raise ValueError("`--judges-out` needs `--model crowd-bt`.")
    check_table_suffix(args.out, "--out")
    check_table_suffix(args.judges_out, "--judges-out")
    check_table_suffix(getattr(args, "style_out", None), "--style-out")
    if getattr(args, "style_out", None) and not args.style:
        raise ValueError("`--style-out` needs `--style NAME,...`.")
    if getattr(args, "style_out", None) and args.by == "scope":
        raise ValueError("`--style-out` is for one scope; the `--by scope` table has no "
                         "coefficients column.")  # fmt: skip
    if args.pairs and args.by == "scope":
        raise ValueError("`--pairs` is for one scope; pass `--scope` instead of `--by scope`.")
    check_table_suffix(args.pairs, "--pairs")
    from ratings.api.loading import is_counts_source

    options = _fit_options(args)  # options first: no data is read for a bad one
    outside = args.engine == "duckdb" or args.dask is not None
    if outside:  # counted where the log lies, then fitted as a counts table
        log, counts = _count_outside(args), True
    else:
        counts = is_counts_source(args.verdicts)  # pre-aggregated wins_a / wins_b / ties
        log = args.verdicts if counts else _read(args)
    if args.by == "scope":
        if counts:
            raise ValueError("`--by scope` reads verdict logs; fit counts one --scope at a time.")
        _fit_by_scope(args, log, options)
    else:
        r = fit_with(log, options)
        if args.out:
            _write_table(r, args)
            print(f"wrote {len(r.models)} ratings to {args.out}", file=sys.stderr)
        else:
            print(r.summary())
        if args.judges_out:
            _write_judges(r.judges, args)
        if getattr(args, "style_out", None):
            _write_records(r.style, args.style_out, args)
            print(f"wrote {len(r.style)} style coefficients to {args.style_out}",
                  file=sys.stderr)  # fmt: skip
        if args.pairs:
            _write_records(r.pairwise(), args.pairs, args)
            print(f"wrote {len(r.models) * (len(r.models) - 1) // 2} pairs to {args.pairs}",
                  file=sys.stderr)  # fmt: skip
        report_judges(r.judges, r.scope)
    if args.rejected and not counts:  # last: a run that fails writes nothing
        from ratings.io import write_rejected

        write_rejected(log, args.rejected, csv_escape=args.csv_escape)
        if len(log.rejected):
            print(f"{len(log.rejected)} row(s) rejected; written to {args.rejected}",
                  file=sys.stderr)  # fmt: skip
    return 0


def _count_outside(args: argparse.Namespace):
    """The log counted by DuckDB (``--engine duckdb``) or Dask (``--dask``)."""
    if args.engine == "duckdb" and args.dask is not None:
        raise ValueError("Choose one of `--engine duckdb` and `--dask`.")
    if args.rejected or args.by == "scope":
        raise ValueError("`--rejected` and `--by scope` read the log in memory; with "
                         "`--engine duckdb` or `--dask` any bad row is an error (fit one --scope).")
    if args.engine == "duckdb":
        from ratings.data.sql import aggregate_counts_sql, relation_of

        return aggregate_counts_sql(relation_of(args.verdicts))
    import dask.dataframe as dd
    from dask.distributed import Client, LocalCluster

    from ratings.data.dask import aggregate_counts

    if args.dask == "local":
        with LocalCluster(processes=True, dashboard_address=":0") as cluster, Client(cluster):
            return aggregate_counts(dd.read_parquet(args.verdicts))
    with Client(args.dask):
        return aggregate_counts(dd.read_parquet(args.verdicts))


def _write_records(table, out: str, args: argparse.Namespace) -> None:
    """A table in the format of ``out``'s suffix (:func:`ratings.cli.tables.write_table`)."""
    write_table(table, out, inputs=_inputs(args), csv_escape=args.csv_escape,
                precision=getattr(args, "precision", None))


def _per_scope(args: argparse.Namespace, log, options) -> dict:
    from ratings.scopes.combine import fit_scopes

    scope = getattr(args, "scope", None)
    scopes = None if scope is None else [scope]
    return fit_scopes(log, scopes=scopes, options=options, model=args.model or "auto")


def _write_or_print(table, args: argparse.Namespace, text: str) -> None:
    if args.out:
        _write_records(table, args.out, args)
        print(f"wrote {len(table)} rows to {args.out}", file=sys.stderr)
    else:
        print(text)


def _fit_by_scope(args: argparse.Namespace, log, options) -> None:
    from ratings.scopes.combine import scopes_frame

    results = _per_scope(args, log, options)
    text = "\n\n".join(r.summary() for r in results.values())
    _write_or_print(scopes_frame(results), args, text)
    for scope, r in results.items():
        report_judges(r.judges, scope)


def _with_rubric(args: argparse.Namespace, log):
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


def _combined(args: argparse.Namespace, log, weights, options) -> tuple[dict, object]:
    """Per-scope fits and the headline of ``--method``."""
    from ratings.scopes.combine import combine

    results = _per_scope(args, log, options)
    missing = "drop" if args.drop_missing else "error"
    return results, combine(results, weights=weights, method=args.method, missing=missing)


def _cmd_combine(args: argparse.Namespace) -> int:
    import ratings
    from ratings.scopes.combine import combine, scopes_frame

    check_table_suffix(args.out, "--out")
    weights = _weights(args.weights)
    options = _fit_options(args)  # options first: no data is read for a bad one
    log = _with_rubric(args, _read(args))
    results, head = _combined(args, log, weights, options)
    missing = "drop" if args.drop_missing else "error"
    other = combine(results, weights=weights, missing=missing,
                    method="independent" if args.method == "joint" else "joint")  # fmt: skip
    table = scopes_frame(results, head)
    alt = f"se_{other.combine_method}"
    table[alt] = table["model"].map(other.se).where(table["scope"] == "combined")
    text = "\n\n".join(r.summary() for r in results.values())
    shown = head.to_frame().assign(**{alt: lambda f: f["model"].map(other.se)})
    text += "\n\n" + head.summary().split("\n\n")[0] + "\n" + (
        f"{alt} = the headline SE under the other method.\n\n"
        + ratings.result.format_table(shown))  # fmt: skip
    _write_or_print(table, args, text)
    for scope, r in results.items():
        report_judges(r.judges, scope)
    return 0


def _weights(text: str | None) -> dict[str, float] | None:
    """``--weights 'a=1,b=2'`` as numbers, checked before any fit."""
    from ratings.core.bounds import MAX_WEIGHT, check_number

    weights = _mapping(text, "--weights")
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


def _write_judges(judges, args: argparse.Namespace) -> None:
    _write_records(judges.reset_index(), args.judges_out, args)


def _cmd_judges(args: argparse.Namespace) -> int:
    import ratings
    from ratings.api.fitting import fit_with
    from ratings.scopes.judge_files import save_judge_quality

    if args.model not in (None, "crowd-bt"):
        raise ValueError(f"`ratings judges` fits Crowd-BT (judge quality eta); `--model "
                         f"{args.model}` is not an option here. Drop `--model`, or use "
                         "`ratings fit --model bt` for Bradley-Terry ratings.")  # fmt: skip
    _check_suffix(args.out, "--out", (".json",))
    options = _fit_options(args, model="crowd-bt")
    r = fit_with(_read(args), options)
    save_judge_quality(r, args.out, source=args.verdicts, inputs=_inputs(args))
    print(ratings.result.format_table(r.judges.reset_index()))
    report_judges(r.judges, r.scope)
    print(f"wrote judge quality for {len(r.judges)} judge(s) to {args.out}", file=sys.stderr)
    return 0


def _cmd_rubric(args: argparse.Namespace) -> int:
    from ratings.scopes.rubric import read_rubric, rubric_to_matches

    check_table_suffix(args.out, "--out")
    rubric = read_rubric(args.rubric, columns=_mapping(args.columns, "--columns"),
                         duplicates=args.duplicates)  # fmt: skip
    matches = rubric_to_matches(rubric, method=args.method)
    write_table(matches, args.out, inputs=[args.rubric], csv_escape=args.csv_escape)
    print(f"wrote {len(matches)} synthetic matches ({args.method}) from {len(rubric)} checks "
          f"to {args.out}", file=sys.stderr)  # fmt: skip
    return 0


def _cmd_freeze(args: argparse.Namespace) -> int:
    from ratings.result import format_table
    from ratings.scopes.registry import freeze_cli

    before = set()
    if Path(args.registry).exists():
        from ratings.scopes.registry import load_registry

        with warnings.catch_warnings():  # said once, by the freeze itself
            warnings.simplefilter("ignore", DataWarning)
            before = set(load_registry(args.registry)["model"])
    reg = freeze_cli(args.ratings_table, args.registry, refreeze=args.refreeze, date=args.date,
                     csv_escape=args.csv_escape, scale=args.scale,
                     convert=args.convert)  # fmt: skip
    added = [m for m in reg["model"] if m not in before]
    print(f"registry {args.registry}: {len(added)} model(s) added, "
          f"{len(args.refreeze)} refrozen, {len(reg)} in all", file=sys.stderr)  # fmt: skip
    shown = ["model", "elo", "lower", "upper", "index", "frozen_on", "anchor", "anchor_rating"]
    print(format_table(reg[shown]))
    return 0


def _cmd_plot(args: argparse.Namespace) -> int:
    from ratings.plot.bands import plot_cli

    highlight = None if args.highlight is None else [h.strip() for h in args.highlight.split(",")]
    plot_cli(args.ratings_table, args.out, top=args.top, highlight=highlight, title=args.title,
             size=args.size, dpi=args.dpi, raw=args.raw, style_table=args.style_table)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _cmd_audit(args: argparse.Namespace) -> int:
    import warnings

    import ratings
    from ratings.audit.report import AuditWarning

    with warnings.catch_warnings():  # the notes are printed below
        warnings.simplefilter("ignore", AuditWarning)
        result = ratings.audit(
            _read(args), scope=args.scope, families=args.families,
            model=args.model, effects=args.effects,
            judge_quality=args.judge_quality, fit_new_judges=args.fit_new_judges,
            cluster=_cluster_arg(args), level=args.level, n_boot=args.n_boot, seed=args.seed)
    if args.out:
        result.write(args.out, inputs=_inputs(args), csv_escape=args.csv_escape)
        print(f"wrote the audit of {len(result.judges)} judge(s) to {args.out}", file=sys.stderr)
    else:
        print(result.summary())
    for note in result.notes:
        print(f"warning: {note}", file=sys.stderr)
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from ratings.report import from_results, from_tables, write_report

    _check_suffix(args.out, "--out", (".html", ".htm"))
    if (args.verdicts is None) == (args.from_table is None):
        raise ValueError("`ratings report` needs a verdict log to fit (VERDICTS) or a saved "
                         "table (`--from BOARD.csv`), not both.")  # fmt: skip
    audit = _saved_table(args.audit, "--audit", ("judge",))
    command = "ratings " + " ".join(_quoted(a) for a in getattr(args, "argv", ()) or ["report"])
    if args.from_table is not None:
        if args.rubric:
            raise ValueError("`--rubric` adds matches to a fit; with `--from` nothing is "
                             "fitted (drop one of them).")  # fmt: skip
        report = from_tables(_saved_table(args.from_table, "--from", ("model", "elo")),
                             pairs=_saved_table(args.pairs, "--pairs", ("model_a", "model_b")),
                             audit=audit, title=args.title, command=command,
                             sources=[p for p in (args.from_table, args.pairs, args.audit)
                                      if p])  # fmt: skip
        inputs = [args.from_table, args.pairs, args.audit]
    else:
        if args.pairs:
            raise ValueError("`--pairs` reads a saved pairwise table for `--from`; a fit "
                             "computes its own (drop `--pairs`).")  # fmt: skip
        weights = _weights(args.weights)
        options = _fit_options(args)  # options first: no data is read for a bad one
        log = _with_rubric(args, _read(args))
        v = log.verdicts
        scoped = "scope" in v.columns and args.scope is None and v["scope"].nunique() > 1
        if scoped or args.rubric:
            results, head = _combined(args, log, weights, options)
        else:
            from ratings.api.fitting import fit_with

            r = fit_with(log, options)
            results, head = {r.scope or "": r}, None
        report = from_results(results, combined=head, verdicts=v, audit=audit,
                              title=args.title, command=command,
                              sources=_inputs(args))  # fmt: skip
        inputs = [*_inputs(args), args.audit]
        for scope, r in results.items():
            report_judges(r.judges, scope)
    write_report(report, args.out, inputs=[p for p in inputs if p])
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _quoted(word: str) -> str:
    import shlex

    return shlex.quote(word)


def _saved_table(path: str | None, flag: str, needed: tuple[str, ...]):
    """A table written by another subcommand, with the columns ``needed``, or None."""
    if path is None:
        return None
    from ratings.core.schema import require_columns
    from ratings.plot.bands import read_ratings_table

    table = read_ratings_table(path)
    require_columns(table, needed, f"`{flag}` {path!r}", error=ValueError)
    return table


def _cmd_demo(args: argparse.Namespace) -> int:
    from ratings.cli.demo import run_demo

    return run_demo()


def _io_paths(args: argparse.Namespace, names: dict[str, str]) -> dict[str, object]:
    """{label: path or paths} of the arguments ``names`` (dest -> label) that were given."""
    out: dict[str, object] = {}
    for dest, label in names.items():
        value = getattr(args, dest, None)
        if dest == "judge_quality":
            value = _quality_arg(value)
            value = list(value.values()) if isinstance(value, dict) else value
        if value is not None:
            out[label] = value
    return out


def _check_io(args: argparse.Namespace) -> None:
    """Before any work: every output can be written, is no input and no other output."""
    from ratings.io.writers import check_outputs

    outputs = _io_paths(args, getattr(args, "io_outputs", {}))
    check_outputs(outputs, _io_paths(args, getattr(args, "io_inputs", {})))


def _flagged(err: OutputError, args: argparse.Namespace) -> str:
    """An output error prefixed with the flag of the output it concerns (when known)."""
    for dest, label in getattr(args, "io_outputs", {}).items():
        if err.path is not None and getattr(args, dest, None) == err.path:
            if not str(err).startswith(f"`{label}`"):
                return f"`{label}`: {err}"
    return str(err)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (2 for data errors). Run as the program (``argv``
    None) it first tunes glibc's allocator for large arrays (:mod:`ratings.cli.allocator`).

    Warnings are the library's own (:mod:`warnings`): recorded while the command runs and
    printed on stderr as ``ratings: warning: ...``, the same text Python shows.
    """
    if argv is None:
        tune_allocator()
    args = _parser(argv).parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # shown in reports
    with warnings.catch_warnings(record=True) as caught:
        for category in (JudgeWarning, ConvergenceWarning, DataWarning, PenaltyOnlyWarning):
            warnings.simplefilter("always", category)  # the package's own: always shown
        try:
            return _run(args, caught)
        finally:
            show_warnings(caught, relabel)


def _run(args: argparse.Namespace, caught: list) -> int:
    try:
        with options_rendered_by(render_option), limit_scope(getattr(args, "max_memory", None)):
            _check_io(args)  # messages name flags, not Python arguments; one memory limit
            with staged_verdicts(args):  # standard input, --encoding, --delimiter
                return int(args.func(args))
    except BrokenPipeError:  # e.g. `ratings fit ... | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except USER_ERRORS as err:
        msg = (_flagged(err, args) if isinstance(err, OutputError)
               else err.args[0] if isinstance(err, KeyError) and err.args else err)  # fmt: skip
        show_warnings(caught, relabel)  # what was said before the error, first
        text = name_lines(relabel(str(msg)), getattr(args, "verdicts", None))
        print(f"ratings: error: {text}", file=sys.stderr)
        if isinstance(err, InvalidVerdictsError) and len(err.rows):
            shown = rows_table(err.rows.head(10), text, args)
            print(shown.to_string(index=False), file=sys.stderr)
        return EXIT_DATA
    except MemoryError:  # an allocation the size guard did not foresee: a message, not a trace
        print("ratings: error: the machine ran out of memory during this run; nothing was "
              "written. Take per-verdict intervals (--no-cluster) or cluster by a coarser column "
              "(--cluster COLUMN), fit fewer models (e.g. one --scope), or count a large log "
              "where it lies (--engine duckdb).", file=sys.stderr)  # fmt: skip
        return EXIT_DATA


def program() -> NoReturn:
    """The ``ratings`` program: :func:`main`, then out without the interpreter's teardown."""
    leave(main())


if __name__ == "__main__":  # pragma: no cover
    program()
