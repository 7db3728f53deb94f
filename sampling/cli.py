"""The ``next`` subcommand of the ``ratings`` command line: plan the next batch of matches.

``ratings next VERDICTS --submissions SUBS.csv --judges J1,J2,J3 --n 100 --seed 7 --out next.csv``

Campaign options: ``--scopes`` (each scope's own batch, one output with a ``scope`` column),
``--task-judges`` (routing), ``--objective`` and ``--max-share``, ``--forfeits FILE`` (forfeit
rows of failed submissions, written apart from the matches to judge).

:data:`COMMAND` is the subcommand, built with the command line's kit (:mod:`ratings.cli.kit`)
like every built-in one: ``pyproject.toml`` names it in the entry-point group
``ratings.commands`` (:mod:`ratings.cli.commands`), and :func:`ratings.cli.app.main` runs it and
maps its errors to exit statuses like every other subcommand's. The verdicts are read by the
kit's :func:`~ratings.cli.kit.read_log`, as every subcommand reads them; a verdict CSV holding
only a header is a valid empty log (a new benchmark).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import warnings
from collections.abc import Sequence

import pandas as pd

from ratings.kit import (
    DETERMINISTIC_JUDGE,
    TRANSFORMS,
    Command,
    InvalidVerdictsError,
    add_command,
    add_input_options,
    add_memory_option,
    add_output_options,
    format_of,
    missing_task_message,
    read_log,
    warn_line,
    write_atomic,
)

#: The planner's default (sampling.design.plan.DEFAULT_MIN_MATCHES; checked in tests).
MIN_MATCHES = 10

__all__ = [
    "COMMAND",
    "FORFEIT_LOG_COLUMNS",
    "MIN_MATCHES",
    "add_next_parser",
    "cmd_next",
    "plan_from_args",
    "read_submissions",
    "read_task_judges",
    "read_verdict_file",
    "write_plan",
]

# Columns of the forfeit file: verdict rows ready to append to the log.
FORFEIT_LOG_COLUMNS = ["task_id", "model_a", "model_b", "winner", "judge", "failed_a",
                       "failed_b"]  # fmt: skip


def _name_list(text: str, example: str) -> list[str]:
    names = [j.strip() for j in text.split(",")]
    if not text.strip() or any(not j for j in names):
        raise argparse.ArgumentTypeError(
            f"expected comma-separated {example}; got {text!r}"
        )
    return names


def _judge_list(text: str) -> list[str]:
    return _name_list(text, "judge names like 'gpt-judge,claude-judge'")


def _scope_list(text: str) -> list[str]:
    return _name_list(text, "scope names like 'analytical,presentation'")


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value >= 1.0:
        raise argparse.ArgumentTypeError(
            f"expected a number >= 1 (times a model's fair share) or 'inf'; got {text!r}"
        )
    return value


def read_verdict_file(path: str | os.PathLike[str], *, columns=None, winner_map=None,
                      keep: Sequence[str] = ()) -> pd.DataFrame | None:  # fmt: skip
    """Read a verdict log as ``ratings next`` does; ``None`` for a header-only CSV.

    Parameters
    ----------
    path : path
        Any format :func:`ratings.read_verdicts` reads. A ``.csv`` / ``.tsv`` file with a header
        and no rows is an empty log (``None``), which ``read_verdicts`` would reject.
    columns, winner_map : mapping, optional
        As for :func:`ratings.read_verdicts` (``--columns``, ``--winner-map``).
    keep : sequence of str, optional
        Other columns to keep (e.g. the ``NAME_a``, ``NAME_b`` columns of ``--style``).

    Returns
    -------
    pandas.DataFrame or None
        The canonical verdicts, or ``None`` for an empty log.
    """
    args = argparse.Namespace(verdicts=path, columns=dict(columns) if columns else None,
                              winner_map=dict(winner_map) if winner_map else None)  # fmt: skip
    log = read_log(args, keep=keep, empty=True)
    return None if log is None else log.verdicts


def _read_text_table(path: str | os.PathLike[str], flag: str, what: str,
                     header: str) -> pd.DataFrame:  # fmt: skip
    """A .csv / .tsv (optionally compressed) with every field as text, column names stripped."""
    name = os.fspath(path)
    fmt, sep, compression = format_of(os.path.basename(name))
    if fmt != "csv":
        raise ValueError(f"`{flag}` must be a .csv or .tsv file; got {name!r}.")
    try:
        frame = pd.read_csv(name, sep=sep, dtype=str, compression=compression)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{what} file {name!r} is empty; it needs a header {header}.") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def read_submissions(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a submissions table (``model``, ``task_id``, optionally ``failed``; .csv or .tsv,
    optionally compressed).

    Every field is read as text with surrounding spaces removed; an empty ``task_id`` lists a
    model without submissions.
    """
    frame = _read_text_table(path, "--submissions", "Submissions", "with 'model' and 'task_id'")
    for col in ("model", "task_id"):
        if col in frame.columns:
            text = frame[col].str.strip()
            frame[col] = text.where(text != "")
    return frame


def read_task_judges(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a routing table (``task_id``, ``judge``; .csv or .tsv, optionally compressed)."""
    return _read_text_table(path, "--task-judges", "Routing", "'task_id,judge'")


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("verdicts", metavar="VERDICTS",
                   help="verdict log so far: .csv, .tsv, .parquet or .jsonl ('-': standard "
                        "input)")  # fmt: skip
    add_input_options(p, cluster=False)  # --columns, --winner-map, --delimiter, --encoding
    p.add_argument(
        "--submissions",
        metavar="SUBS",
        help="CSV of the (model, task_id) answers that exist; an empty task_id lists a model "
        "without answers (default: those seen in the verdicts)",
    )
    p.add_argument("--judges", type=_judge_list, metavar="J1,J2,...",
                   help="the judge panel, used in turn (default: the log's judge, when its "
                        "judge column names one)")  # fmt: skip
    p.add_argument("--n", required=True, type=int, metavar="N", help="number of matches to plan")
    p.add_argument("--seed", type=int, default=0, metavar="SEED",
                   help="seed of every random choice (default 0: the same inputs and seed give "
                        "the same plan)")  # fmt: skip
    p.add_argument(
        "-o",
        "--out",
        required=True,
        metavar="FILE",
        help="where to write the plan (.csv, .tsv, .json, .jsonl or .parquet)",
    )
    p.add_argument("--phase", choices=["auto", "balanced", "active"], default="auto",
                   help="auto (default): balanced until every model has --min-matches, then "
                        "active")  # fmt: skip
    p.add_argument("--min-matches", type=int, default=MIN_MATCHES, metavar="N",
                   help=f"matches per model before the active phase (default "
                        f"{MIN_MATCHES})")  # fmt: skip
    p.add_argument("--scope", help="plan for this scope of the verdicts (required if several; a "
                   "scope without verdicts starts from an empty log)")  # fmt: skip
    p.add_argument("--scopes", type=_scope_list, metavar="S1,S2,...",
                   help="plan each of these scopes from its own verdicts (a scope without "
                        "verdicts starts empty); one --out with a 'scope' column, --n matches "
                        "per scope; not with --scope")  # fmt: skip
    p.add_argument(
        "--anchor",
        metavar="NAME=RATING",
        help="the model the planner's fit is anchored at (only --objective anchored depends on "
        "it; default: centred ratings)",
    )
    p.add_argument("--objective", choices=["pairwise", "anchored"], default="pairwise",
                   help="what active picks reduce: the mean variance of all pairwise "
                        "differences (default; the same for every anchor) or the variances "
                        "relative to --anchor (needs --anchor)")  # fmt: skip
    p.add_argument("--max-share", type=_share, default=3.0, metavar="X",
                   help="a model plays at most X times its fair share (2n/M) of a batch "
                        "(default 3; 'inf': no bound)")  # fmt: skip
    p.add_argument("--task-judges", metavar="FILE",
                   help="CSV task_id,judge: the judges allowed on a task (e.g. the one judge "
                        "that handles video); tasks not listed allow the whole panel")  # fmt: skip
    p.add_argument("--forfeits", metavar="FILE",
                   help="also plan matches on submissions marked failed in --submissions "
                        "(column 'failed'), written here as verdict rows with their winner "
                        "and judge 'deterministic', ready to append to the log; without it, "
                        "failed submissions are left out. They never go to a judge")  # fmt: skip
    p.add_argument("--style", metavar="NAME,...",
                   help="style control in the planner's fit of the verdicts: one coefficient "
                        "per feature from the columns NAME_a and NAME_b (e.g. tokens,headers), "
                        "as in `ratings fit --style`")  # fmt: skip
    p.add_argument("--style-transform", default="normalized",
                   choices=list(TRANSFORMS),
                   help="with --style: how a feature's two sides become one number (default "
                        "normalized: (a - b) / (a + b))")  # fmt: skip
    add_memory_option(p)
    add_output_options(p)


def add_next_parser(subparsers, kit=None) -> argparse.ArgumentParser:
    """Add the ``next`` subcommand to ``subparsers`` (from ``add_subparsers()``): :data:`COMMAND`
    built with :func:`ratings.cli.kit.add_command`; returns its parser (``func`` is
    :func:`cmd_next`). ``kit`` is ignored (the registration signature of earlier releases)."""
    return add_command(subparsers, COMMAND)


def cmd_next(args: argparse.Namespace) -> int:
    """Run ``next``: read, plan, write atomically; warnings go to stderr. Returns 0."""
    from sampling.board.inputs import PlanWarning

    style = _style(args)
    log = read_log(args, keep=_style_columns(style), empty=True)
    verdicts = None if log is None else log.verdicts
    if verdicts is not None and "task_id" not in verdicts.columns:
        raise InvalidVerdictsError(missing_task_message(args.verdicts))
    subs = read_submissions(args.submissions) if args.submissions else None
    if args.judges is None:
        args.judges = _log_judge(args, verdicts)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PlanWarning)
        plan = plan_from_args(args, verdicts, subs)
    for w in caught:
        if issubclass(w.category, PlanWarning):
            warn_line(str(w.message))
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    for line in phase_lines(plan):
        print(f"ratings next: {line}", file=sys.stderr)
    print(write_plan(plan, args), file=sys.stderr)
    if getattr(args, "program", False):
        _compile_for_next_plans()
    return 0


def _compile_for_next_plans() -> None:
    """After a large plan made without the compiled loops (not yet in numba's cache: the first
    large plan of an install), compile them in the background for the next plans
    (:mod:`sampling.warmup`), and say so."""
    from sampling.picks import compiled
    from sampling.warmup import ENV, compile_in_background

    if "sampling.picks.picker_numba" not in sys.modules or compiled.loaded():
        return  # a small plan, or the loop ran
    if compile_in_background():
        print(f"ratings next: compiling the planner's loops in the background for the next "
              f"plans (half a minute of CPU, once per install; {ENV}=0 turns this off)",
              file=sys.stderr)  # fmt: skip


def phase_lines(plan: pd.DataFrame) -> list[str]:
    """Per scope, one line: why the plan has a balanced phase (or none) and how many of its
    judged matches are balanced and active."""
    reasons = plan.attrs.get("phase_reason")
    if reasons is None:
        return []
    judged = plan[plan["judge"] != DETERMINISTIC_JUDGE]
    if isinstance(reasons, str):
        reasons, parts = {None: reasons}, {None: judged}
    else:
        parts = {s: judged[judged["scope"] == s] for s in reasons}
    out = []
    for scope, reason in reasons.items():
        phase = parts[scope]["phase"]
        counts = (f"{int((phase == 'balanced').sum())} balanced, "
                  f"{int((phase == 'active').sum())} active")  # fmt: skip
        out.append((f"{scope}: " if scope is not None else "") + f"{reason}; {counts}")
    return out


def _log_judge(args: argparse.Namespace, verdicts: pd.DataFrame | None) -> list[str]:
    """The panel when ``--judges`` is not given: the one judge the log names (said on
    standard error), else an error naming ``--judges``."""
    names = [] if verdicts is None or "judge" not in verdicts.columns else sorted(
        {str(j) for j in verdicts["judge"].dropna().unique()} - {DETERMINISTIC_JUDGE})
    if len(names) == 1:
        print(f"ratings next: judge {names[0]!r} (the log's one judge; `--judges` to choose "
              "others)", file=sys.stderr)  # fmt: skip
        return names
    found = (f"the log names {len(names)} judges ({', '.join(names[:5])}"
             f"{', ...' if len(names) > 5 else ''})" if names else
             "the log has no judge column" if verdicts is not None else "the log is empty")
    raise ValueError(f"Pass the judge panel with `--judges J1,J2,...`: {found}, so the planner "
                     "cannot choose the judges itself.")


def plan_from_args(args: argparse.Namespace, verdicts, subs) -> pd.DataFrame:
    """Plan from the parsed flags of ``ratings next`` (one scope, or ``--scopes``)."""
    from sampling.design.plan import plan_matches
    from sampling.design.scopes import plan_scopes

    if args.scopes and args.scope:
        raise ValueError("Pass either `--scope` or `--scopes`, not both.")
    options = {
        "phase": args.phase,
        "min_matches": args.min_matches,
        "anchor": args.anchor,
        "objective": args.objective,
        "max_share": None if math.isinf(args.max_share) else args.max_share,
        "task_judges": read_task_judges(args.task_judges) if args.task_judges else None,
        "forfeits": bool(args.forfeits),
    }
    if getattr(args, "max_memory", None) is not None:
        from ratings import Solver

        options["solver"] = Solver(max_memory=args.max_memory)
    style = _style(args)
    if style is not None:
        options["fit_options"] = {"style": style}
    if args.scopes:
        return plan_scopes(verdicts, subs, args.judges, args.n, scopes=args.scopes,
                           seed=args.seed, **options)  # fmt: skip
    return plan_matches(verdicts, subs, args.judges, args.n, seed=args.seed, scope=args.scope,
                        **options)  # fmt: skip


def _style(args: argparse.Namespace):
    """The ``--style`` spec (:class:`ratings.Style`) of the planner's fit, or ``None``."""
    if not getattr(args, "style", None):
        return None
    from ratings import Style

    return Style(args.style, transform=getattr(args, "style_transform", "normalized"))


def _style_columns(style) -> list[str]:
    if style is None:
        return []
    from ratings.kit import style_columns

    return style_columns(style.features)


def write_plan(plan: pd.DataFrame, args: argparse.Namespace) -> str:
    """Write the judged matches to ``--out`` and forfeit rows to ``--forfeits``; the summary."""
    inputs = [p for p in (args.verdicts, args.submissions, args.task_judges) if p]
    escape = getattr(args, "csv_escape", True)  # --no-csv-escape (ratings.cli.kit)
    forfeit = (plan["judge"] == DETERMINISTIC_JUDGE).to_numpy()
    judged = plan.loc[~forfeit].drop(columns=["winner", "failed_a", "failed_b"], errors="ignore")
    if args.forfeits:
        cols = (["scope"] if "scope" in plan.columns else []) + FORFEIT_LOG_COLUMNS
        write_atomic(plan.loc[forfeit, cols].reset_index(drop=True), args.forfeits,
                     inputs=[*inputs, args.out], csv_escape=escape)  # fmt: skip
    write_atomic(judged.reset_index(drop=True), args.out, inputs=inputs, csv_escape=escape)
    phases = judged["phase"].value_counts()
    text = (f"wrote {len(judged)} matches ({int(phases.get('balanced', 0))} balanced, "
            f"{int(phases.get('active', 0))} active)")  # fmt: skip
    if "scope" in plan.columns:
        text += f" for {plan['scope'].nunique()} scope(s)"
    text += f" to {args.out}"
    if args.forfeits:
        text += f"; {int(forfeit.sum())} forfeit row(s) to {args.forfeits}"
    return text


COMMAND = Command(
    name="next",
    help="plan the next batch of matches (balanced start, then the most informative pairs)",
    description="Plan the next matches: task_id, model_a, model_b (A/B random), judge, phase "
                "and score, written to --out. phase is 'balanced' (every model reaches "
                "--min-matches first) or 'active'; score is, for an active pick, how much it "
                "was expected to reduce the objective when picked (Elo^2: the mean variance of "
                "the pairwise differences, or with --objective anchored the sum of the variances "
                "relative to --anchor), higher first; empty for balanced picks. A verdict CSV "
                "with only a header is an empty log.",
    examples=("ratings next battles.csv --columns question_id=task_id --judges j1,j2 --n 50 "
              "--seed 7 -o next.csv",
              "ratings next log.csv --submissions subs.csv --judges j1 --n 100 --seed 1 "
              "-o next.tsv"),
    add_arguments=_arguments,
    run=cmd_next,
    inputs={"verdicts": "VERDICTS", "submissions": "--submissions",
            "task_judges": "--task-judges"},
    outputs={"out": "--out", "forfeits": "--forfeits"},
)  # fmt: skip
