"""The ``next`` subcommand of the ``ratings`` command line: plan the next batch of matches.

``ratings next VERDICTS --submissions SUBS.csv --judges J1,J2,J3 --n 100 --seed 7 --out next.csv``

:func:`add_next_parser` registers the subcommand (its parser, and :func:`cmd_next` as the
function to run) on the ``ratings`` command line's subparsers; :func:`ratings.cli.main` runs it
and maps its errors to exit statuses like every other subcommand's. A verdict CSV holding only a
header is a valid empty log (a new benchmark).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import pandas as pd

from ratings.io import read_verdicts, write_atomic
from ratings.io.readers import format_of, is_header_only

MIN_MATCHES = 10  # the planner's default (sampling.plan.DEFAULT_MIN_MATCHES; checked in tests)

__all__ = ["MIN_MATCHES", "add_next_parser", "cmd_next", "read_submissions", "read_verdict_file"]


def _judge_list(text: str) -> list[str]:
    judges = [j.strip() for j in text.split(",")]
    if not text.strip() or any(not j for j in judges):
        raise argparse.ArgumentTypeError(
            f"expected comma-separated judge names like 'gpt-judge,claude-judge'; got {text!r}"
        )
    return judges


def read_verdict_file(path: str | os.PathLike[str]) -> pd.DataFrame | None:
    """Read a verdict log with :func:`ratings.read_verdicts`; ``None`` for a header-only CSV.

    Parameters
    ----------
    path : path
        Any format :func:`ratings.read_verdicts` reads. A ``.csv`` / ``.tsv`` file with a header
        and no rows is an empty log (``None``), which ``read_verdicts`` would reject.

    Returns
    -------
    pandas.DataFrame or None
        The canonical verdicts, or ``None`` for an empty log.
    """
    if is_header_only(path):
        return None
    return read_verdicts(path).verdicts


def read_submissions(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a submissions table (``model``, ``task_id``; .csv or .tsv, optionally compressed).

    Every field is read as text with surrounding spaces removed; an empty ``task_id`` lists a
    model without submissions.
    """
    name = os.fspath(path)
    fmt, sep, compression = format_of(os.path.basename(name))
    if fmt != "csv":
        raise ValueError(f"`--submissions` must be a .csv or .tsv file; got {name!r}.")
    try:
        frame = pd.read_csv(name, sep=sep, dtype=str, compression=compression)
    except pd.errors.EmptyDataError:
        raise ValueError(
            f"Submissions file {name!r} is empty; it needs a header with 'model' and 'task_id'."
        ) from None
    frame.columns = [str(c).strip() for c in frame.columns]
    for col in ("model", "task_id"):
        if col in frame.columns:
            text = frame[col].str.strip()
            frame[col] = text.where(text != "")
    return frame


def add_next_parser(subparsers) -> argparse.ArgumentParser:
    """Register the ``next`` subcommand on ``subparsers`` (from ``add_subparsers()``).

    Returns
    -------
    argparse.ArgumentParser
        The subcommand's parser; its default ``func`` is :func:`cmd_next`.
    """
    p = subparsers.add_parser(
        "next",
        help="plan the next batch of matches (balanced start, then the most informative pairs)",
        description="Plan the next matches: task_id, model_a, model_b (A/B random), judge, "
        "phase and score, written to --out. A verdict CSV with only a header is an empty log.",
    )
    p.add_argument("verdicts", help="verdict log so far: .csv, .tsv, .parquet or .jsonl")
    p.add_argument(
        "--submissions",
        metavar="SUBS.csv",
        help="CSV of the (model, task_id) answers that exist; an empty task_id lists a model "
        "without answers (default: those seen in the verdicts)",
    )
    p.add_argument("--judges", required=True, type=_judge_list, metavar="J1,J2,...",
                   help="the judge panel, used in turn")  # fmt: skip
    p.add_argument("--n", required=True, type=int, help="number of matches to plan")
    p.add_argument("--seed", required=True, type=int, help="seed of every random choice")
    p.add_argument(
        "--out",
        required=True,
        metavar="FILE",
        help="where to write the plan (.csv, .tsv, .json, .jsonl or .parquet)",
    )
    p.add_argument("--phase", choices=["auto", "balanced", "active"], default="auto",
                   help="auto (default): balanced until every model has --min-matches, then "
                        "active")  # fmt: skip
    p.add_argument("--min-matches", type=int, default=MIN_MATCHES,
                   help=f"matches per model before the active phase (default "
                        f"{MIN_MATCHES})")  # fmt: skip
    p.add_argument("--scope", help="plan for this scope of the verdicts (required if several)")
    p.add_argument(
        "--anchor",
        metavar="NAME=RATING",
        help="score uncertainty relative to this model (default: centred ratings)",
    )
    p.set_defaults(func=cmd_next)
    return p


def cmd_next(args: argparse.Namespace) -> int:
    """Run ``next``: read, plan, write atomically; warnings go to stderr. Returns 0."""
    from sampling._board import PlanWarning
    from sampling.plan import plan_matches

    inputs = [args.verdicts] + ([args.submissions] if args.submissions else [])
    verdicts = read_verdict_file(args.verdicts)
    subs = read_submissions(args.submissions) if args.submissions else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PlanWarning)
        plan = plan_matches(verdicts, subs, args.judges, args.n, seed=args.seed, phase=args.phase,
                            min_matches=args.min_matches, scope=args.scope,
                            anchor=args.anchor)  # fmt: skip
    for w in caught:
        if issubclass(w.category, PlanWarning):
            print(f"ratings next: warning: {w.message}", file=sys.stderr)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    write_atomic(plan, args.out, inputs=inputs)
    phases = plan["phase"].value_counts()
    print(f"wrote {len(plan)} matches ({int(phases.get('balanced', 0))} balanced, "
          f"{int(phases.get('active', 0))} active) to {args.out}", file=sys.stderr)  # fmt: skip
    return 0

