"""Settings of a process that is the ``ratings`` program, made before NumPy loads.

OpenBLAS (NumPy's BLAS) starts a thread per core when NumPy is imported, and each spins waiting
for work: on a 2-core machine a fresh process pays 0.03-0.04 s of CPU for it while pandas
imports (``import numpy``: 0.14 against 0.11 s of CPU with ``OPENBLAS_NUM_THREADS=1``). The
package runs BLAS on one thread anyway where it is used in earnest
(:func:`ratings.core.threads.one_blas_thread`; large products go to its own pool,
:func:`ratings.core.threads.matmul`), so the program starts OpenBLAS with one thread:
:func:`one_blas_thread_for_the_program`, called first by the package's ``__init__``, sets
``OPENBLAS_NUM_THREADS=1`` (unless the environment sets it) when this process is the program and
NumPy is not loaded yet; :func:`~ratings.core.threads.one_blas_thread` then has nothing to limit
(:func:`openblas_on_one_thread`). A process that imports ``ratings`` as a library is left as it
is, like the allocator (:mod:`ratings.cli.allocator`).

Python's cyclic garbage collector runs every 700 allocations of container objects, and
importing pandas makes hundreds of thousands: a fresh ``ratings fit`` ran it 160 times while
its modules imported (34 ms for pandas' alone, one full collection 14 ms), collecting nothing
(modules, classes and functions live as long as the process). The program imports with the
collector paused (:func:`pause_collection_for_the_program`, called next by the package's
``__init__``) and, once its modules are imported (:func:`resume_collection`, called by
:func:`ratings.cli.app.main` run as the program once the command's flags are parsed), freezes
what they made (``gc.freeze``: later collections never scan it again) and turns the collector
back on for the command's own work. A command that imports more as it runs pauses it again
for those imports (:func:`collection_paused`: ``ratings fit`` beside reading its log).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import sys
from collections.abc import Iterator, Sequence

__all__ = ["PROGRAM_MODULES", "collection_paused", "is_program", "one_blas_thread_for_the_program",
           "openblas_on_one_thread", "pause_collection_for_the_program", "resume_collection"]

#: The modules ``python -m`` runs as the ``ratings`` program.
PROGRAM_MODULES = ("ratings.cli", "ratings.cli.app")
#: Names of the ``ratings`` console script (``ratings-script.py``: a Windows launcher's).
_SCRIPTS = ("ratings", "ratings.exe", "ratings-script.py")
#: Did NumPy load after ``OPENBLAS_NUM_THREADS=1`` was set (here, or by the environment)?
_STARTED_ON_ONE = False
#: Is the cyclic collector paused for the program's imports (:func:`resume_collection` due)?
_PAUSED = False


def is_program(argv: Sequence[str] | None = None) -> bool:
    """Is this process the ``ratings`` program (its console script, ``python -m ratings.cli``
    or ``python -m ratings.cli.app``)? Read off the interpreter's command line (``argv``,
    default :data:`sys.orig_argv`), which says so before ``__main__`` runs: the module of
    ``-m``, or the script's name (``-c`` code and standard input are not the program)."""
    words = iter(list(sys.orig_argv if argv is None else argv)[1:])
    for word in words:
        if word == "--check-hash-based-pycs":  # the one long option with a value
            next(words, None)
        elif word.startswith("--"):
            continue
        elif not word.startswith("-") or word == "-":  # the script (or standard input)
            return os.path.basename(word) in _SCRIPTS
        else:  # a cluster of one-letter options, e.g. -B, -Ximporttime, -X importtime, -Bm
            for k, letter in enumerate(word[1:], start=2):
                if letter in "mcXW":
                    value = word[k:] or next(words, "")
                    if letter in "mc":
                        return letter == "m" and value in PROGRAM_MODULES
                    break
    return False


def one_blas_thread_for_the_program() -> bool:
    """When this process is the ``ratings`` program (:func:`is_program`) and NumPy is not
    loaded yet, let OpenBLAS start with one thread (``OPENBLAS_NUM_THREADS=1``, unless the
    environment gives a number). True if the process runs so (set here or before)."""
    global _STARTED_ON_ONE
    if "numpy" in sys.modules or not is_program():
        return False
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    _STARTED_ON_ONE = os.environ["OPENBLAS_NUM_THREADS"] == "1"
    return _STARTED_ON_ONE


def pause_collection_for_the_program() -> bool:
    """When this process is the ``ratings`` program (:func:`is_program`) and Python's cyclic
    collector is on, turn it off while the program's modules import (see the module notes);
    :func:`resume_collection` turns it back on. True if paused here."""
    global _PAUSED
    if _PAUSED or not gc.isenabled() or not is_program():
        return False
    gc.disable()
    _PAUSED = True
    return True


def resume_collection() -> None:
    """After the program's imports: what they made frozen out of later collections
    (``gc.freeze``) and the cyclic collector on again, if :func:`pause_collection_for_the_program`
    paused it (else nothing)."""
    global _PAUSED
    if _PAUSED:
        _PAUSED = False
        gc.freeze()
        gc.enable()


@contextlib.contextmanager
def collection_paused(pause: bool = True) -> Iterator[None]:
    """The cyclic collector off while the body runs (a command importing its own modules as
    it runs), then what it made frozen and the collector on again, as after the program's
    imports (:func:`resume_collection`). Nothing when ``pause`` is False (a command called from
    Python: its process is left as it is) or the collector is off already."""
    if not pause or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def openblas_on_one_thread() -> bool:
    """Does this process run its only BLAS on one thread from the start: the program's
    setting (:func:`one_blas_thread_for_the_program`) made before NumPy loaded, NumPy's BLAS
    OpenBLAS, and no other BLAS loaded (scipy.linalg brings its own)? Then
    :func:`ratings.core.threads.one_blas_thread` has nothing to limit (and skips building
    threadpoolctl's controller, 6 ms of a fresh process)."""
    return _STARTED_ON_ONE and "scipy.linalg" not in sys.modules and _numpy_openblas()


@functools.cache
def _numpy_openblas() -> bool:
    """Is NumPy's BLAS OpenBLAS (as its build configuration says)?"""
    import numpy as np

    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
    except Exception:  # NumPy < 1.26, or a build that does not say
        return False
    return "openblas" in str(blas).lower()
