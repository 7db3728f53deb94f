"""Compile a plan's loops ahead of need: at once (:func:`warmup`), or in a background process
after the first large ``ratings next`` of an install (:func:`compile_in_background`).

Large plans pick their active phase in a compiled loop and repair their judges in another
(:mod:`sampling.picks.compiled`). numba compiles them once per install and machine, about half a
minute of CPU, and caches them on disk (beside their modules when that is writable, else in the
user's cache directory, or under ``NUMBA_CACHE_DIR``). A plan never waits for that compilation:
until the loops are cached it makes the same picks with their NumPy twins, and ``ratings next``
starts one detached, low-priority process (``python -m sampling.warmup``) that compiles them
for the next plans. ``RATINGS_COMPILE_IN_BACKGROUND=0`` turns that off (the loops are then
compiled by the first :func:`warmup`, or by nothing). A session that plans many large batches can
call :func:`warmup` once instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

__all__ = ["ENV", "STALE_LOCK", "compile_in_background", "compiling", "lock_path", "main", "warmup"]

#: Environment variable that turns the background compilation off (``0``).
ENV = "RATINGS_COMPILE_IN_BACKGROUND"
#: A lock older than this (seconds) is a compilation that died: another may start.
STALE_LOCK = 900.0


def warmup() -> None:
    """Compile (or load from numba's cache) the pick loop and the judge repair of large plans,
    with the argument types a plan passes them: a small active plan through the loop and a
    small repair."""
    from sampling.design.plan import plan_matches
    from sampling.design.simulate import judge_matches, make_board, uniform_matches
    from sampling.judges import assign_numba
    from sampling.picks import compiled

    a, b, zero = np.array([0, 1]), np.array([1, 2]), np.zeros(2, dtype=np.int64)
    bounds = np.zeros((1, 3, 2), dtype=np.int64)
    x = np.zeros((3, 2), dtype=np.int64)
    assign_numba.weighted_repair(
        a, b, zero, x, bounds, bounds + 1, np.ones(1, dtype=np.int64),
        np.zeros(3, dtype=np.int64), zero, np.full(2, 2), np.ones((2, 2), dtype=bool), 1)
    board = make_board(6, 4, seed=0)
    subs = board.submissions[["model", "task_id"]]
    log = judge_matches(uniform_matches(subs, board.judges, 60, seed=0), board, seed=0)
    with compiled.forced():
        plan_matches(log, subs, board.judges, 20, seed=0, phase="active")


def lock_path() -> Path:
    """The file that marks a compilation under way: in the pick loop's numba cache directory."""
    from sampling.picks import picker_numba

    return Path(picker_numba.active_picks._cache._cache_path) / "sampling-compiling.lock"


def compiling() -> bool:
    """Is a background compilation under way (its lock present and fresh)?"""
    try:
        return time.time() - lock_path().stat().st_mtime < STALE_LOCK
    except (OSError, AttributeError):
        return False


def compile_in_background() -> bool:
    """Start ``python -m sampling.warmup`` detached and at low priority, unless the loops run
    without compiling already, a compilation is under way, numba's cache cannot be written,
    or :data:`ENV` is ``0``. Returns whether one was started."""
    if os.environ.get(ENV, "1") == "0":
        return False
    from sampling.picks import compiled

    if compiled.ready():
        return False
    try:
        lock = lock_path()
        if compiling():
            return False
        lock.unlink(missing_ok=True)  # a stale lock
        os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except (OSError, AttributeError):
        return False
    try:
        subprocess.Popen([sys.executable, "-m", "sampling.warmup", str(lock)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True,
                         close_fds=True)  # fmt: skip
    except OSError:
        lock.unlink(missing_ok=True)
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    """``python -m sampling.warmup [LOCK]``: compile the loops (at low priority), then remove
    ``LOCK``."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        if hasattr(os, "nice"):
            os.nice(10)
        warmup()
    finally:
        if argv:
            Path(argv[0]).unlink(missing_ok=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
