"""Soft outcomes: verdicts whose ``winner`` is A's score y in [0, 1], aggregated into the
row layout so that the Bradley-Terry row terms are those of the Bernoulli quasi-likelihood.

The quasi-log-likelihood of a verdict is y log p + (1 - y) log(1 - p) (Papke & Wooldridge
1996): its score is y - p and its information p (1 - p), whatever y is, so the estimate and the
clustered sandwich need only each row's summed score sum(y) and count n; the per-verdict
sandwich (HC0) also needs sum((y - p)^2), i.e. sum(y^2). A verdict of score y enters the row
counts (wins of A, wins of B, ties) as

    (y (2y - 1), (1 - y)(1 - 2y), 4 y (1 - y)),

which sum to 1 and give wins + ties / 2 = y and wins + ties / 4 = y^2: the row terms of
:mod:`ratings.kernels.fit` (which read a tie as the outcome 1/2) are then exactly the
quasi-likelihood's, its per-verdict meat included. Scores 1, 0 and 1/2 give (1, 0, 0),
(0, 1, 0) and (0, 0, 1): a log of A, B and ties is aggregated exactly as without the option.
A fractional score makes a negative count on one side; the counts reported per model are
therefore recomputed from the scores (:func:`soft_counts`).

Logs reduced where they lie (DuckDB, Dask: :mod:`ratings.data.sql`, :mod:`ratings.data.dask`)
read with ``soft=True`` come back as a counts table whose ``wins_a``, ``wins_b`` and ``ties``
count the verdicts scored 1, 0 and 1/2, with three more columns for the fractional ones
(:data:`SOFT_COLUMNS`: their number, the sum of their scores and of their squares): what the
quasi-likelihood and its per-verdict sandwich need (:func:`soft_table_data`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ratings.core.errors import InvalidVerdictsError, format_rows, option
from ratings.data.comparisons import Comparisons, aggregate
from ratings.data.scores import SOFT_COLUMNS, graded_sums, is_graded
from ratings.kernels.engine import Engine

__all__ = ["SOFT_COLUMNS", "check_not_soft", "check_not_soft_table", "check_soft_bootstrap",
           "graded_sums", "is_graded", "is_soft_table", "soft_aggregate", "soft_counts",
           "soft_table_counts", "soft_table_data", "soft_weights"]



def soft_weights(y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (wins of A, wins of B, ties) a verdict of score ``y`` counts for (see the module)."""
    y = np.asarray(y, dtype=np.float64)
    return y * (2.0 * y - 1.0), (1.0 - y) * (1.0 - 2.0 * y), 4.0 * y * (1.0 - y)


def soft_aggregate(frame: pd.DataFrame, *, cluster: str | None,
                   engine: Engine = "auto") -> Comparisons:  # fmt: skip
    """:func:`ratings.aggregate` of verdicts with a ``score`` column (A's score): rows of score
    1, 0 or 1/2 as they are, each fractional one as its three weighted outcomes."""
    y = frame["score"].to_numpy(dtype=np.float64)
    graded = np.flatnonzero(is_graded(y))
    if not graded.size:
        return aggregate(frame, cluster=cluster, engine=engine)
    plain = frame.drop(columns="score")
    parts = [plain.iloc[np.flatnonzero(~is_graded(y))]]
    weights = [np.ones(len(parts[0]))]
    for code, w in zip(("A", "B", "tie"), soft_weights(y[graded]), strict=True):
        part = plain.iloc[graded].copy()
        part["winner"] = pd.Categorical(np.full(graded.size, code),
                                        dtype=plain["winner"].dtype)  # fmt: skip
        parts.append(part)
        weights.append(w)
    return aggregate(pd.concat(parts, ignore_index=True), cluster=cluster, engine=engine,
                     weights=np.concatenate(weights))  # fmt: skip


def soft_counts(frame: pd.DataFrame, models: pd.Index, forfeits) -> pd.DataFrame:
    """Per model: ``n_matches``, ``wins`` (score 1), ``losses`` (score 0), ``ties`` (1/2),
    ``graded`` (other scores), ``score`` (the sum of its scores) and ``forfeits``."""
    y = frame["score"].to_numpy(dtype=np.float64)
    a = models.get_indexer(frame["model_a"].astype(object))
    b = models.get_indexer(frame["model_b"].astype(object))
    m = len(models)

    def per_model(mask_a, mask_b, wa=None, wb=None):
        return (np.bincount(a[mask_a], None if wa is None else wa[mask_a], m)
                + np.bincount(b[mask_b], None if wb is None else wb[mask_b], m))

    ones = np.ones(y.size, dtype=bool)
    out = pd.DataFrame({
        "n_matches": per_model(ones, ones).astype(np.int64),
        "wins": per_model(y == 1.0, y == 0.0).astype(np.int64),
        "losses": per_model(y == 0.0, y == 1.0).astype(np.int64),
        "ties": per_model(y == 0.5, y == 0.5).astype(np.int64),
        "graded": per_model(is_graded(y), is_graded(y)).astype(np.int64),
        "score": per_model(ones, ones, y, 1.0 - y),
    }, index=models)  # fmt: skip
    out["forfeits"] = forfeits
    return out


def check_not_soft(frame: pd.DataFrame) -> None:
    """Refuse a log read with soft scores (a ``score`` column with fractional values) in a fit
    without the option, naming the rows."""
    if "score" not in frame.columns:
        return
    y = frame["score"].to_numpy(dtype=np.float64)
    graded = np.flatnonzero(is_graded(y))
    if graded.size:
        raise InvalidVerdictsError(
            f"{graded.size} verdict(s) have a fractional winner score (rows "
            f"{format_rows(frame.index.to_numpy()[graded])}): pass {option('soft', True)} to "
            "fit A's scores in [0, 1].")  # fmt: skip


def check_soft_bootstrap(frame: pd.DataFrame | None, *, clustered: bool) -> None:
    """Refuse the per-verdict bootstrap of fractional scores: it resamples the rows' outcome
    counts, which for a fractional score are weights of a verdict's parts, not verdicts (the
    cluster bootstrap resamples whole clusters and stays valid)."""
    if clustered or frame is None:
        return
    if is_soft_table(frame):
        graded = (frame["graded"].to_numpy(dtype=np.float64) > 0).any()
    else:
        graded = "score" in frame.columns and is_graded(frame["score"].to_numpy(np.float64)).any()
    if graded:
        raise ValueError(
            "The per-verdict bootstrap resamples win, loss and tie counts, which fractional "
            f"scores do not have: cluster the bootstrap ({option('cluster')}, e.g. by task) "
            f"or use the sandwich interval ({option('ci', 'sandwich')}).")  # fmt: skip


def is_soft_table(counts: pd.DataFrame) -> bool:
    """A counts table with fractional scores (:data:`SOFT_COLUMNS`)?"""
    return all(c in counts.columns for c in SOFT_COLUMNS)


def check_not_soft_table(counts: pd.DataFrame) -> None:
    """Refuse a soft counts table holding fractional scores in a fit without the option."""
    graded = counts["graded"].to_numpy(dtype=np.float64)
    if (graded > 0).any():
        raise InvalidVerdictsError(
            f"{graded.sum():,.0f} verdict(s) have a fractional winner score (counted in "
            f"{np.count_nonzero(graded > 0)} row(s) of the counts table): pass "
            f"{option('soft', True)} to fit A's scores in [0, 1].")  # fmt: skip


def soft_table_data(counts: pd.DataFrame, *, cluster: str | None,
                    engine: Engine = "auto") -> Comparisons:  # fmt: skip
    """:class:`Comparisons` of a soft counts table: each row's fractional verdicts enter as
    :func:`soft_weights` summed, sum y (2y - 1), sum (1 - y)(1 - 2y), sum 4 y (1 - y), beside its
    whole counts (so the rows equal :func:`soft_aggregate`'s of the same verdicts)."""
    g, sy, sq = (counts[c].to_numpy(dtype=np.float64) for c in SOFT_COLUMNS)
    keys = counts.drop(columns=["wins_a", "wins_b", "ties", "forfeits", *SOFT_COLUMNS],
                       errors="ignore")  # fmt: skip
    weights = (counts["wins_a"].to_numpy(dtype=np.float64) + 2.0 * sq - sy,
               counts["wins_b"].to_numpy(dtype=np.float64) + g - 3.0 * sy + 2.0 * sq,
               counts["ties"].to_numpy(dtype=np.float64) + 4.0 * (sy - sq))
    frame = pd.concat([keys.assign(winner=pd.Categorical(np.full(len(keys), code),
                                                         categories=["A", "B", "tie"]))
                       for code in ("A", "B", "tie")], ignore_index=True)  # fmt: skip
    w = np.concatenate(weights)
    keep = w != 0.0
    return aggregate(frame[keep].reset_index(drop=True), cluster=cluster, engine=engine,
                     weights=w[keep])  # fmt: skip


def soft_table_counts(counts: pd.DataFrame, models: pd.Index, forfeits) -> pd.DataFrame:
    """:func:`soft_counts` of a soft counts table (per model: its matches, wins, losses, ties,
    fractional verdicts and summed score)."""
    a = models.get_indexer(counts["model_a"].astype(object))
    b = models.get_indexer(counts["model_b"].astype(object))
    m = len(models)
    col = {c: counts[c].to_numpy(dtype=np.float64)
           for c in ("wins_a", "wins_b", "ties", *SOFT_COLUMNS)}  # fmt: skip

    def per_model(wa, wb):
        return np.bincount(a, wa, m) + np.bincount(b, wb, m)

    n = col["wins_a"] + col["wins_b"] + col["ties"] + col["graded"]
    score_a = col["wins_a"] + 0.5 * col["ties"] + col["graded_score"]
    out = pd.DataFrame({
        "n_matches": np.rint(per_model(n, n)).astype(np.int64),
        "wins": np.rint(per_model(col["wins_a"], col["wins_b"])).astype(np.int64),
        "losses": np.rint(per_model(col["wins_b"], col["wins_a"])).astype(np.int64),
        "ties": np.rint(per_model(col["ties"], col["ties"])).astype(np.int64),
        "graded": np.rint(per_model(col["graded"], col["graded"])).astype(np.int64),
        "score": per_model(score_a, n - score_a),
    }, index=models)  # fmt: skip
    out["forfeits"] = forfeits
    return out
