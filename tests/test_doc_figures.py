"""The figures that README.md and docs/*.md quote agree with the result files of the studies
they cite (``benchmarks_perf/results/``).

Each claim is a document, a regular expression whose groups are the quoted figures, and the
same figures computed here from the result files. A quoted figure agrees when it is the value
rounded to the digits it shows. A claim whose wording is no longer found fails too: change the
claim with the text. Only files are read (no fits), so the test is fast.
"""

from __future__ import annotations

import argparse
import functools
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks_perf" / "results"
ORACLE = "coverage_crowd_oracle12k.csv"  # the 2,500-board rerun of two 12,000-verdict cells


@functools.cache
def doc(name: str) -> str:
    """A document's text with every run of white space (line breaks included) as one space."""
    return re.sub(r"\s+", " ", (ROOT / name).read_text(encoding="utf-8"))


@functools.cache
def result(name: str) -> pd.DataFrame:
    return pd.read_csv(RESULTS / name)


# ----------------------------------------------------------------------------------------------
# Figures computed from the result files
# ----------------------------------------------------------------------------------------------


def coverage(variant: str, cells: Callable[[pd.DataFrame], pd.Series] | None = None,
             targets: Sequence[str] | None = None, file: str = "validate_coverage.csv"
             ) -> pd.DataFrame:  # fmt: skip
    """Rows of a coverage study's CSV for one interval variant, some cells and targets."""
    v = result(file)
    rows = v[v["variant"] == variant]
    if cells is not None:
        rows = rows[cells(rows)]
    if targets is not None:
        rows = rows[rows["target"].isin(targets)]
    assert len(rows), (variant, targets)
    return rows


def bt(rows: pd.DataFrame) -> pd.Series:
    return rows["model"] == "bt"


def dependent_bt(rows: pd.DataFrame) -> pd.Series:
    return bt(rows) & ((rows["rho"] > 0) | (rows["task_sd"] > 0))


def span(values: pd.Series | Sequence[float]) -> list[float]:
    values = pd.Series(values, dtype=float)
    return [values.min(), values.max()]


def one(rows: pd.DataFrame, column: str = "coverage") -> float:
    assert len(rows) == 1, rows
    return float(rows[column].iloc[0])


def crowd(cells: Sequence[str] | None = None, subset: str = "all", interval: str = "default",
          file: str = "coverage_crowd.csv") -> pd.DataFrame:  # fmt: skip
    c = result(file)
    rows = c[(c["subset"] == subset) & (c["interval"] == interval)]
    if cells is not None:
        rows = rows[rows["cell"].isin(cells)]
    assert len(rows), (cells, subset, interval)
    return rows


def anchor_pairs(rows: pd.DataFrame) -> list[float]:
    """The anchor and pairs coverage of one row."""
    return [one(rows, "anchor"), one(rows, "pairs")]


def both(rows: pd.DataFrame) -> list[float]:
    """Anchor and pairs coverage of the rows, as one range."""
    return span(pd.concat([rows["anchor"], rows["pairs"]]))


#: The Crowd-BT study's cells with three judges (estimated, or reused from judge files).
THREE_ESTIMATED = ["c2k", "c12k", "c2k-ties0", "c2k-ties30", "c12k-ties0", "c12k-ties30"]
THREE_FILES = ["c2k-file1x", "c2k-file5x", "c12k-file1x", "c12k-file5x"]
THREE = THREE_ESTIMATED + THREE_FILES
THREE_2K = [c for c in THREE if c.startswith("c2k")]
THREE_12K = [c for c in THREE if c.startswith("c12k")]
ONE_JUDGE = ["c2k-one", "c12k-one"]


def boundary_share(cells: Sequence[str]) -> list[float]:
    """Range of the boundary boards' share, in percent, over the cells that have any."""
    rows = crowd(cells, subset="boundary")
    return span(100 * rows["boundary_share"])


def rank_row(cell: str, variant: str = "simultaneous", file: str = "validate_coverage.csv"
             ) -> pd.DataFrame:  # fmt: skip
    v = result(file)
    return v[(v["cell"] == cell) & (v["variant"] == variant)]


def audit(cell: str, quantity: str) -> float:
    a = result("audit_study.csv")
    rows = a[(a["cell"] == cell) & (a["quantity"] == quantity)
             & a["parameter"].isin(["all judges", "pooled"])]  # fmt: skip
    return one(rows, "value")


def cr2_sparse(cell: str, target: str = "sparse", variant: str = "cr2_t",
               file: str = "validate_coverage.csv") -> float:  # fmt: skip
    return one(coverage(variant, lambda r: r["cell"] == cell, [target], file))


# ----------------------------------------------------------------------------------------------
# Figures of the claims, one function each
# ----------------------------------------------------------------------------------------------


def cr2_bt() -> pd.DataFrame:
    return coverage("cr2_t", bt)


def bt_default() -> list[float]:
    return [*span(cr2_bt()["coverage"]), *span(cr2_bt()["mcse"])]


def bt_default_band() -> list[float]:
    return [*span(cr2_bt()["coverage"]), cr2_bt()["coverage"].between(0.94, 0.96).sum()]


def sparse_default() -> list[float]:
    rows = coverage("cr2_t", bt, ["sparse", "sparse_pairs"])
    return [*span(rows["coverage"]), rows["mcse"].mean()]


def g20_default() -> list[float]:
    return span(coverage("cr2_t", lambda r: bt(r) & (r["n_tasks"] == 20))["coverage"])


def sparse_cr1_cr2() -> list[float]:
    return [cr2_sparse("bt-sparse-6", variant="cr1_t"), cr2_sparse("bt-sparse-3", variant="cr1_t"),
            cr2_sparse("bt-sparse-6"), cr2_sparse("bt-sparse-3")]  # fmt: skip


def sparse_cr1() -> list[float]:
    return [cr2_sparse(f"bt-sparse-{k}", variant="cr1_t") for k in (3, 6, 12)]


def naive_dependent() -> list[float]:
    rows = pd.concat([coverage("model", dependent_bt), coverage("hc0", dependent_bt)])
    return span(rows["coverage"])


def large_path() -> list[float]:
    file = "validate_coverage_large_path.csv"
    return [*span(coverage("cr2_t", file=file)["coverage"]),
            *[cr2_sparse(f"bt-sparse-{k}", file=file) for k in (3, 6, 12)],
            *[cr2_sparse(f"bt-sparse-{k}", "sparse_pairs", file=file) for k in (3, 6, 12)]]


def joint_elsewhere() -> list[float]:
    rows = result("validate_coverage.csv").query(
        "variant == 'simultaneous' and cell != 'bt-small-equal'")
    return span(rows["joint"])


def ranks_elsewhere() -> list[float]:
    return [*joint_elsewhere(), *span(coverage("simultaneous")["coverage"])]


def rank_widths() -> list[float]:
    return [one(rank_row(cell, variant), "width")
            for cell in ("bt-small-indep", "bt-large-indep", "bt-large-dep")
            for variant in ("simultaneous", "bonferroni")]  # fmt: skip


def joint_equal() -> list[float]:
    row = rank_row("bt-small-equal")
    return [one(row, "joint"), one(row, "joint_mcse"), one(row, "n_boards")]


def joint_equal_fresh() -> list[float]:
    row = result("coverage_ranks_equal.csv")
    return [one(row, "joint"), one(row, "joint_mcse"), one(row, "boards")]


def three_judges() -> list[float]:
    return both(crowd(THREE))


def boundary_2k_12k() -> list[float]:
    return [*both(crowd(THREE_2K, "boundary")), *both(crowd(THREE_12K, "boundary"))]


def boundary_estimated() -> list[float]:
    small = [c for c in THREE_ESTIMATED if c.startswith("c2k")]
    large = [c for c in THREE_ESTIMATED if c.startswith("c12k")]
    return [*both(crowd(small, "boundary")), *boundary_share(small),
            *both(crowd(large, "boundary")), *boundary_share(large)]  # fmt: skip


def boundary_readme() -> list[float]:
    fresh = min(both(crowd(None, "boundary", file=ORACLE)))
    return [*boundary_share(THREE_12K), *both(crowd(THREE_12K, "boundary")), fresh]


def lowest_fresh() -> list[float]:
    rows = crowd(["c12k-ties0"], "boundary", file=ORACLE)
    return [*anchor_pairs(rows), one(rows, "boards"),
            one(crowd(["c12k-ties0"], file=ORACLE), "boards")]  # fmt: skip


def oracle(cell: str) -> list[float]:
    rows = crowd([cell], "boundary", file=ORACLE)
    return [*anchor_pairs(rows), one(rows, "boards"),
            *anchor_pairs(crowd([cell], "boundary", "oracle", file=ORACLE))]  # fmt: skip


def rubric() -> list[float]:
    r = result("rubric_clustering.csv")
    return [*span(r["se_ratio_cluster_hc0"]), *span(r["coverage_cluster"]),
            *span(r["coverage_hc0"])]  # fmt: skip


def combined() -> list[float]:
    row = result("coverage_combined.csv").query("cell == 'shared'")
    return [one(row, "coverage_joint"), one(row, "coverage_independent")]


def audit_row(cell: str) -> list[float]:
    return [audit(cell, "coverage position_bias"), audit(cell, "coverage self_preference"),
            audit(cell, "flag rate absent effects")]  # fmt: skip


def timing(file: str, method: str, column: str = "seconds") -> float:
    """One benchmark row's figure, the row found by the start of its method's text."""
    t = result(file)
    t = t[t["section"].isin(["main", "startup", "large"])]  # not the BLAS or small-log rows
    return one(t[t["method"].str.strip().str.startswith(method)], column)


def perf_1m() -> list[float]:
    file = "bench_fit_1M.csv"
    return [timing(file, "ours: fit(df)  [task-clustered]"), timing(file, "floor:"),
            timing(file, "ours: fit(df)  [task-clustered]", "x_floor"),
            timing(file, "ours: fit(df, cluster=None)  [HC0"), timing(file, "floor:"),
            timing(file, "ours: fit(df, cluster=None)  [HC0", "x_floor")]  # fmt: skip


def perf_headline() -> list[float]:
    file = "bench_fit_headline_1M.csv"
    return [timing(file, "ours CLI: ratings fit"), timing(file, "fresh-process floor"),
            timing(file, "ours CLI: ratings fit", "x_floor"),
            timing(file, "ours: fit(df, cluster=None)"), timing(file, "ours: fit(df)  [task"),
            timing(file, "choix: the same on one BLAS thread")]  # fmt: skip


def perf_crowd() -> list[float]:
    t = result("bench_crowd_judge_table.csv").query("section == 'df-clustered'")
    crowd_bt = t[t["method"].str.contains("crowd-bt")]
    plain = t[t["method"].str.contains("'bt'")]
    return [one(crowd_bt, "seconds"), one(plain, "seconds"), one(crowd_bt, "x_bt")]


def perf_arena() -> list[float]:
    row = result("bench_arena.csv").query("verdicts == 1000000 and models == 1000")
    med = row.groupby("variant")[["table_s", "peak_above_frame_mib"]].median()  # over repeats
    return [med.loc["default", "table_s"], med.loc["default", "peak_above_frame_mib"],
            med.loc["hc0", "table_s"], med.loc["hc0", "peak_above_frame_mib"]]


def perf_style() -> list[float]:
    return [one(result("bench_style.csv"), "ratio")]


def perf_planner() -> list[float]:
    row = result("bench_sampling_speed.csv").query("models == 100 and matches == 5000")
    return [one(row, "plan_seconds"), one(row, "fit_seconds")]


# ----------------------------------------------------------------------------------------------
# The claims: (document, pattern with the quoted figures as groups, figures from the files)
# ----------------------------------------------------------------------------------------------

F = r"(\d+(?:\.\d+)?)"  # one quoted number
def placement(cell: str) -> list[float]:
    """A placement coverage cell: two-step coverage and MCSE, known-board coverage and MCSE,
    the two mean SEs and the SD of the estimates (``placement_coverage.csv``)."""
    row = result("placement_coverage.csv").set_index("cell").loc[cell]
    return [row[c] for c in ("two_step_coverage", "two_step_mcse", "known_board_coverage",
                             "known_board_mcse", "two_step_mean_se", "known_board_mean_se",
                             "sd_of_estimate")]


def placement_band() -> list[float]:
    cov = result("placement_coverage.csv")["two_step_coverage"]
    return [cov.min(), cov.max()]


TINY = "tie_coverage_tiny.csv"  # the tie study's tiny boards, run on their own


def ties(column: str, file: str = "tie_coverage.csv") -> list[float]:
    """The tie coverage study's range of a column over its cells."""
    values = result(file)[column]
    return [values.min(), values.max()]


CLAIMS: list[tuple[str, str, Callable[[], Sequence[float]]]] = [
    # tie models (docs/coverage.md, README)
    ("README.md", rf"the default intervals cover {F}-{F} for the ratings and {F}-{F} for the tie "
                  r"parameter", lambda: ties("rating_coverage") + ties("tie_coverage")),
    ("docs/coverage.md", rf"\*\*Ratings\*\*: {F}-{F} in every cell",
     lambda: ties("rating_coverage")),
    ("docs/coverage.md", rf"\*\*Tie parameter\*\*: {F}-{F} in every cell",
     lambda: ties("tie_coverage")),
    ("docs/coverage.md", rf"the interval centred on the MLE \(`MLE-centred`, the earlier default\) "
                         rf"covers {F}-{F}", lambda: ties("tie_mle_coverage")),
    ("docs/coverage.md", rf"the tie parameter's interval covers {F}-{F} there",
     lambda: ties("few_tie_coverage")),
    ("docs/coverage.md", rf"the same centre covers {F}-{F} on the same boards",
     lambda: ties("few_ideal_coverage")),
    ("docs/coverage.md", rf"\*\*Ratings\*\* {F}-{F}; \*\*tie parameter\*\* {F}-{F} \(MC SE",
     lambda: ties("rating_coverage", TINY) + ties("tie_coverage", TINY)),
    ("docs/coverage.md", rf"The MLE-centred interval covers {F}-{F} on these boards",
     lambda: ties("tie_mle_coverage", TINY)),
    # placement against a frozen board (docs/coverage.md, docs/stability.md)
    *[("docs/coverage.md", rf"\| `{cell}` \| [^|]+ \| [^|]+ \| {F} \| {F} \| {F} \| {F} \| "
       rf"{F} / {F} \| {F} \|", lambda cell=cell: placement(cell))
      for cell in ("small-ref", "balanced", "sparse-new")],
    ("docs/coverage.md", rf"cover \*\*{F}-{F}\*\*\s+in every cell", placement_band),
    ("docs/stability.md", rf"the two-step intervals cover {F}-{F} in every cell", placement_band),
    # Bradley-Terry: the default (CR2 with df per contrast) in every cell and target
    ("README.md", rf"the default covers {F}-{F} \(Monte-Carlo SE {F}-{F}\) in every "
                  r"Bradley-Terry cell and target", bt_default),
    ("docs/coverage.md", rf"It covers \*\*{F}-{F} in every Bradley-Terry cell and target\*\* "
                         rf"\(all {F} entries in \[0\.94, 0\.96\]\)", bt_default_band),
    ("docs/coverage.md", rf"vs the anchor and vs every other model: {F}-{F}, MCSE about {F}\)",
     sparse_default),
    ("docs/coverage.md", rf"and 20-task boards \({F}-{F}\)", g20_default),
    # the sparse model: CR1 with t(G - 1) against CR2 with df per contrast
    ("README.md", rf"CR1 with t\(199\) covered it {F} of the time \(3 tasks: {F}\); CR2 with "
                  rf"Satterthwaite df covers it {F} \(3 tasks: {F}\)", sparse_cr1_cr2),
    ("docs/coverage.md", rf"\*\*{F} / {F} / {F}\*\* for a model on 3 / 6 / 12 of 200 tasks",
     sparse_cr1),
    # per-verdict and model-based intervals with dependent verdicts
    ("README.md", rf"per-verdict and model-based intervals cover as little as {F}-{F} when",
     naive_dependent),
    ("docs/coverage.md", rf"with dependence within tasks they cover {F}-{F}\.", naive_dependent),
    # the large-board shortcuts forced on the hardest cells
    ("docs/coverage.md", rf"the default still covers {F}-{F}: the sparse model {F} / {F} / {F} "
                         rf"on 3 / 6 / 12 tasks \(its pairs {F} / {F} / {F}\)", large_path),
    # rank intervals
    ("docs/coverage.md", rf"on the other boards on {F}-{F}, each model's on {F}-{F}\.",
     ranks_elsewhere),
    ("README.md", rf"and on {F}-{F} of the others; mean width below", joint_elsewhere),
    ("docs/coverage.md", rf"\(mean width {F} vs {F} ranks on `bt-small-indep`, {F} vs {F} on "
                         rf"`bt-large-indep`, {F} vs {F} on `bt-large-dep`\)", rank_widths),
    ("docs/coverage.md", rf"hold every true rank jointly on {F} \(MCSE {F}, {F} boards\) of the "
                         r"boards where all models are equally strong", joint_equal),
    ("docs/coverage.md", rf"on 4,000 more such boards from fresh seeds, {F} \(MCSE {F},",
     lambda: joint_equal_fresh()[:2]),
    ("README.md", rf"all true ranks inside on {F} \(MCSE {F}\) of {F} boards whose models are "
                  r"all equally strong", joint_equal_fresh),
    ("README.md", rf"`benchmarks_perf/coverage_ranks_equal.py`; {F}, MCSE {F}, on the coverage "
                  rf"study's {F}\)", joint_equal),
    # Crowd-BT: three judges, one judge, boundary boards
    ("README.md", rf"cover {F}-{F} with three judges", three_judges),
    ("docs/coverage.md", rf"covers {F}-{F} overall in every cell with three judges", three_judges),
    ("docs/crowd.md", rf"is {F}-{F} in every cell with three judges", three_judges),
    ("docs/coverage.md", rf"\*\*Reused eta\*\* \(two-step, the default\): {F}-{F};",
     lambda: both(crowd(THREE_FILES))),
    ("docs/coverage.md", rf"0/10/30% ties, eta estimated\): {F}-{F} in every cell",
     lambda: both(crowd(THREE_ESTIMATED))),
    ("docs/coverage.md", rf"{F}-{F} on 2,000-verdict boundary boards and {F}-{F} on the "
                         r"12,000-verdict ones", boundary_2k_12k),
    ("docs/crowd.md", rf"{F}-{F} on the 2,000-verdict boards whose plain estimate would sit on",
     lambda: both(crowd(THREE_2K, "boundary"))),
    ("docs/coverage.md", rf"Boundary boards: {F}-{F} at 2,000 verdicts \({F}-{F}% of the boards; "
                         rf"slightly conservative\), {F}-{F} at 12,000 \({F}-{F}%\)",
     boundary_estimated),
    ("README.md", rf"{F}-{F} with one judge", lambda: both(crowd(ONE_JUDGE))),
    ("README.md", rf"less on the {F}-{F}% of 12,000-verdict boards whose plain estimate sits on "
                  rf"the boundary \({F}-{F} in the study's table; {F}-0\.954 on fresh seeds",
     boundary_readme),
    ("README.md", rf"`c12k-ties0`'s {F} / {F} on {F} of ([\d,]+) boards", lowest_fresh),
    ("docs/coverage.md", rf"`c12k` \(the first 2,500 of the boards above\) {F} \(\d+\) / {F} "
                         rf"\(\d+\) on {F} boundary boards, {F} \(\d+\) / {F} \(\d+\) with the "
                         r"bound judge's eta fixed", lambda: oracle("c12k")),
    ("docs/coverage.md", rf"`c12k-ties0` {F} \(\d+\) / {F} \(\d+\) on {F}, {F} \(\d+\) / {F} "
                         r"\(\d+\) with it", lambda: oracle("c12k-ties0")),
    # scopes: rubric clustering and the combined headline
    ("docs/coverage.md", rf"task-clustered SEs {F}x \(pass-rate matches\) to {F}x \(per-check "
                         rf"matches\) the per-verdict ones, with coverage {F}-{F} clustered "
                         rf"against {F}-{F} per verdict", rubric),
    ("docs/coverage.md", rf"joint covariance {F}, independent scopes {F}\.", combined),
    # the performance summary table
    ("README.md", rf"default CR2 intervals \| {F} s \| floor {F} s \({F}x\) \|.*? \| the same with "
                  rf"per-verdict \(HC0\) intervals \| {F} s \| floor {F} s \({F}x\) \|", perf_1m),
    ("README.md", rf"fresh process \| {F} s \| fresh `read_csv` \+ factorize {F} s \({F}x\) \|.*?"
                  rf"1,000 models, HC0 / CR2 \| {F} s / {F} s \| choix's point estimate {F} s",
     perf_headline),
    ("README.md", rf"Crowd-BT, 1M verdicts, task-clustered \| {F} s \| Bradley-Terry {F} s "
                  rf"\({F}x\)", perf_crowd),
    ("README.md", rf"200k-verdict history \| {F} s \| one fit of the history {F} s", perf_planner),
    ("README.md", rf"CR2 intervals takes {F}x the plain fit's time", perf_style),
    ("README.md", rf"1,000 models, default CR2 \| {F} s, peak {F} MiB \| HC0 {F} s, peak {F} MiB",
     perf_arena),
    # the judge audit's table
    ("README.md", rf"\| BT, 3,000 verdicts, 100 tasks \| {F} \| {F} \| {F} \|",
     lambda: audit_row("bt-100")),
    ("README.md", rf"\| BT, 1,000 verdicts, 30 tasks \| {F} \| {F} \| {F} \|",
     lambda: audit_row("bt-30")),
    ("README.md", rf"estimated\), 3,000 verdicts, 100 tasks \| {F} \| {F} \| {F} \|",
     lambda: audit_row("crowd-100")),
]

#: Figures once quoted that the tables never held; they must not come back.
STALE = ["0.941-0.960", "0.952-0.964", "0.934-0.954", "every cell inside the band",
         "0.998-1.000"]


def agrees(quoted: str, value: float) -> bool:
    """Whether ``quoted`` is ``value`` rounded to the digits it shows."""
    quoted = quoted.replace(",", "")
    digits = len(quoted.split(".")[1]) if "." in quoted else 0
    return abs(float(quoted) - value) <= 0.5 * 10.0 ** -digits + 1e-9


@pytest.mark.parametrize(("name", "pattern", "figures"), CLAIMS,
                         ids=[f"{c[0]}:{c[1][:40]}" for c in CLAIMS])  # fmt: skip
def test_quoted_figures_match_result_files(name, pattern, figures):
    found = re.findall(pattern, doc(name))
    assert found, f"{name}: the claim {pattern!r} is no longer worded so; update it here"
    expected = list(figures())
    for groups in found:
        groups = (groups,) if isinstance(groups, str) else groups
        assert len(groups) == len(expected), (groups, expected)
        bad = [(q, v) for q, v in zip(groups, expected, strict=True) if not agrees(q, v)]
        assert not bad, f"{name}: quoted {list(groups)}, result files give {expected}"


@pytest.mark.parametrize("name", ["README.md", "docs/coverage.md", "docs/crowd.md"])
def test_no_stale_figures(name):
    text = doc(name)
    assert [s for s in STALE if s in text] == []


@pytest.mark.parametrize(("rendered", "name"), [
    ("validate_coverage.md", "docs/coverage.md"),
    ("coverage_crowd.md", "docs/coverage.md"),
    ("tie_coverage.md", "docs/coverage.md"),
    ("tie_coverage_tiny.md", "docs/coverage.md"),
])  # fmt: skip
def test_tables_in_docs_are_the_rendered_results(rendered, name):
    """The docs' copies of a study's rendered report hold every table row and summary line of
    the report as the renderer wrote it."""
    report = (RESULTS / rendered).read_text(encoding="utf-8").splitlines()
    lines = [line for line in report if line.startswith(("|", "- `", "The default"))]
    text = (ROOT / name).read_text(encoding="utf-8")
    assert [line for line in lines if line not in text] == []


def test_agrees_rounds_as_quoted():
    assert agrees("0.947", 0.947069) and agrees("0.96", 0.9604) and agrees("2,500", 2500)
    assert not agrees("0.941", 0.947069) and not agrees("0.964", 0.965778)


def test_subcommand_lists_name_every_subcommand():
    """docs/architecture.md's list of subcommands and the README's table name the parser's."""
    from ratings.cli.app import _parser

    (sub,) = [a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)]
    names = set(sub.choices)
    line = re.search(r"`ratings ([a-z-]+(?: \| [a-z-]+)+)`", doc("docs/architecture.md"))
    assert line is not None
    assert set(line.group(1).split(" | ")) | {"next"} == names
    table = set(re.findall(r"^\| `ratings ([a-z-]+)` \|", (ROOT / "README.md").read_text(
        encoding="utf-8"), flags=re.MULTILINE))  # fmt: skip
    assert table == names
