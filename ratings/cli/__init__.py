"""Owns the ``ratings`` command line: every subcommand, the demo, flags and notes; imports every
part of ratings, and finds the subcommands other packages register (``ratings next``)."""

from ratings.core.lazy import lazy_exports

__all__ = ["main", "program"]
__getattr__ = lazy_exports(__name__, dict.fromkeys(__all__, "ratings.cli.app"))
