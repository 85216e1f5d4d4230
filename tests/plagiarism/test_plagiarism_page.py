"""The HTML plagiarism report in headless Chromium: the overview, the ranked table, clusters, and a pair view
whose matched fragments are coloured on both sides and outlined together on hover."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("selenium", reason="the page test drives Chromium with selenium: pip install selenium")

from click.testing import CliRunner  # noqa: E402

from conba.cli.main import cli  # noqa: E402
from conba_research.browser import serve_page as page_check  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "assignment"
IN_CI = os.environ.get("CI") == "true"  # .ci/run installs Chromium: there a missing browser fails the test

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(page_check.browser_paths() is None and not IN_CI,
                                 reason="no headless browser: apt-get install chromium chromium-driver")]


def test_report_renders_in_chromium(tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    report = tmp_path / "report.html"
    r = CliRunner().invoke(cli, ["plagiarism", str(EXAMPLE / "submissions"), "--base", str(EXAMPLE / "starter"),
                                 "-f", "html", "-o", str(report)])
    assert r.exit_code == 0, r.output
    browser = page_check.headless_chromium(1400, 1000)
    try:
        browser.get(report.resolve().as_uri())
        assert browser.find_element(By.CSS_SELECTOR, "svg.hist").size["width"] > 300
        assert len(browser.find_elements(By.CSS_SELECTOR, "svg.hist rect")) == 20
        rows = browser.find_elements(By.CSS_SELECTOR, "#pair-table tr")[1:]
        assert len(rows) == 15
        first = rows[0].find_elements(By.TAG_NAME, "td")
        assert {first[1].text, first[2].text} == {"alice.py", "dave.js"} and "sus" in rows[0].get_attribute("class")
        assert "alice.py" in browser.find_element(By.CSS_SELECTOR, ".cluster").text
        view = browser.find_element(By.ID, "pair-0")
        left = view.find_elements(By.CSS_SELECTOR, ".side-a .al.ak0")
        right = view.find_elements(By.CSS_SELECTOR, ".side-b .al.ak0")
        assert left and right
        assert view.find_elements(By.CSS_SELECTOR, ".side-a .hl .k, .side-a .hl .kd")  # highlighted code
        before = right[0].value_of_css_property("outline-style")
        browser.execute_script("arguments[0].scrollIntoView()", left[0])
        ActionChains(browser).move_to_element(left[0]).perform()
        assert before == "none" and right[0].value_of_css_property("outline-style") == "solid"
    finally:
        browser.quit()
