"""Shared fixtures: a seeded generator and small simulated verdict logs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import simulate_verdicts


@pytest.fixture
def rng() -> np.random.Generator:
    """A fresh, fixed-seed generator per test (no global seeding)."""
    return np.random.default_rng(20261129)


@pytest.fixture
def board(rng) -> pd.DataFrame:
    """Five models, 600 verdicts on 60 tasks, 10% ties and task effects."""
    return simulate_verdicts(
        rng, [0.0, 0.4, -0.3, 1.0, -0.8], 600, 60, tie_fraction=0.1, task_sd=0.5
    )
