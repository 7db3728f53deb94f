"""Judge-quality files: write the judges of a Crowd-BT fit for reuse in later fits (format
``ratings.judge_quality/2``, read by :mod:`ratings.models.crowd.quality`)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime

from ratings.core.version import __version__
from ratings.models.crowd.quality import FORMAT
from ratings.result import Ratings

__all__ = ["save_judge_quality"]


def _fit_info(r: Ratings) -> dict:
    version = __version__
    counts = r.judges[["n", "ties"]].sum()
    n = int(counts["n"])
    return {
        "n_verdicts": n,
        "n_decisive": n - int(counts["ties"]),
        "n_tasks": int(r.n_clusters) if r.cluster else None,
        "cluster": r.cluster,
        "tie_rate": float(counts["ties"] / n) if n else None,
        "n_models": len(r.models),
        "prior": None if r.crowd is None or r.crowd.prior is None else list(r.crowd.prior),
        "ci": r.ci,
        "level": r.level,
        "ratings_version": version,
    }


def save_judge_quality(
    fit: Ratings, path: str | os.PathLike, *, source: str | None = None, inputs: tuple = (),
) -> dict:  # fmt: skip
    """Write the judges of a Crowd-BT fit as a reusable JSON file, atomically.

    The file records the format, scope, creation time (UTC), source, how the etas were fitted
    (see the module notes), per judge eta, se, lower, upper, n, ties and status, and the etas'
    covariance. Returns the document written.
    """
    from ratings.io import write_atomic

    if getattr(fit, "judges", None) is None or fit.crowd is None:
        raise ValueError("`fit` must be a Crowd-BT fit (ratings.fit(..., model='crowd-bt')).")
    table = fit.judges.reset_index()
    rows = json.loads(table.to_json(orient="records", double_precision=15))
    cov = fit.crowd.eta_cov
    doc = {
        "format": FORMAT,
        "scope": fit.scope,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "model": "crowd-bt",
        "source": None if source is None else str(source),
        "fit": _fit_info(fit),
        "judges": rows,
        "covariance": {"judges": [str(j) for j in cov.index],
                       "matrix": json.loads(json.dumps(cov.to_numpy().tolist()))},
    }  # fmt: skip
    write_atomic(json.dumps(doc, indent=2) + "\n", path, inputs=inputs)
    return doc
