"""The ``ratings`` command line.

``ratings fit VERDICTS`` fits Elo ratings with intervals; ``ratings demo`` fits the bundled
simulated example. Data errors exit with status 2 and a message naming rows; outputs are
written atomically and never over an input.

:func:`main` is the one runner: the subcommands are the modules of :mod:`ratings.cli.commands`
(and those other packages register, such as ``ratings next`` from ``sampling``), each a
:class:`ratings.cli.kit.Command`; the errors of all of them map to exit statuses here.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence
from typing import NoReturn

from ratings.cli.allocator import leave, tune_allocator
from ratings.cli.commands import add_builtin, add_registered, builtin_names
from ratings.cli.flags import FLAGS, render_option
from ratings.cli.inputs import relabel, staged_verdicts
from ratings.cli.lines import name_lines, rows_table
from ratings.cli.notes import show_warnings
from ratings.core.errors import (
    ConvergenceWarning,
    DataWarning,
    InvalidVerdictsError,
    JudgeWarning,
    MemoryLimitError,
    NonIdentifiableError,
    OutputError,
    PenaltyOnlyWarning,
    options_rendered_by,
)
from ratings.core.memory import limit_scope
from ratings.core.program import resume_collection

__all__ = ["EXIT_DATA", "FLAGS", "USER_ERRORS", "build_parser", "main", "program"]

#: Exit status of a run stopped by its input (data, arguments, files); argparse's usage
#: errors exit with 2 as well.
EXIT_DATA = 2
#: Errors caused by the input or the environment (unwritable outputs, the memory limit),
#: reported in one line (and, for bad rows, a table of them) with status :data:`EXIT_DATA`;
#: any other exception is a bug and keeps its traceback.
USER_ERRORS = (InvalidVerdictsError, NonIdentifiableError, ValueError, KeyError, OSError,
               MemoryLimitError)  # fmt: skip


def _builtin_asked(argv: Sequence[str] | None) -> str | None:
    """The built-in subcommand this command line runs (None: another one, or the program's
    own help or version)."""
    words = sys.argv[1:] if argv is None else list(argv)
    first = next((k for k, w in enumerate(words) if not w.startswith("-")), None)
    if first is None or words[first] not in builtin_names():
        return None
    return None if {"-h", "--help", "--version"} & set(words[:first]) else words[first]


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``ratings`` parser: with the one built-in subcommand ``argv`` runs, else with every
    subcommand, the registered ones included (another command, or the program's help).

    A subcommand's parser is the same either way; the others' cost a fresh ``ratings fit``
    about 10 ms to build.
    """
    from ratings.core.version import __version__

    parser = argparse.ArgumentParser(
        prog="ratings",
        description="Elo ratings with confidence intervals from pairwise verdicts.",
        epilog="Start with `ratings demo`, then `ratings fit YOUR.csv`; `ratings COMMAND --help` "
               "describes each command.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    asked = _builtin_asked(argv)
    add_builtin(sub, only=asked)
    if asked is None:
        add_registered(sub)
    return parser


_parser = build_parser  # the name of earlier releases, for tests and tools


def _io_paths(args: argparse.Namespace, names: dict[str, str]) -> dict[str, object]:
    """{label: path or paths} of the arguments ``names`` (dest -> label) that were given."""
    from ratings.cli.fitting import quality_arg

    out: dict[str, object] = {}
    for dest, label in names.items():
        value = getattr(args, dest, None)
        if dest == "judge_quality":
            value = quality_arg(value)
            value = list(value.values()) if isinstance(value, dict) else value
        if value is not None:
            out[label] = value
    return out


def _check_io(args: argparse.Namespace) -> None:
    """Before any work: every output can be written, is no input and no other output."""
    from ratings.io.writers import check_outputs

    outputs = _io_paths(args, getattr(args, "io_outputs", {}))
    check_outputs(outputs, _io_paths(args, getattr(args, "io_inputs", {})))


def _flagged(err: OutputError, args: argparse.Namespace) -> str:
    """An output error prefixed with the flag of the output it concerns (when known)."""
    for dest, label in getattr(args, "io_outputs", {}).items():
        if err.path is not None and getattr(args, dest, None) == err.path:
            if not str(err).startswith(f"`{label}`"):
                return f"`{label}`: {err}"
    return str(err)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (2 for data errors). Run as the program (``argv``
    None) it first tunes glibc's allocator for large arrays (:mod:`ratings.cli.allocator`).

    Warnings are the library's own (:mod:`warnings`): recorded while the command runs and
    printed on stderr as ``ratings: warning: ...``, the same text Python shows.
    """
    if argv is None:
        tune_allocator()
    args = build_parser(argv).parse_args(argv)
    if argv is None:
        resume_collection()  # the program's modules are imported, the command's flags' too
    args.argv = list(sys.argv[1:] if argv is None else argv)  # shown in reports
    args.program = argv is None  # run as the program, not called from Python
    with warnings.catch_warnings(record=True) as caught:
        for category in (JudgeWarning, ConvergenceWarning, DataWarning, PenaltyOnlyWarning):
            warnings.simplefilter("always", category)  # the package's own: always shown
        try:
            return _run(args, caught)
        finally:
            show_warnings(caught, relabel)


def _run(args: argparse.Namespace, caught: list) -> int:
    try:
        with options_rendered_by(render_option), limit_scope(getattr(args, "max_memory", None)):
            _check_io(args)  # messages name flags, not Python arguments; one memory limit
            with staged_verdicts(args):  # standard input, --encoding, --delimiter
                return int(args.func(args))
    except BrokenPipeError:  # e.g. `ratings fit ... | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except USER_ERRORS as err:
        msg = (_flagged(err, args) if isinstance(err, OutputError)
               else err.args[0] if isinstance(err, KeyError) and err.args else err)  # fmt: skip
        show_warnings(caught, relabel)  # what was said before the error, first
        text = name_lines(relabel(str(msg)), getattr(args, "verdicts", None))
        print(f"ratings: error: {text}", file=sys.stderr)
        if isinstance(err, InvalidVerdictsError) and len(err.rows):
            shown = rows_table(err.rows.head(10), text, args)
            print(shown.to_string(index=False), file=sys.stderr)
        return EXIT_DATA
    except MemoryError:  # an allocation the size guard did not foresee: a message, not a trace
        print("ratings: error: the machine ran out of memory during this run; nothing was "
              "written. Take per-verdict intervals (--no-cluster) or cluster by a coarser column "
              "(--cluster COLUMN), fit fewer models (e.g. one --scope), or count a large log "
              "where it lies (--engine duckdb).", file=sys.stderr)  # fmt: skip
        return EXIT_DATA


def program() -> NoReturn:
    """The ``ratings`` program: :func:`main`, then out without the interpreter's teardown."""
    leave(main())


if __name__ == "__main__":  # pragma: no cover
    program()
