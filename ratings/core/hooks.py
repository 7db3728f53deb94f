"""What a result runs that sits above it: the HTML renderers (:mod:`ratings.report`, which draws
with :mod:`ratings.plot` and reads :mod:`ratings.scopes`) and the fragility analysis
(:mod:`ratings.stability`, which refits through :mod:`ratings.models`), registered from above
(by those packages when imported, and by ``import ratings`` as callers that import them) instead
of imported by :mod:`ratings.result`.

The registry lives here, not in :mod:`ratings.result`, so ``import ratings`` registers its
callers without importing the result's module (and the inference below it): the program parses
its flags and starts reading the log first.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["fragility_analysis", "html_renderer", "register_fragility", "register_html"]

#: The HTML renderers of a result: ``page`` and ``notebook`` (:func:`register_html`).
_HTML: dict[str, Callable[..., str]] = {}
#: The fragility analysis of a result (:func:`register_fragility`), None until registered.
_FRAGILITY: list[Callable[..., object]] = []


def register_html(*, page: Callable[..., str], notebook: Callable[..., str]) -> None:
    """Register the renderers of :meth:`Ratings.to_html` (``page(result, path, *, title,
    charts)``) and of a notebook's display (``notebook(result)``)."""
    _HTML.update(page=page, notebook=notebook)


def register_fragility(analysis: Callable[..., object]) -> None:
    """Register what :meth:`Ratings.fragility` runs (``analysis(result, **options)``)."""
    _FRAGILITY[:] = [analysis]


def html_renderer(kind: str) -> Callable[..., str] | None:
    """The registered renderer ``kind`` (``"page"`` or ``"notebook"``), None if there is none."""
    return _HTML.get(kind)


def fragility_analysis() -> Callable[..., object] | None:
    """The registered fragility analysis, None if there is none."""
    return _FRAGILITY[0] if _FRAGILITY else None
