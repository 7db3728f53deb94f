"""Ratings controlled for answer style: ``ratings.fit(..., style=[...])``.

The strengths are fitted jointly with one shared coefficient per style feature
(:mod:`ratings.models.style`; the fit is :func:`ratings.api.covariates.fit_covariates`), so the
ratings are those of answers of equal style (x = 0), and their intervals (CR2 by task with
Satterthwaite df per contrast by default) include the coefficients' uncertainty. The result
carries the coefficients table (``Ratings.style``) and the plain fit's ranks, from which
:meth:`ratings.result.Ratings.to_frame` reports ``rank_change`` (plain rank minus controlled
rank). This module checks the option; the columns it reads are
:func:`ratings.models.style.style_columns`.
"""

from __future__ import annotations

from ratings.api.options import spelled
from ratings.core.errors import option
from ratings.models.style import check_style_columns, parse_style, style_columns

__all__ = ["check_style_columns", "check_style_options", "parse_style", "style_columns"]


def check_style_options(style: tuple[str, ...], *, ci: str, penalty: float,
                        firth: bool) -> None:  # fmt: skip
    """Raise for options a style fit does not take (before any data is read; the
    :class:`~ratings.api.specs.Style` spec checked its own transform and ridge)."""
    if ci == "bootstrap":
        raise ValueError(f"{option('ci')} 'bootstrap' is not available with {option('style')}; "
                         "use 'sandwich', 'sandwich-z' or 'model'.")  # fmt: skip
    if penalty or firth:
        raise ValueError(f"{option('penalty')} and {option('firth')} are not available with "
                         f"{option('style')} (a ridge on the coefficients: "
                         f"{spelled('style_ridge')}).")  # fmt: skip
