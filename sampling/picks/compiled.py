"""Whether a plan's compiled loops run without compiling first.

The active phase's loop (:mod:`sampling.picks.picker_numba`) and the judge repair of large
plans (:mod:`sampling.judges.assign_numba`) are numba kernels cached on disk; compiling them
takes half a minute of CPU, loading them from the cache a fraction of a second. A plan takes
them when they are compiled in this process or cached (:func:`ready`), and otherwise makes the
same picks with their NumPy twins (:class:`sampling.picks.picker.Picker`,
:func:`sampling.judges.assign._weighted_repair`); ``ratings next`` then compiles them in the
background for the next plans (:mod:`sampling.warmup`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from ratings.kit import kernel_ready
from sampling.judges.assign import repair_ready

__all__ = ["forced", "loaded", "ready"]

_forced = False  # see forced


def loaded() -> bool:
    """Has this process compiled (or loaded) the pick loop (or is it :func:`forced`)? Never
    imports numba."""
    module = sys.modules.get("sampling.picks.picker_numba")
    return _forced or (module is not None and bool(module.active_picks.signatures))


@contextmanager
def forced() -> Iterator[None]:
    """Within this block every active phase runs in the compiled loop (compiling it if
    needed), whatever the plan's size: how :func:`sampling.warmup.warmup` compiles it."""
    global _forced
    before, _forced = _forced, True
    try:
        yield
    finally:
        _forced = before


def ready() -> bool:
    """Do the pick loop and the judge repair both run without compiling (compiled in this
    process, or in numba's on-disk cache for this machine)? Imports numba."""
    from sampling.picks import picker_numba

    return kernel_ready(picker_numba.active_picks) and repair_ready()
