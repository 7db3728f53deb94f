"""Owns the pick-by-pick choice of the active phase: the information criteria (``criteria``),
the picker's state and rule (``picker``), its compiled loop (``picker_numba``, the twin of
``picker``) and numpy's PCG64 stream in numba (``pcg64_numba``); imports ``sampling.board`` and
``sampling.judges``."""

__all__: list[str] = []
