"""Readers for the logs other evaluation tools write, read as they are.

Each peer format is a small frozen spec with the options of its reading (``ArenaHard(
strong_weight=3)``, ``AlpacaEval(soft=True)``) that turns the tool's records into a verdict
table: the canonical columns (``model_a``, ``model_b``, ``winner``, ``task_id``, ``judge``) and
the tool's other fields as columns (``len_a`` / ``len_b``, ``category``, ``language``...).

* ``fastchat`` (:class:`FastChat`): FastChat / LMArena battles, ``clean_battle`` JSON and the
  public Parquet releases;
* ``arena-hard`` (:class:`ArenaHard`): arena-hard-auto judgments (v0.1 and v2 JSON Lines);
* ``alpaca-eval`` (:class:`AlpacaEval`): AlpacaEval ``annotations.json``.

:func:`peer_format` resolves a ``format=`` argument (a name or a spec); :func:`recognise` names
the format a table's columns are in, when they are unmistakably one tool's.
:func:`ratings.io.readers.read_file` converts a recognised (or named) format as it reads, so
every command and ``ratings.fit`` read these files directly.
"""

from ratings.io.formats.alpaca_eval import AlpacaEval
from ratings.io.formats.arena_hard import ArenaHard
from ratings.io.formats.base import PeerFormat
from ratings.io.formats.fastchat import FastChat
from ratings.io.formats.registry import FORMATS, describe, peer_format, recognise

__all__ = ["FORMATS", "AlpacaEval", "ArenaHard", "FastChat", "PeerFormat", "describe",
           "peer_format", "recognise"]
