"""Owns the figures (bands, scopes, win matrices, judges, convergence, the audit); imports core,
io, result and scopes."""

from ratings.core.lazy import lazy_exports

__all__ = ["SAVE_FORMATS", "plot_audit", "plot_convergence", "plot_judges", "plot_ratings",
           "plot_scopes", "plot_style", "plot_table", "plot_win_matrix", "save_figure"]
#: ``plot_cli`` (deprecated: ``plot_table``) is looked up in ``bands``, which warns.
__getattr__ = lazy_exports(__name__, dict.fromkeys([*__all__, "plot_cli"], "ratings.plot.bands"))
