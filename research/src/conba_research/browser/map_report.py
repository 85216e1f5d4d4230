"""Look at a `conba map` HTML report in headless Chromium: count what is shown, catch any script that runs,
and save a screenshot.

    conba map java/ python/ -f html --output port.html
    conba experiment map-report-check port.html --screenshot docs/map-report.png

Needs chromium + chromedriver (Debian: `apt-get install chromium chromium-driver`) and selenium.
tests/mapping/test_map_cli.py uses :func:`look` on a tiny tree.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from conba_research.browser import serve_page as _page


def look(report: str | Path, screenshot: str | Path | None = None, width: int = 1400, height: int = 1000) -> dict:
    """{alerts, bars, statuses (section headings in order, first file), pairs, highlighted} of the page."""
    from selenium.webdriver.common.by import By

    browser = _page.headless_chromium(width, height)
    try:
        browser.get(Path(report).resolve().as_uri())
        alerts = 0
        try:
            browser.switch_to.alert.dismiss()  # an escaped report never opens one
            alerts = 1
        except Exception:
            pass
        first = browser.find_elements(By.CSS_SELECTOR, "section.cls")[:1]
        heads = first[0].find_elements(By.CSS_SELECTOR, ".st") if first else []
        statuses = [e.text.split(" ")[0].lower() for e in heads]
        seen = {"alerts": alerts, "bars": len(browser.find_elements(By.CSS_SELECTOR, ".cov .bar i")),
                "statuses": statuses, "pairs": len(browser.find_elements(By.CSS_SELECTOR, ".pair")),
                "highlighted": len(browser.find_elements(By.CSS_SELECTOR, ".code .hl")),
                "title": browser.title}
        if screenshot:
            Path(screenshot).parent.mkdir(parents=True, exist_ok=True)
            browser.save_screenshot(str(screenshot))
        return seen
    finally:
        browser.quit()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report", type=Path, help="The HTML report of `conba map -f html`.")
    ap.add_argument("--screenshot", type=Path, default=None, help="Save a PNG here.")
    ap.add_argument("--height", type=int, default=1000, help="Window height in pixels.")
    args = ap.parse_args()
    print(json.dumps(look(args.report, args.screenshot, height=args.height)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
