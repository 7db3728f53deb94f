"""Judge quality (Crowd-BT eta) per scope: read a judge-quality file and resolve it for a fit
(:func:`ratings.scopes.judge_files.save_judge_quality` writes one).

A judge-quality file (format ``ratings.judge_quality/2``, JSON) records for one scope each
judge's eta, standard error, interval, verdicts, ties and status, the full covariance of the
etas, and how they were fitted: verdicts, decisive verdicts, tasks (clusters), tie rate,
number of models, prior, interval type and the package version. A later fit that reuses it
(``judge_quality=``, CLI ``--judge-quality``) fixes eta at the file's values and adds their
uncertainty to the strengths' covariance, with or without style features and judge effects (the
two-step term, :mod:`ratings.models.crowd.reuse`), unless ``eta_known=True`` (CLI
``--eta-known``).

Files of format ``/1`` (no covariance), plain JSON objects ``{judge: eta}``, judges tables
and mappings give etas without a covariance: they are treated as known, and files say so with
a :class:`~ratings.core.errors.JudgeWarning`.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ratings.core.errors import InvalidVerdictsError, JudgeWarning, option
from ratings.core.schema import DETERMINISTIC_JUDGE

__all__ = [
    "FORMAT",
    "JudgeFile",
    "JudgeQuality",
    "ResolvedQuality",
    "load_judge_quality",
    "resolve_judge_quality",
]

FORMAT = "ratings.judge_quality/2"
OLD_FORMATS = ("ratings.judge_quality/1",)
JudgeQuality = str | os.PathLike | pd.DataFrame | Mapping[str, float] | None
REFIT = "Refit it with `ratings judges` (Python: `ratings.scopes.judge_files.save_judge_quality`)"


@dataclass(frozen=True)
class JudgeFile:
    """A judge-quality file as read: the judges table (indexed by judge), its scope, the etas'
    covariance (``None`` for formats without one), the fit information and the format."""

    table: pd.DataFrame
    scope: str | None
    cov: pd.DataFrame | None
    fit: dict
    format: str


@dataclass(frozen=True)
class ResolvedQuality:
    """Etas to fix in a fit, and what is known of their uncertainty.

    ``cov`` (judges x judges, or None) is carried into the strengths' intervals; ``table`` holds
    the source's ``se`` per judge for the report."""

    eta: dict[str, float]
    cov: pd.DataFrame | None = None
    table: pd.DataFrame | None = None
    note: str | None = None  # why the source's uncertainty cannot be carried


def _no_duplicates(path: str):
    """``object_pairs_hook`` that refuses repeated keys (json keeps the last one silently)."""

    def hook(pairs):
        seen: dict = {}
        for key, value in pairs:
            if key in seen:
                who = dict(pairs).get("judge")
                where = f" in the entry of judge {who!r}" if isinstance(who, str) else ""
                raise InvalidVerdictsError(
                    f"{path!r}: key {key!r} appears twice{where}; a judge-quality file must name "
                    "each judge, and each field, once."
                )
            seen[key] = value
        return seen

    return hook


def _number(judge, value, path: str, what: str = "eta") -> float:
    """A JSON number (not a boolean, string or null) as float, or an error naming the judge."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
        raise InvalidVerdictsError(
            f"{path!r}: {what} of judge {str(judge)!r} must be a number in [0.5, 1]; "
            f"got {value!r}."
        )
    return float(value)


def load_judge_quality(path: str | os.PathLike) -> JudgeFile:
    """Read a judge-quality file (format ``/2``, ``/1`` or a plain ``{judge: eta}`` object).

    Raises :class:`~ratings.core.errors.InvalidVerdictsError` naming the file, and the judge where
    one is at fault: unreadable JSON, a key or judge given twice, an eta that is not a number,
    a covariance that does not match the judges or is not symmetric positive semi-definite.
    """
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
        doc = json.loads(text, object_pairs_hook=_no_duplicates(name))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InvalidVerdictsError(f"Cannot read judge-quality file {name!r}: {err}.") from None
    if isinstance(doc, dict) and "format" not in doc and "judges" not in doc and doc:
        eta = {str(j): _number(j, v, name) for j, v in doc.items()}  # {judge: eta}
        table = pd.DataFrame({"eta": eta}).rename_axis("judge")
        return JudgeFile(table, None, None, {}, "mapping")
    fmt = doc.get("format") if isinstance(doc, dict) else None
    if fmt not in (FORMAT, *OLD_FORMATS) or not isinstance(doc.get("judges"), list):
        raise InvalidVerdictsError(
            f"{name!r} is not a judge-quality file (expected a JSON object with format "
            f"{FORMAT!r} and a 'judges' list, as written by `ratings judges`, or a JSON object "
            "{judge: eta})."
        )
    entries = doc["judges"]
    if not all(isinstance(e, dict) and {"judge", "eta"} <= set(e) for e in entries):
        raise InvalidVerdictsError(f"{name!r}: every judge entry needs 'judge' and 'eta'.")
    judges = [str(e["judge"]) for e in entries]
    twice = sorted({j for j in judges if judges.count(j) > 1})
    if twice:
        raise InvalidVerdictsError(f"{name!r}: judge(s) {twice} appear more than once.")
    for e in entries:
        e["eta"] = _number(e["judge"], e["eta"], name)
    table = pd.DataFrame(entries).assign(judge=judges).set_index("judge")
    cov = _covariance(doc.get("covariance"), judges, name) if fmt == FORMAT else None
    return JudgeFile(table, doc.get("scope"), cov, dict(doc.get("fit") or {}), fmt)


def _covariance(block, judges: list[str], name: str) -> pd.DataFrame:
    bad = f"{name!r}: 'covariance' must be {{'judges': [...], 'matrix': [[...]]}}"
    if not isinstance(block, dict) or not isinstance(block.get("judges"), list):
        raise InvalidVerdictsError(f"{bad} naming the file's judges.")
    order = [str(j) for j in block["judges"]]
    try:
        mat = np.array(block.get("matrix"), dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidVerdictsError(f"{bad} with numbers.") from None
    if sorted(order) != sorted(judges) or mat.shape != (len(order), len(order)):
        raise InvalidVerdictsError(f"{bad}, one row and column per judge of 'judges'.")
    scale = max(float(np.max(np.abs(mat), initial=0.0)), 1e-300)
    if (not np.isfinite(mat).all() or np.max(np.abs(mat - mat.T), initial=0.0) > 1e-9 * scale
            or np.linalg.eigvalsh((mat + mat.T) / 2).min() < -1e-9 * scale):  # fmt: skip
        raise InvalidVerdictsError(
            f"{name!r}: the etas' covariance is not a symmetric positive semi-definite matrix "
            f"of finite numbers. {REFIT}."
        )
    return pd.DataFrame(mat, index=order, columns=order).loc[judges, judges]


def _source(quality, scope: str | None, eta_known: bool) -> ResolvedQuality:
    """A judge-quality source as etas, covariance and table (scope checked for files)."""
    cov = table = note = None
    if isinstance(quality, str | os.PathLike):
        f = load_judge_quality(quality)
        if scope is not None and f.scope is not None and f.scope != scope:
            raise ValueError(
                f"The judge-quality file {str(quality)!r} was fitted on scope {f.scope!r}, "
                f"not {scope!r}; eta is fitted per scope. Fit it with `ratings judges VERDICTS "
                f"--scope {scope}`."
            )
        table, cov = f.table, f.cov
        note = None if f.cov is not None or eta_known else (
            f"The judge-quality file {str(quality)!r} ({f.format}) keeps no covariance of eta: "
            "its etas are treated as known and their uncertainty cannot be carried into the "
            f"intervals (which are then too narrow). {REFIT}.")  # fmt: skip
    elif getattr(quality, "crowd", None) is not None:  # a Crowd-BT fit (Ratings)
        table, cov = quality.judges, quality.crowd.eta_cov
    elif isinstance(quality, pd.DataFrame):  # a judges table: its etas alone
        table = quality.set_index("judge") if "judge" in quality.columns else quality
        quality, table = table["eta"].to_dict(), None
    out = {}
    for judge, value in dict(quality if table is None else table["eta"]).items():
        try:
            if isinstance(value, bool):
                raise TypeError
            out[str(judge)] = float(value)
        except (TypeError, ValueError):
            raise ValueError(
                f"Judge quality of {str(judge)!r} must be a number in [0.5, 1]; got {value!r}."
            ) from None
    return ResolvedQuality(out, None if eta_known else cov, table, note)


def resolve_judge_quality(
    quality: JudgeQuality, judges: pd.Index, *, scope: str | None, fit_new_judges: bool,
    eta_known: bool = False,
) -> ResolvedQuality:  # fmt: skip
    """Turn a judge-quality source into the etas to fix for the judges in the data.

    ``quality`` is a judge-quality file, a Crowd-BT fit (:class:`~ratings.result.Ratings`), a
    judges table or ``{judge: eta}``. Raises a clear error for an eta outside [1/2, 1], or for
    a judge of the data that the source does not cover (unless ``fit_new_judges``, which
    estimates those). ``deterministic`` is 1. The covariance is kept (restricted to the data's
    judges) unless ``eta_known``.
    """
    if quality is None:
        return ResolvedQuality({})
    src = _source(quality, scope, eta_known)
    eta = src.eta
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
    graded = [str(j) for j in judges if j != DETERMINISTIC_JUDGE]
    if graded and len(graded) == len(judges) and all(eta.get(j) == 0.5 for j in graded):
        raise ValueError(
            f"Every judge's quality eta is fixed at 0.5 ({', '.join(graded[:5])}"
            f"{', ...' if len(graded) > 5 else ''}): a judge at 0.5 picks the winner at random, "
            "so these verdicts carry no information about the models and the ratings would be "
            f"the prior's alone. Give the judges' qualities ({option('judge_quality')}) above "
            "0.5, or leave them out so that Crowd-BT estimates them.")  # fmt: skip
    if src.note is not None:
        warnings.warn(src.note, JudgeWarning, stacklevel=4)
    present = [j for j in eta if j in set(judges)]
    cov = None
    if src.cov is not None:
        keep = [j for j in present if j in src.cov.index]
        cov = src.cov.loc[keep, keep]
    table = None if src.table is None or "se" not in src.table else src.table
    return ResolvedQuality({j: eta[j] for j in present}, cov, table)
