"""What the command line says beside a table: judges to look at (by scope), and the library's
warnings, recorded while a command runs and printed in one format."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable

import pandas as pd

from ratings.core.errors import (
    ConvergenceWarning,
    DataWarning,
    JudgeWarning,
    PenaltyOnlyWarning,
)

__all__ = ["WARNING", "report_judges", "show_warnings", "warn_line"]

#: The prefix of every warning the command line prints (one for every subcommand).
WARNING = "ratings: warning: "


def warn_line(text: str) -> None:
    """Print one warning line on standard error, with the command line's one prefix."""
    print(f"{WARNING}{text}", file=sys.stderr)


def report_judges(judges: pd.DataFrame | None, scope: str | None = None) -> None:
    """Say on stderr which judges the judges table flags as uninformative or on the boundary,
    and in which scope: notes on the table (``Ratings.judges``, its ``uninformative`` and
    ``status`` columns), not warnings; the library's warnings are printed by
    :func:`show_warnings`."""
    if judges is None:
        return
    weak = judges.index[judges["uninformative"]].tolist()
    edge = judges.index[judges["status"] == "boundary"].tolist()
    where = f"scope {scope!r}: " if scope else ""
    if weak:
        print(f"note: {where}judge(s) {weak} are uninformative: their eta interval reaches "
              "1/2 (or together their verdicts cannot be told from coin flips).",
              file=sys.stderr)  # fmt: skip
    if edge:
        print(f"note: {where}judge(s) {edge} have eta on the boundary (1/2 or 1); no standard "
              "error (the default `--prior default` keeps eta inside, but for `--adjust` alone, "
              "which keeps the plain estimate wherever it exists).", file=sys.stderr)  # fmt: skip


def show_warnings(caught: list[warnings.WarningMessage],
                  relabel: Callable[[str], str] = str) -> None:  # fmt: skip
    """Print recorded warnings on stderr, one line each (``ratings: warning: ...``, the text
    Python shows, without a source location), and empty the list."""
    for w in caught:
        text = relabel(str(w.message))
        if not issubclass(w.category, DataWarning | JudgeWarning | ConvergenceWarning
                          | PenaltyOnlyWarning):  # fmt: skip
            text = f"{w.category.__name__}: {text}"
        warn_line(text)
    caught.clear()
