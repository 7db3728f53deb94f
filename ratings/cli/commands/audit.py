"""``ratings audit VERDICTS``: the judges' position bias, self-preference and agreement."""

from __future__ import annotations

import argparse
import sys

from ratings.cli.fitting import FIT_INPUTS, cluster_arg, input_paths, read_for_fit
from ratings.cli.kit import Command, add_input_options, add_output_options, add_verdicts
from ratings.cli.notes import warn_line

__all__ = ["COMMAND"]


def _arguments(p: argparse.ArgumentParser) -> None:
    add_verdicts(p, "verdict log: .csv, .tsv, .parquet or .jsonl")
    add_input_options(p)
    p.add_argument("--scope", help="audit only verdicts of this scope (required if several)")
    p.add_argument("--families", metavar="FILE",
                   help="CSV with columns name,family for models and judges (self-preference "
                        "is estimated for judges with a family)")
    p.add_argument("--model", choices=["bt", "crowd-bt"], default="bt",
                   help="Bradley-Terry (default) or Crowd-BT (adds each judge's eta)")
    p.add_argument("--effects", metavar="EFFECT,...",
                   default="position,self-preference",
                   help="judge effects to fit: position and/or self-preference (default both); "
                        "effects the verdicts cannot estimate are reported as such and left "
                        "out")  # fmt: skip
    p.add_argument("--judge-quality", metavar="JUDGES", help="crowd-bt: fix eta (a JSON file "
                   "from `ratings judges`)")
    p.add_argument("--fit-new-judges", action="store_true",
                   help="crowd-bt: estimate eta for judges missing from --judge-quality")
    p.add_argument("--level", type=float, default=0.95, metavar="LEVEL",
                   help="confidence level (default 0.95)")
    p.add_argument("--n-boot", type=int, default=1000, metavar="N",
                   help="task-bootstrap resamples for agreement intervals (default 1000)")
    p.add_argument("--seed", type=int, default=0, metavar="SEED",
                   help="bootstrap seed (default 0)")
    p.add_argument("-o", "--out", metavar="FILE",
                   help="write the per-judge table (.csv) or the whole report (.json)")
    add_output_options(p)


def run(args: argparse.Namespace) -> int:
    """Audit the judges; print the report or write it; the notes on stderr."""
    import warnings

    import ratings
    from ratings.audit.judge_audit import AuditWarning

    with warnings.catch_warnings():  # the notes are printed below
        warnings.simplefilter("ignore", AuditWarning)
        result = ratings.audit(
            read_for_fit(args), scope=args.scope, families=args.families,
            model=ratings.CrowdBT(judge_quality=args.judge_quality,
                                  fit_new_judges=args.fit_new_judges)
            if args.model == "crowd-bt" else "bt", effects=args.effects,
            cluster=cluster_arg(args), level=args.level, n_boot=args.n_boot, seed=args.seed)
    if args.out:
        result.write(args.out, inputs=input_paths(args), csv_escape=args.csv_escape)
        print(f"wrote the audit of {len(result.judges)} judge(s) to {args.out}", file=sys.stderr)
    else:
        print(result.summary())
    for note in result.notes:
        warn_line(note)
    return 0


COMMAND = Command(
    name="audit",
    help="judge audit: position bias, self-preference, agreement",
    description="Audit the judges: position bias (slot A), self-preference (with --families) "
                "and agreement with the fitted ratings, with intervals.",
    examples=("ratings audit verdicts.csv --families families.csv",
              "ratings audit verdicts.csv -o audit.csv"),
    add_arguments=_arguments,
    run=run,
    inputs=FIT_INPUTS,
    outputs={"out": "--out"},
    order=80,
)  # fmt: skip
