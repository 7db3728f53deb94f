"""Owns :func:`fit` (reading, the model and interval choice, judge-effect adjustment) and the
kernels' warm-up; imports core, io, kernels, data, inference, models and result."""

from ratings.core.lazy import lazy_exports

__all__ = ["LoadedLog", "fit", "warmup"]
__getattr__ = lazy_exports(__name__, {"LoadedLog": "ratings.api.loading",
                                      "fit": "ratings.api.fitting",
                                      "warmup": "ratings.api.warmup"})
