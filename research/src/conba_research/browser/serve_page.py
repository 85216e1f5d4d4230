"""Drive the `conba serve` search page in headless Chromium: paste code, pick a language filter,
submit, check that ranked hits are shown, and save a screenshot.

    conba experiment serve-page-check --index .conba-index --screenshot docs/serve-page.png

Needs chromium + chromedriver (Debian: `apt-get install chromium chromium-driver`) and selenium
(`pip install selenium`). The server runs in this process on a free 127.0.0.1 port.
tests/test_serve_page.py uses :func:`drive` with a tiny model.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

QUERY = '''def gcd(a, b):
    """Greatest common divisor."""
    while b:
        a, b = b, a % b
    return abs(a)
'''


def browser_paths() -> tuple[str, str] | None:
    """(chromium, chromedriver) executables, or None when either is missing."""
    chrome = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
    driver = shutil.which("chromedriver")
    return (chrome, driver) if chrome and driver else None


def headless_chromium(width: int = 1400, height: int = 1000):  # -> selenium.webdriver.Chrome
    """A headless Chromium window of ``width`` x ``height`` pixels; the caller quits it."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    paths = browser_paths()
    if paths is None:
        raise RuntimeError("chromium and chromedriver are needed (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = paths[0]
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--window-size={width},{height}",
                "--disable-gpu"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(paths[1]), options=options)


def drive(url: str, code: str = QUERY, language: str = "java", k: int = 4,
          screenshot: str | Path | None = None, timeout: float = 60) -> list[dict[str, str]]:
    """Open the page at ``url``, paste ``code``, filter hits to ``language``, search; return the hits shown."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import Select, WebDriverWait

    browser = headless_chromium()
    try:
        wait = WebDriverWait(browser, timeout)
        browser.get(url)
        wait.until(lambda b: "functions" in b.find_element(By.ID, "facts").text)
        box = browser.find_element(By.ID, "code")
        browser.execute_script(  # a paste: the text arrives at once, as from the clipboard
            "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'));", box, code)
        Select(browser.find_element(By.ID, "query-language")).select_by_value("python")
        Select(browser.find_element(By.ID, "language")).select_by_value(language)
        k_box = browser.find_element(By.ID, "k")
        k_box.clear()
        k_box.send_keys(str(k))
        browser.find_element(By.ID, "submit").click()
        wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "#hits li.hit")))
        error = browser.find_element(By.ID, "error")
        if error.is_displayed():
            raise RuntimeError(f"the page shows an error: {error.text}")
        hits = [{"rank": li.find_element(By.CSS_SELECTOR, ".rank").text,
                 "score": li.find_element(By.CSS_SELECTOR, ".score").text,
                 "language": li.find_element(By.CSS_SELECTOR, ".lang").text,
                 "name": li.find_element(By.CSS_SELECTOR, "b").text,
                 "location": li.find_element(By.CSS_SELECTOR, ".loc").text,
                 "highlighted": str(bool(li.find_elements(By.CSS_SELECTOR, ".code .hl")))}
                for li in browser.find_elements(By.CSS_SELECTOR, "#hits li.hit")]
        if screenshot:
            Path(screenshot).parent.mkdir(parents=True, exist_ok=True)
            browser.save_screenshot(str(screenshot))
        return hits
    finally:
        browser.quit()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", default=".conba-index", help="index folder to serve")
    ap.add_argument("--model", default=None, help="model (default: the index's)")
    ap.add_argument("--language", default="java", help="language filter to pick on the page")
    ap.add_argument("-k", type=int, default=4)
    ap.add_argument("--screenshot", default=None, help="write a PNG of the page with its hits")
    args = ap.parse_args()
    from conba.serve import create_app
    from conba.serve.server import BackgroundServer

    with BackgroundServer(create_app(args.index, args.model)) as url:
        hits = drive(url, language=args.language, k=args.k, screenshot=args.screenshot)
    for h in hits:
        print(f"{h['rank']:>3} {h['score']} [{h['language']}] {h['name']}  {h['location']}")
    ok = len(hits) == args.k and all(h["language"] == args.language and h["highlighted"] == "True" for h in hits)
    print("page check:", "ok" if ok else "FAILED", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
