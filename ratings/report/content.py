"""What a leaderboard page shows, gathered from fits or from saved tables.

A :class:`Report` holds plain tables (pandas DataFrames) and text: the boards (one per scope,
the combined headline first), the facts about the data, the judges and the audit, and the
method. It is built from fitted results (:func:`from_results`) or from the tables the command
line writes (:func:`from_tables`); :mod:`ratings.report.page` renders either the same way.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ratings.core.schema import COMBINED_SCOPE, require_columns
from ratings.core.version import __version__
from ratings.result import Ratings, style_note, tie_note

__all__ = ["CI_KINDS", "MODEL_NAMES", "REFERENCES", "Board", "Report", "data_facts", "from_results",
           "from_tables"]

#: How each interval kind is described on the page.
CI_KINDS = {
    "cr2": "CR2 sandwich clustered by {cluster}, Student t with Satterthwaite df per contrast",
    "sandwich": "sandwich clustered by {cluster}",
    "sandwich-z": "CR1 sandwich clustered by {cluster}, normal quantile",
    "model": "model-based (inverse Hessian)",
    "bootstrap": "cluster bootstrap by {cluster}",
}
MODEL_NAMES = {"bt": "Bradley-Terry", "crowd-bt": "Crowd-BT (judge quality eta per judge)",
               "combined": "combined headline (weighted mean of the scopes' Elos)",
               "davidson": "Bradley-Terry with Davidson's tie model (tie parameter nu)",
               "rao-kupper": "Bradley-Terry with Rao and Kupper's tie model (theta >= 1)",
               "bt-soft": "Bradley-Terry, soft outcomes (A's score in [0, 1], "
                          "quasi-likelihood)"}  # fmt: skip
REFERENCES = (
    "Bradley & Terry (1952), Rank analysis of incomplete block designs.",
    "Chen, Bennett, Collins-Thompson & Horvitz (2013), Pairwise ranking aggregation in a "
    "crowdsourced setting (Crowd-BT).",
    "Bell & McCaffrey (2002); Pustejovsky & Tipton (2018): CR2 sandwich and Satterthwaite df.",
    "Mogstad, Romano, Shaikh & Wilhelm (2024), Inference for ranks.",
    "Davidson (1970), On extending the Bradley-Terry model to accommodate ties in paired "
    "comparison experiments; Rao & Kupper "
    "(1967), Ties in paired-comparison experiments.",
)


@dataclass
class Board:
    """One board: a scope's ratings or the combined headline.

    Attributes
    ----------
    name : str
        The scope (``"combined"`` for the headline; ``""`` for an unscoped fit).
    table : pandas.DataFrame
        Shaped like :meth:`ratings.Ratings.to_frame` (best first); may hold ``rank_change``
        (style control) and, for a headline, ``index``, ``index_lower``, ``index_upper``.
    level : float
        Confidence level of the intervals.
    anchor : str or None
        The anchor model (``None``: centred).
    anchor_rating : float
        The anchor's (or the mean's) Elo.
    method : dict of str to str
        Lines of the method section (model, intervals, clustering, ...).
    pairs : pandas.DataFrame or None
        Shaped like :meth:`ratings.Ratings.pairwise`.
    tied : list of str
        Models statistically tied with the leader.
    judges : pandas.DataFrame or None
        Crowd-BT judge qualities (``judge, eta, lower, upper, n, ...``).
    style : pandas.DataFrame or None
        Style-control coefficients (``feature, coef, coef_elo, se, lower, upper, df, p_value,
        scale``).
    result : Ratings or None
        The fit itself, when the board was fitted here (for the charts).
    """

    name: str
    table: pd.DataFrame
    level: float
    anchor: str | None
    anchor_rating: float
    method: dict[str, str] = field(default_factory=dict)
    pairs: pd.DataFrame | None = None
    tied: list[str] = field(default_factory=list)
    judges: pd.DataFrame | None = None
    style: pd.DataFrame | None = None
    result: Ratings | None = None

    @property
    def title(self) -> str:
        """The board's heading."""
        if self.name == COMBINED_SCOPE:
            return "Headline (combined scopes)"
        return f"Scope: {self.name}" if self.name else "Ratings"

    @property
    def slug(self) -> str:
        """An id for the page's anchors (letters, digits and dashes)."""
        text = "".join(c if c.isalnum() else "-" for c in (self.name or "main")).strip("-")
        return "board-" + (text.lower() or "x")


@dataclass
class Report:
    """Everything a leaderboard page shows.

    Attributes
    ----------
    title : str
    created : str
        ISO date-time (UTC) the page was made.
    boards : list of Board
        The headline first, then each scope.
    data : dict of str to object
        Facts about the data (verdicts, tasks, judges, scopes, ties, forfeits, models).
    audit : pandas.DataFrame or None
        The judge audit's per-judge table (:attr:`ratings.audit.Audit.judges`).
    command : str or None
        The command that made the page.
    version : str
        The package version.
    sources : list of str
        The files the page was made from (names only).
    drift, drift_notes, fragility, fragility_notes, leave_one_out
        The drift and fragility sections (``ratings report --old`` / ``--fragility``;
        :mod:`ratings.stability`), when asked for.
    """

    title: str
    created: str
    boards: list[Board]
    data: dict[str, object] = field(default_factory=dict)
    audit: pd.DataFrame | None = None
    command: str | None = None
    version: str = __version__
    sources: list[str] = field(default_factory=list)
    #: Drift against an earlier board (:attr:`ratings.stability.drift.Drift.table`) and its notes.
    drift: pd.DataFrame | None = None
    drift_notes: list[str] = field(default_factory=list)
    #: Fragility of the board (:attr:`ratings.stability.fragility.Fragility.pairs`), its notes
    #: and the leave-one-out changes.
    fragility: pd.DataFrame | None = None
    fragility_notes: list[str] = field(default_factory=list)
    leave_one_out: pd.DataFrame | None = None


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def data_facts(verdicts: pd.DataFrame) -> dict[str, object]:
    """Counts of a validated verdict frame (:attr:`ratings.io.VerdictLog.verdicts`).

    Returns
    -------
    dict
        ``verdicts, models, tasks, judges, scopes, ties, forfeits`` (absent columns: omitted).
    """
    v = verdicts
    models = pd.unique(np.concatenate([v["model_a"].astype(str), v["model_b"].astype(str)]))
    out: dict[str, object] = {"verdicts": len(v), "models": len(models)}
    if "task_id" in v:
        out["tasks"] = int(v["task_id"].nunique())
    if "judge" in v:
        out["judges"] = int(v["judge"].nunique())
    if "scope" in v:
        out["scopes"] = ", ".join(sorted(map(str, pd.unique(v["scope"]))))
    if "winner" in v:
        out["ties"] = int((v["winner"].astype(str) == "tie").sum())
    if "failed_a" in v and "failed_b" in v:
        out["forfeits"] = int((v["failed_a"] | v["failed_b"]).sum())
    return out


def _method(r: Ratings) -> dict[str, str]:
    kind = "cr2" if r.inference is not None else r.ci
    out = {"Model": MODEL_NAMES.get(r.kind, r.kind) + style_note(r.style),
           "Intervals": CI_KINDS.get(kind, kind).format(cluster=repr(r.cluster)),
           "Level": f"{r.level:.0%}",
           "Scale": f"Elo = {r.offset:g} + 400/ln(10) * (s - "
                    + (f"s[{r.anchor}])" if r.anchor else "mean(s))")}  # fmt: skip
    if r.ci != "model":
        out["Clustering"] = (f"by {r.cluster} ({r.n_clusters} clusters)" if r.cluster
                             else "none: verdicts taken as independent (HC0)")  # fmt: skip
    out["Degrees of freedom"] = ("per contrast (column df)" if r.inference is not None
                                 else "normal quantile" if r.df is None else f"{r.df:g}")
    if r.combine_method is not None:
        out["Combined"] = f"{r.combine_method}; weights " + ", ".join(
            f"{s}={w:.3g}" for s, w in (r.scope_weights or {}).items())
    if r.crowd is not None:
        out["Estimate"] = r.crowd.estimate_note()
    if r.ties is not None:
        out["Ties"] = tie_note(r.ties)
    if r.adjust:
        out["Adjusted for"] = ", ".join(r.adjust)
    if r.penalty:
        out["Penalty"] = f"ridge {r.penalty:g}"
    if r.firth:
        out["Penalty"] = "Firth's bias-reduced estimate"
    return out


def _with_index(table: pd.DataFrame) -> pd.DataFrame:
    from ratings.scopes.registry import index_value

    return table.assign(index=index_value(table["elo"]), index_lower=index_value(table["lower"]),
                        index_upper=index_value(table["upper"]))  # fmt: skip


def _board(r: Ratings, name: str, *, pairs: bool) -> Board:
    table = r.to_frame()
    if name == COMBINED_SCOPE:
        table = _with_index(table)
    judges = None if r.judges is None else r.judges.reset_index()
    return Board(name=name, table=table, level=r.level, anchor=r.anchor,
                 anchor_rating=float(r.offset), method=_method(r),
                 pairs=r.pairwise() if pairs else None, tied=r.tied_with_leader(),
                 judges=judges, style=getattr(r, "style", None), result=r)  # fmt: skip


def from_results(
    results: Ratings | Mapping[str, Ratings],
    *,
    combined: Ratings | None = None,
    verdicts: pd.DataFrame | None = None,
    audit: pd.DataFrame | None = None,
    title: str | None = None,
    command: str | None = None,
    sources: Sequence[str | os.PathLike[str]] = (),
    pairs: bool = True,
) -> Report:
    """A report of one fit, or of per-scope fits and their combined headline.

    Parameters
    ----------
    results : Ratings or mapping of scope to Ratings
        One fit, or per-scope fits (:func:`ratings.scopes.combine.fit_scopes`).
    combined : Ratings, optional
        The headline (:func:`ratings.scopes.combine.combine`), shown first.
    verdicts : pandas.DataFrame, optional
        The validated verdicts, for the data section.
    audit : pandas.DataFrame, optional
        A judge audit's per-judge table.
    title, command : str, optional
        The page's title; the command that made it.
    sources : sequence of path
        Files the page was made from (their names are shown).
    pairs : bool, default=True
        Compute each board's pairwise table (for the heatmap).

    Returns
    -------
    Report
    """
    fits = {(results.scope or ""): results} if isinstance(results, Ratings) else dict(results)
    boards = [] if combined is None else [_board(combined, COMBINED_SCOPE, pairs=pairs)]
    boards += [_board(r, str(s), pairs=pairs) for s, r in fits.items()]
    data = data_facts(verdicts) if verdicts is not None else _facts_of_boards(boards)
    return Report(title=title or "Leaderboard", created=_now(), boards=boards, data=data,
                  audit=audit, command=command,
                  sources=[os.path.basename(os.fspath(p)) for p in sources])  # fmt: skip


def _facts_of_boards(boards: list[Board]) -> dict[str, object]:
    """What the tables themselves tell about the data (no verdict log at hand)."""
    scoped = [b for b in boards if b.name != COMBINED_SCOPE] or boards
    models = pd.unique(np.concatenate([b.table["model"].astype(str).to_numpy() for b in boards]))
    out: dict[str, object] = {"models": len(models)}
    if "n_matches" in scoped[0].table:  # each verdict counts for both of its models
        out["verdicts"] = int(sum(b.table["n_matches"].sum() for b in scoped) // 2)
    for col in ("ties", "forfeits"):
        if col in scoped[0].table:
            out[col] = int(sum(b.table[col].sum() for b in scoped) // 2)
    names = [b.name for b in scoped if b.name]
    if names:
        out["scopes"] = ", ".join(names)
    return out


def _table_board(table: pd.DataFrame, name: str, pairs: pd.DataFrame | None) -> Board:
    from ratings.plot.figures import infer_level

    table = table.sort_values("elo", ascending=False, kind="stable").reset_index(drop=True)
    if "level" in table and table["level"].notna().any():
        level = float(table["level"].dropna().iloc[0])
    else:
        level = infer_level(table["elo"], table.get("se"), table["lower"], table["upper"]) or 0.95
    anchor = str(table["anchor"].iloc[0]) if "anchor" in table else ""
    rating = float(table["anchor_rating"].iloc[0]) if "anchor_rating" in table else np.nan
    if name == COMBINED_SCOPE and "index" not in table:
        table = _with_index(table)
    tied = []
    if "rank_lower" in table:
        tied = table.loc[table["rank_lower"] == 1, "model"].astype(str).tolist()
    method = {"Model": str(table["method"].iloc[0]) if "method" in table else "not recorded",
              "Level": f"{level:.0%}"}  # fmt: skip
    if "weights" in table and str(table["weights"].iloc[0]) not in ("", "nan"):
        method["Combined"] = str(table["weights"].iloc[0])
    return Board(name=name, table=table, level=level, anchor=anchor or None,
                 anchor_rating=rating, method=method, pairs=pairs, tied=tied)  # fmt: skip


def from_tables(
    board: pd.DataFrame,
    *,
    pairs: pd.DataFrame | None = None,
    audit: pd.DataFrame | None = None,
    title: str | None = None,
    command: str | None = None,
    sources: Sequence[str | os.PathLike[str]] = (),
) -> Report:
    """A report of saved tables: ``ratings fit --out`` / ``combine --out``, ``--pairs``, audit.

    Parameters
    ----------
    board : pandas.DataFrame
        A ratings table (``model, elo, lower, upper``, and optionally the other columns of
        :meth:`ratings.Ratings.to_frame`); with a ``scope`` column, one board per scope (the
        ``combined`` rows first).
    pairs : pandas.DataFrame, optional
        A pairwise table of a one-scope board (``ratings fit --pairs``).
    audit : pandas.DataFrame, optional
        The per-judge table of ``ratings audit --out audit.csv``.
    title, command, sources
        As in :func:`from_results`.

    Returns
    -------
    Report
    """
    require_columns(board, ["model", "elo", "lower", "upper"], "the `--from` table",
                    hint="Give a table written by `ratings fit --out` or `ratings combine --out`.",
                    error=ValueError)  # fmt: skip
    if "scope" in board and board["scope"].nunique() > 1:
        names = list(pd.unique(board["scope"].astype(str)))
        names.sort(key=lambda s: s != COMBINED_SCOPE)
        if pairs is not None:
            raise ValueError("`--pairs` belongs to a one-scope board; this `--from` table holds "
                             f"the scopes {names}.")  # fmt: skip
        boards = [_table_board(board[board["scope"].astype(str) == s], s, None) for s in names]
    else:
        name = str(board["scope"].iloc[0]) if "scope" in board else ""
        boards = [_table_board(board, name, pairs)]
    return Report(title=title or "Leaderboard", created=_now(), boards=boards,
                  data=_facts_of_boards(boards), audit=audit, command=command,
                  sources=[os.path.basename(os.fspath(p)) for p in sources])  # fmt: skip
