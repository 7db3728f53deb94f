"""Write the peer-format samples of tests/data (run once; the files are committed).

* ``alpaca_eval_annotations_sample.json.gz``: real rows of AlpacaEval 2.0's
  ``results/<model>/weighted_alpaca_eval_gpt4_turbo/annotations.json`` (tatsu-lab/alpaca_eval,
  Apache-2.0), for four models on 40 instructions (the first 35 and five on which some of them
  drew), records unmodified; read from a checkout given as the first argument.
* ``fastchat_clean_battle_sample.json``, ``lmarena_battles_sample.parquet``,
  ``arena_hard_v0.1_judgments_sample.jsonl``, ``arena_hard_v2_judgments_sample.jsonl``: no real
  file of these formats is published in a source repository, so these are written to the
  formats the tools document (FastChat's ``clean_battle_data.py``, the LMArena Parquet
  releases' columns, arena-hard-auto's ``gen_judgment.py`` records) with verdicts drawn from
  Bradley-Terry strengths; real question ids from arena-hard-auto's ``question.jsonl``.

Usage: ``python tests/make_peer_samples.py ALPACA_EVAL_CHECKOUT ARENA_HARD_CHECKOUT``
(checkouts or git directories; files are read with ``git show HEAD:path``).
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parent / "data"
ALPACA_MODELS = ("FuseChat-Gemma-2-9B-Instruct", "FuseChat-Qwen-2.5-7B-Instruct",
                 "FuseChat-Llama-3.2-3B-Instruct", "FuseChat-Llama-3.2-1B-Instruct")
ALPACA_ROWS = [*range(35), 199, 262, 370, 475, 713]


def show(repo: str, path: str) -> bytes:
    return subprocess.run(["git", "-C", repo, "show", f"HEAD:{path}"], check=True,
                          capture_output=True).stdout


def alpaca(repo: str) -> None:
    records = []
    for model in ALPACA_MODELS:
        rows = json.loads(show(repo, f"results/{model}/weighted_alpaca_eval_gpt4_turbo/"
                                     "annotations.json"))
        records += [rows[i] for i in ALPACA_ROWS]
    with gzip.open(OUT / "alpaca_eval_annotations_sample.json.gz", "wt", encoding="utf-8") as fh:
        json.dump(records, fh, indent=2, ensure_ascii=False)


def _draw(rng, strength, a, b, tie=0.1):
    p = 1.0 / (1.0 + np.exp(strength[b] - strength[a]))
    u = rng.random()
    return "tie" if u < tie else ("model_a" if u < tie + (1 - tie) * p else "model_b")


def fastchat(rng) -> None:
    models = ["gpt-4-0613", "claude-2.1", "mixtral-8x7b-instruct-v0.1", "llama-2-70b-chat",
              "vicuna-33b", "gpt-3.5-turbo-0613"]
    strength = dict(zip(models, [1.0, 0.7, 0.4, 0.1, -0.2, 0.3], strict=True))
    rows, table = [], []
    for i in range(200):
        a, b = rng.choice(len(models), 2, replace=False)
        ma, mb = models[a], models[b]
        w = _draw(rng, strength, ma, mb, tie=0.2)
        bothbad = w == "tie" and rng.random() < 0.4
        qid = f"{rng.integers(16**15):015x}"
        turn = int(rng.integers(1, 4))
        lang = rng.choice(["English", "English", "English", "Chinese", "German"])
        conv = [{"role": "user", "content": "..."}, {"role": "assistant", "content": "..."}]
        rows.append({"question_id": qid, "model_a": ma, "model_b": mb,
                     "winner": "tie (bothbad)" if bothbad else w,
                     "judge": f"arena_user_{int(rng.integers(40))}", "turn": turn,
                     "anony": True, "language": str(lang), "tstamp": 1.7e9 + 60.0 * i,
                     "conversation_a": conv, "conversation_b": conv})
        tokens = rng.integers(50, 900, size=2)
        table.append({"question_id": qid, "model_a": ma, "model_b": mb,
                      "winner": "both_bad" if bothbad else w,
                      "judge": f"{rng.integers(16**15):015x}", "turn": turn, "anony": True,
                      "language": str(lang), "tstamp": 1.7e9 + 60.0 * i,
                      "is_code": bool(rng.random() < 0.3),
                      "category_tag": {"math_v0.1": {"math": bool(rng.random() < 0.1)},
                                       "if_v0.1": {"if": bool(rng.random() < 0.3),
                                                   "score": int(rng.integers(0, 6))}},
                      "conv_metadata": {"sum_assistant_a_tokens": int(tokens[0]),
                                        "sum_assistant_b_tokens": int(tokens[1]),
                                        "header_count_a": {"h1": int(rng.integers(3)), "h2": 0},
                                        "header_count_b": {"h1": int(rng.integers(3)), "h2": 0},
                                        "list_count_a": {"ordered": int(rng.integers(5)),
                                                         "unordered": 0},
                                        "list_count_b": {"ordered": int(rng.integers(5)),
                                                         "unordered": 0},
                                        "bold_count_a": {"**": int(rng.integers(4)), "__": 0},
                                        "bold_count_b": {"**": int(rng.integers(4)), "__": 0}}})
    (OUT / "fastchat_clean_battle_sample.json").write_text(json.dumps(rows, indent=1) + "\n")
    pd.DataFrame(table).to_parquet(OUT / "lmarena_battles_sample.parquet", index=False)


_STRONG = {1: ("A>>B", "B<<A"), 0.75: ("A>B", "B<A"), 0.5: ("A=B", "B=A"),
           0.25: ("B>A", "A<B"), 0: ("B>>A", "A<<B")}


def _label(rng, p):
    """A's label for a verdict where A wins with probability p (five grades)."""
    u = rng.random()
    grade = 1 if u < p * 0.4 else 0.75 if u < p else 0.5 if u < p + 0.1 else 0.25 \
        if u < p + 0.1 + (1 - p) * 0.6 else 0
    return _STRONG[grade][int(rng.random() < 0.1)]


def arena_hard(repo: str, rng) -> None:
    v01 = [json.loads(x)["uid"] for x in show(repo, "data/arena-hard-v0.1/question.jsonl")
           .decode().split("\n") if x.strip()][:50]
    v2 = [json.loads(x) for x in show(repo, "data/arena-hard-v2.0/question.jsonl")
          .decode().split("\n") if x.strip()]
    v2 = [q for q in v2 if q["category"] == "hard_prompt"][:40] + \
         [q for q in v2 if q["category"] == "creative_writing"][:10]
    base = "gpt-4-0314"
    with open(OUT / "arena_hard_v0.1_judgments_sample.jsonl", "w") as fh:
        for model, s in (("gpt-4-0613", -0.3), ("claude-3-haiku-20240307", -0.6),
                         ("gpt-4-turbo-2024-04-09", 0.9)):
            for qid in v01:
                p = 1 / (1 + np.exp(s))  # the baseline (A in game 1) wins
                games = [{"user_prompt": "...", "judgment": "...", "score": _label(rng, p)},
                         {"user_prompt": "...", "judgment": "...",
                          "score": _label(rng, 1 - p)}]
                fh.write(json.dumps({"question_id": qid, "model": model,
                                     "judge": "gpt-4-1106-preview", "games": games}) + "\n")
    with open(OUT / "arena_hard_v2_judgments_sample.jsonl", "w") as fh:
        for model, s in (("deepseek-r1", 0.3), ("qwq-32b", -0.2)):
            for q in v2:
                baseline = "o3-mini-2025-01-31" if q["category"] == "hard_prompt" \
                    else "gemini-2.0-flash-001"
                p = 1 / (1 + np.exp(s))
                games = [{"score": _label(rng, p), "judgment": {"answer": "..."},
                          "prompt": "..."},
                         {"score": _label(rng, 1 - p), "judgment": {"answer": "..."},
                          "prompt": "..."}]
                fh.write(json.dumps({"uid": q["uid"], "category": q["category"],
                                     "judge": "gpt-4.1", "model": model, "baseline": baseline,
                                     "games": games}) + "\n")
    del base


if __name__ == "__main__":
    generator = np.random.default_rng(20240915)
    alpaca(sys.argv[1])
    fastchat(generator)
    arena_hard(sys.argv[2], generator)
