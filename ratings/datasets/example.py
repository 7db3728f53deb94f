"""The bundled example: a simulated benchmark (not real judgments).

24 models with fixed true Elo, 240 tasks, a panel of three LLM judges of different reliability
(eta 0.95 / 0.88 / 0.80), two judged scopes (``analytical`` and ``presentation``, 4,000 verdicts
each, about 10% ties) and binary rubric checks (6 per submission on 100 tasks). Each (model, task)
submission has one quality effect shared by all scopes, so scopes are correlated through tasks.
The judges' qualities were fitted per scope on a larger simulated log of past judgments
(60,000 verdicts per scope) and ship as ``judges_<scope>.json``, as a team would reuse them.

``python -m ratings.datasets.example`` regenerates ``verdicts.csv`` and ``rubric.csv`` byte for byte
from the seed, and refits the judge files.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from ratings.core.schema import ELO_SCALE
from ratings.datasets.simulate import (
    random_matches,
    simulate_rubric,
    simulate_verdicts,
    submission_effects,
)

__all__ = [
    "EXAMPLE_ANCHOR",
    "JUDGE_ETA",
    "TRUE_ELO",
    "example_path",
    "generate_example",
    "generate_rubric",
    "judge_quality_paths",
]

#: True Elo of the simulated models (GPT-5.5 (medium) at 1000 is the demo anchor).
TRUE_ELO: dict[str, float] = {
    "DeepSeek V4.1 Flash (max)": 1085.0,
    "GPT-5.5 (medium)": 1000.0,
    "GPT-5.5 (high)": 1060.0,
    "GPT-5.5 mini": 905.0,
    "Claude Opus 5": 1120.0,
    "Claude Sonnet 5": 1045.0,
    "Claude Haiku 5": 890.0,
    "Gemini 3.5 Pro": 1100.0,
    "Gemini 3.5 Flash": 975.0,
    "Grok 5": 1030.0,
    "Qwen 4 Max": 1015.0,
    "Qwen 4 32B": 860.0,
    "Llama 5 405B": 940.0,
    "Llama 5 70B": 835.0,
    "Mistral Large 4": 925.0,
    "Mistral Medium 4": 870.0,
    "Kimi K3": 1040.0,
    "GLM-5": 990.0,
    "DeepSeek V4.1 (max)": 1110.0,
    "Command A+": 820.0,
    "Phi-5": 780.0,
    "Nova Pro 2": 900.0,
    "MiniMax M3": 960.0,
    "Jamba 3": 800.0,
}

#: Probability that each simulated judge reports the true order.
JUDGE_ETA: dict[str, float] = {"judge-alpha": 0.95, "judge-beta": 0.88, "judge-gamma": 0.80}

EXAMPLE_ANCHOR = "GPT-5.5 (medium)=1000"
_SCOPES = {"analytical": 11, "presentation": 12}  # scope -> seed offset
_N_PER_SCOPE = 4000
_N_TASKS = 240
_SEED = 20261129


def _effects(seed: int) -> pd.Series:
    tasks = [f"task-{k}" for k in range(_N_TASKS)]
    return submission_effects(list(TRUE_ELO), tasks, 0.35, seed=seed + 7)


def generate_example(seed: int = _SEED, n_per_scope: int = _N_PER_SCOPE) -> pd.DataFrame:
    """Simulate the example verdict log (canonical columns plus ``match_id``)."""
    models = list(TRUE_ELO)
    strengths = pd.Series(TRUE_ELO) / ELO_SCALE
    effects = _effects(seed)
    parts = []
    for scope, offset in _SCOPES.items():
        m = random_matches(models, n_per_scope, n_tasks=_N_TASKS, judges=list(JUDGE_ETA),
                           seed=seed + offset)  # fmt: skip
        v = simulate_verdicts(m, strengths, judge_eta=JUDGE_ETA, tie_rate=0.12,
                              seed=seed + 100 + offset, effects=effects)  # fmt: skip
        v.insert(0, "scope", scope)
        parts.append(v)
    out = pd.concat(parts, ignore_index=True)
    out.insert(0, "match_id", [f"m{k:05d}" for k in range(len(out))])
    return out[["match_id", "scope", "task_id", "judge", "model_a", "model_b", "winner"]]


def generate_rubric(seed: int = _SEED) -> pd.DataFrame:
    """Simulate the example rubric: 6 binary checks per submission on the first 100 tasks."""
    tasks = [f"task-{k}" for k in range(100)]
    strengths = (pd.Series(TRUE_ELO) - 1000.0) / ELO_SCALE  # logits around an average model
    return simulate_rubric(strengths, tasks, 6, effects=_effects(seed), discrimination=2.0,
                           seed=seed + 31)


def example_path(name: str = "verdicts.csv") -> Path:
    """Path of a bundled example file (``verdicts.csv``, ``rubric.csv``, ``judges_*.json``)."""
    return Path(str(resources.files("ratings") / "datasets" / "examples" / name))


def judge_quality_paths() -> dict[str, Path]:
    """The shipped judge-quality file of each judged scope."""
    return {scope: example_path(f"judges_{scope}.json") for scope in _SCOPES}


def _write_all() -> None:  # pragma: no cover - regeneration helper
    from ratings.api.fitting import fit
    from ratings.io import write_atomic
    from ratings.scopes.judge_files import save_judge_quality

    path = example_path()
    path.parent.mkdir(exist_ok=True)
    write_atomic(generate_example(), path)
    write_atomic(generate_rubric(), example_path("rubric.csv"))
    past = generate_example(seed=_SEED + 1000, n_per_scope=60_000)
    for scope, target in judge_quality_paths().items():
        fitted = fit(past, scope=scope, model="crowd-bt")
        save_judge_quality(fitted, target,
                           source="simulated past judgments (ratings.datasets.example, "
                           "seed + 1000)")
    frame = pd.read_csv(path)
    print(f"wrote {path.parent}: {len(frame)} verdicts, "
          f"ties {np.mean(frame['winner'] == 'tie'):.1%}")


if __name__ == "__main__":  # pragma: no cover
    _write_all()
