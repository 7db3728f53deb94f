"""Which CR2 path a board takes and which df path its contrasts take, and why: the costs the
inference compares, spelled out (``benchmarks_perf/bench_shapes.py --phases`` prints them)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["cr2_plan", "df_plan"]


def cr2_plan(sizes: NDArray[np.int64], n_free: int) -> tuple[str, str]:
    """The CR2 path clusters of ``sizes`` rows take and why (the costs
    :func:`ratings.inference.small.use_small_path` and
    :func:`ratings.inference.cluster.dense_path` compare): ``"sparse"``, ``"exact"`` (dense,
    one eigen-decomposition per cluster) or ``"series"``."""
    from ratings.inference import cluster, small

    s, p, g = sizes.astype(np.float64), float(n_free), float(sizes.size)
    exact = float(np.sum(s * p * np.minimum(s, p))) + g * p * p * min(g, p)
    series = small.SERIES_COST_TERMS * (float(s.sum()) * p + g * p * p)
    sparse = float(np.sum(s**3))
    dense = "exact" if exact <= cluster.EXACT_BUDGET else "series"
    what = (f"{sizes.size:,} clusters of {s.mean() if s.size else 0:.1f} rows on average, "
            f"{n_free} free: sparse ~{sparse:.2g}, dense exact ~{exact:.2g}, series "
            f"~{series:.2g} flops")  # fmt: skip
    path = "sparse" if small.use_small_path(sizes, n_free) else dense
    return path, what


def df_plan(inference, n_contrasts: int, pairs: bool = False) -> tuple[str, str]:
    """The df path of ``n_contrasts`` contrasts (``pairs``: every pair's) of a
    :class:`~ratings.inference.cluster.ClusterInference` and why."""
    plan = getattr(inference, "df_plan", None)
    if plan is not None:  # the sparse path's own
        return plan(n_contrasts, pairs)
    from ratings.inference import cluster

    g, p = inference.n_clusters, inference.free.size
    if not inference.exact:
        return ("one-direction", "series path: each cluster's share of omega from the rows, "
                "the pairs' summed from the ratings' (streamed)")  # fmt: skip
    cost = n_contrasts * g * p * min(g, p)
    if not pairs or cost <= cluster.EXACT_BUDGET:
        return "exact", (f"dense path: the basis of {g:,} clusters' eigenpairs, "
                         f"{n_contrasts:,} contrasts")  # fmt: skip
    return "one-direction", (f"dense path, pairs' ~{cost:.2g} flops past "
                             f"{cluster.EXACT_BUDGET:.2g}: each pair's exact omega")
