"""Owns :func:`fit` (reading, the model and interval choice, judge-effect adjustment) and the
kernels' warm-up; imports core, io, kernels, data, inference, models and result.

Names this module had in 0.1.0 (``load_log``, ``check_fit_options``, ...) are handed out with a
:class:`DeprecationWarning` naming their place now (:mod:`ratings.api.compat`)."""

from ratings.core.deprecation import deprecated_names
from ratings.core.lazy import lazy_exports

__all__ = ["LoadedLog", "fit", "warmup"]


def _old(name: str):
    from ratings.api import compat

    return getattr(compat, name)


#: Each old name and where it lives now.
_OLD = {
    "CIKind": "ratings.api.specs.CIKind",
    "Source": "ratings.api.loading.Source",
    "check_fit_options": "ratings.api.specs.options_of",
    "is_counts_source": "ratings.api.loading.is_counts_source",
    "load_comparisons": "ratings.api.loading.load_comparisons",
    "load_log": "ratings.api.loading.load_log",
    "parse_anchor": "ratings.api.specs.parse_anchor",
}
__getattr__ = deprecated_names(
    __name__,
    {name: (new, lambda n=name: _old(n)) for name, new in _OLD.items()},
    fallback=lazy_exports(__name__, {"LoadedLog": "ratings.api.loading",
                                     "fit": "ratings.api.fitting",
                                     "warmup": "ratings.api.warmup"}),
)
