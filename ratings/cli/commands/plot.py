"""``ratings plot RATINGS -o IMAGE``: Elo bands (or the judge audit, or style coefficients) from
a saved table."""

from __future__ import annotations

import argparse
import sys

from ratings.cli.kit import Command

__all__ = ["COMMAND"]


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("ratings_table", metavar="RATINGS", help="table written by `fit --out` "
                   "(.csv or .json); several scopes give one band per scope; an `audit --out` "
                   "table draws the judge audit, a `fit --style-out` table the coefficients")
    p.add_argument("-o", "--out", required=True, metavar="IMAGE",
                   help="image file: .png, .svg or .pdf")
    p.add_argument("--top", type=int, metavar="K",
                   help="show the best K models and summarise the rest")
    p.add_argument("--highlight", metavar="A,B", help="models to highlight")
    p.add_argument("--title", help="plot title (long titles wrap)")
    p.add_argument("--size", metavar="W,H", help="figure size in inches (default: fitted to "
                   "the rows)")
    p.add_argument("--dpi", type=float, metavar="DPI",
                   help="resolution of a PNG in dots per inch (default 100)")
    p.add_argument("--raw", metavar="RAW", help="with a style-controlled RATINGS (`fit "
                   "--style ... --out`): the plain fit's table; draws both side by side")
    p.add_argument("--style-table", metavar="STYLE", help="with an audit table as RATINGS "
                   "(`audit --out`): the style coefficients (`fit --style-out`) to draw below "
                   "the judges")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    """Draw the table and write the image."""
    from ratings.plot.bands import plot_table

    highlight = None if args.highlight is None else [h.strip() for h in args.highlight.split(",")]
    plot_table(args.ratings_table, args.out, top=args.top, highlight=highlight, title=args.title,
               size=args.size, dpi=args.dpi, raw=args.raw, style_table=args.style_table)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


COMMAND = Command(
    name="plot",
    help="plot Elo bands (95%% CI) from a ratings table",
    description="Plot each model's Elo and its interval as a band, from a table written by "
                "`fit --out` or `combine --out`.",
    examples=("ratings plot ratings.csv -o bands.png --top 20",),
    add_arguments=_arguments,
    run=run,
    inputs={"ratings_table": "RATINGS", "raw": "--raw", "style_table": "--style-table"},
    outputs={"out": "--out"},
    order=70,
)  # fmt: skip
