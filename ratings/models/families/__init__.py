"""Outcome families: how one aggregated row's outcome depends on its linear predictor
(:mod:`~ratings.models.families.base` declares what a family provides): Bradley-Terry,
Crowd-BT and the tie models (:mod:`~ratings.models.families.ties`)."""

from ratings.models.families.base import Family, RowTerms
from ratings.models.families.bt import BRADLEY_TERRY
from ratings.models.families.crowd import CROWD_BT

__all__ = ["BRADLEY_TERRY", "CROWD_BT", "Family", "RowTerms"]

