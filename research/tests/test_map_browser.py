"""conba map HTML reports in headless Chromium (conba_research.browser): the line alignment and the report."""

from __future__ import annotations

import pytest

from conba_research.browser import serve_page as page_check
from helpers.map_trees import JAVA, PYTHON, T, map_trees, run


@pytest.mark.slow  # a real browser, like the other Chromium tests
def test_hovering_an_aligned_line_outlines_its_counterpart_in_chromium(tiny_model, tmp_path):
    pytest.importorskip("selenium")
    from conba_research.browser import serve_page

    paths = serve_page.browser_paths()
    if paths is None:
        pytest.skip("no headless browser: apt-get install chromium chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    src, tgt = tmp_path / "src", tmp_path / "tgt"
    src.mkdir()
    tgt.mkdir()
    (src / "S.java").write_text("class S {\n" + JAVA + "}\n")
    (tgt / "s.py").write_text(PYTHON)
    html = tmp_path / "map.html"
    out = run("map", str(src), str(tgt), "-i", str(tmp_path / "idx"), "-m", tiny_model, "-t", "0.5", "-f", "html",
              "-o", str(html))
    assert out.exit_code == 0, out.output
    options = webdriver.ChromeOptions()
    options.binary_location = paths[0]
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,900"):
        options.add_argument(arg)
    browser = webdriver.Chrome(service=Service(paths[1]), options=options)
    try:
        browser.get(html.resolve().as_uri())
        pair = browser.find_element(By.CSS_SELECTOR, ".pair.aligned")
        halves = pair.find_elements(By.CSS_SELECTOR, ".card")
        line = next(e for e in halves[0].find_elements(By.CSS_SELECTOR, ".al") if "total += x * x" in e.text)
        block = next(c for c in line.get_attribute("class").split() if c.startswith("ak"))
        other = halves[1].find_elements(By.CSS_SELECTOR, f".al.{block}")
        assert other and any("total += x * x" in e.text for e in other)
        before = other[0].value_of_css_property("outline-style")
        ActionChains(browser).move_to_element(line).perform()
        assert before == "none" and other[0].value_of_css_property("outline-style") == "solid"
    finally:
        browser.quit()


@pytest.fixture(scope="module")
def trees(tmp_path_factory, tiny_model):
    """(source, target, index, model): alpha matched, beta ambiguous, gamma missing (helpers.map_trees)."""
    return map_trees(tmp_path_factory.mktemp("map"), tiny_model)


@pytest.mark.slow  # a real browser: slow tier, like the other Chromium tests
@pytest.mark.skipif(page_check.browser_paths() is None, reason="no headless browser: apt-get install chromium "
                                                               "chromium-driver")
def test_html_report_in_chromium(trees, tmp_path):
    pytest.importorskip("selenium")
    from conba_research.browser import map_report as module
    src, tgt, index, _ = trees
    out = tmp_path / "map.html"
    assert run("map", str(src), str(tgt), "-i", index, "-t", T, "-f", "html", "--output", str(out)).exit_code == 0
    seen = module.look(out, screenshot=tmp_path / "map.png")
    assert seen["alerts"] == 0 and seen["bars"] == 1 and seen["statuses"] == ["missing", "ambiguous", "matched"]
    assert seen["pairs"] == 1 and seen["highlighted"] >= 3
    assert (tmp_path / "map.png").stat().st_size > 10_000
