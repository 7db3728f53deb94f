"""Input checks and the counting state shared by the planner and the balance report.

Models, tasks and judges are compared as strings and coded in sorted order, so a plan does not
depend on the row order of its inputs. All counts cover the history (verdicts in scope) plus the
matches planned so far.
"""

from __future__ import annotations

import difflib
import numbers
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings import VerdictLog
from ratings.kit import (
    MaxMemory,
    booleans,
    check_memory,
    fit_memory,
    format_names,
    format_rows,
    one_blas_thread,
    option,
    parse_anchor,
    require_columns,
)
from sampling.board.pairs import PairCounts

__all__ = [
    "Board",
    "History",
    "Labels",
    "PlanWarning",
    "Submissions",
    "check_anchor",
    "check_count",
    "check_judges",
    "check_names",
    "check_seed",
    "history_frame",
    "plan_memory",
    "str_array",
    "submissions_frame",
]

_NEEDED = ("model_a", "model_b", "task_id")


class PlanWarning(UserWarning):
    """Some models cannot take part in the planned matches (no usable submissions)."""


def _text(frame: pd.DataFrame, column: str, what: str) -> NDArray[np.object_]:
    """The column as an object array of ``str``; missing values raise with their rows."""
    values = frame[column]
    missing = values.isna().to_numpy()
    if missing.any():
        raise ValueError(
            f"{what} column {column!r} has {int(missing.sum())} missing value(s) at rows "
            f"{format_rows(np.flatnonzero(missing))}. Fill or drop those rows."
        )
    return str_array(values)


def str_array(values: pd.Series) -> NDArray[np.object_]:
    """A column's values as an object array of ``str`` (labels compare as text)."""
    arr = values.to_numpy(dtype=object)
    if pd.api.types.infer_dtype(arr, skipna=False) != "string":
        arr = np.array([str(x) for x in arr], dtype=object)
    return arr


def check_count(value, name: str, minimum: int) -> int:
    """``value`` as an int, if it is an integer >= ``minimum`` (``name`` names it)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{option(name)} must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def check_seed(seed) -> int:
    """``seed`` as an int, if it is a non-negative integer."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(
            f"{option('seed')} must be a non-negative integer (plans are reproducible only with "
            f"a fixed seed); got {seed!r}."
        )
    return int(seed)


def check_anchor(anchor: str | None) -> tuple[str | None, float]:
    """``"NAME"`` or ``"NAME=RATING"`` as (name, rating); None: (None, 1000) (centred)."""
    if anchor is None:
        return None, 1000.0
    if not isinstance(anchor, str) or not anchor.strip():
        raise ValueError(f"{option('anchor')} must be 'NAME' or 'NAME=RATING'; got {anchor!r}.")
    if "=" in anchor:
        return parse_anchor(anchor)
    return anchor.strip(), 1000.0


def check_names(names: Sequence[str], what: str = "judges") -> list[str]:
    """Validate a list of names (``what``: the argument): non-empty, distinct, non-empty names."""
    if isinstance(names, str):
        raise TypeError(
            f"{option(what)} must be a list of names, not a string; got {names!r}. "
            f"Use e.g. {names.split(',')!r}."
        )
    out = [str(j).strip() for j in names]
    if not out or any(not j for j in out):
        raise ValueError(f"{option(what)} must be a non-empty list of non-empty names; got "
                         f"{names!r}.")  # fmt: skip
    if len(set(out)) != len(out):
        dup = sorted({j for j in out if out.count(j) > 1})
        raise ValueError(f"{option(what)} must be distinct; {dup!r} appear more than once.")
    return out


def check_judges(judges: Sequence[str]) -> list[str]:
    """Validate the judge panel: a non-empty list of distinct, non-empty names."""
    return check_names(judges, "judges")


@dataclass(frozen=True, eq=False)
class Labels:
    """A text column as integer codes into ``names`` (``str``), without a Python string per row."""

    codes: NDArray[np.int64]
    names: NDArray[np.object_]

    @classmethod
    def of(cls, values: pd.Series, what: str) -> Labels:
        codes, uniques = pd.factorize(values)
        missing = codes < 0
        if missing.any():
            raise ValueError(
                f"{what} column {values.name!r} has {int(missing.sum())} missing value(s) at "
                f"rows {format_rows(np.flatnonzero(missing))}. Fill or drop those rows."
            )
        return cls(codes.astype(np.int64), str_array(pd.Series(uniques)))

    def indexer(self, index: pd.Index) -> NDArray[np.int64]:
        """Positions of every row's label in ``index`` (-1 when absent)."""
        return index.get_indexer(self.names)[self.codes]


@dataclass(frozen=True, eq=False)
class History:
    """Verdicts of one scope: the frame (for the fit) and its label columns."""

    frame: pd.DataFrame
    model_a: Labels
    model_b: Labels
    task_id: Labels
    judge: Labels | None

    def __len__(self) -> int:
        return self.model_a.codes.size

    @property
    def models(self) -> set[str]:
        return set(self.model_a.names.tolist()) | set(self.model_b.names.tolist())


def history_frame(verdicts: pd.DataFrame | VerdictLog | None, scope: str | None) -> History:
    """The verdicts of ``scope``, checked; ``None``, an empty frame or a scope without
    verdicts (:class:`PlanWarning` when the log holds other scopes) is an empty history.

    ``model_a``, ``model_b`` and ``task_id`` are required (no missing values); ``judge`` is
    optional, and verdicts without one count for no judge. The fit also needs ``winner``.
    """
    if isinstance(verdicts, VerdictLog):
        verdicts = verdicts.verdicts
    empty = Labels(np.array([], dtype=np.int64), np.array([], dtype=object))
    if verdicts is None or (isinstance(verdicts, pd.DataFrame) and len(verdicts) == 0):
        return History(pd.DataFrame(columns=list(_NEEDED)), empty, empty, empty, None)
    if not isinstance(verdicts, pd.DataFrame):
        raise TypeError(
            "`verdicts` must be a pandas DataFrame, a ratings.VerdictLog or None; got "
            f"{type(verdicts).__name__!r}. Read files with `ratings.read_verdicts(path).verdicts`."
        )
    require_columns(verdicts, _NEEDED, "verdicts", error=ValueError,
                    hint=f"Planning needs {list(_NEEDED)} to avoid repeating a (task, pair).")
    frame = verdicts
    if "scope" in frame.columns:
        scopes = sorted(map(str, pd.unique(frame["scope"].dropna())))
        if scope is None and len(scopes) > 1:
            raise ValueError(
                f"The verdicts hold {len(scopes)} scopes {format_names(scopes)}; plans and "
                f"ratings are per scope. Choose one with {option('scope')}."
            )
        if scope is not None:
            if str(scope) not in scopes:
                near = difflib.get_close_matches(str(scope), scopes, n=3, cutoff=0.75)
                warnings.warn(
                    f"Scope {scope!r} has no verdicts yet, so it is planned from an empty log "
                    f"(the log holds scopes {format_names(scopes)})."
                    + (f" Did you mean {near}?" if near else ""),
                    PlanWarning,
                    stacklevel=3,
                )
            frame = frame[str_array(frame["scope"].astype(object).fillna("")) == str(scope)]
            if len(frame) == 0:
                return History(pd.DataFrame(columns=list(_NEEDED)), empty, empty, empty, None)
    elif scope is not None:
        raise ValueError(
            f"{option('scope', scope)} was given but the verdicts have no `scope` column. "
            f"Available columns: {verdicts.columns.tolist()}."
        )
    judge = None
    if "judge" in frame.columns:
        judge = Labels.of(frame["judge"].astype(object).fillna(""), "Verdicts")
    a, b = Labels.of(frame["model_a"], "Verdicts"), Labels.of(frame["model_b"], "Verdicts")
    same = a.codes == pd.Index(a.names).get_indexer(b.names)[b.codes]  # -1: not a model_a
    if same.any():
        raise ValueError(
            f"{int(same.sum())} verdict(s) pit a model against itself, at rows "
            f"{format_rows(np.flatnonzero(same))}. Drop those rows (ratings.read_verdicts rejects "
            "them too)."
        )
    return History(frame, a, b, Labels.of(frame["task_id"], "Verdicts"), judge)


def _positions(index: pd.Index, values: NDArray[np.object_]) -> NDArray[np.int64]:
    """Positions of ``values`` in ``index``, looking up each distinct value once."""
    codes, uniques = pd.factorize(values)
    return index.get_indexer(uniques)[codes]


@dataclass(frozen=True, eq=False)
class Submissions:
    """``(model, task_id)`` pairs as ``str`` arrays, their failure flags, and models listed
    without a task."""

    model: NDArray[np.object_]
    task_id: NDArray[np.object_]
    listed_only: list[str]
    failed: NDArray[np.bool_] | None = None


def _failed_flags(frame: pd.DataFrame) -> NDArray[np.bool_]:
    """The ``failed`` column as booleans (missing or empty is False); bad values raise."""
    value, bad = booleans(frame["failed"])
    if bad.any():
        rows = np.flatnonzero(bad)
        seen = sorted({str(frame["failed"].iloc[r]) for r in rows[:5]})
        raise ValueError(
            f"Submissions column 'failed' has {rows.size} value(s) that are not true/false "
            f"(e.g. {seen}) at rows {format_rows(rows)}. Use true/false, 1/0 or yes/no; an "
            "empty cell means the submission rendered."
        )
    return value


def _check_failed_agree(model, task, failed, rows) -> None:
    """A submission listed twice must not be both failed and rendered."""
    key = pd.Series(model + "\x1f" + task)
    mixed = pd.Series(failed).groupby(key.to_numpy()).transform("nunique").to_numpy() > 1
    if mixed.any():
        first = int(np.flatnonzero(mixed)[0])
        raise ValueError(
            f"Submissions list {int(mixed.sum())} row(s) of the same (model, task_id) both as "
            f"failed and as rendered, e.g. ({model[first]!r}, {task[first]!r}) at rows "
            f"{format_rows(rows[mixed])}. Keep one row per submission."
        )


def submissions_frame(submissions: pd.DataFrame | None, history: History) -> Submissions:
    """Check and normalise ``submissions``; default (``None``): those seen in ``history``.

    A row with a missing ``task_id`` lists a model without any submission. An optional
    ``failed`` column (true/false, 1/0, yes/no; empty is false) marks submissions that failed
    to render.
    """
    if submissions is None:
        if len(history) == 0:
            raise ValueError(
                "Neither `submissions` nor verdicts were given, so there is nothing to plan. "
                "Pass `submissions` (a DataFrame with columns 'model' and 'task_id') for a new "
                "benchmark."
            )
        h = history
        model = np.concatenate([h.model_a.names[h.model_a.codes], h.model_b.names[h.model_b.codes]])
        task = np.tile(h.task_id.names[h.task_id.codes], 2)
        listed_only: list[str] = []
        failed = None
    else:
        if not isinstance(submissions, pd.DataFrame):
            raise TypeError(
                "`submissions` must be a pandas DataFrame with columns 'model' and 'task_id' or "
                f"None; got {type(submissions).__name__!r}."
            )
        require_columns(submissions, ["model", "task_id"], "submissions", error=ValueError,
                        hint="Submissions list the (model, task_id) pairs for which a model's "
                        "answer exists.")  # fmt: skip
        model = _text(submissions, "model", "Submissions")
        no_task = submissions["task_id"].isna().to_numpy()
        task = str_array(submissions["task_id"].fillna(""))
        no_task = no_task | (task == "")
        listed_only = sorted(set(model[no_task].tolist()) - set(model[~no_task].tolist()))
        failed = _failed_flags(submissions) if "failed" in submissions.columns else None
        if failed is not None:
            _check_failed_agree(model[~no_task], task[~no_task], failed[~no_task],
                                np.flatnonzero(~no_task))  # fmt: skip
            failed = failed[~no_task]
        model, task = model[~no_task], task[~no_task]
        if model.size == 0:
            raise ValueError(
                "`submissions` has no row with both a model and a task_id, so there is nothing "
                "to plan. List the (model, task_id) pairs for which answers exist."
            )
    return Submissions(model, task, listed_only, failed)


@dataclass(eq=False)
class Board:
    """Codes and counts of one planning problem (mutable: :meth:`add` records a planned match).

    Attributes
    ----------
    models, tasks, judges : pandas.Index
        Sorted labels (models and tasks from submissions and history; the judge panel as given).
    has : bool (M, T)
        The submission (model, task) exists (and may be planned: failed submissions only
        when forfeits are planned).
    failed : bool (M, T)
        The submission failed to render (its matches are forfeits, never judged).
    usable : bool (M, T)
        ``has`` and at least one other model has the task, so it can be played.
    task_n : int (M, T)
        Matches of each model on each task.
    pairs : PairCounts
        Matches of each unordered pair on each task (the cells the history and the plan
        hold, :mod:`sampling.board.pairs`).
    meet : int (M, M)
        Matches of each pair over all tasks.
    judge_n : int (M, J); judge_total : int (J,)
        Matches per model and judge, and per judge (panel judges only).
    """

    models: pd.Index
    tasks: pd.Index
    judges: pd.Index
    has: NDArray[np.bool_]
    usable: NDArray[np.bool_]
    task_n: NDArray[np.int64]
    pairs: PairCounts
    meet: NDArray[np.int64]
    judge_n: NDArray[np.int64]
    judge_total: NDArray[np.int64]
    failed: NDArray[np.bool_]
    _shared: NDArray[np.int64] | None = field(default=None, repr=False)

    @classmethod
    def build(cls, history: History, subs: Submissions, judges: list[str],
              forfeits: bool = True, *, max_memory: MaxMemory = None) -> Board:  # fmt: skip
        """Count the history against the submissions (after checking the memory it needs);
        failed submissions are left out unless ``forfeits``."""

        def labels(*columns: NDArray[np.object_]) -> pd.Index:
            return pd.Index(sorted(pd.unique(np.concatenate(columns)).tolist()), dtype=object)

        models = labels(subs.model, history.model_a.names, history.model_b.names)
        tasks = labels(subs.task_id, history.task_id.names)
        jdx = pd.Index(judges, dtype=object)
        m, t = len(models), len(tasks)
        check_memory(plan_memory(m, t, len(history)),
                     f"planning {m:,} models on {t:,} tasks after {len(history):,} verdicts",
                     max_memory)  # fmt: skip
        has = np.zeros((m, t), dtype=bool)
        failed = np.zeros((m, t), dtype=bool)
        im, it_ = _positions(models, subs.model), _positions(tasks, subs.task_id)
        has[im, it_] = True
        if subs.failed is not None:
            failed[im[subs.failed], it_[subs.failed]] = True
            if not forfeits:
                has &= ~failed
        usable = has & (has.sum(axis=0) >= 2)[None, :]

        ia = history.model_a.indexer(models)
        ib = history.model_b.indexer(models)
        it = history.task_id.indexer(tasks)
        task_n = (np.bincount(ia * t + it, minlength=m * t)
                  + np.bincount(ib * t + it, minlength=m * t)).reshape(m, t)  # fmt: skip
        lo, hi = np.minimum(ia, ib), np.maximum(ia, ib)
        pairs = PairCounts(m, t, ia, ib, it)
        upper = np.bincount(lo * m + hi, minlength=m * m).reshape(m, m)
        meet = (upper + upper.T).astype(np.int64)

        judge_n = np.zeros((m, len(jdx)), dtype=np.int64)
        judge_total = np.zeros(len(jdx), dtype=np.int64)
        if history.judge is not None and len(history):
            ij = history.judge.indexer(jdx)
            known = ij >= 0  # judges outside the panel are not balanced
            n_j = len(jdx)
            judge_n = (np.bincount(ia[known] * n_j + ij[known], minlength=m * n_j)
                       + np.bincount(ib[known] * n_j + ij[known], minlength=m * n_j)
                       ).reshape(m, n_j).astype(np.int64)  # fmt: skip
            judge_total = np.bincount(ij[known], minlength=len(jdx)).astype(np.int64)
        return cls(models, tasks, jdx, has, usable, task_n.astype(np.int64), pairs, meet,
                   judge_n, judge_total, failed)  # fmt: skip

    @property
    def plannable(self) -> NDArray[np.bool_]:
        """Models with at least one usable submission."""
        return self.usable.any(axis=1)

    @property
    def playable(self) -> NDArray[np.bool_]:
        """``usable`` for the models that can be paired (M, T)."""
        return self.usable & self.plannable[:, None]

    def shared(self, exclude: NDArray[np.bool_] | None = None) -> NDArray[np.int64]:
        """Tasks each pair can play (M, M; zero diagonal), without the cells ``exclude``
        (M, T) marks on either side (computed once without: do not modify)."""
        plain = exclude is None or not exclude.any()
        if plain and self._shared is not None:
            return self._shared
        u = self.playable if plain else self.playable & ~exclude
        f = u.astype(np.float32)  # 0/1 sums are exact up to 2^24, on any number of threads
        with one_blas_thread():  # a small product: a second thread only waits (see there)
            out = np.rint(f @ f.T).astype(np.int64)
        np.fill_diagonal(out, 0)
        if plain:
            self._shared = out
        return out

    def add(self, a: int, b: int, t: int) -> None:
        """Record a planned match of ``a`` and ``b`` on task ``t``."""
        self.task_n[a, t] += 1
        self.task_n[b, t] += 1
        self.pairs.add(a, b, t)
        self.meet[a, b] += 1
        self.meet[b, a] += 1

    def report_unplannable(self, history: History, listed_only: list[str],
                           explicit: bool) -> None:  # fmt: skip
        """Warn (:class:`PlanWarning`) about models for which no match can be planned."""
        plannable = self.plannable
        in_history = history.models
        no_subs = [str(x) for x, h in zip(self.models, self.has.any(axis=1), strict=True)
                   if not h and x in in_history]  # fmt: skip
        if explicit and no_subs:
            warnings.warn(
                f"{len(no_subs)} model(s) appear in the verdicts but have no submissions, so no "
                f"match is planned for them: {format_names(no_subs)}. They stay in the fit. Add "
                "their (model, task_id) rows to `submissions` to plan matches for them.",
                PlanWarning,
                stacklevel=3,
            )
        if listed_only:
            warnings.warn(
                f"{len(listed_only)} model(s) are listed in `submissions` without any task, so "
                f"no match is planned for them: {format_names(listed_only)}.",
                PlanWarning,
                stacklevel=3,
            )
        alone = [str(x) for x, h, p in zip(self.models, self.has.any(axis=1), plannable,
                                           strict=True) if h and not p]  # fmt: skip
        if alone:
            warnings.warn(
                f"{len(alone)} model(s) share no task with any other model, so they cannot be "
                f"paired: {format_names(alone)}. Add submissions on tasks other models have.",
                PlanWarning,
                stacklevel=3,
            )


def plan_memory(n_models: int, n_tasks: int, n_verdicts: int = 0) -> int:
    """Bytes match planning needs for ``n_models`` models on ``n_tasks`` tasks after
    ``n_verdicts`` verdicts: about 240 bytes per model x task cell (the submissions listed as
    text and their codes, counts, task levels and their temporaries), 200 per model x model
    cell (the covariance, its square, the pair tables and the temporaries of a pick), 160 per
    verdict of history (its (pair, task) cells indexed from both sides, and their sort), and
    the fit that scores candidates. Nothing of size
    models x models x tasks."""
    m, t = int(n_models), int(n_tasks)
    return 240 * m * t + 200 * m * m + 160 * int(n_verdicts) + fit_memory(m)
