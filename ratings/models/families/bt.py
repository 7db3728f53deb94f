"""Bradley-Terry: P(i beats j) = sigma(d), a tie one observation with outcome 1/2
(Bradley & Terry 1952). No parameters of its own."""

from __future__ import annotations

from dataclasses import dataclass

from ratings.models.families.base import RowTerms, no_extra

__all__ = ["BRADLEY_TERRY", "BradleyTerry"]


@dataclass(frozen=True)
class BradleyTerry:
    """The Bradley-Terry family (kernel ``bt_row_terms``)."""

    name: str = "bt"
    label: str = "Bradley-Terry"
    ties_in_likelihood: bool = True
    start: float = 0.0
    lower: float = 0.0
    upper: float = 0.0

    def n_extra(self, n_judges: int) -> int:
        return 0

    def row_terms(self, k, theta, extra, ii, jj, slot, wi, wj, tt, with_meat) -> RowTerms:
        return no_extra(*k.bt_row_terms(theta, ii, jj, wi, wj, tt, with_meat))


BRADLEY_TERRY = BradleyTerry()
