"""The leaderboard page (ratings.report, `ratings report`, Ratings.to_html): contents read
back from the HTML, escaping, saved tables, errors, size. The browser checks are in
test_report_browser.py."""

from __future__ import annotations

import dataclasses
import re

import markupsafe
import numpy as np
import pandas as pd
import pytest
from report_pages import HOSTILE_JUDGE, HOSTILE_MODEL, MODELS, Tables, fit, verdicts

from ratings.cli.app import main
from ratings.report import from_results, from_tables, render
from ratings.result import Ratings


@pytest.fixture(scope="module")
def crowd():
    return fit(model="crowd-bt")


@pytest.fixture(scope="module")
def page(crowd):
    return crowd.to_html()


def _row_of(rows, model):
    return next(r for r in rows if r[2].startswith(model))


def test_every_model_is_a_row_with_the_fit_numbers(crowd, page):
    rows = Tables(page).table("board-main-table")
    header, body = rows[0], rows[1:]
    assert header[:5] == ["Rank", "Rank interval", "Model", "Elo", "95% interval"]
    assert len(body) == len(MODELS)
    frame = crowd.to_frame()
    for rec in frame.itertuples():
        row = _row_of(body, rec.model)
        assert row[0] == str(rec.rank)
        assert row[3] == f"{rec.elo:,.1f}".replace("-", "−")
        assert row[4].startswith(f"{rec.lower:,.1f} – {rec.upper:,.1f}".replace("-", "−"))
        lo, hi = int(rec.rank_lower), int(rec.rank_upper)
        assert row[1] == (str(lo) if lo == hi else f"{lo}–{hi}")
        assert f"{rec.wins} / {rec.losses} / {rec.ties}" in row
    assert [r[2].split(" ")[0] for r in body][:1] == [frame["model"].iloc[0].split(" ")[0]]


def test_anchor_and_leader_ties_are_marked(crowd, page):
    body = Tables(page).table("board-main-table")[1:]
    assert "anchor" in _row_of(body, "plain")[2]
    leader, *tied = crowd.tied_with_leader()  # the leader is not tied with itself
    for row in body:
        name = row[2].replace(" anchor", "").replace(" ≈ leader", "")
        assert ("≈ leader" in row[2]) == (name in tied)
    assert f"Leader: {markupsafe.escape(leader)}; statistically tied with it" in page


def test_names_with_markup_render_as_text(page):
    parsed = Tables(page)
    scripts = [a for t, a in parsed.tags if t == "script"]
    assert len(scripts) == 1  # the page's own sorting script, nothing from the data
    assert not any(t in ("img", "b") for t, _ in parsed.tags)  # no element from a name
    assert HOSTILE_MODEL not in page and HOSTILE_JUDGE not in page
    cells = [c for t in parsed.tables for r in t["rows"] for c in r]
    assert any(c.startswith(HOSTILE_MODEL) for c in cells)  # shown, as text
    assert HOSTILE_JUDGE in cells  # the judges table
    assert any(c.startswith("</table><b>bold</b>") for c in cells)


def test_the_page_is_self_contained(page):
    parsed = Tables(page)
    for tag, attrs in parsed.tags:
        for key in ("src", "href", "xlink:href", "action"):
            value = attrs.get(key) or ""
            assert not value.startswith(("http:", "https:", "//")), (tag, attrs)
    assert "<link" not in page and "@import" not in page
    assert not re.search(r"url\((?!#)", page)  # only the charts' own clip paths


def test_sections_charts_and_method(crowd, page):
    assert page.count('<svg') == 2 and page.count('role="img"') == 2  # bands and heatmap
    assert page.count("aria-label=") >= 2
    assert "@media print" in page
    for text in ("Data", "Judges", "Method", "Crowd-BT", "CR2", "ratings 0", "References"):
        assert text in page
    judges = Tables(page).tables
    eta_rows = next(t["rows"] for t in judges if t["rows"] and t["rows"][0][:2] == ["Judge", "eta"])
    for judge, rec in crowd.judges.iterrows():
        row = next(r for r in eta_rows if r[0] == judge)
        assert row[1] == f"{rec['eta']:.3f}"


def test_style_control_is_shown_when_present(crowd):
    style = pd.DataFrame({"feature": ["length", "markdown"], "coef": [0.25, -0.1],
                          "coef_elo": [43.4, -17.4], "se": [0.05, 0.04], "lower": [0.15, -0.18],
                          "upper": [0.35, -0.02], "df": [55.0, 55.0], "p_value": [1e-4, 0.02],
                          "scale": ["log", "count"]})  # fmt: skip

    class Styled(Ratings):
        def to_frame(self, level=None):
            out = super().to_frame(level)
            return out.assign(rank_change=np.arange(len(out)) - 2)

    r = Styled(**{f.name: getattr(crowd, f.name) for f in dataclasses.fields(crowd)}
               | {"style": style})
    html = r.to_html(charts=False)
    rows = Tables(html).table("board-main-table")
    assert "Rank change (style)" in rows[0]
    col = rows[0].index("Rank change (style)")
    assert [r[col] for r in rows[1:3]] == ["▼ −2", "▼ −1"] and rows[3][col] == "0"
    assert rows[4][col] == "▲ +1"
    assert "Style control" in html and "markdown" in html and "43.4" in html
    assert "Style control" not in crowd.to_html(charts=False)


def test_scopes_and_headline(tmp_path):
    from ratings.scopes.combine import combine, fit_scopes

    log = pd.concat([verdicts(seed=1).assign(scope="alpha"),
                     verdicts(seed=2).assign(scope="beta")], ignore_index=True)  # fmt: skip
    scopes = fit_scopes(log, anchor=f"{MODELS[2]}=1000", model="bt")
    head = combine(scopes)
    html = render(from_results(scopes, combined=head, verdicts=log), charts=False)
    parsed = Tables(html)
    ids = [t["id"] for t in parsed.tables if t["id"]]
    assert ids == ["board-combined-table", "board-alpha-table", "board-beta-table"]
    rows = parsed.table("board-combined-table")
    assert "Index" in rows[0]
    from ratings.scopes.registry import index_value

    top = head.to_frame().iloc[0]
    assert rows[1][rows[0].index("Index")].startswith(f"{index_value(top['elo']):.3f}")
    facts = dict(r for r in parsed.tables[0]["rows"])
    assert facts["Verdicts"] == f"{len(log):,}" and facts["Scopes"] == "alpha, beta"


def test_notebook_table(crowd):
    html = crowd._repr_html_()
    rows = Tables(html).tables[0]["rows"]
    assert len(rows) == 1 + len(MODELS)
    assert "<svg" not in html and HOSTILE_MODEL not in html


def test_cli_from_saved_tables(tmp_path):
    log = tmp_path / "v.csv"
    verdicts().to_csv(log, index=False)
    board, pairs, page = tmp_path / "board.csv", tmp_path / "pairs.csv", tmp_path / "board.html"
    assert main(["fit", str(log), "--anchor", f"{MODELS[2]}=1000", "--out", str(board),
                 "--pairs", str(pairs)]) == 0  # fmt: skip
    assert main(["report", "--from", str(board), "--pairs", str(pairs), "-o", str(page),
                 "--title", "Saved <board>"]) == 0  # fmt: skip
    html = page.read_text(encoding="utf-8")
    saved = pd.read_csv(board)
    body = Tables(html).table("board-main-table")[1:]
    assert len(body) == len(saved)
    assert "<title>Saved &lt;board&gt;</title>" in html
    assert html.count("<svg") == 2  # bands and the heatmap from --pairs
    assert "ratings report --from" in html  # the command that made it


def test_cli_fits_a_log(tmp_path):
    log = tmp_path / "v.csv"
    verdicts().to_csv(log, index=False)
    page = tmp_path / "p.html"
    assert main(["report", str(log), "--anchor", f"{MODELS[2]}=1000", "-o", str(page)]) == 0
    assert len(Tables(page.read_text()).table("board-main-table")) == 1 + len(MODELS)


@pytest.mark.parametrize("argv, message", [
    (["report", "-o", "x.html"], "VERDICTS"),
    (["report", "v.csv", "--from", "b.csv", "-o", "x.html"], "not both"),
    (["report", "--from", "b.csv", "-o", "x.png"], "`--out` must end in .html"),
    (["report", "v.csv", "--pairs", "b.csv", "-o", "x.html"], "`--pairs`"),
    (["report", "--from", "b.csv", "-o", "b.csv"], "--from"),
])  # fmt: skip
def test_cli_errors_name_flags(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    verdicts().to_csv("v.csv", index=False)
    pd.DataFrame({"model": ["a"], "elo": [1.0], "lower": [0.0], "upper": [2.0]}).to_csv("b.csv")
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x.html").exists()


def test_from_tables_needs_rating_columns():
    with pytest.raises(ValueError, match="--from"):
        from_tables(pd.DataFrame({"model": ["a"], "elo": [1.0]}))


@pytest.mark.slow
def test_size_budget_fifty_models():
    names = [f"model-{k:02d} with a longish name" for k in range(50)]
    r = fit(names, n=20000)
    html = r.to_html()
    assert len(html.encode()) < 2_000_000
    assert len(Tables(html).table("board-main-table")) == 51
