"""Exceptions and warnings raised by :mod:`ratings`.

Every data error says what is wrong, how many rows, the first few row numbers and values, and how
to fix it. Row numbers are 0-based positions among the data rows (the header is not counted), the
same numbers pandas shows as the index of a freshly read frame.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

import numpy as np
import pandas as pd

__all__ = [
    "ConvergenceWarning",
    "InvalidVerdictsError",
    "NonIdentifiableError",
    "PenaltyOnlyWarning",
    "close_matches",
    "format_names",
    "format_rows",
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


class ConvergenceWarning(RuntimeWarning):
    """The optimiser stopped before reaching its tolerance; the result is returned regardless."""


class PenaltyOnlyWarning(RuntimeWarning):
    """A penalised fit rates models whose rating exists only because of the penalty; their
    intervals are open and they have no rank interval (see :mod:`ratings.separation`)."""


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
