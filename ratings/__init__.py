"""Elo ratings with honest confidence intervals from pairwise verdicts.

>>> import ratings
>>> r = ratings.fit("verdicts.csv", anchor="GPT-5.5 (medium)=1000")   # doctest: +SKIP
>>> r.to_frame()                                                      # doctest: +SKIP
"""

from ratings import _moved, features, report
from ratings.api.compare_ties import TieComparison, compare_ties
from ratings.api.fitting import fit
from ratings.api.specs import BT, Adjust, Bootstrap, CrowdBT, Read, Solver, Style
from ratings.audit.judge_audit import Audit, audit
from ratings.core.deprecation import deprecated_names
from ratings.core.errors import (
    ConvergenceWarning,
    InvalidVerdictsError,
    JudgeWarning,
    NonIdentifiableError,
)
from ratings.core.version import __version__  # noqa: F401 - re-exported
from ratings.data.comparisons import Comparisons, aggregate
from ratings.io import VerdictLog, read_verdicts
from ratings.result import Ratings
from ratings.stability.drift import drift
from ratings.stability.place import place

_moved.install()  # old module paths (``ratings.crowd``, ...) warn and lead to the new ones

__all__ = [
    "BT",
    "Adjust",
    "Audit",
    "Bootstrap",
    "Comparisons",
    "ConvergenceWarning",
    "CrowdBT",
    "InvalidVerdictsError",
    "JudgeWarning",
    "NonIdentifiableError",
    "Ratings",
    "Read",
    "Solver",
    "Style",
    "TieComparison",
    "VerdictLog",
    "aggregate",
    "audit",
    "compare_ties",
    "drift",
    "features",
    "fit",
    "place",
    "read_verdicts",
    "report",
    "warmup",
]

#: ``ratings.style`` (the text features' module of earlier releases) is ``ratings.features``.
__getattr__ = deprecated_names(__name__, {"style": ("ratings.features", lambda: features)})


def warmup() -> None:
    """Compile (or load from the on-disk cache) every numba kernel on tiny inputs."""
    from ratings.api.warmup import warmup as _warmup

    _warmup()
