"""How a board moved between two fits (:func:`drift`): per model the Elo change, that change
against its standard error, rank changes, models new and gone, and the anchor.

Both boards are read as :class:`~ratings.stability.board.Board` (a fit, a ratings table, or a
table's path with its covariance file). When the anchors differ and the old anchor is on the
new board, the new board is moved onto the old scale first (its Elo shifted so the old anchor
sits at its old rating; its covariance re-anchored on that model), and the note says so.

The z of a change is ``(elo_new - elo_old) / sqrt(se_old^2 + se_new^2)``: each fit's own
variance of that model's rating (relative to the anchor), the two fits treated as independent.
A refit that reuses the old verdicts is positively correlated with the old fit, so this z is
conservative there (the variance of the change is smaller, about ``se_old^2 - se_new^2`` when
the new fit adds verdicts to the old ones; Hausman 1978): a model with ``|z| > 2`` moved more
than either fit's noise explains. ``beyond_interval`` is the plainer check a frozen registry
uses: the new Elo outside the old published interval.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.scopes.scale import Scale
from ratings.stability.board import Board, as_board

__all__ = ["DRIFT_COLUMNS", "Drift", "drift", "frozen_moves"]

#: Columns of :attr:`Drift.table`.
DRIFT_COLUMNS = ("model", "status", "elo_old", "elo_new", "change", "se_old", "se_new",
                 "se_change", "z", "lower_old", "upper_old", "lower_new", "upper_new",
                 "beyond_interval", "rank_old", "rank_new", "rank_change")


@dataclass(frozen=True, eq=False)
class Drift:
    """The drift between two boards: :attr:`table` (one row per model, :data:`DRIFT_COLUMNS`,
    by new rank then the models gone), the two scales, the shift applied to the new board
    (Elo) and :attr:`notes`, sentences for a reader."""

    table: pd.DataFrame
    scale_old: Scale
    scale_new: Scale
    shift: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def new(self) -> list[str]:
        """Models on the new board only."""
        return self.table.loc[self.table["status"] == "new", "model"].tolist()

    @property
    def gone(self) -> list[str]:
        """Models on the old board only."""
        return self.table.loc[self.table["status"] == "gone", "model"].tolist()

    def moved(self, z: float = 2.0) -> pd.DataFrame:
        """The rows of models on both boards with ``|z| > z``."""
        t = self.table
        return t[(t["status"] == "kept") & (t["z"].abs() > z)]

    def summary(self) -> str:
        """A text report: the notes, then the table."""
        shown = self.table[["model", "status", "elo_old", "elo_new", "change", "se_change", "z",
                            "rank_old", "rank_new", "rank_change"]]
        text = shown.to_string(index=False, float_format="{:.1f}".format, na_rep="")
        return "\n".join([*self.notes, "", text])

    def plot(self, path: str | os.PathLike[str] | None = None, **options):
        """The band chart of old against new (:func:`ratings.plot.drift.plot_drift`); saved to
        ``path`` when given. Returns the Axes."""
        from ratings.plot.bands import save_figure
        from ratings.plot.drift import plot_drift
        from ratings.plot.figures import bare_axes

        if path is not None and "ax" not in options:  # a figure outside pyplot, saved
            options["new_axes"] = bare_axes
        ax = plot_drift(self.table, notes=self.notes, **options)
        if path is not None:
            save_figure(ax, path)
        return ax


def drift(old, new, *, old_cov=None, new_cov=None) -> Drift:
    """Compare two boards of one benchmark.

    Parameters
    ----------
    old, new : Ratings, DataFrame or path
        The published board and the refit (or a placement against it): fits, ratings tables
        with ``model``, ``elo`` (``se``, ``lower``, ``upper``, ``anchor``, ``anchor_rating``
        as ``ratings fit --out`` writes them), or their paths.
    old_cov, new_cov : optional
        Covariances (Elo^2) for tables given as DataFrames (see
        :func:`ratings.stability.board.as_board`).

    Returns
    -------
    Drift
    """
    a = as_board(old, covariance=old_cov, what="The old board")
    b = as_board(new, covariance=new_cov, what="The new board")
    notes: list[str] = []
    shift, b_elo, b_se = 0.0, b.elo.copy(), _se(b)
    b_lo, b_hi = b.interval()
    if not a.scale.same(b.scale):
        if a.scale.anchor is not None and a.scale.anchor in set(b.models):
            k = int(b.models.get_loc(a.scale.anchor))
            shift = a.scale.rating - float(b.elo[k])
            b_elo = b_elo + shift
            b_lo, b_hi = b_lo + shift, b_hi + shift
            if b.cov is not None:
                b_se = np.sqrt(np.clip(_reanchored(b.cov, k).diagonal(), 0.0, None))
                width = _se(b)
                ratio = np.where(width > 0, b_se / np.where(width > 0, width, 1.0), np.nan)
                b_lo = np.where(np.isfinite(ratio), b_elo - (b.elo - b.interval()[0]) * ratio,
                                np.nan)
                b_hi = np.where(np.isfinite(ratio), b_elo + (b.interval()[1] - b.elo) * ratio,
                                np.nan)
            else:
                b_se = np.full(len(b.models), np.nan)
                b_lo = b_hi = np.full(len(b.models), np.nan)
            notes.append(f"Anchor changed: old board {a.scale}, new board {b.scale}; the new "
                         f"board is shifted by {shift:+.1f} Elo onto the old scale"
                         + ("" if b.cov is not None else " (its intervals, relative to its own "
                            "anchor, are not carried over)") + ".")
        else:
            notes.append(f"Anchor changed: old board {a.scale}, new board {b.scale}, and the "
                         "old anchor is not on the new board: Elo values are on different "
                         "scales and their changes mean little. Refit with the old anchor.")
    table = _table(a, b, b_elo, b_se, b_lo, b_hi)
    kept = table["status"] == "kept"
    n_new, n_gone = int((table["status"] == "new").sum()), int((table["status"] == "gone").sum())
    notes.insert(0, f"{int(kept.sum())} models on both boards, {n_new} new, {n_gone} gone.")
    if kept.any():
        big = table.loc[kept & (table["z"].abs() > 2.0), "model"].tolist()
        beyond = table.loc[kept & table["beyond_interval"].fillna(False).astype(bool),
                           "model"].tolist()
        notes.append(f"Largest move {table.loc[kept, 'change'].abs().max():.1f} Elo; "
                     f"|z| > 2: {big if big else 'none'}; outside their old interval: "
                     f"{beyond if beyond else 'none'}.")
    return Drift(table=table, scale_old=a.scale, scale_new=b.scale, shift=shift, notes=notes)


def _se(board: Board) -> NDArray[np.float64]:
    if board.cov is not None:
        return np.sqrt(np.clip(np.diag(board.cov), 0.0, None))
    if "se" in board.table:
        return pd.to_numeric(board.table["se"], errors="coerce").to_numpy(np.float64)
    return np.full(len(board.models), np.nan)


def _reanchored(cov: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    """The covariance of ``s - s_k`` from that of ``s``."""
    row = cov[k]
    return cov - row[None, :] - row[:, None] + cov[k, k]


def _ranks(elo: NDArray[np.float64]) -> NDArray[np.int64]:
    return pd.Series(elo).rank(ascending=False, method="min").to_numpy(np.int64)


def _table(a: Board, b: Board, b_elo, b_se, b_lo, b_hi) -> pd.DataFrame:
    a_lo, a_hi = a.interval()
    old = pd.DataFrame({"model": a.models.astype(str), "elo_old": a.elo, "se_old": _se(a),
                        "lower_old": a_lo, "upper_old": a_hi, "rank_old": _ranks(a.elo)})
    new = pd.DataFrame({"model": b.models.astype(str), "elo_new": b_elo, "se_new": b_se,
                        "lower_new": b_lo, "upper_new": b_hi, "rank_new": _ranks(b_elo)})
    t = old.merge(new, on="model", how="outer", indicator=True)
    t["status"] = t["_merge"].map({"both": "kept", "left_only": "gone", "right_only": "new"})
    t["change"] = t["elo_new"] - t["elo_old"]
    t["se_change"] = np.sqrt(t["se_old"] ** 2 + t["se_new"] ** 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        t["z"] = np.where(t["se_change"] > 0, t["change"] / t["se_change"], np.nan)
    beyond = (t["elo_new"] < t["lower_old"]) | (t["elo_new"] > t["upper_old"])
    t["beyond_interval"] = beyond.where(t["lower_old"].notna() & (t["status"] == "kept"))
    t["rank_old"] = t["rank_old"].astype("Int64")
    t["rank_new"] = t["rank_new"].astype("Int64")
    t["rank_change"] = t["rank_old"] - t["rank_new"]  # positive: moved up
    order = np.lexsort((t["model"].to_numpy(), t["elo_old"].fillna(-np.inf).to_numpy() * -1,
                        t["elo_new"].isna().to_numpy(), -t["elo_new"].fillna(-np.inf).to_numpy()))
    return t.iloc[order][list(DRIFT_COLUMNS)].reset_index(drop=True)


def frozen_moves(registry: pd.DataFrame, table: pd.DataFrame) -> list[str]:
    """Lines for the registry's freeze output: frozen models whose rating in ``table`` (a
    refit on the registry's scale) lies outside the interval frozen for them."""
    reg = registry.set_index(registry["model"].astype(str))
    elo = pd.Series(pd.to_numeric(table["elo"], errors="coerce").to_numpy(),
                    index=table["model"].astype(str))
    shared = reg.index.intersection(elo.index)
    lo, hi = reg.loc[shared, "lower"].astype(float), reg.loc[shared, "upper"].astype(float)
    now = elo[shared]
    out = []
    for m in shared[((now < lo) | (now > hi)).to_numpy()]:
        out.append(f"{m}: frozen at {reg.loc[m, 'elo']:.1f} [{lo[m]:.1f}, {hi[m]:.1f}]; the "
                   f"refit puts it at {now[m]:.1f} ({now[m] - reg.loc[m, 'elo']:+.1f} Elo), "
                   "outside its frozen interval")
    return out

