"""Owns errors and warnings, the column schema, the aggregated-row layout, numeric bounds, the
memory guard, t quantiles, dense linear algebra and the thread pool; imports nothing of ratings."""

__all__: list[str] = []
