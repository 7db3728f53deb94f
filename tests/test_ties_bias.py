"""The tie parameter's first-order bias (``Ratings.ties["bias_phi"]``, the centre of its
interval) against references we did not write: on two models the MLE has a closed form in the
outcome shares, whose O(1/n) bias is the second-order delta method's; on larger boards the
Cox & Snell (1968) formula written out over every parameter, with the likelihood's derivatives
taken from this file's own formulas (complex step, then differences)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from test_ties import log_probs

import ratings


def _log(counts: dict[tuple[str, str], tuple[int, int, int]]) -> pd.DataFrame:
    rows = []
    for (a, b), (na, nb, nt) in counts.items():
        rows += [(a, b, "A")] * na + [(a, b, "B")] * nb + [(a, b, "tie")] * nt
    return pd.DataFrame(rows, columns=["model_a", "model_b", "winner"])


def _fit(log: pd.DataFrame, kind: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ratings.fit(log, model=ratings.BT(ties=kind), cluster=None, anchor="m0")


def _closed_form_phi(kind: str, p: np.ndarray) -> float:
    """phi from the two models' outcome shares (A wins, B wins; ties the rest)."""
    pa, pb = p
    pt = 1.0 - pa - pb
    if kind == "davidson":  # P(tie) / sqrt(P(A) P(B)) = nu
        return float(np.log(pt / np.sqrt(pa * pb)))
    # logit P(A) = d - log(theta), logit P(B) = -d - log(theta)
    log_theta = -0.5 * (np.log(pa / (1 - pa)) + np.log(pb / (1 - pb)))
    return float(np.log(np.expm1(log_theta)))


@pytest.mark.parametrize("kind", ["davidson", "rao-kupper"])
@pytest.mark.parametrize("counts", [(50, 30, 20), (120, 40, 15), (30, 30, 90)])
def test_two_models_bias_equals_the_delta_method_of_the_closed_form(kind, counts):
    na, nb, nt = counts
    n = na + nb + nt
    r = _fit(_log({("m0", "m1"): counts}), kind)
    p = np.array([na, nb]) / n
    assert r.ties["phi"].iloc[0] == pytest.approx(_closed_form_phi(kind, p), abs=1e-7)
    # E[g(p_hat)] - g(p) = tr(Hess g . Cov(p_hat)) / 2 + O(n^-2), Cov = (diag p - p p^T) / n
    h, hess = 1e-4, np.empty((2, 2))
    for i in range(2):
        for j in range(2):
            e_i, e_j = np.eye(2)[i] * h, np.eye(2)[j] * h
            g = [_closed_form_phi(kind, p + si * e_i + sj * e_j)
                 for si, sj in ((1, 1), (1, -1), (-1, 1), (-1, -1))]
            hess[i, j] = (g[0] - g[1] - g[2] + g[3]) / (4 * h * h)
    cov = (np.diag(p) - np.outer(p, p)) / n
    expected = 0.5 * np.sum(hess * cov)
    assert r.ties["bias_phi"].iloc[0] == pytest.approx(expected, rel=1e-4, abs=1e-9)


def _cox_snell(kind: str, counts: dict, strengths: dict, phi: float) -> float:
    """b_phi = sum I^{phi r} I^{tu} (kappa_{rt,u} + kappa_{rtu} / 2) over every parameter."""
    names = sorted(strengths)
    free = names[1:]  # names[0] is the anchor, at 0
    p = len(free) + 1

    def logp(x, a, b):  # (3,) log-probabilities of one pair at parameters x
        s = dict(zip(free, x[:-1], strict=True), **{names[0]: 0.0})
        return np.array(log_probs(kind, s[a] - s[b], x[-1]))

    def grad(x, a, b):  # (3, p) by complex step
        out = np.empty((3, p))
        for r in range(p):
            z = x.astype(complex)
            z[r] += 1e-30j
            out[:, r] = logp(z, a, b).imag / 1e-30
        return out

    x0 = np.array([strengths[m] for m in free] + [phi])
    info = np.zeros((p, p))
    k_rt_u = np.zeros((p, p, p))
    k_rtu = np.zeros((p, p, p))
    for (a, b), (na, nb, nt) in counts.items():
        n = na + nb + nt
        pr = np.exp(logp(x0, a, b))
        g = grad(x0, a, b)
        h1, h3 = 1e-5, 1e-3
        hess = np.stack([(grad(x0 + h1 * e, a, b) - grad(x0 - h1 * e, a, b)) / (2 * h1)
                         for e in np.eye(p)], axis=-1)  # (3, p, p)
        third = np.stack([np.stack([(grad(x0 + h3 * (e + f), a, b) - grad(x0 + h3 * (e - f), a, b)
                                     - grad(x0 - h3 * (e - f), a, b)
                                     + grad(x0 - h3 * (e + f), a, b)) / (4 * h3 * h3)
                                    for f in np.eye(p)], axis=-1)
                          for e in np.eye(p)], axis=-1)  # (3, p, p, p)  # fmt: skip
        info += n * np.einsum("k,kr,kt->rt", pr, g, g)
        k_rt_u += n * np.einsum("k,krt,ku->rtu", pr, hess, g)
        k_rtu += n * np.einsum("k,krtu->rtu", pr, third)
    inv = np.linalg.inv(info)
    return float(np.einsum("r,tu,rtu->", inv[-1], inv, k_rt_u + 0.5 * k_rtu))


@pytest.mark.parametrize("kind", ["davidson", "rao-kupper"])
def test_board_bias_equals_cox_snell_over_every_parameter(kind):
    counts = {("m0", "m1"): (14, 9, 6), ("m0", "m2"): (20, 4, 3), ("m1", "m2"): (11, 8, 9),
              ("m2", "m3"): (7, 12, 5), ("m0", "m3"): (9, 10, 8)}
    r = _fit(_log(counts), kind)
    theta = (r.to_frame()["elo"] - 1000.0) / ratings.Ratings.scale
    phi = float(r.ties["phi"].iloc[0])
    expected = _cox_snell(kind, counts, theta.to_dict(), phi)
    assert abs(expected) > 1e-3  # a bias worth removing on a board this small
    assert r.ties["bias_phi"].iloc[0] == pytest.approx(expected, rel=1e-4)


def test_interval_is_centred_on_the_bias_reduced_phi():
    counts = {("m0", "m1"): (40, 25, 12), ("m1", "m2"): (30, 31, 20), ("m0", "m2"): (50, 15, 9)}
    t = _fit(_log(counts), "davidson").ties.iloc[0]
    lo, hi = np.log(t["lower"]), np.log(t["upper"])
    assert (lo + hi) / 2 == pytest.approx(t["phi"] - t["bias_phi"], abs=1e-12)
    assert (hi - lo) / 2 == pytest.approx(1.959964 * t["se_phi"], rel=1e-5)  # per verdict: z


def test_tie_coverage_study_smoke(monkeypatch):
    """``benchmarks_perf/tie_coverage.py`` on a few boards: without task effects its pseudo-truth
    is the generating model (strengths and phi), and a cell's row is complete."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks_perf"))
    import tie_coverage

    monkeypatch.setattr(tie_coverage, "TASK_SD", 0.0)
    for family in ("davidson", "rao-kupper"):
        cell = tie_coverage.Cell(family, "tiny", 6, 150, 15, -0.3, 10)
        s = tie_coverage.strengths(cell.n_models)
        theta, phi = tie_coverage.truth(cell, s)
        np.testing.assert_allclose(theta, s - s[0], atol=1e-7)
        assert phi == pytest.approx(-0.3, abs=1e-7)
        row, boards = tie_coverage.run_cell(cell, seed=1)
        assert row["reps"] + row["failed"] == 10 and len(boards) == row["reps"]
        assert 0.0 <= row["tie_coverage"] <= 1.0 and row["median_df"] > 1
    table = tie_coverage.add_reference(pd.DataFrame([row]), boards)
    assert 0.0 <= table["few_ideal_coverage"].iloc[0] <= 1.0
    assert "| rao-kupper | tiny: 6 models, 150 verdicts" in tie_coverage.render(table)
