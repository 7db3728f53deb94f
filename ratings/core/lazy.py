"""Names a package re-exports from its modules, imported on first use (PEP 562)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from importlib import import_module
from types import ModuleType
from typing import Any

__all__ = ["keep_lazy_names", "lazy_exports"]


def lazy_exports(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that loads ``name`` from ``homes[name]``.

    Parameters
    ----------
    package : str
        The package's own name, for the error on an unknown attribute.
    homes : mapping of str to str
        Each exported name and the module that defines it (a submodule, ``package.name``,
        is handed out itself).
    """

    def __getattr__(name: str) -> Any:
        if name in homes:  # a name of the module named, or that module when it is the name's own
            module = import_module(homes[name])
            return module if homes[name] == f"{package}.{name}" else getattr(module, name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


def keep_lazy_names(package: str, names: Iterable[str]) -> None:
    """Keep ``names`` of ``package`` lazy exports when a subpackage has the same name.

    Importing ``package.name`` binds the subpackage as the attribute ``name`` of ``package``,
    which would hide the object exported lazily under that name (``ratings.audit``, the
    function, beside the package :mod:`ratings.audit`). The package's module refuses that
    binding for ``names``, so the attribute is always the export, whether the subpackage was
    imported or not (its modules stay reachable as ``sys.modules`` holds them: ``from
    package.name import ...``).

    Parameters
    ----------
    package : str
        The package (already in ``sys.modules``: its ``__init__`` calls this).
    names : iterable of str
        The lazily exported names that are also subpackages' names.
    """
    kept = frozenset(names)

    def __setattr__(self: ModuleType, name: str, value: object) -> None:
        if name in kept and isinstance(value, ModuleType):
            return  # the subpackage bound by its import: the export stays
        ModuleType.__setattr__(self, name, value)

    module = sys.modules[package]
    module.__class__ = type(type(module).__name__, (ModuleType,), {"__setattr__": __setattr__})
