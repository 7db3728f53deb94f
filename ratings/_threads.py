"""A small shared thread pool for work that releases the GIL (pyarrow hashing, numba kernels
compiled with ``nogil=True``), so large logs use more than one core without processes."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["BLAS_THREADS_FROM", "CONCURRENT_ROWS", "blas_threads", "run", "workers"]

T = TypeVar("T")

#: Rows from which a pass over a verdict log is split across threads.
CONCURRENT_ROWS = 200_000
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


def run(jobs: list[Callable[[], T]]) -> list[T]:
    """Results of ``jobs`` in order, run side by side (in this thread when there is one job or
    one core). Each job must touch only its own outputs and must not call :func:`run` itself
    (the pool is bounded: nested waits could use up its threads); results never depend on which
    job finishes first. An exception in a job is raised here, after all jobs have finished."""
    global _POOL
    if len(jobs) < 2 or workers() < 2:
        return [job() for job in jobs]
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=workers(), thread_name_prefix="ratings")
    futures = [_POOL.submit(job) for job in jobs]
    for f in futures:  # wait for all before raising, so no job still writes afterwards
        f.exception()
    return [f.result() for f in futures]


_BLAS = None
#: Models from which the fit's dense algebra (Cholesky, inverse, sandwich products on M x M
#: matrices) runs on several BLAS threads: measured on 2 cores, a 999 x 999 Cholesky 10.9 ->
#: 7.3 ms and a 1000 x 999 product 38 -> 19 ms, while at 300 models threads gain nothing.
BLAS_THREADS_FROM = 500


def blas_threads(n_models: int):
    """Limit BLAS threads for the fit's dense matrices: one below :data:`BLAS_THREADS_FROM`
    models, from there on up to four (within any limit already set, e.g. by
    ``threadpoolctl.threadpool_limits`` or ``OPENBLAS_NUM_THREADS``).

    Multi-threaded OpenBLAS on (M x M) Hessians of a few hundred models costs far more in thread
    hand-offs than it saves, and stalls badly when other processes share the cores (measured:
    0.4 ms vs 190 ms per Cholesky of a 199 x 199 matrix).
    """
    global _BLAS
    if _BLAS is None:
        from threadpoolctl import ThreadpoolController

        _BLAS = ThreadpoolController()
    blas = _BLAS.select(user_api="blas")
    threads = 1
    if n_models >= BLAS_THREADS_FROM:  # never more than the caller's own limit allows
        allowed = min((lib["num_threads"] for lib in blas.info()), default=1)
        threads = max(1, min(allowed, 4))
    return blas.limit(limits=threads)
