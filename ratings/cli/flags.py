"""The command line's flags for the Python arguments named in messages.

While the command line runs, :func:`ratings.core.errors.option` spells options with
:func:`render_option`, so one message serves both front ends (``errors='report'`` in Python,
``--rejected FILE`` on the command line).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

__all__ = ["FLAGS", "render_option"]

#: The flag setting each Python argument: while the command line runs, messages built with
#: :func:`ratings.core.errors.option` name these instead of the Python arguments.
FLAGS: dict[str, str] = {
    "anchor": "--anchor", "anchor_rating": "--anchor", "scope": "--scope", "model": "--model",
    "judge_quality": "--judge-quality", "fit_new_judges": "--fit-new-judges",
    "cluster": "--cluster", "ci": "--ci", "level": "--level", "penalty": "--penalty",
    "n_boot": "--n-boot", "seed": "--seed", "columns": "--columns", "winner_map": "--winner-map",
    "errors": "--rejected", "duplicates": "--duplicates", "method": "--method",
    "weights": "--weights", "missing": "--drop-missing", "date": "--date",
    "refreeze": "--refreeze", "max_memory": "--max-memory", "csv_escape": "--no-csv-escape",
    "top": "--top", "highlight": "--highlight", "n": "--n", "min_matches": "--min-matches",
    "phase": "--phase", "judges": "--judges", "submissions": "--submissions",
    "task_judges": "--task-judges", "objective": "--objective", "max_share": "--max-share",
    "forfeits": "--forfeits", "scopes": "--scopes", "prior": "--prior",
    "eta_known": "--eta-known", "adjust": "--adjust", "families": "--families",
    "effects": "--effects",
    "scale": "--scale", "convert": "--convert", "previous": "--previous", "firth": "--firth",
    "style": "--style", "style_transform": "--style-transform", "style_ridge": "--style-ridge",
    "delimiter": "--delimiter", "encoding": "--encoding", "precision": "--precision",
    "size": "--size", "dpi": "--dpi", "ties": "--ties", "soft": "--soft",
}  # fmt: skip
#: Settings whose flag differs from ``FLAG VALUE`` (a switch, or a flag with a file).
_SETTINGS: dict[tuple[str, object], str] = {
    ("errors", "report"): "--rejected FILE", ("fit_new_judges", True): "--fit-new-judges",
    ("missing", "drop"): "--drop-missing", ("cluster", None): "--no-cluster",
    ("csv_escape", False): "--no-csv-escape", ("forfeits", True): "--forfeits FILE",
    ("eta_known", True): "--eta-known", ("convert", True): "--convert",
    ("firth", True): "--firth", ("soft", True): "--soft",
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
