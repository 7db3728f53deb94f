"""What the command line says about a fit beside its table: judges to look at (by scope), and a
log whose intervals fall back to per verdict because it has no ``task_id``."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Iterable

import pandas as pd

from ratings.core.errors import DataWarning

__all__ = ["report_judges", "show_warning", "warn_unclustered"]


def report_judges(judges: pd.DataFrame | None, scope: str | None = None) -> None:
    """Say on stderr which judges are uninformative or on the boundary, and in which scope."""
    if judges is None:
        return
    weak = judges.index[judges["uninformative"]].tolist()
    edge = judges.index[judges["status"] == "boundary"].tolist()
    where = f"scope {scope!r}: " if scope else ""
    if weak:
        print(f"warning: {where}judge(s) {weak} are uninformative: their eta interval reaches "
              "1/2 (or together their verdicts cannot be told from coin flips).",
              file=sys.stderr)  # fmt: skip
    if edge:
        print(f"note: {where}judge(s) {edge} have eta on the boundary (1/2 or 1); no standard "
              "error (the default `--prior default` keeps eta inside).",
              file=sys.stderr)  # fmt: skip


def warn_unclustered(args: argparse.Namespace, columns: Iterable[str]) -> None:
    """A log without ``task_id`` (and no ``--cluster`` / ``--no-cluster``) gets per-verdict
    intervals: say so (a :class:`~ratings.core.errors.DataWarning`)."""
    if "task_id" not in set(columns) and not args.cluster and not args.no_cluster:
        warnings.warn(
            f"{args.verdicts!r} has no task_id column, so intervals are per verdict (HC0): they "
            "are too narrow when verdicts on one task are dependent. Add task_id, cluster by "
            "another column with --cluster COLUMN, or pass --no-cluster to say the verdicts "
            "are independent.",
            DataWarning,
            stacklevel=2,
        )


def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """``warnings.showwarning`` of the command line: one line on stderr, no source location."""
    print(f"ratings: warning: {message}", file=sys.stderr)
