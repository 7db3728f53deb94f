"""Owns the numba kernels, their NumPy twins, the engine choice and whether a kernel is cached
(`cache`); imports ratings.core only."""

__all__: list[str] = []
