"""``ratings.compare_ties``: one log fitted with ties as half wins, Davidson and Rao-Kupper.

Half wins have no probability of a tie, so they are compared with the tie models by their
ratings only (ranks and the models statistically tied with the leader); the two tie models
are compared by log-likelihood and AIC (each has M - 1 strengths and one tie parameter, so
AIC orders them as the likelihood does), and all three against the data by the tie rate
observed and fitted in bins of the rating gap.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ratings.api.fitting import Source, fit_with
from ratings.api.loading import load_with
from ratings.api.options import fit_keywords
from ratings.api.specs import BT, LEGACY, TIE_KINDS, options_of
from ratings.models.families.ties import TIE_FAMILIES
from ratings.result import Ratings, format_table

__all__ = ["TieComparison", "compare_ties", "tie_rates"]

@dataclass(frozen=True, eq=False)
class TieComparison:
    """What :func:`compare_ties` returns.

    Attributes
    ----------
    fits : dict
        The :class:`~ratings.result.Ratings` of each rule (``"half"``, ``"davidson"``,
        ``"rao-kupper"``).
    likelihood : DataFrame
        Per tie model: ``loglik``, ``n_params``, ``aic``, ``delta_aic`` (to the better one),
        the tie parameter and the probability of a tie between equal models.
    tie_rates : DataFrame
        Per bin of the absolute rating gap (half-win Elo points between the pair):
        ``gap_lower``, ``gap_upper``, ``n``, ``observed`` (tie share) and each tie model's
        fitted tie probability averaged over the bin's verdicts.
    ranks : DataFrame
        Per model: each rule's rank and Elo, ``rank_changes`` (whether the rules disagree) and
        ``leader_set_changes`` (whether the rules disagree on the model being statistically
        tied with the leader, i.e. in the leader's confidence set).
    """

    fits: dict[str, Ratings]
    likelihood: pd.DataFrame
    tie_rates: pd.DataFrame
    ranks: pd.DataFrame

    def summary(self) -> str:
        """The comparison as text."""
        lead = {k: ", ".join(r.tied_with_leader()) for k, r in self.fits.items()}
        changed = self.ranks.index[self.ranks["rank_changes"]].tolist()
        moved = self.ranks.index[self.ranks["leader_set_changes"]].tolist()
        lines = [
            "Tie models compared (half wins have no likelihood of a tie: compared by their "
            "ratings only)", "", format_table(self.likelihood.reset_index()), "",
            "Tie rate by rating gap (half-win Elo points), observed and fitted:",
            format_table(self.tie_rates), "",
            "Ranks by rule: " + (f"change for {', '.join(changed)}" if changed
                                 else "the same under every rule"),
            "Tied with the leader: " + "; ".join(f"{k}: {v}" for k, v in lead.items()),
            "Leader sets: " + (f"differ for {', '.join(moved)}" if moved
                               else "the same under every rule"),
            "", format_table(self.ranks.reset_index()),
        ]
        return "\n".join(lines)

    def __repr__(self) -> str:
        best = self.likelihood["aic"].idxmin()
        return f"<TieComparison: {len(self.ranks)} models; lower AIC: {best}>"


def compare_ties(verdicts: Source, *, bins: int = 5, **options) -> TieComparison:
    """Fit ``verdicts`` with ties as half wins, Davidson and Rao-Kupper, and compare them.

    Parameters
    ----------
    verdicts : path, DataFrame, VerdictLog or Comparisons
        As :func:`ratings.fit` takes them; the log must hold ties.
    bins : int, default=5
        Bins of the rating gap (quantiles of the verdicts' absolute half-win gap) for the
        observed and fitted tie rates.
    **options
        Passed to every :func:`ratings.fit` (``anchor``, ``ci``, ``cluster``, ``scope``,
        ``level``, ``read``, ``solver``); ``model`` is set here.

    Returns
    -------
    TieComparison
    """
    if "model" in options or any(LEGACY.get(k, ("",))[0] in ("BT", "CrowdBT") for k in options):
        raise TypeError("compare_ties fits its own models; pass the other options only.")
    if int(bins) != bins or bins < 1:
        raise ValueError(f"`bins` must be a positive integer; got {bins!r}.")
    named = {k: options.pop(k) for k in fit_keywords() if k in options}  # the rest: flat
    checked = options_of(**named, legacy=options)
    # the log is aggregated once, its clusters fixed: the fits take the Comparisons as they are
    data = load_with(verdicts, checked).data
    if not data.collapsed().tt.any():  # checked before any fit warns of the same
        raise ValueError("The log has no ties: the tie models are plain Bradley-Terry there, "
                         "and there is nothing to compare.")  # fmt: skip
    fits = {kind: fit_with(data, replace(checked, model=BT(ties=kind))) for kind in TIE_KINDS}
    return TieComparison(fits=fits, likelihood=_likelihood(fits, data),
                         tie_rates=tie_rates(fits, data, bins=int(bins)),
                         ranks=_ranks(fits))  # fmt: skip


def _likelihood(fits: dict[str, Ratings], data) -> pd.DataFrame:
    out = {}
    for kind in TIE_FAMILIES:
        r = fits[kind]
        k = data.n_models  # M - 1 strengths and the tie parameter
        t = r.ties.iloc[0]
        out[kind] = {"loglik": r.loglik, "n_params": k, "aic": 2 * k - 2 * r.loglik,
                     "parameter": r.ties.index[0], "estimate": t["estimate"],
                     "p_tie_equal": t["p_tie_equal"]}  # fmt: skip
    table = pd.DataFrame(out).T
    table["delta_aic"] = table["aic"] - table["aic"].min()
    table.index.name = "tie model"
    return table.astype({"loglik": float, "n_params": int, "aic": float, "estimate": float,
                         "p_tie_equal": float, "delta_aic": float})  # fmt: skip


def tie_rates(fits: dict[str, Ratings], data, *, bins: int = 5) -> pd.DataFrame:
    """Observed and fitted tie rates in bins of the absolute half-win rating gap (see
    :class:`TieComparison`)."""
    rows = data.collapsed()
    n = rows.wi + rows.wj + rows.tt
    half = fits["half"]
    elo = half.elo.reindex(data.models).to_numpy()
    gap = np.abs(elo[rows.ii] - elo[rows.jj])
    order = np.argsort(gap, kind="stable")
    cum = np.cumsum(n[order])
    edges = np.searchsorted(cum, cum[-1] * np.arange(1, bins) / bins, side="right")
    group = np.empty(gap.size, dtype=np.int64)
    group[order] = np.searchsorted(edges, np.arange(gap.size), side="right")
    table = {"gap_lower": [], "gap_upper": [], "n": [], "observed": []}
    fitted = {kind: [] for kind in TIE_FAMILIES}
    probs = {}
    for kind, family in TIE_FAMILIES.items():
        r = fits[kind]
        s = r.strength[r.models.get_indexer(data.models)]
        probs[kind] = family.probabilities(s[rows.ii] - s[rows.jj], r.ties["phi"].iloc[0])[2]
    for g in range(bins):
        sel = group == g
        if not sel.any():
            continue
        w = n[sel]
        table["gap_lower"].append(float(gap[sel].min()))
        table["gap_upper"].append(float(gap[sel].max()))
        table["n"].append(round(float(w.sum())))
        table["observed"].append(float(rows.tt[sel].sum() / w.sum()))
        for kind in fitted:
            fitted[kind].append(float((probs[kind][sel] * w).sum() / w.sum()))
    return pd.DataFrame({**table, **fitted})


def _ranks(fits: dict[str, Ratings]) -> pd.DataFrame:
    models = fits["half"].ranked_models
    cols, leaders = {}, {}
    for kind, r in fits.items():
        frame = r.to_frame().reindex(models)
        cols[f"rank_{kind}"] = frame["rank"].to_numpy()
        cols[f"elo_{kind}"] = frame["elo"].to_numpy()
        leaders[kind] = models.isin(r.tied_with_leader())
    out = pd.DataFrame(cols, index=models)
    ranks = out[[f"rank_{k}" for k in fits]].to_numpy()
    out["rank_changes"] = (ranks != ranks[:, :1]).any(axis=1)
    lead = np.column_stack(list(leaders.values()))
    out["leader_set_changes"] = (lead != lead[:, :1]).any(axis=1)
    for kind in fits:
        out[f"with_leader_{kind}"] = leaders[kind]
    out.index.name = "model"
    return out
