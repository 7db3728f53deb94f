"""``ratings place NEW_LOG --reference BOARD``: new models placed on a frozen board."""

from __future__ import annotations

import argparse
import sys

from ratings.cli.fitting import cluster_arg
from ratings.cli.kit import Command, add_input_options, add_output_options, add_verdicts, read_log
from ratings.cli.tables import add_precision_option, check_table_suffix, write_table

__all__ = ["COMMAND"]


def _arguments(p: argparse.ArgumentParser) -> None:
    add_verdicts(p, "verdicts of the new models against the board's models and each other")
    p.add_argument("--reference", required=True, metavar="BOARD",
                   help="the published board: a table written by `ratings fit --out` (its "
                        "covariance file BOARD.cov.csv, from `fit --out BOARD.csv --cov`, is "
                        "read when present)")
    p.add_argument("--reference-cov", metavar="COV",
                   help="the board's covariance file, when not beside it as BOARD.cov.csv")
    add_input_options(p)
    g = p.add_argument_group("the placement")
    g.add_argument("--scope", help="place with verdicts of this scope only")
    g.add_argument("--ci", choices=["sandwich", "sandwich-z", "model"], default="sandwich",
                   help="sandwich (default; clustered: CR2 with df per contrast), sandwich-z "
                        "(CR1, normal quantile) or model; the board's covariance is added")
    g.add_argument("--level", type=float, default=None, metavar="LEVEL",
                   help="confidence level (default: the board's)")
    o = p.add_argument_group("outputs")
    o.add_argument("-o", "--out", metavar="FILE",
                   help="write the board with the new models to FILE (.csv, .tsv, .jsonl or "
                        ".parquet); columns placed and reference_cov say which were placed")
    o.add_argument("--cov", action="store_true",
                   help="with --out FILE.csv: also write the placed board's covariance beside "
                        "it as FILE.cov.csv")
    add_output_options(o)
    add_precision_option(o)


def run(args: argparse.Namespace) -> int:
    """Place the new models; print the board or write it (and its covariance)."""
    from ratings.scopes.scale import board_info
    from ratings.stability.place import place

    check_table_suffix(args.out, "--out")
    if args.cov and not args.out:
        raise ValueError("`--cov` writes the covariance beside `--out FILE` (FILE.cov.csv): "
                         "pass `--out`.")
    log = read_log(args)
    r = place(log, reference=args.reference, reference_cov=args.reference_cov,
              scope=args.scope, cluster=cluster_arg(args), ci=args.ci, level=args.level)
    inputs = [p for p in (args.verdicts, args.reference, args.reference_cov) if p]
    if args.out:
        write_table(r.to_frame().assign(**board_info(r)), args.out, inputs=inputs,
                    csv_escape=args.csv_escape, precision=args.precision)
        print(f"wrote {len(r.models)} ratings ({len(r.placement.new)} placed) to {args.out}",
              file=sys.stderr)
        if args.cov:
            from ratings.stability.board import write_covariance

            path = write_covariance(r, args.out, inputs=inputs)
            print(f"wrote the ratings' covariance to {path}", file=sys.stderr)
    else:
        print(r.summary())
    return 0


COMMAND = Command(
    name="place",
    help="place new models on a published board without moving it",
    description="Place new models on a published board (written by `ratings fit --out "
                "board.csv --cov`): the board's models keep their Elo "
                "(fixed offsets), only the new models are estimated from their verdicts "
                "against the board and each other, on the board's scale and anchor. Their "
                "intervals include the board's own uncertainty (two-step variance) when the "
                "board's covariance file is there.",
    examples=("ratings place new.csv --reference board.csv --out placed.csv --cov",
              "ratings place new.csv --reference board.csv --reference-cov board_cov.csv"),
    add_arguments=_arguments,
    run=run,
    inputs={"verdicts": "VERDICTS", "reference": "--reference",
            "reference_cov": "--reference-cov"},
    outputs={"out": "--out"},
    order=55,
)  # fmt: skip
