"""The scale a board's Elo is on, and how a ratings table records it.

Elo differences are fixed by the data; the level is fixed by the anchor: ``Elo = rating +
400/ln(10) (s - s_anchor)``, or, without an anchor, the board's mean at 1000. Two boards are on
the same scale only with the same anchor model at the same rating; a registry of frozen index
values must never mix scales. Ratings tables written by ``ratings fit --out`` and ``ratings
combine --out`` carry the columns of :data:`BOARD_COLUMNS` on every row so that ``ratings
freeze`` can check the scale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ratings.core.errors import InvalidVerdictsError, option
from ratings.io.cells import text
from ratings.result import Ratings, style_note

__all__ = ["BOARD_COLUMNS", "Scale", "board_info", "convert_board", "table_scale"]

#: Columns a written ratings table carries: the scale and how the board was made.
BOARD_COLUMNS: tuple[str, ...] = ("anchor", "anchor_rating", "method", "scopes", "weights")
_TOL = 1e-9  # ratings closer than this are the same scale


@dataclass(frozen=True)
class Scale:
    """An Elo scale: ``anchor`` (``None``: the board's mean) pinned at ``rating``."""

    anchor: str | None
    rating: float

    @classmethod
    def parse(cls, text_: str) -> Scale:
        """``"NAME=RATING"`` (the last ``=`` separates; ``"mean=1000"`` is a centred board)."""
        name, sep, value = str(text_).rpartition("=")
        try:
            rating = float(value)
        except ValueError:
            rating = math.nan
        if not sep or not name.strip() or not math.isfinite(rating):
            raise ValueError(
                f"A scale must look like 'NAME=RATING' (e.g. 'GPT-5.5 (medium)=1000', or "
                f"'mean=1000' for centred ratings); got {text_!r}."
            )
        name = name.strip()
        return cls(None if name == "mean" else name, rating)

    def same(self, other: Scale) -> bool:
        return self.anchor == other.anchor and abs(self.rating - other.rating) <= _TOL

    def __str__(self) -> str:
        if self.anchor is None:
            return f"centred (mean of the board at {self.rating:g})"
        return f"{self.anchor!r} = {self.rating:g}"


def board_info(r: Ratings) -> dict[str, object]:
    """The :data:`BOARD_COLUMNS` of a fit or a combined headline, as one row's values."""
    if r.combine_method is not None and r.scope_weights is not None:
        method = f"combined ({r.combine_method})"
        scopes = ",".join(r.scope_weights)
        weights = ",".join(f"{s}={w:.6g}" for s, w in r.scope_weights.items())
    else:
        method, scopes, weights = r.kind + style_note(r.style, long=False), (r.scope or ""), ""
    return {"anchor": r.anchor if r.anchor is not None else "", "anchor_rating": float(r.offset),
            "method": method, "scopes": scopes, "weights": weights}  # fmt: skip


def table_scale(table: pd.DataFrame, what: str = "The ratings table") -> Scale | None:
    """The one scale recorded in ``table`` (``anchor``, ``anchor_rating``), or ``None``.

    Raises
    ------
    InvalidVerdictsError
        The rows record different scales, or a rating that is not a number.
    """
    if "anchor_rating" not in table.columns:
        return None
    rating = pd.to_numeric(text(table["anchor_rating"]), errors="coerce")
    known = rating.notna().to_numpy()
    if not known.any():
        return None
    anchor = (text(table["anchor"]) if "anchor" in table.columns
              else pd.Series(pd.NA, index=table.index, dtype="string"))  # fmt: skip
    pairs = pd.DataFrame({"anchor": anchor[known].fillna(""), "rating": rating[known]})
    distinct = pairs.drop_duplicates()
    if len(distinct) > 1:
        shown = [str(Scale(a or None, float(x))) for a, x in distinct.head(4).to_numpy()]
        raise InvalidVerdictsError(
            f"{what} records {len(distinct)} different scales ({', '.join(shown)}): its Elo "
            "values are not comparable. Keep the rows of one board."
        )
    a, x = distinct.iloc[0]
    return Scale(a or None, float(x))


def convert_board(table: pd.DataFrame, board: Scale | None, kept: Scale, registry: str, *,
                  convert: bool) -> tuple[pd.DataFrame, str]:  # fmt: skip
    """``table`` shifted onto the registry's scale ``kept``, and a note for ``source``.

    Raises ``ValueError`` (nothing written) when the board's scale is unknown, when it differs
    and ``convert`` is off, or when the conversion is impossible (the registry's anchor is not
    on the board, or the registry is centred).
    """
    if board is None:
        raise ValueError(
            f"The ratings table records no scale (no 'anchor' / 'anchor_rating' columns), but "
            f"the registry {registry!r} is kept at {kept}. Write the table with this version "
            "(`ratings fit --out` / `ratings combine --out` record it), or state its scale with "
            f"{option('scale')}. The registry was not changed."
        )
    if not convert:
        same = option("anchor", f"{kept.anchor}={kept.rating:g}")
        refit = ("without an anchor (centred)" if kept.anchor is None
                 else f"with the registry's anchor ({same})")  # fmt: skip
        raise ValueError(
            f"The board is on another scale than the registry: it is anchored at {board}, the "
            f"registry {registry!r} at {kept}, so its Elo values are not comparable. Refit "
            f"{refit}, or pass {option('convert', True)} to shift the board onto the "
            "registry's scale. The registry was not changed."
        )
    elo = pd.to_numeric(table["elo"], errors="coerce")
    at = text(table["model"]).to_numpy(dtype=object) == kept.anchor
    if kept.anchor is None or not at.any():
        raise ValueError(
            f"Cannot convert the board ({board}) to the registry's scale ({kept}): "
            + ("a centred registry has no anchor to align on" if kept.anchor is None
               else f"the registry's anchor {kept.anchor!r} is not on the board")
            + ". Refit the board with the registry's anchor. The registry was not changed."
        )
    shift = kept.rating - float(elo[at].iloc[0])
    out = table.assign(elo=elo + shift, lower=float("nan"), upper=float("nan"),
                       anchor=kept.anchor, anchor_rating=kept.rating)  # fmt: skip
    return out, f" (converted from {board} by {shift:+.1f} Elo; intervals not carried over)"
