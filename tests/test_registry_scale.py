"""The registry keeps one scale: what it records, boards on another scale, conversion, old files,
concurrent freezes and symbolic links. Through ``ratings freeze`` where the README shows it."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import time

import numpy as np
import pandas as pd
import pytest

import ratings
import ratings.scopes.registry as registry_module
from ratings.cli.app import main
from ratings.core.errors import DataWarning
from ratings.scopes.registry import REGISTRY_COLUMNS, freeze, load_registry


def board(anchor: str, seed: int = 0, models=("a", "b", "c", "d")) -> ratings.Ratings:
    rng = np.random.default_rng(seed)
    n = 400
    i = rng.integers(0, len(models), n)
    j = (i + rng.integers(1, len(models), n)) % len(models)
    s = np.linspace(-1, 1, len(models))
    win = rng.random(n) < 1 / (1 + np.exp(-(s[i] - s[j])))
    log = pd.DataFrame({"model_a": np.array(models)[i], "model_b": np.array(models)[j],
                        "winner": np.where(win, "A", "B"),
                        "task_id": rng.integers(0, 40, n).astype(str)})  # fmt: skip
    return ratings.fit(log, anchor=anchor)


def written(r: ratings.Ratings, path) -> str:
    """A ratings table as `ratings fit --out` writes it."""
    from ratings.scopes.scale import board_info

    r.to_frame().assign(**board_info(r)).to_csv(path, index=False)
    return str(path)


def test_registry_records_the_board(tmp_path):
    reg = tmp_path / "registry.csv"
    out = freeze(board("a=1000"), reg, date="2026-05-01")
    assert out.columns.tolist() == list(REGISTRY_COLUMNS)
    row = out.set_index("model").loc["b"]
    assert (row["anchor"], row["anchor_rating"], row["method"]) == ("a", 1000.0, "bt")
    assert row["version"] == ratings.__version__
    assert load_registry(reg).equals(out)


def test_cli_combined_board_records_scopes_weights_and_method(tmp_path, capsys):
    from ratings.datasets.example import example_path

    table, reg = tmp_path / "board.csv", tmp_path / "registry.csv"
    assert main(["combine", str(example_path()), "--rubric", str(example_path("rubric.csv")),
                 "--anchor", "GPT-5.5 (medium)=1000", "--weights",
                 "analytical=2,presentation=1,rubric=1", "--out", str(table)]) == 0  # fmt: skip
    assert main(["freeze", str(table), "--registry", str(reg), "--date", "2026-05-01"]) == 0
    frozen = load_registry(reg)
    assert set(frozen["anchor"]) == {"GPT-5.5 (medium)"} and set(frozen["anchor_rating"]) == {1000}
    assert set(frozen["method"]) == {"combined (joint)"}
    assert set(frozen["scopes"]) == {"analytical,presentation,rubric"}
    assert set(frozen["weights"]) == {"analytical=0.5,presentation=0.25,rubric=0.25"}
    capsys.readouterr()


def test_a_board_on_another_scale_is_refused_and_the_registry_untouched(tmp_path, capsys):
    reg = tmp_path / "registry.csv"
    freeze(board("a=1000"), reg, date="2026-05-01")
    before = reg.read_bytes()
    other = written(board("d=1600", models=("a", "b", "c", "d", "e")), tmp_path / "other.csv")
    assert main(["freeze", other, "--registry", str(reg)]) == 2
    err = capsys.readouterr().err
    assert "anchored at 'd' = 1600" in err and "the registry" in err and "'a' = 1000" in err
    assert "--convert" in err and "The registry was not changed" in err
    assert reg.read_bytes() == before
    # the Python API raises the same, and a stated scale cannot override the table's own
    with pytest.raises(ValueError, match=r"another scale than the registry"):
        freeze(pd.read_csv(other), reg)
    with pytest.raises(ValueError, match=r"`scale` says the board is 'a' = 1000"):
        freeze(pd.read_csv(other), reg, scale="a=1000")
    assert reg.read_bytes() == before


def test_convert_shifts_the_board_onto_the_registry_scale(tmp_path, capsys):
    reg = tmp_path / "registry.csv"
    freeze(board("a=1000"), reg, date="2026-05-01")
    new = board("d=1600", seed=3, models=("a", "b", "c", "d", "e"))
    other = written(new, tmp_path / "other.csv")
    assert main(["freeze", other, "--registry", str(reg), "--convert"]) == 0
    capsys.readouterr()
    out = load_registry(reg).set_index("model")
    table = pd.read_csv(other).set_index("model")
    expected = table.loc["e", "elo"] - table.loc["a", "elo"] + 1000.0  # e relative to a, a = 1000
    assert out.loc["e", "elo"] == pytest.approx(expected, abs=1e-9)
    assert np.isnan(out.loc["e", "lower"]) and np.isnan(out.loc["e", "upper"])
    assert out.loc["e", "anchor"] == "a" and out.loc["e", "anchor_rating"] == 1000.0
    assert "converted from 'd' = 1600" in out.loc["e", "source"]
    # the registry's anchor is not on this board: no conversion possible
    lone = written(board("x=1000", models=("x", "y", "z")), tmp_path / "lone.csv")
    assert main(["freeze", lone, "--registry", str(reg), "--convert"]) == 2
    assert "the registry's anchor 'a' is not on the board" in capsys.readouterr().err


def test_a_table_without_a_recorded_scale(tmp_path, capsys):
    reg = tmp_path / "registry.csv"
    freeze(board("a=1000"), reg, date="2026-05-01")
    plain = tmp_path / "plain.csv"
    board("a=1000", models=("a", "b", "c", "d", "e")).to_frame().to_csv(plain, index=False)
    assert main(["freeze", str(plain), "--registry", str(reg)]) == 2
    assert "records no scale" in capsys.readouterr().err
    assert main(["freeze", str(plain), "--registry", str(reg), "--scale", "a=1000"]) == 0
    assert "e" in set(load_registry(reg)["model"])


def test_old_registry_loads_with_a_warning_and_is_upgraded(tmp_path, capsys):
    reg = tmp_path / "registry.csv"
    pd.DataFrame({"model": ["old"], "elo": [1100.0], "lower": [1050.0], "upper": [1150.0],
                  "index": [0.3], "frozen_on": ["2025-01-01"], "source": ["x.csv"]}).to_csv(
        reg, index=False)  # fmt: skip
    with pytest.warns(DataWarning, match=r"written before registries recorded their scale"):
        old = load_registry(reg)
    assert old.columns.tolist() == list(REGISTRY_COLUMNS) and np.isnan(old["anchor_rating"][0])
    assert main(["freeze", written(board("a=1000"), tmp_path / "b.csv"), "--registry",
                 str(reg)]) == 0  # fmt: skip
    assert "ratings: warning: Registry" in capsys.readouterr().err
    new = pd.read_csv(reg)
    assert new.columns.tolist() == list(REGISTRY_COLUMNS)
    assert new.loc[0, "model"] == "old" and np.isnan(new.loc[0, "anchor_rating"])
    assert (new.loc[1:, "anchor"] == "a").all()
    load_registry(reg)  # no warning now (filterwarnings = error)


def test_writes_go_through_a_symbolic_link(tmp_path):
    real = tmp_path / "store" / "registry.csv"
    real.parent.mkdir()
    freeze(board("a=1000"), real, date="2026-05-01")
    link = tmp_path / "registry.csv"
    link.symlink_to(real)
    freeze(board("a=1000", models=("a", "b", "c", "d", "e")), link, date="2026-05-02")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert "e" in set(load_registry(real)["model"])


def _freeze_one(reg: str, model: str, start: float) -> None:
    time.sleep(max(0.0, start - time.time()))
    freeze(pd.DataFrame({"model": [model], "elo": [1000.0]}), reg, date="2026-05-01")


def _slow_merge(original):
    def slow(*args, **kwargs):
        time.sleep(0.3)  # between reading the registry and writing it: a wide window to race
        return original(*args, **kwargs)

    return slow


@pytest.mark.parametrize("locked", [True, False])
def test_concurrent_freezes_lose_no_model(tmp_path, monkeypatch, locked):
    reg = str(tmp_path / "registry.csv")
    freeze(pd.DataFrame({"model": ["seed"], "elo": [1000.0]}), reg, date="2026-05-01")
    monkeypatch.setattr(registry_module, "_merge_and_write",
                        _slow_merge(registry_module._merge_and_write))  # fmt: skip
    if not locked:  # the control: without the lock the same race loses models
        monkeypatch.setattr(registry_module, "file_lock", lambda path: contextlib.nullcontext())
    ctx = multiprocessing.get_context("fork")
    start = time.time() + 0.5
    procs = [ctx.Process(target=_freeze_one, args=(reg, f"m{k}", start)) for k in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
    assert all(p.exitcode == 0 for p in procs)
    models = set(load_registry(reg)["model"])
    if locked:
        assert models == {"seed", "m0", "m1", "m2", "m3"}
    else:
        assert len(models) < 5
