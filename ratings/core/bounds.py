"""Numeric arguments: finite, in range, named in the error (``1e308``, ``inf``, ``nan`` refused).

Every numeric input of the package (anchor ratings, penalties, weights, counts, resample counts,
tolerances) passes through :func:`check_number` at the boundary, so an extreme value is refused
with its name and value instead of collapsing a board (an anchor of 1e300 leaves every rating
equal to it in floating point) or overflowing later.
"""

from __future__ import annotations

import math
import numbers

from ratings.core.errors import option

__all__ = ["MAX_ANCHOR_RATING", "MAX_COUNT", "MAX_LEVEL", "MAX_PENALTY", "MAX_WEIGHT", "MIN_LEVEL",
           "check_level", "check_number"]

#: Largest anchor rating in absolute value: beyond, Elo differences lose digits (float64 keeps
#: about 16) and nothing on an Elo scale is that large.
MAX_ANCHOR_RATING = 1e6
#: Largest ridge penalty: far beyond it the penalty alone sets every rating (all equal, with
#: intervals that only measure the penalty).
MAX_PENALTY = 1e6
#: Largest scope weight (weights are relative; their sum must not overflow).
MAX_WEIGHT = 1e12
#: Largest count in a counts table: integers are exact in float64 up to 2^53.
MAX_COUNT = float(2**53)
#: The confidence levels a fit accepts: closer to 0 or 1, quantiles round to 0 or 1.
MIN_LEVEL, MAX_LEVEL = 1e-9, 1.0 - 1e-9


def check_number(
    value: object,
    name: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    above: float | None = None,
    integer: bool = False,
) -> float:
    """``value`` as a float (an int when ``integer``), if it is a finite real number in range.

    Parameters
    ----------
    value : object
        The argument as given.
    name : str
        The Python argument, named in the message as the front end spells it
        (:func:`ratings.core.errors.option`).
    minimum, maximum : float, optional
        Inclusive bounds.
    above : float, optional
        Exclusive lower bound.
    integer : bool, default=False
        Require a whole number.

    Raises
    ------
    ValueError
        Naming the argument, the value and the range allowed.
    """
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    x = float(value) if ok else math.nan
    ok = ok and math.isfinite(x)
    ok = ok and (minimum is None or x >= minimum) and (maximum is None or x <= maximum)
    ok = ok and (above is None or x > above) and (not integer or x == int(x))
    if ok:
        return int(x) if integer else x
    kind = "an integer" if integer else "a finite number"
    low = (f" > {_text(above)}" if above is not None
           else f" >= {_text(minimum)}" if minimum is not None else "")  # fmt: skip
    high = "" if maximum is None else f"{' and' if low else ''} <= {_text(maximum)}"
    raise ValueError(f"{option(name)} must be {kind}{low}{high}; got {value!r}.")


def _text(x: float) -> str:
    """A bound as people write it: 0, 2, 0.5, 1e6, 9.0072e15."""
    return f"{x:g}".replace("e+0", "e").replace("e+", "e").replace("e-0", "e-")


def check_level(level: float) -> float:
    """``level`` as a float strictly between 0 and 1 (a confidence level), else ValueError."""
    ok = isinstance(level, int | float) and not isinstance(level, bool)
    if not (ok and 0.0 < float(level) < 1.0):
        raise ValueError(f"{option('level')} must be a float strictly between 0 and 1; got "
                         f"{level!r}.")  # fmt: skip
    if not MIN_LEVEL <= float(level) <= MAX_LEVEL:  # quantiles of such levels round to 0 or 1
        raise ValueError(f"{option('level')} must be between {MIN_LEVEL} and {MAX_LEVEL} "
                         "(closer to 0 or 1 its normal and t quantiles are lost to rounding); "
                         f"got {level!r}.")  # fmt: skip
    return float(level)
