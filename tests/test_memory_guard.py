"""The size guard stops dense model x model work before allocating it (tested with fake small
limits, never by allocating)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ratings
import ratings.core.memory as memory
from ratings.cli.app import main
from ratings.core.errors import MemoryLimitError


def ring(m: int) -> pd.DataFrame:
    """m models in a cycle, each beating the next and losing to the one after (connected)."""
    names = np.array([f"m{k:05d}" for k in range(m)], dtype=object)
    a = np.concatenate([np.arange(m), np.arange(m)])
    b = np.concatenate([(np.arange(m) + 1) % m, (np.arange(m) + 2) % m])
    return pd.DataFrame({"model_a": names[a], "model_b": names[b],
                         "winner": np.where(np.arange(2 * m) < m, "A", "B")})  # fmt: skip


@pytest.mark.parametrize("text, expected", [
    ("8GB", 8e9), ("500 MB", 5e8), ("1.5GiB", 1.5 * 2**30), ("123", 123), (2e9, 2e9), ("2e3k", 2e6),
])  # fmt: skip
def test_parse_size(text, expected):
    assert memory.parse_size(text) == int(expected)


@pytest.mark.parametrize("bad", ["lots", "-1GB", "0", "inf", float("nan"), True, "8 parsecs"])
def test_parse_size_refuses_nonsense(bad):
    with pytest.raises(ValueError, match=r"`max_memory` must be"):
        memory.parse_size(bad)


def test_estimate_of_a_20000_model_fit():
    """One 20,000 x 20,000 matrix of floats is 3.2 GB; a fit holds several at once."""
    assert memory.fit_memory(20_000) >= 8 * 3.2e9
    assert memory.fit_memory(20_000) < 12 * 3.2e9
    assert memory.fit_memory(200) < 5e6  # a usual board needs a few MB


def test_a_large_board_stops_before_allocating(monkeypatch):
    """20,000 models with 4 GB available: refused with the memory it would need, at once."""
    monkeypatch.setattr(memory, "available_memory", lambda: 4_000_000_000)
    with pytest.raises(MemoryLimitError, match=r"a fit of 20,000 models needs about 2\d\.\d GB "
                       r"of memory, over the default limit 2\.0 GB \(50% of the 4\.0 GB available "
                       r"now\).*`max_memory='2\d(\.\d)?GB'`") as info:  # fmt: skip
        ratings.fit(ring(20_000), cluster=None)
    assert info.value.needed > info.value.limit == 2_000_000_000
    assert isinstance(info.value, MemoryError)


def test_max_memory_raises_or_lowers_the_limit(monkeypatch):
    board = ring(30)
    with pytest.raises(MemoryLimitError, match=r"over the limit 10\.0 KB set by `max_memory`"):
        ratings.fit(board, solver=ratings.Solver(max_memory="10KB"))
    monkeypatch.setattr(memory, "available_memory", lambda: 1000)  # a tiny machine
    with pytest.raises(MemoryLimitError):
        ratings.fit(board)
    r = ratings.fit(board, solver=ratings.Solver(max_memory="1GB"))  # the option lifts the default
    assert len(r.models) == 30


def test_unknown_available_memory_means_no_limit(monkeypatch):
    monkeypatch.setattr(memory, "available_memory", lambda: None)
    assert memory.memory_limit(None)[0] is None
    memory.check_memory(10**15, "anything")  # no limit known: not stopped


def test_available_memory_is_read():
    free = memory.available_memory()
    assert free is None or free > 0


def test_bootstrap_draws_count_towards_the_estimate():
    assert memory.fit_memory(100, n_boot=10**6) - memory.fit_memory(100) == 8 * 10**6 * 100


def test_cli_max_memory_names_the_flag(tmp_path, capsys):
    path = tmp_path / "v.csv"
    ring(30).to_csv(path, index=False)
    assert main(["fit", str(path), "--max-memory", "10KB", "--out", str(tmp_path / "r.csv")]) == 2
    err = capsys.readouterr().err
    assert "set by `--max-memory`" in err and "`--max-memory " in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.csv"]


def test_planning_checks_its_tables(tmp_path, capsys):
    subs = pd.DataFrame({"model": [f"m{k}" for k in range(40)] * 5,
                         "task_id": np.repeat([f"t{k}" for k in range(5)], 40)})  # fmt: skip
    from sampling.plan import plan_matches

    with pytest.raises(MemoryLimitError, match=r"planning 40 models on 5 tasks"):
        plan_matches(None, subs, ["j1"], 5, seed=0, max_memory="100KB")
    assert len(plan_matches(None, subs, ["j1"], 5, seed=0, max_memory="1GB")) == 5
    v, s = tmp_path / "v.csv", tmp_path / "s.csv"
    v.write_text("model_a,model_b,winner,task_id\n")
    subs.to_csv(s, index=False)
    code = main(["next", str(v), "--submissions", str(s), "--judges", "j1", "--n", "5", "--seed",
                 "0", "--out", str(tmp_path / "plan.csv"), "--max-memory", "100KB"])
    assert code == 2 and "`--max-memory`" in capsys.readouterr().err
    assert not (tmp_path / "plan.csv").exists()
