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
    from sampling.design.plan import plan_matches

    with pytest.raises(MemoryLimitError, match=r"planning 40 models on 5 tasks"):
        plan_matches(None, subs, ["j1"], 5, seed=0, solver=ratings.Solver(max_memory="100KB"))
    assert len(plan_matches(None, subs, ["j1"], 5, seed=0,
                             solver=ratings.Solver(max_memory="1GB"))) == 5
    v, s = tmp_path / "v.csv", tmp_path / "s.csv"
    v.write_text("model_a,model_b,winner,task_id\n")
    subs.to_csv(s, index=False)
    code = main(["next", str(v), "--submissions", str(s), "--judges", "j1", "--n", "5", "--seed",
                 "0", "--out", str(tmp_path / "plan.csv"), "--max-memory", "100KB"])
    assert code == 2 and "`--max-memory`" in capsys.readouterr().err
    assert not (tmp_path / "plan.csv").exists()


def arena(n: int, m: int, seed: int = 0) -> pd.DataFrame:
    """``n`` verdicts of ``m`` models, each verdict its own task (an arena)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    names = np.array([f"m{k:03d}" for k in range(m)], dtype=object)
    return pd.DataFrame({"model_a": names[a], "model_b": names[b],
                         "winner": rng.choice(np.array(["A", "B", "tie"], dtype=object), n),
                         "task_id": np.arange(n)})  # fmt: skip


def test_cluster_paths_estimates_grow_with_their_arrays():
    """The sparse path grows with the rows (a million one-verdict tasks: about 0.1 GB at 1,000
    models), the dense ones with clusters x parameters (the series: six such arrays)."""
    ones = np.ones(1_000_000, dtype=np.int64)
    small = memory.cluster_memory(ones, 1000, "small")
    assert 0.05e9 < small < 0.2e9
    series = memory.cluster_memory(ones, 1000, "series")
    assert series >= 6 * 8 * 1_000_000 * 1000
    exact = memory.cluster_memory(np.full(100, 50), 1000, "exact")
    assert exact >= 8 * (4 * 100 * 1000 + 1000 * 100 * 50)


def test_pairs_estimate():
    """1,000 models: the pairs' statistics near 80 MB, the table of 499,500 pairs near 0.2 GB."""
    assert 8e7 <= memory.pairs_memory(1000) < 1e8
    assert memory.pairs_memory(1000, table=True) - memory.pairs_memory(1000) == 400 * 499_500


def test_clustered_interval_past_the_limit_names_the_ways_out(monkeypatch, tmp_path, capsys):
    """The clustered interval's work is checked from its path's estimate before it starts; the
    command exits 2 naming --no-cluster, --cluster and --max-memory, and writes nothing."""
    log = tmp_path / "arena.csv"
    arena(400, 8).to_csv(log, index=False)
    monkeypatch.setattr(memory, "cluster_memory", lambda sizes, p, path: 10**15)
    out = tmp_path / "r.csv"
    assert main(["fit", str(log), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "the clustered interval by `task_id` (400 clusters, 8 parameters)" in err
    for flag in ("--no-cluster", "--cluster", "--max-memory"):
        assert flag in err
    assert not out.exists()
    # per-verdict intervals need no clustered work: the same board fits
    assert main(["fit", str(log), "--no-cluster", "--out", str(out)]) == 0


def test_max_memory_of_a_command_holds_for_later_stages(monkeypatch, tmp_path, capsys):
    """--max-memory reaches the stages computed after the fit (rank intervals, the pairwise
    table): a limit just above the fit's needs stops the pairs with their estimate."""
    log = tmp_path / "arena.csv"
    arena(400, 8).to_csv(log, index=False)
    import ratings.inference.ranks as ranks

    monkeypatch.setattr(ranks, "pairs_memory", lambda m, n_draws=0, table=False: 5 * 10**12)
    assert main(["fit", str(log), "--max-memory", "1TB", "--out", str(tmp_path / "r.csv")]) == 2
    err = capsys.readouterr().err
    assert "every pair's statistics for rank intervals (8 models) needs about 5.0 TB" in err
    assert "over the limit 1.0 TB set by `--max-memory`" in err


def test_python_fit_in_a_limit_scope(monkeypatch):
    """Python: the fit's Solver(max_memory=) holds for the clustered interval inside it."""
    monkeypatch.setattr(memory, "cluster_memory", lambda sizes, p, path: 2 * 10**9)
    with pytest.raises(MemoryLimitError, match=r"clustered interval.*over the limit 1\.0 GB set "
                       r"by `max_memory`.*`cluster`.*`cluster=None`"):  # fmt: skip
        ratings.fit(arena(300, 6), solver=ratings.Solver(max_memory="1GB"))


def test_an_unforeseen_memory_error_is_a_message(monkeypatch, tmp_path, capsys):
    """A MemoryError the guard did not foresee: exit 2 with the ways out, no traceback."""
    import ratings.api.fitting as fitting

    def boom(*_a, **_k):
        raise MemoryError

    log = tmp_path / "arena.csv"
    arena(100, 5).to_csv(log, index=False)
    monkeypatch.setattr(fitting, "fit_bt", boom)  # in the middle of the fit
    assert main(["fit", str(log), "--out", str(tmp_path / "r.csv")]) == 2
    err = capsys.readouterr().err
    assert "ran out of memory" in err and "--no-cluster" in err and "Traceback" not in err
