"""The bundled example: a simulated verdict log (not real judgments).

24 models with fixed true Elo, 240 tasks, a panel of three LLM judges of different reliability,
two judged scopes (``analytical`` and ``presentation``) with about 10% ties, and per-task
submission effects. ``python -m ratings.example`` regenerates ``ratings/examples/verdicts.csv``
byte for byte from the seed.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from ratings.result import ELO_SCALE
from ratings.simulate import random_matches, simulate_verdicts

__all__ = ["EXAMPLE_ANCHOR", "JUDGE_ETA", "TRUE_ELO", "example_path", "generate_example"]

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


def generate_example(seed: int = 20261129) -> pd.DataFrame:
    """Simulate the example verdict log (canonical columns plus ``match_id``)."""
    models = list(TRUE_ELO)
    strengths = pd.Series(TRUE_ELO) / ELO_SCALE
    parts = []
    for scope, offset in _SCOPES.items():
        m = random_matches(models, _N_PER_SCOPE, n_tasks=240, judges=list(JUDGE_ETA),
                           seed=seed + offset)  # fmt: skip
        v = simulate_verdicts(m, strengths, judge_eta=JUDGE_ETA, task_sd=0.35, tie_rate=0.12,
                              seed=seed + 100 + offset)  # fmt: skip
        v.insert(0, "scope", scope)
        parts.append(v)
    out = pd.concat(parts, ignore_index=True)
    out.insert(0, "match_id", [f"m{k:05d}" for k in range(len(out))])
    return out[["match_id", "scope", "task_id", "judge", "model_a", "model_b", "winner"]]


def example_path() -> Path:
    """Path of the bundled example CSV."""
    return Path(str(resources.files("ratings") / "examples" / "verdicts.csv"))


if __name__ == "__main__":  # pragma: no cover - regeneration helper
    from ratings.io import write_atomic

    path = example_path()
    path.parent.mkdir(exist_ok=True)
    write_atomic(generate_example(), path)
    frame = pd.read_csv(path)
    print(f"wrote {path}: {len(frame)} verdicts, ties {np.mean(frame['winner'] == 'tie'):.1%}")
