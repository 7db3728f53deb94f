"""Plan several scopes at once: each scope draws its own batch from its own verdicts.

A campaign judges the same submissions on several scopes (analytical, presentation, the axes of
a video benchmark); each scope has its own ratings, so each needs its own comparisons.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

import ratings
from sampling.board.inputs import check_names
from sampling.design.plan import plan_matches

__all__ = ["plan_scopes", "scope_seed"]


def scope_seed(seed: int, scope: str) -> int:
    """The seed of one scope's batch, derived from ``seed`` and the scope's name.

    It depends on nothing else, so adding a scope to a call leaves the other scopes' plans as
    they were.
    """
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(
            f"`seed` must be a non-negative integer (plans are reproducible only with a fixed "
            f"seed); got {seed!r}."
        )
    entropy = [int(seed), zlib.crc32(str(scope).encode("utf-8"))]
    return int(np.random.SeedSequence(entropy).generate_state(1, dtype=np.uint64)[0] >> 1)


def plan_scopes(
    verdicts: pd.DataFrame | ratings.VerdictLog | None,
    submissions: pd.DataFrame | None,
    judges: Sequence[str],
    n: int,
    *,
    scopes: Sequence[str],
    seed: int,
    **options,
) -> pd.DataFrame:
    """Plan ``n`` matches for each scope from that scope's verdicts, in one table.

    Parameters
    ----------
    verdicts : DataFrame, ratings.VerdictLog or None
        The whole log (a ``scope`` column tells the scopes apart). A scope without verdicts yet
        is planned from an empty log.
    submissions : DataFrame or None
        Shared by every scope (see :func:`sampling.plan_matches`).
    judges : list of str
        The panel; each scope keeps its own judges level.
    n : int
        Judged matches per scope.
    scopes : list of str
        The scopes to plan, in the order of the output.
    seed : int
        Each scope's batch uses :func:`scope_seed` ``(seed, scope)``.
    **options
        Any other keyword of :func:`sampling.plan_matches` (``phase``, ``anchor``,
        ``objective``, ``max_share``, ``task_judges``, ``forfeits``, ...), applied to every
        scope; ``scope`` and ``fitted`` are per scope and not accepted.

    Returns
    -------
    pandas.DataFrame
        ``scope`` followed by the columns of :func:`sampling.plan_matches`, the scopes one
        after the other; ``attrs["phase_reason"]`` maps each scope to its plan's line on the
        balanced phase.
    """
    for name in ("scope", "fitted"):
        if name in options:
            raise TypeError(f"plan_scopes() plans every scope itself; `{name}` is not accepted.")
    parts, reasons = [], {}
    for scope in check_names(scopes, "scopes"):
        part = plan_matches(verdicts, submissions, judges, n, seed=scope_seed(seed, scope),
                            scope=scope, **options)  # fmt: skip
        reasons[scope] = part.attrs.get("phase_reason", "")
        part.attrs = {}
        part.insert(0, "scope", scope)
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    out.attrs["phase_reason"] = reasons
    return out
