"""The command line's flags for the Python arguments named in messages.

While the command line runs, :func:`ratings.core.errors.option` spells options with
:func:`render_option`, so one message serves both front ends (``errors='report'`` in Python,
``--rejected FILE`` on the command line).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from ratings.api.options import flags, switches

__all__ = ["FLAGS", "render_option"]

#: The flag setting each Python argument: while the command line runs, messages built with
#: :func:`ratings.core.errors.option` name these instead of the Python arguments.
FLAGS: dict[str, str] = {
    **flags(),  # the fit's options, from their table (ratings.api.options)
    "anchor_rating": "--anchor", "duplicates": "--duplicates", "method": "--method",
    "weights": "--weights", "missing": "--drop-missing", "date": "--date",
    "refreeze": "--refreeze", "csv_escape": "--no-csv-escape",
    "top": "--top", "highlight": "--highlight", "n": "--n", "min_matches": "--min-matches",
    "phase": "--phase", "judges": "--judges", "submissions": "--submissions",
    "task_judges": "--task-judges", "objective": "--objective", "max_share": "--max-share",
    "forfeits": "--forfeits", "scopes": "--scopes", "effects": "--effects",
    "scale": "--scale", "convert": "--convert", "previous": "--previous",
    "delimiter": "--delimiter", "encoding": "--encoding", "precision": "--precision",
    "size": "--size", "dpi": "--dpi", "strong_weight": "--strong-weight",
    "reference": "--reference", "reference_cov": "--reference-cov", "max_refits": "--max-refits",
}  # fmt: skip
#: Settings whose flag differs from ``FLAG VALUE`` (a switch, or a flag with a file).
_SETTINGS: dict[tuple[str, object], str] = {
    **switches(),  # the fit's (--firth, --fit-new-judges, --eta-known, --no-cluster, ...)
    ("missing", "drop"): "--drop-missing", ("csv_escape", False): "--no-csv-escape",
    ("forfeits", True): "--forfeits FILE", ("convert", True): "--convert",
}  # fmt: skip


def render_option(name: str, value: object) -> str | None:
    """``option(name, value)`` on the command line: the flag (and value) that sets it."""
    try:
        switch = _SETTINGS.get((name, value))
    except TypeError:  # an unhashable value (a mapping)
        switch = None
    if switch is not None:
        return f"`{switch}`"
    flag = FLAGS.get(name)
    if flag is None:
        return None
    if value is ...:
        return f"`{flag}`"
    if isinstance(value, Mapping):
        text = ",".join(f"{k}={v}" for k, v in value.items())
    else:
        text = str(value)
    return f"`{flag} {shlex.quote(text)}`"
