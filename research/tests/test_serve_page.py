"""The search page in headless Chromium: paste code, pick a language filter, submit, hits shown."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="conba serve needs FastAPI: pip install 'conba[serve]'")
pytest.importorskip("selenium", reason="the page test drives Chromium with selenium: pip install selenium")

ROOT = Path(__file__).resolve().parents[2]
from conba_research.browser import serve_page as page_check  # noqa: E402

IN_CI = os.environ.get("CI") == "true"  # .ci/run installs Chromium: there a missing browser fails the test

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(page_check.browser_paths() is None and not IN_CI,
                                 reason="no headless browser: apt-get install chromium chromium-driver")]


def test_page_search_shows_ranked_highlighted_hits(tmp_path, tiny_model):
    from conba.index import Index
    from conba.serve import create_app
    from conba.serve.server import BackgroundServer

    with Index(tmp_path / "idx", model=tiny_model) as idx:
        idx.add([ROOT / "examples" / "polyglot"])
    with BackgroundServer(create_app(tmp_path / "idx", reload_interval=0)) as url:
        hits = page_check.drive(url, language="java", k=3, screenshot=tmp_path / "page.png")
    assert [h["rank"] for h in hits] == ["#1", "#2", "#3"]
    assert all(h["language"] == "java" and h["highlighted"] == "True" for h in hits)
    assert all(re.fullmatch(r".+\.java:\d+", h["location"]) for h in hits)
    scores = [float(h["score"]) for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert (tmp_path / "page.png").stat().st_size > 10_000
