"""Bradley-Terry maximum likelihood over aggregated comparisons (Newton with line search)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, partial

import numpy as np
from numpy.typing import NDArray

from ratings.core.arrays import run_starts, run_sums
from ratings.core.threads import CONCURRENT_ROWS, row_blocks, run, workers
from ratings.data.comparisons import Comparisons
from ratings.kernels.engine import Engine
from ratings.models.design import pair_objective
from ratings.models.families import BRADLEY_TERRY
from ratings.models.newton import newton

NONE, NO_SLOT = np.zeros(0), np.zeros(0, dtype=np.int64)
#: Pairs per piece of a pass over the pair table: a piece's dozen arrays fit a core's cache.
CHUNK = 16384

__all__ = ["NONE", "NO_SLOT", "BTFit", "PairTable", "fit_bt", "jacobi_step", "penalised_terms",
           "start"]


@dataclass(frozen=True, eq=False)
class BTFit:
    """Raw Bradley-Terry fit: log-strengths with ``theta[ref] == 0``.

    ``hessian`` is the (M, M) Hessian of the penalised negative log-likelihood at ``theta``;
    ``table`` the fit's :class:`PairTable` (the HC0 meat reads it), None for Firth's fit.
    """

    theta: NDArray[np.float64]
    ref: int
    hessian: NDArray[np.float64]
    nll: float
    converged: bool
    n_iter: int
    max_grad: float
    penalty: float
    table: PairTable | None = field(default=None, repr=False)


def _with_penalty(theta, nll, grad, hess, penalty: float):
    """The ridge ``penalty / 2 * sum_k (theta_k - mean(theta))^2`` added to the terms."""
    if penalty > 0.0:
        m = theta.size
        c = theta - theta.mean()
        nll += 0.5 * penalty * float(c @ c)
        grad = grad + penalty * c
        hess = hess + penalty * (np.eye(m) - 1.0 / m)
    return nll, grad, hess


def penalised_terms(theta, data: Comparisons, penalty: float, k):
    """Negative log-likelihood, gradient and Hessian (M x M), with the optional ridge term.

    The ridge ``penalty / 2 * sum_k (theta_k - mean(theta))^2`` shrinks strengths towards their
    mean and does not depend on which model is the reference.
    """
    nll, grad, hess = pair_objective(BRADLEY_TERRY, k, theta, NONE, data, slot=NO_SLOT)
    return _with_penalty(theta, nll, grad, hess, penalty)


class PairTable:
    """Bradley-Terry's sufficient statistics: one entry per pair of models that met, ``i < j``,
    with ``i``'s score (wins plus half the ties) and the number of verdicts, summed over judges.

    The likelihood depends on the rows only through these totals, so the fit's every step reads
    them: the negative log-likelihood, its gradient and Hessian (:meth:`terms`) in a few
    vectorised passes over the pairs, with the Hessian's off-diagonal cells written in place
    (each pair owns two cells) and its diagonal from the rows' sums, instead of a scatter and a
    transpose. Pairs are sorted by ``(i, j)``, so sums over each pair's first model are sums
    over runs of pairs (:attr:`_runs`), not a scatter. Each pass keeps its point's win
    probabilities, which the meat at that point (:meth:`meat`, the HC0 sandwich's, at the
    estimate Newton evaluated last) reads instead of computing them again.
    """

    def __init__(self, rows: Comparisons) -> None:
        m = rows.n_models
        i, j = np.asarray(rows.ii, dtype=np.intp), np.asarray(rows.jj, dtype=np.intp)
        wi, wj, tt = rows.wi, rows.wj, rows.tt
        swap = i > j
        if swap.any():
            i, j, wi, wj = (np.where(swap, j, i), np.where(swap, i, j),
                            np.where(swap, wj, wi), np.where(swap, wi, wj))  # fmt: skip
        key = i * m + j
        if key.size > 1 and not bool(np.all(key[1:] > key[:-1])):  # unsorted, or several judges
            key, (wi, wj, tt) = _sorted_pairs(key, m * m, (wi, wj, tt))
            i, j = np.divmod(key, m)
        self.m, self.i, self.j, self.wi, self.wj, self.tt = m, i, j, wi, wj, tt
        self.yi = wi + 0.5 * tt
        self.n = self.yi + (wj + 0.5 * tt)
        self.cells, self.mirror = key, j * m + i  # flat indices of (i, j) and (j, i)
        self._last: tuple[NDArray, NDArray] | None = None  # (theta, P(i beats j)) of a pass

    @cached_property
    def _runs(self) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        """The first models of the pairs, each once, and where each one's run of pairs starts."""
        return run_starts(self.i)

    def _by_first(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        """Per model, the sum of ``values`` over the pairs where it is ``i``."""
        return run_sums(self._runs, values, self.m)

    @cached_property
    def _blocks(self) -> list[tuple[int, int]]:
        """Ranges of pairs filled side by side (one range below :data:`CONCURRENT_ROWS`)."""
        size = self.i.size
        return row_blocks(size, workers() if size >= CONCURRENT_ROWS else 1)

    def _fill(self, theta, out, lo: int, hi: int) -> None:
        """Pairs ``lo:hi`` of ``out`` (d, log-likelihood terms or None, score, information,
        P(i beats j), flat Hessian or None): each pair's entries depend on that pair alone, so
        the ranges of :attr:`_blocks` fill them side by side with the values a single pass
        gives, each in pieces of :data:`CHUNK` pairs (their temporaries stay in cache)."""
        for at in range(lo, hi, CHUNK):
            self._fill_piece(theta, out, at, min(at + CHUNK, hi))

    def _fill_piece(self, theta, out, lo: int, hi: int) -> None:
        d, terms, score, info, p = (a if a is None else a[lo:hi] for a in out[:5])
        hess = out[5]
        n = self.n[lo:hi]
        np.take(theta, self.i[lo:hi], out=d)
        e = np.take(theta, self.j[lo:hi], out=info)
        d -= e
        np.abs(d, out=e)  # e = exp(-|d|), sigma(|d|) = 1 / (1 + e), sigma(-|d|) = e / (1 + e)
        np.negative(e, out=e)
        np.exp(e, out=e)
        big = np.add(e, 1.0, out=p)
        np.reciprocal(big, out=big)
        if terms is not None:  # -log sigma(d) + d = log1p(e) + max(d, 0)
            np.log1p(e, out=terms)
            terms += np.maximum(d, 0.0, out=score)
        e *= big  # sigma(-|d|)
        e *= big
        np.multiply(e, n, out=info)  # n p (1 - p)
        big -= 0.5  # sigma(d) = 1/2 + sign(d) (sigma(|d|) - 1/2): exact, no branch
        np.copysign(big, d, out=big)
        big += 0.5
        np.multiply(n, big, out=score)
        np.subtract(self.yi[lo:hi], score, out=score)  # i's score minus its expectation
        if hess is not None:  # the pair's two off-diagonal cells
            cell = np.negative(info)
            hess[self.cells[lo:hi]] = cell
            hess[self.mirror[lo:hi]] = cell

    def _pass(self, theta, *, terms: bool, hess: bool):
        size = self.i.size
        out = (np.empty(size), np.empty(size) if terms else None, np.empty(size),
               np.empty(size), np.empty(size), np.zeros(self.m * self.m) if hess else None)
        run([partial(self._fill, theta, out, lo, hi) for lo, hi in self._blocks])
        self._last = (np.array(theta, dtype=np.float64), out[4])
        return out

    def score_info(self, theta: NDArray[np.float64]) -> tuple[NDArray, NDArray]:
        """Per pair: i's score minus its expectation, and the information n p (1 - p)."""
        _, _, score, info, _, _ = self._pass(theta, terms=False, hess=False)
        return score, info

    def meat(self, theta: NDArray[np.float64]) -> NDArray[np.float64]:
        """The per-verdict (HC0) meat at ``theta``: the Laplacian (M x M) of each pair's summed
        squared verdict scores, wi (1 - p)^2 + wj p^2 + ties (1/2 - p)^2 (p read from the last
        pass when it was at ``theta``, as Newton's last evaluation is at the estimate)."""
        m, last = self.m, self._last
        p = last[1] if last is not None and np.array_equal(last[0], theta) else \
            self._pass(theta, terms=False, hess=False)[4]
        out = np.zeros(m * m)
        run([partial(self._fill_meat, p, out, lo, hi) for lo, hi in self._blocks])
        out = out.reshape(m, m)
        np.negative(out.sum(axis=1), out=out.reshape(-1)[:: m + 1])
        return out

    def _fill_meat(self, p, out, lo: int, hi: int) -> None:
        """Pairs ``lo:hi``'s two off-diagonal cells of the flat meat ``out`` (their weights
        negated), ``p`` the pairs' P(i beats j) (in pieces, as :meth:`_fill`)."""
        for at in range(lo, hi, CHUNK):
            self._fill_meat_piece(p, out, at, min(at + CHUNK, hi))

    def _fill_meat_piece(self, p, out, lo: int, hi: int) -> None:
        p = p[lo:hi]
        q = np.subtract(1.0, p)
        q *= q
        w = np.multiply(self.wi[lo:hi], q)
        np.multiply(p, p, out=q)
        q *= self.wj[lo:hi]
        w += q
        np.subtract(0.5, p, out=q)
        q *= q
        q *= self.tt[lo:hi]
        w += q
        np.negative(w, out=w)
        out[self.cells[lo:hi]] = w
        out[self.mirror[lo:hi]] = w

    def win_matrix(self) -> NDArray[np.bool_]:
        """The win graph's adjacency (M x M booleans, ``[i, j]``: i won or tied against j), each
        pair's two cells written in place (as
        :func:`ratings.models.existence.win_matrix` writes a sorted table's rows)."""
        m = self.m
        adj = np.zeros(m * m, dtype=bool)
        adj[self.cells] = self.wi + self.tt > 0
        adj[self.mirror] = self.wj + self.tt > 0
        return adj.reshape(m, m)

    def terms(self, theta: NDArray[np.float64]) -> tuple[float, NDArray, NDArray]:
        """Negative log-likelihood, its gradient and its Hessian (M x M) at ``theta``."""
        m = self.m
        d, terms, score, _, _, hess = self._pass(theta, terms=True, hess=True)
        # yi (-log sigma(d)) + yj (-log sigma(-d)) = n (log1p(e) + max(d, 0)) - yi d
        nll = float(self.n @ terms - self.yi @ d)
        grad = np.bincount(self.j, score, m)
        grad -= self._by_first(score)
        hess = hess.reshape(m, m)
        np.negative(hess.sum(axis=1), out=hess.reshape(-1)[:: m + 1])
        return nll, grad, hess


def _sorted_pairs(key: NDArray[np.intp], size: int,
                  values: tuple[NDArray, ...]) -> tuple[NDArray, list[NDArray]]:
    """The distinct ``key`` (each below ``size``) in increasing order, and ``values`` summed
    per key (in the rows' order, as ``np.bincount`` sums), by marks in a table of ``size``
    cells rather than a sort: the table is the size of the Hessian the fit builds at every
    step (1,000 models' 432k pairs, as hashed aggregation hands them over: 8 against 22 ms
    for ``np.unique``). Keys each once are put in place by a gather, not summed."""
    seen = np.zeros(size, dtype=bool)
    seen[key] = True
    out = np.flatnonzero(seen)
    if out.size < key.size:  # repeated pairs (several judges): sums
        return out, [np.bincount(key, w, size)[out] for w in values]
    slot = np.empty(size, dtype=np.intp)
    slot[key] = np.arange(key.size)
    order = slot[out]
    return out, [w[order] for w in values]


def start(data: Comparisons) -> NDArray[np.float64]:
    """A starting point for Newton: each model's log ratio of (half-smoothed) wins to losses,
    ties half each (the estimate itself when all of a model's opponents are as strong as the
    average). On the benchmark boards it saves 2-3 of Newton's 7-8 steps from zero, each a
    pass over the rows and an M x M Cholesky factorisation."""
    counts = data.model_counts()  # the counts every result reports: computed once
    wins, losses, ties = (counts[c].to_numpy(dtype=np.float64) for c in ("wins", "losses", "ties"))
    return np.log((wins + 0.5 * ties + 0.5) / (losses + 0.5 * ties + 0.5))


def jacobi_step(theta: NDArray[np.float64], table: PairTable) -> NDArray[np.float64]:
    """``theta`` moved along the Jacobi direction (each strength's own Newton step, the
    Hessian's diagonal D: s = D^-1 g) by the step length that minimises the local quadratic
    model along it, (g . s) / (s' H s), H's form summed over the pairs (no M x M matrix).

    One pass over the pairs; on the benchmark boards it takes the log-ratio start most of the
    way to the estimate (the error falls about fourfold), saving one of Newton's steps (a pass
    and an M x M factorisation). The line minimisation keeps the step short where the plain
    Jacobi step overshoots (a board of models each against one baseline: the baseline and its
    opponents would each correct the same difference)."""
    m, i, j = table.m, table.i, table.j
    score, info = table.score_info(theta)
    diag = np.bincount(j, info, m)
    diag += table._by_first(info)
    grad = table._by_first(score)  # minus the nll's gradient
    grad -= np.bincount(j, score, m)
    s = np.divide(grad, diag, out=np.zeros(m), where=diag > 0.0)
    ds = s[i] - s[j]
    curvature = float(info @ (ds * ds))
    if not curvature > 0.0:
        return theta
    return theta + min(float(grad @ s) / curvature, 1.0) * s


def fit_bt(
    data: Comparisons,
    *,
    ref: int = 0,
    penalty: float = 0.0,
    tol: float = 1e-10,
    max_iter: int = 100,
    engine: Engine = "auto",
    theta0: NDArray[np.float64] | None = None,
    table: PairTable | None = None,
) -> BTFit:
    """Fit Bradley-Terry log-strengths by (penalised) maximum likelihood.

    P(i beats j) = sigma(theta_i - theta_j); a tie is one observation with outcome 1/2. The
    reference model ``ref`` is pinned at 0 and removed from the optimisation. Newton's method with
    backtracking converges quadratically from :func:`start` moved by :func:`jacobi_step` (or
    ``theta0``); it stops when the largest step, or the next one as the quadratic rate predicts
    it, is below ``tol`` (1e-10 by default, so repeated fits agree far below 1e-8).

    Callers must first check existence (:func:`ratings.models.existence.check_identifiable`) unless
    ``penalty > 0``; ``table``: the :class:`PairTable` of ``data`` when the caller built it
    (for that check, :meth:`PairTable.win_matrix`).
    """
    free = np.delete(np.arange(data.n_models), ref)
    rows = data.collapsed(engine=engine)  # same likelihood, one row per (judge, i, j)
    table = PairTable(rows) if table is None else table
    x0 = jacobi_step(start(rows), table) if theta0 is None else \
        np.asarray(theta0, dtype=np.float64)
    x0 = x0 - x0[ref]
    res = newton(
        lambda th: _with_penalty(th, *table.terms(th), penalty), x0, free,
        tol=tol, max_iter=max_iter, what="Bradley-Terry",
    )  # fmt: skip
    return BTFit(theta=res.x, ref=ref, hessian=res.hessian, nll=res.f, converged=res.converged,
                 n_iter=res.n_iter, max_grad=res.max_grad, penalty=penalty, table=table)
