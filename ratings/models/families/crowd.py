"""Crowd-BT: judge k reports the true order of a decisive verdict with probability eta_k,
P(i beats j | k) = eta_k sigma(d) + (1 - eta_k) sigma(-d), eta_k in [1/2, 1] (Chen et al.
2013); ties are outside its likelihood (:mod:`ratings.models.crowd.likelihood` says why)."""

from __future__ import annotations

from dataclasses import dataclass

from ratings.models.families.base import RowTerms

__all__ = ["CROWD_BT", "CrowdBT"]


@dataclass(frozen=True)
class CrowdBT:
    """The Crowd-BT family: one eta per judge (the slot of a row is its judge; kernel
    ``crowd_row_terms``)."""

    name: str = "crowd-bt"
    label: str = "Crowd-BT"
    ties_in_likelihood: bool = False
    start: float = 0.85
    lower: float = 0.5
    upper: float = 1.0

    def n_extra(self, n_judges: int) -> int:
        return n_judges

    def row_terms(self, k, theta, extra, ii, jj, slot, wi, wj, tt, with_meat) -> RowTerms:
        return RowTerms(*k.crowd_row_terms(theta, extra, ii, jj, slot, wi, wj, tt, with_meat))


CROWD_BT = CrowdBT()
