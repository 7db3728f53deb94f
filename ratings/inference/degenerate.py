"""Robust intervals where the sandwich collapses: the model-based variance for those contrasts.

A sandwich estimates a contrast's variance from the residuals of its verdicts. Where all of them
are zero (a board of ties only; a model that only ever tied one opponent) it reports zero
variance although the model-based variance says the contrast is barely known
(:func:`ratings.inference.covariance.collapsed_contrasts`). :func:`fill_collapsed` gives those
contrasts their model-based variance (:func:`ratings.inference.covariance.model_based_supplement`:
``cov + F.T @ F``), keeps the robust variance of every contrast without a component along them,
warns with :class:`~ratings.core.errors.DataWarning` naming the pairs, and returns the factor
``F`` so that the result can flag the intervals that use it. With CR2 inference the supplement
is a known variance term (``ClusterInference.extra``): a contrast with no robust variance gets
the normal quantile, one with a share of each the Welch-Satterthwaite df.

The bootstrap has no such repair (its intervals are percentiles of draws that do not vary), so
it is refused there (:class:`~ratings.core.errors.DegenerateBoardError`).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.errors import DataWarning, DegenerateBoardError, option
from ratings.inference.builder import with_known
from ratings.inference.covariance import collapsed_contrasts, model_based_supplement

__all__ = ["fill_collapsed", "model_based_flags"]

#: A contrast's interval is flagged as model-based when the supplement is more than this share
#: of its variance.
FLAG_SHARE = 1e-6


def fill_collapsed(est, models: pd.Index, ci: str, *, stacklevel: int = 2) -> tuple:
    """``(cov, inference, factor)`` of a fit's estimate ``est`` (a
    :class:`ratings.models.estimate.Estimate`: ``cov``, ``draws``, ``model_cov``, the
    model-based covariance of the strengths or a function giving it, and ``inference``) with
    the model-based variance where the robust one collapsed; ``factor`` is None (and ``cov``,
    ``inference`` unchanged) when nothing collapsed.

    Raises
    ------
    DegenerateBoardError
        Bootstrap draws that do not vary on some contrasts (``pairs`` names them).
    """
    draws, inference, cov = est.draws, est.inference, est.cov
    robust = cov if draws is None else np.atleast_2d(np.cov(draws, rowvar=False))
    if not np.isfinite(robust).all():  # open intervals (Crowd-BT's unidentified scale)
        return cov, inference, None
    model_cov = est.model_cov
    if callable(model_cov):  # Crowd-BT: the model-based covariance costs one more inversion
        sd = np.sort(np.sqrt(np.clip(np.diag(robust), 0.0, None)))  # the reference's is 0
        # Structural collapses (zero residuals) leave two robust SDs equal to rounding.
        if sd[-1] > 0 and np.diff(sd).min(initial=np.inf) > 1e-6 * sd[-1]:
            return cov, inference, None
        model_cov = model_cov()
    pairs = collapsed_contrasts(robust, model_cov)
    if len(pairs) == 0:
        return cov, inference, None
    named = [(str(models[i]), str(models[j])) for i, j in pairs]
    shown = ", ".join(f"{a!r} - {b!r}" for a, b in named[:5]) + (", ..." if len(named) > 5
                                                                 else "")  # fmt: skip
    why = ("every residual of their verdicts is zero (e.g. a board of ties only, or a model "
           "that only ever tied one opponent)")  # fmt: skip
    if draws is not None:
        raise DegenerateBoardError(
            f"The {ci} interval of {len(named)} rating difference(s) would have zero width "
            f"({shown}): the bootstrap draws do not vary there while the model-based variance "
            f"is not zero, because {why}. Such an interval would claim certainty the verdicts "
            f"do not give. Use model-based intervals ({option('ci', 'model')}) or the sandwich "
            "(which then uses the model-based variance there), or add decisive verdicts for "
            "these models.", pairs=named)  # fmt: skip
    factor = model_based_supplement(robust, model_cov)
    if factor is None:  # a collapse below the pairs' tolerance only: nothing to fill
        return cov, inference, None
    cov = cov + factor.T @ factor
    if inference is not None:
        inference = with_known(inference, factor)
    warnings.warn(
        f"The sandwich variance of {len(named)} rating difference(s) is zero ({shown}) while "
        f"the model-based variance is not, because {why}. Their intervals use the model-based "
        "variance (column `model_based` of the tables); the others keep the sandwich.",
        DataWarning, stacklevel=stacklevel)  # fmt: skip
    return cov, inference, factor


def model_based_flags(factor: NDArray[np.float64], cov: NDArray[np.float64],
                      contrasts: NDArray[np.float64]) -> NDArray[np.bool_]:  # fmt: skip
    """Contrasts (rows of ``contrasts``) whose variance under ``cov`` is more than
    :data:`FLAG_SHARE` the model-based supplement ``factor.T @ factor``."""
    c = np.atleast_2d(contrasts)
    extra = ((c @ factor.T) ** 2).sum(axis=1)
    total = np.einsum("ij,jk,ik->i", c, cov, c)
    return extra > FLAG_SHARE * np.maximum(total, 0.0)
