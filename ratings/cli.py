"""The ``ratings`` command line.

``ratings fit VERDICTS`` fits Elo ratings with intervals; ``ratings demo`` fits the bundled
simulated example. Data errors exit with status 2 and a message naming rows; outputs are
written atomically and never over an input.

:func:`main` is the one runner: every subcommand's parser sets ``func`` (``ratings next``
comes from :func:`sampling.cli.add_next_parser`), and the errors of all of them map to exit
statuses here, in :func:`main`. This is the only module of ``ratings`` that imports ``sampling``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from ratings.errors import InvalidVerdictsError, NonIdentifiableError

__all__ = ["EXIT_DATA", "USER_ERRORS", "main"]

#: Exit status of a run stopped by its input (data, arguments, files); argparse's usage
#: errors exit with 2 as well.
EXIT_DATA = 2
#: Errors caused by the input, reported in one line (and, for bad rows, a table of them) with
#: status :data:`EXIT_DATA`; any other exception is a bug and keeps its traceback.
USER_ERRORS = (InvalidVerdictsError, NonIdentifiableError, ValueError, KeyError,
               FileNotFoundError)  # fmt: skip


def _mapping(text: str | None, what: str) -> dict[str, str] | None:
    """Parse ``"a=b,c=d"`` (CLI mappings); commas inside names are not supported here."""
    if not text:
        return None
    out = {}
    for part in text.split(","):
        key, sep, value = part.rpartition("=")
        if not sep or not key.strip():
            raise ValueError(f"`{what}` must look like 'old=new,old2=new2'; got {text!r}.")
        out[key.strip()] = value.strip()
    return out


def _add_fit_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scope", help="fit only verdicts of this scope (required if several)")
    p.add_argument("--model", choices=["bt", "crowd-bt"], default=None,
                   help="Bradley-Terry (default for one scope), or Crowd-BT with one quality eta "
                        "per judge (default for judged scopes with --by scope / combine)")
    p.add_argument("--judge-quality", metavar="JUDGES.json | SCOPE=FILE,...",
                   help="crowd-bt: fix eta from a file written by `ratings judges` "
                        "(per scope: 'analytical=a.json,presentation=p.json')")
    p.add_argument("--fit-new-judges", action="store_true",
                   help="crowd-bt: estimate eta for judges missing from --judge-quality")
    p.add_argument("--anchor", metavar="NAME=RATING",
                   help="pin one model at a rating, e.g. 'GPT-5.5 (medium)=1000'; "
                        "default: centred at mean 1000")  # fmt: skip
    g = p.add_mutually_exclusive_group()
    g.add_argument("--cluster", metavar="COLUMN",
                   help="cluster verdicts by this column for the sandwich (default task_id)")
    g.add_argument("--no-cluster", action="store_true",
                   help="treat verdicts as independent (per-verdict HC0 sandwich)")
    p.add_argument("--ci", choices=["sandwich", "sandwich-z", "model", "bootstrap"],
                   default="sandwich",
                   help="sandwich (default; clustered: t quantile with G-1 df), sandwich-z "
                        "(normal quantile), model (inverse Hessian) or bootstrap")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--penalty", type=float, default=0.0,
                   help="opt-in ridge penalty making ratings finite when a model never lost")
    p.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--columns", metavar="OLD=NEW,...",
                   help="map column names, e.g. 'left=model_a,right=model_b,question=task_id'")
    p.add_argument("--winner-map", metavar="VALUE=A|B|tie,...",
                   help="accept extra winner spellings, e.g. 'tie (bothbad)=tie'")


def _version() -> str:
    from ratings import __version__

    return __version__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ratings",
        description="Elo ratings with confidence intervals from pairwise verdicts.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("fit", help="fit Elo ratings with intervals from a verdict log")
    p.add_argument("verdicts", help="verdict log: .csv, .tsv, .parquet or .jsonl")
    _add_fit_options(p)
    p.add_argument("--out", metavar="FILE", help="write the table to FILE (.csv or .json)")
    p.add_argument("--by", choices=["scope"],
                   help="fit every scope (Crowd-BT for judged scopes, BT for deterministic "
                        "ones, unless --model is given) into one table with a scope column")
    p.add_argument("--judges-out", metavar="FILE",
                   help="crowd-bt: write the judges table to FILE (.csv or .json)")
    p.add_argument("--pairs", metavar="FILE",
                   help="write every pair's Elo difference, interval, win probability and "
                        "multiplicity-adjusted p-value to FILE (.csv or .json)")
    p.add_argument("--rejected", metavar="FILE",
                   help="fit on the readable rows and write the rejected ones (with row numbers "
                        "and reasons) to FILE; without it, any bad row is an error")  # fmt: skip
    p.set_defaults(func=_cmd_fit)

    j = sub.add_parser("judges", help="fit judge quality (Crowd-BT eta) for reuse in later fits")
    j.add_argument("verdicts", help="verdict log with a `judge` column")
    _add_fit_options(j)
    j.add_argument("--out", metavar="JUDGES.json", required=True,
                   help="write eta, SE, interval and counts per judge (JSON)")
    j.set_defaults(func=_cmd_judges, model="crowd-bt")

    c = sub.add_parser("combine", help="per-scope fits and the combined headline Elo")
    c.add_argument("verdicts", help="verdict log with a `scope` column")
    _add_fit_options(c)
    c.add_argument("--rubric", metavar="RUBRIC.csv",
                   help="rubric checks (task_id, model, check_id, passed) added as scope 'rubric'")
    c.add_argument("--rubric-method", choices=["rate", "check"], default="rate",
                   help="rubric to matches: pass rate per task (default) or per check")
    c.add_argument("--weights", metavar="SCOPE=W,...", help="scope weights (default equal)")
    c.add_argument("--method", choices=["joint", "independent"], default="joint",
                   help="headline interval: joint covariance over shared tasks (default) or "
                        "independent scopes")
    c.add_argument("--drop-missing", action="store_true",
                   help="leave models missing from some scope out of the headline")
    c.add_argument("--out", metavar="FILE", help="write the table (all scopes + combined)")
    c.set_defaults(func=_cmd_combine, by=None, judges_out=None, rejected=None, pairs=None)

    rb = sub.add_parser("rubric", help="turn rubric checks into synthetic matches (scope rubric)")
    rb.add_argument("rubric", help="rubric results: task_id, model, check_id, passed")
    rb.add_argument("--method", choices=["rate", "check"], default="rate",
                    help="one match per pair and task by pass rate (default), or one per check")
    rb.add_argument("--duplicates", choices=["error", "last"], default="error",
                    help="a check graded twice for one submission: error (default) or keep last")
    rb.add_argument("--columns", metavar="OLD=NEW,...", help="map column names")
    rb.add_argument("--out", required=True, metavar="MATCHES.csv", help="synthetic matches")
    rb.set_defaults(func=_cmd_rubric)

    fz = sub.add_parser("freeze", help="add new models' index values to a frozen registry")
    fz.add_argument("ratings_table", metavar="RATINGS",
                    help="headline table (`combine --out`; its 'combined' rows) or `fit --out`")
    fz.add_argument("--registry", required=True, help="registry CSV (created if absent)")
    fz.add_argument("--refreeze", action="append", default=[], metavar="MODEL",
                    help="replace this model's frozen entry (repeatable)")
    fz.add_argument("--date", help="freeze date (default: today, UTC)")
    fz.set_defaults(func=_cmd_freeze)

    from sampling.cli import add_next_parser  # `ratings next`: plan the next matches

    add_next_parser(sub)

    pl = sub.add_parser("plot", help="plot Elo bands (95%% CI) from a ratings table")
    pl.add_argument("ratings_table", metavar="RATINGS", help="table written by `fit --out` "
                    "(.csv or .json); several scopes give one band per scope")
    pl.add_argument("-o", "--out", required=True, help="image file: .png, .svg or .pdf")
    pl.add_argument("--top", type=int, help="show the best K models and summarise the rest")
    pl.add_argument("--highlight", metavar="A,B", help="models to highlight")
    pl.add_argument("--title", help="plot title")
    pl.set_defaults(func=_cmd_plot)

    d = sub.add_parser("demo", help="fit the bundled simulated example and print the tables")
    d.set_defaults(func=_cmd_demo)
    return parser


def _cluster_arg(args: argparse.Namespace) -> str | None:
    if args.no_cluster:
        return None
    return args.cluster or "auto"


def _fit_args(args: argparse.Namespace) -> dict:
    return {
        "model": args.model or "bt", "judge_quality": _quality_arg(args.judge_quality),
        "fit_new_judges": args.fit_new_judges, "anchor": args.anchor,
        "cluster": _cluster_arg(args), "ci": args.ci, "level": args.level,
        "penalty": args.penalty, "n_boot": args.n_boot, "seed": args.seed,
    }  # fmt: skip


def _quality_arg(text: str | None):
    """One judge-quality file, or 'scope=file,...' for per-scope fits."""
    if text is None or Path(text).exists() or "=" not in text:
        return text
    return _mapping(text, "--judge-quality")


def _ratings_json(r) -> str:
    """The ratings table with its metadata as JSON."""
    meta = {
        "model": r.model, "scope": r.scope, "anchor": r.anchor, "anchor_rating": r.offset,
        "ci": r.ci, "cluster": r.cluster, "n_clusters": r.n_clusters, "level": r.level,
        "df": r.df, "small_sample": "CR2, Satterthwaite df per contrast (column df)"
        if r.inference is not None else None,
        "n_verdicts": r.n_matches, "converged": r.converged, "loglik": r.loglik,
    }  # fmt: skip
    table = r.to_frame()
    meta["ratings"] = json.loads(table.to_json(orient="records", double_precision=15))
    return json.dumps(meta, indent=2) + "\n"


def _write_table(r, out: str, inputs: Sequence[str]) -> None:
    from ratings.io import write_atomic

    suffix = Path(out).suffix.lower()
    if suffix == ".json":
        write_atomic(_ratings_json(r), out, inputs=inputs)
    elif suffix == ".csv":
        write_atomic(r.to_frame(), out, inputs=inputs)
    else:
        raise ValueError(f"`--out` must end in .csv or .json; got {out!r}.")


def _check_outputs(inputs: Sequence[str], outputs: Sequence[str | None]) -> None:
    """Refuse before any work when an output would overwrite an input."""
    ins = {Path(p).resolve() for p in inputs}
    for out in outputs:
        if out is not None and Path(out).resolve() in ins:
            raise ValueError(f"Refusing to write {out!r}: it is an input file. Choose another.")


def _read(args: argparse.Namespace):
    import ratings

    return ratings.read_verdicts(
        args.verdicts,
        columns=_mapping(args.columns, "--columns"),
        winner_map=_mapping(args.winner_map, "--winner-map"),
        errors="report" if getattr(args, "rejected", None) else "raise",
    )


def _inputs(args: argparse.Namespace) -> list[str]:
    quality = _quality_arg(args.judge_quality)
    files = list(quality.values()) if isinstance(quality, dict) else [quality]
    return [p for p in (args.verdicts, getattr(args, "rubric", None), *files) if p]


def _cmd_fit(args: argparse.Namespace) -> int:
    import ratings

    _check_outputs(_inputs(args), [args.out, args.rejected, args.judges_out, args.pairs])
    if args.judges_out and args.model != "crowd-bt":
        raise ValueError("`--judges-out` needs `--model crowd-bt`.")
    if args.pairs and args.by == "scope":
        raise ValueError("`--pairs` is for one scope; pass `--scope` instead of `--by scope`.")
    if args.pairs and Path(args.pairs).suffix.lower() not in (".csv", ".json"):
        raise ValueError(f"`--pairs` must end in .csv or .json; got {args.pairs!r}.")
    from ratings.api import is_counts_source

    counts = is_counts_source(args.verdicts)  # pre-aggregated wins_a / wins_b / ties
    log = args.verdicts if counts else _read(args)
    if args.rejected and not counts:
        from ratings.io import write_rejected

        write_rejected(log, args.rejected)
        if len(log.rejected):
            print(f"{len(log.rejected)} row(s) rejected; written to {args.rejected}",
                  file=sys.stderr)  # fmt: skip
    if args.by == "scope":
        if counts:
            raise ValueError("`--by scope` reads verdict logs; fit counts one --scope at a time.")
        return _fit_by_scope(args, log)
    r = ratings.fit(log, scope=args.scope, **_fit_args(args))
    if args.out:
        _write_table(r, args.out, _inputs(args))
        print(f"wrote {len(r.models)} ratings to {args.out}", file=sys.stderr)
    else:
        print(r.summary())
    if args.judges_out:
        _write_judges(r.judges, args.judges_out, _inputs(args))
    if args.pairs:
        _write_records(r.pairwise(), args.pairs, _inputs(args))
        print(f"wrote {len(r.models) * (len(r.models) - 1) // 2} pairs to {args.pairs}",
              file=sys.stderr)  # fmt: skip
    _report_judges(r.judges)
    return 0


def _write_records(table, out: str, inputs: Sequence[str]) -> None:
    """A table as CSV, or as JSON records, by the suffix of ``out``."""
    from ratings.io import write_atomic

    if Path(out).suffix.lower() == ".csv":
        write_atomic(table, out, inputs=inputs)
    else:
        write_atomic(table.to_json(orient="records", indent=2, double_precision=15) + "\n", out,
                     inputs=inputs)  # fmt: skip


def _per_scope(args: argparse.Namespace, log) -> dict:
    from ratings.combine import fit_scopes

    kwargs = _fit_args(args)
    kwargs["model"] = args.model or "auto"
    scopes = None if args.scope is None else [args.scope]
    return fit_scopes(log, scopes=scopes, **kwargs)


def _write_or_print(table, args: argparse.Namespace, text: str) -> None:
    from ratings.io import write_atomic

    if args.out:
        if Path(args.out).suffix.lower() not in (".csv", ".json"):
            raise ValueError(f"`--out` must end in .csv or .json; got {args.out!r}.")
        body = table if args.out.lower().endswith(".csv") else (
            table.to_json(orient="records", indent=2, double_precision=15) + "\n")  # fmt: skip
        write_atomic(body, args.out, inputs=_inputs(args))
        print(f"wrote {len(table)} rows to {args.out}", file=sys.stderr)
    else:
        print(text)


def _fit_by_scope(args: argparse.Namespace, log) -> int:
    from ratings.combine import scopes_frame

    results = _per_scope(args, log)
    text = "\n\n".join(r.summary() for r in results.values())
    _write_or_print(scopes_frame(results), args, text)
    for r in results.values():
        _report_judges(r.judges)
    return 0


def _cmd_combine(args: argparse.Namespace) -> int:
    import pandas as pd

    import ratings
    from ratings.combine import combine, scopes_frame

    _check_outputs(_inputs(args), [args.out])
    log = _read(args)
    if args.rubric:
        from ratings.rubric import read_rubric, rubric_to_matches

        matches = rubric_to_matches(read_rubric(args.rubric), method=args.rubric_method)
        frame = pd.concat([log.verdicts.reset_index(drop=True), matches], ignore_index=True)
        log = ratings.read_verdicts(frame)
    results = _per_scope(args, log)
    weights = _mapping(args.weights, "--weights")
    weights = None if weights is None else {k: float(v) for k, v in weights.items()}
    missing = "drop" if args.drop_missing else "error"
    head = combine(results, weights=weights, method=args.method, missing=missing)
    other = combine(results, weights=weights, missing=missing,
                    method="independent" if args.method == "joint" else "joint")  # fmt: skip
    table = scopes_frame(results, head)
    alt = f"se_{other.combine_method}"
    table[alt] = table["model"].map(other.se).where(table["scope"] == "combined")
    text = "\n\n".join(r.summary() for r in results.values())
    shown = head.to_frame().assign(**{alt: lambda f: f["model"].map(other.se)})
    text += "\n\n" + head.summary().split("\n\n")[0] + "\n" + (
        f"Weights: {head.scope_weights}; {alt} = the headline SE under the other method.\n\n"
        + ratings.result.format_table(shown))  # fmt: skip
    _write_or_print(table, args, text)
    for r in results.values():
        _report_judges(r.judges)
    return 0


def _write_judges(judges, out: str, inputs: Sequence[str]) -> None:
    if Path(out).suffix.lower() not in (".csv", ".json"):
        raise ValueError(f"`--judges-out` must end in .csv or .json; got {out!r}.")
    _write_records(judges.reset_index(), out, inputs)


def _report_judges(judges) -> None:
    """Say on stderr which judges are uninformative or on the boundary."""
    if judges is None:
        return
    weak = judges.index[judges["uninformative"]].tolist()
    edge = judges.index[judges["status"] == "boundary"].tolist()
    if weak:
        print(f"warning: judge(s) {weak} are uninformative: their eta interval reaches 1/2.",
              file=sys.stderr)  # fmt: skip
    if edge:
        print(f"note: judge(s) {edge} have eta on the boundary (1/2 or 1); no standard error.",
              file=sys.stderr)  # fmt: skip


def _cmd_judges(args: argparse.Namespace) -> int:
    import ratings
    from ratings.judges import save_judge_quality

    _check_outputs(_inputs(args), [args.out])
    if not args.out.lower().endswith(".json"):
        raise ValueError(f"`--out` must end in .json; got {args.out!r}.")
    fit_args = _fit_args(args) | {"model": "crowd-bt"}
    r = ratings.fit(_read(args), scope=args.scope, **fit_args)
    save_judge_quality(r.judges, args.out, scope=args.scope, source=args.verdicts,
                       inputs=_inputs(args))  # fmt: skip
    print(ratings.result.format_table(r.judges.reset_index()))
    _report_judges(r.judges)
    print(f"wrote judge quality for {len(r.judges)} judge(s) to {args.out}", file=sys.stderr)
    return 0


def _cmd_rubric(args: argparse.Namespace) -> int:
    from ratings.io import write_atomic
    from ratings.rubric import read_rubric, rubric_to_matches

    _check_outputs([args.rubric], [args.out])
    rubric = read_rubric(args.rubric, columns=_mapping(args.columns, "--columns"),
                         duplicates=args.duplicates)  # fmt: skip
    matches = rubric_to_matches(rubric, method=args.method)
    write_atomic(matches, args.out, inputs=[args.rubric])
    print(f"wrote {len(matches)} synthetic matches ({args.method}) from {len(rubric)} checks "
          f"to {args.out}", file=sys.stderr)  # fmt: skip
    return 0


def _cmd_freeze(args: argparse.Namespace) -> int:
    from ratings.registry import freeze_cli
    from ratings.result import format_table

    before = set()
    if Path(args.registry).exists():
        from ratings.registry import load_registry

        before = set(load_registry(args.registry)["model"])
    reg = freeze_cli(args.ratings_table, args.registry, refreeze=args.refreeze, date=args.date)
    added = [m for m in reg["model"] if m not in before]
    print(f"registry {args.registry}: {len(added)} model(s) added, "
          f"{len(args.refreeze)} refrozen, {len(reg)} in all", file=sys.stderr)  # fmt: skip
    print(format_table(reg))
    return 0


def _cmd_plot(args: argparse.Namespace) -> int:
    from ratings.plot import plot_cli

    highlight = None if args.highlight is None else [h.strip() for h in args.highlight.split(",")]
    plot_cli(args.ratings_table, args.out, top=args.top, highlight=highlight, title=args.title)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    import pandas as pd

    import ratings
    from ratings.combine import combine, fit_scopes
    from ratings.example import EXAMPLE_ANCHOR, example_path, judge_quality_paths
    from ratings.rubric import read_rubric, rubric_to_matches

    verdicts = pd.read_csv(example_path(), dtype=str)
    matches = rubric_to_matches(read_rubric(example_path("rubric.csv")))
    log = ratings.read_verdicts(pd.concat([verdicts, matches], ignore_index=True))
    print("Bundled example (simulated, not real judgments): judged scopes fitted with Crowd-BT "
          "using judge qualities from past judgments, rubric checks as synthetic matches (BT), "
          f"headline = mean of the scope Elos. Files: {example_path().parent}")  # fmt: skip
    results = fit_scopes(log, anchor=EXAMPLE_ANCHOR, judge_quality=judge_quality_paths())
    for r in results.values():
        print()
        print(r.summary())
    head = combine(results)
    print()
    print(head.summary())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (2 for data errors)."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except BrokenPipeError:  # e.g. `ratings fit ... | head`: stop quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except USER_ERRORS as err:
        msg = err.args[0] if isinstance(err, KeyError) and err.args else err
        print(f"ratings: error: {msg}", file=sys.stderr)
        if isinstance(err, InvalidVerdictsError) and len(err.rows):
            print(err.rows.head(10).to_string(index=False), file=sys.stderr)
        return EXIT_DATA


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
