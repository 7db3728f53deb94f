"""The command line's allocator settings: set when ``ratings`` runs as a program, never by an
import or by ``main`` called with arguments (a host process keeps its allocator); the program's
exit without the interpreter's teardown."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import ratings.cli.app
from ratings.core.program import is_program
from ratings.datasets.example import example_path

NO_CDLL = """
    import ctypes, json, sys
    calls = []
    real = ctypes.CDLL
    ctypes.CDLL = lambda *a, **k: calls.append(a[:1] == (None,)) or real(*a, **k)
    import ratings, ratings.cli.app
    from ratings.datasets.example import example_path
    ratings.fit(example_path(), scope="analytical").to_frame()
    print(json.dumps({"process_libc_opened": sum(calls)}))
"""


def test_importing_and_fitting_leave_the_allocator_alone():
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(NO_CDLL)], check=True,
                         capture_output=True, text=True)  # fmt: skip
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"process_libc_opened": 0}


def test_main_tunes_the_allocator_only_when_run_as_the_program(monkeypatch, tmp_path, capsys):
    calls = []
    monkeypatch.setattr(ratings.cli.app, "tune_allocator", lambda: calls.append(1) or True)
    argv = ["fit", str(example_path()), "--scope", "analytical", "--out",
            str(tmp_path / "a.csv")]  # fmt: skip
    assert ratings.cli.app.main(argv) == 0
    assert calls == []  # called with arguments: a host process, left alone
    monkeypatch.setattr(sys, "argv", ["ratings", *argv[:-1], str(tmp_path / "b.csv")])
    assert ratings.cli.app.main() == 0
    assert calls == [1]
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


def test_tune_allocator_sets_glibc_thresholds_and_turns_numpy_huge_pages_off():
    code = ("try:\n    from numpy._core.multiarray import _set_madvise_hugepage as f\n"
            "except ImportError:\n"
            "    from numpy.core.multiarray import _set_madvise_hugepage as f\n"
            "from ratings.cli.allocator import tune_allocator\n"
            "f(True); print(tune_allocator(), f(True))")  # f returns the previous setting
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout.split()[-2:]  # fmt: skip
    glibc = sys.platform.startswith("linux") and "glibc" in " ".join(_libc())
    assert out == ["True" if glibc else "False", "False"]


def test_leave_flushes_runs_atexit_handlers_and_keeps_the_status():
    code = ("import atexit, sys\n"
            "from ratings.cli.allocator import leave\n"
            "atexit.register(lambda: print('handler ran'))\n"
            "print('written', end=' '); sys.stderr.write('said')\n"
            "leave(3)")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (3, "written handler ran\n", "said")


def test_the_program_prints_and_exits_as_main_returns(tmp_path, capsys):
    argv = ["fit", str(example_path()), "--scope", "analytical"]  # the table on stdout
    assert ratings.cli.app.main(argv) == 0
    expected = capsys.readouterr().out
    done = subprocess.run([sys.executable, "-m", "ratings.cli.app", *argv], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert (done.returncode, done.stdout) == (0, expected)
    bad = tmp_path / "bad.csv"
    bad.write_text("model_a,model_b,winner\nx,y,maybe\n")
    done = subprocess.run([sys.executable, "-m", "ratings.cli.app", "fit", str(bad)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2 and done.stderr.startswith("ratings: error:")


def _libc() -> tuple[str, str]:
    import platform

    return platform.libc_ver()


@pytest.mark.parametrize(("argv", "program"), [
    (["python", "-m", "ratings.cli", "fit", "v.csv"], True),
    (["python", "-mratings.cli.app", "fit"], True),
    (["python", "-X", "importtime", "-B", "-m", "ratings.cli"], True),
    (["python", "-Ximporttime", "-Bm", "ratings.cli", "demo"], True),
    (["python", "-W", "ignore", "--check-hash-based-pycs", "never", "-m", "ratings.cli"], True),
    (["/venv/bin/python", "/venv/bin/ratings", "fit", "v.csv"], True),
    (["python", "-m", "ratings"], False),
    (["python", "-m", "pytest", "-m", "ratings.cli"], False),
    (["python", "-c", "import ratings", "-m", "ratings.cli"], False),
    (["python", "fit.py", "-m", "ratings.cli"], False),
    (["python", "-"], False),
    (["python"], False),
])  # fmt: skip
def test_is_program_reads_the_interpreters_command_line(argv, program):
    assert is_program(argv) is program


BLAS = """
    import json, os, sys
    sys.orig_argv = {argv!r}
    import {module}
    from threadpoolctl import threadpool_info
    print(json.dumps([os.environ.get("OPENBLAS_NUM_THREADS"),
                      sorted({{i["num_threads"] for i in threadpool_info()
                               if i["internal_api"] == "openblas"}})]))
"""


def _blas(argv: list[str], env: dict[str, str], module: str = "ratings") -> list:
    """(OPENBLAS_NUM_THREADS, OpenBLAS's threads) in a process with that command line after
    importing ``module``."""
    code = textwrap.dedent(BLAS.format(argv=argv, module=module))
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"} | env
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=env).stdout  # fmt: skip
    return json.loads(out.strip().splitlines()[-1])


ONE_BLAS_THREAD = """
    import json, sys
    sys.orig_argv = {argv!r}
    from ratings.core.threads import one_blas_thread
    context = one_blas_thread()
    made = "threadpoolctl" in sys.modules  # a controller was made to limit BLAS
    with context:
        from threadpoolctl import threadpool_info
        inside = sorted({{i["num_threads"] for i in threadpool_info()
                         if i["internal_api"] == "openblas"}})
    print(json.dumps([inside, made]))
"""


@pytest.mark.parametrize("argv", [["python", "-m", "ratings.cli"], ["python", "-c", "x"]])
def test_one_blas_thread_limits_blas_by_a_controller_unless_the_program_started_it_so(argv):
    code = textwrap.dedent(ONE_BLAS_THREAD.format(argv=argv))
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=env).stdout  # fmt: skip
    inside, made = json.loads(out.strip().splitlines()[-1])
    assert inside in ([1], [])  # [] where NumPy's BLAS is not OpenBLAS
    assert made is (argv[1] != "-m" or inside == [])


def test_the_program_starts_openblas_on_one_thread_a_library_import_does_not():
    program = ["python", "-m", "ratings.cli", "fit", "v.csv"]
    env, threads = _blas(program, {})
    assert env == "1" and threads in ([1], [])  # [] where NumPy's BLAS is not OpenBLAS
    assert _blas(program, {"OPENBLAS_NUM_THREADS": "2"})[0] == "2"  # the user's setting kept
    library = ["python", "-c", "import ratings"]
    assert _blas(library, {}) == _blas(library, {}, module="numpy")  # as NumPy alone starts


# Counts the cyclic collector's runs from the interpreter's start (a sitecustomize module, found
# first on the path) and prints them, with the collector's state, when the process exits.
COUNT_COLLECTIONS = """
import atexit, gc, sys
runs = []
gc.callbacks.append(lambda phase, info: phase == "stop" and runs.append(info["generation"]))
atexit.register(lambda: print("collections", len(runs), gc.isenabled(), gc.get_freeze_count(),
                              file=sys.stderr))
"""


def _collections(tmp_path, command: list[str]) -> tuple[int, bool, int]:
    (tmp_path / "sitecustomize.py").write_text(COUNT_COLLECTIONS)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path),
                                                        os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, *command], capture_output=True, text=True, env=env,
                          cwd=tmp_path)  # fmt: skip
    line = [w for w in done.stderr.splitlines() if w.startswith("collections")][-1].split()
    return int(line[1]), line[2] == "True", int(line[3])


def test_the_program_imports_without_the_cyclic_collector(tmp_path):
    """The program pauses Python's cyclic collector while its modules (pandas') import, which
    run it a hundred times or more for nothing, then freezes what they made and turns it on
    again for the command; a library import keeps it as Python sets it."""
    out = tmp_path / "r.csv"
    args = ["fit", str(example_path()), "--out", str(out), "--quiet", "--scope", "analytical"]
    runs, enabled, frozen = _collections(tmp_path, ["-m", "ratings.cli", *args])
    assert out.exists() and enabled and frozen > 100_000
    library, enabled, frozen = _collections(tmp_path, ["-c", "import ratings"])
    assert enabled and frozen == 0
    assert library >= 50 and runs < library // 2  # the library's imports alone run it more
