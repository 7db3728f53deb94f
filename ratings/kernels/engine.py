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

The CR2 kernels of a clustered fit's intervals (:mod:`ratings.kernels.inference`, taken through
:func:`ratings.inference.cluster.loaded_kernel` from :data:`AUTO_NUMBA_VERDICTS` rows where they
are loaded) are loaded in tiers, as JIT runtimes do: a process's first large fit runs their
twins (a one-shot ``ratings fit`` never pays numba's start-up); a process that asks for one of
them a second time on :data:`AUTO_NUMBA_REFIT` rows or more is evidently refitting large boards,
so the compiled kernels are loaded then (:func:`refitting`) and used from then on (where numba's
cache holds them; else the twins run on). Measured (a board's default fit, medians of 7 refits,
wall, 2 cores): 200 models and 250k verdicts 0.078 -> 0.066 s once loaded, 500k 0.124 -> 0.088
s, the headline (1M verdicts, 200 models) 0.22 -> 0.155 s, 1,000 models 0.52 -> 0.45 s; the
refit that loads them takes 0.3-0.5 s more, repaid within about ten refits from 500k rows
(within 30-50 below). The rule loads no fit kernel (:mod:`ratings.kernels.fit`): with them too
the headline's refit measured slower (0.20 s).
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Literal

__all__ = ["AUTO_NUMBA_COLD", "AUTO_NUMBA_REFIT", "AUTO_NUMBA_VERDICTS", "Engine", "kernels",
           "kernels_loaded", "refitting", "resolve"]

Engine = Literal["auto", "numba", "numpy"]

#: Verdicts (or aggregated rows) from which ``engine="auto"`` uses the numba kernels once they
#: are loaded in this process.
AUTO_NUMBA_VERDICTS = 200_000
#: Verdicts from which ``engine="auto"`` loads the numba kernels into a process that has not
#: loaded them yet. At 1M verdicts the twins take 0.1-0.15 s more than the kernels, numba's
#: start-up 0.5-0.7 s; the twins also hold about twice the kernels' memory, hence the margin.
AUTO_NUMBA_COLD = 2_000_000
#: Rows from which a second request for a CR2 kernel loads the compiled CR2 kernels into a
#: process that has not loaded them (:func:`refitting`).
AUTO_NUMBA_REFIT = 500_000

_large_requests: set[str] = set()  # CR2 kernels asked for on AUTO_NUMBA_REFIT rows or more


def kernels_loaded() -> bool:
    """Has this process loaded the numba kernels (so using them costs no start-up)?"""
    return "ratings.kernels.fit" in sys.modules


def refitting(name: str, size: int) -> bool:
    """Note a request for the CR2 kernel ``name`` on ``size`` rows; True when this process asked
    for it on :data:`AUTO_NUMBA_REFIT` rows or more before (each fit asks once for each kernel it
    takes: the process is refitting a large board, and loading the kernels pays)."""
    if size < AUTO_NUMBA_REFIT:
        return False
    if name in _large_requests:
        return True
    _large_requests.add(name)
    return False


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
