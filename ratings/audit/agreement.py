"""Agreement between judges, and between each judge and the board.

Between judges
--------------
An item is one (task, pair of models) judged by two or more judges. For two judges k and l,
each item adds the cross table of their verdicts on it, over the categories "first model of
the pair wins", "second wins", "tie": with one verdict each that is a single cell; with several
(e.g. both A/B orders), every pairing of k's with l's verdicts, weighted so the item counts
once. The observed agreement p_o is the share of the table on its diagonal; Cohen's kappa
(Cohen 1960) is (p_o - p_e) / (1 - p_e), with p_e the agreement expected from the two judges'
marginal shares. The order of the models within a pair is arbitrary, so the table is
symmetrised (each item counted in both orders) before p_e is taken: a judge's marginals are
then its tie share and its non-tie share split evenly, and kappa does not depend on how the
models are named. Intervals are percentile intervals of a seeded bootstrap that resamples tasks
(verdicts on one task are dependent), as :func:`ratings.inference.covariance.bootstrap_draws` does
for
the ratings.

With the board
--------------
Each judge's agreement with the board is the share of its verdicts that name the favourite of
the fitted strengths (a tie counts one half). The favourite comes from the fit of all verdicts,
this judge's included, so a judge that gives many of the verdicts pulls the board towards
itself; the interval is the ratio estimator's clustered (delta-method) interval, which treats
the favourites as fixed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.errors import option
from ratings.core.schema import DETERMINISTIC_JUDGE
from ratings.core.tdist import critical_value
from ratings.data.slots import SlotCounts

__all__ = ["AGREEMENT_COLUMNS", "board_agreement", "judge_agreement", "self_judged"]

AGREEMENT_COLUMNS = ["judge_a", "judge_b", "n_items", "n_tasks", "agreement",
                     "agreement_lower", "agreement_upper", "kappa", "kappa_lower",
                     "kappa_upper"]  # fmt: skip
_SWAP = np.array([1, 0, 2])  # category of the same verdict with the pair's models swapped
_DRAWS_PER_BLOCK = 200


def _canonical(slots: SlotCounts):
    """(cluster, judge, i, j) with i < j and the counts seen from i: wins of i, of j, ties."""
    flip = slots.ii > slots.jj
    i, j = np.where(flip, slots.jj, slots.ii), np.where(flip, slots.ii, slots.jj)
    wi, wj = np.where(flip, slots.wj, slots.wi), np.where(flip, slots.wi, slots.wj)
    m, nj = len(slots.models), len(slots.judges)
    key = ((slots.cluster * nj + slots.judge) * m + i) * m + j
    uniq, row = np.unique(key, return_inverse=True)
    rest, row_j = np.divmod(uniq, m)
    rest, row_i = np.divmod(rest, m)
    row_cluster, row_judge = np.divmod(rest, nj)
    sums = (np.bincount(row, w, uniq.size) for w in (wi, wj, slots.tt))
    return row_cluster, row_judge, row_i, row_j, *sums


def judge_agreement(slots: SlotCounts, *, level: float = 0.95, n_boot: int = 1000,
                    seed: int = 0) -> pd.DataFrame:  # fmt: skip
    """Agreement and Cohen's kappa per pair of judges on shared (task, pair) items.

    Returns one row per pair of judges with shared items (:data:`AGREEMENT_COLUMNS`); the
    judge-free ``deterministic`` judge is left out. Intervals need two tasks or more (else NaN).
    """
    if int(n_boot) != n_boot or n_boot < 2:
        raise ValueError(f"{option('n_boot')} must be an integer >= 2; got {n_boot!r}.")
    cluster, judge, i, j, wi, wj, tt = _canonical(slots)
    n = wi + wj + tt
    keep = np.asarray(slots.judges != DETERMINISTIC_JUDGE)[judge] & (n > 0)
    m, g = len(slots.models), slots.n_clusters
    frame = pd.DataFrame({"item": (cluster * m + i) * m + j, "cluster": cluster, "judge": judge,
                          "p0": wi / n, "p1": wj / n, "p2": tt / n})[keep]  # fmt: skip
    rng = np.random.default_rng(seed)
    weights = _cluster_draws(rng, g, int(n_boot)) if g >= 2 else None
    out = []
    judges = np.unique(frame["judge"])
    for x, k in enumerate(judges):
        for l_ in judges[x + 1:]:
            pair = frame[frame["judge"] == k].merge(frame[frame["judge"] == l_], on="item",
                                                    suffixes=("_k", "_l"))  # fmt: skip
            if pair.empty:
                continue
            pk = pair[["p0_k", "p1_k", "p2_k"]].to_numpy()
            pl = pair[["p0_l", "p1_l", "p2_l"]].to_numpy()
            cells = (pk[:, :, None] * pl[:, None, :]).reshape(-1, 9)
            per_task = np.stack([np.bincount(pair["cluster_k"], cells[:, c], g)
                                 for c in range(9)], axis=1)  # fmt: skip
            po, kappa = _agreement_stats(per_task.sum(axis=0)[None, :])
            row = {"judge_a": str(slots.judges[k]), "judge_b": str(slots.judges[l_]),
                   "n_items": len(pair), "n_tasks": int((per_task.sum(axis=1) > 0).sum()),
                   "agreement": po[0], "kappa": kappa[0]}  # fmt: skip
            row.update(_boot_intervals(per_task, weights, level))
            out.append(row)
    return pd.DataFrame(out, columns=AGREEMENT_COLUMNS)


def _agreement_stats(tables: NDArray[np.float64]) -> tuple[NDArray, NDArray]:
    """Observed agreement and kappa of (B, 9) cross tables (rows: judge k's category)."""
    t = tables.reshape(-1, 3, 3)
    total = t.sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        po = np.trace(t, axis1=1, axis2=2) / total
        sym = (t + t[:, _SWAP][:, :, _SWAP]) / 2.0  # each item also in the other model order
        pk = sym.sum(axis=2) / total[:, None]
        pl = sym.sum(axis=1) / total[:, None]
        pe = (pk * pl).sum(axis=1)
        kappa = (po - pe) / (1.0 - pe)
    return po, kappa


def _cluster_draws(rng: np.random.Generator, g: int, n_boot: int) -> list[NDArray[np.float64]]:
    """Multinomial task counts of ``n_boot`` cluster-bootstrap resamples, in blocks."""
    blocks, left = [], n_boot
    while left:
        b = min(left, _DRAWS_PER_BLOCK)
        blocks.append(rng.multinomial(g, np.full(g, 1.0 / g), size=b).astype(np.float64))
        left -= b
    return blocks


def _boot_intervals(per_task: NDArray[np.float64], weights, level: float) -> dict[str, float]:
    names = ("agreement_lower", "agreement_upper", "kappa_lower", "kappa_upper")
    if weights is None or (per_task.sum(axis=1) > 0).sum() < 2:
        return dict.fromkeys(names, np.nan)
    po, kappa = map(np.concatenate, zip(*(_agreement_stats(w @ per_task) for w in weights),
                                        strict=True))  # fmt: skip
    a = (1.0 - level) / 2.0
    lo_po, hi_po = np.nanquantile(po, [a, 1.0 - a])
    lo_k, hi_k = np.nanquantile(kappa, [a, 1.0 - a]) if np.isfinite(kappa).any() else (np.nan,
                                                                                      np.nan)
    return dict(zip(names, (lo_po, hi_po, lo_k, hi_k), strict=True))


def board_agreement(slots: SlotCounts, strength: NDArray[np.float64], *, level: float = 0.95,
                    df: float | None = None) -> pd.DataFrame:  # fmt: skip
    """Per judge: the share of its verdicts naming the fitted favourite (ties one half), with
    a clustered delta-method interval (per verdict without clusters).

    Verdicts on pairs of equal fitted strength name no favourite and are not counted. Returns
    ``board_n``, ``board_agreement``, ``board_lower``, ``board_upper`` indexed by judge.
    """
    diff = strength[slots.ii] - strength[slots.jj]
    fav_a, fav_b = diff > 0, diff < 0
    agree = np.where(fav_a, slots.wi, np.where(fav_b, slots.wj, 0.0)) + 0.5 * slots.tt
    agree = np.where(fav_a | fav_b, agree, 0.0)
    n = np.where(fav_a | fav_b, slots.n, 0.0)
    nj, g = len(slots.judges), slots.n_clusters
    total_a = np.bincount(slots.judge, agree, nj)
    total_n = np.bincount(slots.judge, n, nj)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = total_a / total_n
        if slots.clusters is not None:  # residuals summed per (cluster, judge)
            cell = slots.cluster * nj + slots.judge
            res = np.bincount(cell, agree - share[slots.judge] * n, g * nj).reshape(g, nj)
            var = g / (g - 1) * (res**2).sum(axis=0) / total_n**2 if g > 1 else np.full(nj, np.nan)
        else:  # each verdict scores 1 (favourite), 0 (other) or 1/2 (tie)
            wins = np.where(fav_a, slots.wi, np.where(fav_b, slots.wj, 0.0))
            losses = np.where(fav_a, slots.wj, np.where(fav_b, slots.wi, 0.0))
            s = share[slots.judge]
            sq = wins * (1 - s) ** 2 + losses * s**2 + slots.tt * (0.5 - s) ** 2
            var = np.bincount(slots.judge, np.where(fav_a | fav_b, sq, 0.0), nj) / total_n**2
    half = critical_value(level, df) * np.sqrt(var)
    out = pd.DataFrame({"board_n": total_n.round().astype(np.int64), "board_agreement": share,
                        "board_lower": np.clip(share - half, 0.0, 1.0),
                        "board_upper": np.clip(share + half, 0.0, 1.0)},
                       index=pd.Index([str(j) for j in slots.judges], name="judge"))  # fmt: skip
    return out


def self_judged(slots: SlotCounts) -> pd.Series:
    """Verdicts in which a judge that is also a rated model judged a match of its own, by judge
    (only judges with such verdicts)."""
    where = slots.models.get_indexer(pd.Index([str(j) for j in slots.judges], dtype=object))
    model_of_judge = where[slots.judge]
    mine = (model_of_judge >= 0) & ((slots.ii == model_of_judge) | (slots.jj == model_of_judge))
    counts = np.bincount(slots.judge, np.where(mine, slots.n, 0.0), len(slots.judges))
    has = counts > 0
    return pd.Series(counts[has].round().astype(np.int64),
                     index=pd.Index([str(j) for j in slots.judges[has]], name="judge"),
                     name="self_judged")  # fmt: skip
