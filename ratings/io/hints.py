"""Guessing which of a file's columns holds each verdict column, for hints in messages.

:func:`guess_columns` proposes one source column for every canonical column a file lacks: the
two sides from a pair of names that differ only in their last part (``model_1`` / ``model_2``,
``player_a`` / ``player_b``, ``left`` / ``right``), the winner from names such as ``result``
or ``outcome``, the task from ``question_id``, ``prompt_id`` and the like. A source is used at
most once, and never a column that already carries a canonical name, so a hint followed as
given reads the file (or asks only for what no column resembles).
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable, Sequence

from ratings.core.schema import CANONICAL

__all__ = ["TASK_NAMES", "guess_columns", "task_column"]

#: Suffix pairs that mark the two sides of a match, most telling first.
_SIDES = (("_a", "_b"), ("_1", "_2"), ("1", "2"), ("a", "b"), (" a", " b"), ("-a", "-b"),
          ("_left", "_right"), ("left", "right"), ("_x", "_y"))  # fmt: skip
#: Whole names of the two sides.
_SIDE_NAMES = (("left", "right"), ("first", "second"), ("home", "away"), ("a", "b"),
               ("visitor", "opponent"), ("player1", "player2"))  # fmt: skip
#: Words that make a pair of columns the likeliest to name the competitors.
_COMPETITOR_WORDS = ("model", "system", "player", "team", "name", "agent", "bot", "llm",
                     "competitor", "item", "candidate", "generator", "")  # fmt: skip
#: Names of a winner column, likeliest first.
WINNER_NAMES = ("winner", "result", "outcome", "verdict", "preference", "preferred", "choice",
                "label", "judgment", "judgement", "decision", "win", "winner_model")  # fmt: skip
#: Names of a task column (the natural cluster of verdicts), likeliest first.
TASK_NAMES = ("task_id", "question_id", "prompt_id", "qid", "pid", "task", "question",
              "prompt", "item_id", "problem_id", "instance_id", "example_id", "question_idx",
              "prompt_idx", "conversation_id", "uid", "instruction", "instruction_id")  # fmt: skip
#: Words in a column name that make it a likely task when no name above matches.
_TASK_WORDS = ("instruction", "prompt", "question", "task")
#: ``*_id`` columns that name something other than the task.
_NOT_TASK_IDS = ("match_id", "judge_id", "model_id", "model_a_id", "model_b_id", "row_id",
                 "user_id", "annotator_id", "battle_id", "run_id")  # fmt: skip


def _norm(label: object) -> str:
    return str(label).strip().lower()


def _side_pairs(labels: Sequence[str], numeric: Collection[str] = ()) -> list[tuple[str, str]]:
    """Pairs of labels naming the two sides of a match, likeliest first; pairs of numeric
    columns (token counts, lengths, scores) last, as models have names."""
    by_norm = {_norm(c): c for c in labels}
    found: list[tuple[int, int, str, str]] = []
    for rank, (left, right) in enumerate(_SIDE_NAMES):
        if left in by_norm and right in by_norm:
            found.append((0, len(_SIDES) + rank, by_norm[left], by_norm[right]))
    numbers = set(numeric)
    for rank, (sa, sb) in enumerate(_SIDES):
        for norm, label in by_norm.items():
            if not norm.endswith(sa):
                continue
            stem = norm[: len(norm) - len(sa)]
            twin = by_norm.get(stem + sb)
            if twin is None or not stem.strip(" _-"):
                continue
            words = [w for w in _COMPETITOR_WORDS if w and w in stem]
            found.append((0 if words else 1, rank, label, twin))
    found.sort(key=lambda f: (f[2] in numbers or f[3] in numbers, f[0], f[1]))
    return [(a, b) for _, _, a, b in found]


def task_column(labels: Iterable[object]) -> str | None:
    """The column likeliest to name each verdict's task, or None: a name of
    :data:`TASK_NAMES` (``question_id``, ``prompt_id``, ``instruction``...), else a name with
    ``instruction``, ``prompt`` or ``question`` in it, else one ending in ``_id`` that names
    no match, judge, model or user."""
    by_norm = {_norm(c): str(c) for c in labels}
    for name in TASK_NAMES[1:]:
        if name in by_norm:
            return by_norm[name]
    for word in _TASK_WORDS:
        for norm, label in by_norm.items():
            if word in norm and norm != "task_id":
                return label
    for norm, label in by_norm.items():
        if norm.endswith("_id") and norm not in _NOT_TASK_IDS and norm != "task_id":
            return label
    return None


def guess_columns(labels: Iterable[object], missing: Sequence[str],
                  *, task: bool = True,
                  numeric: Collection[str] = ()) -> dict[str, str | None]:  # fmt: skip
    """{canonical name: the file's likeliest column for it, or None} for every name in
    ``missing`` (and ``task_id`` when ``task`` and a task-like column exists).

    No column is proposed twice, and none already named like a canonical column (mapping it
    away would leave its own canonical name missing). ``numeric``: the columns holding only
    numbers, proposed for the two models only when no other pair fits.
    """
    labels = [str(c) for c in labels]
    taken = {c for c in labels if c.strip() in CANONICAL}  # found by name already
    out: dict[str, str | None] = {}

    def free(label: str | None) -> bool:
        return label is not None and label not in taken

    def use(canon: str, label: str | None) -> None:
        out[canon] = label
        if label is not None:
            taken.add(label)

    want_sides = [m for m in ("model_a", "model_b") if m in missing]
    if want_sides:
        pair = next(((a, b) for a, b in _side_pairs(labels, numeric) if free(a) and free(b)),
                    None)  # fmt: skip
        if pair is not None:
            for canon in want_sides:
                use(canon, pair[0] if canon == "model_a" else pair[1])
    for canon in missing:
        if canon in out:
            continue
        if canon == "winner":
            by_norm = {_norm(c): c for c in labels if free(c)}
            label = next((by_norm[n] for n in WINNER_NAMES if n in by_norm), None)
        elif canon == "task_id":
            label = task_column(c for c in labels if free(c))
        else:
            label = None
        if label is None:  # a close spelling of the name itself
            rest = {_norm(c): c for c in labels if free(c)}
            close = difflib.get_close_matches(canon, list(rest), n=1, cutoff=0.75)
            label = rest[close[0]] if close else None
        use(canon, label)
    if task and "task_id" not in out and not any(_norm(c) == "task_id" for c in labels):
        label = task_column(c for c in labels if free(c))
        if label is not None:
            use("task_id", label)
    return out
