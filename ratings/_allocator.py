"""Allocator settings for one ``ratings`` command-line run (glibc only).

glibc's ``malloc`` serves every block above its mmap threshold (128 KiB at start, raised only
as such blocks are freed) with a fresh ``mmap`` and returns it to the system on ``free``, so a
short process that makes a few dozen 8 MB temporaries (1M verdicts) page-faults every page of
each of them anew: a fresh ``ratings fit`` on 1M verdicts spent 0.05-0.25 s of its fit there.
:func:`tune_allocator` raises the mmap threshold to 32 MiB (glibc's largest) and the trim
threshold to 1 GiB, so freed blocks stay in the heap for the next array of the run.

Only :func:`ratings.cli.main`, run as the program, calls it: a library must not change the
allocator of the process that imports it. Elsewhere than glibc (musl, macOS, Windows) it does
nothing.
"""

from __future__ import annotations

__all__ = ["MMAP_THRESHOLD", "TRIM_THRESHOLD", "tune_allocator"]

#: glibc's ``mallopt`` parameters (malloc.h).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
#: Blocks up to this size come from the heap (glibc's maximum on 64-bit systems).
MMAP_THRESHOLD = 32 * 2**20
#: Free memory at the top of the heap kept for reuse up to this size.
TRIM_THRESHOLD = 2**30


def tune_allocator() -> bool:
    """Raise glibc's mmap and trim thresholds for this process; True if both were set, False
    where there is no glibc (nothing changed)."""
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 (an AttributeError outside glibc)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    ok = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
    return bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1 and ok)
