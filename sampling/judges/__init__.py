"""Owns the judges of a plan: routing tasks to the judges allowed on them (``routing``) and
assigning one judge per match, balanced (``assign``; its weighted repair compiled in
``assign_numba``, the twin of ``assign``'s Python repair); imports ``sampling.board``.

``sampling.judges`` was one module before; its names (``assign_judges``, ...) are
``sampling.judges.assign``'s, handed out from here too."""

from ratings.kit import lazy_exports

__all__ = ["JudgeTurns", "assign_judges", "level_bounds"]
__getattr__ = lazy_exports(__name__, dict.fromkeys(__all__, "sampling.judges.assign"))
