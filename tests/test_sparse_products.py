"""The twins' sparse product without scipy.sparse (:mod:`ratings.kernels.sparse`): bit for bit
scipy's ``csr_matrix(...).tocsc() @ x``, and the extension it runs on loaded without leaving a
trace in ``sys.modules`` (a later ``import scipy.sparse`` works as ever)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from scipy.sparse import csr_matrix

from ratings.kernels.sparse import csc_of_csr, csc_times_dense


def _csr(rng, n_rows, n_cols, nnz, index, empty_rows=()):
    """CSR arrays with duplicates, unsorted columns within rows and some rows left empty."""
    rows = rng.integers(0, n_rows, nnz)
    rows = rows[~np.isin(rows, empty_rows)]
    rows.sort(kind="stable")
    cols = rng.integers(0, n_cols, rows.size).astype(index)
    cols[1::7] = cols[::7][: cols[1::7].size]  # repeated (row, column) pairs here and there
    data = rng.standard_normal(rows.size) ** 2
    indptr = np.searchsorted(rows, np.arange(n_rows + 1)).astype(index)
    return data, cols, indptr


@pytest.mark.parametrize("index", [np.int32, np.int64])
@pytest.mark.parametrize("k", [1, 3, 40])
def test_product_is_scipys_bit_for_bit(index, k):
    rng = np.random.default_rng(7 + k)
    data, cols, indptr = _csr(rng, 50, 300, 4000, index, empty_rows=(3, 17))
    x = rng.standard_normal((300, k)) * 10.0 ** rng.integers(-3, 4, (300, k))
    expected = csr_matrix((data, cols, indptr), shape=(50, 300)).tocsc() @ x
    got = csc_times_dense(csc_of_csr(data, cols, indptr, 300), x)
    assert got.shape == (50, k) and got.dtype == np.float64
    np.testing.assert_array_equal(got, expected)  # the same sums in the same order
    # and the product it stands for, summed another way
    dense = np.zeros((50, 300))
    np.add.at(dense, (np.repeat(np.arange(50), np.diff(indptr)), cols), data)
    np.testing.assert_allclose(got, dense @ x, rtol=1e-12, atol=1e-12 * np.abs(x).max())


def test_empty_matrix_and_misaligned_shapes():
    w = csc_of_csr(np.zeros(0), np.zeros(0, np.int32), np.zeros(4, np.int32), 0)
    np.testing.assert_array_equal(csc_times_dense(w, np.zeros((0, 5))), np.zeros((3, 5)))
    w = csc_of_csr(np.ones(2), np.array([0, 1], np.int32), np.array([0, 1, 2], np.int32), 2)
    with pytest.raises(ValueError, match="do not align"):
        csc_times_dense(w, np.ones((3, 2)))


LOAD = """
    import json, sys
    import numpy as np
    from ratings.kernels.sparse import csc_of_csr, csc_times_dense
    w = csc_of_csr(np.array([1.0, 2.0]), np.array([1, 0], np.int32),
                   np.array([0, 1, 2], np.int32), 2)
    first = csc_times_dense(w, np.array([[3.0], [5.0]])).ravel().tolist()
    before = sorted(m for m in sys.modules if m.split(".")[0] == "scipy")
    import scipy.sparse
    again = (scipy.sparse.csr_matrix(np.eye(2)) @ np.array([[3.0], [5.0]])).ravel().tolist()
    print(json.dumps({"first": first, "before": before, "again": again,
                      "tools": hasattr(scipy.sparse, "_sparsetools")}))
"""


def test_loading_the_extension_leaves_scipy_unimported():
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(LOAD)], capture_output=True,
                          text=True, check=True)  # fmt: skip
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found == {"first": [5.0, 6.0], "before": [], "again": [3.0, 5.0], "tools": True}
