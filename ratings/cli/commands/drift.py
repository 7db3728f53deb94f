"""``ratings drift OLD NEW``: how a board moved between two fits."""

from __future__ import annotations

import argparse
import sys

from ratings.cli.fitting import check_suffix
from ratings.cli.kit import Command, add_output_options
from ratings.cli.tables import add_precision_option, check_table_suffix, write_table

__all__ = ["COMMAND"]


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("old", metavar="OLD", help="the published board (`fit --out` table; its "
                   "covariance file OLD.cov.csv is read when present)")
    p.add_argument("new", metavar="NEW", help="the refit or placed board (`fit --out` / "
                   "`place --out`)")
    o = p.add_argument_group("outputs")
    o.add_argument("-o", "--out", metavar="FILE",
                   help="write the drift table to FILE (.csv, .tsv, .json, .jsonl, .parquet)")
    o.add_argument("--plot", metavar="IMAGE",
                   help="draw old against new (interval bands) to IMAGE (.png, .svg, .pdf)")
    o.add_argument("--title", help="the chart's title")
    add_output_options(o)
    add_precision_option(o)


def run(args: argparse.Namespace) -> int:
    """Compare the boards; print the drift or write it, and draw the chart."""
    from ratings.stability.drift import drift

    check_table_suffix(args.out, "--out")
    check_suffix(args.plot, "--plot", (".png", ".svg", ".pdf"))
    d = drift(args.old, args.new)
    inputs = [args.old, args.new]
    if args.out:
        write_table(d.table, args.out, inputs=inputs, csv_escape=args.csv_escape,
                    precision=args.precision)
        print(f"wrote the drift of {len(d.table)} models to {args.out}", file=sys.stderr)
        for note in d.notes:
            print(note, file=sys.stderr)
    else:
        print(d.summary())
    if args.plot:
        d.plot(args.plot, title=args.title)
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


COMMAND = Command(
    name="drift",
    help="how a board moved between two fits (Elo, z, ranks, models new and gone)",
    description="Compare a published board with a refit (or a placement): per model the "
                "Elo change, the change over its standard error (z, both fits' variances), "
                "the rank change, models new and gone, and anchor changes; optionally a band "
                "chart of old against new.",
    examples=("ratings drift board.csv refit.csv --plot drift.png",),
    add_arguments=_arguments,
    run=run,
    inputs={"old": "OLD", "new": "NEW"},
    outputs={"out": "--out", "plot": "--plot"},
    order=56,
)  # fmt: skip
