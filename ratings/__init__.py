"""Elo ratings with honest confidence intervals from pairwise verdicts.

>>> import ratings
>>> r = ratings.fit("verdicts.csv", anchor="GPT-5.5 (medium)=1000")   # doctest: +SKIP
>>> r.to_frame()                                                      # doctest: +SKIP
"""

# ruff: noqa: E402 (the program's BLAS setting comes first, before anything loads NumPy)
from ratings.core import program as _program

_program.one_blas_thread_for_the_program()  # the `ratings` program only (see there)
_program.pause_collection_for_the_program()  # its imports without the cyclic collector

from ratings import _moved
from ratings.core.deprecation import deprecated_names
from ratings.core.errors import (
    ConvergenceWarning,
    InvalidVerdictsError,
    JudgeWarning,
    NonIdentifiableError,
)
from ratings.core.hooks import register_fragility, register_html
from ratings.core.lazy import keep_lazy_names, lazy_exports
from ratings.core.version import __version__  # noqa: F401 - re-exported

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

#: Each name and the module that defines it, imported on first use: ``import ratings`` (and
#: the command line, which starts with it) loads only what it runs.
_HOMES = {
    "Adjust": "ratings.api.specs", "BT": "ratings.api.specs", "Bootstrap": "ratings.api.specs",
    "CrowdBT": "ratings.api.specs", "Read": "ratings.api.specs", "Solver": "ratings.api.specs",
    "Style": "ratings.api.specs", "fit": "ratings.api.fitting",
    "TieComparison": "ratings.api.compare_ties", "compare_ties": "ratings.api.compare_ties",
    "Comparisons": "ratings.data.comparisons", "aggregate": "ratings.data.comparisons",
    "VerdictLog": "ratings.io", "read_verdicts": "ratings.io", "Ratings": "ratings.result",
    "drift": "ratings.stability.drift", "place": "ratings.stability.place",
    "features": "ratings.features", "report": "ratings.report",
    "Audit": "ratings.audit.judge_audit", "audit": "ratings.audit.judge_audit",
}  # fmt: skip

#: ``ratings.style`` (the text features' module of earlier releases) is ``ratings.features``.
__getattr__ = deprecated_names(
    __name__,
    {"style": ("ratings.features", lambda: __getattr__("features"))},
    fallback=lazy_exports(__name__, _HOMES),
)
#: ``ratings.audit`` is the function, not the package of that name, imported or not.
keep_lazy_names(__name__, ("audit",))


def _page(result, path=None, **options) -> str:
    """:meth:`Ratings.to_html` until :mod:`ratings.report` is imported (which registers its own)."""
    from ratings.report import to_html

    return to_html(result, path, **options)


def _notebook(result, **options) -> str:
    """A notebook's display of a fit, rendered by :mod:`ratings.report` (imported on first use)."""
    from ratings.report import notebook_html

    return notebook_html(result, **options)


def _fragility(result, **options) -> object:
    """:meth:`Ratings.fragility`, run by :mod:`ratings.stability` (imported on first use)."""
    from ratings.stability.fragility import fragility

    return fragility(result, **options)


register_html(page=_page, notebook=_notebook)
register_fragility(_fragility)


def warmup() -> None:
    """Compile (or load from the on-disk cache) every numba kernel on tiny inputs."""
    from ratings.api.warmup import warmup as _warmup

    _warmup()
