"""Style control: strengths fitted jointly with one shared coefficient per answer-style feature.

Model
-----
A verdict between model A (slot A) and model B (slot B) carries per-side style measurements
(``tokens_a``, ``tokens_b``, ...). Each feature becomes one number per verdict,

    x = (a - b) / (a + b)        (0 where both are 0; ``transform="normalized"``, the default)

or ``a - b`` (``"diff"``), ``(a - b) / max(a, b)`` (``"ratio"``) or ``log(1 + a) - log(1 + b)``
(``"log-ratio"``), divided by its root-mean-square over the verdicts of the fit (not centred:
x = 0 means equal style, the point the controlled ratings refer to; a shift would act as a
position effect). The reported ``scale`` is that root-mean-square, so ``coef / scale`` is the
coefficient per unit of the transformed feature. Then

    d = s_A - s_B + beta . x,   P(A) = sigma(d)                                (Bradley-Terry)
    P(A) = eta_k sigma(d) + (1 - eta_k) sigma(-d)                               (Crowd-BT)

with ties as half wins (Bradley-Terry), left out (Crowd-BT, as its fits do), or the outcome of
a tie model (Davidson, Rao-Kupper). The controlled ratings are the strengths s: what a judge
would say between answers of equal style.

The features are covariate columns of the one design with covariates
(:mod:`ratings.models.covariates`: rows, fit, intervals), beside judge effects when both are
asked for (:func:`ratings.api.covariates.fit_covariates`). This module reads and scales the
features (in blocks on the package's threads, kernels :mod:`ratings.kernels.style` and their
twins) and builds the coefficients' table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core import threads
from ratings.core.errors import InvalidVerdictsError, format_rows, option
from ratings.core.schema import ELO_SCALE, require_columns
from ratings.kernels.engine import Engine, kernels

if TYPE_CHECKING:
    from ratings.models.covariates import DesignFit, Remedy

# The design fit's machinery (ratings.models.covariates, and the inference below it) is imported
# where it runs: the option table reads TRANSFORMS before the command line is parsed, and the
# program starts reading the log before it imports the fit's modules.

__all__ = ["TRANSFORMS", "check_style_columns", "feature_columns", "feature_jobs", "parse_style",
           "style_columns", "style_remedy", "style_table"]


#: Feature transforms ``transform=`` accepts (position = ``kind`` of the transform kernel).
TRANSFORMS = ("normalized", "diff", "ratio", "log-ratio")


def style_remedy(ridge: str) -> Remedy:
    """How the errors of a style-controlled fit name the style features (and what to do;
    ``ridge``: the ridge option as the user sets it)."""
    from ratings.models.covariates import Remedy

    return Remedy("Style-controlled", "style coefficients",
                  "some feature (or model) separates wins from losses on these verdicts. Drop "
                  f"that feature from {option('style')} or add a ridge ({ridge}).",
                  "some feature cannot be told apart from the strengths (e.g. a feature that is "
                  f"constant per model pair). Drop it from {option('style')}.")  # fmt: skip


def parse_style(style: str | Sequence[str] | None) -> tuple[str, ...]:
    """``"tokens,headers"`` (or a list) -> ``("tokens", "headers")`` (duplicates refused)."""
    if style is None:
        return ()
    items = str(style).split(",") if isinstance(style, str) else [str(s) for s in style]
    items = [s.strip() for s in items if s.strip()]
    dup = sorted({s for s in items if items.count(s) > 1})
    if dup:
        raise ValueError(f"{option('style')} names feature(s) {dup} more than once.")
    return tuple(items)


def _numeric(frame: pd.DataFrame, col: str) -> NDArray:
    """A kept column as numbers (integers as they are; categoricals converted once per
    category), naming missing or non-numeric values; the sign is checked by the transform
    (:func:`feature_columns`)."""
    s = frame[col]
    if s.dtype.kind in "iu":  # no missing value
        return s.to_numpy()
    if isinstance(s.dtype, pd.CategoricalDtype):
        cats = pd.to_numeric(pd.Series(s.cat.categories.astype(str)), errors="coerce").to_numpy()
        codes = np.asarray(s.array.codes)
        vals = np.where(codes >= 0, cats[np.maximum(codes, 0)], np.nan)
    elif pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype):
        vals = s.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        vals = pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64)
    vals = np.asarray(vals, dtype=np.float64)
    bad = ~np.isfinite(vals)
    if bad.any():
        _refuse(frame, col, bad, "missing or non-numeric", "not a number",
                "Every verdict needs a count for both answers")  # fmt: skip
    return vals


def _refuse(frame: pd.DataFrame, col: str, bad: NDArray[np.bool_], what: str, reason: str,
            need: str) -> None:  # fmt: skip
    """Raise naming the rows ``bad`` of feature column ``col`` (``what`` values) and ``need``."""
    rows = frame.index[bad]
    raise InvalidVerdictsError(
        f"Style feature column {col!r} has {int(bad.sum())} {what} value(s): rows "
        f"{format_rows(rows)}. {need} ({option('style')}).",
        rows=pd.DataFrame({"row": np.asarray(rows), "reason": f"{col} {reason}"}),
    )


def feature_columns(frame: pd.DataFrame, names: Sequence[str], transform: str = "normalized",
                    engine: Engine = "auto", *, concurrent: bool = True,
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:  # fmt: skip
    """The features unscaled, one per row (p x n), and their scales (each feature's
    root-mean-square over the verdicts; :func:`feature_jobs` scales them). ``frame`` holds
    ``NAME_a`` and ``NAME_b`` for every name. Raises
    :class:`~ratings.core.errors.InvalidVerdictsError` for a missing column, a missing or
    negative value (naming rows), or a feature equal on both sides of every verdict.
    ``concurrent=False`` keeps the work on the calling thread (a job of the package's pool)."""
    from ratings.models.covariates import design_kernels, side_by_side

    check_style_columns(frame.columns, names)
    n, kind = len(frame), TRANSFORMS.index(transform)
    sk = design_kernels(kernels(engine, n))
    pairs = [(_numeric(frame, f"{name}_a"), _numeric(frame, f"{name}_b")) for name in names]
    xt = np.empty((len(names), n))
    each = [[k] for k in range(len(names))]  # the features side by side on long logs
    jobs = each if n >= threads.CONCURRENT_ROWS else [list(range(len(names)))]
    parts = side_by_side(lambda ks: [sk.style_transform(*pairs[k], kind, xt[k]) for k in ks],
                         jobs, concurrent)  # fmt: skip
    total = np.array([t for part in parts for t, _ in part])
    negative = [k for part, ks in zip(parts, jobs, strict=True)
                for k, (_, neg) in zip(ks, part, strict=True) if neg]  # fmt: skip
    for k in negative[:1]:  # name the rows of the first feature with a negative count
        for side, vals in zip("ab", pairs[k], strict=True):
            if (vals < 0).any():
                _refuse(frame, f"{names[k]}_{side}", vals < 0, "negative", "negative",
                        "Style features are counts (tokens, headers, ...) and must be >= 0")
    scale = np.sqrt(total / n) if n else np.zeros(len(names))
    for name, rms in zip(names, scale, strict=True):
        if not rms > 0:
            raise InvalidVerdictsError(
                f"Style feature {name!r} is equal on both sides of every verdict: it has no "
                f"effect to estimate. Drop it from {option('style')}."
            )
    return xt, scale


def feature_jobs(xt: NDArray[np.float64], scale: NDArray[np.float64],
                 rank: NDArray[np.int64] | None = None, engine: Engine = "auto",
                 ) -> tuple[NDArray[np.float64], list]:  # fmt: skip
    """The scaled features by verdict (n x p, to be filled) and the jobs that fill it, blocks
    of verdicts to run side by side: verdict r's row in place ``rank[r]`` when ``rank`` is
    given (:class:`ratings.data.slots.ClusterOrder`: the features in cluster order, written as
    they are read, with no gather afterwards), else in place r."""
    from ratings.models.covariates import blocks_of, design_kernels

    n = xt.shape[1]
    sk = design_kernels(kernels(engine, n))
    out = np.empty((n, xt.shape[0]))
    placed = rank is not None and rank.size > 0  # else each block writes its own rows
    none = np.zeros(0, dtype=np.int64)
    return out, [lambda s=s: sk.style_interleave(xt[:, s], scale, rank[s] if placed else none,
                                                 out if placed else out[s])
                 for s in blocks_of(n)]  # fmt: skip


def style_columns(style: Sequence[str]) -> list[str]:
    """The verdict-log columns a style fit reads: ``NAME_a, NAME_b`` per feature."""
    return [f"{n}_{s}" for n in style for s in ("a", "b")]


def check_style_columns(columns, style: Sequence[str]) -> None:
    """Raise naming the ``NAME_a``/``NAME_b`` columns of ``style`` missing from ``columns``."""
    require_columns(sorted({str(c).strip() for c in columns}), style_columns(style),
                    "the verdicts", hint=f"{option('style')} {','.join(style)} needs the style "
                    "feature columns NAME_a and NAME_b of every feature (the two answers' "
                    "counts).")  # fmt: skip


def style_table(fit: DesignFit, names: Sequence[str], scale: NDArray[np.float64], *,
                level: float, ridge: float = 0.0) -> pd.DataFrame:  # fmt: skip
    """``feature, coef, coef_elo, se, lower, upper, df, p_value, scale`` (coefficients in
    log-odds per root-mean-square of the feature; ``coef / scale`` per unit of it)."""
    from ratings.models.covariates import unit_df, wald

    idx = fit.n_models + np.arange(len(names))  # the style features lead the coefficients
    se = np.sqrt(np.clip(np.diag(fit.cov)[idx], 0.0, None))
    df = np.asarray(unit_df(fit, idx, np.full(idx.size, np.inf)), dtype=np.float64)
    coef = fit.params[idx].copy()
    lower, upper, pv = wald(coef, se, level, df)
    out = pd.DataFrame({"feature": list(names), "coef": coef, "coef_elo": ELO_SCALE * coef,
                        "se": se, "lower": lower, "upper": upper,
                        "df": np.where(np.isfinite(df), df, np.nan), "p_value": pv,
                        "scale": scale})  # fmt: skip
    out.attrs["ridge"] = float(ridge)
    return out
