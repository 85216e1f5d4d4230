"""Issue 41 row 11 (serve): 4xx errors cut the values they echo and name request fields, not CLI flags."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

pytest.importorskip("fastapi", reason="conba serve needs FastAPI: pip install 'conba[serve]'")
from fastapi.testclient import TestClient  # noqa: E402

from conba.cli.main import cli  # noqa: E402
from conba.serve.errors import MAX_DETAIL, MAX_VALUE, http_detail  # noqa: E402

ALPHA = "def alpha(xs):\n    total = 0\n    for x in xs:\n        total += x * x\n    return total\n"
FLAG = re.compile(r"(?<![\w-])--[a-z]")


def test_http_detail_cuts_values_and_names_fields():
    long = "language: unknown language '" + "x" * 900_000 + "' (known: python)"
    out = http_detail(long)
    assert len(out) < MAX_VALUE + 200 and "(900000 characters)" in out and out.endswith("(known: python)")
    assert http_detail("a language (--source-lang) or --target-lang, -t 0.5") == \
        "a language (source_language) or target_language, threshold 0.5"
    assert len(http_detail("y" * 50_000)) < MAX_DETAIL + 40
    assert http_detail({"not": "text"}) == {"not": "text"}


@pytest.fixture(scope="module")
def client(tiny_model, tmp_path_factory):
    from conba.serve import create_app

    root = tmp_path_factory.mktemp("serve41")
    (root / "a.py").write_text(ALPHA)
    index = root / "idx"
    result = CliRunner().invoke(cli, ["index", str(root / "a.py"), "-i", str(index), "-m", tiny_model])
    assert result.exit_code == 0, result.output
    with TestClient(create_app(index, model=tiny_model, reload_interval=0)) as c:
        yield c


@pytest.mark.slow
@pytest.mark.parametrize("path, body", [
    ("/search", {"code": ALPHA, "language": "x" * 900_000}),
    ("/search", {"code": ALPHA, "threshold": "y" * 900_000}),
    ("/compare", {"a": ALPHA, "b": ALPHA, "threshold": "z" * 900_000}),
    ("/map", {"source_language": "python", "target_language": "w" * 900_000}),
])
def test_a_huge_invalid_value_comes_back_cut(client, path, body):
    r = client.post(path, json=body)
    assert r.status_code == 422, r.text[:300]
    assert len(r.content) < 2 * MAX_DETAIL, len(r.content)


@pytest.mark.slow
def test_map_errors_name_request_fields_not_flags(client):
    r = client.post("/map", json={"source_language": "python", "target_language": "python"})
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert "source_language" in detail and not FLAG.search(detail), detail
