"""The subcommands of ``ratings``: one module each, and those other packages register.

Each module of this package (not starting with ``_``) defines ``COMMAND``, a
:class:`ratings.cli.kit.Command`, and is the subcommand named like the module (``_`` written
``-``); adding a subcommand is adding a module here. :func:`builtin` finds them.

Another installed package registers a subcommand under the entry-point group :data:`GROUP` in
its metadata (``[project.entry-points."ratings.commands"]`` in ``pyproject.toml``), naming a
:class:`~ratings.cli.kit.Command` (``sampling`` adds ``ratings next``). :func:`add_registered`
builds those with the same :func:`~ratings.cli.kit.add_command`. ``ratings`` itself never
imports such a package.
"""

from __future__ import annotations

import pkgutil
from importlib import import_module

from ratings.cli.kit import Command, CommandKit, HelpFormatter, add_command

__all__ = ["GROUP", "CommandKit", "HelpFormatter", "add_builtin", "add_registered", "builtin",
           "builtin_names"]

GROUP = "ratings.commands"


def builtin_names() -> list[str]:
    """The built-in subcommands' names (from the module names, nothing imported)."""
    return sorted(m.name.replace("_", "-") for m in pkgutil.iter_modules(__path__)
                  if not m.name.startswith("_"))  # fmt: skip


def _command(name: str) -> Command:
    """The built-in subcommand ``name`` (its module imported)."""
    command = import_module(f"{__name__}.{name.replace('-', '_')}").COMMAND
    if command.name != name:
        raise RuntimeError(f"{__name__}.{name.replace('-', '_')} defines the subcommand "
                           f"{command.name!r}; a module defines the one named like it.")
    return command


def builtin() -> list[Command]:
    """The built-in subcommands, in the order ``ratings --help`` lists them."""
    return sorted(map(_command, builtin_names()), key=lambda c: (c.order, c.name))


def add_builtin(subparsers, only: str | None = None) -> list[str]:
    """Add every built-in subcommand to ``subparsers`` (or only the one named ``only``, whose
    module alone is imported); their names, in order."""
    commands = builtin() if only is None else [_command(only)]
    for command in commands:
        add_command(subparsers, command)
    return [c.name for c in commands]


def add_registered(subparsers, kit: CommandKit | None = None) -> list[str]:
    """Add every registered subcommand to ``subparsers``; their names, in order.

    An entry point names a :class:`~ratings.cli.kit.Command` (or, as in earlier releases, a
    function ``register(subparsers, kit)`` adding its parser itself).
    """
    from importlib.metadata import entry_points

    names = []
    for entry in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        target = entry.load()
        if isinstance(target, Command):
            add_command(subparsers, target)
        else:
            target(subparsers, kit or CommandKit())
        names.append(entry.name)
    return names
