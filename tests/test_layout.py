"""One aggregated-row layout, one required-columns check, typed estimator results.

The aggregated rows are declared once (:class:`ratings.core.rows.PairRows`) and every holder
spells them so; every table's required columns are checked by
:func:`ratings.core.schema.require_columns`; the estimators hand back typed results.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ratings.api.loading import LoadedComparisons, load_comparisons
from ratings.api.specs import Solver, options_of
from ratings.core.errors import InvalidVerdictsError
from ratings.core.rows import PairRows
from ratings.core.schema import require_columns
from ratings.data.comparisons import aggregate
from ratings.inference.working import WorkingRows, bt_rows
from ratings.kernels import fit as _kernels
from ratings.kernels import fit_ref as _kernels_ref
from ratings.models.covariates import design_builder, pair_design
from ratings.models.crowd.likelihood import fit_crowd_default
from ratings.models.crowd.policy import CrowdInference, crowd_inference, estimate_crowd
from ratings.models.crowd.prior import DEFAULT_PRIOR
from ratings.models.crowd.quality import ResolvedQuality
from ratings.models.estimate import Estimate

ROOT = Path(__file__).resolve().parents[1]


def _log(seed: int = 0, n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 5, n)
    b = (a + rng.integers(1, 5, n)) % 5
    won = rng.random(n) < 1.0 / (1.0 + np.exp(-0.8 * (a - b)))  # strengths 0, 0.8, ..., 3.2
    return pd.DataFrame({"model_a": [f"m{k}" for k in a], "model_b": [f"m{k}" for k in b],
                         "winner": np.where(won, "A", "B"),
                         "judge": rng.choice(["j1", "j2"], n),
                         "task_id": [f"t{k}" for k in rng.integers(0, 30, n)]})  # fmt: skip


def test_require_columns_names_the_missing_and_the_available_columns():
    frame = pd.DataFrame(columns=["model", "x"])
    with pytest.raises(InvalidVerdictsError) as err:
        require_columns(frame, ["model", "elo", "lower"], "the table", hint="Write it again.",
                        prefix="'t.csv': ")  # fmt: skip
    assert str(err.value) == ("'t.csv': Column(s) ['elo', 'lower'] not found in the table. "
                              "Available columns: ['model', 'x']. Write it again.")  # fmt: skip
    with pytest.raises(ValueError, match=r"^Column\(s\) \['b'\] not found in `plan`\.") as err:
        require_columns(["a"], ["a", "b"], "`plan`", error=ValueError)
    assert type(err.value) is ValueError
    require_columns(frame, ["x", "model"], "the table")  # all present: no error


def test_no_required_columns_check_is_written_by_hand():
    """A list of missing columns built beside a frame's columns is the helper's job."""
    pattern = re.compile(r"missing\s*=\s*\[[^\]]*\bnot in\b[^\]]*\bcolumns\b")
    own = ROOT / "ratings" / "core" / "schema.py"
    found = [f"{path.relative_to(ROOT)}:{text[:m.start()].count(chr(10)) + 1}"
             for package in ("ratings", "sampling")
             for path in sorted((ROOT / package).rglob("*.py")) if path != own
             for text in [path.read_text(encoding="utf-8")]
             for m in pattern.finditer(text)]  # fmt: skip
    assert found == [], f"use ratings.core.schema.require_columns: {found}"


@pytest.mark.parametrize("k", [_kernels, _kernels_ref], ids=["numba", "numpy"])
def test_every_holder_of_aggregated_rows_spells_one_layout(k):
    frame = _log()
    data = aggregate(frame, cluster="task_id", engine="numpy")
    for name in PairRows._fields:  # Comparisons reads as the layout
        assert getattr(data, name).shape == (data.n_rows,)
    codes_of = {c: pd.factorize(frame[c], sort=True)[0] for c in ("judge", "task_id")}
    labels = sorted(set(frame["model_a"]) | set(frame["model_b"]))
    ca = pd.Index(labels).get_indexer(frame["model_a"])
    cb = pd.Index(labels).get_indexer(frame["model_b"])
    winner = pd.Index(["A", "B", "tie"]).get_indexer(frame["winner"])
    ident = np.arange(len(labels), dtype=np.int64)
    out = k.aggregate_codes(ca, cb, ident, ident, winner, np.arange(3, dtype=np.int64),
                            codes_of["judge"], codes_of["task_id"], np.zeros(0, dtype=bool),
                            np.zeros(0, dtype=bool), 0, len(labels), 2, 30,
                            np.zeros(0))  # fmt: skip
    assert isinstance(out.rows, PairRows) and out.n_unusable == 0
    # the kernels' rows are the Comparisons' rows (labels here equal the codes)
    order = np.lexsort((out.rows.jj, out.rows.ii, out.rows.judge, out.rows.cluster))
    mine = np.lexsort((data.jj, data.ii, data.judge, data.cluster))
    for name in PairRows._fields:
        np.testing.assert_array_equal(getattr(out.rows, name)[order], getattr(data, name)[mine])
    working = bt_rows(np.zeros(data.n_models), data)  # the working rows keep the row keys
    assert isinstance(working, WorkingRows)
    for name in ("ii", "jj", "judge", "cluster"):
        np.testing.assert_array_equal(getattr(working, name), getattr(data, name))


def test_estimators_return_typed_results():
    frame = _log(1, 600)
    loaded = load_comparisons(frame)
    assert isinstance(loaded, LoadedComparisons) and loaded.n_rejected == 0
    data, n_rejected, scope = loaded  # earlier releases' tuple still unpacks
    assert data is loaded.data and n_rejected == 0 and scope is None
    quality = ResolvedQuality(eta={})
    options = options_of(model="crowd-bt", solver=Solver(engine="numpy"))  # checked once
    est = estimate_crowd(data, options, quality, ref=0, engine="numpy")
    assert isinstance(est, Estimate) and est.crowd is not None and est.judges is not None
    res = fit_crowd_default(data, clustered=True, prior=DEFAULT_PRIOR, engine="numpy")
    rows = pair_design(data.collapsed(), "numpy")
    model = crowd_inference(res, data, rows, design_builder(rows, engine="numpy", remedy=None,
                                                            pairs=data), quality,
                            ci="model", level=0.95, engine="numpy")  # fmt: skip
    assert isinstance(model, CrowdInference) and model.fit.inference is None
    # model-based: the inverse of the information over the free parameters
    free = res.free
    np.testing.assert_allclose(model.fit.cov[np.ix_(free, free)],
                               np.linalg.inv(res.information[np.ix_(free, free)]),
                               rtol=1e-8, atol=1e-12)  # fmt: skip
