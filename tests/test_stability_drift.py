"""Drift between two boards (:func:`ratings.drift`): the bundled example refitted with two
models added, against the two fits' own numbers; anchor changes; the freeze line."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ratings
from ratings.datasets.example import example_path
from ratings.scopes.scale import board_info
from ratings.stability.drift import DRIFT_COLUMNS, frozen_moves

ADDED = ["Phi-5", "Jamba 3"]
ANCHOR = "GPT-5.5 (medium)=1000"


@pytest.fixture(scope="module")
def fits():
    v = pd.read_csv(example_path())
    v = v[v["scope"] == "analytical"].drop(columns="scope")
    touches = v["model_a"].isin(ADDED) | v["model_b"].isin(ADDED)
    return ratings.fit(v[~touches], anchor=ANCHOR), ratings.fit(v, anchor=ANCHOR)


def test_drift_of_the_example_refitted_with_two_models_added(fits):
    old, new = fits
    d = ratings.drift(old, new)
    t = d.table.set_index("model")
    assert list(d.table.columns) == list(DRIFT_COLUMNS)
    assert sorted(d.new) == sorted(ADDED) and d.gone == []
    kept = t[t["status"] == "kept"]
    assert len(kept) == len(old.models)
    np.testing.assert_allclose(kept["change"], (new.elo - old.elo)[kept.index], atol=1e-9)
    se = np.sqrt(old.se[kept.index] ** 2 + new.se[kept.index] ** 2)
    mask = se > 0
    np.testing.assert_allclose(kept["z"][mask], ((new.elo - old.elo)[kept.index] / se)[mask])
    rank_old = old.to_frame().set_index("model")["rank"]
    rank_new = new.to_frame().set_index("model")["rank"]
    np.testing.assert_array_equal(kept["rank_change"].astype(int),
                                  (rank_old - rank_new)[kept.index].astype(int))
    assert t.loc[ANCHOR.split("=")[0], "change"] == 0.0
    assert "2 new, 0 gone" in d.notes[0]


def test_drift_from_written_tables(tmp_path, fits):
    old, new = fits
    paths = []
    for name, r in (("old", old), ("new", new)):
        path = tmp_path / f"{name}.csv"
        r.to_frame().assign(**board_info(r)).to_csv(path, index=False)
        paths.append(str(path))
    from_files = ratings.drift(*paths).table
    from_fits = ratings.drift(old, new).table
    pd.testing.assert_frame_equal(from_files, from_fits, check_exact=False, atol=1e-8)


def test_an_anchor_change_is_undone_and_said(fits):
    old, new = fits
    moved = new.reanchor("Grok 5", 1200.0)
    d = ratings.drift(old, moved)
    assert any("Anchor changed" in n for n in d.notes)
    same = ratings.drift(old, new).table.set_index("model")
    t = d.table.set_index("model")
    np.testing.assert_allclose(t["change"], same.loc[t.index, "change"], atol=1e-8)
    np.testing.assert_allclose(t["se_change"], same.loc[t.index, "se_change"], rtol=1e-7)


def test_models_gone_are_listed(fits):
    old, new = fits
    d = ratings.drift(new, old)
    assert sorted(d.gone) == sorted(ADDED)
    assert d.table["status"].iloc[-2:].eq("gone").all()


def test_the_drift_chart(fits, tmp_path):
    old, new = fits
    ax = ratings.drift(old, new).plot(tmp_path / "drift.png", title="refit")
    gids = {c.get_gid() for c in ax.collections}
    assert {"drift-old", "drift-new"} <= gids
    assert (tmp_path / "drift.png").stat().st_size > 10_000


def test_frozen_moves_names_models_outside_their_frozen_interval():
    reg = pd.DataFrame({"model": ["a", "b"], "elo": [1000.0, 1100.0], "lower": [980.0, 1080.0],
                        "upper": [1020.0, 1120.0]})
    table = pd.DataFrame({"model": ["a", "b", "c"], "elo": [1010.0, 1130.0, 900.0]})
    lines = frozen_moves(reg, table)
    assert len(lines) == 1 and lines[0].startswith("b: frozen at 1100.0 [1080.0, 1120.0]")
