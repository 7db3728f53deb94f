"""arena-hard-auto judgments: JSON Lines, one record per (model, question), two games each.

v0.1 records: ``question_id, model, judge, games`` (the baseline is the benchmark's, not in
the record: ``gpt-4-0314`` for arena-hard-v0.1); v2 records: ``uid, category, judge, model,
baseline, games``. Each game's ``score`` is a label such as ``A>>B``, ``A>B``, ``A=B``,
``B>A``, ``B>>A`` (or the mirrored ``B<<A``, ``B<A``, ``B=A``, ``A<B``, ``A<<B``). In game 1
the baseline answered as A and the model as B; game 2 swaps them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from ratings.core.bounds import check_number
from ratings.io.formats.base import PeerFormat, nested_rows, plain, require_fields

__all__ = ["LABELS", "ArenaHard"]

#: A game's label -> (the winning position, strong).
LABELS: dict[str, tuple[str, bool]] = {
    "A>>B": ("A", True), "A>B": ("A", False), "A=B": ("tie", False), "B>A": ("B", False),
    "B>>A": ("B", True), "B<<A": ("A", True), "B<A": ("A", False), "B=A": ("tie", False),
    "A<B": ("B", False), "A<<B": ("B", True),
}  # fmt: skip


@dataclass(frozen=True)
class ArenaHard(PeerFormat):
    """arena-hard-auto judgments.

    Parameters
    ----------
    strong_weight : int, default=1
        How many verdicts a strong label (``A>>B``, ``B>>A``) counts as. arena-hard-auto counts
        3 (its ``--weight`` / ``weight=3``); 1 reads every game as one verdict.
    baseline : str, default="gpt-4-0314"
        The baseline of v0.1 records, which do not name it (v2 records carry ``baseline``).

    Each record gives two verdicts, game 1 (``model_a`` the baseline) and game 2 (``model_a``
    the model), in that order, each repeated ``strong_weight`` times when strong.
    ``question_id`` / ``uid`` becomes ``task_id``; ``judge`` stays; ``category``, ``game``
    (1 or 2), ``strong`` and ``record`` (the 0-based record of the file) are kept as columns.
    A game without a score (the judge gave no label) keeps a missing winner, so it is
    rejected by row, never dropped.
    """

    strong_weight: int = 1
    baseline: str = "gpt-4-0314"

    name: ClassVar[str] = "arena-hard"
    title: ClassVar[str] = "arena-hard-auto judgments"
    columns: ClassVar[tuple[str, ...]] = ("model_a", "model_b", "winner", "task_id", "judge",
                                          "category", "game", "strong", "record")

    def __post_init__(self) -> None:
        check_number(self.strong_weight, "strong_weight", minimum=1, integer=True)
        if not isinstance(self.baseline, str) or not self.baseline.strip():
            raise ValueError(f"`baseline` must be a model name; got {self.baseline!r}.")

    @classmethod
    def matches(cls, labels: Iterable[object]) -> bool:
        names = {str(c) for c in labels}
        return {"model", "games"} <= names and bool(names & {"question_id", "uid"})

    def convert(self, frame: pd.DataFrame, prefix: str = "") -> pd.DataFrame:
        task = "uid" if "uid" in frame.columns else "question_id"
        require_fields(frame, ("model", "games", task), self.title, prefix)
        games = plain(frame["games"])
        nested_rows(games, (list, tuple, np.ndarray), "list of games", prefix)
        model = plain(frame["model"])
        baseline = (plain(frame["baseline"]) if "baseline" in frame.columns
                    else pd.Series(self.baseline, index=model.index))  # fmt: skip
        n = len(frame)
        labels = np.full((n, 2), None, dtype=object)
        for i, record in enumerate(games):
            for g in range(min(len(record), 2)):
                game = record[g]
                labels[i, g] = game.get("score") if isinstance(game, dict) else None
        parts = []
        for g in (0, 1):
            label = pd.Series(labels[:, g])
            known = label.map(lambda v: LABELS.get(v.strip()) if isinstance(v, str) else None)
            winner = known.map(lambda k: k[0] if k else None)
            winner = winner.where(known.notna(), label)  # unknown labels stay, to be rejected
            strong = known.map(lambda k: bool(k and k[1])).to_numpy(dtype=bool)
            a, b = (baseline, model) if g == 0 else (model, baseline)
            part = pd.DataFrame({"model_a": a.to_numpy(), "model_b": b.to_numpy(),
                                 "winner": winner.to_numpy(), "task_id": plain(frame[task])
                                 .astype(object).map(str).to_numpy()})
            if "judge" in frame.columns:
                part["judge"] = plain(frame["judge"]).to_numpy()
            if "category" in frame.columns:
                part["category"] = plain(frame["category"]).to_numpy()
            part["game"] = g + 1
            part["strong"] = strong
            part["record"] = np.arange(n)
            part["_copies"] = np.where(strong, self.strong_weight, 1)
            parts.append(part)
        both = pd.concat(parts, ignore_index=True)
        order = np.lexsort((both["game"].to_numpy(), both["record"].to_numpy()))
        both = both.iloc[order]
        copies = both.pop("_copies").to_numpy()
        return both.loc[both.index.repeat(copies)].reset_index(drop=True)
