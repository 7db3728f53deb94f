"""What every peer-format reader shares: the spec's interface and the record-level helpers."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from ratings.core.errors import InvalidVerdictsError, format_rows, option
from ratings.core.schema import require_columns

__all__ = ["PeerFormat", "nested_rows", "plain", "require_fields"]


@dataclass(frozen=True)
class PeerFormat:
    """A peer tool's log format: how its records become verdict rows.

    Subclasses set :attr:`name` (the ``--format`` value), :attr:`title` (for messages),
    :attr:`columns` (the verdict table's columns, for a look at a file without reading it) and
    implement :meth:`matches` and :meth:`convert`.
    """

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    columns: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def matches(cls, labels: Iterable[object]) -> bool:
        """True when a table with these column labels is unmistakably in this format."""
        raise NotImplementedError

    def for_soft(self) -> PeerFormat:
        """The format read for a soft-outcome fit (``winner`` as A's score where the tool
        records one; the format itself where it records verdicts only)."""
        return self

    def output_columns(self, labels: Iterable[object]) -> list[str]:
        """The columns a table with the fields ``labels`` is read as."""
        return list(self.columns)

    def convert(self, frame: pd.DataFrame, prefix: str = "") -> pd.DataFrame:
        """The tool's records (as read: one row each) as verdict rows.

        ``prefix`` (``"'path': "``) starts error messages. Rows are never dropped: a record
        whose verdict cannot be read keeps its raw value (or a missing one) in ``winner``, so
        that validation rejects it by row with its reason.
        """
        raise NotImplementedError

    def summary(self, verdicts: pd.DataFrame) -> str:
        """One line: what was read (format, verdicts, models, judges)."""
        models = pd.unique(pd.concat([verdicts["model_a"], verdicts["model_b"]]).dropna())
        judges = verdicts["judge"].dropna().unique() if "judge" in verdicts else []
        who = (f"judge {judges[0]!r}" if len(judges) == 1
               else f"{len(judges)} judges" if len(judges) else "no judge column")
        return (f"read as {self.title} (--format {self.name}): {len(verdicts):,} verdicts, "
                f"{len(models)} models, {who}")


def require_fields(frame: pd.DataFrame, fields: Iterable[str], title: str,
                   prefix: str) -> None:  # fmt: skip
    """Refuse a table that lacks one of the format's fields, naming them all."""
    require_columns(frame, fields, f"the records read as {title}", prefix=prefix,
                    hint=f"Pass the {option('format')} of the tool that wrote the file, or "
                         "none (then the file's own columns are read).")


def plain(values: pd.Series) -> pd.Series:
    """Values as plain Python objects (text from Parquet categoricals, NaN where missing)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        values = values.astype(object)
    return values.reset_index(drop=True)


def nested_rows(values: pd.Series, kinds: tuple[type, ...], what: str, prefix: str) -> None:
    """Refuse cells that are not of ``kinds`` (e.g. ``games`` that are not lists), by row."""
    bad = np.flatnonzero(~values.map(lambda v: isinstance(v, kinds)).to_numpy(dtype=bool))
    if bad.size:
        raise InvalidVerdictsError(
            f"{prefix}{bad.size} record(s) have no {what} (rows {format_rows(bad)}, 0-based "
            "records of the file).",
            rows=pd.DataFrame({"row": bad.astype(np.int64), "reason": f"no {what}"}))
