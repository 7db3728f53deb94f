"""Text features for style control (``ratings.features``) and ``ratings style-features``: counts
checked against hand-counted texts, a tokenizer callable, fenced code left out, bad input named
by rows."""

from __future__ import annotations

import pandas as pd
import pytest

import ratings
from ratings.core.errors import InvalidVerdictsError

TEXT = """# Title

Intro with **bold** and __more bold__ words.

## Steps
1. first
2) second
- dash item
  * nested star
+ plus item

```python
# not a header
- not a list
x = "**not bold**"
```
Closing line.
"""


def test_counts_by_hand():
    f = ratings.features.features(TEXT)
    # words outside the fence: "# Title" 2, intro line 7, "## Steps" 2, items 2+2+3+3+3,
    # "Closing line." 2
    assert f == {"tokens": 26, "headers": 2, "lists": 5, "bold": 2}


def test_fence_stripped_and_unclosed_fence():
    assert ratings.features.features("a\n```\n# h\n- l\n**b**") == {
        "tokens": 1, "headers": 0, "lists": 0, "bold": 0}
    assert ratings.features.features("~~~\n# h\n~~~\n# real") == {
        "tokens": 2, "headers": 1, "lists": 0, "bold": 0}


def test_series_tokenizer_and_index():
    s = pd.Series(["one two", "", "**x** y"], index=[10, 11, 12])
    f = ratings.features.features(s)
    assert list(f.index) == [10, 11, 12]
    assert f["tokens"].tolist() == [2, 0, 2]
    assert f["bold"].tolist() == [0, 0, 1]
    chars = ratings.features.features(s, tokenizer=lambda t: [c for c in t if not c.isspace()])
    assert chars["tokens"].tolist() == [6, 0, 6]
    assert ratings.features.features(["a b", "c"])["tokens"].tolist() == [2, 1]


def test_missing_text_named_by_row():
    with pytest.raises(InvalidVerdictsError, match=r"rows \[1\]"):
        ratings.features.features(pd.Series(["a", None, "b"]))
    with pytest.raises(InvalidVerdictsError, match="not text"):
        ratings.features.features(pd.Series(["a", 3]))


def test_add_features_refuses_overwrite():
    frame = pd.DataFrame({"x": ["a b"], "y": ["c"], "tokens_a": [1]})
    with pytest.raises(InvalidVerdictsError, match="tokens_a"):
        ratings.features.add_features(frame, "x", "y")
    with pytest.raises(InvalidVerdictsError, match="missing_col"):
        ratings.features.add_features(frame, "x", "missing_col")


def test_cli_writes_columns_that_fit_reads(tmp_path):
    from ratings.cli import main

    rows = []
    for k in range(60):
        long, short = "word " * (30 + k % 7), "word " * (5 + k % 3)
        a, b = f"m{k % 3}", f"m{(k + 1) % 3}"
        rows.append({"model_a": a, "model_b": b, "winner": "A" if k % 4 else "B",
                     "answer_a": "# H\n" + long if k % 2 else short,
                     "answer_b": short if k % 2 else "- i\n" + long})
    src = tmp_path / "answers.csv"
    pd.DataFrame(rows).to_csv(src, index=False)
    out = tmp_path / "features.csv"
    assert main(["style-features", str(src), "--text-a", "answer_a", "--text-b", "answer_b",
                 "--out", str(out)]) == 0
    got = pd.read_csv(out)
    want = ratings.features.features(pd.read_csv(src)["answer_a"])
    assert got["tokens_a"].tolist() == want["tokens"].tolist()
    assert got["headers_a"].tolist() == [1 if k % 2 else 0 for k in range(60)]
    assert got["lists_b"].tolist() == [0 if k % 2 else 1 for k in range(60)]
    r = ratings.fit(got, style=["tokens"], cluster=None)
    assert r.style["feature"].tolist() == ["tokens"]
    assert main(["style-features", str(src), "--text-a", "nope", "--text-b", "answer_b",
                 "--out", str(tmp_path / "x.csv")]) == 2
    assert main(["style-features", str(src), "--text-a", "answer_a", "--text-b", "answer_b",
                 "--out", str(src)]) != 0  # never over an input
