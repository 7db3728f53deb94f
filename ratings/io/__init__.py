"""Read, validate and normalise verdict logs; write output files atomically.

:func:`read_verdicts` turns a CSV / TSV / Parquet / JSON Lines file or a DataFrame into a
:class:`VerdictLog` with the canonical columns (:data:`CANONICAL`). Every row that cannot be
used is reported by its 0-based data row number (header excluded) and a reason, either in an
:class:`~ratings.core.errors.InvalidVerdictsError` or in ``VerdictLog.rejected``; no row is dropped
silently.

The package, by job:

* :mod:`ratings.io.readers`: files to frames (:func:`~ratings.io.readers.read_file`,
  :func:`~ratings.io.readers.load_table`, :func:`~ratings.io.readers.format_of`, ...);
* :mod:`ratings.io.cells`: the cell and column toolkit every table reader shares
  (:func:`~ratings.io.cells.text`, :func:`~ratings.io.cells.booleans`,
  :func:`~ratings.io.cells.pick_columns`, ...);
* :mod:`ratings.io.formats`: the logs other tools write (FastChat / LMArena, arena-hard-auto,
  AlpacaEval) as verdict rows, by name (``format=``) or recognised from their fields;
* :mod:`ratings.io.verdicts`: verdict validation (:func:`read_verdicts`, :class:`VerdictLog`);
* :mod:`ratings.io.writers`: the one atomic writer, :func:`write_atomic`.

Output dtypes
-------------
Columns of repeated text values are categoricals whose categories are sorted
:data:`STRING_DTYPE` strings (pandas' default string dtype ``"str"``, pyarrow-backed when
pyarrow is installed): ``model_a`` and ``model_b`` (one shared set of categories, so their codes
compare), ``winner`` (categories ``"A"``, ``"B"``, ``"tie"``), ``task_id``, ``judge``, ``scope``.
Each is factorized once while validating, and :func:`ratings.aggregate` reuses the codes instead
of hashing the strings again; no category is left that only rejected rows used. ``match_id``
(mostly distinct) stays :data:`STRING_DTYPE`. ``failed_a`` and ``failed_b`` are numpy ``bool``.
The index is named ``"row"`` and holds the original row numbers.

Missing values
--------------
Text cells are stripped of surrounding whitespace. A cell that is then empty, or one of pandas'
usual missing-value markers (``NA``, ``N/A``, ``NaN``, ``nan``, ``NULL``, ``null``, ``None``,
``<NA>``, ``#N/A``, ...), is missing. Files are read with every field as a string, so ids such as
``"007"`` keep their leading zeros.
"""

from ratings.core.schema import CANONICAL, REQUIRED, STRING_DTYPE, WINNERS, Winner
from ratings.io.counts import read_counts
from ratings.io.readers import peek_columns
from ratings.io.verdicts import VerdictLog, read_verdicts, write_rejected
from ratings.io.writers import write_atomic

__all__ = [
    "CANONICAL",
    "REQUIRED",
    "STRING_DTYPE",
    "WINNERS",
    "VerdictLog",
    "Winner",
    "peek_columns",
    "read_counts",
    "read_verdicts",
    "write_atomic",
    "write_rejected",
]
