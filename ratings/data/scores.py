"""Soft scores counted (:mod:`ratings.data.soft`): which scores are fractional and the sums a
counts table keeps of them, shared by the readers that count where the log lies
(:mod:`ratings.data.sql`, :mod:`ratings.data.dask`) and the soft fit."""

from __future__ import annotations

import numpy as np

__all__ = ["SOFT_COLUMNS", "graded_sums", "is_graded"]

#: A soft counts table's columns for the fractional scores: their number, and the sums of the
#: scores and of their squares (each row's, beside ``wins_a``, ``wins_b`` and ``ties``).
SOFT_COLUMNS = ("graded", "graded_score", "graded_square")


def is_graded(y: np.ndarray) -> np.ndarray:
    """Scores other than 0, 1/2 and 1."""
    return (y != 0.0) & (y != 0.5) & (y != 1.0)


def graded_sums(y: np.ndarray, n: np.ndarray | None = None) -> np.ndarray:
    """The :data:`SOFT_COLUMNS` of rows of score ``y`` (``n`` verdicts each, default 1): zeros
    where ``y`` is 0, 1/2 or 1 (those are counted as wins, losses and ties). Shape (R, 3)."""
    y = np.asarray(y, dtype=np.float64)
    n = np.ones(y.size) if n is None else np.asarray(n, dtype=np.float64)
    g = np.where(is_graded(y), n, 0.0)
    return np.column_stack([g, g * y, g * y * y])
