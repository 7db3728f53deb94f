"""Per-cluster rows of the GLM working model behind the CR2 sandwich (:mod:`ratings.inference`)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, partial
from types import ModuleType

import numpy as np
from numpy.typing import NDArray

__all__ = ["CELLS_PER_VERDICT", "WorkingRows", "bt_rows", "bt_rows_and_scores", "bt_working",
           "crowd_weights", "kernels", "lifted"]

#: Cells of the quadratic twin's work (designs x contrasts) that cost about what one verdict
#: costs the fit's twins (measured: 5 ns a cell against about 0.3 microseconds a verdict).
CELLS_PER_VERDICT = 64
#: (pair, judge) keys counted in a table (no sort) up to this many, or 8 per cluster.
_COUNT_SPACE = 1 << 16


def kernels(size: int):
    """:mod:`ratings.kernels.inference` for ``size`` rows or cells and more than the NumPy
    twins handle before numba could load (see :mod:`ratings.kernels.engine`), else the twins."""
    from ratings.kernels.engine import resolve

    if resolve("auto", size) == "numba":
        from ratings.kernels import inference as _kernels_inference

        return _kernels_inference
    from ratings.kernels import inference_ref as _kernels_inference_ref

    return _kernels_inference_ref


def lifted(x: NDArray[np.float64], free: NDArray[np.int64], n: int) -> NDArray[np.float64]:
    """``x`` (rows over the coordinates ``free``) as rows over all ``n`` parameters, zero
    elsewhere: a matrix over ``free`` as ``design`` and ``quadratic`` read it."""
    out = np.zeros((n, x.shape[1]))
    out[free] = x
    return out


@dataclass(frozen=True, eq=False)
class WorkingRows:
    """Per-cluster rows of the working linear model.

    Row r is the aggregated row r of the fit's data (its keys ``ii``, ``jj``, ``judge`` and
    ``cluster`` as :class:`~ratings.core.rows.PairRows` spells them), stands for its ``n_r``
    verdicts and adds the design vector ``a_r (e_ii - e_jj) + b_r e_{n_models + judge}``
    (already scaled by sqrt(n_r)); ``b`` is empty for Bradley-Terry. Rows are sorted by
    ``cluster``. A design with covariates adds its block ``x`` (N x p, the columns after the
    models', before the judges' ``b``: the design vector gains ``a_r x_r``), read by ``style``,
    the fit's kernels for it (:mod:`ratings.kernels.style` or its twin).
    """

    ii: NDArray[np.int64]
    jj: NDArray[np.int64]
    judge: NDArray[np.int64]
    cluster: NDArray[np.int64]
    a: NDArray[np.float64]
    b: NDArray[np.float64]
    n_clusters: int
    n_params: int
    n_models: int
    x: NDArray[np.float64] | None = None
    style: ModuleType | None = None

    @cached_property
    def starts(self) -> NDArray[np.int64]:
        """Row ``starts[g]`` is cluster g's first, ``starts[G]`` the rows' number."""
        # rows are sorted by cluster: each cluster's first row by bisection, not a pass
        return np.searchsorted(self.cluster, np.arange(self.n_clusters + 1)).astype(np.int64)

    @cached_property
    def blocks(self) -> list[tuple[int, int, int, int]]:
        """Blocks of whole clusters ``(c0, c1, r0, r1)`` (clusters ``c0:c1``, rows ``r0:r1``) of
        about :data:`~ratings.kernels.inference_ref.BLOCK_ROWS` rows: the NumPy passes of
        :meth:`times` (the series takes four) and the clusters' scores go block by block."""
        from ratings.kernels.inference_ref import cluster_blocks

        return cluster_blocks(self.starts)

    @property
    def merged(self) -> tuple[WorkingRows, NDArray[np.float64], NDArray[np.int64]]:
        """The clusters as weighted groups: one-row clusters of one design (pair, judge and
        weights ``a``, ``b``: a pair met once on each of many prompts) merged into one, weighted
        by their number; larger clusters kept (weight 1), after them. Sums over the clusters of
        anything a cluster's rows determine are the groups' weighted sums, over far fewer rows
        on an arena (its clusters shrink to the pairs that met). Returns the groups' rows
        (``cluster`` numbers the groups), their weights, and each cluster's group. With
        covariates each cluster is its own group (a row's covariates make its design its own)."""
        # these rows themselves are not cached with them: a reference cycle would keep their
        # arrays alive after the fit until the garbage collector runs
        return self._groups or (self, np.ones(self.n_clusters), np.arange(self.n_clusters))

    @cached_property
    def _groups(self) -> tuple[WorkingRows, NDArray[np.float64], NDArray[np.int64]] | None:
        """:attr:`merged` where some one-row clusters merge (None: each cluster its own)."""
        starts = self.starts
        sizes = np.diff(starts)
        lone = sizes == 1
        if self.x is not None or not lone.any():  # no one-row clusters: the groups are the rows
            return None
        first = starts[:-1][lone]  # the row of each one-row cluster
        nj = int(self.judge.max()) + 1 if self.judge.size else 1
        key = (self.ii[first].astype(np.int64) * self.n_models + self.jj[first]) * nj
        key += self.judge[first]
        a = self.a[first]
        b = self.b[first] if self.b.size else None
        design, count, of = _designs_by_key(key, first, a, b, self.n_models * self.n_models * nj)
        n_single = design.size
        if first.size == self.n_clusters:  # one row each (an arena)
            take, cluster, weight = design, np.arange(n_single, dtype=np.int64), count
            group_of = of
        else:  # then the larger clusters' rows, in cluster order
            n_multi = self.n_clusters - first.size
            take = np.concatenate([design, np.flatnonzero(np.repeat(~lone, sizes))])
            cluster = np.concatenate([np.arange(n_single, dtype=np.int64),
                                      np.repeat(np.arange(n_single, n_single + n_multi),
                                                sizes[~lone])])  # fmt: skip
            weight = np.concatenate([count, np.ones(n_multi)])
            group_of = np.empty(self.n_clusters, dtype=np.int64)
            group_of[lone] = of
            group_of[~lone] = np.arange(n_single, n_single + n_multi)
        groups = WorkingRows(
            ii=self.ii[take], jj=self.jj[take], judge=self.judge[take], cluster=cluster,
            a=self.a[take], b=self.b[take] if self.b.size else self.b,
            n_clusters=weight.size, n_params=self.n_params, n_models=self.n_models)
        return groups, weight, group_of

    def quadratic_block(self, lo: int, hi: int, n: NDArray[np.float64]) -> NDArray[np.float64]:
        """:meth:`quadratic` of clusters ``lo`` to ``hi`` (exclusive) -> ((hi - lo) x C)."""
        r0, r1 = self.starts[lo], self.starts[hi]
        b = self.b[r0:r1] if self.b.size else self.b
        if self.x is not None:
            s = slice(int(r0), int(r1))
            return self.style.style_cluster_quadratic(
                hi - lo, self.n_models, self.ii[s], self.jj[s], self.judge[s],
                self.cluster[s] - lo, self.x[s], self.a[s], b, np.ascontiguousarray(n))
        k = kernels((r1 - r0) * n.shape[1] // CELLS_PER_VERDICT)
        return k.cluster_quadratic(hi - lo, self.ii[r0:r1], self.jj[r0:r1], self.judge[r0:r1],
                                   self.cluster[r0:r1] - lo, self.a[r0:r1], b, self.n_models,
                                   np.ascontiguousarray(n))  # fmt: skip

    def design(self, lf: NDArray[np.float64], sl: slice) -> NDArray[np.float64]:
        """Rows ``sl`` times ``lf`` (n_params x K): each row's design vector mapped by ``lf``."""
        m, p = self.n_models, 0 if self.x is None else self.x.shape[1]
        out = np.take(lf, self.ii[sl], axis=0)  # take: twice as fast as indexing rows
        out -= np.take(lf, self.jj[sl], axis=0)
        if p:
            out += self.x[sl] @ lf[m:m + p]
        out *= self.a[sl, None]
        if self.b.size:
            out += self.b[sl, None] * lf[m + p + self.judge[sl]]
        return out

    def _covariate_pass(self, name: str, lead: tuple, v: NDArray[np.float64]) -> NDArray:
        """The style kernel ``name`` over the rows with covariates (arguments ``lead``, the
        rows', ``v``), in blocks side by side on the package's threads from
        :data:`ratings.core.threads.CONCURRENT_ROWS` rows, the blocks' results summed."""
        from ratings.core.threads import CONCURRENT_ROWS, row_blocks, run, workers

        n, b, kernel = self.ii.size, self.b, getattr(self.style, name)
        cuts = [(0, n)] if n < CONCURRENT_ROWS else row_blocks(n, workers())
        v = np.ascontiguousarray(v)

        def part(lo: int, hi: int) -> NDArray[np.float64]:
            s = slice(lo, hi)
            return kernel(*lead, self.n_models, self.ii[s], self.jj[s], self.judge[s],
                          self.cluster[s], self.x[s], self.a[s], b[s] if b.size else b, v)

        parts = run([partial(part, lo, hi) for lo, hi in cuts])
        out = parts[0]
        for more in parts[1:]:
            out = out + more
        return out

    def information(self, weight: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
        """Fisher information sum_r x_r x_r^T, (n_params x n_params), each row counted
        ``weight[r]`` times if given. The squares and products of ``a`` and ``b`` add up over
        clusters, so the rows summed over clusters give it too."""
        from ratings.kernels.fit_ref import crowd_assemble, laplacian

        aa = self.a * self.a if weight is None else weight * self.a * self.a
        if not self.b.size:
            return laplacian(self.n_params, self.ii, self.jj, aa)
        nj = self.n_params - self.n_models
        ab, bb = self.a * self.b, self.b * self.b
        if weight is not None:
            ab, bb = weight * ab, weight * bb
        return crowd_assemble(self.n_models, nj, self.ii, self.jj, self.judge, aa, ab,
                              bb)  # fmt: skip

    def times(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        """``H_g v_g`` for every cluster g at once: ``v`` and the result are (G x n_params)."""
        if self.x is not None:
            return self._covariate_pass("style_cluster_times", (), v)
        from ratings.kernels import inference_ref

        k = kernels(self.ii.size)
        if k is inference_ref and not self.b.size:  # the twin, block by block
            return inference_ref.times_by_blocks(self.ii, self.jj, self.cluster, self.a, v,
                                                 self.blocks)  # fmt: skip
        return k.cluster_times(
            self.ii, self.jj, self.judge, self.cluster, self.a, self.b, self.n_models,
            np.ascontiguousarray(v))  # fmt: skip

    def quadratic(self, n: NDArray[np.float64]) -> NDArray[np.float64]:
        """``n_c^T H_g n_c`` for every cluster g and column c of ``n`` (n_params x C) -> (G x C).

        The twin's work is (distinct designs) x C cells, about :data:`CELLS_PER_VERDICT` of
        them costing what one verdict costs the fit's twins (for a few columns, such as the
        judges' etas, it passes over the rows instead); past numba's start-up (a 1,000
        model board: a million designs x 1,000 contrasts, 5 s in the twin, 0.15 s compiled)
        the kernel is loaded even in a fresh process.
        """
        if self.x is not None:
            return self._covariate_pass("style_cluster_quadratic", (self.n_clusters,), n)
        return kernels(self.quadratic_size(n.shape[1])).cluster_quadratic(
            self.n_clusters, self.ii, self.jj, self.judge, self.cluster, self.a, self.b,
            self.n_models, np.ascontiguousarray(n))

    def quadratic_size(self, n_columns: int) -> int:
        """The size (in verdicts' worth of work) by which :meth:`quadratic` of ``n_columns``
        columns picks its kernel (:func:`kernels`)."""
        judges = max(self.n_params - self.n_models, 1)
        designs = min(self.ii.size, self.n_models * self.n_models * judges)
        return designs * n_columns // CELLS_PER_VERDICT


def _designs_by_key(key, row, a, b, space) -> tuple[NDArray[np.int64], NDArray[np.float64],
                                                    NDArray[np.int64]]:  # fmt: skip
    """One row of each design, the designs' numbers, and each key's design, the designs sorted
    by (``key``, ``a``, ``b``): ``key`` numbers (pair, judge) below ``space``, ``row`` is each
    key's row, ``b`` None for no judge column. Counted in a table while the keys fit one and
    every key has one ``a`` (and ``b``), as one verdict per prompt gives; else sorted."""
    if key.size and space <= max(_COUNT_SPACE, 8 * key.size):
        table = np.bincount(key, minlength=space)
        rep = np.empty(space, dtype=np.int64)
        rep[key] = np.arange(key.size)  # some design of each key
        alike = a[rep[key]] == a
        if b is not None:
            alike &= b[rep[key]] == b
        if alike.all():
            keys = np.flatnonzero(table)
            design = row[rep[keys]]
            rep[keys] = np.arange(keys.size)  # now each key's design
            return design, table[keys].astype(np.float64), rep[key]
    order = np.lexsort((a, key) if b is None else (b, a, key))
    key, a = key[order], a[order]
    new = np.ones(order.size, dtype=bool)
    new[1:] = (key[1:] != key[:-1]) | (a[1:] != a[:-1])
    if b is not None:
        b = b[order]
        new[1:] |= b[1:] != b[:-1]
    head = np.flatnonzero(new)
    of = np.empty(order.size, dtype=np.int64)
    of[order] = np.cumsum(new) - 1
    return row[order[head]], np.diff(np.append(head, order.size)).astype(np.float64), of


def bt_rows(theta: NDArray[np.float64], data) -> WorkingRows:
    """Working rows of a Bradley-Terry fit: ``a = sqrt(n p q)``."""
    m = theta.size
    if data.ii.size > m * m:  # p q depends on the pair only: one table, one gather per row
        pq = _pq(theta[:, None] - theta[None, :]).ravel()[data.ii * m + data.jj]
    else:
        pq = _pq(theta[data.ii] - theta[data.jj])
    return bt_working(data, np.sqrt((data.wi + data.wj + data.tt) * pq))


def bt_rows_and_scores(theta: NDArray[np.float64],
                       data) -> tuple[WorkingRows, NDArray[np.float64]]:  # fmt: skip
    """:func:`bt_rows` and each row's score ``wi + tt / 2 - n p`` (the NumPy twin
    :func:`ratings.kernels.fit_ref.bt_scores`'s values) from one pass
    (:func:`ratings.kernels.inference_ref.bt_row_weights`)."""
    from ratings.kernels.inference_ref import bt_row_weights

    a, score = bt_row_weights(theta, data.ii, data.jj, data.wi, data.wj, data.tt)
    return bt_working(data, a), score


def bt_working(data, a: NDArray[np.float64]) -> WorkingRows:
    """Bradley-Terry's working rows of ``data`` with weights ``a`` (no judge column)."""
    return WorkingRows(ii=data.ii, jj=data.jj, judge=data.judge, cluster=data.cluster, a=a,
                       b=np.zeros(0), n_clusters=data.n_clusters, n_params=data.n_models,
                       n_models=data.n_models)  # fmt: skip


def _pq(d: NDArray[np.float64]) -> NDArray[np.float64]:
    """sigma(d) sigma(-d) = e / (1 + e)^2 with e = exp(-|d|): no cancellation, one pass fewer
    than from sigma(d)."""
    e = np.exp(-np.abs(d))
    e /= (1.0 + e) ** 2
    return e


def crowd_weights(d: NDArray[np.float64], e: NDArray[np.float64],
                  n: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Crowd-BT's working weights of rows with linear predictor ``d``, judge quality ``e`` and
    ``n`` decisive verdicts: ``a = sqrt(n / (p q)) dp/dd`` and ``b = sqrt(n / (p q)) dp/deta``
    (0 where not finite), p = e sigma(d) + (1 - e) sigma(-d), for plain Crowd-BT
    and the design with covariates alike (:meth:`ratings.models.covariates._Design.working`):
    the kernel :func:`ratings.kernels.fit.crowd_weights` (one pass) or its NumPy twin, by the
    rows' number."""
    from ratings.kernels.engine import kernels as fit_kernels

    return fit_kernels("auto", d.size).crowd_weights(*(np.ascontiguousarray(v, dtype=np.float64)
                                                       for v in (d, e, n)))
