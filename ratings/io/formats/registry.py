"""The peer formats by name, and recognising one from a table's columns."""

from __future__ import annotations

from collections.abc import Iterable

from ratings.io.formats.alpaca_eval import AlpacaEval
from ratings.io.formats.arena_hard import ArenaHard
from ratings.io.formats.base import PeerFormat
from ratings.io.formats.fastchat import FastChat

__all__ = ["FORMATS", "TABLE_FORMATS", "describe", "peer_format", "recognise"]

#: ``--format`` names -> the format (with its default options).
FORMATS: dict[str, type[PeerFormat]] = {f.name: f for f in (FastChat, ArenaHard, AlpacaEval)}
_ALIASES = {"lmarena": "fastchat", "arena_hard": "arena-hard", "arenahard": "arena-hard",
            "alpaca_eval": "alpaca-eval", "alpacaeval": "alpaca-eval"}
#: The table formats of :func:`ratings.io.readers.read_file` (not peer formats).
TABLE_FORMATS = ("csv", "parquet", "jsonl")


def peer_format(spec: object) -> PeerFormat | None:
    """The peer format a ``format=`` argument names (a spec as given, a name with its
    defaults), or None for a table format or None."""
    if spec is None or isinstance(spec, PeerFormat):
        return spec
    if isinstance(spec, str):
        key = spec.strip().lower()
        if key in TABLE_FORMATS:
            return None
        key = _ALIASES.get(key, key)
        if key in FORMATS:
            return FORMATS[key]()
    names = ", ".join(repr(n) for n in (*TABLE_FORMATS, *FORMATS))
    raise ValueError(f"`format` must be one of {names} (or a spec such as "
                     f"ratings.io.formats.ArenaHard(strong_weight=3)); got {spec!r}.")


def recognise(labels: Iterable[object]) -> PeerFormat | None:
    """The peer format whose fields these column labels are (its defaults), or None."""
    names = [str(c) for c in labels]
    for kind in FORMATS.values():
        if kind.matches(names):
            return kind()
    return None


def describe() -> str:
    """The formats, one per line: ``name: title``."""
    return "\n".join(f"{name}: {kind.title}" for name, kind in FORMATS.items())
