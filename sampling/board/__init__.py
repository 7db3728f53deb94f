"""Owns the planning inputs and their counts: the board, the history and the submissions
(``inputs``), matches per (pair, task) (``pairs``) and which pairs have a fresh task
(``feasibility``); imports the public API of ratings and ratings.kit."""

__all__: list[str] = []
