"""A published board as placement and drift read it: Elo, scale, and the covariance file.

``ratings fit --out board.csv`` writes the ratings table and, beside it, ``board.cov.csv``
(:func:`covariance_path`): the covariance of the board's Elo ratings in Elo points squared, one
row and one column per model (``model`` first, then a column per model, in the table's order).
With an anchor the anchor's row and column are zero, so each model's variance is that of its
difference to the anchor. :func:`read_board` reads both; a board without the file has no
covariance (a placement against it then ignores the reference's uncertainty, and says so).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.errors import DataWarning, InvalidVerdictsError, option
from ratings.core.schema import ELO_SCALE, require_columns
from ratings.io.cells import text
from ratings.io.readers import read_file
from ratings.io.writers import write_atomic
from ratings.result import Ratings
from ratings.scopes.scale import Scale, board_info, table_scale

__all__ = ["Board", "as_board", "covariance_frame", "covariance_path", "exact_strengths",
           "read_board", "write_covariance"]



@dataclass(frozen=True, eq=False)
class Board:
    """A board's models, Elo, scale and (when known) the covariance of its Elo (Elo^2).

    ``counts`` holds the board's verdict counts per model where the table had them; ``table``
    the ratings table as given; ``level`` the level of its intervals.
    """

    models: pd.Index
    elo: NDArray[np.float64]
    scale: Scale
    cov: NDArray[np.float64] | None
    table: pd.DataFrame
    source: str | None = None
    level: float = 0.95

    @property
    def strength(self) -> NDArray[np.float64]:
        """Log-strengths on the board's parametrisation (the anchor's 0, or centred)."""
        return exact_strengths(self.elo, self.scale.rating)

    def interval(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The published ``lower`` and ``upper`` (NaN where the table had none)."""
        out = []
        for c in ("lower", "upper"):
            col = self.table[c] if c in self.table else pd.Series(np.nan, index=self.table.index)
            out.append(pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64))
        return out[0], out[1]


def exact_strengths(elo: NDArray[np.float64], offset: float) -> NDArray[np.float64]:
    """Log-strengths ``s`` with ``offset + ELO_SCALE * s == elo`` exactly in floating point
    (a published Elo read back from a placed board is the published number, not one ulp off)."""
    elo = np.asarray(elo, dtype=np.float64)
    s = (elo - offset) / ELO_SCALE
    for _ in range(2):
        s = s + (elo - (offset + ELO_SCALE * s)) / ELO_SCALE
    off = offset + ELO_SCALE * s != elo
    for k in np.flatnonzero(off):  # the last ulps: walk towards the value
        for _ in range(64):
            got = offset + ELO_SCALE * s[k]
            if got == elo[k]:
                break
            s[k] = np.nextafter(s[k], np.inf if got < elo[k] else -np.inf)
    return s


def covariance_path(path: str | os.PathLike[str]) -> str:
    """The covariance file beside a ratings table: ``board.csv`` -> ``board.cov.csv``."""
    name = os.fspath(path)
    for ext in (".csv.gz", ".csv", ".tsv", ".parquet", ".json"):
        if name.lower().endswith(ext):
            return name[: -len(ext)] + ".cov.csv"
    return name + ".cov.csv"


def covariance_frame(r: Ratings) -> pd.DataFrame:
    """The covariance of ``r``'s Elo (Elo^2) as a table: ``model``, then one column per model.
    Models with an open interval (infinite variance) have empty cells."""
    cov = np.asarray(r.cov, dtype=np.float64) * ELO_SCALE**2
    bad = ~np.isfinite(r.se.to_numpy())
    cov = np.where(bad[:, None] | bad[None, :], np.nan, cov)
    names = [str(m) for m in r.models]
    out = pd.DataFrame(cov, columns=names)
    out.insert(0, "model", names)
    return out


def write_covariance(r: Ratings, table_path: str | os.PathLike[str], *,
                     inputs=()) -> str:  # fmt: skip
    """Write :func:`covariance_frame` of ``r`` beside the ratings table at ``table_path``
    (:func:`covariance_path`), atomically; returns the covariance file's path."""
    path = covariance_path(table_path)
    write_atomic(covariance_frame(r), path, inputs=list(inputs))
    return path


def read_board(path: str | os.PathLike[str], *, covariance: str | os.PathLike[str] | None = None,
               level: float | None = None, what: str = "Board") -> Board:  # fmt: skip
    """Read a ratings table written by ``ratings fit --out`` and its covariance file
    (``covariance``, default :func:`covariance_path` of ``path`` when it exists); ``what``
    names the board in messages.

    Raises
    ------
    FileNotFoundError
        The table, or a ``covariance`` named explicitly, does not exist.
    InvalidVerdictsError
        The table lacks ``model`` / ``elo`` or mixes scales, or the covariance file does not
        match it (other models, not square, not symmetric, negative variances).
    """
    name = os.fspath(path)
    if not os.path.exists(name):
        raise FileNotFoundError(f"{what} {name!r} not found (looked for "
                                f"{os.path.abspath(name)!r}).")
    table = read_file(name)
    if "scope" in table.columns and text(table["scope"]).nunique() > 1:
        scope = text(table["scope"])
        if (scope == "combined").any():
            table = table[(scope == "combined").to_numpy(dtype=bool, na_value=False)]
        else:
            raise InvalidVerdictsError(
                f"Board {name!r} holds ratings of several scopes; pass one scope's table or the "
                "combined headline.")
    cov_file = covariance_path(name) if covariance is None else os.fspath(covariance)
    cov = None
    if os.path.exists(cov_file):
        cov = _read_covariance(cov_file, text(table["model"]).tolist())
    elif covariance is not None:
        raise FileNotFoundError(f"The covariance file {cov_file!r} of {what.lower()} "
                                f"({option('reference_cov')}) not found.")
    return _table_board(table, cov, source=name, level=level)


def _read_covariance(path: str, models: list[str]) -> NDArray[np.float64]:
    frame = read_file(path)
    require_columns(frame, ["model"], f"the covariance file {path!r}")
    rows = text(frame["model"]).tolist()
    if sorted(rows) != sorted(models) or sorted(map(str, frame.columns[1:])) != sorted(models):
        missing = sorted(set(models) - set(rows))
        extra = sorted(set(rows) - set(models))
        raise InvalidVerdictsError(
            f"The covariance file {path!r} does not match its ratings table: models missing "
            f"{missing[:5]}, not on the board {extra[:5]}. Write both with one `ratings fit "
            "--out`.")
    values = frame.set_index(text(frame["model"])).drop(columns="model")
    values.columns = [str(c) for c in values.columns]
    cov = values.loc[models, models].apply(pd.to_numeric, errors="coerce").to_numpy(np.float64)
    finite = cov[np.isfinite(cov)]
    scale = max(float(np.abs(finite).max(initial=0.0)), 1.0)
    if np.isfinite(cov).all() and (np.abs(cov - cov.T).max(initial=0.0) > 1e-6 * scale
                                   or (np.diag(cov) < -1e-9 * scale).any()):
        raise InvalidVerdictsError(
            f"The covariance file {path!r} is not a covariance: it is not symmetric or has a "
            "negative variance.")
    return cov


def _table_board(table: pd.DataFrame, cov, *, source: str | None,
                 level: float | None) -> Board:  # fmt: skip
    require_columns(table, ["model", "elo"], "the reference board",
                    hint="Pass a table written by `ratings fit --out` (or a Ratings).")
    models = pd.Index(text(table["model"]).astype(object).to_numpy(), name=None)
    if models.hasnans or models.has_duplicates:
        raise InvalidVerdictsError("The reference board has a missing or duplicate model name.")
    elo = pd.to_numeric(table["elo"], errors="coerce").to_numpy(np.float64)
    if not np.isfinite(elo).all():
        raise InvalidVerdictsError(
            f"The reference board has Elo values that are not finite numbers (models "
            f"{list(models[~np.isfinite(elo)][:5])}).")
    scale = table_scale(table, "The reference board")
    if scale is None:
        raise InvalidVerdictsError(
            "The reference board records no scale (no `anchor` / `anchor_rating` columns): "
            "write it with `ratings fit --out` of this version, so that new models are placed "
            "on its scale.")
    if scale.anchor is not None and scale.anchor not in set(models):
        raise InvalidVerdictsError(f"The reference board's anchor {scale.anchor!r} is not on it.")
    if cov is not None and not np.isfinite(cov).all():
        bad = sorted({str(models[i]) for i in np.argwhere(~np.isfinite(cov))[:, 0]})
        warnings.warn(
            f"The reference board's covariance is not finite for {bad[:5]} (open intervals): "
            "the placement ignores the reference's uncertainty.", DataWarning, stacklevel=4)
        cov = None
    if level is None and "level" in table.columns:
        lv = pd.to_numeric(table["level"], errors="coerce").dropna()
        level = float(lv.iloc[0]) if len(lv) else None
    return Board(models=models, elo=elo, scale=scale, cov=cov,
                 table=table.reset_index(drop=True), source=source,
                 level=0.95 if level is None else level)  # fmt: skip


def as_board(reference, *, covariance=None, what: str = "Board") -> Board:
    """A :class:`Board` from a :class:`~ratings.Ratings`, a ratings table (DataFrame; its
    covariance as ``covariance``, Elo^2, a DataFrame labelled by model or an array in the
    table's order) or the path of a table written by ``ratings fit --out``."""
    if isinstance(reference, Board):
        return reference
    if isinstance(reference, Ratings):
        r = reference
        ci = r.conf_int()  # the table's columns a board needs (no rank intervals: faster)
        table = pd.DataFrame({"model": ci.index.astype(object), "elo": r.elo[ci.index].to_numpy(),
                              "se": r.se[ci.index].to_numpy(), "lower": ci["lower"].to_numpy(),
                              "upper": ci["upper"].to_numpy()}).assign(**board_info(r))
        order = r.models.get_indexer(table["model"])
        cov = np.asarray(r.cov, dtype=np.float64)[np.ix_(order, order)] * ELO_SCALE**2
        if not np.isfinite(r.se.to_numpy()).all():
            warnings.warn("The reference has open intervals: the placement ignores the "
                          "reference's uncertainty.", DataWarning, stacklevel=3)
            cov = None
        return Board(models=pd.Index(table["model"].astype(object)),
                     elo=table["elo"].to_numpy(np.float64), scale=Scale(r.anchor, r.offset),
                     cov=cov, table=table, source=None, level=r.level)  # fmt: skip
    if isinstance(reference, pd.DataFrame):
        cov = None
        if covariance is not None:
            names = text(reference["model"]).tolist()
            if isinstance(covariance, pd.DataFrame):
                c = covariance.set_index("model") if "model" in covariance else covariance
                c.index, c.columns = c.index.astype(str), c.columns.astype(str)
                cov = c.loc[names, names].to_numpy(np.float64)
            else:
                cov = np.asarray(covariance, dtype=np.float64)
                if cov.shape != (len(names), len(names)):
                    raise ValueError(f"The reference covariance must be {len(names)} x "
                                     f"{len(names)} (the table's models); got {cov.shape}.")
        return _table_board(reference, cov, source=None, level=None)
    if isinstance(reference, str | os.PathLike):
        return read_board(reference, covariance=covariance, what=what)
    raise TypeError("The reference must be a Ratings, a ratings table (DataFrame) or the path "
                    f"of one; got {type(reference).__name__!r}.")
