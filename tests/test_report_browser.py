"""The leaderboard page in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``, driven by selenium) loads the page with every network request sent to a
closed proxy, and the checks read the rendered DOM and the browser's network log. Screenshots
are saved next to the page (the test's temporary directory; ``RATINGS_SCREENSHOTS=DIR`` keeps
them)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from report_pages import HOSTILE_MODEL, MODELS, fit

pytestmark = pytest.mark.slow

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is in the test extra")


def _binary(*names: str) -> str | None:
    return next((p for p in map(shutil.which, names) if p), None)


CHROMIUM = _binary("chromium", "chromium-browser", "google-chrome")
DRIVER = _binary("chromedriver")
if CHROMIUM is None or DRIVER is None:  # pragma: no cover - CI installs both
    pytest.skip("no headless Chromium and chromedriver found (apt-get install chromium "
                "chromium-driver)", allow_module_level=True)  # fmt: skip


def _browser(scripts: bool = True):
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,2000", "--proxy-server=127.0.0.1:9",
                "--proxy-bypass-list=<-loopback>", "--disable-background-networking"):
        options.add_argument(arg)
    if not scripts:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings."
                                                  "javascript": 2})  # fmt: skip
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    return webdriver.Chrome(service=Service(DRIVER), options=options)


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    from ratings.scopes.combine import combine, fit_scopes

    out = tmp_path_factory.mktemp("report")
    one = out / "one.html"
    fit(model="crowd-bt").to_html(one)
    import pandas as pd
    from report_pages import verdicts

    log = pd.concat([verdicts(seed=1).assign(scope="alpha"),
                     verdicts(seed=2).assign(scope="beta")], ignore_index=True)  # fmt: skip
    scopes = fit_scopes(log, anchor=f"{MODELS[2]}=1000", model="bt")
    from ratings.report import from_results, write_report

    many = out / "scopes.html"
    write_report(from_results(scopes, combined=combine(scopes), verdicts=log), many)
    return one, many


@pytest.fixture(scope="module")
def browser():
    driver = _browser()
    yield driver
    driver.quit()


def _shot(driver, page: Path, name: str) -> None:
    keep = os.environ.get("RATINGS_SCREENSHOTS")
    folder = Path(keep) if keep else page.parent
    folder.mkdir(parents=True, exist_ok=True)
    height = driver.execute_script("return document.body.scrollHeight")
    driver.set_window_size(1280, min(int(height) + 50, 8000))
    assert driver.save_screenshot(str(folder / f"{name}.png"))


def _requests(driver) -> list[str]:
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def _column(driver, table_id: str, k: int) -> list[str]:
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#' + arguments[0] + ' tbody tr'))"
        ".map(r => r.children[arguments[1]].textContent.trim());", table_id, k)


def test_renders_offline_with_every_model(browser, pages):
    one, _ = pages
    browser.get_log("performance")  # drop earlier entries
    browser.get(one.as_uri())
    assert browser.title == "Leaderboard"
    names = _column(browser, "board-main-table", 2)
    assert len(names) == len(MODELS)
    for model in MODELS:
        assert any(n.startswith(model) for n in names), model
    assert browser.execute_script("return document.querySelectorAll('script').length") == 1
    assert browser.execute_script("return window.__xss === undefined")
    charts = browser.execute_script(
        "return Array.from(document.querySelectorAll('svg.chart'))"
        ".map(s => [s.getAttribute('aria-label'), s.getBoundingClientRect().width]);")
    assert len(charts) == 2 and all(label and width > 200 for label, width in charts)
    links = browser.execute_script(
        "return Array.from(document.querySelectorAll('[src],[href]'))"
        ".map(e => e.getAttribute('src') || e.getAttribute('href'));")
    assert [u for u in links if u.startswith(("http:", "https:", "//"))] == []
    requests = _requests(browser)
    assert requests and all(u.startswith(("file:", "data:")) for u in requests), requests
    _shot(browser, one, "report-one-scope")


def test_sorting_by_a_column(browser, pages):
    one, _ = pages
    browser.get(one.as_uri())
    from selenium.webdriver.common.by import By

    header = browser.find_elements(By.CSS_SELECTOR, "#board-main-table thead th")
    elo = header[3]
    elo.find_element(By.TAG_NAME, "button").click()
    values = [float(v.replace(",", "").replace("−", "-")) for v in
              _column(browser, "board-main-table", 3)]  # fmt: skip
    assert values == sorted(values) and elo.get_attribute("aria-sort") == "ascending"
    elo.find_element(By.TAG_NAME, "button").click()
    values = [float(v.replace(",", "").replace("−", "-")) for v in
              _column(browser, "board-main-table", 3)]  # fmt: skip
    assert values == sorted(values, reverse=True)
    header[2].find_element(By.TAG_NAME, "button").click()
    names = browser.execute_script(
        "return Array.from(document.querySelectorAll('#board-main-table tbody th'))"
        ".map(c => c.getAttribute('data-sort'));")
    assert names == sorted(names, key=lambda s: s.lower()) or names == sorted(names)
    assert HOSTILE_MODEL in names  # a name with markup is a cell's text


def test_scope_tabs_switch_boards(browser, pages):
    _, many = pages
    browser.get(many.as_uri())
    from selenium.webdriver.common.by import By

    def shown():
        return [s.get_attribute("id") for s in
                browser.find_elements(By.CSS_SELECTOR, "section.board") if s.is_displayed()]

    assert shown() == ["board-combined"]
    tabs = browser.find_elements(By.CSS_SELECTOR, ".tabs button")
    assert [t.text for t in tabs] == ["Headline (combined scopes)", "Scope: alpha", "Scope: beta"]
    tabs[2].click()
    assert shown() == ["board-beta"]
    _shot(browser, many, "report-scopes-beta")


def test_readable_without_scripts(pages):
    _, many = pages
    driver = _browser(scripts=False)
    try:
        driver.get(many.as_uri())
        from selenium.webdriver.common.by import By

        boards = driver.find_elements(By.CSS_SELECTOR, "section.board")
        assert len(boards) == 3 and all(b.is_displayed() for b in boards)
        assert driver.find_elements(By.CSS_SELECTOR, ".tabs") == []
        _shot(driver, many, "report-no-scripts")
    finally:
        driver.quit()
