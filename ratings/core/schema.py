"""The names every layer shares: verdict columns, winner labels, judge names, the text dtype.

A verdict log is normalised by :func:`ratings.read_verdicts` to the columns of
:data:`CANONICAL`; :mod:`ratings.data.comparisons` aggregates them, :mod:`ratings.scopes.rubric`
writes them,
:mod:`ratings.data.dask` reduces them where they live. Each constant is defined here once.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import numpy as np
import pandas as pd

from ratings.core.errors import InvalidVerdictsError

__all__ = [
    "CANONICAL",
    "COMBINED_SCOPE",
    "DEFAULT_JUDGE",
    "DETERMINISTIC_JUDGE",
    "ELO_SCALE",
    "REQUIRED",
    "RESERVED_SCOPES",
    "STRING_DTYPE",
    "WINNERS",
    "Winner",
    "require_columns",
]

Winner = Literal["A", "B", "tie"]
#: Winner labels of a normalised log, in the order of their codes (0 A, 1 B, 2 tie).
WINNERS: tuple[str, str, str] = ("A", "B", "tie")
#: Columns of a normalised verdict log, in order.
CANONICAL: tuple[str, ...] = (
    "model_a", "model_b", "winner", "task_id", "judge", "scope", "match_id", "failed_a", "failed_b",
)  # fmt: skip
#: Columns every verdict log must have.
REQUIRED: tuple[str, ...] = ("model_a", "model_b", "winner")

#: The judge of a log without a ``judge`` column.
DEFAULT_JUDGE = "unspecified"
#: The judge of judge-free comparisons (render forfeits, rubric matches): its eta is always 1.
DETERMINISTIC_JUDGE = "deterministic"

#: The scope of the combined headline in output tables (``ratings combine``, the registry).
COMBINED_SCOPE = "combined"
#: Scope names the package writes itself: a data scope of that name would pass for one.
RESERVED_SCOPES: tuple[str, ...] = (COMBINED_SCOPE,)

try:  # pandas >= 2.3: the "str" dtype (pyarrow-backed when available, NaN for missing)
    STRING_DTYPE: pd.StringDtype | np.dtype = pd.StringDtype(na_value=np.nan)
except TypeError:  # pragma: no cover - older pandas: plain object columns of str
    STRING_DTYPE = np.dtype(object)

#: Elo points per unit of log-strength: Elo = rating + ELO_SCALE * (s_i - s_anchor).
ELO_SCALE = 400.0 / np.log(10.0)


def require_columns(table: pd.DataFrame | Iterable[object], columns: Iterable[object], what: str,
                    *, hint: str = "", prefix: str = "",
                    error: type[ValueError] = InvalidVerdictsError) -> None:  # fmt: skip
    """Raise ``error`` naming the ``columns`` that ``table`` (a frame, or its column labels)
    lacks, if any: ``{prefix}Column(s) [...] not found in {what}. Available columns: [...].
    {hint}``. The one check of required columns, for every table the package reads."""
    have = list(getattr(table, "columns", table))
    missing = [c for c in columns if c not in have]
    if missing:
        raise error(f"{prefix}Column(s) {missing} not found in {what}. Available columns: "
                    f"{have}." + (f" {hint}" if hint else ""))  # fmt: skip
