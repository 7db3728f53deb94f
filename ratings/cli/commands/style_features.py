"""``ratings style-features ANSWERS --text-a COL --text-b COL --out FILE``: per-side answer-style
counts (:mod:`ratings.features`) for a verdict log that carries the answers' texts."""

from __future__ import annotations

import argparse

from ratings.cli.kit import Command, add_output_options

__all__ = ["COMMAND", "run"]


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("answers", metavar="ANSWERS",
                   help="table with the two answers' texts (.csv, .tsv, .parquet, .jsonl, ...)")
    p.add_argument("--text-a", required=True, metavar="COL", help="column of answer A's text")
    p.add_argument("--text-b", required=True, metavar="COL", help="column of answer B's text")
    p.add_argument("-o", "--out", required=True, metavar="FILE",
                   help="the table with the feature columns added (.csv, .tsv, .parquet, "
                        ".jsonl, .json)")  # fmt: skip
    add_output_options(p)


def run(args: argparse.Namespace) -> int:
    """Read ANSWERS, add the feature columns, write ``--out`` atomically."""
    from ratings.features import add_features
    from ratings.io import write_atomic
    from ratings.io.readers import read_file

    frame = read_file(args.answers)
    out = add_features(frame, args.text_a, args.text_b)
    write_atomic(out, args.out, inputs=[args.answers], csv_escape=args.csv_escape)
    print(f"{len(out):,} rows with tokens, headers, lists and bold per side -> {args.out}")
    return 0


COMMAND = Command(
    name="style-features",
    help="count tokens, headers, list items and bold spans of both answers (for --style)",
    description="Add the columns tokens_a, tokens_b, headers_a, headers_b, lists_a, lists_b, "
                "bold_a, bold_b to a table of verdicts with the answers' texts, for `ratings fit "
                "--style tokens,headers,lists,bold`. Fenced code blocks are left out of every "
                "count.",
    examples=("ratings style-features answers.csv --text-a answer_a --text-b answer_b "
              "-o styled.csv",),
    add_arguments=_arguments,
    run=run,
    inputs={"answers": "ANSWERS"},
    outputs={"out": "--out"},
    order=110,
)  # fmt: skip
