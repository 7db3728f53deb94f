"""Subcommands other installed packages add to ``ratings`` (``sampling`` adds ``ratings next``).

A package registers a function under the entry-point group :data:`GROUP` in its metadata
(``[project.entry-points."ratings.commands"]`` in ``pyproject.toml``). The function receives
the ``add_subparsers()`` object and a :class:`CommandKit`, adds its parser, sets ``func`` on it
and returns nothing; errors it raises map to exit statuses in :func:`ratings.cli.app.main` like
every other subcommand's. ``ratings`` itself never imports such a package.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["GROUP", "CommandKit", "HelpFormatter", "add_registered"]

GROUP = "ratings.commands"


class HelpFormatter(argparse.HelpFormatter):
    """The subcommands' help: the description wrapped, an ``examples:`` epilog as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("examples:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


@dataclass(frozen=True)
class CommandKit:
    """The command line's shared options, for a registered subcommand to add to its parser.

    Attributes
    ----------
    add_memory_option : callable
        Adds ``--max-memory SIZE``.
    add_output_options : callable
        Adds the output options every writing subcommand has (``--no-csv-escape``).
    declare_io : callable
        ``declare_io(parser, inputs, outputs)``: name the input and output arguments (dest ->
        label in messages); every output is checked against the inputs and the other outputs
        before the command runs.
    """

    add_memory_option: Callable[[argparse.ArgumentParser], None]
    add_output_options: Callable[[argparse.ArgumentParser], None]
    declare_io: Callable[[argparse.ArgumentParser, dict[str, str], dict[str, str]], None]


def add_registered(subparsers, kit: CommandKit) -> list[str]:
    """Add every registered subcommand to ``subparsers``; their names, in order."""
    from importlib.metadata import entry_points

    names = []
    for entry in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        entry.load()(subparsers, kit)
        names.append(entry.name)
    return names
