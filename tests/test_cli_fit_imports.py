"""What a fresh ``ratings fit`` of a file loads: the readers of logs that live elsewhere (Dask,
DuckDB) only when the log is one of those, never for a CSV or Parquet file."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd

from ratings.datasets.example import example_path

RUN = """
    import json, sys
    from ratings.cli.app import main
    status = main(["fit", sys.argv[1], "--out", sys.argv[2], "--quiet"])
    print(json.dumps({"status": status, "modules": sorted(sys.modules)}))
"""

ELSEWHERE = ("ratings.data.dask", "ratings.data.sql", "ratings.data.grouped")


def _fit_modules(path, out) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(RUN), str(path), str(out)],
                          capture_output=True, text=True, check=True)  # fmt: skip
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["status"] == 0
    return found["modules"]


def test_a_fresh_fit_of_a_file_loads_no_reader_of_logs_elsewhere(tmp_path):
    log = pd.read_csv(example_path())
    log = log[log["scope"] == log["scope"].iloc[0]].drop(columns="scope")
    csv, parquet = tmp_path / "v.csv", tmp_path / "v.parquet"
    log.to_csv(csv, index=False)
    log.to_parquet(parquet, index=False)
    for path in (csv, parquet):
        modules = _fit_modules(path, tmp_path / "r.csv")
        assert "ratings.data.comparisons" in modules  # the fit ran and aggregated
        assert not set(ELSEWHERE) & set(modules), path



def test_a_default_fit_imports_no_scipy_module(tmp_path):
    # 100 models over 100 tasks: the CR2 df take the twins' sparse products over the clusters'
    # designs (ratings.kernels.sparse), which run on scipy's compiled routines without any
    # scipy module imported (scipy.sparse alone costs a fresh process 0.1 s)
    rng = np.random.default_rng(3)
    n = 30_000
    a = rng.integers(0, 100, n)
    b = (a + rng.integers(1, 100, n)) % 100
    log = pd.DataFrame({"model_a": [f"m{k}" for k in a], "model_b": [f"m{k}" for k in b],
                        "winner": rng.choice(["A", "B", "tie"], n, p=[0.45, 0.45, 0.1]),
                        "task_id": [f"t{k}" for k in rng.integers(0, 100, n)]})  # fmt: skip
    path = tmp_path / "v.parquet"
    log.to_parquet(path, index=False)
    modules = _fit_modules(path, tmp_path / "r.csv")
    assert "ratings.kernels.sparse" in modules  # the sparse products ran
    assert not [m for m in modules if m.split(".")[0] == "scipy"]
