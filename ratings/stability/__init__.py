"""Stable boards: new models placed against a frozen board, drift between two boards, and how
fragile a board's order is. May import core, io, kernels, data, inference, models, result,
api and scopes."""

__all__: list[str] = []
