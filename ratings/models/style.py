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

with ties as half wins (Bradley-Terry) or left out (Crowd-BT, as its fits do). The controlled
ratings are the strengths s: what a judge would say between answers of equal style.

Fit and inference
-----------------
Verdicts are aggregated by (cluster, judge, slot A, slot B, features): identical rows collapse,
continuous features leave most verdicts their own row. Unpenalised maximum likelihood (an
optional ridge ``ridge / 2 |beta|^2`` on beta only) by Newton's method; row derivatives come
from the package's kernels (:mod:`ratings.kernels.fit`, or their NumPy twins) evaluated on the
linear predictor, and the gradient and Hessian are assembled with ``bincount`` (no loop over
verdicts). The covariance is joint over (s, beta[, eta]): model-based H^-1, HC0 (per verdict),
CR1 (clustered, G/(G-1)) or CR2 with Satterthwaite degrees of freedom per contrast
(:class:`ratings.inference.ClusterInference`, exact path: one eigen-decomposition per cluster).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ratings.core.errors import InvalidVerdictsError, NonIdentifiableError, format_rows, option
from ratings.core.schema import ELO_SCALE, require_columns
from ratings.core.tdist import critical_value
from ratings.data.slots import SlotCounts
from ratings.inference import ClusterInference
from ratings.kernels.engine import Engine, kernels
from ratings.models.newton import newton

__all__ = ["TRANSFORMS", "StyleFit", "StyleRows", "fit_style", "parse_style", "style_features",
           "style_rows", "style_table"]  # fmt: skip

#: Feature transforms ``transform=`` accepts.
TRANSFORMS = ("normalized", "diff", "ratio", "log-ratio")
DIVERGED = 30.0


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


def _numeric(frame: pd.DataFrame, col: str) -> NDArray[np.float64]:
    """A kept column as floats (categoricals converted once per category), naming bad rows."""
    s = frame[col]
    if isinstance(s.dtype, pd.CategoricalDtype):
        cats = pd.to_numeric(pd.Series(s.cat.categories.astype(str)), errors="coerce").to_numpy()
        codes = np.asarray(s.array.codes)
        vals = np.where(codes >= 0, cats[np.maximum(codes, 0)], np.nan)
    else:
        vals = pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64)
    vals = np.asarray(vals, dtype=np.float64)
    bad = ~np.isfinite(vals)
    if bad.any():
        rows = frame.index[bad]
        raise InvalidVerdictsError(
            f"Style feature column {col!r} has {int(bad.sum())} missing or non-numeric value(s): "
            f"rows {format_rows(rows)}. Every verdict needs a count for both answers "
            f"({option('style')}).",
            rows=pd.DataFrame({"row": np.asarray(rows), "reason": f"{col} not a number"}),
        )
    neg = vals < 0
    if neg.any():
        rows = frame.index[neg]
        raise InvalidVerdictsError(
            f"Style feature column {col!r} has {int(neg.sum())} negative value(s): rows "
            f"{format_rows(rows)}. Style features are counts (tokens, headers, ...) and must be "
            f">= 0 ({option('style')}).",
            rows=pd.DataFrame({"row": np.asarray(rows), "reason": f"{col} negative"}),
        )
    return vals


def style_features(frame: pd.DataFrame, names: Sequence[str], transform: str = "normalized",
                   ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:  # fmt: skip
    """Per-verdict features (n x p, scaled to unit root-mean-square) and their scales.

    ``frame`` holds ``NAME_a`` and ``NAME_b`` for every name. Raises
    :class:`~ratings.core.errors.InvalidVerdictsError` for a missing column, a missing or
    negative value (naming rows), or a feature equal on both sides of every verdict.
    """
    if transform not in TRANSFORMS:
        raise ValueError(f"{option('style_transform')} must be one of {list(TRANSFORMS)}; got "
                         f"{transform!r}.")  # fmt: skip
    require_columns([str(c) for c in frame.columns], [f"{n}_{s}" for n in names for s in "ab"],
                    "the verdicts", hint=f"{option('style')} {','.join(names)} needs the style "
                    "feature columns NAME_a and NAME_b of each feature.")  # fmt: skip
    out = np.empty((len(frame), len(names)))
    scale = np.empty(len(names))
    for k, name in enumerate(names):
        a, b = _numeric(frame, f"{name}_a"), _numeric(frame, f"{name}_b")
        with np.errstate(divide="ignore", invalid="ignore"):
            if transform == "normalized":
                x = np.where(a + b > 0, (a - b) / (a + b), 0.0)
            elif transform == "ratio":
                x = np.where(np.maximum(a, b) > 0, (a - b) / np.maximum(a, b), 0.0)
            elif transform == "diff":
                x = a - b
            else:
                x = np.log1p(a) - np.log1p(b)
        rms = float(np.sqrt(np.mean(x * x))) if x.size else 0.0
        if not rms > 0:
            raise InvalidVerdictsError(
                f"Style feature {name!r} is equal on both sides of every verdict: it has no "
                f"effect to estimate. Drop it from {option('style')}."
            )
        out[:, k], scale[k] = x / rms, rms
    return out, scale


@dataclass(frozen=True, eq=False)
class StyleRows:
    """Verdicts aggregated by (cluster, judge, a, b, features), sorted by cluster."""

    cluster: NDArray[np.int64]
    judge: NDArray[np.int64]
    a: NDArray[np.int64]
    b: NDArray[np.int64]
    x: NDArray[np.float64]
    wa: NDArray[np.float64]
    wb: NDArray[np.float64]
    tt: NDArray[np.float64]
    n_models: int
    n_judges: int
    n_clusters: int
    clusters: pd.Index | None

    @property
    def n_rows(self) -> int:
        return int(self.a.size)


def style_rows(slots: SlotCounts, x: NDArray[np.float64]) -> StyleRows:
    """Aggregate the verdicts of ``slots`` (one row per verdict, in the order of ``x``) by
    cluster, judge, slots and features (one ``np.unique`` pass, no loop over verdicts)."""
    keys = np.column_stack([slots.cluster, slots.judge, slots.a, slots.b, x]).astype(np.float64)
    uniq, inv = np.unique(keys, axis=0, return_inverse=True)
    inv = inv.ravel()
    r = uniq.shape[0]

    def summed(w):
        return np.bincount(inv, w, r)

    return StyleRows(uniq[:, 0].astype(np.int64), uniq[:, 1].astype(np.int64),
                     uniq[:, 2].astype(np.int64), uniq[:, 3].astype(np.int64),
                     np.ascontiguousarray(uniq[:, 4:]), summed(slots.wa), summed(slots.wb),
                     summed(slots.tt), len(slots.models), len(slots.judges), slots.n_clusters,
                     slots.clusters)  # fmt: skip


class _Design:
    """Linear predictor d_r = s_a - s_b + beta . x_r over params (s, beta, eta)."""

    def __init__(self, rows: StyleRows, crowd: bool) -> None:
        self.rows, self.crowd = rows, crowd
        self.m, self.p, self.nj = rows.n_models, rows.x.shape[1], rows.n_judges
        self.n_params = self.m + self.p + (self.nj if crowd else 0)
        r = rows.n_rows
        self.ii, self.jj = np.arange(r), np.full(r, r, dtype=np.int64)

    def lin(self, params: NDArray[np.float64]) -> NDArray[np.float64]:
        r, m = self.rows, self.m
        return np.append(params[r.a] - params[r.b] + r.x @ params[m:m + self.p], 0.0)

    def terms(self, params, k, with_meat: bool, counts=None) -> tuple:
        """(nll, s_d, s_eta, h_dd, h_deta, h_etaeta, m_dd, m_deta, m_etaeta) per row."""
        r = self.rows
        wa, wb, tt = (r.wa, r.wb, r.tt) if counts is None else counts
        lin = self.lin(params)
        if self.crowd:
            eta = np.ascontiguousarray(params[self.m + self.p:])
            return k.crowd_row_terms(lin, eta, self.ii, self.jj, r.judge, wa, wb, tt, with_meat)
        nll, score, info, meat = k.bt_row_terms(lin, self.ii, self.jj, wa, wb, tt, with_meat)
        zero = np.zeros(r.n_rows)
        return nll, score, zero, info, zero, zero, meat, zero, zero

    def grad(self, sd, se) -> NDArray[np.float64]:
        """X^T s_d + E^T s_eta (the log-likelihood's gradient)."""
        r, m = self.rows, self.m
        out = [np.bincount(r.a, sd, m) - np.bincount(r.b, sd, m), r.x.T @ sd]
        if self.crowd:
            out.append(np.bincount(r.judge, se, self.nj))
        return np.concatenate(out)

    def quad(self, wdd, wde, wee) -> NDArray[np.float64]:
        """X^T W_dd X + X^T W_de E + E^T W_de X + E^T W_ee E, dense (P x P)."""
        r, m, p, nj = self.rows, self.m, self.p, self.nj
        out = np.zeros((self.n_params, self.n_params))
        diag = np.bincount(r.a, wdd, m) + np.bincount(r.b, wdd, m)
        off = np.bincount(r.a * m + r.b, wdd, m * m).reshape(m, m)
        out[:m, :m] = np.diag(diag) - off - off.T
        wx = wdd[:, None] * r.x
        cross = np.column_stack([np.bincount(r.a, wx[:, k], m) - np.bincount(r.b, wx[:, k], m)
                                 for k in range(p)])  # fmt: skip
        out[:m, m:m + p] = cross
        out[m:m + p, :m] = cross.T
        out[m:m + p, m:m + p] = r.x.T @ wx
        if self.crowd:
            e = m + p
            se = (np.bincount(r.a * nj + r.judge, wde, m * nj)
                  - np.bincount(r.b * nj + r.judge, wde, m * nj)).reshape(m, nj)
            out[:m, e:] = se
            out[e:, :m] = se.T
            fe = np.column_stack([np.bincount(r.judge, wde * r.x[:, k], nj) for k in range(p)])
            out[m:e, e:] = fe.T
            out[e:, m:e] = fe
            out[e:, e:] = np.diag(np.bincount(r.judge, wee, nj))
        return out

    def objective(self, params, k, ridge: float) -> tuple:
        nll, sd, se, hdd, hde, hee, *_ = self.terms(params, k, False)
        grad, hess = -self.grad(sd, se), self.quad(hdd, hde, hee)
        if ridge:
            beta = params[self.m:self.m + self.p]
            nll = nll + 0.5 * ridge * float(beta @ beta)
            grad[self.m:self.m + self.p] += ridge * beta
            hess[self.m:self.m + self.p, self.m:self.m + self.p] += ridge * np.eye(self.p)
        return nll, grad, hess

    def cluster_scores(self, params, k) -> NDArray[np.float64]:
        """Each cluster's summed score over all params (G x P)."""
        r, m, p, g = self.rows, self.m, self.p, self.rows.n_clusters
        _, sd, se, *_ = self.terms(params, k, False)
        P = self.n_params
        out = (np.bincount(r.cluster * P + r.a, sd, g * P)
               - np.bincount(r.cluster * P + r.b, sd, g * P)).reshape(g, P)
        for j in range(p):
            out[:, m + j] += np.bincount(r.cluster, sd * r.x[:, j], g)
        if self.crowd:
            out += np.bincount(r.cluster * P + m + p + r.judge, se, g * P).reshape(g, P)
        return out

    def working(self, params) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Working-model weights (a, b) per row: the design row is a x_r + b e_eta."""
        from ratings.kernels.fit_ref import expit

        r = self.rows
        d = self.lin(params)[:-1]
        s = expit(d)
        sq = s * (1.0 - s)
        if not self.crowd:
            return np.sqrt((r.wa + r.wb + r.tt) * sq), np.zeros(r.n_rows)
        e = params[self.m + self.p + r.judge]
        n = r.wa + r.wb
        pr = e * s + (1.0 - e) * (1.0 - s)
        pq = pr * (1.0 - pr)
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.where(e >= 1.0, np.sqrt(n * sq), np.sqrt(n / pq) * (2.0 * e - 1.0) * sq)
            b = np.sqrt(n / pq) * (2.0 * s - 1.0)
        return np.nan_to_num(a), np.nan_to_num(b)


@dataclass(frozen=True, eq=False)
class StyleFit:
    """The joint fit: params = (s (M), beta (P)[, eta (K)]), covariance joint over them.

    ``influence`` (G x n_params): clustered fits' per-cluster influences, with
    ``cov = influence.T @ influence`` (CR2) or ``G/(G-1)`` times it (CR1).
    """

    params: NDArray[np.float64]
    n_models: int
    n_features: int
    cov: NDArray[np.float64]
    influence: NDArray[np.float64] | None
    inference: ClusterInference | None
    nll: float
    converged: bool
    n_iter: int
    max_grad: float
    eta_estimated: NDArray[np.bool_] | None = None
    eta_boundary: NDArray[np.bool_] | None = None
    hessian: NDArray[np.float64] | None = None

    @property
    def strength(self) -> NDArray[np.float64]:
        return self.params[: self.n_models]

    @property
    def beta(self) -> NDArray[np.float64]:
        return self.params[self.n_models:self.n_models + self.n_features]

    @property
    def eta(self) -> NDArray[np.float64]:
        return self.params[self.n_models + self.n_features:]


def fit_style(
    rows: StyleRows,
    theta0: NDArray[np.float64],
    *,
    ref: int = 0,
    crowd: bool = False,
    eta0: NDArray[np.float64] | None = None,
    eta_free: NDArray[np.bool_] | None = None,
    ci: str = "sandwich",
    ridge: float = 0.0,
    engine: Engine = "auto",
    tol: float = 1e-10,
    max_iter: int = 100,
) -> StyleFit:
    """Fit strengths and style coefficients (and Crowd-BT etas) jointly; see the module notes.

    ``theta0`` starts the strengths (e.g. the plain fit's); ``eta0``/``eta_free`` start and
    select the estimated etas (Crowd-BT). ``ci``: ``"model"``, ``"sandwich"`` (CR2 with
    Satterthwaite df when clustered, else HC0) or ``"sandwich-z"`` (CR1 when clustered).
    """
    k = kernels(engine, int(rows.n_rows))
    design = _Design(rows, crowd)
    m, p = design.m, design.p
    nj = design.nj if crowd else 0
    eta0 = np.ones(nj) if eta0 is None or not crowd else np.asarray(eta0, dtype=np.float64)
    eta_free = (np.zeros(nj, dtype=bool) if eta_free is None or not crowd
                else np.asarray(eta_free, dtype=bool))  # fmt: skip
    x0 = np.concatenate([theta0, np.zeros(p), eta0])
    free = np.concatenate([np.delete(np.arange(m), ref), m + np.arange(p),
                           m + p + np.flatnonzero(eta_free)]).astype(np.int64)  # fmt: skip
    lower = np.concatenate([np.full(m + p, -np.inf), np.full(nj, 0.5)])
    upper = np.concatenate([np.full(m + p, np.inf), np.ones(nj)])
    try:
        res = newton(lambda x: design.objective(x, k, ridge), x0, free, lower=lower,
                     upper=upper, tol=tol, max_iter=max_iter, what="Style-controlled",
                     bound=DIVERGED)  # fmt: skip
    except FloatingPointError:
        raise NonIdentifiableError(
            "The joint fit of strengths and style coefficients diverges: some feature (or "
            "model) separates wins from losses on these verdicts. Drop that feature from "
            f"{option('style')} or add a ridge ({option('style_ridge')})."
        ) from None
    boundary = res.active[m + p:] & eta_free
    cov_free = np.setdiff1d(free, m + p + np.flatnonzero(boundary))
    cov, influence, inference = _covariance(res.x, res.hessian, cov_free, design, k, ci)
    return StyleFit(res.x, m, p, cov, influence, inference, res.f, res.converged, res.n_iter,
                    res.max_grad, eta_free if crowd else None, boundary if crowd else None,
                    res.hessian)  # fmt: skip


def _covariance(params, hessian, free, design: _Design, k, ci: str):
    from ratings.inference.covariance import gram, inverse_free

    try:
        bread = inverse_free(hessian, free)
    except np.linalg.LinAlgError:
        raise NonIdentifiableError(
            "The information matrix of the strengths and style coefficients is singular: some "
            "feature cannot be told apart from the strengths (e.g. a feature that is constant "
            f"per model pair). Drop it from {option('style')}."
        ) from None
    rows = design.rows
    if ci == "model":
        return bread, None, None
    if rows.clusters is None:
        *_, mdd, mde, mee = design.terms(params, k, True)
        return bread @ design.quad(mdd, mde, mee) @ bread, None, None
    g = rows.n_clusters
    if g < 2:
        raise ValueError(f"Clustered intervals need at least 2 clusters; got {g}. Use "
                         f"per-verdict intervals ({option('cluster', None)}).")  # fmt: skip
    scores = design.cluster_scores(params, k)
    if ci != "sandwich":  # CR1
        influence = scores @ bread
        return gram(influence, g / (g - 1)), influence, None
    inf = _cr2(params, scores, free, bread, design)
    return inf.covariance(), _embed_rows(inf.influence_free, free, design.n_params), inf


def _embed_rows(a: NDArray[np.float64], cols: NDArray[np.int64], n: int) -> NDArray[np.float64]:
    out = np.zeros((a.shape[0], n))
    out[:, cols] = a
    return out


def _cr2(params, scores, free, bread, design: _Design) -> ClusterInference:
    """CR2 influences and the exact Satterthwaite pieces: per cluster, the eigenpairs of
    S_g = L^T H_g L from its whitened working rows (the loop runs over clusters)."""
    from ratings.core.linalg import block

    rows, m, p = design.rows, design.m, design.p
    bfree = block(bread, free)
    chol = np.linalg.cholesky(bfree)
    lf = np.zeros((design.n_params, free.size))
    lf[free] = chol
    wa, wb = design.working(params)
    w_all = wa[:, None] * (lf[rows.a] - lf[rows.b] + rows.x @ lf[m:m + p])
    if design.crowd:
        w_all += wb[:, None] * lf[m + p + rows.judge]
    gbar = scores[:, free] @ chol
    starts = np.searchsorted(rows.cluster, np.arange(rows.n_clusters + 1))
    qs, lams, deg = [], [], []
    adjusted = np.empty_like(gbar)
    tiny = 1e-8
    for g in range(rows.n_clusters):
        w = w_all[starts[g]:starts[g + 1]]
        lam, q = np.linalg.eigh(w.T @ w)
        keep = lam > 1e-12 * max(1.0, float(lam[-1]) if lam.size else 1.0)
        q, lam = q[:, keep], lam[keep]
        f = np.where(lam < 1.0 - tiny, 1.0 / np.sqrt(np.clip(1.0 - lam, tiny, None)), 1.0)
        adjusted[g] = gbar[g] + q @ ((f - 1.0) * (q.T @ gbar[g]))
        qs.append(q)
        lams.append(lam)
        deg.append(q[:, lam >= 1.0 - tiny].T)
    degenerate = np.vstack(deg) if deg else np.zeros((0, free.size))
    return ClusterInference(design.n_params, m, free, bfree, adjusted @ chol.T, rows.clusters,
                            tuple(qs), tuple(lams), degenerate, None, chol)  # fmt: skip


def style_table(fit: StyleFit, names: Sequence[str], scale: NDArray[np.float64], *,
                level: float, ridge: float = 0.0) -> pd.DataFrame:  # fmt: skip
    """``feature, coef, coef_elo, se, lower, upper, df, p_value, scale`` (coefficients in
    log-odds per root-mean-square of the feature; ``coef / scale`` per unit of it)."""
    from scipy.special import ndtr, stdtr

    m, p = fit.n_models, fit.n_features
    idx = m + np.arange(p)
    se = np.sqrt(np.clip(np.diag(fit.cov)[idx], 0.0, None))
    if fit.inference is not None:
        c = np.zeros((p, fit.cov.shape[0]))
        c[np.arange(p), idx] = 1.0
        df = fit.inference.df(c)
    else:
        df = np.full(p, np.inf)
    coef = fit.beta.copy()
    crit = np.array([critical_value(level, None if not np.isfinite(d) else float(d))
                     for d in df])  # fmt: skip
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(coef / se)
        pv = np.where(np.isfinite(df), 2.0 * stdtr(np.where(np.isfinite(df), df, 1.0), -t),
                      2.0 * ndtr(-t))  # fmt: skip
    out = pd.DataFrame({"feature": list(names), "coef": coef, "coef_elo": ELO_SCALE * coef,
                        "se": se, "lower": coef - crit * se, "upper": coef + crit * se,
                        "df": np.where(np.isfinite(df), df, np.nan), "p_value": pv,
                        "scale": scale})  # fmt: skip
    out.attrs["ridge"] = float(ridge)
    return out
