"""``ratings ties VERDICTS``: half wins, Davidson and Rao-Kupper fitted to one log and compared."""

from __future__ import annotations

import argparse
import sys

from ratings.cli.fitting import cluster_arg, write_records
from ratings.cli.inputs import add_input_options, read_log
from ratings.cli.kit import Command, add_output_options, add_verdicts
from ratings.cli.tables import add_precision_option, check_table_suffix

__all__ = ["COMMAND"]


def _arguments(p: argparse.ArgumentParser) -> None:
    add_verdicts(p, "verdict log with ties: .csv, .tsv, .parquet or .jsonl")
    add_input_options(p)
    g = p.add_argument_group("the fits")
    g.add_argument("--scope", help="compare only verdicts of this scope (required if several)")
    g.add_argument("--anchor", metavar="NAME=RATING",
                   help="pin one model at a rating; default: centred at mean 1000")
    g.add_argument("--level", type=float, default=0.95, metavar="LEVEL",
                   help="confidence level of the leader sets (default 0.95)")
    g.add_argument("--bins", type=int, default=5, metavar="N",
                   help="bins of the rating gap for the observed and fitted tie rates "
                        "(default 5)")  # fmt: skip
    o = p.add_argument_group("outputs")
    o.add_argument("-o", "--out", metavar="FILE",
                   help="write each model's rank and Elo under every rule, and whether they "
                        "change, to FILE")  # fmt: skip
    o.add_argument("--rates-out", metavar="FILE",
                   help="write the observed and fitted tie rates by rating gap to FILE")
    add_output_options(o)
    add_precision_option(o)


def run(args: argparse.Namespace) -> int:
    """Fit the three rules, print the comparison, write the tables asked for."""
    from ratings.api.compare_ties import compare_ties

    check_table_suffix(args.out, "--out")
    check_table_suffix(args.rates_out, "--rates-out")
    log = read_log(args)
    comparison = compare_ties(log, bins=args.bins, anchor=args.anchor, level=args.level,
                              scope=args.scope, cluster=cluster_arg(args))  # fmt: skip
    print(comparison.summary())
    for table, out in ((comparison.ranks.reset_index(), args.out),
                       (comparison.tie_rates, args.rates_out)):  # fmt: skip
        if out:
            write_records(table, out, args)
            print(f"wrote {len(table)} rows to {out}", file=sys.stderr)
    return 0


COMMAND = Command(
    name="ties",
    help="compare ties as half wins, Davidson and Rao-Kupper on one log",
    description="Fit the log with ties as half wins and with the Davidson and Rao-Kupper tie "
                "models; report the tie models' log-likelihood and AIC, the observed and fitted "
                "tie rates by rating gap, and the ranks and leader sets that change between "
                "the rules. `ratings fit --ties davidson` fits one of them with intervals.",
    examples=("ratings ties verdicts.csv", "ratings ties verdicts.csv --out ranks.csv "
              "--rates-out tie_rates.csv"),
    add_arguments=_arguments,
    run=run,
    inputs={"verdicts": "VERDICTS"},
    outputs={"out": "--out", "rates_out": "--rates-out"},
    defaults={"judge_quality": None, "families": None},
    order=15,
)  # fmt: skip
