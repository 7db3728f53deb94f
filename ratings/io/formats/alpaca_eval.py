"""AlpacaEval annotations (``annotations.json``): one record per instruction and pair.

Fields ``instruction, output_1, generator_1, output_2, generator_2, annotator, preference``
(and ``dataset``...). ``preference`` is in [1, 2]: 1 means ``output_1`` is preferred, 2
``output_2``; weighted annotators give the probability-weighted value, 1.5 is a draw (and 0,
in older files, too).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from ratings.io.formats.base import PeerFormat, plain, require_fields

__all__ = ["AlpacaEval"]


@dataclass(frozen=True)
class AlpacaEval(PeerFormat):
    """AlpacaEval annotations.

    Parameters
    ----------
    soft : bool, default=False
        ``winner`` holds A's score ``2 - preference`` in [0, 1] (for soft-outcome fits) instead
        of a verdict.

    ``generator_1`` / ``generator_2`` become ``model_a`` / ``model_b``, ``instruction`` the task
    and ``annotator`` the judge. Unless ``soft``, the preference is thresholded as AlpacaEval's
    discrete win rate does: below 1.5 A wins, above 1.5 B wins, exactly 1.5 (or 0) a tie.
    ``score`` (A's score, ``2 - preference``) and ``preference`` are kept as columns, and the
    answers' lengths in characters as ``len_a`` / ``len_b`` (``--style len``; AlpacaEval's
    length control uses the same lengths). A missing preference leaves the winner missing and
    one outside [1, 2] stays as read: both are rejected by row.
    """

    soft: bool = False

    name: ClassVar[str] = "alpaca-eval"
    title: ClassVar[str] = "AlpacaEval annotations"
    columns: ClassVar[tuple[str, ...]] = ("model_a", "model_b", "winner", "task_id", "judge",
                                          "score", "preference", "len_a", "len_b", "dataset")

    def __post_init__(self) -> None:
        if not isinstance(self.soft, bool | np.bool_):
            raise ValueError(f"`soft` must be True or False; got {self.soft!r}.")

    @classmethod
    def matches(cls, labels: Iterable[object]) -> bool:
        names = {str(c) for c in labels}
        return {"generator_1", "generator_2", "preference"} <= names

    def for_soft(self) -> AlpacaEval:
        return AlpacaEval(soft=True)

    def convert(self, frame: pd.DataFrame, prefix: str = "") -> pd.DataFrame:
        require_fields(frame, ("generator_1", "generator_2", "preference"), self.title, prefix)
        raw = plain(frame["preference"])
        value = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
        value = np.where(value == 0.0, 1.5, value)  # AlpacaEval's older spelling of a draw
        valid = (value >= 1.0) & (value <= 2.0)
        score = np.where(valid, 2.0 - value, np.nan)
        if self.soft:
            winner = pd.Series(score, dtype=object)
        else:
            winner = pd.Series(np.where(value < 1.5, "A", np.where(value > 1.5, "B", "tie")),
                               dtype=object)
        winner = winner.where(valid, raw.where(raw.notna() & ~raw.astype(str).str.strip()
                                               .eq(""), None))  # fmt: skip
        out = {"model_a": plain(frame["generator_1"]), "model_b": plain(frame["generator_2"]),
               "winner": winner}
        if "instruction" in frame.columns:
            out["task_id"] = plain(frame["instruction"])
        if "annotator" in frame.columns:
            out["judge"] = plain(frame["annotator"])
        out["score"] = score
        out["preference"] = value
        for side, field in (("a", "output_1"), ("b", "output_2")):
            if field in frame.columns:
                out[f"len_{side}"] = plain(frame[field]).map(
                    lambda t: len(t) if isinstance(t, str) else np.nan).to_numpy(dtype=float)
        consumed = {"generator_1", "generator_2", "preference", "instruction", "annotator",
                    "output_1", "output_2"}
        for label in frame.columns:  # the log's other fields (dataset, len_a...) as they are
            if label not in consumed and label not in out:
                out[label] = plain(frame[label])
        return pd.DataFrame(out)
