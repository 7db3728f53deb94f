"""Outcome families: how one aggregated row's outcome depends on its linear predictor
(:mod:`~ratings.models.families.base` declares what a family provides, and Bradley-Terry and
Crowd-BT), and the tie models (:mod:`~ratings.models.families.ties`)."""

from ratings.models.families.base import BRADLEY_TERRY, CROWD_BT, Family, RowTerms

__all__ = ["BRADLEY_TERRY", "CROWD_BT", "Family", "RowTerms"]
