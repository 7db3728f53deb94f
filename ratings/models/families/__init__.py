"""Outcome families: how one aggregated row's outcome depends on its linear predictor
(:mod:`~ratings.models.families.base` declares what a family provides; Bradley-Terry and
Crowd-BT are the two the package fits)."""

from ratings.models.families.base import Family, RowTerms
from ratings.models.families.bt import BRADLEY_TERRY
from ratings.models.families.crowd import CROWD_BT

__all__ = ["BRADLEY_TERRY", "CROWD_BT", "Family", "RowTerms", "family_of"]


def family_of(model: str) -> Family:
    """The family of a ``model=`` name (``"bt"`` or ``"crowd-bt"``)."""
    return CROWD_BT if model == "crowd-bt" else BRADLEY_TERRY
