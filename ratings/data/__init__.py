"""Owns verdict codes, :class:`Comparisons` (the aggregated rows), slots and the Dask reduction;
imports core, io and kernels."""

from ratings.core.lazy import lazy_exports

__all__ = ["COUNT_COLUMNS", "Comparisons", "aggregate", "from_counts", "is_counts_frame"]
__getattr__ = lazy_exports(__name__, dict.fromkeys(__all__, "ratings.data.comparisons"))
