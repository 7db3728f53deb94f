"""Tests of :mod:`ratings.scopes.registry`: the index scale and the frozen registry file."""

from __future__ import annotations

import datetime as dt
import os

import numpy as np
import pandas as pd
import pytest

import ratings.io.writers
from ratings.core.errors import InvalidVerdictsError
from ratings.scopes.registry import (
    REGISTRY_COLUMNS,
    freeze,
    freeze_file,
    index_value,
    load_registry,
)


@pytest.fixture
def table() -> pd.DataFrame:
    return pd.DataFrame({
        "model": ["low", "mid", "high"], "elo": [400.0, 1500.0, 2600.0],
        "lower": [350.0, 1450.0, 2550.0], "upper": [450.0, 1550.0, 2650.0],
    })  # fmt: skip


@pytest.fixture
def registry(tmp_path, table) -> str:
    """A registry frozen on 2026-01-15 with low, mid and high."""
    path = str(tmp_path / "registry.csv")
    freeze(table, path, date="2026-01-15", source="board.csv")
    return path


def _bytes(path) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


# --- the index ----------------------------------------------------------------------------------


def test_index_value_clamps_and_scales():
    got = index_value(np.array([400.0, 500.0, 1500.0, 2500.0, 2600.0, np.nan]))
    np.testing.assert_array_equal(got, [0.0, 0.0, 0.5, 1.0, 1.0, np.nan])
    assert index_value(1500) == 0.5 and isinstance(index_value(1500), float)
    series = index_value(pd.Series([1000.0, 2000.0], index=["a", "b"]))
    assert series.index.tolist() == ["a", "b"] and series.tolist() == [0.25, 0.75]


# --- freezing -----------------------------------------------------------------------------------


def test_new_models_are_added_with_their_index(registry):
    on_disk = pd.read_csv(registry)  # read independently of load_registry
    assert list(on_disk.columns) == list(REGISTRY_COLUMNS)
    assert on_disk["model"].tolist() == ["low", "mid", "high"]
    assert on_disk["index"].tolist() == [0.0, 0.5, 1.0]
    assert on_disk["elo"].tolist() == [400.0, 1500.0, 2600.0]
    assert on_disk["lower"].tolist() == [350.0, 1450.0, 2550.0]
    assert set(on_disk["frozen_on"]) == {"2026-01-15"}
    assert set(on_disk["source"]) == {"board.csv"}


def test_missing_registry_is_created_without_bounds(tmp_path):
    path = tmp_path / "new.csv"
    out = freeze(pd.DataFrame({"model": ["a"], "elo": [900.0]}), path, date="2026-02-01")
    assert path.exists()
    assert np.isnan(out.loc[0, "lower"]) and np.isnan(out.loc[0, "upper"])
    assert out.loc[0, "index"] == pytest.approx(0.2)
    pd.testing.assert_frame_equal(load_registry(path), out)


def test_default_date_is_today_utc(tmp_path):
    out = freeze(pd.DataFrame({"model": ["a"], "elo": [900.0]}), tmp_path / "r.csv")
    assert out.loc[0, "frozen_on"] == dt.datetime.now(dt.UTC).date().isoformat()


def test_existing_entry_never_changes(registry):
    before = _bytes(registry)
    moved = pd.DataFrame({"model": ["mid", "high"], "elo": [1700.0, 1000.0]})
    out = freeze(moved, registry, date="2026-03-01")
    assert _bytes(registry) == before  # nothing new: not even rewritten
    assert out.set_index("model").loc["mid", "elo"] == 1500.0

    moved = pd.DataFrame({"model": ["mid", "new"], "elo": [1700.0, 2100.0]})
    out = freeze(moved, registry, date="2026-03-01")
    on_disk = pd.read_csv(registry).set_index("model")
    assert on_disk.loc["mid", "elo"] == 1500.0 and on_disk.loc["mid", "index"] == 0.5
    assert on_disk.loc["mid", "frozen_on"] == "2026-01-15"
    assert on_disk.loc["new", "index"] == pytest.approx(0.8)
    assert on_disk.loc["new", "frozen_on"] == "2026-03-01"
    assert out["model"].tolist() == ["low", "mid", "high", "new"]  # new models at the end


def test_refreeze_replaces_the_entry_in_place(registry):
    moved = pd.DataFrame({"model": ["mid", "high"], "elo": [1700.0, 1000.0]})
    out = freeze(moved, registry, date="2026-03-01", refreeze=["mid"], source="b2.csv")
    assert out["model"].tolist() == ["low", "mid", "high"]
    on_disk = pd.read_csv(registry).set_index("model")
    assert on_disk.loc["mid", "elo"] == 1700.0
    assert on_disk.loc["mid", "index"] == pytest.approx(0.6)
    assert on_disk.loc["mid", "frozen_on"] == "2026-03-01"
    assert on_disk.loc["mid", "source"] == "b2.csv"
    assert np.isnan(on_disk.loc["mid", "lower"])  # the new table has no interval
    assert on_disk.loc["high", "elo"] == 2600.0  # not named: unchanged
    assert freeze(moved, registry, refreeze="high")["elo"].tolist() == [400.0, 1700.0, 1000.0]


def test_refreeze_unknown_model_is_an_error(registry):
    before = _bytes(registry)
    with pytest.raises(ValueError, match=r"`refreeze` names \['midd'\], not in the ratings table"):
        freeze(pd.DataFrame({"model": ["mid"], "elo": [1.0]}), registry, refreeze=["midd"])
    assert _bytes(registry) == before


def test_extra_columns_are_kept(registry):
    frame = pd.read_csv(registry).assign(note=["", "checked", ""])
    frame.to_csv(registry, index=False)
    out = freeze(pd.DataFrame({"model": ["mid", "z"], "elo": [1.0, 2.0]}), registry,
                 refreeze=["mid"], date="2026-04-01")  # fmt: skip
    assert out.columns.tolist() == [*REGISTRY_COLUMNS, "note"]
    assert out.set_index("model").loc["mid", "note"] == "checked"


def test_ratings_table_is_not_modified(tmp_path, table):
    before = table.copy(deep=True)
    freeze(table, tmp_path / "r.csv", date="2026-01-01")
    pd.testing.assert_frame_equal(table, before)


def test_ratings_table_errors(tmp_path):
    path = tmp_path / "r.csv"
    message = r"Column\(s\) \['elo'\] not found.*Available columns: \['model', 'rating'\]"
    with pytest.raises(InvalidVerdictsError, match=message):
        freeze(pd.DataFrame({"model": ["a"], "rating": [1.0]}), path)
    bad = pd.DataFrame({"model": ["a", "b", "a"], "elo": ["1000", "lots", "1100"]})
    with pytest.raises(InvalidVerdictsError) as info:
        freeze(bad, path)
    text = str(info.value)
    assert "2 with duplicate model (e.g. ['a'] at rows [0, 2])" in text
    assert "1 with elo is not a finite number (e.g. ['lots'] at rows [1])" in text
    assert not path.exists()


def test_bad_date(tmp_path, table):
    with pytest.raises(
        ValueError, match=r"`date` must be an ISO date 'YYYY-MM-DD'; got '1/2/2026'"
    ):
        freeze(table, tmp_path / "r.csv", date="1/2/2026")


def test_registry_cannot_be_an_input(registry, table):
    before = _bytes(registry)
    with pytest.raises(ValueError, match="it is the input file"):
        freeze(table, registry, inputs=[registry])
    assert _bytes(registry) == before


# --- corrupt registries -------------------------------------------------------------------------


def _garbage(path):
    with open(path, "wb") as fh:
        fh.write(b"\x89PNG\r\n\x1a\n\x00\xff\xfe\x00garbage")


def _drop_index(path):
    pd.read_csv(path).drop(columns="index").to_csv(path, index=False)


def _duplicate(path):
    frame = pd.read_csv(path)
    frame.loc[2, "model"] = "low"
    frame.to_csv(path, index=False)


def _edited_elo(path):
    frame = pd.read_csv(path)
    frame.loc[1, "elo"] = 1600.0
    frame.to_csv(path, index=False)


def _text_elo(path):
    frame = pd.read_csv(path).astype({"elo": object})
    frame.loc[0, "elo"] = "n/a?"
    frame.to_csv(path, index=False)


def _empty(path):
    open(path, "wb").close()


def _bounds_swapped(path):
    frame = pd.read_csv(path)
    frame.loc[1, ["lower", "upper"]] = [1550.0, 1450.0]
    frame.to_csv(path, index=False)


def _index_outside(path):
    frame = pd.read_csv(path)
    frame.loc[2, "index"] = 1.5
    frame.to_csv(path, index=False)


def _anchor_off(path):
    """Every entry on the scale 'mid' = 1500, but mid's own entry edited to 1510."""
    frame = pd.read_csv(path)
    frame["anchor"], frame["anchor_rating"] = "mid", 1500.0
    frame.loc[1, ["elo", "lower", "upper", "index"]] = [1510.0, 1460.0, 1560.0, 0.505]
    frame.to_csv(path, index=False)


@pytest.mark.parametrize(("damage", "problem"), [
    (_garbage, "cannot be read as CSV"),
    (_drop_index, r"Column\(s\) \['index'\] not found in the registry"),
    (_duplicate, r"2 with duplicate model \(e.g. \['low'\] at rows \[0, 2\]\)"),
    (_edited_elo, r"1 with index inconsistent with elo.*\[\('1600.0', '0.5'\)\] at rows \[1\]"),
    (_text_elo, r"1 with elo is not a number \(e.g. \['n/a\?'\] at rows \[0\]\)"),
    (_empty, "the file is empty"),
    (_bounds_swapped, r"1 with lower above elo \(lower <= elo <= upper\) \(e.g. \[\('1550.0', "
                      r"'1500.0', '1450.0'\)\] at rows \[1\]\).*in the file they are lines \[3\]"),
    (_index_outside, r"1 with index outside \[0, 1\] \(e.g. \['1.5'\] at rows \[2\]\)"
                     r".*lines \[4\]"),
    (_anchor_off, r"1 with the board's anchor off its anchor_rating.*\('mid', '1510.0', "
                  r"'1500.0'\)\] at rows \[1\]"),
])  # fmt: skip
def test_corrupt_registry_raises_and_is_left_untouched(registry, table, damage, problem):
    damage(registry)
    before = _bytes(registry)
    new = pd.concat([table, pd.DataFrame({"model": ["extra"], "elo": [1000.0]})])
    for call in (lambda: load_registry(registry), lambda: freeze(new, registry),
                 lambda: freeze(new, registry, refreeze=["low"])):  # fmt: skip
        with pytest.raises(InvalidVerdictsError, match=problem) as info:
            call()
        assert repr(registry) in str(info.value)  # names the file
        assert "left unchanged" in str(info.value)
        assert _bytes(registry) == before


def test_failed_write_leaves_old_registry_intact(registry, monkeypatch):
    before = _bytes(registry)
    real = ratings.io.writers._writer

    def failing_writer(obj, target):
        write, suffix = real(obj, target)

        def half_then_fail(tmp):
            write(tmp)
            with open(tmp, "r+b") as fh:  # a partial file, then the disk "fills up"
                fh.truncate(10)
            raise OSError("No space left on device")

        return half_then_fail, suffix

    monkeypatch.setattr(ratings.io.writers, "_writer", failing_writer)
    with pytest.raises(OSError, match="No space left"):
        freeze(pd.DataFrame({"model": ["new"], "elo": [1000.0]}), registry)
    assert _bytes(registry) == before
    assert os.listdir(os.path.dirname(registry)) == ["registry.csv"]  # no temporary file left
    monkeypatch.undo()
    assert (
        freeze(pd.DataFrame({"model": ["new"], "elo": [1000.0]}), registry)["model"].tolist()[-1]
        == "new"
    )


def test_load_registry_types(registry):
    reg = load_registry(registry)
    assert reg.columns.tolist() == list(REGISTRY_COLUMNS)
    assert all(reg[c].dtype == np.float64 for c in ("elo", "lower", "upper", "index"))
    with pytest.raises(FileNotFoundError, match="not found"):
        load_registry(registry + ".missing.csv")


# --- the command-line helper --------------------------------------------------------------------


def test_freeze_file_uses_the_combined_scope(tmp_path, table):
    path = tmp_path / "ratings.csv"
    per_scope = pd.concat([table.assign(scope="analytical", elo=table["elo"] - 100),
                           table.assign(scope="combined"),
                           table.assign(scope="rubric", elo=table["elo"] + 100)])  # fmt: skip
    per_scope.to_csv(path, index=False)
    reg_path = tmp_path / "registry.csv"
    out = freeze_file(str(path), str(reg_path), date="2026-05-05")
    assert out["elo"].tolist() == [400.0, 1500.0, 2600.0]
    assert set(out["source"]) == {str(path)}
    pd.testing.assert_frame_equal(load_registry(reg_path), out)


def test_freeze_file_refuses_mixed_scopes_without_combined(tmp_path, table):
    path = tmp_path / "ratings.csv"
    pd.concat([table.assign(scope="a"), table.assign(scope="b")]).to_csv(path, index=False)
    with pytest.raises(InvalidVerdictsError, match=r"2 scopes \['a', 'b'\] and no 'combined'"):
        freeze_file(str(path), str(tmp_path / "registry.csv"))
    assert not (tmp_path / "registry.csv").exists()


def test_freeze_file_reads_fit_output(tmp_path):
    import ratings

    log = pd.DataFrame({"model_a": ["x", "y", "z", "x"], "model_b": ["y", "z", "x", "z"],
                        "winner": ["A", "A", "A", "tie"]})  # fmt: skip
    r = ratings.fit(log, anchor="x=1500")
    path = tmp_path / "fit.csv"
    ratings.io.write_atomic(r.to_frame(), path)
    out = freeze_file(str(path), str(tmp_path / "registry.csv"), refreeze=["y"])
    assert out.set_index("model").loc["x", "index"] == 0.5
    with pytest.raises(ValueError, match="it is the input file"):
        freeze_file(str(path), str(path))
