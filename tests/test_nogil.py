"""The GIL-free LAPACK / BLAS calls (ratings.core.nogil) against numpy's own linear algebra and
scipy's wrappers of the same routines, in place on arrays and on views of larger ones, through
the C entry points and through the fallback on scipy's wrappers."""

from __future__ import annotations

import numpy as np
import pytest

from ratings.core import nogil


@pytest.fixture(params=["entry points", "scipy wrappers"])
def path(request, monkeypatch):
    if request.param == "scipy wrappers":
        monkeypatch.setattr(nogil, "_routine", lambda key: None)
        assert not nogil.available()
    else:
        assert nogil.available()
    return request.param


def spd(n: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=(n, n))
    return x @ x.T + n * np.eye(n)


def in_view(a: np.ndarray, pad: int = 3) -> np.ndarray:
    """``a`` copied into the top-left block of a larger Fortran-ordered array (a view whose
    leading dimension exceeds its rows)."""
    big = np.full((a.shape[0] + pad, a.shape[1] + pad), np.nan, order="F")
    big[: a.shape[0], : a.shape[1]] = a
    return big[: a.shape[0], : a.shape[1]]


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("view", [False, True])
def test_potrf_and_potri_match_numpy(path, lower, view):
    n = 37
    h = spd(n, 1)
    a = in_view(h) if view else nogil.fortran(h)
    assert nogil.potrf(a, lower=lower) == 0
    tri = np.tril if lower else np.triu
    chol = np.linalg.cholesky(h)  # lower: h = chol chol^T
    np.testing.assert_allclose(tri(a), chol if lower else chol.T, rtol=1e-12, atol=1e-12)
    other = np.triu(a, 1) if lower else np.tril(a, -1)  # the other triangle left as it was
    np.testing.assert_array_equal(other, np.triu(h, 1) if lower else np.tril(h, -1))
    assert nogil.potri(a, lower=lower) == 0
    inv = np.linalg.inv(h)
    np.testing.assert_allclose(tri(a), tri(inv), rtol=1e-10, atol=1e-14)


def test_potrf_and_potri_are_scipys_routines_bitwise():
    from scipy.linalg.lapack import dpotrf, dpotri

    h = spd(300, 2)
    want, _ = dpotrf(h, lower=True, clean=False)
    a = nogil.fortran(h)
    nogil.potrf(a, lower=True)
    np.testing.assert_array_equal(np.tril(a), np.tril(want))
    want, _ = dpotri(want, lower=True)
    nogil.potri(a, lower=True)
    np.testing.assert_array_equal(np.tril(a), np.tril(want))


def test_potrf_reports_a_matrix_not_positive_definite(path):
    h = spd(20, 3)
    h[5, 5] = -1.0
    assert nogil.potrf(nogil.fortran(h), lower=True) > 0


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("rows", [(0, 41), (0, 16), (16, 41), (5, 5)])
def test_trmm_right_on_blocks_of_rows_matches_numpy(path, lower, rows):
    rng = np.random.default_rng(4)
    n, m = 29, 41
    r = rng.normal(size=(n, n))
    b = rng.normal(size=(m, n))
    want = b @ (np.tril(r) if lower else np.triu(r))
    z = nogil.fortran(b)
    lo, hi = rows
    nogil.trmm_right(z[lo:hi], in_view(r), lower=lower)
    np.testing.assert_allclose(z[lo:hi], want[lo:hi], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(np.delete(z, np.s_[lo:hi], 0), np.delete(b, np.s_[lo:hi], 0))


@pytest.mark.parametrize("k", [0, 1, 50])
def test_syrk_writes_the_upper_triangle_of_the_cross_product(path, k):
    rng = np.random.default_rng(5)
    n = 23
    a = rng.normal(size=(k, n)).T  # n x k in Fortran order (a view of a C-ordered array)
    c = np.full((n, n), 7.0, order="F")
    nogil.syrk(c, a, 0.5)
    want = 0.5 * np.einsum("ik,jk->ij", a, a)
    np.testing.assert_allclose(np.triu(c), np.triu(want), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(np.tril(c, -1), np.tril(np.full((n, n), 7.0), -1))


def test_other_layouts_are_refused():
    h = spd(6, 6)
    with pytest.raises(ValueError, match="Fortran order"):
        nogil.potrf(h[:, ::2][:3], lower=True)  # rows not adjacent in memory
    with pytest.raises(ValueError, match="Fortran order"):
        nogil.potrf(np.ascontiguousarray(h)[:, :5][:5].copy(order="C")[:, :4][:4], lower=True)
    with pytest.raises(ValueError, match="square"):
        nogil.potri(nogil.fortran(h[:, :4]), lower=True)
    with pytest.raises(ValueError, match="do not multiply"):
        nogil.trmm_right(nogil.fortran(h[:, :4]), nogil.fortran(h), lower=True)
    frozen = nogil.fortran(h)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="Fortran order"):
        nogil.potrf(frozen, lower=True)
