"""What the estimators share: refits on bootstrap resamples that skip resamples without an
estimate."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from ratings.core.errors import NonIdentifiableError
from ratings.data.comparisons import Comparisons
from ratings.inference.covariance import bootstrap_draws
from ratings.models.existence import check_identifiable

__all__ = ["bootstrap_refits"]


def bootstrap_refits(
    data: Comparisons,
    refit: Callable[[Comparisons], NDArray[np.float64]],
    *,
    ci: str,
    clustered: bool,
    n_boot: int,
    seed: int,
    always_finite: bool = False,
) -> NDArray[np.float64] | None:
    """The bootstrap draws of ``refit`` (:func:`ratings.inference.covariance.bootstrap_draws`)
    when ``ci == "bootstrap"``, else None. A resample whose win graph is not strongly connected
    (checked unless ``always_finite``, as for Firth's fit) or whose refit finds no finite
    estimate is skipped and counted."""
    if ci != "bootstrap":
        return None

    def safe(sample: Comparisons):
        try:
            if not always_finite:
                check_identifiable(sample.collapsed())
            return refit(sample)
        except NonIdentifiableError:  # no finite estimate in this resample: skipped, counted
            return None

    return bootstrap_draws(data, safe, n_boot=n_boot, seed=seed, clustered=clustered)
