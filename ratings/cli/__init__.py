"""Owns the ``ratings`` command line: every subcommand (one module each in
:mod:`ratings.cli.commands`), the kit they are built with (:mod:`ratings.cli.kit`), flags and
notes; imports every part of ratings, and finds the subcommands other packages register
(``ratings next``)."""

from ratings.core.lazy import lazy_exports

__all__ = ["EXIT_DATA", "FLAGS", "USER_ERRORS", "main", "program"]
__getattr__ = lazy_exports(__name__, dict.fromkeys(__all__, "ratings.cli.app"))
