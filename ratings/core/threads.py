"""A small shared thread pool for work that releases the GIL (pyarrow hashing, numba kernels
compiled with ``nogil=True``, BLAS products on blocks of rows), so large logs and boards use
more than one core without processes."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

import numpy as np
from numpy.typing import NDArray

from ratings.core import program

__all__ = ["CONCURRENT_ROWS", "ROW_ALIGN", "SPLIT_FLOPS", "Pending", "matmul", "one_blas_thread",
           "row_blocks", "run", "start", "workers"]

T = TypeVar("T")

#: Rows from which a pass over a verdict log is split across threads.
CONCURRENT_ROWS = 200_000
#: Multiply-adds (rows x inner x columns) from which :func:`matmul` splits a product.
SPLIT_FLOPS = 20_000_000
#: Row blocks of :func:`matmul` start at multiples of this (BLAS kernels work on a few rows at a
#: time: aligned blocks are multiplied as in the whole product, see :func:`matmul`).
ROW_ALIGN = 8
_POOL: ThreadPoolExecutor | None = None


def _forget_pool() -> None:
    """In a forked child the pool's threads do not exist: start a new pool when needed."""
    global _POOL
    _POOL = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def workers() -> int:
    """Threads to use: ``RATINGS_NUM_THREADS`` when set (1 turns threading off), else the cores
    this process may run on, at most four."""
    setting = os.environ.get("RATINGS_NUM_THREADS", "").strip()
    if setting:
        try:
            return max(1, int(setting))
        except ValueError:
            raise ValueError(
                f"RATINGS_NUM_THREADS must be a positive integer; got {setting!r}."
            ) from None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cores or 1, 4))


def _in_pool() -> bool:
    """Is this one of the pool's threads (named ``ratings_<n>`` by the executor)?"""
    return threading.current_thread().name.startswith("ratings_")


def _pool() -> ThreadPoolExecutor:
    """The shared pool, started on first use."""
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=workers(), thread_name_prefix="ratings")
    return _POOL


def run(jobs: list[Callable[[], T]]) -> list[T]:
    """Results of ``jobs`` in order, run side by side (in this thread when there is one job or
    one core, or when called from one of the pool's threads: the pool is bounded, nested waits
    could use up its threads). Each job must touch only its own outputs; results never depend
    on which job finishes first. An exception in a job is raised here, after all jobs have
    finished."""
    if len(jobs) < 2 or workers() < 2 or _in_pool():
        return [job() for job in jobs]
    pool = _pool()
    futures = [pool.submit(job) for job in jobs]
    for f in futures:  # wait for all before raising, so no job still writes afterwards
        f.exception()
    return [f.result() for f in futures]


class Pending(Generic[T]):
    """A result :func:`start` computes on the pool while the caller goes on; :meth:`result`
    waits for it (and raises what the job raised)."""

    def __init__(self, future: Future | None = None, value: T | None = None,
                 error: BaseException | None = None) -> None:  # fmt: skip
        self._future, self._value, self._error = future, value, error

    def result(self) -> T:
        """The job's result, waiting for it; the job's exception is raised here."""
        if self._future is not None:
            return self._future.result()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


def start(job: Callable[[], T]) -> Pending[T]:
    """``job()`` started on the pool beside the caller's own work (which may :func:`run` jobs
    on the other threads), its result read by :meth:`Pending.result`; run here at once when
    threading is off, its exception then kept for :meth:`~Pending.result` likewise.

    The job must not call :func:`run` or wait for another :class:`Pending` (it holds one of
    the pool's threads), and :meth:`~Pending.result` must not be called from a pool job. For
    work of one thread that the caller's next steps do not need: a factorisation beside the
    caller's passes over the rows (scipy's LAPACK wrappers hold the GIL for much of the call,
    so the overlap is with the caller's GIL-free NumPy work).
    """
    if workers() < 2:
        try:
            return Pending(value=job())
        except Exception as error:  # raised where the result is read, as on the pool
            return Pending(error=error)
    # in the caller's context: its limits and settings (contextvars, such as the memory limit
    # and how messages spell options) hold in the job as they would here
    return Pending(_pool().submit(contextvars.copy_context().run, job))


_BLAS = None


def one_blas_thread():
    """A context running BLAS on one thread (the fit's M x M algebra; within any limit the
    caller set, e.g. by ``threadpoolctl.threadpool_limits`` or ``OPENBLAS_NUM_THREADS``).

    OpenBLAS's threads wait for work and for each other by spinning. When other processes
    hold cores, a factorisation, which waits at every panel, stalls (measured on 2 cores with
    other processes keeping one busy: a 999 x 999 ``potrf`` + ``potri`` 0.2-1.9 s on two
    threads, 28 ms on one; a 199 x 199 Cholesky 190 ms against 0.4 ms), a product gains
    nothing (a 1000 x 999 by 999 x 999 one 43 ms against 39), and a thread left spinning after
    a call slows the single-threaded passes that follow (the same product right after going
    down from two threads to one: 75-85 ms). On idle cores two threads would be faster (that
    product 20 instead of 37 ms, that ``potrf`` + ``potri`` 15 instead of 25 ms): about 0.13
    instead of 0.21 s of the dense algebra of a clustered fit of 1000 models. The large
    products get that back on this module's pool instead (:func:`matmul`); factorisations stay
    on one thread.
    """
    global _BLAS
    if program.openblas_on_one_thread():  # the program started BLAS on one thread
        return contextlib.nullcontext()
    # a controller knows the BLAS libraries loaded when it was made: scipy.linalg brings its
    # own OpenBLAS (the fit imports it from 250 parameters), so look again once it is loaded
    scipy_loaded = "scipy.linalg" in sys.modules
    if _BLAS is None or _BLAS[0] != scipy_loaded:
        from threadpoolctl import ThreadpoolController

        _BLAS = (scipy_loaded, ThreadpoolController())
    return _BLAS[1].select(user_api="blas").limit(limits=1)


def row_blocks(n: int, parts: int, align: int = ROW_ALIGN) -> list[tuple[int, int]]:
    """At most ``parts`` consecutive ranges ``(lo, hi)`` covering ``range(n)``, of nearly equal
    sizes, each starting at a multiple of ``align`` and none shorter than ``align`` unless it
    is the only one (a last short piece joins the one before)."""
    step = -(-n // max(parts, 1))
    step = max(align, -(-step // align) * align)
    starts = list(range(0, n, step))
    if not starts:
        return []
    if len(starts) > 1 and n - starts[-1] < align:
        starts.pop()
    return list(zip(starts, [*starts[1:], n], strict=True))


def matmul(a: NDArray, b: NDArray) -> NDArray:
    """``a @ b`` for 2-d arrays, the rows of ``a`` split into blocks multiplied side by side by
    :func:`run` when the product is large (:data:`SPLIT_FLOPS`).

    Each block's product is BLAS's on one thread (numpy releases the GIL while it runs). BLAS
    could split the product itself, but OpenBLAS's threads wait by spinning, which stalls them
    (and everything after them) when other processes hold cores (see
    :func:`one_blas_thread`); the pool's threads wait without spinning (1000 x 1000 in double
    precision on 2 cores: 37 -> 20 ms idle, 37 -> 38 ms while another process keeps a core
    busy). The blocks start at multiples of :data:`ROW_ALIGN` and have at least that many
    rows: OpenBLAS then multiplies double-precision rows bitwise as in the whole product (not
    promised by BLAS); single-precision sums may be rounded differently (relative differences
    of the order of float32's epsilon).

    Parameters
    ----------
    a : ndarray, shape (n, k)
    b : ndarray, shape (k, m)

    Returns
    -------
    ndarray, shape (n, m)
        C-ordered, of numpy's result type.
    """
    n, k = a.shape
    parts = workers()
    if parts < 2 or n < 2 * ROW_ALIGN or n * k * b.shape[1] < SPLIT_FLOPS:
        return a @ b
    out = np.empty((n, b.shape[1]), dtype=np.result_type(a, b))

    def block(lo: int, hi: int) -> None:
        np.matmul(a[lo:hi], b, out=out[lo:hi])

    with one_blas_thread():  # the blocks' BLAS on one thread whatever the caller set
        run([functools.partial(block, lo, hi) for lo, hi in row_blocks(n, parts, ROW_ALIGN)])
    return out
