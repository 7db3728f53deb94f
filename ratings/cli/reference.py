"""The command-line reference (``docs/cli.md``), written from the parsers themselves.

``python -m ratings.cli.reference > docs/cli.md`` rewrites it; a test checks that every
subcommand and flag of the parsers appears in the file.
"""

from __future__ import annotations

import argparse

__all__ = ["reference", "subcommands"]

_INTRO = """\
# Command-line reference

Written from the parsers by `python -m ratings.cli.reference > docs/cli.md`; `ratings COMMAND
--help` shows the same text. Start with `ratings demo`, then `ratings fit YOUR.csv`.

## The input every verdict-reading command takes

One row per verdict, with the columns `model_a`, `model_b` and `winner` (`A`, `B` or `tie`;
also `model_a` / `model_b`, 1 / 0 / 0.5, or the winning model's name), and, so that intervals
account for verdicts on one task being dependent, `task_id`. Optional: `judge`, `scope`,
`match_id`, `failed_a`, `failed_b`. Files: `.csv`, `.tsv`, `.parquet`, `.jsonl` / `.json`
(text formats optionally `.gz`, `.bz2`, `.xz`), or `-` for standard input. Spreadsheets
(`.xlsx`, `.xls`, `.ods`) are not read: export the sheet as CSV.

`fit`, `judges`, `combine`, `audit`, `report` and `next` read verdicts with the same options:

| option | what it does |
| --- | --- |
| `--columns OLD=NEW,...` | map your column names, e.g. \
`model_1=model_a,model_2=model_b,result=winner,question_id=task_id`; a missing column's \
message proposes the mapping |
| `--winner-map VALUE=A\\|B\\|TIE,...` | accept other winner spellings, e.g. `draw=tie` |
| `--cluster COLUMN` / `--no-cluster` | cluster intervals by another column (e.g. \
`question_id`), or treat verdicts as independent (not for `next`) |
| `--delimiter CHAR` | a CSV's field delimiter (`;`, `tab`, ...) |
| `--encoding NAME` | a file not in UTF-8 (`latin-1`, `cp1252`, ...) |

Without `task_id` (and without `--cluster` / `--no-cluster`) intervals are per verdict and
the fit warns, naming a column that looks like the task when there is one; `ratings.fit` in
Python raises the same warning (`UnclusteredWarning`).

Messages name the flag to change and the value given; bad rows are named by their line in
the file (the header is line 1), and `--rejected FILE` lists them with their line and reason.
Tables are written in the format of the output's suffix (`.csv`, `.tsv`, `.json`, `.jsonl`,
`.parquet`), at full precision unless `--precision N` (significant digits).
"""


def subcommands() -> dict[str, argparse.ArgumentParser]:
    """{name: parser} of every subcommand, the registered ones (``next``) included."""
    from ratings.cli.app import build_parser

    parser = build_parser([])
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _flag_cell(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    names = ", ".join(action.option_strings)
    if action.nargs == 0:
        return f"`{names}`"
    metavar = action.metavar
    if metavar is None:
        metavar = ("{" + ",".join(map(str, action.choices)) + "}" if action.choices
                   else action.dest.upper())  # fmt: skip
    return f"`{names} {metavar}`"


def _cell(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ").replace("%%", "%")


def _section(name: str, p: argparse.ArgumentParser) -> list[str]:
    out = [f"## `ratings {name}`", "", _cell(p.description), ""]
    usage = p.format_usage().strip().removeprefix("usage: ")
    out += ["```", " ".join(usage.split()), "```", ""]
    out += ["| argument | meaning |", "| --- | --- |"]
    for action in p._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
            continue
        out.append(f"| {_cell(_flag_cell(action))} | {_cell(action.help)} |")
    if p.epilog:
        out += ["", "Examples:", "", "```"]
        out += [line.strip() for line in p.epilog.splitlines()[1:]]
        out += ["```"]
    return [*out, ""]


def reference() -> str:
    """The markdown of ``docs/cli.md``."""
    lines = [_INTRO]
    for name, p in subcommands().items():
        lines += _section(name, p)
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(reference(), end="")
