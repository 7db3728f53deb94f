"""Engine choice: NumPy twins for small logs, numba kernels for large ones, cached compiles."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from ratings.kernels import engine
from ratings.kernels.engine import AUTO_NUMBA_COLD, AUTO_NUMBA_VERDICTS, kernels, resolve


@pytest.mark.parametrize("loaded", [True, False])
def test_auto_picks_by_size(monkeypatch, loaded):
    # once numba's kernels are loaded they run from AUTO_NUMBA_VERDICTS verdicts; before, the
    # twins run up to AUTO_NUMBA_COLD (numba's start-up would cost more than they save)
    monkeypatch.setattr(engine, "kernels_loaded", lambda: loaded)
    threshold = AUTO_NUMBA_VERDICTS if loaded else AUTO_NUMBA_COLD
    assert AUTO_NUMBA_VERDICTS < AUTO_NUMBA_COLD
    assert resolve("auto", threshold - 1) == "numpy"
    assert resolve("auto", threshold) == "numba"
    assert resolve("numba", 10) == "numba"
    assert resolve("numpy", 10**9) == "numpy"
    assert kernels("auto", 10).__name__ == "ratings.kernels.fit_ref"
    assert kernels("auto", threshold).__name__ == "ratings.kernels.fit"


def test_kernels_loaded_tracks_the_module():
    from ratings.kernels import fit as _kernels  # noqa: F401 - loading it is the point

    assert engine.kernels_loaded()


def test_unknown_engine_is_refused():
    with pytest.raises(ValueError, match="'auto', 'numba' or 'numpy'"):
        resolve("cuda", 10)


def _run(code: str, env: dict[str, str] | None = None) -> dict:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=True,
                         capture_output=True, text=True, env=env)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


SMALL_FIT = """
    import json, sys
    import ratings
    from ratings.datasets.example import example_path
    ratings.fit(example_path(), scope="analytical", anchor="GPT-5.5 (medium)=1000")
    print(json.dumps({"numba": "numba" in sys.modules}))
"""


def test_small_fit_in_a_fresh_process_does_not_load_numba():
    assert _run(SMALL_FIT) == {"numba": False}


COLD_FIT = """
    import json, sys
    import numpy as np, pandas as pd
    import ratings
    from ratings.kernels import engine

    rng = np.random.default_rng(0)
    n = engine.AUTO_NUMBA_VERDICTS  # numba's size once loaded; a fresh process keeps the twins
    a = rng.integers(0, 20, n); b = (a + rng.integers(1, 20, n)) % 20
    log = pd.DataFrame({"model_a": a, "model_b": b, "winner": rng.choice(["A", "B"], n),
                        "task_id": rng.integers(0, 50, n)}).astype(str)
    r = ratings.fit(log)
    print(json.dumps({"numba": "numba" in sys.modules, "converged": bool(r.converged)}))
"""


def test_fresh_process_fit_below_the_cold_threshold_does_not_load_numba():
    assert _run(COLD_FIT) == {"numba": False, "converged": True}


LARGE_FIT = """
    import json, sys
    import numpy as np, pandas as pd
    import ratings
    from numba.core import dispatcher

    compiled = []
    original = dispatcher.Dispatcher.compile
    def spy(self, sig):  # records signatures compiled rather than loaded from the cache
        before = len(self.overloads)
        out = original(self, sig)
        if self._cache_hits.get(sig, 0) == 0 and len(self.overloads) > before:
            compiled.append(self.py_func.__name__)
        return out
    dispatcher.Dispatcher.compile = spy
    rng = np.random.default_rng(0)
    n = 4000
    a = rng.integers(0, 30, n); b = (a + rng.integers(1, 30, n)) % 30
    log = pd.DataFrame({"model_a": [f"m{k}" for k in a], "model_b": [f"m{k}" for k in b],
                        "winner": rng.choice(["A", "B", "tie"], n),
                        "task_id": [f"t{k}" for k in rng.integers(0, 40, n)]})
    ratings.fit(log, engine="numba")
    ratings.fit(log, cluster=None, engine="numba")
    print(json.dumps({"compiled": compiled}))
"""


@pytest.mark.slow
def test_second_process_compiles_nothing(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    first = _run(LARGE_FIT, env)
    assert first["compiled"], "the spy saw no compilation in an empty cache"
    second = _run(LARGE_FIT, env)
    assert second == {"compiled": []}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX-only")
def test_thread_pool_works_in_a_forked_child(monkeypatch):
    from ratings.core import threads as _threads

    monkeypatch.setattr(_threads, "workers", lambda: 2)  # a pool even on one core
    def slow(x):
        time.sleep(0.1)  # both workers start
        return x

    assert _threads.run([lambda: slow(1), lambda: slow(2)]) == [1, 2]  # the parent's pool
    time.sleep(0.3)  # its workers go idle: a copied pool would hand them the child's jobs
    pid = os.fork()
    if pid == 0:  # child: a pool whose threads did not survive the fork would hang here
        try:
            code = 0 if _threads.run([lambda: 3, lambda: 4]) == [3, 4] else 1
        except BaseException:
            code = 1
        os._exit(code)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    raise AssertionError("the forked child hung on the thread pool")


def test_ratings_num_threads_setting(monkeypatch):
    from ratings.core import threads as _threads

    monkeypatch.setattr(_threads, "_POOL", None)
    monkeypatch.setenv("RATINGS_NUM_THREADS", "1")  # threading off: jobs run here, no pool
    assert _threads.workers() == 1
    assert _threads.run([lambda: 1, lambda: 2]) == [1, 2]
    assert _threads._POOL is None
    monkeypatch.setenv("RATINGS_NUM_THREADS", "3")
    assert _threads.workers() == 3
    monkeypatch.setenv("RATINGS_NUM_THREADS", "many")
    with pytest.raises(ValueError, match="RATINGS_NUM_THREADS must be a positive integer"):
        _threads.workers()


IMPORTS = """
    import json, sys
    import ratings, ratings.cli.app
    heavy = ["numba", "scipy.stats", "scipy.optimize", "scipy.linalg", "scipy.sparse", "matplotlib"]
    print(json.dumps({name: name in sys.modules for name in heavy}))
"""


def test_importing_the_package_and_cli_loads_no_heavy_module():
    # each of these costs a one-shot CLI fit 0.1-0.7 s; they are imported where they are used
    assert not any(_run(IMPORTS).values()), _run(IMPORTS)


def test_refitting_asks_twice_per_kernel_from_its_threshold(monkeypatch):
    # the rule alone: a CR2 kernel asked for on AUTO_NUMBA_REFIT rows a second time loads them
    monkeypatch.setattr(engine, "_large_requests", set())
    n = engine.AUTO_NUMBA_REFIT
    assert AUTO_NUMBA_VERDICTS <= n
    assert [engine.refitting("cluster_times", n - 1) for _ in range(3)] == [False] * 3
    assert [engine.refitting("cluster_times", n) for _ in range(3)] == [False, True, True]
    assert engine.refitting("series_term", n) is False  # each kernel counts its own requests


TIERED = """
    import json, sys
    import numpy as np, pandas as pd
    import ratings
    from ratings.kernels import engine

    if {scaled}:  # the rule scaled down to a board whose CR2 takes the dense path
        engine.AUTO_NUMBA_VERDICTS = engine.AUTO_NUMBA_REFIT = 1
    rng = np.random.default_rng(0)
    n, m = {n}, 20
    a = rng.integers(0, m, n); b = (a + rng.integers(1, m, n)) % m
    log = pd.DataFrame({{"model_a": a, "model_b": b, "winner": rng.choice(["A", "B"], n),
                        "task_id": rng.integers(0, {tasks}, n)}}).astype(str)
    loaded = []
    for _ in range(3):
        ratings.fit(log)
        loaded.append("ratings.kernels.inference" in sys.modules)
    print(json.dumps({{"loaded": loaded, "numba": "numba" in sys.modules}}))
"""


def test_a_process_loads_the_cr2_kernels_at_its_second_large_fit():
    # a fresh process: the first large fit takes the twins, the second loads the kernels
    out = _run(TIERED.format(scaled=True, n=4000, tasks=4))
    assert out == {"loaded": [False, True, True], "numba": True}


def test_small_boards_never_load_the_cr2_kernels():
    out = _run(TIERED.format(scaled=False, n=4000, tasks=4))
    assert out == {"loaded": [False, False, False], "numba": False}
