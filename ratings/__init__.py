"""Elo ratings with honest confidence intervals from pairwise verdicts.

>>> import ratings
>>> r = ratings.fit("verdicts.csv", anchor="GPT-5.5 (medium)=1000")   # doctest: +SKIP
>>> r.to_frame()                                                      # doctest: +SKIP
"""

from ratings.api import fit
from ratings.audit import Audit, audit
from ratings.data import Comparisons, aggregate
from ratings.errors import (
    ConvergenceWarning,
    InvalidVerdictsError,
    JudgeWarning,
    NonIdentifiableError,
)
from ratings.io import VerdictLog, read_verdicts
from ratings.result import Ratings

__all__ = [
    "Audit",
    "Comparisons",
    "ConvergenceWarning",
    "InvalidVerdictsError",
    "JudgeWarning",
    "NonIdentifiableError",
    "Ratings",
    "VerdictLog",
    "aggregate",
    "audit",
    "fit",
    "read_verdicts",
    "warmup",
]

__version__ = "0.1.0"


def warmup() -> None:
    """Compile (or load from the on-disk cache) every numba kernel on tiny inputs."""
    from ratings._warmup import warmup as _warmup

    _warmup()
