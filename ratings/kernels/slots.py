"""Numba kernels over verdicts that keep their A/B slots (the judge audit's passes).

Private; reached through :mod:`ratings.kernels.fit` (the module
:func:`ratings.kernels.engine.kernels`
hands out), with twins of the same names and signatures in :mod:`ratings.kernels.fit_ref`. Both
read the verdicts (or counts rows) once, in order:

* :func:`slot_collapse` sums them into unique ``(judge, a, b)`` rows, ``a`` the model in slot
  A, through a dense table of K M^2 row numbers, and gives each input its row;
* :func:`slot_outcomes` turns winner codes and render failures into wins of A, wins of B and
  ties per verdict, and :func:`slot_missing` counts the verdicts with a code missing;
* :func:`slot_order` puts the verdicts' numbers in cluster order (a counting sort);
* :func:`slot_cluster_scores` adds each input's score into the G x P matrix of per-cluster
  scores over x = (s, beta, gamma, eta) of :mod:`ratings.models.judge_effects` (a matrix small
  enough
  to stay in cache while the inputs stream by).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["slot_cluster_scores", "slot_collapse", "slot_missing", "slot_order", "slot_outcomes"]

_JIT = {"cache": True, "nogil": True}


@njit(**_JIT)
def slot_collapse(judge, a, b, wins_a, wins_b, ties, n_judges, n_models):
    """Unique (judge, a, b) rows, sorted, with summed counts, and each input's row ->
    (judge, a, b int64[R], wins_a, wins_b, ties float64[R], row int64[N])."""
    n = a.shape[0]
    mm = n_models * n_models
    table = np.full(n_judges * mm, -1, dtype=np.int64)
    for v in range(n):
        table[judge[v] * mm + a[v] * n_models + b[v]] = 0
    r = 0
    for s in range(table.shape[0]):  # rows numbered in key order
        if table[s] == 0:
            table[s] = r
            r += 1
    out_k = np.empty(r, dtype=np.int64)
    out_a = np.empty(r, dtype=np.int64)
    out_b = np.empty(r, dtype=np.int64)
    out_wa, out_wb, out_tt = np.zeros(r), np.zeros(r), np.zeros(r)
    row = np.empty(n, dtype=np.int64)
    for v in range(n):
        s = judge[v] * mm + a[v] * n_models + b[v]
        q = table[s]
        row[v] = q
        out_k[q] = judge[v]
        out_a[q] = a[v]
        out_b[q] = b[v]
        out_wa[q] += wins_a[v]
        out_wb[q] += wins_b[v]
        out_tt[q] += ties[v]
    return out_k, out_a, out_b, out_wa, out_wb, out_tt, row


@njit(**_JIT)
def slot_cluster_scores(n_clusters, n_models, n_judges, cluster, judge, a, b, d_own, score,
                        score_eta):  # fmt: skip
    """G x (M + 3K) summed scores: input r adds ``score`` at s_a, minus at s_b, at beta_k,
    times ``d_own`` at gamma_k, and ``score_eta`` at eta_k (empty: Bradley-Terry)."""
    p = n_models + 3 * n_judges
    out = np.zeros((n_clusters, p))
    crowd = score_eta.shape[0] > 0
    for r in range(a.shape[0]):
        c, k, s = cluster[r], judge[r], score[r]
        out[c, a[r]] += s
        out[c, b[r]] -= s
        out[c, n_models + k] += s
        out[c, n_models + n_judges + k] += s * d_own[r]
        if crowd:
            out[c, n_models + 2 * n_judges + k] += score_eta[r]
    return out


@njit(**_JIT)
def slot_outcomes(winner, failed_a, failed_b, wins_a, wins_b, ties, forfeit):
    """Wins of A, wins of B and ties per verdict from winner codes (0 A, 1 B, 2 tie), with
    render forfeits (the submission that rendered wins, two failures tie), written into
    ``wins_a``, ``wins_b``, ``ties`` (float64[N]) and ``forfeit`` (bool[N]). The outputs come
    from the caller: NumPy asks for huge pages for large arrays, numba's own allocations fault
    every 4 KB page (three fresh 8 MB outputs took 10 ms here, 1 ms written into NumPy's; the
    command line instead keeps freed blocks for reuse, :mod:`ratings.cli.allocator`)."""
    for v in range(winner.shape[0]):
        w = winner[v]
        f = failed_a[v] or failed_b[v]
        if f:
            w = 2 if failed_a[v] and failed_b[v] else (1 if failed_a[v] else 0)
        forfeit[v] = f
        wins_a[v] = 1.0 if w == 0 else 0.0
        wins_b[v] = 1.0 if w == 1 else 0.0
        ties[v] = 1.0 if w == 2 else 0.0


@njit(**_JIT)
def slot_missing(a, b, judge, cluster):
    """How many verdicts have a code below 0 in any of the four."""
    out = 0
    for v in range(a.shape[0]):
        out += (a[v] < 0) | (b[v] < 0) | (judge[v] < 0) | (cluster[v] < 0)
    return out


@njit(**_JIT)
def slot_order(row_cluster, n_clusters, order, rank):
    # a counting sort of the row numbers alone (one array scattered, not every column): row r
    # goes to place rank[r], place t holds row order[t] (both from the caller, see
    # slot_outcomes); returns False, both untouched, when the rows are in cluster order already
    n = row_cluster.shape[0]
    at = np.zeros(n_clusters + 1, dtype=np.int64)
    ordered = True
    for r in range(n):
        at[row_cluster[r] + 1] += 1
        ordered = ordered and (r == 0 or row_cluster[r] >= row_cluster[r - 1])
    if ordered:
        return False
    for c in range(n_clusters):
        at[c + 1] += at[c]
    for r in range(n):
        c = row_cluster[r]
        t = at[c]
        order[t] = r
        rank[r] = t
        at[c] = t + 1
    return True
