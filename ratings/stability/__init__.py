"""Owns stable boards: new models placed against a frozen board (two-step intervals), drift
between two boards, the fragility of a board's order, the board file and its covariance file;
imports every part below the command line but audit, datasets and report (plot only for the
drift chart, on request)."""

from ratings.result import register_fragility
from ratings.stability.fragility import fragility

__all__: list[str] = []

register_fragility(fragility)  # Ratings.fragility() runs it
