"""Owns errors and warnings, the column schema, the aggregated-row layout, numeric bounds, the
memory guard, t quantiles, dense linear algebra, the thread pool and the program's BLAS setting;
imports nothing of ratings."""

__all__: list[str] = []
