"""Which kernels run a computation: numba's compiled ones or their NumPy twins.

The compiled kernels (:mod:`ratings.kernels.fit`) win on large logs, but a process pays a fixed
start-up to use the first of them: importing numba and setting up its compilation target (which
imports all of numba's implementations, and scipy.linalg with them) before the on-disk cache can
be read, about 0.5-0.7 s on a 2-core machine whichever kernels are loaded (each cached kernel
then loads in a few ms). So ``engine="auto"`` uses the NumPy twins (:mod:`ratings.kernels.fit_ref`,
tested equal to the kernels) below :data:`AUTO_NUMBA_VERDICTS` verdicts once the kernels are
loaded, and below :data:`AUTO_NUMBA_COLD` in a process that has not loaded them (a one-shot
``ratings fit`` of a million verdicts finishes in the twins before numba would be ready).
:func:`ratings.warmup` loads the kernels, for processes that refit large logs many times.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Literal

__all__ = ["AUTO_NUMBA_COLD", "AUTO_NUMBA_VERDICTS", "Engine", "kernels", "kernels_loaded",
           "resolve"]

Engine = Literal["auto", "numba", "numpy"]

#: Verdicts (or aggregated rows) from which ``engine="auto"`` uses the numba kernels once they
#: are loaded in this process.
AUTO_NUMBA_VERDICTS = 200_000
#: Verdicts from which ``engine="auto"`` loads the numba kernels into a process that has not
#: loaded them yet. At 1M verdicts the twins take 0.1-0.15 s more than the kernels, numba's
#: start-up 0.5-0.7 s; the twins also hold about twice the kernels' memory, hence the margin.
AUTO_NUMBA_COLD = 2_000_000


def kernels_loaded() -> bool:
    """Has this process loaded the numba kernels (so using them costs no start-up)?"""
    return "ratings.kernels.fit" in sys.modules


def resolve(engine: Engine, size: int) -> Literal["numba", "numpy"]:
    """The engine to use for a problem of ``size`` verdicts."""
    if engine == "auto":
        return "numba" if size >= (AUTO_NUMBA_VERDICTS if kernels_loaded()
                                    else AUTO_NUMBA_COLD) else "numpy"  # fmt: skip
    if engine in ("numba", "numpy"):
        return engine
    raise ValueError(f"`engine` must be 'auto', 'numba' or 'numpy'; got {engine!r}.")


def kernels(engine: Engine, size: int = AUTO_NUMBA_COLD) -> ModuleType:
    """The kernel module for ``engine`` (``"auto"`` decides by ``size``); imported on first use."""
    if resolve(engine, size) == "numba":
        from ratings.kernels import fit as _kernels

        return _kernels
    from ratings.kernels import fit_ref as _kernels_ref

    return _kernels_ref
