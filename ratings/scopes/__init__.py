"""Owns rubric matches, per-scope fits and the combined headline, the frozen index registry, board
scales, judge-quality files and one judge per check; imports everything but audit, plot, cli."""

__all__: list[str] = []
