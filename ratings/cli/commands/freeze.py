"""``ratings freeze RATINGS --registry REGISTRY``: new models' index values, frozen."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from ratings.cli.kit import Command, add_output_options
from ratings.core.errors import DataWarning

__all__ = ["COMMAND"]


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("ratings_table", metavar="RATINGS",
                   help="headline table (`combine --out`; its 'combined' rows) or `fit --out`")
    p.add_argument("--registry", required=True, metavar="REGISTRY",
                   help="registry CSV (created if absent; written in place)")
    p.add_argument("--refreeze", action="append", default=[], metavar="MODEL",
                   help="replace this model's frozen entry (repeatable)")
    p.add_argument("--date", help="freeze date (default: today, UTC)")
    p.add_argument("--scale", metavar="NAME=RATING",
                   help="the board's anchor, for a table that does not record it ('mean=1000': "
                        "centred)")  # fmt: skip
    p.add_argument("--convert", action="store_true",
                   help="shift a board on another scale onto the registry's (its anchor model "
                        "must be on the board; intervals are not carried over); without it, "
                        "such a board is refused")  # fmt: skip
    add_output_options(p)


def run(args: argparse.Namespace) -> int:
    """Freeze the table's models into the registry; print what was added and the registry."""
    from ratings.result import format_table
    from ratings.scopes.registry import freeze_file, load_registry

    before, frozen = set(), None
    if Path(args.registry).exists():
        with warnings.catch_warnings():  # said once, by the freeze itself
            warnings.simplefilter("ignore", DataWarning)
            frozen = load_registry(args.registry)
            before = set(frozen["model"])
    reg = freeze_file(args.ratings_table, args.registry, refreeze=args.refreeze, date=args.date,
                      csv_escape=args.csv_escape, scale=args.scale,
                      convert=args.convert)  # fmt: skip
    added = [m for m in reg["model"] if m not in before]
    print(f"registry {args.registry}: {len(added)} model(s) added, "
          f"{len(args.refreeze)} refrozen, {len(reg)} in all", file=sys.stderr)  # fmt: skip
    shown = ["model", "elo", "lower", "upper", "index", "frozen_on", "anchor", "anchor_rating"]
    print(format_table(reg[shown]))
    if frozen is not None and len(frozen) and not args.convert:  # the refit against the frozen
        from ratings.io.readers import read_file
        from ratings.stability.drift import frozen_moves

        table = read_file(args.ratings_table)
        if "scope" in table and (table["scope"] == "combined").any():  # the headline's rows
            table = table[table["scope"] == "combined"]
        for line in frozen_moves(frozen, table):
            print(f"moved beyond its frozen interval: {line}", file=sys.stderr)
    return 0


COMMAND = Command(
    name="freeze",
    help="add new models' index values to a frozen registry",
    description="Add the models of a ratings table to a frozen registry: a model keeps the "
                "index value it was frozen with until refrozen.",
    examples=("ratings freeze ratings.csv --registry registry.csv",),
    add_arguments=_arguments,
    run=run,
    inputs={"ratings_table": "RATINGS"},
    outputs={"registry": "--registry"},
    order=60,
)  # fmt: skip
