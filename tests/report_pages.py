"""Shared fixtures of the report tests: small simulated boards, a hostile set of names, and a
parser that reads a page's tables back."""

from __future__ import annotations

from html.parser import HTMLParser

import numpy as np
import pandas as pd

import ratings
from ratings.datasets.simulate import random_matches, simulate_verdicts

#: Names that would run or break markup if they were not escaped.
HOSTILE_MODEL = '<script>alert("m")</script>'
HOSTILE_JUDGE = "<img src=x onerror=alert(1)>"
MODELS = [HOSTILE_MODEL, "A & B \"quoted\"", "plain", "</table><b>bold</b>", "zeta"]


def verdicts(models=MODELS, *, n=1500, judges=("j1", "j2", HOSTILE_JUDGE), seed=1):
    """A simulated verdict log over ``models`` and ``judges``."""
    strengths = pd.Series(np.linspace(1.0, -1.0, len(models)), index=list(models))
    matches = random_matches(list(models), n, n_tasks=60, judges=list(judges), seed=seed)
    eta = dict(zip(judges, np.linspace(0.95, 0.8, len(judges)), strict=True))
    return simulate_verdicts(matches, strengths, judge_eta=eta, tie_rate=0.1, seed=seed)


def fit(models=MODELS, *, n=1500, **kwargs):
    return ratings.fit(verdicts(models, n=n), anchor=f"{models[2]}=1000", **kwargs)


class Tables(HTMLParser):
    """Every ``<table>``'s id and rows of cell text; every start tag seen (name, attrs)."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.tables: list[dict] = []
        self.tags: list[tuple[str, dict]] = []
        self._cell: list[str] | None = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "table":
            self.tables.append({"id": dict(attrs).get("id"), "rows": []})
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])
        elif tag in ("td", "th") and self.tables:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1]["rows"][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)

    def table(self, table_id: str) -> list[list[str]]:
        return next(t["rows"] for t in self.tables if t["id"] == table_id)
