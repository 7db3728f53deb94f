"""Every result says what was fitted: a style-controlled fit names its features in the summary's
header, the ``method`` column of written tables and the HTML report, and prints its
coefficients; every result names the interval kind it actually used (the default ``sandwich``
is CR2 with clusters and HC0 without; adjusted fits, CR1 with G - 1 degrees of freedom)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import ratings
from ratings.cli.app import main
from ratings.core.errors import UnclusteredWarning
from ratings.scopes.scale import board_info

sm = pytest.importorskip("statsmodels.api")


def _log(n: int = 2000, m: int = 5, seed: int = 4, tasks: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    ta, tb = rng.integers(50, 900, n), rng.integers(50, 900, n)
    ha, hb = rng.integers(0, 4, n), rng.integers(0, 4, n)
    x = (ta - tb) / (ta + tb)
    s = np.linspace(-0.8, 0.8, m)
    p = 1 / (1 + np.exp(-(s[a] - s[b] + 0.9 * x)))
    return pd.DataFrame({"model_a": [f"m{i}" for i in a], "model_b": [f"m{i}" for i in b],
                         "winner": np.where(rng.random(n) < p, "A", "B"),
                         "task_id": rng.integers(0, tasks, n), "judge": "j",
                         "tokens_a": ta, "tokens_b": tb, "headers_a": ha, "headers_b": hb})


def _glm_coefficients(df: pd.DataFrame, names: tuple[str, ...]) -> np.ndarray:
    """statsmodels' binomial GLM of the same design: model dummies and each feature as
    (a - b) / (a + b) scaled to unit root-mean-square; the features' coefficients."""
    models = sorted(set(df.model_a) | set(df.model_b))
    idx = {m: k for k, m in enumerate(models)}
    xm = np.zeros((len(df), len(models)))
    xm[np.arange(len(df)), df.model_a.map(idx)] += 1
    xm[np.arange(len(df)), df.model_b.map(idx)] -= 1
    feats = []
    for name in names:
        a, b = df[f"{name}_a"].to_numpy(float), df[f"{name}_b"].to_numpy(float)
        x = np.where(a + b > 0, (a - b) / np.where(a + b > 0, a + b, 1), 0.0)
        feats.append(x / np.sqrt(np.mean(x * x)))
    y = (df.winner == "A").to_numpy(float)
    res = sm.GLM(y, np.column_stack([xm[:, 1:], *feats]), family=sm.families.Binomial()).fit()
    return np.asarray(res.params[-len(names):])


def test_a_style_fit_names_its_features_everywhere():
    log = _log()
    r = ratings.fit(log, style=["tokens", "headers"])
    text = r.summary()
    assert text.splitlines()[0].startswith(
        "Ratings (Bradley-Terry, style-controlled: tokens, headers): 5 models")
    assert board_info(r)["method"] == "bt (style: tokens, headers)"
    assert "style-controlled: tokens, headers" in r.to_html(charts=False)
    # the printed coefficients are statsmodels' (4 significant digits)
    block = text.split("Style coefficients")[1].splitlines()[2:4]
    printed = np.array([float(line.split()[1]) for line in block])
    np.testing.assert_allclose(printed, _glm_coefficients(log, ("tokens", "headers")),
                               rtol=1e-3)  # fmt: skip


def test_a_plain_fit_keeps_its_name():
    r = ratings.fit(_log())
    assert r.summary().startswith("Ratings (Bradley-Terry): 5 models")
    assert board_info(r)["method"] == "bt"
    assert "Style coefficients" not in r.summary()


def test_the_method_column_of_a_written_style_fit(tmp_path):
    path, out = tmp_path / "log.csv", tmp_path / "ratings.csv"
    _log().to_csv(path, index=False)
    assert main(["fit", str(path), "--style", "tokens", "--model", "crowd-bt",
                 "--out", str(out)]) == 0  # fmt: skip
    assert set(pd.read_csv(out)["method"]) == {"crowd-bt (style: tokens)"}


@pytest.mark.parametrize(("kwargs", "says"), [
    ({}, "cluster-robust CR2 sandwich"),
    ({"cluster": None}, "robust sandwich H^-1 B H^-1, per verdict (HC0)"),
    ({"style": ["tokens"]}, "cluster-robust CR2 sandwich"),
    ({"style": ["tokens"], "cluster": None}, "robust sandwich H^-1 B H^-1, per verdict (HC0)"),
    ({"adjust": "position"}, "cluster-robust CR1 sandwich"),
])  # fmt: skip
def test_each_result_names_the_interval_kind_it_used(kwargs, says):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnclusteredWarning)
        r = ratings.fit(_log(), **kwargs)
    line = next(x for x in r.summary().splitlines() if x.startswith("Intervals:"))
    assert says in line
    if "adjust" in kwargs:  # CR1 with a t quantile of G - 1 = 39 degrees of freedom
        assert re.search(r"t quantile with 39 df", line)
