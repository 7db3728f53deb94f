"""Names a package re-exports from its modules, imported on first use (PEP 562)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_exports"]


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
