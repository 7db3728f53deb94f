"""Unusual but valid files read as meant: spreadsheet exports with empty trailing columns,
fields the package does not read holding objects, look-alike checks without false alarms,
numeric-looking model names in plots."""

from __future__ import annotations

import json
import unicodedata

import pandas as pd
import pytest

import ratings
from ratings.cli.app import main

GOOD_ROWS = ["x,y,A", "y,z,A", "z,x,A", "x,y,B"]


@pytest.mark.parametrize("quoted", [False, True])  # pyarrow's engine, and pandas' C engine
def test_trailing_empty_spreadsheet_columns_are_dropped(tmp_path, quoted):
    name = '"x"' if quoted else "x"
    rows = [r.replace("x", name, 1) for r in GOOD_ROWS]
    path = tmp_path / "v.csv"
    path.write_text("model_a,model_b,winner,,,\n" + "".join(f"{r},,,\n" for r in rows))
    log = ratings.read_verdicts(path)
    assert len(log) == 4 and list(log.rejected["row"]) == []
    assert ratings.fit(path).elo.index.tolist() == ["x", "y", "z"]


def test_blank_headed_column_with_values_is_kept_but_not_read(tmp_path):
    path = tmp_path / "v.csv"
    path.write_text("model_a,model_b,winner,,\n" + "".join(f"{r},,note\n" for r in GOOD_ROWS))
    frame = ratings.io.readers.read_file(str(path))
    assert frame.columns.tolist() == ["model_a", "model_b", "winner", "Unnamed: 4"]
    assert len(ratings.read_verdicts(path)) == 4


def test_fields_that_are_not_read_may_hold_objects(tmp_path):
    path = tmp_path / "v.jsonl"
    lines = [dict(zip(["model_a", "model_b", "winner"], r.split(","), strict=True))
             | {"meta": {"prompt": [1, 2]}} for r in GOOD_ROWS]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert len(ratings.read_verdicts(path)) == 4


def test_distinct_names_are_not_look_alikes():
    nfc = unicodedata.normalize("NFC", "caf\u00e9")
    log = pd.DataFrame({"model_a": [nfc, "cafe", "x", nfc], "model_b": ["cafe", "x", nfc, "x"],
                        "winner": ["A", "A", "A", "B"]})  # fmt: skip
    assert sorted(ratings.read_verdicts(log).verdicts["model_a"].cat.categories) == [
        "cafe", nfc, "x"]  # fmt: skip


def test_plot_keeps_numeric_looking_model_names(tmp_path, capsys):
    import matplotlib

    matplotlib.use("Agg")
    from ratings.plot.bands import plot_ratings
    from ratings.plot.bands import read_ratings_table as _read_table

    table = tmp_path / "r.csv"
    table.write_text("model,elo,se,lower,upper\n007,1000,10,980.4,1019.6\n1.5,1100,10,1080.4,"
                     "1119.6\n2,900,10,880.4,919.6\n-5,950,10,930.4,969.6\n")  # fmt: skip
    frame = _read_table(table)
    assert frame["model"].tolist() == ["007", "1.5", "2", "-5"]
    assert frame["elo"].dtype.kind in "if" and frame["lower"].dtype.kind == "f"
    ax = plot_ratings(frame, highlight=["007", "-5"])
    labels = {t.get_text() for t in ax.get_yticklabels()}
    assert {"007", "1.5", "2", "-5"} <= labels
    out = tmp_path / "p.png"
    assert main(["plot", str(table), "-o", str(out), "--highlight", "007,-5"]) == 0
    assert out.stat().st_size > 0


def test_plot_reads_back_escaped_names(tmp_path, capsys):
    log = tmp_path / "v.csv"
    log.write_text("model_a,model_b,winner\n" + "\n".join(
        r.replace("x", "=x") for r in GOOD_ROWS) + "\n")  # fmt: skip
    assert main(["fit", str(log), "--out", str(tmp_path / "r.csv")]) == 0
    assert "'=x" in (tmp_path / "r.csv").read_text()
    from ratings.plot.bands import read_ratings_table as _read_table

    assert sorted(_read_table(tmp_path / "r.csv")["model"]) == ["=x", "y", "z"]
