"""What a subcommand of the ``ratings`` command line is made of, and the options they share.

A subcommand is one :class:`Command`: its name, help, arguments (a function adding them to its
parser) and the function that runs it. The built-in ones are the modules of
:mod:`ratings.cli.commands`, one each; another installed package registers one under the
entry-point group :data:`ratings.cli.commands.GROUP` (``sampling`` adds ``ratings next``).
:func:`add_command` builds every one of them the same way: description, examples, the inputs
and outputs checked before the run (:func:`declare_io`), and ``func``.

This module is the kit other packages may use: :class:`Command`, :func:`add_command`,
:class:`HelpFormatter`, the shared options (:func:`add_input_options`,
:func:`add_memory_option`, :func:`add_output_options`, :func:`add_verdicts`), and the one
verdict-reading path of every command (:func:`read_log`), and the one way a command prints a
warning (:func:`warn_line`: ``ratings: warning: ...``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ratings.cli.inputs import add_input_options, missing_task_message, parse_mapping, read_log
from ratings.cli.notes import warn_line

__all__ = [
    "Command",
    "CommandKit",
    "HelpFormatter",
    "add_command",
    "add_input_options",
    "add_memory_option",
    "add_output_options",
    "add_verdicts",
    "declare_io",
    "missing_task_message",
    "parse_mapping",
    "read_log",
    "warn_line",
]


class HelpFormatter(argparse.HelpFormatter):
    """The subcommands' help: the description wrapped, an ``examples:`` epilog as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("examples:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


@dataclass(frozen=True)
class Command:
    """One subcommand.

    Attributes
    ----------
    name : str
        The word on the command line (``ratings NAME``).
    help : str
        One line in ``ratings --help``; the description too when ``description`` is None.
    add_arguments : callable
        ``add_arguments(parser)``: adds the subcommand's arguments, in the order ``--help``
        shows them.
    run : callable
        ``run(args) -> int``: the exit status. Errors it raises map to exit statuses in
        :func:`ratings.cli.app.main`, like every subcommand's.
    description : str, optional
        The top of ``ratings NAME --help``.
    examples : tuple of str
        Command lines shown at the end of ``--help`` (and in ``docs/cli.md``).
    inputs, outputs : mapping of str to str
        The arguments naming input and output files (dest -> label in messages); every output
        is checked against the inputs and the other outputs before the command runs.
    defaults : mapping
        Values the handler reads that the parser does not set.
    order : int
        Place in ``ratings --help`` (smaller first; ties by name).
    """

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    description: str | None = None
    examples: tuple[str, ...] = ()
    inputs: Mapping[str, str] = field(default_factory=dict)
    outputs: Mapping[str, str] = field(default_factory=dict)
    defaults: Mapping[str, object] = field(default_factory=dict)
    order: int = 100


def add_command(subparsers, command: Command) -> argparse.ArgumentParser:
    """Add ``command``'s parser to ``subparsers`` (from ``add_subparsers()``); returns it."""
    epilog = None
    if command.examples:
        epilog = "examples:\n" + "\n".join(f"  {e}" for e in command.examples)
    p = subparsers.add_parser(command.name, help=command.help,
                              description=command.description or command.help, epilog=epilog,
                              formatter_class=HelpFormatter)  # fmt: skip
    command.add_arguments(p)
    if command.inputs or command.outputs:
        declare_io(p, dict(command.inputs), dict(command.outputs))
    p.set_defaults(func=command.run, **command.defaults)
    return p


def add_verdicts(p: argparse.ArgumentParser, help: str) -> None:
    """Add the positional ``VERDICTS`` (``-`` reads standard input)."""
    p.add_argument("verdicts", metavar="VERDICTS",
                   help=help + "; '-' reads standard input (CSV, or TSV with --delimiter tab)")


def add_memory_option(p: argparse.ArgumentParser) -> None:
    """Add ``--max-memory SIZE``."""
    p.add_argument("--max-memory", metavar="SIZE",
                   help="stop before dense model x model matrices would need more memory than "
                        "SIZE (e.g. 8GB; default: half the available memory)")  # fmt: skip


def add_output_options(p: argparse.ArgumentParser) -> None:
    """Add the options every writing subcommand has (``--no-csv-escape``)."""
    p.add_argument("--no-csv-escape", dest="csv_escape", action="store_false",
                   help="write CSV text cells as they are; by default cells starting with =, +, "
                        "-, @, tab or carriage return (formulas in a spreadsheet) get a leading "
                        "' (numbers never)")


def declare_io(p: argparse.ArgumentParser, inputs: dict[str, str],
               outputs: dict[str, str]) -> None:  # fmt: skip
    """Name a subcommand's input and output arguments (dest -> label in messages); every
    output is checked against the inputs and the other outputs before the command runs."""
    p.set_defaults(io_inputs=inputs, io_outputs=outputs)


@dataclass(frozen=True)
class CommandKit:
    """The shared options as one object (the signature of registration functions of earlier
    releases: ``register(subparsers, kit)``)."""

    add_memory_option: Callable[[argparse.ArgumentParser], None] = add_memory_option
    add_output_options: Callable[[argparse.ArgumentParser], None] = add_output_options
    declare_io: Callable[[argparse.ArgumentParser, dict[str, str], dict[str, str]],
                         None] = declare_io  # fmt: skip
