"""Rubric checks to synthetic pairwise matches (the deterministic ``"rubric"`` scope).

A rubric grades each submission (one model's answer to one task) on a list of pass/fail checks.
A grade may also be a share in [0, 1] (e.g. the share of a panel of judges that passed it), and
a panel's grades of one check (rows that differ only in ``judge``) are averaged into the check's
share. :func:`read_rubric` reads and validates such a table; :func:`rubric_to_matches` turns it
into canonical verdict rows (judge ``"deterministic"``, scope ``"rubric"``) that
:func:`ratings.fit` reads like any other verdict log::

    rubric = read_rubric("checks.csv", duplicates="last")
    r = ratings.fit(rubric_to_matches(rubric, method="rate"), anchor="GPT-5.5 (medium)=1000")

Row numbers in messages are 0-based data rows (the header is not counted), as in
:mod:`ratings.io`.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.errors import InvalidVerdictsError, format_rows, option
from ratings.core.schema import DETERMINISTIC_JUDGE, STRING_DTYPE
from ratings.io.cells import booleans, check_columns, pick_columns, text, winner_labels
from ratings.io.readers import load_table

__all__ = [
    "MATCH_COLUMNS",
    "RUBRIC_COLUMNS",
    "RUBRIC_JUDGE",
    "RUBRIC_SCOPE",
    "read_rubric",
    "rubric_to_matches",
]

RUBRIC_COLUMNS: tuple[str, ...] = ("task_id", "model", "check_id", "passed", "judge")
_REQUIRED: tuple[str, ...] = ("task_id", "model", "check_id", "passed")
_KEY = ["task_id", "model", "check_id"]
MATCH_COLUMNS: tuple[str, ...] = (
    "match_id", "scope", "task_id", "judge", "model_a", "model_b", "winner",
)  # fmt: skip
RUBRIC_SCOPE = "rubric"
RUBRIC_JUDGE = DETERMINISTIC_JUDGE
# Accepted on top of ratings.io.cells.booleans (true/false, 1/0, yes/no, t/f, real booleans).
_PASS_WORDS = {"pass": True, "fail": False}
_PASSED_HELP = ("`passed` accepts true/false, 1/0, yes/no, t/f, pass/fail (any case), booleans and "
                "shares in [0, 1] (0.5, 2/3)")
_TIE_TOL = 1e-9  # rates or shares this close (relative) tie: 1/3 + 1/3 vs 2/3 in floating point

# Row problems in the order they are checked (a row gets the first that applies), with the
# column whose values illustrate them in messages.
_KINDS: tuple[tuple[str, str | None], ...] = (
    ("missing task_id", None),
    ("missing model", None),
    ("missing check_id", None),
    ("missing passed", None),
    ("passed is not a grade (boolean-like or a share in [0, 1])", "passed"),
)


def read_rubric(
    source: str | os.PathLike[str] | pd.DataFrame,
    *,
    columns: Mapping[str, str] | None = None,
    duplicates: Literal["error", "last"] = "error",
) -> pd.DataFrame:
    """Read and validate a rubric: one row per (task, model, check) grading.

    Parameters
    ----------
    source : path or pandas.DataFrame
        A ``.csv`` / ``.tsv`` (optionally compressed), ``.parquet`` or ``.jsonl`` file (read as
        :func:`ratings.read_verdicts` reads files: every CSV field as text, so ids such as
        ``"007"`` keep their zeros), or a DataFrame, which is not modified.
    columns : mapping, optional
        Your column names to canonical ones, e.g. ``{"submission_model": "model", "ok":
        "passed"}``. Canonical columns: ``task_id``, ``model``, ``check_id``, ``passed`` and the
        optional ``judge`` (who graded). Other columns are ignored.
    duplicates : {"error", "last"}, default="error"
        What to do when one judge grades one check more than once for one submission (same
        ``task_id``, ``model``, ``check_id`` and ``judge``, or the same first three without a
        ``judge`` column): ``"error"`` raises and names the rows; ``"last"`` keeps the last
        grading in row order (a regrade supersedes earlier ones). Grades of one check by
        different judges are a panel, not duplicates: they are averaged (see Returns).

    Returns
    -------
    pandas.DataFrame
        One row per graded check of a submission: ``task_id``, ``model``, ``check_id`` (text,
        :data:`ratings.io.STRING_DTYPE`, stripped), ``passed`` (float64 in [0, 1]: 1.0 / 0.0 for
        a pass / fail, the grade's share, or the mean over the judges who graded the check),
        ``n_grades`` (how many grades were averaged) and, when the input has it, ``judge``
        (text; the judges of a panel joined by ``","``; may be missing). The index, named
        ``"row"``, holds the 0-based input row number (of a panel's first grade).

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    InvalidVerdictsError
        The file cannot be read, a column is missing, or rows are unusable: a missing
        ``task_id`` / ``model`` / ``check_id`` / ``passed``, a ``passed`` value that is not a
        grade, or (with ``duplicates="error"``) a check graded twice by one judge. ``.rows``
        lists the offending rows with a reason.
    ValueError
        Invalid arguments (``duplicates``, a mapping to a non-canonical column).

    Notes
    -----
    ``passed`` accepts true/false, 1/0, yes/no, t/f and pass/fail (case-insensitive, stripped),
    real booleans, and numbers or fractions in [0, 1] (``1.0``, ``0.0``, ``0.5``, ``2/3``: a
    share of judges passing). A missing ``passed`` is an error, never a fail: an ungraded check
    says nothing about the submission.

    Examples
    --------
    >>> import pandas as pd
    >>> raw = pd.DataFrame({"task_id": ["t1", "t1"], "model": ["x", "y"],
    ...                     "check_id": ["c1", "c1"], "passed": ["PASS", "1/3"]})
    >>> read_rubric(raw)["passed"].round(3).tolist()
    [1.0, 0.333]
    >>> panel = pd.DataFrame({"task_id": "t1", "model": "x", "check_id": "c1",
    ...                       "judge": ["J1", "J2", "J3"], "passed": [1, 1, 0]})
    >>> read_rubric(panel)[["passed", "n_grades", "judge"]].values.tolist()
    [[0.6666666666666666, 3, 'J1,J2,J3']]
    """
    if duplicates not in ("error", "last"):
        raise ValueError(f"{option('duplicates')} must be 'error' or 'last'; got {duplicates!r}.")
    targets = check_columns(columns, RUBRIC_COLUMNS, "rubric")
    frame, _, prefix, raw = load_table(
        source, targets, empty="The rubric DataFrame is empty (0 rows).",
        not_found="Rubric file", pick=_pick_rubric_columns)  # fmt: skip
    cells = {c: text(raw[c]) for c in (*_KEY, "judge") if c in raw}
    passed = _passed(raw["passed"])

    n = len(frame)
    reason = np.zeros(n, dtype=np.int8)
    masks = [cells[c].isna().to_numpy(dtype=bool) for c in _KEY]
    masks += [passed.isna().to_numpy(dtype=bool) & _missing(raw["passed"]), passed.isna()]
    for code, mask in enumerate(masks, start=1):
        reason[(reason == 0) & np.asarray(mask, dtype=bool)] = code
    if reason.any():
        raise _row_error(prefix, reason, raw)

    out = pd.DataFrame(
        {**{c: cells[c].array for c in _KEY},
         "passed": passed.to_numpy(dtype=np.float64),
         "n_grades": np.ones(n, dtype=np.int64),
         **({"judge": cells["judge"].array} if "judge" in cells else {})},
        index=pd.RangeIndex(n, name="row"),
    )  # fmt: skip
    key = [*_KEY, "judge"] if "judge" in out.columns else _KEY
    repeated = out.duplicated(key, keep=False).to_numpy()
    if repeated.any():
        if duplicates == "error":
            raise _duplicate_error(prefix, out, raw["passed"], repeated, key)
        out = out[~out.duplicated(key, keep="last").to_numpy()]
    if "judge" in out.columns and out.duplicated(_KEY).any():
        out = _average_panel(out)
    return out


def rubric_to_matches(
    rubric: pd.DataFrame, *, method: Literal["rate", "check"] = "rate"
) -> pd.DataFrame:
    """Turn rubric gradings into synthetic pairwise matches with a deterministic judge.

    Parameters
    ----------
    rubric : pandas.DataFrame
        Canonical rubric columns ``task_id``, ``model``, ``check_id``, ``passed`` (see
        :func:`read_rubric`, which this function calls again to validate; read with
        ``read_rubric(..., duplicates="last")`` first if some checks were regraded).
    method : {"rate", "check"}, default="rate"
        ``"rate"``: for each task, every pair of models graded on it plays one match; the model
        with the higher pass rate (the mean of ``passed`` over the checks that model was graded
        on for that task) wins, equal rates tie. ``"check"``: for each check both models of a
        pair were graded on, one match; the higher share wins (pass beats fail), equal shares
        tie. Shares within a relative 1e-9 of each other count as equal.

    Returns
    -------
    pandas.DataFrame
        Canonical verdict rows, columns ``match_id``, ``scope`` (``"rubric"``), ``task_id``,
        ``judge`` (``"deterministic"``), ``model_a``, ``model_b``, ``winner`` (``"A"``, ``"B"``
        or ``"tie"``), all text (:data:`ratings.io.STRING_DTYPE`), sorted by task, pair (and
        check). ``model_a < model_b`` in every row: a deterministic judge has no position bias,
        so the order carries no information. ``match_id`` is ``"rubric:{task}:{a}:{b}"``, plus
        ``":{check}"`` for ``method="check"``. Empty (with these columns) when no task has two
        graded models.

    Raises
    ------
    InvalidVerdictsError
        The rubric is invalid (see :func:`read_rubric`), or names containing ``":"`` make two
        match ids identical.
    ValueError
        ``method`` is not ``"rate"`` or ``"check"``.

    Notes
    -----
    The two methods weigh the evidence differently:

    * ``"rate"`` gives one observation per pair and task, whatever the number of checks: a task
      with 40 checks counts as much as a task with 3, and a pair that differs on one check of
      many counts as a full win. Matches are close to independent across tasks. Each rate is
      over the checks that model was graded on: when two models of a task were graded on
      different checks the rates are not like for like (``"check"`` compares shared checks
      only).
    * ``"check"`` is finer (it sees by how many checks two models differ), but it weights tasks
      by their number of shared checks, and the matches of one task are strongly dependent
      (same submissions, related checks). Intervals must then be clustered by task, which is
      what :func:`ratings.fit` does by default (``cluster="auto"`` uses ``task_id``); do not
      fit these matches with ``cluster=None``.

    A model that passes at least as often as another on every task never loses to it; if a
    model never loses at all, its rating is infinite and :func:`ratings.fit` raises
    :class:`~ratings.core.errors.NonIdentifiableError` (pass ``penalty=`` to shrink instead).

    Examples
    --------
    >>> import pandas as pd
    >>> rubric = pd.DataFrame({"task_id": ["t1"] * 4, "model": ["x", "x", "y", "y"],
    ...                        "check_id": ["c1", "c2", "c1", "c2"],
    ...                        "passed": [True, True, True, False]})
    >>> rubric_to_matches(rubric)[["model_a", "model_b", "winner"]].values.tolist()
    [['x', 'y', 'A']]
    >>> rubric_to_matches(rubric, method="check")["winner"].tolist()
    ['tie', 'A']
    """
    if method not in ("rate", "check"):
        raise ValueError(f"`method` must be 'rate' or 'check'; got {method!r}.")
    if not isinstance(rubric, pd.DataFrame):
        raise TypeError(
            f"`rubric` must be a pandas DataFrame (see read_rubric); got {type(rubric).__name__!r}."
        )
    rb = read_rubric(rubric)[["task_id", "model", "check_id", "passed"]]

    if method == "rate":
        per = (rb.groupby(["task_id", "model"], sort=False, observed=True)["passed"]
               .agg(n_pass="sum", n="size").reset_index())  # fmt: skip
        pairs = per.merge(per, on="task_id", suffixes=("_a", "_b"))
        order = ["task_id", "model_a", "model_b"]
    else:
        pairs = rb.merge(rb, on=["task_id", "check_id"], suffixes=("_a", "_b"))
        order = ["task_id", "model_a", "model_b", "check_id"]
    pairs = pairs[(pairs["model_a"] < pairs["model_b"]).to_numpy(dtype=bool)]
    pairs = pairs.sort_values(order, kind="stable", ignore_index=True)
    if method == "rate":
        # Compare pass rates n_pass_a / n_a and n_pass_b / n_b cross-multiplied (exact for
        # pass/fail grades; shares that agree to rounding tie).
        lhs = pairs["n_pass_a"].to_numpy(np.float64) * pairs["n_b"].to_numpy(np.float64)
        rhs = pairs["n_pass_b"].to_numpy(np.float64) * pairs["n_a"].to_numpy(np.float64)
        scale = pairs["n_a"].to_numpy(np.float64) * pairs["n_b"].to_numpy(np.float64)
    else:
        lhs = pairs["passed_a"].to_numpy(np.float64)
        rhs = pairs["passed_b"].to_numpy(np.float64)
        scale = np.ones(lhs.size)
    tie = np.abs(lhs - rhs) <= _TIE_TOL * scale
    outcome = np.where(tie, 2, np.where(lhs > rhs, 0, 1)).astype(np.int8)

    match_id = "rubric:" + pairs["task_id"] + ":" + pairs["model_a"] + ":" + pairs["model_b"]
    if method == "check":
        match_id = match_id + ":" + pairs["check_id"]
    n = len(pairs)
    out = pd.DataFrame(
        {"match_id": match_id.astype(STRING_DTYPE).array,
         "scope": _constant(RUBRIC_SCOPE, n),
         "task_id": pairs["task_id"].array,
         "judge": _constant(RUBRIC_JUDGE, n),
         "model_a": pairs["model_a"].array,
         "model_b": pairs["model_b"].array,
         "winner": winner_labels(outcome)},
    )  # fmt: skip
    # Ids are unique by construction unless a name contains ":" (checked on distinct names).
    colon = any(rb[c].drop_duplicates().str.contains(":", regex=False).any() for c in _KEY)
    clash = out["match_id"].duplicated(keep=False).to_numpy() if colon else np.zeros(0, bool)
    if clash.any():
        ids = out["match_id"][clash].unique()[:5].tolist()
        raise InvalidVerdictsError(
            f"{int(clash.sum())} synthetic matches share a match_id, e.g. {ids!r}: task, model "
            "or check names containing ':' make ids ambiguous. Rename them (replace ':').",
            rows=pd.DataFrame({"row": np.flatnonzero(clash), "reason": "ambiguous match_id",
                               "match_id": out["match_id"][clash].to_numpy()}),
        )  # fmt: skip
    return out


# ----------------------------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------------------------


def _missing_rubric_columns(missing: list[str], labels: list[object]) -> str:
    by_lower = {str(c).strip().lower(): c for c in labels}
    example = {}
    for m in missing:
        close = difflib.get_close_matches(m, list(by_lower), n=1, cutoff=0.6)
        example[by_lower[close[0]] if close else f"your_{m}"] = m
    return (f"Column(s) {missing} not found in the rubric. Available columns: {labels}. "
            f"Required: {list(_REQUIRED)} (optional: 'judge'). Pass "
            f"{option('columns', example)} to map your names.")  # fmt: skip


def _pick_rubric_columns(
    frame: pd.DataFrame, targets: Mapping[str, str], prefix: str
) -> dict[str, object]:
    """Return {canonical name: column label of ``frame``} for the rubric columns present."""
    return pick_columns(frame, targets, prefix, canonical=RUBRIC_COLUMNS, required=_REQUIRED,
                        what="the rubric", missing_message=_missing_rubric_columns)  # fmt: skip


def _constant(value: str, n: int) -> pd.api.extensions.ExtensionArray:
    """``n`` copies of ``value`` in :data:`STRING_DTYPE` (a take, not a Python list)."""
    return pd.array([value], dtype=STRING_DTYPE).take(np.zeros(n, dtype=np.intp))


def _missing(values: pd.Series) -> NDArray[np.bool_]:
    """Cells that are missing (NaN, None, empty or an NA marker such as "NA")."""
    return text(values).isna().to_numpy(dtype=bool)


def _passed(values: pd.Series) -> pd.Series:
    """Parse ``passed``: a float Series in [0, 1], NaN where missing or not a grade."""
    flags, bad = booleans(values)  # the shared parser: true/false, 1/0, yes/no, t/f
    value = flags.astype(np.float64)
    if bad.any():  # add pass/fail and shares, parsed on the rejected subset only
        rows = np.flatnonzero(bad)
        cells = text(values.iloc[rows]).str.lower()
        share = cells.map(_PASS_WORDS).astype("Float64").fillna(cells.map(_share))
        known = share.notna().to_numpy(dtype=bool)
        value[rows[known]] = share[known].to_numpy(dtype=np.float64)
        bad[rows[known]] = False
    return pd.Series(value).mask(bad | _missing(values))


def _share(cell: object) -> float:
    """A number or fraction ``k/n`` in [0, 1] (NaN otherwise): ``"0.5"``, ``"1.0"``, ``"2/3"``."""
    if not isinstance(cell, str):
        return np.nan
    num, sep, den = cell.partition("/")
    try:
        x = float(num) / float(den) if sep else float(num)
    except (ValueError, ZeroDivisionError):
        return np.nan
    return x if 0.0 <= x <= 1.0 else np.nan


def _average_panel(out: pd.DataFrame) -> pd.DataFrame:
    """One row per (task, model, check): the mean grade of the judges who graded it."""
    first = out.reset_index()
    groups = first.groupby(_KEY, sort=False, observed=True)
    judges = groups["judge"].agg(lambda j: ",".join(sorted(j.dropna().astype(str))) or None)
    panel = groups.agg(row=("row", "first"), passed=("passed", "mean"),
                       n_grades=("n_grades", "sum")).join(judges)  # fmt: skip
    panel = panel.reset_index().set_index("row")
    panel["judge"] = panel["judge"].astype(STRING_DTYPE)
    return panel[list(out.columns)]


def _row_error(
    prefix: str, reason: NDArray[np.int8], raw: dict[str, pd.Series]
) -> InvalidVerdictsError:
    """The error for rows with a missing key, a missing or a non-boolean ``passed``."""
    bad = np.flatnonzero(reason)
    kinds = reason[bad]
    parts = []
    for k in pd.unique(kinds):  # at most len(_KINDS) kinds
        rows = bad[kinds == k]
        kind, column = _KINDS[k - 1]
        where = f"rows {format_rows(rows)}"
        if column is not None:
            shown = raw[column].iloc[rows].drop_duplicates().head(5).tolist()
            where = f"e.g. {shown!r} at {where}"
        parts.append(f"{rows.size} with {kind} ({where})")
    fix = f"{_PASSED_HELP}; " if len(_KINDS) in kinds else ""  # the last kind: non-boolean
    table = pd.DataFrame({
        "row": bad.astype(np.int64),
        "reason": np.asarray([k for k, _ in _KINDS], dtype=object)[kinds - 1],
        **{c: s.iloc[bad].to_numpy() for c, s in raw.items()},
    })  # fmt: skip
    return InvalidVerdictsError(
        f"{prefix}{bad.size} rubric row(s) cannot be used: {'; '.join(parts)}. {fix}fix or "
        "drop these rows (a missing grade is not a fail).",
        rows=table,
    )


def _duplicate_error(
    prefix: str, out: pd.DataFrame, passed_raw: pd.Series, repeated: NDArray[np.bool_],
    key: list[str],
) -> InvalidVerdictsError:
    """The error for checks graded more than once by one judge for one submission."""
    dup = out[repeated].reset_index()
    groups = dup.groupby(key, sort=False, observed=True, dropna=False)["row"]
    dup["first_row"] = groups.transform("min")
    dup["times"] = groups.transform("size")
    listed = groups.agg(list).head(5)  # a few groups, for the message
    shown = "; ".join(f"{key!r} at rows {format_rows(rows)}" for key, rows in listed.items())
    n_groups = groups.ngroups
    table = pd.DataFrame({
        "row": dup["row"].to_numpy(np.int64),
        "reason": ("check graded " + dup["times"].astype(str) + " times for this submission "
                   "(first at row " + dup["first_row"].astype(str) + ")").to_numpy(object),
        **{c: dup[c].to_numpy() for c in key},
        "passed": passed_raw.iloc[dup["row"].to_numpy()].to_numpy(),
    })  # fmt: skip
    panel = ("" if "judge" in key else " If these are grades of several judges, add a 'judge' "
             "column naming who graded each: a panel's grades of one check are averaged.")
    return InvalidVerdictsError(
        f"{prefix}{n_groups} check(s) were graded more than once for the same submission "
        f"({', '.join(key)}), in {len(dup)} rows: {shown}"
        f"{'; ...' if n_groups > 5 else ''}. Pass {option('duplicates', 'last')} to keep the "
        "last grading of each (a regrade supersedes earlier ones), or remove the repeats."
        + panel,
        rows=table,
    )
