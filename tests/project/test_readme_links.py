"""Every link of the README works: in-page links (``[text](#anchor)``) point at one of its headings, and links to
files of the project (``docs/...``, ``examples/...``) point at files or folders that exist. Links inside the user
guide are checked by its strict build (tests/project/test_docs_build.py)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_readme_anchors_exist():
    text = README.read_text(encoding="utf-8")
    anchors = {_anchor(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}
    links = {t[1:] for t in LINK.findall(text) if t.startswith("#")}
    assert not links - anchors, f"README links to missing sections: {sorted(links - anchors)}"


def test_readme_file_links_exist():
    targets = [t for t in LINK.findall(README.read_text(encoding="utf-8"))
               if not t.startswith(("#", "http://", "https://", "mailto:"))]
    assert targets, "the README links to no file of the project"
    missing = [t for t in targets if not (ROOT / t.split("#")[0]).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"
