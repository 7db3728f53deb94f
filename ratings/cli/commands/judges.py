"""``ratings judges VERDICTS -o JUDGES``: each judge's quality (Crowd-BT eta), saved for reuse."""

from __future__ import annotations

import argparse
import sys

from ratings.cli.fitting import (
    FIT_INPUTS,
    add_fit_options,
    check_suffix,
    fit_options,
    input_paths,
    read_for_fit,
)
from ratings.cli.kit import Command, add_verdicts
from ratings.cli.notes import report_judges

__all__ = ["COMMAND"]


def _arguments(p: argparse.ArgumentParser) -> None:
    add_verdicts(p, "verdict log with a `judge` column")
    add_fit_options(p, bt=False, model=False, effects=False)
    p.add_argument("--model", help=argparse.SUPPRESS)  # refused with a reason, see run
    p.add_argument("-o", "--out", metavar="JUDGES", required=True,
                   help="write eta, SE, interval and counts per judge (JSON)")


def run(args: argparse.Namespace) -> int:
    """Fit Crowd-BT, save the judges' qualities, print them."""
    from ratings.api.fitting import fit_with
    from ratings.result import format_table
    from ratings.scopes.judge_files import save_judge_quality

    if args.model not in (None, "crowd-bt"):
        raise ValueError(f"`ratings judges` fits Crowd-BT (judge quality eta); `--model "
                         f"{args.model}` is not an option here. Drop `--model`, or use "
                         "`ratings fit --model bt` for Bradley-Terry ratings.")  # fmt: skip
    check_suffix(args.out, "--out", (".json",))
    options = fit_options(args, model="crowd-bt")
    r = fit_with(read_for_fit(args), options)
    save_judge_quality(r, args.out, source=args.verdicts, inputs=input_paths(args))
    print(format_table(r.judges.reset_index()))
    report_judges(r.judges, r.scope)
    print(f"wrote judge quality for {len(r.judges)} judge(s) to {args.out}", file=sys.stderr)
    return 0


COMMAND = Command(
    name="judges",
    help="fit judge quality (Crowd-BT eta) for reuse in later fits",
    description="Fit each judge's quality (Crowd-BT eta: how often it agrees with the stronger "
                "model) and write it for reuse by later fits (--judge-quality). `judges` always "
                "fits Crowd-BT.",
    examples=("ratings judges verdicts.csv --out judges.json",),
    add_arguments=_arguments,
    run=run,
    inputs=FIT_INPUTS,
    outputs={"out": "--out"},
    defaults={"families": None},
    order=20,
)  # fmt: skip
