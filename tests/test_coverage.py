"""A short coverage study: the interval types cover what they claim, on seeded simulated boards.

The short version of ``benchmarks_perf/validate_coverage.py`` (see that script for the full
table). Boards: 10 models with strengths evenly spaced on [-1.2, 1.2], 2,000 verdicts on 40
tasks, about 10 % ties, drawn by :func:`ratings.datasets.simulate_verdicts`. Dependent boards use
its Gaussian copula (``task_corr``): verdicts sharing a (model, task) submission are dependent
while every marginal win probability stays sigma(s_a - s_b), so the truth is the Bradley-Terry
parameter itself. Intervals come from the public API: ``ratings.fit``, then ``conf_int`` for each
model vs the anchor and, after ``reanchor(b)``, for every difference a - b (the ``diff`` interval).

The bounds are loose (a few dozen boards) but discriminating: on dependent boards the
task-clustered sandwich covers about 0.95 while per-verdict HC0 covers about 0.77 (BT) / 0.85
(Crowd-BT), so a sandwich that ignored the clusters fails; an estimator that is far too wide
fails the upper bounds.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ratings
from ratings.core.errors import NonIdentifiableError
from ratings.datasets.simulate import random_matches, simulate_verdicts
from ratings.result import ELO_SCALE

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks_perf" / "validate_coverage.py"

MODELS = [f"m{k:02d}" for k in range(10)]
STRENGTH = pd.Series(np.linspace(-1.2, 1.2, len(MODELS)), index=MODELS)
ANCHOR = "m05"
N_VERDICTS, N_TASKS, TIE_RATE = 2_000, 40, 0.12
JUDGES = {"j1": 0.95, "j2": 0.80, "j3": 0.65}
SEED = 20261129
TRUE_ELO = 1000.0 + ELO_SCALE * (STRENGTH - STRENGTH[ANCHOR])
PAIRS = [(a, b) for k, a in enumerate(MODELS) for b in MODELS[k + 1 :]]


def board(seed: int, task_corr: float, judges: dict | None = None) -> pd.DataFrame:
    matches = random_matches(MODELS, N_VERDICTS, n_tasks=N_TASKS,
                             judges=list(judges) if judges else None, seed=seed)  # fmt: skip
    return simulate_verdicts(matches, STRENGTH, judge_eta=judges, tie_rate=TIE_RATE,
                             task_corr=task_corr, seed=seed + 1)  # fmt: skip


def covered(r: ratings.Ratings) -> tuple[np.ndarray, np.ndarray]:
    """Covered flags: every model but the anchor vs the anchor, and every pair.

    The interval of a - b is that of a in the fit re-anchored at b (``conf_int`` after
    ``reanchor(b)``; the same interval as ``diff(a, b)``, vectorised over a).
    """
    flags = {}
    for b in MODELS:
        ci = (r if b == ANCHOR else r.reanchor(b, 0.0)).conf_int().drop(b)
        t = (TRUE_ELO - TRUE_ELO[b] + (1000.0 if b == ANCHOR else 0.0)).reindex(ci.index)
        ok = (ci["lower"] <= t) & (t <= ci["upper"])
        flags.update({(a, b): bool(x) for a, x in ok.items()})
    return np.array([flags[a, ANCHOR] for a in MODELS if a != ANCHOR]), np.array(
        [flags[a, b] for a, b in PAIRS]
    )


def study(n_boards: int, task_corr: float, model: str = "bt", judges=None, seed: int = SEED
          ) -> dict[str, dict[str, float]]:  # fmt: skip
    """Pooled coverage per interval type and target over ``n_boards`` boards."""
    flags = {k: {"anchor": [], "pairs": []} for k in ("cr1", "hc0", "model")}
    failed = 0
    for b in range(n_boards):
        v = board(seed + 1000 * b, task_corr, judges)
        kw = {"model": model, "anchor": f"{ANCHOR}=1000"}
        try:
            fits = {
                "cr1": ratings.fit(v, **kw),  # default: clustered by task_id, ci="sandwich"
                "hc0": ratings.fit(ratings.aggregate(v, cluster=None), **kw),
                "model": ratings.fit(ratings.aggregate(v), ci="model", **kw),
            }
        except NonIdentifiableError:
            failed += 1
            continue
        for k, r in fits.items():
            a, p = covered(r)
            flags[k]["anchor"].append(a)
            flags[k]["pairs"].append(p)
    assert failed <= n_boards // 20
    return {k: {t: float(np.concatenate(f[t]).mean()) for t in f} for k, f in flags.items()}


@pytest.fixture(scope="module")
def dependent() -> dict:
    return study(60, task_corr=0.5)


@pytest.fixture(scope="module")
def independent() -> dict:
    return study(60, task_corr=0.0, seed=SEED + 7)


@pytest.mark.slow
def test_clustered_sandwich_covers_on_dependent_boards(dependent):
    for target in ("anchor", "pairs"):
        assert 0.88 <= dependent["cr1"][target] <= 0.99, dependent


@pytest.mark.slow
def test_per_verdict_intervals_undercover_on_dependent_boards(dependent):
    for target in ("anchor", "pairs"):
        assert dependent["hc0"][target] <= 0.86, dependent
        assert dependent["model"][target] <= 0.88, dependent
        assert dependent["cr1"][target] - dependent["hc0"][target] >= 0.08, dependent


@pytest.mark.slow
def test_every_interval_type_covers_on_independent_boards(independent):
    for kind in ("cr1", "hc0", "model"):
        for target in ("anchor", "pairs"):
            assert 0.9 <= independent[kind][target] <= 0.99, independent


def test_crowd_bt_clustered_sandwich_covers_with_noisy_judges():
    cov = study(25, task_corr=0.5, model="crowd-bt", judges=JUDGES, seed=SEED + 11)
    for target in ("anchor", "pairs"):
        assert 0.88 <= cov["cr1"][target] <= 0.995, cov
        assert cov["hc0"][target] <= 0.93, cov
        assert cov["cr1"][target] - cov["hc0"][target] >= 0.04, cov


# ----------------------------------------------------------------------------------------------
# The benchmark script builds its variants from the same pieces as ratings.fit
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("validate_coverage", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["validate_coverage"] = module  # dataclasses resolve their module by name
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop("validate_coverage", None)


@pytest.mark.parametrize("cell", ["bt-small-dep", "crowd-small-dep"])
def test_script_variants_match_ratings_fit(script, cell):
    c = script.CELLS[cell]
    v = script.simulate(c, np.random.default_rng(3))
    data = ratings.aggregate(v, cluster="task_id")
    ref = c.dims.anchor
    fv = script.fit_variants(c, data, ref, exact_jk=True)
    anchor = c.dims.models[ref]
    expected = {
        "cr1": ratings.fit(data, model=c.model, anchor=anchor, ci="sandwich-z").cov,
        "model": ratings.fit(data, model=c.model, anchor=anchor, ci="model").cov,
        "hc0": ratings.fit(v, model=c.model, anchor=anchor, cluster=None).cov,
    }
    for kind, cov in expected.items():
        np.testing.assert_allclose(fv["covs"][kind], cov, rtol=1e-6, atol=1e-12)
    assert fv["check"] < 1e-10  # CR1 == G/(G-1) influence' influence
    free = np.arange(len(c.dims.models)) != ref
    se3 = np.sqrt(np.diag(fv["covs"]["cr3"]))[free]
    se3x = np.sqrt(np.diag(fv["covs"]["cr3x"]))[free]
    assert np.all(se3x > 0)
    if c.model == "bt":
        # The one-step jackknife is close to the exact leave-one-cluster-out jackknife. (Not for
        # Crowd-BT: on weakly identified boards, such as this one, one Newton step from the full
        # fit overshoots the leave-one-out refits by a factor of up to 3.)
        np.testing.assert_allclose(se3, se3x, rtol=0.02)


def test_script_truth_is_pseudo_true_under_task_effects(script):
    # Submission effects flatten win probabilities: the pseudo-true spread is smaller.
    plain, fx = script.truth(script.CELLS["bt-small-dep"]), script.truth(
        script.CELLS["bt-small-taskfx"])  # fmt: skip
    assert plain[script.SIZES["small"].anchor] == 0 == fx[script.SIZES["small"].anchor]
    assert 0.8 < np.ptp(fx) / np.ptp(plain) < 1.0


def test_script_runs_and_writes_tables(script, tmp_path):
    csv, md = tmp_path / "c.csv", tmp_path / "c.md"
    rc = script.main(["--boards", "2", "--cells", "bt-small-dep,bt-sparse-6",
                      "--jobs", "1", "--n-boot", "4", "--boot-boards", "2", "--exact-jk", "1",
                      "--csv", str(csv), "--md", str(md)])  # fmt: skip
    assert rc == 0
    table = pd.read_csv(csv)
    intervals = table[table["target"] != "ranks"]
    assert set(intervals["variant"]) == set(script.VARIANTS)
    assert set(table["target"]) == {"anchor", "pairs", "sparse", "sparse_pairs", "ranks"}
    assert set(table.loc[table["target"] == "sparse", "cell"]) == {"bt-sparse-6"}
    ranks = table[table["target"] == "ranks"]
    assert set(ranks["variant"]) == {"simultaneous", "marginal", "bonferroni"}
    assert table["coverage"].between(0, 1).all() and ranks["joint"].between(0, 1).all()
    text = md.read_text()
    assert "| `bt-small-dep` | anchor |" in text and "|  | sparse |" in text
    assert "| `bt-sparse-6` | " in text.split("Rank intervals from the default fit")[1]


def test_script_sparse_cell_puts_one_model_on_few_tasks(script):
    cell = script.CELLS["bt-sparse-3"]
    v = script.simulate(cell, np.random.default_rng(4))
    sparse = f"m{cell.dims.n_models - 1:02d}"
    mine = v[(v["model_a"] == sparse) | (v["model_b"] == sparse)]
    assert mine["task_id"].nunique() == 3 and len(mine) == 3 * script.SPARSE_PER_TASK
    assert v["task_id"].nunique() == cell.dims.n_tasks
    assert script.truth(cell)[cell.sparse] == pytest.approx(
        script.SPARSE_STRENGTH - cell.strengths[cell.dims.anchor])
