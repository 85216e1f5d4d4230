"""conba map HTML reports in headless Chromium (conba_research.browser): the line alignment and the report."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba_research.browser import serve_page as page_check

JAVA = """/**
 * Sum of the squares.
 */
public int sumSquares(int[] xs) {
  int total = 0;
  for (int x : xs) {
    total += x * x;
  }
  return total;
}
"""
PYTHON = '''def sum_squares(xs):
    """Sum of the squares."""
    total = 0
    for x in xs:
        total += x * x
    return total
'''


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


ALPHA = "def alpha(xs):\n    total = 0\n    for x in xs:\n        total += x * x\n    return total\n"


BETA = ("def beta(s):\n    out = []\n    for ch in s:\n        if ch.isupper():\n            out.append(ch.lower())\n"
        "    return ''.join(out)\n")


GAMMA = ("def gamma(n):\n    if n < 2:\n        return n\n    a, b = 0, 1\n    while n > 0:\n        a, b = b, a + b\n"
         "        n -= 1\n    return a  # <script>alert('x')</script>\n")


T = "0.999"  # with the tiny model only the very same code clears it


@pytest.fixture(scope="module")
def trees(tmp_path_factory, tiny_model):
    """(source, target, index, model): alpha once in the target (matched), beta twice (ambiguous), gamma not
    at all (missing); the index already holds both trees."""
    root = tmp_path_factory.mktemp("map")
    src, tgt = root / "src", root / "tgt"
    src.mkdir()
    tgt.mkdir()
    (src / "a.py").write_text(ALPHA + "\n\n" + BETA + "\n\n" + GAMMA)
    (tgt / "x.py").write_text(ALPHA + "\n\n" + BETA)
    (tgt / "y.py").write_text(BETA)
    index = root / "idx"
    result = run("map", str(src), str(tgt), "-i", str(index), "-m", tiny_model, "-t", T)
    assert result.exit_code == 0, result.output
    return src, tgt, str(index), tiny_model


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


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
