"""The missing-cell check of a column that is not encoded (``read_verdicts(task_codes=False)``,
the task of a fit that clusters by nothing) against a plain per-cell Python rule with pandas'
own list of missing-value markers, and the rows it rejects against the encoding path."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from pandas._libs.parsers import STR_NA_VALUES

from ratings.api.loading import load_log
from ratings.io import read_verdicts
from ratings.io.blanks import missing_cells

# Pieces of cells: pandas' markers, Python's whitespace (ASCII and not), ids, multi-byte text.
_PIECES = [*sorted(STR_NA_VALUES), " ", "\t", "\n", "\x1c", "\x1f", "\x85", "\xa0", "\u3000",
           "\u2028", "t1", "task-007", "é", "N", "A", "#", "/", "1.#", "ﬁ", "x" * 12]


def _reference(cells: list[str | None]) -> np.ndarray:
    """Missing: null, or one of pandas' NA markers after Python's ``str.strip``."""
    return np.array([c is None or c.strip() in STR_NA_VALUES for c in cells], dtype=bool)


def _cells(rng: np.random.Generator, n: int, long: float = 0.0) -> list[str | None]:
    """Random cells; a share ``long`` of them start with a long id."""
    out: list[str | None] = []
    for _ in range(n):
        k = rng.integers(0, 4)
        cell = "".join(_PIECES[i] for i in rng.integers(0, len(_PIECES), k))
        if rng.random() < long:
            cell = "task-000123" + cell
        out.append(None if rng.random() < 0.05 else cell)
    return out


@pytest.fixture(params=["numpy", "compiled"])
def path(request, monkeypatch) -> str:
    """The NumPy passes, or the compiled kernel (as after warm-up, from COMPILED_FROM cells:
    here from any)."""
    if request.param == "compiled":
        from ratings.io import blanks
        from ratings.kernels.cells import candidates

        blanks.candidates_with(candidates, np.zeros(2, dtype=np.int64), np.zeros(1, np.uint8))
        monkeypatch.setattr(blanks, "COMPILED_FROM", 0)
        assert blanks._compiled(1) is candidates
    return request.param


@pytest.mark.parametrize("long", [0.0, 0.95])  # short cells: all looked up, or a few
@pytest.mark.parametrize("arrow_type", [pa.string(), pa.large_string()])
@pytest.mark.parametrize("seed", range(4))
def test_missing_cells_match_a_per_cell_rule(arrow_type, seed: int, long: float,
                                             path: str) -> None:  # fmt: skip
    rng = np.random.default_rng(seed)
    cells = _cells(rng, 3000, long)
    cuts = np.sort(rng.integers(0, len(cells), 3))  # several chunks, one of them sliced
    parts = np.split(np.arange(len(cells)), cuts)
    chunks = [pa.array([cells[i] for i in p], type=arrow_type) for p in parts]
    chunks[0] = pa.array([None, "x", *[cells[i] for i in parts[0]]], type=arrow_type)[2:]
    series = pd.Series(pd.arrays.ArrowExtensionArray(pa.chunked_array(chunks, type=arrow_type)))
    found = missing_cells(series.astype(pd.ArrowDtype(arrow_type)))
    if found is None:  # only where Arrow's and Python's whitespace rules disagree on a cell
        pytest.skip("whitespace rules disagree")
    np.testing.assert_array_equal(found, _reference(cells))


@pytest.mark.parametrize("seed", range(3))
def test_candidates_kernel_matches_its_twin(seed: int) -> None:
    """The compiled pass over offsets and bytes against the NumPy passes (random bytes, with
    edge bytes, markers' ends and empty cells)."""
    from ratings.io import blanks
    from ratings.kernels.cells import candidates

    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 6, 5000)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    pool = np.frombuffer(b" \t\x85NnAa#/1.x-\xc3\xa9", dtype=np.uint8)
    data = rng.choice(pool, max(int(offsets[-1]), 1))
    for kind in (np.int32, np.int64):
        at = offsets.astype(kind)
        np.testing.assert_array_equal(blanks.candidates_with(candidates, at, data),
                                      blanks._candidates_numpy(at, data))  # fmt: skip


def test_missing_cells_of_the_str_dtype() -> None:
    cells = _cells(np.random.default_rng(9), 2000)
    found = missing_cells(pd.Series(cells, dtype="str"))
    assert found is not None
    np.testing.assert_array_equal(found, _reference(cells))


def test_missing_cells_decline_other_columns() -> None:
    assert missing_cells(pd.Series(["a", None], dtype=object)) is None
    assert missing_cells(pd.Series([1, 2])) is None
    assert missing_cells(pd.Series(["a", "b"], dtype="category")) is None
    assert missing_cells(pd.Series(["a", None], dtype="string[python]")) is None
    found = missing_cells(pd.Series([" NA", "a", None], dtype="string[pyarrow]"))
    np.testing.assert_array_equal(found, [True, False, True])


def _log(rng: np.random.Generator, n: int, task_dtype: object) -> pd.DataFrame:
    models = np.array(["m0", "m1", "m2", "m3"], dtype=object)
    a = rng.integers(0, 4, n)
    b = (a + rng.integers(1, 4, n)) % 4
    tasks = _cells(rng, n)
    return pd.DataFrame({"model_a": models[a], "model_b": models[b],
                         "winner": rng.choice(["A", "B", "tie"], n),
                         "task_id": pd.Series(tasks, dtype=task_dtype)})  # fmt: skip


@pytest.mark.parametrize("task_dtype", ["str", object, "category", "string[python]"])
def test_unencoded_task_rejects_the_rows_encoding_rejects(task_dtype) -> None:
    df = _log(np.random.default_rng(3), 4000, task_dtype)
    expected = _reference([None if pd.isna(t) else str(t) for t in df["task_id"]])
    assert expected.any() and not expected.all()
    encoded = read_verdicts(df, errors="report")
    plain = read_verdicts(df, errors="report", task_codes=False)
    np.testing.assert_array_equal(plain.rejected["row"], np.flatnonzero(expected))
    pd.testing.assert_frame_equal(plain.rejected, encoded.rejected)
    assert "task_id" not in plain.verdicts
    pd.testing.assert_frame_equal(plain.verdicts, encoded.verdicts.drop(columns="task_id"))


def test_unclustered_fit_reads_the_same_counts() -> None:
    df = _log(np.random.default_rng(5), 3000, "str")
    keep = ~_reference([None if pd.isna(t) else str(t) for t in df["task_id"]])
    loaded = load_log(df, cluster=None, errors="report")
    assert loaded.n_rejected == int((~keep).sum())
    want = (df[keep].assign(w=lambda f: f["winner"].map({"A": 0, "B": 1, "tie": 2}))
            .groupby(["model_a", "model_b", "w"]).size())  # fmt: skip
    data = loaded.data
    got = {}
    for i, j, wi, wj, tt in zip(data.ii, data.jj, data.wi, data.wj, data.tt, strict=True):
        got[(data.models[i], data.models[j])] = (wi, wj, tt)
    total = {}
    for (ma, mb, w), c in want.items():
        key, flip = ((ma, mb), False) if ma < mb else ((mb, ma), True)
        row = total.setdefault(key, [0, 0, 0])
        row[2 if w == 2 else (1 - w if flip else w)] += c
    assert got == {k: tuple(float(x) for x in v) for k, v in total.items()}
