"""Names of earlier releases kept for one more release: each warns (:class:`DeprecationWarning`)
naming its replacement and the release that removes it."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["REMOVED_IN", "deprecated_names", "warn_deprecated"]

#: The release that removes the names and paths deprecated in this one.
REMOVED_IN = "0.3.0"


def warn_deprecated(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that ``old`` is deprecated in favour of ``new`` and goes in :data:`REMOVED_IN`."""
    warnings.warn(f"`{old}` is deprecated; use `{new}` instead. `{old}` will be removed in "
                  f"ratings {REMOVED_IN}.", DeprecationWarning, stacklevel=stacklevel)  # fmt: skip


def deprecated_names(
    module: str,
    names: Mapping[str, tuple[str, Callable[[], Any]]],
    fallback: Callable[[str], Any] | None = None,
) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) for the old names of ``module``.

    Parameters
    ----------
    module : str
        The module's own name (``__name__``).
    names : mapping
        ``old name -> (the replacement as users spell it, a function returning it)``.
    fallback : callable, optional
        The module's other ``__getattr__`` (lazy exports), asked for any other name.
    """

    def __getattr__(name: str) -> Any:
        if name in names:
            new, get = names[name]
            warn_deprecated(f"{module}.{name}", new)
            return get()
        if fallback is not None:
            return fallback(name)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__
