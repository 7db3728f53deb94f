"""A small fit of a tie model or of Crowd-BT in a fresh process runs on the NumPy twins without
loading numba (its import and first calls cost more than such a fit), as Bradley-Terry's does
(``tests/test_engine.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

FIT = """
    import json, sys
    import ratings
    from ratings.datasets.example import example_path
    r = ratings.fit(example_path(), scope="analytical", model={model})
    print(json.dumps({{"numba": "numba" in sys.modules, "converged": bool(r.converged)}}))
"""


@pytest.mark.parametrize("model", ['ratings.BT(ties="davidson")', 'ratings.BT(ties="rao-kupper")',
                                   '"crowd-bt"'])  # fmt: skip
def test_a_small_fit_in_a_fresh_process_does_not_load_numba(model):
    code = textwrap.dedent(FIT.format(model=model))
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], check=True,
                         capture_output=True, text=True)  # fmt: skip
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"numba": False,
                                                               "converged": True}
