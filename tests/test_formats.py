"""Peer-format readers against verdicts counted by hand from the raw files.

Every expected count here comes from the files read with :mod:`json` / pyarrow and plain
Python (the tools' documented label meanings), never from the readers under test.
"""

from __future__ import annotations

import collections
import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import ratings
from ratings.core.errors import InvalidVerdictsError
from ratings.io import read_verdicts
from ratings.io.formats import AlpacaEval, ArenaHard, FastChat, peer_format, recognise
from ratings.io.readers import peek_columns, peer_of

DATA = Path(__file__).resolve().parent / "data"
ALPACA = DATA / "alpaca_eval_annotations_sample.json.gz"
CLEAN_BATTLE = DATA / "fastchat_clean_battle_sample.json"
PARQUET = DATA / "lmarena_battles_sample.parquet"
HARD_V01 = DATA / "arena_hard_v0.1_judgments_sample.jsonl"
HARD_V2 = DATA / "arena_hard_v2_judgments_sample.jsonl"
ARENA_CSV = DATA / "arena_hard_battles_2024_09.csv"


def counts(frame: pd.DataFrame) -> collections.Counter:
    return collections.Counter(zip(frame["model_a"].astype(str), frame["model_b"].astype(str),
                                   frame["winner"].astype(str), strict=True))


def alpaca_records() -> list[dict]:
    with gzip.open(ALPACA, "rt", encoding="utf-8") as fh:
        return json.load(fh)


# -- AlpacaEval ---------------------------------------------------------------------------------


def test_alpaca_eval_verdicts_counted_by_hand():
    records = alpaca_records()
    expected = collections.Counter()
    for rec in records:
        p = float(rec["preference"])
        outcome = "A" if p < 1.5 else "B" if p > 1.5 else "tie"
        expected[(rec["generator_1"], rec["generator_2"], outcome)] += 1
    log = read_verdicts(ALPACA)  # recognised from its fields
    assert counts(log.verdicts) == expected
    assert sum(expected.values()) == len(records) == 160
    assert sum(n for (_, _, w), n in expected.items() if w == "tie") == 9  # real draws kept
    assert set(log.verdicts["judge"].astype(str)) == {"weighted_alpaca_eval_gpt4_turbo"}
    assert list(log.verdicts["task_id"].astype(str)[:3]) == [r["instruction"] for r in records[:3]]


def test_alpaca_eval_score_and_lengths_columns():
    records = alpaca_records()
    frame = AlpacaEval().convert(pd.DataFrame(records))
    assert np.allclose(frame["score"], [2 - float(r["preference"]) for r in records], atol=0)
    assert frame["len_a"].tolist() == [len(r["output_1"]) for r in records]
    assert frame["len_b"].tolist() == [len(r["output_2"]) for r in records]
    soft = AlpacaEval(soft=True).convert(pd.DataFrame(records))
    assert soft["winner"].astype(float).tolist() == [2 - float(r["preference"]) for r in records]


def test_alpaca_eval_bad_preferences_are_rejected_by_row(tmp_path):
    records = alpaca_records()[:6]
    records[1]["preference"] = None
    records[4]["preference"] = 2.7
    records[5]["preference"] = 0  # AlpacaEval's older spelling of a draw
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps(records))
    with pytest.raises(InvalidVerdictsError, match=r"rows \[1\].*|rows \[4\]") as err:
        read_verdicts(path)
    rows = sorted(err.value.rows["row"].tolist())
    assert rows == [1, 4]
    log = read_verdicts(path, errors="report")
    assert log.verdicts.loc[5, "winner"] == "tie"
    assert dict(zip(log.rejected["row"], log.rejected["reason"], strict=True)) == {
        1: "missing winner", 4: "unknown winner value"}


def _alpaca_discrete_win_rate(preferences: list[float]) -> float:
    """AlpacaEval's ``ZeroOneScoringRule().describe_head2head(preferences)["win_rate"]``
    (tatsu-lab/alpaca_eval, src/alpaca_eval/metrics/helpers.py, Apache-2.0): 1.5 is a draw
    (0 also), the rest rounded to 1 or 2; the mean of (value - 1), in percent."""
    values = pd.Series(preferences).replace({1.5: 0}).round().astype(pd.Int64Dtype())
    values = values.astype(float).replace({0.0: 1.5})
    return float((values - 1).mean() * 100)


def _alpaca_soft_win_rate(preferences: list[float]) -> float:
    """AlpacaEval's ``AbsoluteScoringRule().describe_head2head(...)["win_rate"]`` (same file):
    the mean of (preference - 1), in percent."""
    values = pd.Series(preferences).astype(float).replace({0.0: 1.5})
    return float((values - 1).mean() * 100)


def test_alpaca_eval_discrete_win_rates_reproduced_by_the_fit():
    """Every model meets only the baseline (a star), so the Bradley-Terry MLE's win
    probability against it is its discrete win rate (ties half): AlpacaEval's number."""
    records = alpaca_records()
    r = ratings.fit(ALPACA)
    base = "gpt4_1106_preview"
    for model in {rec["generator_2"] for rec in records}:
        prefs = [float(rec["preference"]) for rec in records if rec["generator_2"] == model]
        ours = 100 * float(np.asarray(r.win_probability(model, base)).ravel()[0])
        assert abs(ours - _alpaca_discrete_win_rate(prefs)) < 1e-8, model
    assert _alpaca_soft_win_rate([1.2, 1.9]) == pytest.approx(55.0)


# -- FastChat / LMArena -------------------------------------------------------------------------

_FASTCHAT = {"model_a": "A", "model_b": "B", "tie": "tie", "tie (bothbad)": "tie",
             "both_bad": "tie"}


def test_fastchat_clean_battle_counted_by_hand():
    records = json.loads(CLEAN_BATTLE.read_text())
    expected = collections.Counter((r["model_a"], r["model_b"], _FASTCHAT[r["winner"]])
                                   for r in records)
    log = read_verdicts(CLEAN_BATTLE)
    assert counts(log.verdicts) == expected
    assert log.verdicts["task_id"].astype(str).tolist() == [r["question_id"] for r in records]
    assert log.verdicts["judge"].astype(str).tolist() == [r["judge"] for r in records]
    assert sum(r["winner"] == "tie (bothbad)" for r in records) > 0


def test_lmarena_parquet_counted_by_hand():
    records = pq.read_table(PARQUET).to_pylist()
    expected = collections.Counter((r["model_a"], r["model_b"], _FASTCHAT[r["winner"]])
                                   for r in records)
    assert any(r["winner"] == "both_bad" for r in records)
    frame = FastChat().convert(pd.read_parquet(PARQUET))
    assert counts(frame) == expected
    assert frame["is_code"].tolist() == [r["is_code"] for r in records]
    assert frame["both_bad"].tolist() == [r["winner"] == "both_bad" for r in records]
    assert frame["category_math"].tolist() == [r["category_tag"]["math_v0.1"]["math"]
                                                for r in records]
    tokens = [r["conv_metadata"]["sum_assistant_b_tokens"] for r in records]
    headers = [sum(r["conv_metadata"]["header_count_a"].values()) for r in records]
    assert frame["tokens_b"].tolist() == tokens and frame["headers_a"].tolist() == headers
    log = read_verdicts(PARQUET, keep=["language", "turn"])
    assert counts(log.verdicts) == expected
    assert log.verdicts["language"].astype(str).tolist() == [r["language"] for r in records]


def test_fastchat_named_on_a_plain_battle_table_takes_question_id_as_the_task():
    plain = read_verdicts(ARENA_CSV)
    assert "task_id" not in plain.verdicts.columns  # not recognised: a plain table
    log = read_verdicts(ARENA_CSV, format="fastchat")
    raw = pd.read_csv(ARENA_CSV, dtype=str)
    assert log.verdicts["task_id"].astype(str).tolist() == raw["question_id"].tolist()


# -- arena-hard-auto ----------------------------------------------------------------------------

_A_WINS = {"A>>B": ("A", 1), "A>B": ("A", 0), "A=B": ("tie", 0), "B=A": ("tie", 0),
           "B>A": ("B", 0), "B>>A": ("B", 1), "B<<A": ("A", 1), "B<A": ("A", 0),
           "A<B": ("B", 0), "A<<B": ("B", 1)}


def _hard_expected(path: Path, weight: int, baseline: str = "gpt-4-0314"):
    expected = collections.Counter()
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        base = rec.get("baseline", baseline)
        for game, (a, b) in zip(rec["games"], ((base, rec["model"]), (rec["model"], base)),
                                strict=True):
            outcome, strong = _A_WINS[game["score"]]
            expected[(a, b, outcome)] += weight if strong else 1
    return expected


@pytest.mark.parametrize("path", [HARD_V01, HARD_V2], ids=["v0.1", "v2"])
@pytest.mark.parametrize("weight", [1, 3])
def test_arena_hard_counted_by_hand(path, weight):
    log = read_verdicts(path, format=ArenaHard(strong_weight=weight))
    assert counts(log.verdicts) == _hard_expected(path, weight)
    if weight == 1:
        assert counts(read_verdicts(path).verdicts) == _hard_expected(path, 1)  # recognised


def test_arena_hard_v01_baseline_option():
    log = read_verdicts(HARD_V01, format=ArenaHard(baseline="gpt-4-0613-base"))
    assert counts(log.verdicts) == _hard_expected(HARD_V01, 1, "gpt-4-0613-base")


def test_arena_hard_null_and_unknown_labels_are_rejected_by_row(tmp_path):
    lines = HARD_V2.read_text().splitlines()[:3]
    recs = [json.loads(x) for x in lines]
    recs[0]["games"][1]["score"] = None
    recs[2]["games"][0]["score"] = "A>>>B"
    path = tmp_path / "judgments.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    log = read_verdicts(path, errors="report")
    # rows: record r's game g is row 2r + g - 1 (strong_weight 1)
    assert dict(zip(log.rejected["row"], log.rejected["reason"], strict=True)) == {
        1: "missing winner", 4: "unknown winner value"}
    assert len(log) == 4


def test_arena_hard_records_without_games_are_refused(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text('{"uid": "u1", "model": "m", "games": null, "judge": "j"}\n')
    with pytest.raises(InvalidVerdictsError, match="no list of games"):
        read_verdicts(path)


# -- the registry -------------------------------------------------------------------------------


def test_formats_by_name_and_recognition():
    assert isinstance(peer_format("alpaca-eval"), AlpacaEval)
    assert isinstance(peer_format("LMArena"), FastChat)
    assert peer_format("csv") is None
    with pytest.raises(ValueError, match="'fastchat', 'arena-hard', 'alpaca-eval'"):
        peer_format("alpaca")
    with pytest.raises(ValueError, match="strong_weight"):
        ArenaHard(strong_weight=0)
    assert recognise(["model_a", "model_b", "winner", "question_id"]) is None  # plain
    assert isinstance(peer_of(ALPACA), AlpacaEval)
    assert isinstance(peer_of(HARD_V01), ArenaHard)
    assert peer_of(ARENA_CSV) is None
    assert "len_a" in peek_columns(ALPACA)
    assert "generator_1" in peek_columns(ALPACA, raw=True)


def test_summary_line_says_what_was_read():
    log = read_verdicts(ALPACA)
    line = AlpacaEval().summary(log.verdicts)
    assert line == ("read as AlpacaEval annotations (--format alpaca-eval): 160 verdicts, "
                    "5 models, judge 'weighted_alpaca_eval_gpt4_turbo'")


def test_fit_reads_each_format_through_read():
    r = ratings.fit(HARD_V2, read=ratings.Read(format=ArenaHard(strong_weight=3)))
    assert r.n_verdicts == sum(_hard_expected(HARD_V2, 3).values())
    styled = ratings.fit(ALPACA, style=["len"])
    assert styled.n_verdicts == 160 and styled.style is not None


# -- the command line ---------------------------------------------------------------------------


def test_cli_fits_each_format_and_says_what_it_read(capsys):
    from ratings.cli.app import main

    for path, fmt, title in ((ALPACA, "alpaca-eval", "AlpacaEval annotations"),
                             (HARD_V01, "arena-hard", "arena-hard-auto judgments"),
                             (CLEAN_BATTLE, "fastchat", "FastChat / LMArena battles")):
        for given in ([], ["--format", fmt]):
            assert main(["fit", str(path), *given]) == 0
            out, err = capsys.readouterr()
            assert f"read as {title} (--format {fmt})" in err
            assert out.startswith("Ratings (Bradley-Terry)")


def test_cli_strong_weight(capsys):
    from ratings.cli.app import main

    assert main(["fit", str(HARD_V2), "--strong-weight", "3"]) == 0
    _, err = capsys.readouterr()
    assert f"{sum(_hard_expected(HARD_V2, 3).values())} verdicts" in err
    assert main(["fit", str(ALPACA), "--strong-weight", "3"]) == 2
    _, err = capsys.readouterr()
    assert "`--format arena-hard`" in err


def test_soft_reading_gives_a_score_where_the_tool_records_one():
    from ratings.io.readers import read_file

    records = alpaca_records()
    soft = read_file(str(ALPACA), peers=True, soft=True)
    expected = [2 - float(r["preference"]) for r in records]
    assert np.abs(soft["winner"].astype(float) - expected).max() < 1e-15  # JSON's last bit
    hard = read_file(str(HARD_V2), peers=True, soft=True)  # verdicts only: read as verdicts
    assert counts(hard) == _hard_expected(HARD_V2, 1)
