"""``ratings combine VERDICTS``: per-scope fits and the combined headline Elo."""

from __future__ import annotations

import argparse

from ratings.cli.fitting import (
    FIT_INPUTS,
    add_combine_options,
    add_fit_options,
    combined,
    fit_options,
    read_for_fit,
    weights_arg,
    with_rubric,
    write_or_print,
)
from ratings.cli.kit import Command, add_output_options, add_verdicts
from ratings.cli.notes import report_judges
from ratings.cli.tables import add_precision_option, check_table_suffix

__all__ = ["COMMAND"]


def _arguments(p: argparse.ArgumentParser) -> None:
    add_verdicts(p, "verdict log with a `scope` column")
    add_fit_options(p, scope=False, bt=False, ties=True)
    add_combine_options(p)
    p.add_argument("-o", "--out", metavar="FILE",
                   help="write the table (all scopes + combined; .csv, .tsv, .json, .jsonl or "
                        ".parquet)")  # fmt: skip
    add_output_options(p)
    add_precision_option(p)


def run(args: argparse.Namespace) -> int:
    """Fit every scope, combine them, print or write the table (both methods' headline SE)."""
    from ratings.result import format_table
    from ratings.scopes.combine import combine, scopes_frame

    check_table_suffix(args.out, "--out")
    weights = weights_arg(args.weights)
    options = fit_options(args)  # options first: no data is read for a bad one
    log = with_rubric(args, read_for_fit(args))
    results, head = combined(args, log, weights, options)
    missing = "drop" if args.drop_missing else "error"
    other = combine(results, weights=weights, missing=missing,
                    method="independent" if args.method == "joint" else "joint")  # fmt: skip
    table = scopes_frame(results, head)
    alt = f"se_{other.combine_method}"
    table[alt] = table["model"].map(other.se).where(table["scope"] == "combined")
    text = "\n\n".join(r.summary() for r in results.values())
    shown = head.to_frame().assign(**{alt: lambda f: f["model"].map(other.se)})
    text += "\n\n" + head.summary().split("\n\n")[0] + "\n" + (
        f"{alt} = the headline SE under the other method.\n\n" + format_table(shown))
    write_or_print(table, args, text)
    for scope, r in results.items():
        report_judges(r.judges, scope)
    return 0


COMMAND = Command(
    name="combine",
    help="per-scope fits and the combined headline Elo",
    description="Fit every scope of a log (Crowd-BT for judged scopes, or Bradley-Terry with "
                "the tie model of --ties or the soft scores of --soft; Bradley-Terry with half "
                "wins for deterministic ones) "
                "and combine them into one headline Elo per model.",
    examples=("ratings combine verdicts.csv --rubric rubric.csv -o board.csv",),
    add_arguments=_arguments,
    run=run,
    inputs={**FIT_INPUTS, "rubric": "--rubric"},
    outputs={"out": "--out"},
    defaults={"by": None, "judges_out": None, "rejected": None, "pairs": None, "scope": None},
    order=30,
)  # fmt: skip
