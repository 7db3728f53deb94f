"""``ratings report VERDICTS -o PAGE``: one self-contained HTML page of the board (a fit of a log,
or saved tables with ``--from``)."""

from __future__ import annotations

import argparse
import sys

from ratings.cli.fitting import (
    FIT_INPUTS,
    add_combine_options,
    add_fit_options,
    check_suffix,
    combined,
    fit_options,
    input_paths,
    read_for_fit,
    weights_arg,
    with_rubric,
)
from ratings.cli.kit import Command
from ratings.cli.notes import report_judges

__all__ = ["COMMAND"]


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("verdicts", nargs="?", metavar="VERDICTS",
                   help="verdict log to fit (several scopes or --rubric: per-scope boards and "
                        "the combined headline, as `combine`)")  # fmt: skip
    add_fit_options(p)
    add_combine_options(p)
    p.add_argument("--from", dest="from_table", metavar="BOARD",
                   help="render a saved table (`fit --out` or `combine --out`) instead of "
                        "fitting")  # fmt: skip
    p.add_argument("--pairs", metavar="PAIRS",
                   help="with --from: the pairwise table (`fit --pairs`) for the heatmap")
    p.add_argument("--audit", metavar="AUDIT",
                   help="the judge audit's table (`audit --out audit.csv`) to include")
    p.add_argument("--old", metavar="BOARD",
                   help="an earlier board (`fit --out`; its covariance file BOARD.cov.csv is "
                        "read when present): adds a drift section against it")
    p.add_argument("--fragility", action="store_true",
                   help="add a fragility section: the fewest verdicts and tasks reversing each "
                        "pair of neighbours, leave-one-judge-out changes (a fit of one scope)")
    p.add_argument("--title", help="the page's title (default 'Leaderboard')")
    p.add_argument("-o", "--out", required=True, metavar="PAGE",
                   help="the HTML page (.html)")


def run(args: argparse.Namespace) -> int:
    """Fit the log (or read the saved tables) and write the page."""
    from ratings.report import from_results, from_tables, write_report

    check_suffix(args.out, "--out", (".html", ".htm"))
    if (args.verdicts is None) == (args.from_table is None):
        raise ValueError("`ratings report` needs a verdict log to fit (VERDICTS) or a saved "
                         "table (`--from BOARD.csv`), not both.")  # fmt: skip
    audit = _saved_table(args.audit, "--audit", ("judge",))
    command = "ratings " + " ".join(_quoted(a) for a in getattr(args, "argv", ()) or ["report"])
    if args.from_table is not None:
        if args.rubric:
            raise ValueError("`--rubric` adds matches to a fit; with `--from` nothing is "
                             "fitted (drop one of them).")  # fmt: skip
        report = from_tables(_saved_table(args.from_table, "--from", ("model", "elo")),
                             pairs=_saved_table(args.pairs, "--pairs", ("model_a", "model_b")),
                             audit=audit, title=args.title, command=command,
                             sources=[p for p in (args.from_table, args.pairs, args.audit)
                                      if p])  # fmt: skip
        inputs = [args.from_table, args.pairs, args.audit]
        if args.fragility:
            raise ValueError("`--fragility` refits the board from its verdicts: pass the "
                             "verdict log (VERDICTS), not `--from`.")
    else:
        if args.pairs:
            raise ValueError("`--pairs` reads a saved pairwise table for `--from`; a fit "
                             "computes its own (drop `--pairs`).")  # fmt: skip
        weights = weights_arg(args.weights)
        options = fit_options(args)  # options first: no data is read for a bad one
        log = with_rubric(args, read_for_fit(args))
        v = log.verdicts
        scoped = "scope" in v.columns and args.scope is None and v["scope"].nunique() > 1
        if scoped or args.rubric:
            results, head = combined(args, log, weights, options)
        else:
            from ratings.api.fitting import fit_with

            r = fit_with(log, options)
            results, head = {r.scope or "": r}, None
        report = from_results(results, combined=head, verdicts=v, audit=audit,
                              title=args.title, command=command,
                              sources=input_paths(args))  # fmt: skip
        inputs = [*input_paths(args), args.audit]
        for scope, r in results.items():
            report_judges(r.judges, scope)
        if args.fragility:
            if head is not None or len(results) != 1:
                raise ValueError("`--fragility` refits one board: pass `--scope` (not a "
                                 "combined headline).")
            _add_fragility(report, next(iter(results.values())))
    if args.old is not None:
        _add_drift(report, args.old, head if args.from_table is None and head is not None
                   else (next(iter(results.values())) if args.from_table is None
                         else args.from_table))
        inputs.append(args.old)
    write_report(report, args.out, inputs=[p for p in inputs if p])
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _add_drift(report, old: str, new) -> None:
    """The drift section: ``new`` (a fit or a saved table's path) against the board ``old``."""
    from ratings.stability.drift import drift

    d = drift(old, new)
    beyond = d.table["beyond_interval"].map({True: "yes", False: "no"})
    report.drift, report.drift_notes = d.table.assign(beyond_interval=beyond), d.notes


def _add_fragility(report, r) -> None:
    """The fragility section of the fit ``r``, with the largest leave-one-out changes."""
    frag = r.fragility()
    loo = frag.leave_one_out
    if len(loo):
        loo = loo.assign(size=loo["elo_change"].abs()).sort_values(
            "size", ascending=False, kind="stable").head(12).drop(columns="size")
    pairs = frag.pairs.assign(separated=frag.pairs["separated"].map({True: "yes", False: "no"}))
    report.fragility, report.fragility_notes, report.leave_one_out = pairs, frag.notes, loo


def _quoted(word: str) -> str:
    import shlex

    return shlex.quote(word)


def _saved_table(path: str | None, flag: str, needed: tuple[str, ...]):
    """A table written by another subcommand, with the columns ``needed``, or None."""
    if path is None:
        return None
    from ratings.core.schema import require_columns
    from ratings.plot.bands import read_ratings_table

    table = read_ratings_table(path)
    require_columns(table, needed, f"`{flag}` {path!r}", error=ValueError)
    return table


COMMAND = Command(
    name="report",
    help="one self-contained HTML page of the board: fit a verdict log, or render saved tables "
         "(--from)",
    description="Write one self-contained HTML page of the board: fit a verdict log, or render "
                "saved tables (--from).",
    examples=("ratings report verdicts.csv -o board.html",
              "ratings report --from ratings.csv --pairs pairs.csv -o board.html"),
    add_arguments=_arguments,
    run=run,
    inputs={**FIT_INPUTS, "rubric": "--rubric", "from_table": "--from", "pairs": "--pairs",
            "audit": "--audit", "old": "--old"},
    outputs={"out": "--out"},
    defaults={"by": None, "judges_out": None, "rejected": None, "precision": None},
    order=90,
)  # fmt: skip
