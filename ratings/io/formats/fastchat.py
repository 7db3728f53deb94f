"""FastChat / LMArena battles: ``clean_battle`` JSON (or JSON Lines) and the Parquet releases.

Records hold ``question_id, model_a, model_b, winner`` and, depending on the release, ``judge``,
``turn``, ``anony``, ``language``, ``tstamp``, ``conversation_a`` / ``_b``, ``is_code``,
``category_tag`` and ``conv_metadata`` (LMArena's style counts). Winners ``model_a``,
``model_b``, ``tie``, and ``tie (bothbad)`` / ``both_bad`` (a tie: both answers bad).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from ratings.io.formats.base import PeerFormat, plain, require_fields

__all__ = ["FastChat"]

#: Columns only FastChat / LMArena logs carry beside model_a, model_b, winner.
MARKERS = frozenset({"conversation_a", "conversation_b", "anony", "tstamp", "conv_metadata",
                     "category_tag", "is_code"})
_WINNERS = {"model_a": "A", "model_b": "B", "tie": "tie", "tie (bothbad)": "tie",
            "both_bad": "tie"}
#: LMArena's style counts (``conv_metadata``) -> the style feature they give (NAME_a / NAME_b).
_STYLE = {"sum_assistant_{}_tokens": "tokens", "header_count_{}": "headers",
          "list_count_{}": "lists", "bold_count_{}": "bold"}
_KEPT = ("turn", "language", "anony", "is_code")


@dataclass(frozen=True)
class FastChat(PeerFormat):
    """FastChat / LMArena battles.

    ``question_id`` becomes ``task_id``, ``judge`` stays the judge; ``tie (bothbad)`` and
    ``both_bad`` are ties (a ``both_bad`` column says which). ``turn``, ``language``, ``anony``
    and ``is_code`` are kept as columns, ``category_tag``'s flags as ``category_<flag>``
    columns, and ``conv_metadata``'s counts as the style columns ``tokens_a`` / ``tokens_b``,
    ``headers_*``, ``lists_*``, ``bold_*`` (``--style tokens,headers,lists,bold``).
    """

    name: ClassVar[str] = "fastchat"
    title: ClassVar[str] = "FastChat / LMArena battles"
    columns: ClassVar[tuple[str, ...]] = ("model_a", "model_b", "winner", "task_id", "judge",
                                          "both_bad", *_KEPT)

    @classmethod
    def matches(cls, labels: Iterable[object]) -> bool:
        names = {str(c) for c in labels}
        return {"model_a", "model_b", "winner"} <= names and bool(names & MARKERS)

    def output_columns(self, labels: Iterable[object]) -> list[str]:
        names = {str(c) for c in labels}
        style = [f"{f}_{s}" for f in _STYLE.values() for s in ("a", "b")]
        return [*self.columns, *(style if "conv_metadata" in names else ())]

    def convert(self, frame: pd.DataFrame, prefix: str = "") -> pd.DataFrame:
        require_fields(frame, ("model_a", "model_b", "winner"), self.title, prefix)
        raw = plain(frame["winner"])
        key = raw.map(lambda v: v.strip().lower() if isinstance(v, str) else v)
        winner = key.map(_WINNERS)
        winner = winner.where(winner.notna(), raw)  # unknown spellings stay, to be rejected
        out = {"model_a": plain(frame["model_a"]), "model_b": plain(frame["model_b"]),
               "winner": winner}
        if "question_id" in frame.columns and "task_id" not in frame.columns:
            out["task_id"] = plain(frame["question_id"]).map(
                lambda v: v if not isinstance(v, float | np.floating) or np.isnan(v)
                else (str(int(v)) if float(v).is_integer() else str(v)))
        for name in ("task_id", "judge", "scope", "match_id"):
            if name in frame.columns:
                out[name] = plain(frame[name])
        out["both_bad"] = key.isin(("tie (bothbad)", "both_bad")).to_numpy()
        for name in _KEPT:
            if name in frame.columns:
                out[name] = plain(frame[name])
        if "category_tag" in frame.columns:
            out.update(_category_flags(plain(frame["category_tag"])))
        if "conv_metadata" in frame.columns:
            out.update(_style_counts(plain(frame["conv_metadata"])))
        return pd.DataFrame(out)


def _count(value: object) -> float:
    """One style count: a number, or the sum of a dict's counts (``{"h1": 2, "h2": 0}``)."""
    if isinstance(value, dict):
        return float(sum(v for v in value.values() if v is not None))
    return float(value) if value is not None else np.nan


def _style_counts(meta: pd.Series) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for pattern, feature in _STYLE.items():
        for side in ("a", "b"):
            field = pattern.format(side)
            out[f"{feature}_{side}"] = meta.map(
                lambda m, f=field: _count(m.get(f)) if isinstance(m, dict) else np.nan
            ).to_numpy(dtype=float)
    return out


def _category_flags(tags: pd.Series) -> dict[str, np.ndarray]:
    """``category_tag``'s boolean flags (``{"math_v0.1": {"math": true}}`` -> ``category_math``),
    one column each; a record without the flag reads False."""
    flags: dict[str, None] = {}
    for tag in tags:
        if isinstance(tag, dict):
            for group in tag.values():
                if isinstance(group, dict):
                    flags.update({k: None for k, v in group.items() if isinstance(v, bool)})
    out = {}
    for flag in flags:
        out[f"category_{flag}"] = tags.map(
            lambda t, f=flag: any(isinstance(g, dict) and g.get(f) is True
                                  for g in (t.values() if isinstance(t, dict) else ()))
        ).to_numpy(dtype=bool)
    return out
