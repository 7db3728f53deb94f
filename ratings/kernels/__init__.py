"""Owns the numba kernels, their NumPy twins and the engine choice; imports ratings.core only."""

__all__: list[str] = []
