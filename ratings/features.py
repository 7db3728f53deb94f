"""Answer-style features from answer texts, for style control (``ratings.fit(..., style=...)``).

>>> import ratings.features
>>> ratings.features.features("# Plan\\n\\n- **one**\\n- two\\n\\n```py\\nx = 1\\n```")
{'tokens': 6, 'headers': 1, 'lists': 2, 'bold': 1}

Counted as in LMArena's style control (FastChat ``count_markdown_elements``), after fenced code
blocks (between triple backticks or tildes) are removed, so code neither adds tokens nor reads as
formatting:

* ``tokens``: the text split on whitespace, or the length of ``tokenizer(text)`` for any
  callable (e.g. a Hugging Face tokenizer's ``encode``);
* ``headers``: lines starting with one to six ``#`` and a space;
* ``lists``: list items, lines starting (after indentation) with ``-``, ``*`` or ``+`` or with
  a number and ``.`` or ``)``, then a space;
* ``bold``: spans ``**text**`` or ``__text__`` within a line.

:func:`features` of a pandas Series (or a list) gives one row per text with those columns, by
pandas' vectorised string methods; :func:`add_features` adds ``NAME_a`` / ``NAME_b`` columns
for two text columns of a verdict log (the command line's ``ratings style-features``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from ratings.core.errors import InvalidVerdictsError, format_rows
from ratings.core.schema import require_columns

__all__ = ["FEATURES", "add_features", "features"]

#: The features :func:`features` counts, in order.
FEATURES = ("tokens", "headers", "lists", "bold")

_FENCE = r"(?s)(```|~~~).*?(?:\1|\Z)"  # a fenced block, to its closing fence (or the end)
_HEADER = r"(?m)^#{1,6}[ \t]"
_LIST = r"(?m)^[ \t]*(?:[-*+]|\d+[.)])[ \t]"
_BOLD = r"\*\*[^*\n]+\*\*|__[^_\n]+__"

Tokenizer = Callable[[str], Sequence[object]]


def features(text: str | Sequence[str] | pd.Series, tokenizer: Tokenizer | None = None,
             ) -> dict[str, int] | pd.DataFrame:  # fmt: skip
    """Style counts of one answer text (a dict) or of many (a DataFrame, same index).

    Parameters
    ----------
    text : str, list of str or pandas.Series
        Answer texts (Markdown). Missing values in a Series are refused, naming the rows.
    tokenizer : callable, optional
        ``tokenizer(text)`` returns the tokens (only their number is used); default: split on
        whitespace.

    Returns
    -------
    dict or pandas.DataFrame
        ``tokens, headers, lists, bold`` (see the module notes) as integers.
    """
    if isinstance(text, str):
        return {k: int(v) for k, v in features(pd.Series([text]), tokenizer).iloc[0].items()}
    s = text if isinstance(text, pd.Series) else pd.Series(list(text), dtype=object)
    missing = s.isna().to_numpy()
    if missing.any():
        rows = s.index[missing]
        raise InvalidVerdictsError(
            f"{int(missing.sum())} answer text(s) missing: rows {format_rows(rows)}. Every "
            "answer needs a text (an empty string for an empty answer).",
            rows=pd.DataFrame({"row": np.asarray(rows), "reason": "text missing"}))
    bad = ~s.map(lambda v: isinstance(v, str)).to_numpy(dtype=bool)
    if bad.any():
        rows = s.index[bad]
        raise InvalidVerdictsError(f"{int(bad.sum())} answer(s) are not text: rows "
                                   f"{format_rows(rows)}.",
                                   rows=pd.DataFrame({"row": np.asarray(rows),
                                                      "reason": "not text"}))  # fmt: skip
    body = s.astype(object).str.replace(_FENCE, " ", regex=True)
    if tokenizer is None:
        tokens = body.str.split().str.len()
    else:
        tokens = body.map(lambda t: len(tokenizer(t)))
    out = pd.DataFrame({"tokens": tokens, "headers": body.str.count(_HEADER),
                        "lists": body.str.count(_LIST), "bold": body.str.count(_BOLD)},
                       index=s.index)  # fmt: skip
    return out.fillna(0).astype(np.int64)


def add_features(frame: pd.DataFrame, text_a: str, text_b: str,
                 tokenizer: Tokenizer | None = None) -> pd.DataFrame:  # fmt: skip
    """``frame`` with ``NAME_a`` and ``NAME_b`` for every feature of :data:`FEATURES`, counted
    from the text columns ``text_a`` and ``text_b`` (a copy; existing columns of those names
    are refused rather than overwritten)."""
    require_columns(frame, [text_a, text_b], "the answers",
                    hint="Name the two answers' text columns.")
    new = [f"{n}_{side}" for n in FEATURES for side in ("a", "b")]
    clash = [c for c in new if c in frame.columns]
    if clash:
        raise InvalidVerdictsError(f"The table already has column(s) {clash}; rename or drop "
                                   "them first (they would be overwritten).")  # fmt: skip
    fa, fb = features(frame[text_a], tokenizer), features(frame[text_b], tokenizer)
    out = frame.copy()
    for name in FEATURES:
        out[f"{name}_a"], out[f"{name}_b"] = fa[name].to_numpy(), fb[name].to_numpy()
    return out
