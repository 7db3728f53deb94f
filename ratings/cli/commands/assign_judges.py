"""``ratings assign-judges CHECKS --judges J1,J2 --seed S -o FILE``: one judge per rubric check."""

from __future__ import annotations

import argparse
import os
import sys

from ratings.cli.kit import Command, add_output_options

__all__ = ["COMMAND"]


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("checks", metavar="CHECKS",
                   help="a table with check_id (and task_id), e.g. the rubric itself")  # fmt: skip
    p.add_argument("--judges", required=True, metavar="J1,J2,...", help="the judge panel")
    p.add_argument("--seed", required=True, type=int, help="seed of the tie-breaks")
    p.add_argument("--previous", metavar="FILE",
                   help="an earlier assignment (its checks keep their judges)")  # fmt: skip
    p.add_argument("-o", "--out", required=True, metavar="FILE",
                   help="the assignment (.csv, .tsv, .json, .jsonl or .parquet)")
    add_output_options(p)


def run(args: argparse.Namespace) -> int:
    """Read, assign, write atomically; a summary on stderr."""
    from ratings.io.readers import read_file
    from ratings.io.writers import write_atomic
    from ratings.scopes.check_judges import assign_check_judges

    inputs = [p for p in (args.checks, args.previous) if p]
    previous = read_file(os.fspath(args.previous)) if args.previous else None
    out = assign_check_judges(read_file(os.fspath(args.checks)),
                              [j.strip() for j in args.judges.split(",")], seed=args.seed,
                              previous=previous)  # fmt: skip
    write_atomic(out, args.out, inputs=inputs, csv_escape=args.csv_escape)
    counts = out["judge"].value_counts().sort_index()
    print(f"assigned {len(out)} checks to {args.out}: "
          + ", ".join(f"{j} {n}" for j, n in counts.items()), file=sys.stderr)
    return 0


COMMAND = Command(
    name="assign-judges",
    help="give every rubric check one judge, balanced and stable when checks are added",
    description="Give every rubric check (check_id, within task_id when given) one judge: "
                "judges' counts differ by at most one, and a check keeps its judge when checks "
                "are appended to CHECKS (or listed in --previous).",
    examples=("ratings assign-judges rubric.csv --judges j1,j2 --seed 1 -o judges.csv",),
    add_arguments=_arguments,
    run=run,
    inputs={"checks": "CHECKS", "previous": "--previous"},
    outputs={"out": "--out"},
    order=50,
)  # fmt: skip
