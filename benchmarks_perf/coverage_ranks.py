"""Rank-interval and sparse-model pieces of ``validate_coverage.py``.

Per board, from the default fit (``ratings.fit``: CR2 with Satterthwaite degrees of freedom):

* the per-contrast coverage of the default intervals (``cr2_t``), with each contrast's own t
  quantile (an undefined contrast, e.g. a model on one task, has an infinite interval);
* rank intervals (:func:`ratings.inference.ranks.rank_intervals`): simultaneous (the columns of
  ``to_frame``) and marginal, and for comparison the Bonferroni construction from the same
  covariance and degrees of freedom (each pair tested at level ``alpha / (2 K)``, K pairs, with
  its own t quantile, no step-down). True ranks: 1 + the number of truly stronger models (from
  the true or pseudo-true strengths, whose order the task effects keep).

``rank_rows`` summarises them for the CSV and ``rank_markdown`` renders the table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from ratings.inference.ranks import rank_intervals

__all__ = [
    "RANK_VARIANTS",
    "coverage_flags",
    "cr2_coverage",
    "rank_markdown",
    "rank_metrics",
    "rank_rows",
]

RANK_VARIANTS = ("simultaneous", "marginal", "bonferroni")


def cr2_coverage(r, true: np.ndarray, ref: int, level: float, sparse: int | None) -> dict:
    """Covered flags and widths of the fit's own intervals (each contrast's df)."""
    m = true.size
    est = np.asarray(r.strength)
    cov = np.asarray(r.cov)
    others = np.delete(np.arange(m), ref)
    q_model = stats.t.ppf(0.5 + level / 2, r.model_df)
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    se = np.where(np.isinf(r.se.to_numpy()), np.inf, se)
    ii, jj = np.triu_indices(m, 1)
    q_pair = stats.t.ppf(0.5 + level / 2, r.pair_df()[ii, jj])
    se_p = np.sqrt(np.clip(cov[ii, ii] + cov[jj, jj] - 2.0 * cov[ii, jj], 0.0, None))
    se_p = np.where(np.isinf(se[ii]) | np.isinf(se[jj]), np.inf, se_p)

    def half(q, s):  # NaN df: no interval (the whole line)
        return np.where(np.isnan(q) | np.isinf(s), np.inf, q * s)

    return coverage_flags(est, true, ref, half(q_model, se)[others], half(q_pair, se_p), sparse)


def coverage_flags(est: np.ndarray, true: np.ndarray, ref: int, h_anchor: np.ndarray,
                   h_pairs: np.ndarray, sparse: int | None) -> dict:  # fmt: skip
    """Covered flags and widths, given the half-widths of every model vs the anchor (models in
    order, the anchor left out) and of every pair (``np.triu_indices`` order), and the sparse
    model's own (vs the anchor, and its pairs)."""
    m = true.size
    others = np.delete(np.arange(m), ref)
    ii, jj = np.triu_indices(m, 1)
    err_a = (est - true)[others]
    err_p = (est[ii] - est[jj]) - (true[ii] - true[jj])
    out = {"anchor": np.abs(err_a) <= h_anchor, "pairs": np.abs(err_p) <= h_pairs,
           "w_anchor": 2 * h_anchor, "w_pairs": 2 * h_pairs}  # fmt: skip
    if sparse is not None:
        k = int(np.flatnonzero(others == sparse)[0])
        with_sparse = (ii == sparse) | (jj == sparse)
        out |= {"sparse": out["anchor"][[k]], "w_sparse": out["w_anchor"][[k]],
                "sparse_pairs": out["pairs"][with_sparse],
                "w_sparse_pairs": out["w_pairs"][with_sparse]}  # fmt: skip
    return out


def _bonferroni(r, level: float) -> pd.DataFrame:
    ps = r.pair_stats
    m = ps.se.shape[0]
    k = m * (m - 1) / 2
    df = np.where(np.isnan(ps.df), np.inf, ps.df)
    better = np.isfinite(ps.se) & (ps.t > stats.t.ppf(1 - (1 - level) / (2 * k), df))
    return pd.DataFrame({"rank_lower": 1 + better.sum(axis=0),
                         "rank_upper": m - better.sum(axis=1)}, index=r.models)  # fmt: skip


def rank_metrics(r, true: np.ndarray, level: float, seed: int) -> dict:
    """Per variant: joint cover (all ranks inside), per-model covers and widths."""
    rank = 1 + (true[None, :] > true[:, None]).sum(axis=1)
    out = {}
    for name in RANK_VARIANTS:
        if name == "bonferroni":
            iv = _bonferroni(r, level)
        else:
            iv = rank_intervals(r.pair_stats, r.models, level, kind=name, seed=seed)
        lo, hi = iv["rank_lower"].to_numpy(float), iv["rank_upper"].to_numpy(float)
        inside = (lo <= rank) & (rank <= hi)
        out[name] = {"joint": bool(inside.all()), "model": inside, "width": hi - lo}
    return out


def rank_rows(cell_name: str, boards: list[dict]) -> list[dict]:
    """CSV rows (target ``ranks``): per-model coverage with MCSE, joint coverage with MCSE,
    mean width of the rank intervals (upper - lower)."""
    ok = [b for b in boards if "ranks" in b]
    rows = []
    for name in RANK_VARIANTS:
        if not ok:
            continue
        per_board = np.array([b["ranks"][name]["model"].mean() for b in ok])
        joint = np.array([b["ranks"][name]["joint"] for b in ok], dtype=float)
        n = len(ok)
        rows.append({
            "cell": cell_name, "target": "ranks", "variant": name,
            "coverage": float(np.concatenate([b["ranks"][name]["model"] for b in ok]).mean()),
            "mcse": float(per_board.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan"),
            "joint": float(joint.mean()),
            "joint_mcse": float(joint.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan"),
            "width": float(np.mean([b["ranks"][name]["width"].mean() for b in ok])),
            "n_boards": n,
        })  # fmt: skip
    return rows


def rank_markdown(table: pd.DataFrame) -> list[str]:
    """The rank-interval table of the report."""
    ranks = table[table["target"] == "ranks"]
    if ranks.empty:
        return []
    lines = [
        "",
        "Rank intervals from the default fit (`ratings.fit`, CR2 with Satterthwaite df): "
        "`joint` = share of boards with every model's true rank inside its interval, "
        "`per model` = share of (board, model) intervals that hold it, `width` = mean of "
        "rank_upper - rank_lower (MCSE in units of 0.001). `simultaneous` are the "
        "`rank_lower`/`rank_upper` columns (step-down max-|t|, Mogstad et al. 2024); "
        "`marginal` bound each model's rank alone; `bonferroni` is the Bonferroni construction "
        "from the same covariance and df.",
        "",
        "| cell | simultaneous: joint | per model | width | marginal: per model | width | "
        "bonferroni: joint | width | boards |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for cell_name in dict.fromkeys(ranks["cell"]):
        sub = ranks[ranks["cell"] == cell_name].set_index("variant")

        def cov(v, col="coverage", err="mcse", sub=sub):
            return f"{sub.at[v, col]:.3f} ({1000 * sub.at[v, err]:.0f})"

        lines.append(
            f"| `{cell_name}` | {cov('simultaneous', 'joint', 'joint_mcse')} | "
            f"{cov('simultaneous')} | {sub.at['simultaneous', 'width']:.2f} | "
            f"{cov('marginal')} | {sub.at['marginal', 'width']:.2f} | "
            f"{cov('bonferroni', 'joint', 'joint_mcse')} | "
            f"{sub.at['bonferroni', 'width']:.2f} | {int(sub.at['simultaneous', 'n_boards'])} |"
        )
    return lines
