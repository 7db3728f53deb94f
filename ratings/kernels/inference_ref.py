"""Pure-NumPy twins of :mod:`ratings.kernels.inference`: same names, signatures, results."""

from __future__ import annotations

from functools import partial

import numpy as np

from ratings.core import threads as _threads

# the kernels' twins (same names), and the NumPy steps they share with the rows' passes
# (bt_row_weights, by_blocks, cell_positions, cluster_blocks, scores_by_blocks, times_at,
# times_by_blocks)
__all__ = ["bt_cluster_scores", "bt_row_weights", "by_blocks", "cell_positions", "cluster_blocks",
           "cluster_quadratic", "cluster_times", "model_clusters", "scores_by_blocks",
           "series_term", "small_blocks", "small_meat", "small_shares", "times_at",
           "times_by_blocks"]

#: Cells of the (distinct designs x contrasts) work arrays per pass.
_CELLS = 1_000_000
#: Cells of the one-row path's passes (kept in cache: an arena's 18,000 designs x 200
#: contrasts in 7 ms, against 11 ms in passes of ``_CELLS``).
_ONE_ROW_CELLS = 65_536
#: Design keys counted in a table (no sort) up to this many, or 8 per row.
_COUNT_SPACE = 1 << 16
#: Rows per block of the row passes (:func:`bt_row_weights`, :func:`times_by_blocks`,
#: :func:`scores_by_blocks`, the designs' columns of :func:`cluster_quadratic`): a block's
#: temporaries stay in a core's cache, and no pass holds temporaries as long as the rows
#: (1M rows: 7.8 MB each, every page of which a fresh process faults in once).
BLOCK_ROWS = 65_536
#: Contrasts up to which the quadratic forms are summed row by row (a judge table's few etas):
#: grouping the rows by design first costs more than the passes it saves.
_ROWWISE_UP_TO = 8


def series_term(p, ratio, total, step):
    np.multiply(p, ratio, out=step, dtype=np.float64)
    total += step
    return np.sqrt(np.einsum("ij,ij->i", step, step))


def bt_cluster_scores(theta, ii, jj, wi, wj, tt, cluster, n_clusters):
    """The rows' weights (:func:`bt_row_weights`) and each cluster's summed score."""
    a, score = bt_row_weights(theta, ii, jj, wi, wj, tt)
    g, m = n_clusters, theta.size
    x = np.where(a > 0.0, score, 0.0)
    at_i, at_j = cell_positions(ii, jj, cluster, m)
    w = np.bincount(at_i, x, g * m)
    w -= np.bincount(at_j, x, g * m)
    return a, w.reshape(g, m)


def bt_row_weights(theta, ii, jj, wi, wj, tt):
    """Bradley-Terry's working weight a = sqrt(n p q) of each row and its score
    ``wi + tt / 2 - n p`` (n = wi + wj + tt, p = sigma(theta_i - theta_j)), from one pass:
    the rows' differences and ``e^-|d|`` formed once for both, per pair (a table gathered per
    row) where the rows outnumber the pairs; :data:`BLOCK_ROWS` rows at a time, the blocks side
    by side on the package's threads (:func:`by_blocks`; each row's values as in one pass)."""
    m, size = theta.size, ii.size
    table = None
    if size > m * m:
        table = _sigma_terms((theta[:, None] - theta[None, :]).ravel())
    a, score = np.empty(size), np.empty(size)

    def fill(lo: int) -> None:
        s = slice(lo, lo + BLOCK_ROWS)
        if table is None:
            p, e = _sigma_terms(theta[ii[s]] - theta[jj[s]])
        else:
            at = np.multiply(ii[s], m, dtype=np.int64)
            at += jj[s]
            p, e = table[0][at], table[1][at]
        n = wi[s] + wj[s]
        n += tt[s]
        out = np.add(wi[s], 0.5 * tt[s], out=score[s])
        out -= n * p
        e *= n
        np.sqrt(e, out=a[s])

    by_blocks(fill, range(0, size, BLOCK_ROWS), size)
    return a, score


def by_blocks(job, blocks, rows: int) -> None:
    """``job(block)`` for every block, the blocks split into consecutive runs side by side on
    the package's threads when there are :data:`~ratings.core.threads.CONCURRENT_ROWS` rows or
    more (NumPy releases the GIL in a block's passes), else in order on this thread. Each
    block's job writes only its own rows: the results are the same either way."""
    blocks = list(blocks)
    parts = min(_threads.workers(), len(blocks)) if rows >= _threads.CONCURRENT_ROWS else 1
    runs = [blocks[lo:hi] for lo, hi in _threads.row_blocks(len(blocks), parts, 1)]
    _threads.run([partial(_each, job, run) for run in runs])


def _each(job, blocks) -> None:
    for block in blocks:
        job(block)


def _sigma_terms(d):
    """p = sigma(d) and p q = sigma(d) sigma(-d) of differences ``d``, from ``e^-|d|``."""
    e = np.exp(-np.abs(d))
    one_e = 1.0 + e
    p = np.where(d >= 0.0, 1.0, e)  # sigma(d) = 1 / (1 + e) or e / (1 + e), as expit
    p /= one_e
    e /= one_e**2  # p q, without cancellation
    return p, e


def model_clusters(ii, jj, cluster, n_models, n_clusters):
    """The lowest and highest cluster of each model's rows (``n_clusters`` and -1 for a model
    without rows)."""
    lo, hi = np.full(n_models, n_clusters), np.full(n_models, -1)
    for side in (ii, jj):
        np.minimum.at(lo, side, cluster)
        np.maximum.at(hi, side, cluster)
    return lo, hi


def cluster_times(ii, jj, judge, cluster, a, b, n_models, v):
    g, q = v.shape
    at_i, at_j = cell_positions(ii, jj, cluster, q)
    if not b.size:
        return times_at(at_i, at_j, a * a, v)
    flat = v.ravel()
    x = flat[at_i]
    x -= flat[at_j]
    x *= a  # x_r = a_r (v_i - v_j) + b_r v_k
    at_k = at_i - ii
    at_k += n_models
    at_k += judge
    x += b * flat[at_k]
    bx = b * x
    cells = g * q
    x *= a
    out = np.bincount(at_i, x, cells)
    out -= np.bincount(at_j, x, cells)
    out += np.bincount(at_k, bx, cells)
    return out.reshape(g, q)


def cell_positions(ii, jj, cluster, q: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's positions ``cluster * q + ii`` and ``cluster * q + jj`` in a flattened
    (clusters x q) array: :func:`times_at` reads them (computed once for several passes)."""
    at_i = np.multiply(cluster, q, dtype=np.int64)
    at_j = at_i + jj
    at_i += ii
    return at_i, at_j


def times_at(at_i, at_j, aa, v):
    """:func:`cluster_times` of rows without a judge column, from their
    :func:`cell_positions` and squared weights ``aa``: H_g v_g = sum_r a_r^2 (v_i - v_j)
    (e_i - e_j) over the rows of g."""
    g, q = v.shape
    flat = v.ravel()
    x = flat[at_i]
    x -= flat[at_j]
    x *= aa
    out = np.bincount(at_i, x, g * q)
    out -= np.bincount(at_j, x, g * q)
    return out.reshape(g, q)


def cluster_blocks(starts, rows: int = BLOCK_ROWS) -> list[tuple[int, int, int, int]]:
    """Blocks ``(c0, c1, r0, r1)`` of whole clusters (``c0`` to ``c1``, exclusive, their rows
    ``r0`` to ``r1``; ``starts`` as :attr:`~ratings.inference.working.WorkingRows.starts`
    gives them) of about ``rows`` rows each (a larger cluster is a block of its own), covering
    every cluster. A sum into a cluster's cells then sees that cluster's rows in one block, in
    their order: the blocks' sums are a whole pass's."""
    g, n = starts.size - 1, int(starts[-1]) if starts.size else 0
    cuts = np.unique(np.concatenate([[0], np.searchsorted(starts, np.arange(rows, n, rows)),
                                     [max(g, 0)]]))  # fmt: skip
    return [(c0, c1, int(starts[c0]), int(starts[c1]))
            for c0, c1 in zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True)]  # fmt: skip


def _block_positions(ii, jj, cluster, q: int, c0: int, r0: int, r1: int):
    """:func:`cell_positions` of rows ``r0:r1`` in their block's cells, from cluster ``c0``."""
    at_i = np.subtract(cluster[r0:r1], c0, dtype=np.int64)
    at_i *= q
    at_j = at_i + jj[r0:r1]
    at_i += ii[r0:r1]
    return at_i, at_j


def times_by_blocks(ii, jj, cluster, a, v, blocks):
    """:func:`times_at` of rows sorted by cluster, block by block (:func:`cluster_blocks`):
    each block's positions and squared weights formed in turn, none held for the rows."""
    g, q = v.shape
    flat = v.ravel()
    out = np.zeros(g * q)
    for c0, c1, r0, r1 in blocks:
        lo, cells = c0 * q, (c1 - c0) * q
        at_i, at_j = _block_positions(ii, jj, cluster, q, c0, r0, r1)
        part = flat[lo:lo + cells]
        x = part[at_i]
        x -= part[at_j]
        x *= a[r0:r1] * a[r0:r1]
        sums = np.bincount(at_i, x, cells)
        sums -= np.bincount(at_j, x, cells)
        out[lo:lo + cells] = sums
    return out.reshape(g, q)


def scores_by_blocks(ii, jj, cluster, x, g: int, q: int, blocks):
    """Each cluster's summed score (G x q) of rows sorted by cluster, from each row's score
    ``x`` on d = theta_ii - theta_jj: ``x`` added at (cluster, ii) and subtracted at
    (cluster, jj), block by block (:func:`cluster_blocks`; side by side, :func:`by_blocks`)."""
    out = np.zeros(g * q)

    def add(block) -> None:
        c0, c1, r0, r1 = block
        cells = (c1 - c0) * q
        at_i, at_j = _block_positions(ii, jj, cluster, q, c0, r0, r1)
        sums = np.bincount(at_i, x[r0:r1], cells)
        sums -= np.bincount(at_j, x[r0:r1], cells)
        out[c0 * q:c0 * q + cells] = sums

    by_blocks(add, blocks, ii.size)
    return out.reshape(g, q)


def cluster_quadratic(n_clusters, ii, jj, judge, cluster, a, b, n_models, n):
    """Grouped by design: rows with the same (i, j[, k]) share x_r / a_r, so with
    d = n_i - n_j, Q = W_aa (d^2) + W_ab (2 d n_k) + W_bb (n_k^2), where W_.. (clusters x
    distinct designs) sums a^2, a b, b^2 per cluster: sparse products over the distinct designs
    (at most all pairs; a few passes of columns) instead of a pass over every row and column.
    That is one multiply-add per (cluster, design) cell and column, the least these sums take:
    sums per (cluster, model) give the squares' part sum_m D_gm n_m^2 of Q at once, but not
    its cross terms -2 a^2 n_i n_j, one per pair met in the cluster (on a board of 1,000 tasks
    and 200 models those cells are the rows). Up to :data:`_ROWWISE_UP_TO` columns, a pass
    over every row per column costs less than the grouping. The blocks of columns are
    multiplied side by side on the package's threads (:func:`ratings.core.threads.run`; each
    column's sums as in one pass)."""
    if n.shape[1] <= _ROWWISE_UP_TO:
        return _quadratic_by_rows(n_clusters, ii, jj, judge, cluster, a, b, n_models, n)
    if 0 < ii.size <= n_clusters and np.all(cluster[1:] > cluster[:-1]):  # one row a cluster
        return _quadratic_one_row(n_clusters, ii, jj, judge, cluster, a, b, n_models, n)
    from ratings.kernels.sparse import csc_of_csr, csc_times_dense

    n_judges = int(judge.max(initial=-1)) + 1 if b.size else 1
    space = n_models * n_models * n_judges
    index = np.int32 if 3 * max(space, ii.size) < 2**31 else np.int64  # scipy's own type
    keys, col = _design_columns(ii, jj, judge if b.size else None, n_models, n_judges, space,
                                index)  # fmt: skip
    rest, uk = np.divmod(keys, n_judges)
    ui, uj = np.divmod(rest, n_models)
    u = keys.size
    if np.any(cluster[1:] < cluster[:-1]):  # CSR rows: by cluster (duplicates are summed)
        order = np.argsort(cluster, kind="stable")
        cluster, col, a, b = cluster[order], col[order], a[order], b[order] if b.size else b
    indptr = np.searchsorted(cluster, np.arange(n_clusters + 1)).astype(index)
    if b.size:
        w = csc_of_csr(np.column_stack([a * a, 2.0 * a * b, b * b]).ravel(),
                       np.column_stack([col, col + u, col + 2 * u]).ravel(), 3 * indptr, 3 * u)
    else:  # by design (CSC): each design's row of squares is read once, the result stays hot
        w = csc_of_csr(a * a, col, indptr, u)
    del col  # (the rows' designs are in ``w`` now)
    out = np.empty((n_clusters, n.shape[1]))
    step = max(1, _CELLS // (w.shape[1] or 1))

    def columns(lo: int) -> None:  # scipy's compiled sparse product releases the GIL
        part = np.ascontiguousarray(n[:, lo:lo + step])  # whole rows to gather
        d = np.take(part, ui, axis=0)
        chunk = max(1, BLOCK_ROWS // part.shape[1])  # the designs' j rows a chunk at a time
        for c0 in range(0, u, chunk):
            d[c0:c0 + chunk] -= np.take(part, uj[c0:c0 + chunk], axis=0)
        if b.size:
            nk = np.take(part, n_models + uk, axis=0)
            x = np.vstack([d * d, d * nk, nk * nk])
        else:
            x = d
            x *= d
        out[:, lo:lo + step] = csc_times_dense(w, x)

    _threads.run([partial(columns, lo) for lo in range(0, n.shape[1], step)])
    return out


def _design_columns(ii, jj, judge, n_models: int, n_judges: int, space: int, index):
    """The distinct design keys ``(ii n_models + jj) n_judges [+ judge]`` of the rows
    (``judge`` None: no judge column), sorted, and each row's design as ``index``: counted in
    a table while the keys fit one (no sort; the keys formed :data:`BLOCK_ROWS` rows at a
    time, none held for the rows), else sorted."""
    size = ii.size

    def design_keys(lo: int, hi: int) -> np.ndarray:
        key = np.multiply(ii[lo:hi], n_models, dtype=np.int64)
        key += jj[lo:hi]
        if judge is not None:
            key *= n_judges
            key += judge[lo:hi]
        return key

    if space > max(_COUNT_SPACE, 8 * size):
        keys, col = np.unique(design_keys(0, size), return_inverse=True)
        return keys, col
    seen = np.zeros(space, dtype=bool)
    for lo in range(0, size, BLOCK_ROWS):
        seen[design_keys(lo, lo + BLOCK_ROWS)] = True
    keys = np.flatnonzero(seen)
    lut = np.empty(space, dtype=index)
    lut[keys] = np.arange(keys.size, dtype=index)
    col = np.empty(size, dtype=index)
    for lo in range(0, size, BLOCK_ROWS):
        np.take(lut, design_keys(lo, lo + BLOCK_ROWS), out=col[lo:lo + BLOCK_ROWS],
                mode="clip")  # (in range: "clip" writes straight into ``out``)
    return keys, col


def _quadratic_one_row(n_clusters, ii, jj, judge, cluster, a, b, n_models, n):
    """:func:`cluster_quadratic` where each cluster has one row at most (an arena's prompts,
    or their distinct designs): each row's x_r = a_r (n_i - n_j) [+ b_r n_k] squared, taken
    :data:`_ONE_ROW_CELLS` cells at a time."""
    every = n_clusters == ii.size  # cluster r is row r: the rows' results are the output
    out = np.empty((n_clusters, n.shape[1])) if every else np.zeros((n_clusters, n.shape[1]))
    step = max(1, _ONE_ROW_CELLS // max(n.shape[1], 1))
    for lo in range(0, ii.size, step):
        s = slice(lo, lo + step)
        x = np.take(n, ii[s], axis=0, out=out[s]) if every else np.take(n, ii[s], axis=0)
        x -= np.take(n, jj[s], axis=0)
        x *= a[s, None]
        if b.size:
            x += b[s, None] * np.take(n, n_models + judge[s], axis=0)
        x *= x
        if not every:
            out[cluster[s]] = x
    return out


def _quadratic_by_rows(n_clusters, ii, jj, judge, cluster, a, b, n_models, n):
    """:func:`cluster_quadratic` for a few contrasts: each row's x_r = a_r (n_i - n_j)
    [+ b_r n_k] squared and summed per cluster, one contrast at a time."""
    out = np.empty((n_clusters, n.shape[1]))
    for c in range(n.shape[1]):
        col = n[:, c]
        x = col[ii] - col[jj]
        x *= a
        if b.size:
            x += b * col[n_models + judge]
        x *= x
        out[:, c] = np.bincount(cluster, x, n_clusters)
    return out


def _by_size(starts):
    """(size R, the rows of every cluster of that size as an (n, R) array, their clusters)."""
    size = np.diff(starts)
    for n in np.unique(size):
        cl = np.flatnonzero(size == n)
        yield int(n), starts[cl][:, None] + np.arange(n), cl


def _design(rows, ii, jj, judge, a, b, n_models):
    """Indices and coefficients (..., E) of the design vectors of ``rows``."""
    idx = [ii[rows], jj[rows]]
    coef = [a[rows], -a[rows]]
    if b.size:
        idx.append(n_models + judge[rows])
        coef.append(b[rows])
    return np.stack(idx, axis=-1), np.stack(coef, axis=-1)


def _offsets(starts):
    size = np.diff(starts)
    return np.concatenate([[0], np.cumsum(size * size)]).astype(np.int64)


def small_blocks(starts, ii, jj, judge, a, b, n_models, bread, degenerate):
    """The kernel's blocks, the clusters of each size at once: F by :func:`_inverse_sqrt`
    (products only), by the eigen-decomposition where that iteration does not converge (a
    leverage near 1, and every degenerate one)."""
    off = _offsets(starts)
    h, f = np.empty(off[-1]), np.empty(off[-1])
    deg = np.zeros(starts.size - 1, dtype=bool)
    for n, rows, cl in _by_size(starts):
        blk = _leverage_blocks(rows, ii, jj, judge, a, b, n_models, bread)
        if n == 1:  # the leverage is the eigenvalue (eigenvector 1)
            lam = blk[:, 0]
            bad = lam >= 1.0 - degenerate
            fb = np.where(bad, 1.0, 1.0 / np.sqrt(np.clip(1.0 - lam, degenerate, None)))
        else:
            fb, done = _inverse_sqrt(blk)
            bad = np.zeros((cl.size, n), dtype=bool)
            rest = np.flatnonzero(~done)
            if rest.size:  # leverages near 1: the eigen-decomposition, as the kernel
                lam, vec = np.linalg.eigh(blk[rest])
                bad[rest] = lam >= 1.0 - degenerate
                fl = np.where(bad[rest], 1.0,
                              1.0 / np.sqrt(np.clip(1.0 - lam, degenerate, None)))  # fmt: skip
                fb[rest] = (vec * fl[:, None, :]) @ vec.transpose(0, 2, 1)
        deg[cl] = bad.reshape(cl.size, -1).any(axis=1)
        at = off[cl][:, None] + np.arange(n * n)
        h[at] = blk.reshape(-1, n * n)
        f[at] = fb.reshape(-1, n * n)
    return h, f, deg


#: Most Newton-Schulz steps of :func:`_inverse_sqrt` (from a largest leverage of about 0.99 the
#: steps need more; those blocks are eigen-decomposed).
_INV_SQRT_STEPS = 12
#: A block's Newton-Schulz iteration has converged once its step's factor T is this close to
#: the identity (Frobenius norm): the error left is about 3/4 of its square, below rounding.
_INV_SQRT_TOL = 1e-8


def _inverse_sqrt(h):
    """(I - H)^(-1/2) of leverage blocks ``h`` (k, n, n) by the coupled Newton-Schulz iteration
    (Higham, Functions of Matrices, 2008, ch. 6: Y -> A^(1/2), Z -> A^(-1/2) for A = I - H,
    quadratically while H's eigenvalues lie in [0, 1)): products of small matrices only, for
    200 blocks of 30 rows a third of the batched eigen-decomposition's time (four steps where
    the largest leverage is below 0.1; half its time at 0.9). Returns the blocks and which of
    them converged within :data:`_INV_SQRT_STEPS` (the others' values are not to be used)."""
    diag = np.arange(h.shape[1])
    t = h * 0.5  # the first step from Z = I: T = (3 I - A) / 2 = I + H / 2
    t[:, diag, diag] += 1.0
    y = np.negative(h)
    y[:, diag, diag] += 1.0  # A
    y = y @ t
    z = t
    for _ in range(_INV_SQRT_STEPS - 1):
        t = z @ y
        t *= -0.5
        t[:, diag, diag] += 1.5
        y = y @ t
        z = t @ z
        t[:, diag, diag] -= 1.0
        err = np.einsum("kij,kij->k", t, t)
        if err.max() < _INV_SQRT_TOL**2:
            break
    return z, err < _INV_SQRT_TOL**2


#: Clusters of n rows take their leverage blocks from dense design rows (two BLAS products)
#: while the parameters are at most this many times n (then the rows' k n P cells are at most
#: this many times the blocks' k n^2); else from gathers of the bread, E^2 a cell.
_DENSE_ROWS_UP_TO = 4


def _leverage_blocks(rows, ii, jj, judge, a, b, n_models, bread):
    """H_gg = X_g B X_g^T of the clusters whose rows are ``rows`` (k, n) -> (k, n, n)."""
    idx, coef = _design(rows, ii, jj, judge, a, b, n_models)  # (k, n, E)
    k, n, e = idx.shape
    q = bread.shape[0]
    if n > 1 and q <= _DENSE_ROWS_UP_TO * n:  # x_r^T B x_s as X B X^T, X (k, n, Q) dense
        x = np.zeros((k * n, q))
        x[np.arange(k * n)[:, None], idx.reshape(-1, e)] = coef.reshape(-1, e)  # distinct
        x = x.reshape(k, n, q)
        return (x @ bread) @ x.transpose(0, 2, 1)
    blk = np.zeros((k, n, n))
    for u in range(e):  # x_r^T B x_s: E^2 gathers of the bread, no (k, n, n, E, E) array
        for w in range(e):
            blk += (coef[:, :, None, u] * coef[:, None, :, w]
                    * bread[idx[:, :, None, u], idx[:, None, :, w]])  # fmt: skip
    return blk


def small_meat(starts, ii, jj, judge, a, b, n_models, n_params, e):
    out = np.zeros(n_params * n_params)
    for _, rows, _ in _by_size(starts):
        idx, coef = _design(rows, ii, jj, judge, a, b, n_models)
        w = coef * e[rows][..., None]  # (k, n, E): e_r x_r
        at = idx[:, :, None, :, None] * n_params + idx[:, None, :, None, :]
        val = w[:, :, None, :, None] * w[:, None, :, None, :]
        out += np.bincount(at.ravel(), val.ravel(), out.size)
    return out.reshape(n_params, n_params)


def small_shares(starts, ii, jj, judge, a, b, n_models, v, tr, floor, weight):
    g = starts.size - 1
    rows = slice(starts[0], starts[-1])  # a block of clusters: their rows only
    cluster = np.repeat(np.arange(g), np.diff(starts))
    b = b[rows] if b.size else b
    out = np.zeros((v.shape[1], 3))
    step = max(1, _CELLS // max(g, 1))
    for lo in range(0, v.shape[1], step):
        q = cluster_quadratic(g, ii[rows], jj[rows], judge[rows], cluster, a[rows], b, n_models,
                              np.ascontiguousarray(v[:, lo:lo + step]))  # fmt: skip
        with np.errstate(invalid="ignore", divide="ignore"):  # a zero contrast: NaN, as numba
            pi = q / tr[lo:lo + step]
        w = pi * pi / np.maximum(1.0 - pi, floor)
        out[lo:lo + step] = np.column_stack([weight @ (pi * pi), weight @ w, weight @ (w * w)])
    return out
