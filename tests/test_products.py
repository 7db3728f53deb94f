"""Dense products split into blocks of rows on the thread pool (``ratings.core.threads.matmul``)."""

from __future__ import annotations

import numpy as np
import pytest

from ratings.core import threads as _threads


def _split(mp: pytest.MonkeyPatch, threads: int, align: int = _threads.ROW_ALIGN) -> list:
    """Split every product in ``threads`` blocks starting at multiples of ``align``; the
    returned list collects the numbers of jobs handed to the pool."""
    calls: list[int] = []
    run = _threads.run

    def counting(jobs):
        calls.append(len(jobs))
        return run(jobs)

    mp.setattr(_threads, "SPLIT_FLOPS", 0)
    mp.setattr(_threads, "ROW_ALIGN", align)
    mp.setattr(_threads, "workers", lambda: threads)
    mp.setattr(_threads, "run", counting)
    return calls


@pytest.mark.parametrize("threads", [2, 3, 4])
@pytest.mark.parametrize("shape", [(1000, 999, 999), (1001, 513, 7), (97, 30, 200), (16, 5, 3)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matmul_equals_the_plain_product(monkeypatch, threads, shape, dtype) -> None:
    n, k, m = shape
    rng = np.random.default_rng(n + k + m)
    a, b = rng.standard_normal((n, k)).astype(dtype), rng.standard_normal((k, m)).astype(dtype)
    plain = a @ b
    calls = _split(monkeypatch, threads)
    out = _threads.matmul(a, b)
    assert calls == [len(_threads.row_blocks(n, threads))] and calls[0] >= 2
    assert out.dtype == plain.dtype and out.shape == plain.shape and out.flags.c_contiguous
    # Rounding only (OpenBLAS multiplies aligned blocks of double-precision rows bitwise as
    # the whole product; single precision may sum in another order).
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(out, plain, rtol=0, atol=8 * eps * k * np.abs(plain).max())


@pytest.mark.parametrize("threads", [2, 3, 5])
def test_matmul_with_odd_blocks(monkeypatch, threads) -> None:
    rng = np.random.default_rng(threads)
    a, b = rng.standard_normal((301, 257)), rng.standard_normal((257, 263))
    plain = a @ b
    calls = _split(monkeypatch, threads, align=1)
    blocks = _threads.row_blocks(301, threads, 1)
    assert any((hi - lo) % 2 for lo, hi in blocks)  # odd sizes and odd starts
    out = _threads.matmul(a, b)
    assert calls == [len(blocks)]
    np.testing.assert_allclose(out, plain, rtol=0, atol=1e-13 * np.abs(plain).max())


def test_matmul_on_one_worker_or_small_inputs_is_the_plain_product(monkeypatch) -> None:
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((400, 300)), rng.standard_normal((300, 200))
    calls = _split(monkeypatch, 1)  # one worker (RATINGS_NUM_THREADS=1)
    np.testing.assert_array_equal(_threads.matmul(a, b), a @ b)
    monkeypatch.setattr(_threads, "workers", lambda: 4)
    np.testing.assert_array_equal(_threads.matmul(a[:15], b), a[:15] @ b)  # too few rows
    monkeypatch.setattr(_threads, "SPLIT_FLOPS", 400 * 300 * 200 + 1)  # too little work
    np.testing.assert_array_equal(_threads.matmul(a, b), a @ b)
    assert calls == []


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 100, 1001])
@pytest.mark.parametrize("parts", [1, 2, 3, 4])
@pytest.mark.parametrize("align", [1, 8])
def test_row_blocks_cover_the_rows_once(n, parts, align) -> None:
    blocks = _threads.row_blocks(n, parts, align)
    assert len(blocks) <= parts
    if n == 0:
        assert blocks == []
        return
    assert [lo for lo, _ in blocks] == [0] + [hi for _, hi in blocks[:-1]]
    assert blocks[-1][1] == n
    assert all(lo % align == 0 and hi > lo for lo, hi in blocks)
    assert len(blocks) == 1 or min(hi - lo for lo, hi in blocks) >= align


@pytest.mark.parametrize("threads", [2, 3, 4])
@pytest.mark.parametrize("shape", [(400, 301), (37, 1000), (1000, 257)])
@pytest.mark.parametrize("align", [1, 8])
def test_gram_in_blocks_equals_one_update(monkeypatch, threads, shape, align) -> None:
    from ratings.inference.covariance import gram

    a = np.random.default_rng(shape[1]).standard_normal(shape)
    monkeypatch.setenv("RATINGS_NUM_THREADS", "1")
    whole = gram(a, 1.25)  # one rank-k update
    calls = _split(monkeypatch, threads, align)
    got = gram(a, 1.25)
    k = len(_threads.row_blocks(shape[1], threads, align))
    assert calls == [k * (k + 1) // 2]  # the diagonal blocks and those above them
    np.testing.assert_array_equal(got, got.T)
    np.testing.assert_allclose(got, whole, rtol=0, atol=1e-14 * np.abs(whole).max())


@pytest.mark.parametrize("threads", [1, 2])
def test_started_job_runs_beside_the_callers_jobs(monkeypatch, threads) -> None:
    """``start``: the job's result, or its exception, read by ``result()``; the caller's own
    jobs on the pool meanwhile (one thread: the job runs at once, its error kept till read)."""
    import threading

    monkeypatch.setattr(_threads, "workers", lambda: threads)
    gate = threading.Event()

    def job() -> int:
        if threads > 1:
            assert gate.wait(10)  # runs beside the caller: it sets the gate below
        return 7

    pending = _threads.start(job)
    assert _threads.run([gate.set, lambda: 2])[1] == 2
    assert pending.result() == 7

    def fails() -> None:
        raise ArithmeticError("from the job")

    failed = _threads.start(fails)  # raised where read, not where started
    with pytest.raises(ArithmeticError, match="from the job"):
        failed.result()


@pytest.mark.parametrize("threads", [1, 2])
def test_started_job_sees_the_callers_context(monkeypatch, threads) -> None:
    """``start``: the job runs in the caller's context (the memory limit of the command and
    how messages spell options, both context variables, hold on the pool's thread too)."""
    import contextvars
    import threading

    from ratings.core.errors import option, options_rendered_by
    from ratings.core.memory import given_limit, limit_scope

    monkeypatch.setattr(_threads, "workers", lambda: threads)
    setting = contextvars.ContextVar("setting", default="unset")

    def job() -> tuple:
        return (setting.get(), given_limit(), option("max_memory"),
                threading.current_thread().name.startswith("ratings_"))  # fmt: skip

    token = setting.set("caller's")
    try:
        with limit_scope("1GB"), options_rendered_by(lambda name, value=None: f"--{name}"):
            pending = _threads.start(job)
            want = job()[:3]
    finally:
        setting.reset(token)
    got = pending.result()
    assert got[:3] == want and want[:2] == ("caller's", 10**9)
    assert got[3] == (threads > 1)  # on the pool's thread


def test_jobs_run_from_a_pool_job_run_in_its_thread(monkeypatch) -> None:
    """A job that calls ``run`` (a twin splitting its work, called from a pool job) gets its
    jobs' results in order, run in its own thread: no wait on a pool it could fill up."""
    import threading

    monkeypatch.setattr(_threads, "workers", lambda: 2)

    def outer(k: int) -> list:
        here = threading.current_thread()
        return _threads.run([lambda: (k, threading.current_thread() is here),
                             lambda: (k + 1, threading.current_thread() is here)])  # fmt: skip

    got = _threads.run([lambda: outer(0), lambda: outer(10), lambda: outer(20)])
    assert got == [[(k, True), (k + 1, True)] for k in (0, 10, 20)]
