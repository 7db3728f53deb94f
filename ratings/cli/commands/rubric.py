"""``ratings rubric RUBRIC -o MATCHES``: rubric checks as synthetic matches (scope ``rubric``)."""

from __future__ import annotations

import argparse
import sys

from ratings.cli.inputs import parse_mapping
from ratings.cli.kit import Command, add_output_options
from ratings.cli.tables import check_table_suffix, write_table

__all__ = ["COMMAND"]


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("rubric", metavar="RUBRIC",
                   help="rubric results: task_id, model, check_id, passed")
    p.add_argument("--method", choices=["rate", "check"], default="rate",
                   help="one match per pair and task by pass rate (default), or one per check")
    p.add_argument("--duplicates", choices=["error", "last"], default="error",
                   help="a check graded twice for one submission: error (default) or keep last")
    p.add_argument("--columns", metavar="OLD=NEW,...", help="map column names")
    p.add_argument("-o", "--out", required=True, metavar="MATCHES",
                   help="synthetic matches (.csv, .tsv, .json, .jsonl or .parquet)")
    add_output_options(p)


def run(args: argparse.Namespace) -> int:
    """Read the rubric, write its matches."""
    from ratings.scopes.rubric import read_rubric, rubric_to_matches

    check_table_suffix(args.out, "--out")
    rubric = read_rubric(args.rubric, columns=parse_mapping(args.columns, "--columns"),
                         duplicates=args.duplicates)  # fmt: skip
    matches = rubric_to_matches(rubric, method=args.method)
    write_table(matches, args.out, inputs=[args.rubric], csv_escape=args.csv_escape)
    print(f"wrote {len(matches)} synthetic matches ({args.method}) from {len(rubric)} checks "
          f"to {args.out}", file=sys.stderr)  # fmt: skip
    return 0


COMMAND = Command(
    name="rubric",
    help="turn rubric checks into synthetic matches (scope rubric)",
    description="Turn rubric checks (task_id, model, check_id, passed) into synthetic matches "
                "between models on the same task (scope 'rubric'), ready to append to a log.",
    examples=("ratings rubric rubric.csv -o matches.csv",),
    add_arguments=_arguments,
    run=run,
    inputs={"rubric": "RUBRIC"},
    outputs={"out": "--out"},
    order=40,
)  # fmt: skip
