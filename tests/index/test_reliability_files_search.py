"""Issue 49 rows 13 and 17 (`conba search --files`): an indexed file that changed on disk is searched with its
current content and the run says so (the index stores its size and mtime); --query-language and --show-code are
honoured for an indexed file too (CLI runner, tiny model)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conba.cli.main import cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "polyglot"


@pytest.fixture()
def indexed(tmp_path, tiny_model) -> tuple[Path, Path]:
    from conba.index import Index

    proj = tmp_path / "proj"
    shutil.copytree(EXAMPLE, proj)
    with Index(tmp_path / "idx", model=tiny_model) as idx:
        idx.add([proj])
    return proj, tmp_path / "idx"


def _search(*args: str) -> tuple[list[dict], str]:
    res = CliRunner().invoke(cli, ["search", "--files", *args])
    assert res.exit_code == 0, res.output
    return [json.loads(line) for line in res.stdout.splitlines()], res.stderr


def test_a_file_changed_since_indexing_is_searched_as_it_is_now(indexed, tmp_path):
    proj, idx = indexed
    query = proj / "python" / "mathlib.py"
    before, said = _search(str(query), "-k", "5", "-i", str(idx))
    assert "note:" not in said
    query.write_text("def shout(text):\n    return text.upper() + '!'\n\n\ndef whisper(text):\n"
                     "    return text.lower()\n")
    now, said = _search(str(query), "-k", "5", "-i", str(idx))
    assert f"note: {query}: changed since it was indexed; searched with its current content" in said
    outside = tmp_path / "outside" / "mathlib.py"  # the same content, not indexed: encoded from disk
    outside.parent.mkdir()
    outside.write_text(query.read_text())
    fresh, _ = _search(str(outside), "-k", "5", "-i", str(idx))
    assert now == fresh and now != before
    assert all(not r["file"].endswith("python/mathlib.py") for r in now)  # never its own hit


def test_query_language_and_show_code_for_an_indexed_file(indexed):
    proj, idx = indexed
    query = str(proj / "python" / "mathlib.py")
    rows, said = _search(query, "-k", "3", "-i", str(idx), "--show-code")
    assert all(r["code"].strip() and r["functions"] >= 1 for r in rows) and "note:" not in said
    first = rows[0]["file"]
    want = (proj / first).read_text() if (proj / first).exists() else Path(first).read_text()
    assert all(line.strip() in want for line in rows[0]["code"].splitlines() if line.strip())
    res = CliRunner().invoke(cli, ["search", "--files", query, "-k", "2", "-i", str(idx), "--show-code", "--plain"])
    assert res.exit_code == 0 and "\n      " in res.stdout, res.output
    as_js, said = _search(query, "-k", "3", "-i", str(idx), "--query-language", "javascript", "--same-language")
    assert "indexed as python; encoded as javascript (--query-language)" in said
    assert all(not r["file"].endswith("python/mathlib.py") for r in as_js)
