"""Names ``ratings.api`` had in 0.1.0 (one module then), kept for one release: ``ratings.api``
hands them out with a :class:`DeprecationWarning` naming where they live now."""

from __future__ import annotations

from ratings.api.loading import Source, is_counts_source, load_comparisons, load_log
from ratings.api.specs import CIKind, options_of, parse_anchor
from ratings.core.memory import MaxMemory

__all__ = ["CIKind", "Source", "check_fit_options", "is_counts_source",
           "load_comparisons", "load_log", "parse_anchor"]  # fmt: skip

def check_fit_options(*, ci: str = "sandwich", model: str = "bt", penalty: float = 0.0,
                      firth: bool = False, level: float = 0.95, n_boot: int = 1000,
                      seed: int = 0, tol: float = 1e-10, max_iter: int = 100,
                      anchor: str | None = None, anchor_rating: float | None = None,
                      max_memory: MaxMemory = None, **_: object) -> None:  # fmt: skip
    """Check :func:`ratings.fit`'s flat options of 0.1.0 before any data is read (other
    keyword arguments are ignored): :func:`ratings.api.specs.options_of` does it now."""
    legacy = {"n_boot": n_boot, "seed": seed, "tol": tol, "max_iter": max_iter,
              "max_memory": max_memory}  # fmt: skip
    if model == "bt":
        legacy |= {"penalty": penalty, "firth": firth}
    elif penalty:
        legacy["penalty"] = penalty  # refused with Crowd-BT, as before
    if anchor is not None and anchor_rating is not None:
        anchor = (anchor, anchor_rating)
    options_of(model=model, ci=ci, anchor=anchor, level=level, legacy=legacy, warn=False)
