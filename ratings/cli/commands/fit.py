"""``ratings fit VERDICTS``: Elo ratings with intervals (and rank intervals) from a verdict log."""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path

from ratings.cli.fitting import (
    FIT_INPUTS,
    add_fit_options,
    fit_options,
    input_paths,
    per_scope,
    read_for_fit,
    write_or_print,
    write_records,
)
from ratings.cli.kit import Command, add_output_options, add_verdicts
from ratings.cli.notes import report_judges
from ratings.cli.tables import add_precision_option, check_table_suffix, rounded, write_table

__all__ = ["COMMAND", "SHOWN_ROWS"]

#: Rows of the table ``fit --out`` prints beside writing it.
SHOWN_ROWS = 10


def _arguments(p: argparse.ArgumentParser) -> None:
    add_verdicts(p, "verdict log: .csv, .tsv, .parquet or .jsonl (or counts: wins_a, wins_b, "
                    "ties)")
    add_fit_options(p)
    o = p.add_argument_group("outputs")
    o.add_argument("-o", "--out", metavar="FILE",
                   help="write the ratings table to FILE (.csv, .tsv, .json with the fit's "
                        "settings, .jsonl or .parquet)")  # fmt: skip
    p.add_argument("--by", choices=["scope"],
                   help="fit every scope (Crowd-BT for judged scopes, BT for deterministic "
                        "ones, unless --model is given) into one table with a scope column")
    o.add_argument("--cov", action="store_true",
                   help="with --out FILE.csv: also write the covariance of the Elo ratings "
                        "(Elo^2, one row and column per model) beside it as FILE.cov.csv, "
                        "which `ratings place` and `ratings drift` read")  # fmt: skip
    o.add_argument("--judges-out", metavar="FILE",
                   help="crowd-bt: write the judges table to FILE (a table format)")
    o.add_argument("--style-out", metavar="FILE",
                   help="with --style: write the style coefficients table to FILE")
    o.add_argument("--pairs", metavar="FILE",
                   help="write every pair's Elo difference, interval, win probability and "
                        "multiplicity-adjusted p-value to FILE")
    o.add_argument("--rejected", metavar="FILE",
                   help="fit on the readable rows and write the rejected ones (with their "
                        "lines and reasons) to FILE; without it, any bad row is an "
                        "error")  # fmt: skip
    p.add_argument("--engine", choices=["pandas", "duckdb"], default="pandas",
                   help="duckdb: validate and count the log (a Parquet or CSV file or glob) in "
                        "DuckDB, for logs larger than memory (pip install '.[duckdb]')")
    p.add_argument("--dask", nargs="?", const="local", metavar="ADDRESS",
                   help="validate and count the log (a Parquet file or glob) on a Dask cluster "
                        "at ADDRESS, or a local one without it (pip install '.[dask]')")
    o.add_argument("-q", "--quiet", action="store_true",
                   help="print no board (with --out, the board's header and top "
                        f"{SHOWN_ROWS} rows are printed as well as written)")
    add_output_options(o)
    add_precision_option(o)


def run(args: argparse.Namespace) -> int:
    """Fit, then print the table or write it (and the judges, style, pairs, rejected rows)."""
    if args.judges_out and args.model != "crowd-bt":
        raise ValueError("`--judges-out` needs `--model crowd-bt`.")
    check_table_suffix(args.out, "--out")
    check_table_suffix(args.judges_out, "--judges-out")
    check_table_suffix(getattr(args, "style_out", None), "--style-out")
    if getattr(args, "style_out", None) and not args.style:
        raise ValueError("`--style-out` needs `--style NAME,...`.")
    if getattr(args, "style_out", None) and args.by == "scope":
        raise ValueError("`--style-out` is for one scope; the `--by scope` table has no "
                         "coefficients column.")  # fmt: skip
    if args.pairs and args.by == "scope":
        raise ValueError("`--pairs` is for one scope; pass `--scope` instead of `--by scope`.")
    check_table_suffix(args.pairs, "--pairs")
    if getattr(args, "cov", False) and not args.out:
        raise ValueError("`--cov` writes the covariance beside `--out FILE` (FILE.cov.csv): "
                         "pass `--out`.")
    if getattr(args, "cov", False) and args.by == "scope":
        raise ValueError("`--cov` is for one scope; pass `--scope` instead of `--by scope`.")
    from ratings.api.loading import is_counts_source

    options = fit_options(args)  # options first: no data is read for a bad one
    outside = args.engine == "duckdb" or args.dask is not None
    if outside:  # counted where the log lies, then fitted as a counts table
        log, counts = _count_outside(args), True
    else:
        counts = is_counts_source(args.verdicts)  # pre-aggregated wins_a / wins_b / ties
        log = args.verdicts if counts else _read_beside_imports(args)
    from ratings.api.fitting import fit_with

    if args.by == "scope":
        if counts:
            raise ValueError("`--by scope` reads verdict logs; fit counts one --scope at a time.")
        _fit_by_scope(args, log, options)
    else:
        r = fit_with(log, options)
        if args.out:
            _write_table(r, args)
            print(f"wrote {len(r.models)} ratings to {args.out}", file=sys.stderr)
            if not args.quiet:  # the board's header and top, the whole table in the file
                print(r.summary(max_rows=SHOWN_ROWS))
                if len(r.models) > SHOWN_ROWS:
                    print(f"... {len(r.models) - SHOWN_ROWS} more in {args.out}")
        if getattr(args, "cov", False):
            from ratings.stability.board import write_covariance

            path = write_covariance(r, args.out, inputs=input_paths(args))
            print(f"wrote the ratings' covariance to {path}", file=sys.stderr)
        if not args.out and not args.quiet:
            print(r.summary())
        if args.judges_out:
            write_records(r.judges.reset_index(), args.judges_out, args)
        if getattr(args, "style_out", None):
            write_records(r.style, args.style_out, args)
            print(f"wrote {len(r.style)} style coefficients to {args.style_out}",
                  file=sys.stderr)  # fmt: skip
        if args.pairs:
            write_records(r.pairwise(), args.pairs, args)
            print(f"wrote {len(r.models) * (len(r.models) - 1) // 2} pairs to {args.pairs}",
                  file=sys.stderr)  # fmt: skip
        report_judges(r.judges, r.scope)
    if args.rejected and not counts:  # last: a run that fails writes nothing
        from ratings.io import write_rejected

        write_rejected(log, args.rejected, csv_escape=args.csv_escape)
        if len(log.rejected):
            print(f"{len(log.rejected)} row(s) rejected; written to {args.rejected}",
                  file=sys.stderr)  # fmt: skip
    return 0


def _read_beside_imports(args: argparse.Namespace):
    """The log (:func:`~ratings.cli.fitting.read_for_fit`) read on the package's pool while
    this thread imports the fit's modules: the file's parsing (pyarrow's, NumPy's passes)
    runs largely without the GIL, which the imports hold. Its errors are raised here, as
    they would be without the pool."""
    from ratings.core.program import collection_paused
    from ratings.core.threads import start

    pending = start(partial(read_for_fit, args))
    with collection_paused(args.program):  # the program imports without the cyclic collector
        import ratings.api.fitting  # noqa: F401 - imported beside the read

    return pending.result()


def _ratings_json(r, precision: int | None = None) -> str:
    """The ratings table with its metadata as JSON."""
    meta = {
        "model": r.kind, "scope": r.scope, "anchor": r.anchor, "anchor_rating": r.offset,
        "ci": r.ci, "cluster": r.cluster, "n_clusters": r.n_clusters, "level": r.level,
        "df": r.df, "small_sample": "CR2, Satterthwaite df per contrast (column df)"
        if r.inference is not None else None,
        "n_verdicts": r.n_verdicts, "converged": r.converged, "loglik": r.loglik,
    }  # fmt: skip
    table = rounded(r.to_frame(), precision)
    meta["ratings"] = json.loads(table.to_json(orient="records", double_precision=15))
    return json.dumps(meta, indent=2) + "\n"


def _write_table(r, args: argparse.Namespace) -> None:
    from ratings.io import write_atomic

    suffix = Path(args.out).suffix.lower()
    if suffix == ".json":
        write_atomic(_ratings_json(r, args.precision), args.out, inputs=input_paths(args))
    else:
        from ratings.scopes.scale import board_info

        write_table(r.to_frame().assign(**board_info(r)), args.out, inputs=input_paths(args),
                    csv_escape=args.csv_escape, precision=args.precision)  # fmt: skip


def _count_outside(args: argparse.Namespace):
    """The log counted by DuckDB (``--engine duckdb``) or Dask (``--dask``)."""
    if args.engine == "duckdb" and args.dask is not None:
        raise ValueError("Choose one of `--engine duckdb` and `--dask`.")
    if args.rejected or args.by == "scope":
        raise ValueError("`--rejected` and `--by scope` read the log in memory; with "
                         "`--engine duckdb` or `--dask` any bad row is an error (fit one --scope).")
    soft = getattr(args, "soft", False)  # `winner` as A's score (ratings.data.soft)
    if args.engine == "duckdb":
        from ratings.data.sql import aggregate_counts_sql, relation_of

        return aggregate_counts_sql(relation_of(args.verdicts), soft=soft)
    import dask.dataframe as dd
    from dask.distributed import Client, LocalCluster

    from ratings.data.dask import aggregate_counts

    if args.dask == "local":
        with LocalCluster(processes=True, dashboard_address=":0") as cluster, Client(cluster):
            return aggregate_counts(dd.read_parquet(args.verdicts), soft=soft)
    with Client(args.dask):
        return aggregate_counts(dd.read_parquet(args.verdicts), soft=soft)


def _fit_by_scope(args: argparse.Namespace, log, options) -> None:
    from ratings.scopes.combine import scopes_frame

    results = per_scope(args, log, options)
    text = "\n\n".join(r.summary() for r in results.values())
    write_or_print(scopes_frame(results), args, text)
    for scope, r in results.items():
        report_judges(r.judges, scope)


COMMAND = Command(
    name="fit",
    help="fit Elo ratings with intervals from a verdict log",
    description="Fit Elo ratings with confidence intervals (and rank intervals) from a verdict "
                "log: one row per verdict with model_a, model_b, winner (A, B or tie) and, to "
                "cluster the intervals, task_id. Prints the table, or writes it with --out.",
    examples=("ratings fit battles.csv --columns question_id=task_id --out ratings.csv",
              "ratings fit battles.csv --cluster question_id --pairs pairs.csv -o ratings.json"),
    add_arguments=_arguments,
    run=run,
    inputs=FIT_INPUTS,
    outputs={"out": "--out", "rejected": "--rejected", "judges_out": "--judges-out",
             "pairs": "--pairs", "style_out": "--style-out"},
    order=10,
)  # fmt: skip
