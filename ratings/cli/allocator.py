"""Process settings for one ``ratings`` command-line run: the allocator (glibc only) and the
exit.

glibc's ``malloc`` serves every block above its mmap threshold (128 KiB at start, raised only
as such blocks are freed) with a fresh ``mmap`` and returns it to the system on ``free``, so a
short process that makes a few dozen 8 MB temporaries (1M verdicts) page-faults every page of
each of them anew: a fresh ``ratings fit`` on 1M verdicts spent 0.05-0.25 s of its fit there.
:func:`tune_allocator` raises the mmap threshold to 32 MiB (glibc's largest) and the trim
threshold to 1 GiB, so freed blocks stay in the heap for the next array of the run. It also
stops NumPy from asking for transparent huge pages for its large arrays (``madvise``): where the
kernel compacts memory to serve them (``defrag`` set to ``madvise``, a common default) a fresh
fit stalled now and then (1M verdicts: 1.0-1.2 s wall, 0.2-0.4 s of it in the kernel, against a
steady 1.0 s without). And it keeps every thread on the one arena (``M_ARENA_MAX`` 1): other
threads (those that factorize a large log's columns, :mod:`ratings.core.threads`, and the
libraries' own) would otherwise allocate in arenas of their own, whose freed memory the main
thread's arrays never reuse (1M verdicts: 91k page faults and 400 MB resident at most, against
79-85k and 355-375 MB on one arena).

Only :func:`ratings.cli.app.main`, run as the program, calls it: a library must not change the
allocator of the process that imports it. Elsewhere than glibc (musl, macOS, Windows) it does
nothing.

:func:`leave` ends the program once its outputs are written: it flushes the standard streams,
runs the ``atexit`` handlers and exits without the interpreter's teardown, which deallocates
every module and object one by one (pandas alone: 0.09 s; a 1M-verdict ``ratings fit``:
0.15 s of a 1.15 s run). Only :func:`ratings.cli.app.program` (the ``ratings`` program and
``python -m ratings.cli.app``) calls it.
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import NoReturn

__all__ = ["MMAP_THRESHOLD", "TRIM_THRESHOLD", "leave", "tune_allocator"]

#: glibc's ``mallopt`` parameters (malloc.h).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8
#: Blocks up to this size come from the heap (glibc's maximum on 64-bit systems).
MMAP_THRESHOLD = 32 * 2**20
#: Free memory at the top of the heap kept for reuse up to this size.
TRIM_THRESHOLD = 2**30


def tune_allocator() -> bool:
    """Raise glibc's mmap and trim thresholds for this process, keep its threads on one arena
    and turn NumPy's huge-page requests off; True if both thresholds were set, False where
    there is no glibc."""
    import ctypes

    _numpy_hugepages_off()

    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 (an AttributeError outside glibc)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    ok = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
    mallopt(_M_ARENA_MAX, 1)  # threads share the heap (and the memory freed into it)
    return bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1 and ok)


def _numpy_hugepages_off() -> None:
    """NumPy's ``madvise(MADV_HUGEPAGE)`` on large arrays off (what ``NUMPY_MADVISE_HUGEPAGE=0``
    does at import); nothing where this NumPy has no such switch."""
    try:
        from numpy._core.multiarray import _set_madvise_hugepage
    except ImportError:  # NumPy 1.x
        try:
            from numpy.core.multiarray import _set_madvise_hugepage
        except ImportError:
            return
    _set_madvise_hugepage(False)


def leave(status: int) -> NoReturn:
    """Exit the program with ``status``: standard streams flushed, ``atexit`` handlers run, no
    interpreter teardown (files the program wrote are closed by then)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more to say there
            pass
    atexit._run_exitfuncs()
    os._exit(status)
