"""Whether a numba kernel is ready to run without compiling: compiled in this process, or held
by numba's on-disk cache for this machine.

A kernel compiled with ``cache=True`` is written to numba's cache (``__pycache__`` beside its
module when that is writable, else the user's cache directory, or ``NUMBA_CACHE_DIR``) and
loaded from there by later processes in milliseconds; the first process after an install (or
after the module changed) compiles it, which for a large kernel takes many seconds. Callers
with a NumPy twin of the kernel can run the twin instead while :func:`ready` is false.

The check reads numba's index file of the kernel (the list of cached signatures, stamped with
the module's modification time and size, which numba itself checks before loading) through the
dispatcher's cache object; it does not set up numba's compilation target. Entries cached for
another CPU (numba keys them by target triple and CPU name) do not count.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ready"]


def _machine() -> tuple[str, str]:
    """The (target triple, CPU name) numba keys this machine's cached code by."""
    import llvmlite.binding as ll
    from numba.core import config

    return ll.get_process_triple(), config.CPU_NAME or ll.get_host_cpu_name()


def ready(dispatcher: Any) -> bool:
    """Can ``dispatcher`` (a ``numba.njit(cache=True)`` function) run without compiling?

    Parameters
    ----------
    dispatcher : numba dispatcher
        The kernel.

    Returns
    -------
    bool
        True when it has a compiled signature in this process, or numba's on-disk cache holds
        one for this machine and the kernel's current source; False otherwise, and whenever
        the cache cannot be read (numba's private cache API changed: the caller then takes
        its NumPy twin, never a wrong result).
    """
    if getattr(dispatcher, "signatures", None):
        return True
    try:
        index = dispatcher._cache._cache_file._load_index()
        machine = _machine()
        return any(tuple(key[1][:2]) == machine for key in index)
    except Exception:
        return False
