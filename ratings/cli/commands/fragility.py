"""``ratings fragility VERDICTS``: how few verdicts reverse each pair of neighbours."""

from __future__ import annotations

import argparse
import sys

from ratings.cli.fitting import fit_options, input_paths, read_for_fit
from ratings.cli.kit import Command, add_output_options, add_verdicts
from ratings.cli.tables import add_precision_option, check_table_suffix, write_table

__all__ = ["COMMAND"]


def _arguments(p: argparse.ArgumentParser) -> None:
    from ratings.cli.fitting import add_fit_options

    add_verdicts(p, "verdict log: .csv, .tsv, .parquet or .jsonl")
    add_fit_options(p, bt=False, model=False, effects=False)
    g = p.add_argument_group("the search")
    g.add_argument("--max-refits", type=int, default=8, metavar="N",
                   help="refits per pair and search (verdicts, tasks) to find a reversing set, "
                        "and as many to shorten it (default 8)")
    o = p.add_argument_group("outputs")
    o.add_argument("-o", "--out", metavar="FILE",
                   help="write the pairs table to FILE (.csv, .tsv, .json, .jsonl, .parquet; "
                        "verdicts and tasks as lists)")
    o.add_argument("--loo-out", metavar="FILE",
                   help="write the leave-one-judge-out / leave-one-scope-out changes to FILE")
    add_output_options(o)
    add_precision_option(o)


def run(args: argparse.Namespace) -> int:
    """Fit, search every pair of neighbours, print or write the tables."""
    from ratings.api.fitting import fit_with

    check_table_suffix(args.out, "--out")
    check_table_suffix(args.loo_out, "--loo-out")
    if not (isinstance(args.max_refits, int) and args.max_refits >= 1):
        raise ValueError(f"`--max-refits` must be a whole number >= 1; got {args.max_refits}.")
    options = fit_options(args, model="bt")
    if options.ci == "bootstrap":
        raise ValueError("`ratings fragility` refits the board many times; use `--ci "
                         "sandwich` (the default) or `model`, not the bootstrap.")
    r = fit_with(read_for_fit(args), options)
    frag = r.fragility(max_refits=args.max_refits)
    inputs = input_paths(args)
    if args.out:
        table = frag.pairs.assign(verdicts=frag.pairs["verdicts"].map(_joined),
                                  tasks=frag.pairs["tasks"].map(_joined))
        write_table(table, args.out, inputs=inputs, csv_escape=args.csv_escape,
                    precision=args.precision)
        print(f"wrote {len(table)} pairs of neighbours to {args.out}", file=sys.stderr)
        for note in frag.notes:
            print(note, file=sys.stderr)
    else:
        print(frag.summary())
    if args.loo_out:
        write_table(frag.leave_one_out, args.loo_out, inputs=inputs,
                    csv_escape=args.csv_escape, precision=args.precision)
        print(f"wrote {len(frag.leave_one_out)} leave-one-out rows to {args.loo_out}",
              file=sys.stderr)
    return 0


def _joined(values) -> str:
    """A list cell as text: ``3;17;42``."""
    return ";".join(str(v) for v in values)


COMMAND = Command(
    name="fragility",
    help="the fewest verdicts (and tasks) whose removal reverses each pair of neighbours",
    description="How fragile a board's order is: for each pair of neighbours, the fewest "
                "verdicts and the fewest tasks whose removal reverses them (found from the "
                "verdicts' influence, confirmed by refitting without them; verdicts are the "
                "0-based data rows of the log), each rating's change when one judge (or scope) "
                "is left out, and for pairs the rank intervals do not separate about how many "
                "more verdicts at the current mix would.",
    examples=("ratings fragility verdicts.csv --scope analytical --out fragility.csv",),
    add_arguments=_arguments,
    run=run,
    inputs={"verdicts": "VERDICTS"},
    outputs={"out": "--out", "loo_out": "--loo-out"},
    order=57,
)  # fmt: skip
