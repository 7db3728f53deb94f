"""Exceptions and warnings raised by :mod:`ratings`.

Every data error says what is wrong, how many rows, the first few row numbers and values, and how
to fix it. Row numbers are 0-based positions among the data rows (the header is not counted), the
same numbers pandas shows as the index of a freshly read frame.
"""

from __future__ import annotations

import contextlib
import contextvars
import difflib
from collections.abc import Callable, Iterable, Iterator

import numpy as np
import pandas as pd

__all__ = [
    "ConvergenceWarning",
    "DataWarning",
    "DegenerateBoardError",
    "InvalidVerdictsError",
    "JudgeWarning",
    "MemoryLimitError",
    "NonIdentifiableError",
    "OptionRenderer",
    "OutputError",
    "PenaltyOnlyWarning",
    "UnclusteredWarning",
    "close_matches",
    "format_names",
    "format_rows",
    "option",
    "option_available",
    "options_rendered_by",
]


class InvalidVerdictsError(ValueError):
    """A verdict log (or another input table) cannot be used as it is.

    Parameters
    ----------
    message : str
        What is wrong, where, and how to fix it.
    rows : pandas.DataFrame, optional
        The offending rows: a ``row`` column with 0-based data row numbers and a ``reason`` column,
        plus whatever values help to find them. Empty when the problem is not tied to rows
        (a missing column, an unreadable file).
    """

    def __init__(self, message: str, rows: pd.DataFrame | None = None) -> None:
        super().__init__(message)
        self.rows = rows if rows is not None else pd.DataFrame(columns=["row", "reason"])


class NonIdentifiableError(ValueError):
    """The maximum-likelihood estimate does not exist (the win graph is not strongly connected).

    Attributes
    ----------
    never_lost, never_won : list of str
        Models without a single loss (or tie), and models without a single win (or tie).
    groups : list of list of str
        The strongly connected groups of models, strongest group first.
    """

    def __init__(
        self,
        message: str,
        *,
        never_lost: list[str] | None = None,
        never_won: list[str] | None = None,
        groups: list[list[str]] | None = None,
    ) -> None:
        super().__init__(message)
        self.never_lost = never_lost or []
        self.never_won = never_won or []
        self.groups = groups or []


class DegenerateBoardError(ValueError):
    """The board cannot support the intervals asked for: their width would be zero although the
    data carry little information (e.g. a board of ties only, where every residual is zero and
    the sandwich and the bootstrap see no variation).

    Attributes
    ----------
    pairs : list of tuple of str
        The contrasts (model pairs) whose interval would collapse.
    """

    def __init__(self, message: str, pairs: list[tuple[str, str]] | None = None) -> None:
        super().__init__(message)
        self.pairs = pairs or []


class OutputError(OSError):
    """An output cannot be written where asked: a directory, a special file (FIFO, device), a
    read-only file or directory, a full disk. Nothing was written; ``path`` is the output as
    given (the command line names its flag)."""

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path

    def __str__(self) -> str:
        return str(self.args[0])


class MemoryLimitError(MemoryError):
    """A computation would need more memory than allowed (see :mod:`ratings.core.memory`); it was
    stopped before allocating. ``needed`` and ``limit`` are in bytes."""

    def __init__(self, message: str, *, needed: int, limit: int) -> None:
        super().__init__(message)
        self.needed, self.limit = needed, limit

class DataWarning(UserWarning):
    """The input was used, but something in it deserves a look (the message says what, where).

    The command line prints these as ``ratings: warning: ...``.
    """


class UnclusteredWarning(DataWarning):
    """A fit's intervals treat verdicts as independent because the log has no ``task_id``
    column (and no other cluster was chosen): too narrow if verdicts on one task are dependent.
    Pass ``cluster=None`` to say they are independent, or a column to cluster by."""


class ConvergenceWarning(RuntimeWarning):
    """The optimiser stopped before reaching its tolerance; the result is returned regardless."""


class JudgeWarning(UserWarning):
    """Crowd-BT cannot say much about a judge (one judge, very few verdicts, eta resting on the
    prior), or a judge-quality file cannot carry its uncertainty; the message names the judges
    and what to do."""


class PenaltyOnlyWarning(RuntimeWarning):
    """A penalised fit rates models whose rating exists only because of the penalty; their
    intervals are open and they have no rank interval (see :mod:`ratings.models.separation`)."""


def format_rows(rows: np.ndarray | list[int], limit: int = 5) -> str:
    """Return ``"[3, 17, 20]"`` or ``"[3, 17, 20, 21, 40, ...]"`` for error messages."""
    rows = [int(r) for r in np.asarray(rows).ravel()[: limit + 1]]
    text = ", ".join(str(r) for r in rows[:limit])
    return f"[{text}{', ...' if len(rows) > limit else ''}]"


def format_names(names: Iterable[object], limit: int = 8) -> str:
    """Return ``"['a', 'b']"`` or ``"['a', 'b', 'c'] and 4 more"`` for error messages."""
    names = [str(n) for n in names]
    more = len(names) - limit
    return f"{names[:limit]}{f' and {more} more' if more > 0 else ''}"


def close_matches(name: str, names: Iterable[object]) -> str:
    """A hint sentence for error messages naming the labels closest to ``name``:
    ``"Did you mean ['x', 'y']?"``, or the first few known labels when none is close."""
    near = difflib.get_close_matches(str(name), [str(n) for n in names], n=3, cutoff=0.5)
    return f"Did you mean {near}?" if near else f"Known: {[str(n) for n in list(names)[:8]]}."


# ----------------------------------------------------------------------------------------------
# Options in messages: Python arguments for the Python API, flags for the command line
# ----------------------------------------------------------------------------------------------

#: ``render(name, value) -> text or None``: how a front end spells setting option ``name`` (to
#: ``value``; :data:`Ellipsis` when a message only names the option). ``None`` falls back to
#: the Python spelling.
OptionRenderer = Callable[[str, object], "str | None"]
_RENDERER: contextvars.ContextVar[OptionRenderer | None] = contextvars.ContextVar(
    "ratings_option_renderer", default=None)  # fmt: skip


def option(name: str, value: object = ...) -> str:
    """An option as the user sets it, for error messages: the Python argument by default
    (``option("errors", "report")`` -> ``"`errors='report'`"``, ``option("level")`` ->
    ``"`level`"``), or the command line's flag while :func:`options_rendered_by` is in effect
    (``"`--rejected FILE`"``, ``"`--level`"``).

    Messages are built with this function wherever they name an option, so one message serves
    both front ends without rewriting its text afterwards.
    """
    render = _RENDERER.get()
    text = render(name, value) if render is not None else None
    if text is not None:
        return text
    return f"`{name}`" if value is ... else f"`{name}={value!r}`"


def option_available(name: str) -> bool:
    """Does the front end in use have option ``name``? (The command line lacks a few Python
    arguments; a message offers such an option only where it exists.)"""
    render = _RENDERER.get()
    return render is None or render(name, ...) is not None


@contextlib.contextmanager
def options_rendered_by(render: OptionRenderer) -> Iterator[None]:
    """Within the block, :func:`option` spells options with ``render`` (the command line's
    flags); messages raised outside it keep the Python arguments."""
    token = _RENDERER.set(render)
    try:
        yield
    finally:
        _RENDERER.reset(token)
