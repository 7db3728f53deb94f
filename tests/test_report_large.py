"""The page at 58 models (an AlpacaEval-sized board): readable heatmap labels, the audit's
finding column wrapped within 1,400 px, the most clearly separated pairs spread over the
models in Elo order, and no p-value printed as 0.0000.

The board is simulated: one baseline met by 57 models (AlpacaEval's design: every model against
the baseline on 805 instructions), strengths spread like AlpacaEval 2.0's, and a judge audit
whose finding is a long sentence. The layout checks run in headless Chromium (as
``test_report_browser.py``).
"""

from __future__ import annotations

import re
import shutil

import numpy as np
import pandas as pd
import pytest
from report_pages import Tables

import ratings
from ratings.datasets.simulate import simulate_verdicts
from ratings.report import from_results, render

M = 58


@pytest.fixture(scope="module")
def board():
    rng = np.random.default_rng(58)
    models = ["baseline"] + [f"model-{k:02d}-{'x' * (k % 19)}" for k in range(1, M)]
    strengths = pd.Series(np.r_[0.0, rng.normal(-1.0, 1.2, M - 1)], index=models)
    strengths.iloc[1] = 4.0  # one model far ahead of all others, as AlpacaEval's NullModel
    tasks = [f"instruction {t}" for t in range(120)]
    rows = [(t, "baseline", m) for m in models[1:] for t in tasks]
    matches = pd.DataFrame(rows, columns=["task_id", "model_a", "model_b"]).assign(judge="gpt4")
    log = simulate_verdicts(matches, strengths, tie_rate=0.02, seed=5)
    r = ratings.fit(log)
    audit = pd.DataFrame({"judge": ["weighted_alpaca_eval_gpt4_turbo"], "n": [len(log)],
                          "position_bias_elo": [np.nan], "position_lower_elo": [np.nan],
                          "position_upper_elo": [np.nan], "self_preference_elo": [np.nan],
                          "self_lower_elo": [np.nan], "self_upper_elo": [np.nan],
                          "board_agreement": [0.912],
                          "flag": ["position bias not estimated: model 'gpt4_1106_preview' is "
                                   "in slot A in every verdict of this judge: its position bias "
                                   "cannot be told apart from that model's strength; "
                                   "self-preference not estimable: no family given"]})
    page = render(from_results(r, verdicts=log, audit=audit, title="58 models"))
    return r, page


def test_separated_pairs_spread_over_models_in_elo_order(board):
    r, page = board
    start = page.index("the most clearly separated pairs")
    html = page[page.rindex("<table", 0, start):page.index("</table>", start) + 8]
    rows = [row for row in Tables(html).tables[0]["rows"] if len(row) == 7][1:]
    assert len(rows) == 12
    names = [n for row in rows for n in row[:2]]
    assert len(set(names)) == 24  # no model twice (12 disjoint pairs on 58 models)
    elo = r.elo
    assert [elo[row[0]] for row in rows] == sorted((elo[row[0]] for row in rows), reverse=True)
    assert all(elo[row[0]] > elo[row[1]] for row in rows)
    assert {row[6] for row in rows} == {"< 1e-4"}  # all tiny here: none printed 0.0000
    assert "0.0000" not in page


def test_heatmap_labels_fit_the_page_unscaled(board):
    _, page = board
    svg = re.search(r'<svg[^>]*aria-label="[^"]*predicted probability[^>]*>', page).group(0)
    width_pt = float(re.search(r'width="([\d.]+)pt"', svg).group(1))
    assert width_pt * 96 / 72 <= 1110  # the page's column: shown at its own size
    heat = page[page.index(svg):page.index("</svg>", page.index(svg))]
    sizes = [float(s) for s in re.findall(r"font-size: ([\d.]+)px", heat)]
    labels = min(sizes)  # tick labels, in points of the figure (1 pt = 4/3 px unscaled)
    assert labels * 96 / 72 >= 8.5


def _browser():
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    chromium = next((p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None)
    driver = shutil.which("chromedriver")
    if chromium is None or driver is None:
        pytest.skip("no headless Chromium and chromedriver")
    options = Options()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,2000", "--proxy-server=127.0.0.1:9",
                "--proxy-bypass-list=<-loopback>"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(driver), options=options)


@pytest.mark.slow
def test_at_1400_px_nothing_scrolls_sideways_and_labels_are_readable(board, tmp_path):
    _, page = board
    path = tmp_path / "page.html"
    path.write_text(page, encoding="utf-8")
    driver = _browser()
    try:
        driver.get(path.as_uri())
        overflow = driver.execute_script(
            "return Array.from(document.querySelectorAll('#audit .scroll'))"
            ".map(d => d.scrollWidth - d.clientWidth);")
        assert overflow and max(overflow) <= 0, overflow
        scale = driver.execute_script(
            "const s = Array.from(document.querySelectorAll('svg.chart'))"
            ".find(e => (e.getAttribute('aria-label') || '').includes('predicted probability'));"
            "return s.getBoundingClientRect().width / s.width.baseVal.value;")
        assert scale > 0.99  # drawn at its own size: 7.3 pt labels are 9.7 px
        driver.set_window_size(1400, 9000)
        assert driver.save_screenshot(str(tmp_path / "page.png"))
    finally:
        driver.quit()
