"""Shared pieces of the verdict-reader tests (``test_io*.py``): a header, exact-byte writes,
the two CSV engines as a fixture, and the winners of a log.

Import :func:`csv_engine` into a test module to give its tests the ``engine`` fixture.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import ratings.io.readers as rio
from ratings.io import VerdictLog

__all__ = ["HEADER", "csv_engine", "winners", "write"]

HEADER = "model_a,model_b,winner,task_id\n"


def write(path: Path, text: str | bytes) -> Path:
    """Write exact bytes (no newline translation)."""
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


@pytest.fixture(params=["pyarrow", "c"], name="engine")
def csv_engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with the pyarrow CSV engine and again as if pyarrow were not installed."""
    if request.param == "c":
        monkeypatch.setattr(rio, "pa", None)
    return request.param


def winners(log: VerdictLog) -> list[str]:
    return log.verdicts["winner"].tolist()
