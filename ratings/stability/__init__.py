"""Stable boards: new models placed against a frozen board, drift between two boards, and how
fragile a board's order is. May import core, io, kernels, data, inference, models, result,
api, scopes and plot (the drift chart, drawn on request)."""

from ratings.result import register_fragility
from ratings.stability.fragility import fragility

__all__: list[str] = []

register_fragility(fragility)  # Ratings.fragility() runs it
