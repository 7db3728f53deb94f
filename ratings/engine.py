"""Which kernels run a computation: numba's compiled ones or their NumPy twins.

The compiled kernels (:mod:`ratings._kernels`) win on large logs, but a fresh process pays about
half a second to import numba and load them from the on-disk cache. Below
:data:`AUTO_NUMBA_VERDICTS` verdicts the NumPy twins (:mod:`ratings._kernels_ref`, tested equal to
the kernels) finish sooner than that start-up, so ``engine="auto"`` picks them there.
"""

from __future__ import annotations

from types import ModuleType
from typing import Literal

__all__ = ["AUTO_NUMBA_VERDICTS", "Engine", "kernels", "resolve"]

Engine = Literal["auto", "numba", "numpy"]

#: Verdicts (or aggregated rows) from which ``engine="auto"`` uses the numba kernels.
AUTO_NUMBA_VERDICTS = 200_000


def resolve(engine: Engine, size: int) -> Literal["numba", "numpy"]:
    """The engine to use for a problem of ``size`` verdicts."""
    if engine == "auto":
        return "numba" if size >= AUTO_NUMBA_VERDICTS else "numpy"
    if engine in ("numba", "numpy"):
        return engine
    raise ValueError(f"`engine` must be 'auto', 'numba' or 'numpy'; got {engine!r}.")


def kernels(engine: Engine, size: int = AUTO_NUMBA_VERDICTS) -> ModuleType:
    """The kernel module for ``engine`` (``"auto"`` decides by ``size``); imported on first use."""
    if resolve(engine, size) == "numba":
        from ratings import _kernels

        return _kernels
    from ratings import _kernels_ref

    return _kernels_ref
