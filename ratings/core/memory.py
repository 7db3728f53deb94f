"""A size guard: estimate the memory of each stage from the board's shape before allocating it.

A fit holds a few dense M x M matrices (Hessian, its inverse, the sandwich, the reported
covariance) and the identifiability check an M x M adjacency matrix (:func:`fit_memory`); the
clustered interval works on per-cluster rows, and on its dense paths on clusters x parameters
matrices (:func:`cluster_memory`); rank intervals and the pairwise table on every pair
(:func:`pairs_memory`) (match planning's estimate is ``sampling``'s). At 20,000 models one
M x M matrix of floats is 3.2 GB, and a million one-verdict tasks by 1,000 models is 8 GB, so a
large board could exhaust memory minutes into a run. :func:`check_memory` compares an estimate
with a limit first and stops with the memory the work would need and the ways out.

The limit is ``max_memory`` (bytes, or a size such as ``"8GB"``), by default
:data:`DEFAULT_FRACTION` of the memory available now (``MemAvailable`` in ``/proc/meminfo``, or
``os.sysconf``); no limit applies when neither can be read. A limit set for a stretch of work
(:func:`limit_scope`: a fit, a command) holds for every check inside it.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from contextvars import ContextVar

from ratings.core.errors import MemoryLimitError, option

__all__ = [
    "DEFAULT_FRACTION",
    "MAX_INFLUENCE_CELLS",
    "MaxMemory",
    "available_memory",
    "check_memory",
    "cluster_memory",
    "cluster_ways",
    "fit_memory",
    "format_bytes",
    "given_limit",
    "limit_scope",
    "memory_limit",
    "pairs_memory",
    "parse_size",
]

#: Largest clusters x parameters matrix of influences kept with a result (8 bytes each).
MAX_INFLUENCE_CELLS = 20_000_000


#: Share of the available memory a computation may plan to use by default.
DEFAULT_FRACTION = 0.5
#: A limit in bytes, a size such as ``"8GB"`` or ``"500MB"``, or None for the default.
MaxMemory = int | float | str | None

_UNITS = {
    "": 1, "b": 1, "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12,
    "tb": 1e12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}  # fmt: skip
#: Dense M x M float64 matrices alive at once at the peak of a fit (Hessian and its free block,
#: the Cholesky factor and inverse, the bread, the sandwich and its products, the covariance as
#: reported and re-anchored).
_FIT_MATRICES = 8
#: Bytes per pair of the pairwise table while it is built (its 15 columns, the pairs' indices
#: and statistics, and the sorted copy).
_TABLE_BYTES_PER_PAIR = 400
#: M x M float64 arrays of the pairs' statistics (standard errors, df and the sums behind
#: them, t, the covariance and its eigenvectors, the draws' weights).
_PAIR_MATRICES = 10

_SCOPED: ContextVar[MaxMemory] = ContextVar("max_memory", default=None)


def available_memory() -> int | None:
    """Bytes of memory available to new allocations now, or None when it cannot be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return None


def parse_size(size: MaxMemory) -> int | None:
    """``size`` in bytes: an int or float, or text such as ``"8GB"``, ``"1.5 GiB"``, ``"500M"``
    (decimal units K, M, G, T; binary KiB, MiB, GiB, TiB). None stays None."""
    if size is None:
        return None
    if isinstance(size, bool):
        raise ValueError(f"{option('max_memory')} must be a size such as '8GB'; got {size!r}.")
    if isinstance(size, int | float):
        value = float(size)
    else:
        found = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*",
                             str(size))  # fmt: skip
        unit = found.group(2).lower() if found else None
        if found is None or unit not in _UNITS:
            raise ValueError(
                f"{option('max_memory')} must be a size such as '8GB', '500MB' or a number of "
                f"bytes; got {size!r}.")  # fmt: skip
        value = float(found.group(1)) * _UNITS[unit]
    if not (value > 0 and value < float("inf")):
        raise ValueError(f"{option('max_memory')} must be a finite size > 0; got {size!r}.")
    return int(value)


@contextlib.contextmanager
def limit_scope(max_memory: MaxMemory) -> Iterator[None]:
    """Within the block, checks that name no limit use ``max_memory`` (a fit's, a command's
    ``--max-memory``): the stages a fit or a result computes later see the same limit."""
    token = _SCOPED.set(max_memory)
    try:
        yield
    finally:
        _SCOPED.reset(token)


def given_limit() -> int | None:
    """The limit in bytes that the enclosing :func:`limit_scope` names, or None."""
    return parse_size(_SCOPED.get())


def memory_limit(max_memory: MaxMemory = None) -> tuple[int | None, str]:
    """The limit in bytes (None: no limit known) and how it was set, for messages."""
    given = parse_size(_SCOPED.get() if max_memory is None else max_memory)
    if given is not None:
        return given, f"the limit {format_bytes(given)} set by {option('max_memory')}"
    free = available_memory()
    if free is None:
        return None, "no limit (the available memory cannot be read)"
    limit = int(DEFAULT_FRACTION * free)
    return limit, (f"the default limit {format_bytes(limit)} ({DEFAULT_FRACTION:.0%} of the "
                   f"{format_bytes(free)} available now)")  # fmt: skip


def check_memory(needed: int, what: str, max_memory: MaxMemory = None, *,
                 ways: str | None = None) -> None:
    """Raise :class:`~ratings.core.errors.MemoryLimitError` before allocating when ``needed`` bytes
    exceed the limit (see :func:`memory_limit`); ``what`` describes the work, e.g. ``"a fit of
    20,000 models"``; ``ways``: what else avoids the work (default: a smaller board)."""
    limit, how = memory_limit(max_memory)
    if limit is None or needed <= limit:
        return
    ways = ways or "Reduce the board (fewer models per fit, e.g. one scope at a time)"
    raise MemoryLimitError(
        f"Stopped before allocating: {what} needs about {format_bytes(needed)} of memory, over "
        f"{how}. {ways}, or raise the limit with "
        f"{option('max_memory', format_bytes(needed, compact=True))} on a machine that has the "
        "memory. A verdict log larger than memory can be counted where it lies first: "
        "`ratings fit 'logs/*.parquet' --engine duckdb` (or `ratings.aggregate` of a DuckDB "
        "relation), or `--dask` on a cluster.", needed=needed, limit=limit)  # fmt: skip


def cluster_ways() -> str:
    """The ways out of a clustered interval too large for memory, for :func:`check_memory`."""
    return (f"Cluster by a coarser column ({option('cluster')}), or take per-verdict intervals "
            f"({option('cluster', None)})")


def fit_memory(n_params: int, *, n_clusters: int = 0, n_boot: int = 0) -> int:
    """Bytes a fit of ``n_params`` parameters (models, plus judges for Crowd-BT) needs at its
    peak: :data:`_FIT_MATRICES` dense P x P float64 matrices and a P x P adjacency matrix, the
    G x P cluster influences (at most 20 million cells) and ``n_boot`` bootstrap draws."""
    p = int(n_params)
    influence = min(int(n_clusters) * p, MAX_INFLUENCE_CELLS) if n_clusters else 0
    return 8 * _FIT_MATRICES * p * p + p * p + 8 * influence + 8 * int(n_boot) * p


def cluster_memory(sizes, n_params: int, path: str) -> int:
    """Bytes the clustered (CR2) interval needs on ``path`` for clusters of ``sizes`` rows and
    ``n_params`` parameters: ``"small"`` (sparse rows: the rows, their leverage blocks of
    sum R_g^2 cells and P x P sums), ``"exact"`` (G x P scores, whitened and adjusted, and each
    cluster's eigenvectors, P x min(R_g, P)) or ``"series"`` (six G x P arrays of the series)."""
    import numpy as np

    s = np.asarray(sizes, dtype=np.float64)
    g, p, rows = float(s.size), float(n_params), float(s.sum())
    base = 80.0 * rows + 8.0 * 4 * p * p  # the rows, residuals and scores; the P x P sums
    if path == "small":
        return int(base + 16.0 * float(np.sum(s * s)))
    if path == "exact":
        return int(base + 8.0 * (4 * g * p + p * float(np.sum(np.minimum(s, p)))))
    return int(base + 8.0 * 6 * g * p)


def pairs_memory(n_models: int, n_draws: int = 0, *, table: bool = False) -> int:
    """Bytes of every pair's statistics for ``n_models`` models (:data:`_PAIR_MATRICES` M x M
    arrays), ``n_draws`` float32 draws of the ratings, and with ``table`` the pairwise table
    (:data:`_TABLE_BYTES_PER_PAIR` a pair)."""
    m = int(n_models)
    pairs = m * (m - 1) // 2 if table else 0
    return 8 * _PAIR_MATRICES * m * m + 4 * int(n_draws) * m + _TABLE_BYTES_PER_PAIR * pairs


def format_bytes(n: float, *, compact: bool = False) -> str:
    """``3.2 GB`` (decimal units); ``compact``: ``3.2GB``, rounded up (a usable limit)."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            value = n / size
            if compact:
                value = -(-value * 10 // 1) / 10  # one decimal, rounded up
                return f"{value:g}{unit}"
            return f"{value:.1f} {unit}"
    return f"{int(n)}B" if compact else f"{int(n)} bytes"
