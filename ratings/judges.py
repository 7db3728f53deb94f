"""Judge quality (Crowd-BT eta) per scope: fit on past judgments, save, and reuse in later fits."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

from ratings.errors import InvalidVerdictsError, option
from ratings.schema import DETERMINISTIC_JUDGE

__all__ = [
    "FORMAT",
    "JudgeQuality",
    "load_judge_quality",
    "resolve_judge_quality",
    "save_judge_quality",
]

FORMAT = "ratings.judge_quality/1"
JudgeQuality = str | os.PathLike | pd.DataFrame | Mapping[str, float] | None


def save_judge_quality(
    judges: pd.DataFrame, path: str | os.PathLike, *, scope: str | None,
    source: str | None = None, inputs: tuple = (),
) -> dict:  # fmt: skip
    """Write a judges table (from ``Ratings.judges``) as a reusable JSON file, atomically.

    The file records the format, scope, creation time (UTC), source and, per judge: eta, se,
    lower, upper, n (verdicts) and status. Returns the document written.
    """
    from ratings.io import write_atomic

    table = judges.reset_index() if "judge" not in judges.columns else judges
    rows = json.loads(table.to_json(orient="records", double_precision=15))
    doc = {
        "format": FORMAT,
        "scope": scope,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "model": "crowd-bt",
        "source": None if source is None else str(source),
        "judges": rows,
    }
    write_atomic(json.dumps(doc, indent=2) + "\n", path, inputs=inputs)
    return doc


def load_judge_quality(path: str | os.PathLike) -> tuple[pd.DataFrame, str | None]:
    """Read a judge-quality file; returns (table indexed by judge, scope)."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        msg = f"Cannot read judge-quality file {str(path)!r}: {err}."
        raise InvalidVerdictsError(msg) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(
        doc.get("judges"), list
    ):
        raise InvalidVerdictsError(
            f"{str(path)!r} is not a judge-quality file (expected a JSON object with "
            f"format {FORMAT!r} and a 'judges' list, as written by `ratings judges`)."
        )
    table = pd.DataFrame(doc["judges"])
    if not {"judge", "eta"} <= set(table.columns):
        raise InvalidVerdictsError(f"{str(path)!r}: every judge entry needs 'judge' and 'eta'.")
    return table.set_index("judge"), doc.get("scope")


def _as_mapping(quality: JudgeQuality, scope: str | None) -> dict[str, float]:
    if isinstance(quality, str | os.PathLike):
        table, file_scope = load_judge_quality(quality)
        if scope is not None and file_scope is not None and file_scope != scope:
            raise ValueError(
                f"The judge-quality file {str(quality)!r} was fitted on scope {file_scope!r}, "
                f"not {scope!r}; eta is fitted per scope. Fit it with `ratings judges VERDICTS "
                f"--scope {scope}`."
            )
        quality = table
    if isinstance(quality, pd.DataFrame):
        table = quality.set_index("judge") if "judge" in quality.columns else quality
        quality = table["eta"].to_dict()
    out = {}
    for judge, value in dict(quality).items():
        try:
            out[str(judge)] = float(value)
        except (TypeError, ValueError):
            raise ValueError(
                f"Judge quality of {str(judge)!r} must be a number in [0.5, 1]; got {value!r}."
            ) from None
    return out


def resolve_judge_quality(
    quality: JudgeQuality, judges: pd.Index, *, scope: str | None, fit_new_judges: bool
) -> dict[str, float]:
    """Turn a judge-quality source into ``{judge: eta}`` for the judges in the data.

    Raises a clear error for an eta outside [1/2, 1], or for a judge of the data that the source
    does not cover (unless ``fit_new_judges``, which estimates those). ``deterministic`` is 1.
    """
    if quality is None:
        return {}
    eta = _as_mapping(quality, scope)
    bad = {k: v for k, v in eta.items() if not (np.isfinite(v) and 0.5 <= v <= 1.0)}
    if bad:
        raise ValueError(f"Judge quality eta must lie in [0.5, 1]; got {bad}.")
    if eta.get(DETERMINISTIC_JUDGE, 1.0) != 1.0:
        raise ValueError(
            f"Judge {DETERMINISTIC_JUDGE!r} marks judge-free comparisons (rubric matches, render "
            f"forfeits); its eta is always 1, got {eta[DETERMINISTIC_JUDGE]!r}."
        )
    unknown = [str(j) for j in judges if j not in eta and j != DETERMINISTIC_JUDGE]
    if unknown and not fit_new_judges:
        raise ValueError(
            f"Judge(s) {unknown} have no eta in the judge-quality source (it has "
            f"{sorted(eta)}). Pass {option('fit_new_judges', True)} to estimate theirs, or "
            "refit the judge qualities."
        )
    return {j: v for j, v in eta.items() if j in set(judges)}
