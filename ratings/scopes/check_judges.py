"""One judge per rubric check: balanced across checks, stable when checks are added.

A rubric check should always be graded by the same judge, so that every model's submission is
held to the same reading of it; and the judges should share the checks evenly. Checks are taken
in the order they first appear (a check is its ``check_id``, within its ``task_id`` when the
table has one); each goes to a judge with the fewest checks so far, ties broken by a seeded
draw. So the judges' counts never differ by more than one, and a check's judge depends only on
the checks before it: appending checks to the table leaves every earlier assignment as it was.
An earlier assignment (``previous``) is kept as it is whatever the order, and the new checks
level the counts from there.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["assign_check_judges", "check_keys"]


def check_keys(frame: pd.DataFrame, what: str = "checks") -> list[str]:
    """The columns that name a check: ``task_id`` (if present) and ``check_id``."""
    if "check_id" not in frame.columns:
        raise ValueError(
            f"Column 'check_id' not found in {what}. Available columns: "
            f"{frame.columns.tolist()}. A check is its check_id (within its task_id, when given)."
        )
    keys = [c for c in ("task_id", "check_id") if c in frame.columns]
    missing = frame[keys].isna().any(axis=1).to_numpy()
    if missing.any():
        rows = np.flatnonzero(missing)
        raise ValueError(
            f"{what.capitalize()} have {rows.size} row(s) with a missing {' or '.join(keys)}, at "
            f"rows {rows[:5].tolist()}. Fill or drop those rows."
        )
    return keys


def _unique_checks(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    text = frame[keys].astype("string").apply(lambda c: c.str.strip())
    return text.drop_duplicates(ignore_index=True)


def assign_check_judges(
    checks: pd.DataFrame,
    judges: Sequence[str],
    *,
    seed: int,
    previous: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Give every rubric check one judge, balanced across checks and stable across runs.

    Parameters
    ----------
    checks : pandas.DataFrame
        A ``check_id`` column (and ``task_id``, when checks are per task); any other columns
        and repeated rows (e.g. a rubric results table with one row per model) are ignored.
    judges : list of str
        The panel.
    seed : int
        Seed of the tie-breaks between equally loaded judges.
    previous : pandas.DataFrame, optional
        An earlier assignment (the same key columns and ``judge``): those checks keep their
        judge; checks it does not list are assigned so that the counts come as close to level
        as they can.

    Returns
    -------
    pandas.DataFrame
        The key columns and ``judge``, one row per check in order of first appearance.

    Raises
    ------
    ValueError
        No ``check_id`` column, missing keys, a bad panel or seed, or an earlier assignment that
        gives checks to judges outside the panel or one check to two judges.
    """
    panel = [str(j).strip() for j in ([judges] if isinstance(judges, str) else judges)]
    if not panel or any(not j for j in panel) or len(set(panel)) != len(panel):
        raise ValueError(
            f"`judges` must be a non-empty list of distinct, non-empty names; got {judges!r}."
        )
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"`seed` must be a non-negative integer; got {seed!r}.")
    keys = check_keys(checks)
    table = _unique_checks(checks, keys)
    judge = pd.Series(pd.NA, index=table.index, dtype="string")
    if previous is not None:
        judge = _keep_previous(table, keys, previous, panel)
    count = judge.value_counts().reindex(panel, fill_value=0).to_numpy(dtype=np.int64).copy()
    rng = np.random.default_rng(int(seed))
    names = np.asarray(panel, dtype=object)
    out = judge.to_numpy(dtype=object, na_value=None)
    for k in np.flatnonzero(pd.isna(judge).to_numpy()):
        tie = rng.random(len(panel))
        j = int(np.lexsort((tie, count))[0])  # fewest checks, then the seeded draw
        out[k] = names[j]
        count[j] += 1
    return table.assign(judge=out).astype({"judge": object})


def _keep_previous(table: pd.DataFrame, keys: list[str], previous: pd.DataFrame,
                   panel: list[str]) -> pd.Series:  # fmt: skip
    """The earlier judge of each check (missing for new checks), checked."""
    if "judge" not in previous.columns:
        raise ValueError(
            f"Column 'judge' not found in the previous assignment. Available columns: "
            f"{previous.columns.tolist()}."
        )
    if check_keys(previous, "the previous assignment") != keys:
        raise ValueError(
            f"The previous assignment names checks by {check_keys(previous)} but the checks by "
            f"{keys}; use the same columns."
        )
    old = _unique_checks(previous, [*keys, "judge"])
    twice = old.duplicated(keys, keep=False).to_numpy()
    if twice.any():
        first = old.loc[twice, keys].iloc[0].tolist()
        raise ValueError(
            f"The previous assignment gives {int(twice.sum())} row(s) of one check to different "
            f"judges, e.g. check {first}. A check has one judge."
        )
    outside = sorted(set(old["judge"].dropna()) - set(panel))
    if outside:
        raise ValueError(
            f"The previous assignment gives checks to judge(s) {outside} that are not in "
            f"`judges` {panel}. Drop those rows to reassign their checks, or add the judges."
        )
    merged = table.merge(old, on=keys, how="left")
    return merged["judge"].astype("string")
