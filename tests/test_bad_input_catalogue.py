"""A catalogue of bad inputs through the command line: the table :data:`KINDS` holds one row
per kind (verdict logs, counts tables, rubric files, judge-quality files, registries,
submissions, arguments, output paths, plots), and every kind runs ``ratings ...`` and asserts
exit status 2, the message's key words, and that nothing was written, changed or left behind.

The Python API's messages for these inputs are checked in detail in
``test_bad_input_tables.py`` (verdict logs, counts, rubric and submission tables) and
``test_bad_input_options.py`` (fitting choices, judge-quality files, registries, command-line
arguments).
"""

from __future__ import annotations

import gzip
import json
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from bad_inputs import COUNTS, GOOD, REGISTRY_HEADER, SCOPED, tree

from ratings.cli.app import main

# ----------------------------------------------------------------------------------------------
# The catalogue through the command line: one row per kind of bad input
# ----------------------------------------------------------------------------------------------
#
# Every kind runs `ratings ...` in a directory of small files and asserts: exit status 2, the
# message's key words, and that nothing was written or changed (the directory tree, hidden
# temporary files and links included, is the same entry for entry and byte for byte).

RATINGS_TABLE = ("model,elo,se,lower,upper\nx,1050,10,1030,1070\ny,1000,0,1000,1000\n"
                 "z,950,10,930,970\n")
COUNTS_OK = "model_a,model_b,wins_a,wins_b,ties\nx,y,3,1,0\ny,z,2,1,0\nz,x,1,1,1\n"
TIES_ONLY = ("model_a,model_b,winner,task_id\n"
             + "".join(f"{a},{b},tie,t{k}\n" for k, (a, b) in enumerate(
                 [("x", "y"), ("y", "z"), ("z", "x")] * 2)))  # fmt: skip
BASE_FILES: dict[str, object] = {
    "good.csv": GOOD,
    "scoped.csv": SCOPED,
    "ratings.csv": RATINGS_TABLE,
    "rubric.csv": "task_id,model,check_id,passed\nt1,x,c1,1\nt1,y,c1,0\nt2,x,c1,0\nt2,y,c1,1\n",
    "subs.csv": "model,task_id\nx,t1\ny,t1\nz,t1\n",
    "log0.csv": "model_a,model_b,winner,task_id\n",
    "jq.json": json.dumps({"format": "ratings.judge_quality/1", "scope": "s1",
                           "model": "crowd-bt", "judges": [{"judge": "j1", "eta": 0.9},
                                                           {"judge": "j2", "eta": 0.8}]}),
}  # fmt: skip


def _judges(judges: list[dict], scope: str | None = "s1") -> str:
    return json.dumps({"format": "ratings.judge_quality/1", "scope": scope, "model": "crowd-bt",
                       "judges": judges})  # fmt: skip


def _parquet(columns: dict) -> object:
    def make(path: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table(columns), path)

    return make


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _directory(path: Path) -> None:
    path.mkdir()


def _link(target: str) -> object:
    return lambda path: path.symlink_to(path.parent / target)


def _verdicts(*rows: str, header: str = "model_a,model_b,winner") -> str:
    return header + "\n" + "".join(r + "\n" for r in rows)


NFC, NFD = "caf\u00e9", "cafe\u0301"
THREE = ("x,y,A", "y,z,A", "z,x,A", "x,y,B")


@dataclass(frozen=True)
class Kind:
    """One kind of bad input: the command (``{d}`` is the directory), the key words of the
    message, and the files it needs besides :data:`BASE_FILES`."""

    id: str
    argv: tuple[str, ...]
    keywords: tuple[str, ...]
    files: dict = field(default_factory=dict)


def K(id: str, argv: str, keywords, files: dict | None = None) -> Kind:
    words = (keywords,) if isinstance(keywords, str) else tuple(keywords)
    return Kind(id, tuple(shlex.split(argv)), words, files or {})


KINDS: list[Kind] = [
    # --- verdict logs: columns and cells ---------------------------------------------------
    K("verdicts-missing-column", "fit {d}/v.csv", ["['winner'] not found", "Available columns"],
      {"v.csv": "model_a,model_b,outcome\nx,y,A\n"}),
    K("verdicts-guessed-mapping", "fit {d}/v.csv", "`--columns Winner=winner`",
      {"v.csv": "model_a,model_b,Winner\nx,y,A\n"}),
    K("verdicts-empty-file", "fit {d}/v.csv", "the file is empty", {"v.csv": ""}),
    K("verdicts-blank-file", "fit {d}/v.csv", "the file is empty", {"v.csv": "\n\n  \n"}),
    K("verdicts-header-only", "fit {d}/v.csv", "has a header ['model_a', 'model_b', 'winner'] "
      "but no data rows", {"v.csv": "model_a,model_b,winner\n"}),
    K("verdicts-unknown-winner", "fit {d}/v.csv", ["unknown winner value", "['draw']",
      "`--winner-map`", "`--rejected FILE`"], {"v.csv": _verdicts(*THREE, "x,y,draw")}),
    K("verdicts-missing-model", "fit {d}/v.csv", ["missing model_a (lines [3])"],
      {"v.csv": _verdicts("x,y,A", "NA,y,A", "y,x,A")}),
    K("verdicts-missing-winner", "fit {d}/v.csv", "missing winner (lines [3])",
      {"v.csv": _verdicts("x,y,A", "x,y,", "y,x,A")}),
    K("verdicts-self-match", "fit {d}/v.csv", "model_a equals model_b (e.g. ['x'] at lines [3])",
      {"v.csv": _verdicts("x,y,A", "x, x ,A")}),
    K("verdicts-duplicate-match-id", "fit {d}/v.csv", "duplicate match_id (e.g. ['m1']",
      {"v.csv": _verdicts("m1,x,y,A", "m2,y,x,A", "m1,y,x,B",
                          header="match_id,model_a,model_b,winner")}),
    K("verdicts-winner-third-model", "fit {d}/v.csv", "winner names a model not in this match",
      {"v.csv": _verdicts("x,y,x", "y,z,A", "x,y,z")}),
    K("verdicts-ambiguous-winner", "fit {d}/v.csv", "ambiguous winner",
      {"v.csv": _verdicts("B,A,A", "x,y,A")}),
    K("verdicts-failed-flag", "fit {d}/v.csv", "failed_a is not boolean-like (e.g. ['maybe']",
      {"v.csv": _verdicts("x,y,A,maybe", "y,x,A,no", header="model_a,model_b,winner,failed_a")}),
    K("verdicts-missing-task", "fit {d}/v.csv", "missing task_id (lines [3])",
      {"v.csv": _verdicts("x,y,A,t1", "y,x,A,NA", header="model_a,model_b,winner,task_id")}),
    K("verdicts-missing-judge", "fit {d}/v.csv", "missing judge (lines [3])",
      {"v.csv": _verdicts("x,y,A,j", "y,x,A,", header="model_a,model_b,winner,judge")}),
    K("verdicts-missing-scope", "fit {d}/v.csv --scope s", "missing scope (lines [2])",
      {"v.csv": _verdicts("x,y,A,", "y,x,A,s", header="model_a,model_b,winner,scope")}),
    K("verdicts-all-rows-rejected", "fit {d}/v.csv --rejected {d}/rej.csv",
      "All 2 row(s) rejected, nothing to fit", {"v.csv": _verdicts("x,y,draw", "y,x,?")}),
    K("verdicts-duplicate-header", "fit {d}/v.csv", "'winner' appears more than once",
      {"v.csv": "model_a,model_b,winner,winner\nx,y,A,B\n"}),
    K("verdicts-duplicate-header-blanks-around", "fit {d}/v.csv", "appears more than once",
      {"v.csv": "model_a, model_b,model_b ,winner\nx,y,y,A\n"}),
    K("verdicts-semicolons", "fit {d}/v.csv", "may use ';' as delimiter",
      {"v.csv": "model_a;model_b;winner\nx;y;A\n"}),
    K("verdicts-tabs-in-csv", "fit {d}/v.csv", ["may use a tab as delimiter",
      "`--delimiter tab`"],
      {"v.csv": "model_a\tmodel_b\twinner\nx\ty\tA\n"}),
    K("verdicts-first-row-too-long", "fit {d}/v.csv", "more fields than the header (3)",
      {"v.csv": _verdicts("x,y,A,extra", "y,x,B")}),
    K("verdicts-truncated", "fit {d}/v.csv", "last line (line 3) looks truncated",
      {"v.csv": "model_a,model_b,winner\nx,y,A\ny,z"}),
    K("verdicts-truncated-cr", "fit {d}/v.csv", "last line (line 3) looks truncated",
      {"v.csv": "model_a,model_b,winner\rx,y,A\ry,z"}),
    K("verdicts-unclosed-quote", "fit {d}/v.csv", "could not be parsed as CSV",
      {"v.csv": 'model_a,model_b,winner\n"x,y,A\ny,x,B\n'}),
    K("verdicts-latin1", "fit {d}/v.csv", ["not valid UTF-8", "line 3"],
      {"v.csv": b"model_a,model_b,winner\nx,y,A\nG\xe9mini,y,A\n"}),
    K("verdicts-utf16", "fit {d}/v.csv", "not valid UTF-8",
      {"v.csv": GOOD.encode("utf-16")}),
    K("verdicts-corrupt-gzip", "fit {d}/v.csv.gz", "could not be decompressed as gzip",
      {"v.csv.gz": gzip.compress(GOOD.encode())[:-12]}),
    K("verdicts-not-gzip", "fit {d}/v.csv.gz", "could not be decompressed as gzip",
      {"v.csv.gz": GOOD}),
    K("verdicts-corrupt-bz2", "fit {d}/v.csv.bz2", "could not be decompressed as bz2",
      {"v.csv.bz2": b"BZh91AY&SY-broken"}),
    K("verdicts-corrupt-xz", "fit {d}/v.csv.xz", "could not be decompressed as xz",
      {"v.csv.xz": b"\xfd7zXZ\x00broken"}),
    K("verdicts-unknown-extension", "fit {d}/v.xlsx", ["is a spreadsheet (.xlsx)", "export the "
      "sheet as CSV"], {"v.xlsx": GOOD}),
    K("verdicts-not-found", "fit {d}/nope.csv", "nope.csv' not found"),
    K("verdicts-directory", "fit {d}/v.csv", "is a directory", {"v.csv": _directory}),
    K("verdicts-fifo", "fit {d}/v.csv", ["is a FIFO (named pipe)", "Save it to a file first"],
      {"v.csv": _fifo}),
    K("verdicts-counts-and-winner", "fit {d}/v.csv", ["both a `winner` column and count "
      "column(s) ['wins_a', 'ties']", "ambiguous"],
      {"v.csv": "model_a,model_b,winner,wins_a,ties\nx,y,A,1,0\ny,x,B,1,0\n"}),
    K("verdicts-columns-absent", "fit {d}/v.csv --columns lhs=model_a,right=model_b",
      ["['lhs'] given in `--columns` not found"], {"v.csv": "left,right,winner\nx,y,A\n"}),
    K("verdicts-columns-not-canonical", "fit {d}/good.csv --columns model_a=player",
      "`--columns` maps 'model_a' to 'player', which is not a canonical column"),
    K("verdicts-columns-two-to-one", "fit {d}/good.csv --columns model_a=winner,model_b=winner",
      "`--columns` maps both 'model_a' and 'model_b' to 'winner'"),
    K("verdicts-columns-syntax", "fit {d}/good.csv --columns left",
      "`--columns` must look like 'old=new,old2=new2'"),
    K("verdicts-winner-map-value", "fit {d}/good.csv --winner-map draw=D",
      "`--winner-map` values must be 'A', 'B' or 'tie'; got 'draw': 'D'"),
    # --- verdict logs: JSON Lines, JSON and Parquet ---------------------------------------------
    K("jsonl-syntax", "fit {d}/v.jsonl", "not valid JSON Lines at line 2",
      {"v.jsonl": '{"model_a": "x", "model_b": "y", "winner": "A"}\n{"model_a": "y"\n'}),
    K("jsonl-scalar-line", "fit {d}/v.jsonl", "at line 2 (5 is not an object)",
      {"v.jsonl": '{"model_a": "x", "model_b": "y", "winner": "A"}\n5\n'}),
    K("jsonl-null-line", "fit {d}/v.jsonl", "at line 2 (null is not an object)",
      {"v.jsonl": '{"model_a": "x", "model_b": "y", "winner": "A"}\nnull\n'}),
    K("jsonl-array-line", "fit {d}/v.jsonl", "at line 2 ([\"y\", \"x\", \"A\"] is not an object)",
      {"v.jsonl": '{"model_a": "x", "model_b": "y", "winner": "A"}\n["y", "x", "A"]\n'}),
    K("json-array-of-arrays", "fit {d}/v.json", "record 1 is \"x\", not an object",
      {"v.json": '["x", "y", "A"]\n'}),
    K("jsonl-object-field", "fit {d}/v.jsonl", ["column 'model_a' holds 1 value(s) that are not "
      "single values", "dict {'name': 'y'} at rows [1]"],
      {"v.jsonl": '{"model_a": "x", "model_b": "y", "winner": "A"}\n'
                  '{"model_a": {"name": "y"}, "model_b": "x", "winner": "A"}\n'}),
    K("jsonl-array-field", "fit {d}/v.jsonl", "column 'winner' holds 1 value(s) that are not "
      "single values", {"v.jsonl": '{"model_a": "x", "model_b": "y", "winner": ["A"]}\n'
                                   '{"model_a": "y", "model_b": "x", "winner": "A"}\n'}),
    K("json-array-with-scalar", "fit {d}/v.json", "record 2 is 3, not an object",
      {"v.json": '[{"model_a": "x", "model_b": "y", "winner": "A"}, 3]'}),
    K("json-no-records", "fit {d}/v.json", "it has no records", {"v.json": "[]"}),
    K("parquet-corrupt", "fit {d}/v.parquet", "could not be read as Parquet",
      {"v.parquet": b"PAR1 this is not a parquet file"}),
    K("parquet-list-column", "fit {d}/v.parquet", ["column 'task_id' holds 4 value(s) that are "
      "not single values", "ndarray"],
      {"v.parquet": _parquet({"model_a": ["x", "y", "z", "x"], "model_b": ["y", "z", "x", "y"],
                              "winner": ["A", "A", "A", "B"], "task_id": [[1], [2], [3], [4]]})}),
    K("parquet-struct-column", "fit {d}/v.parquet", "column 'model_b' holds 4 value(s)",
      {"v.parquet": _parquet({"model_a": ["x", "y", "z", "x"], "winner": ["A", "A", "A", "B"],
                              "model_b": [{"n": "y"}, {"n": "z"}, {"n": "x"}, {"n": "y"}]})}),
    K("parquet-missing-column", "fit {d}/v.parquet", "['winner'] not found",
      {"v.parquet": _parquet({"model_a": ["x"], "model_b": ["y"]})}),
    # --- ambiguity: names and scopes ------------------------------------------------------------
    K("models-nfc-nfd", "fit {d}/v.csv", ["Model names that differ only in Unicode "
      "normalisation", "'cafe\\u0301'", "'caf\\xe9'"],
      {"v.csv": _verdicts(f"{NFC},y,A", f"y,{NFD},A", f"{NFD},{NFC},A", "x,y,B")}),
    K("models-full-width", "fit {d}/v.csv", ["'x' (lines [2, 4, 5])", "'\\uff58' (lines [6])"],
      {"v.csv": _verdicts(*THREE, "\uff58,y,B")}),
    K("models-ligature", "fit {d}/v.csv", "differ only in Unicode normalisation",
      {"v.csv": _verdicts("fine,y,A", "y,\ufb01ne,A", "x,y,B")}),
    K("judges-look-alike", "fit {d}/v.csv --model crowd-bt", "Judge names that differ only",
      {"v.csv": _verdicts("x,y,A,j1", "y,x,A,\uff4a1", header="model_a,model_b,winner,judge")}),
    K("scopes-look-alike", "fit {d}/v.csv --scope s", "Scope names that differ only",
      {"v.csv": _verdicts("x,y,A,s\u00e9", "y,x,A,se\u0301", header="model_a,model_b,winner,"
                                                                        "scope")}),
    K("scope-reserved-combined", "fit {d}/v.csv", "a scope named 'combined'",
      {"v.csv": _verdicts(*(r + ",combined" for r in THREE), header="model_a,model_b,winner,"
                                                                        "scope")}),
    K("scope-reserved-by-scope", "fit {d}/v.csv --by scope --model bt", "a scope named "
      "'combined'", {"v.csv": _verdicts(*(r + ",combined" for r in THREE),
                                        *(r + ",other" for r in THREE),
                                        header="model_a,model_b,winner,scope")}),
    K("scope-reserved-combine", "combine {d}/v.csv --model bt", "a scope named 'combined'",
      {"v.csv": _verdicts(*(r + f",combined,t{k}" for k, r in enumerate(THREE)),
                          header="model_a,model_b,winner,scope,task_id")}),
    K("scope-rubric-twice", "combine {d}/v.csv --rubric {d}/rubric.csv --model bt",
      ["already have a scope 'rubric'", "`--rubric`"],
      {"v.csv": _verdicts(*(r + f",rubric,t{k}" for k, r in enumerate(THREE)),
                          header="model_a,model_b,winner,scope,task_id")}),
    # --- fitting --------------------------------------------------------------------------------
    K("fit-never-lost", "fit {d}/v.csv", ["never lost or tied: ['x']", "`--penalty`"],
      {"v.csv": _verdicts("x,y,A", "y,z,A", "z,y,A", "x,z,A")}),
    K("fit-never-won", "fit {d}/v.csv", "never won or tied: ['z']",
      {"v.csv": _verdicts("x,y,A", "y,x,A", "x,z,A", "y,z,A")}),
    K("fit-disconnected", "fit {d}/v.csv", "splits into 2 groups",
      {"v.csv": _verdicts("x,y,A", "y,x,A", "p,q,A", "q,p,A")}),
    K("fit-all-ties-bootstrap", "fit {d}/v.csv --ci bootstrap --n-boot 20",
      ["bootstrap interval", "draws do not vary"], {"v.csv": TIES_ONLY}),
    K("fit-one-cluster", "fit {d}/v.csv", ["at least 2 clusters", "`--no-cluster`"],
      {"v.csv": _verdicts(*(r + ",t1" for r in THREE), header="model_a,model_b,winner,task_id")}),
    K("fit-anchor-unknown", "fit {d}/good.csv --anchor w=1000", "Anchor model 'w' is not in"),
    K("fit-anchor-syntax", "fit {d}/good.csv --anchor x=abc", "`--anchor` must look like"),
    K("fit-anchor-inf", "fit {d}/good.csv --anchor x=inf", "`--anchor` must look like"),
    K("fit-anchor-1e300", "fit {d}/good.csv --anchor x=1e300", ["`--anchor` must be a finite "
      "number", "got 1e+300"]),
    K("fit-penalty-negative", "fit {d}/good.csv --penalty -1", "`--penalty` must be a finite "
      "number >= 0 and <= 1e6; got -1.0"),
    K("fit-penalty-1e308", "fit {d}/good.csv --penalty 1e308", "got 1e+308"),
    K("fit-penalty-nan", "fit {d}/good.csv --penalty nan", "`--penalty` must be a finite number"),
    K("fit-penalty-crowd", "fit {d}/scoped.csv --scope s1 --model crowd-bt --penalty 1",
      "`--penalty` is only available with `--model bt`"),
    K("fit-level-above-1", "fit {d}/good.csv --level 1.5", "`--level` must be a float strictly "
      "between 0 and 1; got 1.5"),
    K("fit-level-nan", "fit {d}/good.csv --level nan", "`--level` must be"),
    K("fit-level-zero", "fit {d}/good.csv --level 0", "`--level` must be"),
    K("fit-n-boot-1", "fit {d}/good.csv --ci bootstrap --n-boot 1", "`--n-boot` must be an "
      "integer >= 2"),
    K("fit-n-boot-not-int", "fit {d}/good.csv --n-boot 1e300", "invalid int value: '1e300'"),
    K("fit-seed-negative", "fit {d}/good.csv --seed -1", "`--seed` must be an integer >= 0"),
    K("fit-unknown-ci", "fit {d}/good.csv --ci wald", "invalid choice: 'wald'"),
    K("fit-unknown-model", "fit {d}/good.csv --model elo", "invalid choice: 'elo'"),
    K("fit-cluster-and-no-cluster", "fit {d}/good.csv --cluster task_id --no-cluster",
      "not allowed with argument"),
    K("fit-cluster-absent", "fit {d}/good.csv --cluster question", "['question'] not found"),
    K("fit-scope-needed", "fit {d}/scoped.csv", ["2 scopes ['s1', 's2']", "`--scope`"]),
    K("fit-scope-unknown", "fit {d}/scoped.csv --scope s3", "Scope 's3' not in the verdicts"),
    K("fit-scope-without-column", "fit {d}/good.csv --scope s1", "`--scope s1` was given but "
      "the verdicts have no `scope` column"),
    K("fit-max-memory-small", "fit {d}/good.csv --max-memory 100", ["Stopped before allocating",
      "set by `--max-memory`"]),
    K("fit-max-memory-syntax", "fit {d}/good.csv --max-memory lots", "`--max-memory` must be a "
      "size"),
    K("fit-max-memory-zero", "fit {d}/good.csv --max-memory 0", "`--max-memory` must be a "
      "finite size > 0"),
    K("fit-by-scope-counts", "fit {d}/c.csv --by scope", "`--by scope` reads verdict logs",
      {"c.csv": COUNTS_OK}),
    # --- counts tables --------------------------------------------------------------------------
    K("counts-negative", "fit {d}/c.csv", ["counts that are negative", "wins_a = '-2'"],
      {"c.csv": COUNTS.replace(",-2,", ",-2,")}),
    K("counts-fractional", "fit {d}/c.csv", ["not whole numbers", "wins_b = '1.5'"],
      {"c.csv": COUNTS_OK.replace("y,z,2,1,0", "y,z,2,1.5,0")}),
    K("counts-1e300", "fit {d}/c.csv", ["exceed 2**53", "wins_a = '1e300'"],
      {"c.csv": COUNTS_OK.replace("x,y,3,1,0", "x,y,1e300,1,0")}),
    K("counts-1e308", "fit {d}/c.csv", "exceed 2**53",
      {"c.csv": COUNTS_OK.replace("x,y,3,1,0", "x,y,3,1e308,0")}),
    K("counts-inf", "fit {d}/c.csv", "counts that are not finite",
      {"c.csv": COUNTS_OK.replace("z,x,1,1,1", "z,x,1,inf,1")}),
    K("counts-text", "fit {d}/c.csv", ["missing or not numbers", "ties = 'some'"],
      {"c.csv": COUNTS_OK.replace("z,x,1,1,1", "z,x,1,1,some")}),
    K("counts-missing-column", "fit {d}/c.csv", "['ties'] not found in the counts table",
      {"c.csv": "model_a,model_b,wins_a,wins_b\nx,y,1,2\n"}),
    K("counts-nested-json", "fit {d}/c.jsonl", "column 'wins_a' holds 1 value(s)",
      {"c.jsonl": '{"model_a": "x", "model_b": "y", "wins_a": [1], "wins_b": 1, "ties": 0}\n'}),
    # --- rubric files ---------------------------------------------------------------------------
    K("rubric-passed-not-boolean", "rubric {d}/r.csv --out {d}/m.csv", "['maybe'] at rows [0]",
      {"r.csv": "task_id,model,check_id,passed\nt1,x,c1,maybe\nt1,y,c1,yes\n"}),
    K("rubric-missing-grade", "rubric {d}/r.csv --out {d}/m.csv", "a missing grade is not a fail",
      {"r.csv": "task_id,model,check_id,passed\nt1,x,c1,yes\nt1,y,c1,\n"}),
    K("rubric-duplicate-check", "rubric {d}/r.csv --out {d}/m.csv", ["graded more than once",
      "`--duplicates last`"], {"r.csv": "task_id,model,check_id,passed\nt1,x,c1,yes\n"
                                        "t1,y,c1,yes\nt1,x,c1,no\n"}),
    K("rubric-missing-column", "rubric {d}/r.csv --out {d}/m.csv", ["['check_id'] not found in "
      "the rubric", "`--columns check=check_id`"],
      {"r.csv": "task_id,model,check,passed\nt1,x,c1,yes\n"}),
    K("rubric-empty", "rubric {d}/r.csv --out {d}/m.csv", "the file is empty", {"r.csv": ""}),
    K("rubric-not-found", "rubric {d}/nope.csv --out {d}/m.csv", "Rubric file"),
    K("rubric-bad-duplicates-choice", "rubric {d}/rubric.csv --duplicates first --out {d}/m.csv",
      "invalid choice: 'first'"),
    K("rubric-out-is-input", "rubric {d}/rubric.csv --out {d}/rubric.csv",
      "refusing to overwrite the input file"),
    # --- judge-quality files --------------------------------------------------------------------
    K("judges-corrupt-json", "fit {d}/scoped.csv --scope s1 --model crowd-bt --judge-quality "
      "{d}/j.json", "Cannot read judge-quality file", {"j.json": '{"format": "ratings.'}),
    K("judges-not-a-judge-file", "fit {d}/scoped.csv --scope s1 --model crowd-bt "
      "--judge-quality {d}/j.json", "is not a judge-quality file", {"j.json": '{"judges": {}}'}),
    K("judges-wrong-scope", "fit {d}/scoped.csv --scope s2 --model crowd-bt --judge-quality "
      "{d}/jq.json", "fitted on scope 's1', not 's2'"),
    K("judges-eta-out-of-range", "fit {d}/scoped.csv --scope s1 --model crowd-bt "
      "--judge-quality {d}/j.json", "{'j1': 1.3}",
      {"j.json": _judges([{"judge": "j1", "eta": 1.3}, {"judge": "j2", "eta": 0.8}])}),
    K("judges-unknown-judge", "fit {d}/scoped.csv --scope s1 --model crowd-bt --judge-quality "
      "{d}/j.json", ["['j2'] have no eta", "`--fit-new-judges`"],
      {"j.json": _judges([{"judge": "j1", "eta": 0.9}])}),
    K("judges-deterministic-eta", "fit {d}/scoped.csv --scope s1 --model crowd-bt "
      "--judge-quality {d}/j.json --fit-new-judges", "its eta is always 1",
      {"j.json": _judges([{"judge": "j1", "eta": 0.9}, {"judge": "deterministic", "eta": 0.7}])}),
    K("judges-missing-entry-fields", "fit {d}/scoped.csv --scope s1 --model crowd-bt "
      "--judge-quality {d}/j.json", "needs 'judge' and 'eta'",
      {"j.json": _judges([{"name": "j1", "quality": 0.9}])}),
    K("judges-file-not-found", "fit {d}/scoped.csv --scope s1 --model crowd-bt "
      "--judge-quality {d}/nope.json", "Cannot read judge-quality file"),
    K("judges-out-not-json", "judges {d}/scoped.csv --scope s1 --out {d}/j.csv",
      "`--out` must end in .json"),
    K("judges-out-needs-crowd", "fit {d}/good.csv --judges-out {d}/j.json",
      "`--judges-out` needs `--model crowd-bt`"),
    K("judges-out-extension", "fit {d}/scoped.csv --scope s1 --model crowd-bt --judges-out "
      "{d}/j.txt", ["`--judges-out", "the format is chosen by the suffix"]),
    # --- combine --------------------------------------------------------------------------------
    K("combine-weights-1e308", "combine {d}/scoped.csv --model bt --weights s1=1e308,s2=1",
      ["`--weights` must be a finite number", "got 1e+308"]),
    K("combine-weights-negative", "combine {d}/scoped.csv --weights s1=-1,s2=1",
      "`--weights` must be a finite number >= 0"),
    K("combine-weights-text", "combine {d}/scoped.csv --weights s1=heavy,s2=1",
      "got 'heavy'"),
    K("combine-weights-unknown-scope", "combine {d}/scoped.csv --model bt --no-cluster "
      "--weights s1=1,s3=1", "`--weights` must name exactly the scopes"),
    K("combine-missing-models", "combine {d}/v.csv --model bt --no-cluster --method "
      "independent", ["missing from some scopes", "`--drop-missing`"],
      {"v.csv": _verdicts(*(r + ",a" for r in THREE), "x,y,A,b", "y,x,A,b",
                          header="model_a,model_b,winner,scope")}),
    K("combine-joint-with-model-ci", "combine {d}/v.csv --model bt --ci model",
      ["`--method joint` stacks sandwich influences", "`--method independent`"],
      {"v.csv": _verdicts(*(r + f",a,t{k}" for k, r in enumerate(THREE)),
                          *(r + f",b,t{k}" for k, r in enumerate(THREE)),
                          header="model_a,model_b,winner,scope,task_id")}),
    K("audit-unknown-effect", "audit {d}/good.csv --effects position,style",
      ["`--effects` must name judge effects", "['style']"]),
    K("combine-no-scope-column", "combine {d}/good.csv", "need a `scope` column"),
    # --- registries and freeze ------------------------------------------------------------------
    K("registry-missing-columns", "freeze {d}/ratings.csv --registry {d}/reg.csv",
      ["reg.csv' is corrupt", "left unchanged"], {"reg.csv": "model,elo\nx,1500\n"}),
    K("registry-unparseable", "freeze {d}/ratings.csv --registry {d}/reg.csv",
      "cannot be read as CSV", {"reg.csv": REGISTRY_HEADER + '"x,1500,,,0.5,2026-01-01,\n'}),
    K("registry-duplicate-model", "freeze {d}/ratings.csv --registry {d}/reg.csv",
      "duplicate model", {"reg.csv": REGISTRY_HEADER + "x,1500,,,0.5,2026-01-01,\n"
                                                       "x,1600,,,0.55,2026-01-02,\n"}),
    K("registry-index-inconsistent", "freeze {d}/ratings.csv --registry {d}/reg.csv",
      "index inconsistent with elo", {"reg.csv": REGISTRY_HEADER + "x,1500,,,0.7,2026-01-01,\n"}),
    K("registry-bad-date", "freeze {d}/ratings.csv --registry {d}/reg.csv",
      "frozen_on is not a YYYY-MM-DD date",
      {"reg.csv": REGISTRY_HEADER + "x,1500,,,0.5,01/02/2026,\n"}),
    K("registry-infinite-elo", "freeze {d}/ratings.csv --registry {d}/reg.csv",
      "elo is not finite", {"reg.csv": REGISTRY_HEADER + "x,inf,,,1,2026-01-01,\n"}),
    K("registry-lower-above-upper", "freeze {d}/ratings.csv --registry {d}/reg.csv",
      ["lower above elo (lower <= elo <= upper)", "lines [2] (the header", "left unchanged"],
      {"reg.csv": REGISTRY_HEADER + "x,1500,1550,1450,0.5,2026-01-01,\n"}),
    K("registry-index-outside-0-1", "freeze {d}/ratings.csv --registry {d}/reg.csv",
      ["index outside [0, 1]", "['-0.2']"],
      {"reg.csv": REGISTRY_HEADER + "x,1500,,,0.5,2026-01-01,\ny,100,,,-0.2,2026-01-01,\n"}),
    K("registry-anchor-off-its-rating", "freeze {d}/ratings.csv --registry {d}/reg.csv",
      ["the board's anchor off its anchor_rating", "('x', '1510', '1500')"],
      {"reg.csv": "model,elo,lower,upper,index,frozen_on,source,anchor,anchor_rating\n"
                  "x,1510,1460,1560,0.505,2026-01-01,,x,1500\n"}),
    K("registry-empty-file", "freeze {d}/ratings.csv --registry {d}/reg.csv",
      "the file is empty (0 bytes", {"reg.csv": ""}),
    K("registry-is-directory", "freeze {d}/ratings.csv --registry {d}/reg",
      "`--registry`: ", {"reg": _directory}),
    K("registry-is-ratings-table", "freeze {d}/ratings.csv --registry {d}/ratings.csv",
      "refusing to overwrite the input file"),
    K("freeze-table-not-found", "freeze {d}/nope.csv --registry {d}/reg.csv",
      "Ratings table '"),
    K("freeze-table-duplicate-model", "freeze {d}/t.csv --registry {d}/reg.csv",
      "duplicate model", {"t.csv": "model,elo\nx,1500\ny,1000\nx,1600\n"}),
    K("freeze-table-infinite-elo", "freeze {d}/t.csv --registry {d}/reg.csv",
      "elo is not a finite number", {"t.csv": "model,elo\nx,1e999\ny,1000\n"}),
    K("freeze-table-mixed-scopes", "freeze {d}/t.csv --registry {d}/reg.csv",
      "no 'combined' rows", {"t.csv": "scope,model,elo\na,x,1000\nb,x,1100\n"}),
    K("freeze-bad-date", "freeze {d}/ratings.csv --registry {d}/reg.csv --date 2026-13-01",
      "`--date` must be an ISO date"),
    K("freeze-refreeze-unknown", "freeze {d}/ratings.csv --registry {d}/reg.csv --refreeze w",
      "`--refreeze` names ['w']"),
    K("freeze-table-not-csv", "freeze {d}/t.json --registry {d}/reg.csv",
      "must be a CSV file", {"t.json": "{}"}),
    # --- submissions and `ratings next` ---------------------------------------------------------
    K("next-submissions-missing-column", "next {d}/log0.csv --submissions {d}/s.csv --judges j1 "
      "--n 2 --seed 1 --out {d}/plan.csv", "['task_id'] not found in submissions",
      {"s.csv": "model,task\nx,t1\ny,t1\n"}),
    K("next-submissions-empty", "next {d}/log0.csv --submissions {d}/s.csv --judges j1 --n 2 "
      "--seed 1 --out {d}/plan.csv", "is empty", {"s.csv": ""}),
    K("next-submissions-missing-model", "next {d}/log0.csv --submissions {d}/s.csv --judges j1 "
      "--n 2 --seed 1 --out {d}/plan.csv", "has 1 missing value(s) at rows [1]",
      {"s.csv": "model,task_id\nx,t1\n,t1\ny,t1\n"}),
    K("next-submissions-extension", "next {d}/log0.csv --submissions {d}/s.xlsx --judges j1 "
      "--n 2 --seed 1 --out {d}/plan.csv", "must be a .csv or .tsv file",
      {"s.xlsx": "model,task_id\n"}),
    K("next-too-many-matches", "next {d}/log0.csv --submissions {d}/subs.csv --judges j1 "
      "--n 50 --seed 1 --out {d}/plan.csv", "Cannot plan 50 matches"),
    K("next-negative-n", "next {d}/log0.csv --submissions {d}/subs.csv --judges j1 --n 0 "
      "--seed 1 --out {d}/plan.csv", "`--n` must be an integer >= 1"),
    K("next-max-memory", "next {d}/log0.csv --submissions {d}/subs.csv --judges j1 --n 2 "
      "--seed 1 --out {d}/plan.csv --max-memory 100", ["planning 3 models on 1 tasks",
      "`--max-memory`"]),
    K("next-out-is-input", "next {d}/log0.csv --submissions {d}/subs.csv --judges j1 --n 2 "
      "--seed 1 --out {d}/subs.csv", ["refusing to overwrite the input file",
      "(--submissions) with `--out`"]),
    K("next-out-and-forfeits-same", "next {d}/log0.csv --submissions {d}/subs.csv --judges j1 "
      "--n 2 --seed 1 --out {d}/plan.csv --forfeits {d}/plan.csv",
      "`--out` and `--forfeits` name the same file"),
    K("next-routing-unknown-judge", "next {d}/log0.csv --submissions {d}/subs.csv --judges j1 "
      "--n 2 --seed 1 --out {d}/plan.csv --task-judges {d}/route.csv",
      ["`--task-judges` names judge(s) ['j9']", "`--judges`"],
      {"route.csv": "task_id,judge\nt1,j9\n"}),
    K("next-anchored-without-anchor", "next {d}/log0.csv --submissions {d}/subs.csv --judges j1 "
      "--n 2 --seed 1 --out {d}/plan.csv --objective anchored",
      ["`--objective anchored` reduces the variances", "needs `--anchor`"]),
    K("next-empty-judge", "next {d}/log0.csv --submissions {d}/subs.csv --judges j1,,j2 --n 2 "
      "--seed 1 --out {d}/plan.csv", "comma-separated judge names"),
    # --- outputs --------------------------------------------------------------------------------
    K("out-is-input", "fit {d}/good.csv --out {d}/good.csv", "refusing to overwrite the input "
      "file"),
    K("out-link-to-input", "fit {d}/good.csv --out {d}/o.csv", ["refusing to overwrite the "
      "input file", "(VERDICTS) with `--out`"], {"o.csv": _link("good.csv")}),
    K("out-and-rejected-same", "fit {d}/v.csv --out {d}/o.csv --rejected {d}/o.csv",
      "`--out` and `--rejected` name the same file", {"v.csv": _verdicts(*THREE, "x,y,draw")}),
    K("out-and-rejected-through-link", "fit {d}/v.csv --out {d}/o.csv --rejected {d}/l.csv",
      "`--out` and `--rejected` name the same file",
      {"v.csv": _verdicts(*THREE, "x,y,draw"), "o.csv": "old\n", "l.csv": _link("o.csv")}),
    K("out-and-judges-out-same", "fit {d}/scoped.csv --scope s1 --model crowd-bt --out "
      "{d}/o.json --judges-out {d}/o.json", "`--out` and `--judges-out` name the same file"),
    K("out-is-directory", "fit {d}/good.csv --out {d}/sub", ["`--out`: ", "is a directory"],
      {"sub": _directory}),
    K("out-trailing-slash", "fit {d}/good.csv --out {d}/sub/", "is a directory",
      {"sub": _directory}),
    K("out-missing-directory", "fit {d}/good.csv --out {d}/nowhere/r.csv", "does not exist"),
    K("out-parent-is-a-file", "fit {d}/good.csv --out {d}/good.csv/r.csv", "is not a directory"),
    K("out-fifo", "fit {d}/good.csv --out {d}/o.csv", "is a FIFO", {"o.csv": _fifo}),
    K("out-extension", "fit {d}/good.csv --out {d}/r.txt", ["`--out", "r.txt`",
      "the format is chosen by the suffix"]),
    K("rejected-is-input", "fit {d}/good.csv --rejected {d}/good.csv",
      "refusing to overwrite the input file"),
    K("combine-out-is-rubric", "combine {d}/scoped.csv --rubric {d}/rubric.csv --out "
      "{d}/rubric.csv", "(--rubric) with `--out`"),
    K("out-is-judge-quality", "fit {d}/scoped.csv --scope s1 --model crowd-bt --judge-quality "
      "{d}/jq.json --judges-out {d}/jq.json", "(--judge-quality) with `--judges-out`"),
    # --- plots ----------------------------------------------------------------------------------
    K("plot-gif", "plot {d}/ratings.csv -o {d}/bands.gif", "extension must be one of"),
    K("plot-out-is-input", "plot {d}/ratings.csv -o {d}/ratings.csv", "refusing to overwrite"),
    K("plot-table-missing-columns", "plot {d}/t.csv -o {d}/p.png", "['elo', 'lower', 'upper'] "
      "not found", {"t.csv": "model,x\na,1\n"}),
    K("plot-table-not-found", "plot {d}/nope.csv -o {d}/p.png", "Ratings table '"),
    K("plot-top-zero", "plot {d}/ratings.csv -o {d}/p.png --top 0", "`--top` must be a "
      "positive integer"),
    K("plot-highlight-unknown", "plot {d}/ratings.csv -o {d}/p.png --highlight w",
      "`--highlight` names model(s) not in the ratings: ['w']"),
    K("plot-json-not-ratings", "plot {d}/t.json -o {d}/p.png", "not a ratings JSON",
      {"t.json": "[1, 2]"}),
    # --- a newcomer's first mistakes (issue 29: hints, input options, messages) --------------
    K("columns-hint-maps-every-column", "fit {d}/v.csv",
      "`--columns model_1=model_a,model_2=model_b,result=winner,question_id=task_id`",
      {"v.csv": _verdicts("x,y,A,q1", "y,x,B,q2", header="model_1,model_2,result,question_id")}),
    K("columns-hint-sides-a-b", "fit {d}/v.csv",
      "`--columns player_a=model_a,player_b=model_b,outcome=winner`",
      {"v.csv": _verdicts("x,y,A", header="player_a,player_b,outcome")}),
    K("columns-duplicate-key", "fit {d}/good.csv --columns a=model_a,a=model_b",
      ["`--columns a=model_a,a=model_b`", "['a'] more than once"]),
    K("winner-map-duplicate-key", "fit {d}/good.csv --winner-map draw=tie,draw=A",
      ["`--winner-map", "['draw'] more than once"]),
    K("next-columns-duplicate-key", "next {d}/good.csv --columns q=task_id,q=judge --judges j "
      "--n 2 --seed 1 -o {d}/plan.csv", "['q'] more than once"),
    K("judges-model-bt", "judges {d}/scoped.csv --scope s1 --model bt -o {d}/j.json",
      ["`ratings judges` fits Crowd-BT", "`--model bt`"]),
    K("judges-no-firth", "judges {d}/scoped.csv --scope s1 --firth -o {d}/j.json",
      "unrecognized arguments: --firth"),
    K("combine-no-scope", "combine {d}/scoped.csv --scope s1", "unrecognized arguments: --scope"),
    K("combine-no-penalty", "combine {d}/scoped.csv --penalty 1",
      "unrecognized arguments: --penalty"),
    K("level-rounds-to-one", "fit {d}/good.csv --level 0.9999999999999999",
      ["`--level` must be between", "got 0.9999999999999999"]),
    K("counts-huge-value", "fit {d}/c.csv", ["exceed 2**53", "'1e300'", "line 2"],
      {"c.csv": "model_a,model_b,wins_a,wins_b,ties\nx,y,1e300,1,0\ny,z,1,1,0\nz,x,1,2,0\n"}),
    K("counts-row-without-task", "fit {d}/c.csv", ["missing task_id: lines [3]",
      "header being line 1"],
      {"c.csv": "model_a,model_b,wins_a,wins_b,ties,task_id\nx,y,1,1,0,t1\ny,z,1,1,0,\n"
                "z,x,1,2,0,t2\n"}),
    K("verdicts-line-numbers", "fit {d}/v.csv", ["unknown winner value (e.g. ['draw'] at lines "
      "[5])", "header being line 1"], {"v.csv": _verdicts("x,y,A", "", "y,z,A", "z,x,draw")}),
    K("verdicts-xls", "fit {d}/v.xls", ["is a spreadsheet (.xls)", "export the sheet as CSV"],
      {"v.xls": b"\xd0\xcf\x11\xe0"}),
    K("verdicts-ods", "fit {d}/v.ods", ["is a spreadsheet (.ods)", "export the sheet as CSV"],
      {"v.ods": b"PK\x03\x04"}),
    K("verdicts-latin1-names-encoding", "fit {d}/v.csv", ["not valid UTF-8", "line 3",
      "`--encoding NAME`"], {"v.csv": b"model_a,model_b,winner\nx,y,A\n\xe9,y,A\n"}),
    K("encoding-unknown", "fit {d}/good.csv --encoding klingon",
      "`--encoding klingon` is not an encoding"),
    K("delimiter-two-characters", "fit {d}/good.csv --delimiter ';;'",
      "`--delimiter` must be one character"),
    K("delimiter-on-parquet", "fit {d}/v.parquet --delimiter ';'", "read text tables",
      {"v.parquet": _parquet({"model_a": ["x"], "model_b": ["y"], "winner": ["A"]})}),
    K("precision-zero", "fit {d}/good.csv -o {d}/r.csv --precision 0", "`--precision 0`"),
    K("combine-out-suffix", "combine {d}/scoped.csv -o {d}/board.txt",
      ["`--out", "chosen by the suffix"]),
    K("rubric-out-suffix", "rubric {d}/rubric.csv -o {d}/m.txt", ["`--out",
      "chosen by the suffix"]),
    K("pairs-out-suffix", "fit {d}/good.csv --pairs {d}/p.xlsx", ["`--pairs",
      "chosen by the suffix"]),
]


def _make(directory: Path, files: dict) -> None:
    for name, content in {**BASE_FILES, **files}.items():
        path = directory / name
        if callable(content):
            content(path)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def test_the_catalogue_has_at_least_120_kinds():
    ids = [k.id for k in KINDS]
    assert len(set(ids)) == len(ids)
    assert len(ids) >= 120


@pytest.mark.parametrize("kind", KINDS, ids=[k.id for k in KINDS])
def test_cli_kind(kind: Kind, tmp_path: Path, capsys) -> None:
    _make(tmp_path, kind.files)
    before = tree(tmp_path)
    argv = [a.format(d=tmp_path) for a in kind.argv]
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse usage errors
        code = exc.code
    captured = capsys.readouterr()
    err = captured.err
    assert code == 2, f"exit status {code}\n{err}{captured.out}"
    for word in kind.keywords:
        assert word in err, f"{word!r} not in:\n{err}"
    assert "Traceback" not in err
    assert tree(tmp_path) == before, "the command wrote, changed or left a file"
