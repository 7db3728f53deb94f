"""``ratings.kernels.cache.ready`` against numba's own cache: a kernel is ready once compiled in
the process, or once another process has cached it for the current source; not before, and not
after its source changed (numba would recompile it then, and so would the caller)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

KERNEL = textwrap.dedent('''
    import numba

    @numba.njit(cache=True)
    def plus_one(x):
        return x + 1
''')

CHECK = textwrap.dedent('''
    import sys
    sys.path.insert(0, sys.argv[1])
    import numba
    import tiny_kernel
    from ratings.kernels.cache import ready
    before = ready(tiny_kernel.plus_one)
    tiny_kernel.plus_one(1)
    compiled_now = bool(tiny_kernel.plus_one.stats.cache_misses)
    print(int(before), int(ready(tiny_kernel.plus_one)), int(compiled_now))
''')


def _check(tmp_path) -> tuple[int, int, int]:
    """(ready before the first call, ready after it, numba compiled it) in a fresh process."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", CHECK, str(tmp_path)], env=env, check=True,
                         capture_output=True, text=True).stdout.split()  # fmt: skip
    return tuple(int(x) for x in out)


def test_ready_follows_numbas_cache(tmp_path):
    (tmp_path / "tiny_kernel.py").write_text(KERNEL)
    # a new cache: not ready, numba compiles it; then ready
    assert _check(tmp_path) == (0, 1, 1)
    # a new process: numba loads it from the cache (no compilation), and ready said so first
    assert _check(tmp_path) == (1, 1, 0)
    # the source changes: numba's cache is stale, it compiles again, and ready says not before
    (tmp_path / "tiny_kernel.py").write_text(KERNEL + "\n# changed\n")
    st = os.stat(tmp_path / "tiny_kernel.py")
    os.utime(tmp_path / "tiny_kernel.py", (st.st_atime, st.st_mtime + 10))
    assert _check(tmp_path) == (0, 1, 1)


def test_an_unreadable_cache_is_a_miss():
    from ratings.kernels.cache import ready

    class NoCache:
        signatures: tuple = ()

    assert ready(NoCache()) is False
