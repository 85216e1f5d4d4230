"""`POST /search/files` and `GET /clones/files` of `conba serve`, `conba.Client.search_files` / `file_clones`."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="conba serve needs FastAPI: pip install 'conba[serve]'")
from fastapi.testclient import TestClient  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "polyglot"
MATHLIB = EXAMPLE / "python" / "mathlib.py"


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory, tiny_model) -> Path:
    from conba.index import Index

    folder = tmp_path_factory.mktemp("serve-files") / "idx"
    with Index(folder, model=tiny_model) as idx:
        idx.add([EXAMPLE])
    return folder


@pytest.fixture(scope="module")
def client(index_dir):
    from conba.serve import create_app

    with TestClient(create_app(index_dir, reload_interval=0)) as c:
        yield c


def test_search_files_by_indexed_file_and_by_text_agree(client, index_dir):
    from conba.index import Index
    from conba.index.files.search import search_files

    by_file = client.post("/search/files", json={"file": str(MATHLIB), "k": 3})
    assert by_file.status_code == 200, by_file.text
    body = by_file.json()
    assert body["query"]["language"] == "python" and body["query"]["functions"] >= 3
    assert [h["rank"] for h in body["hits"]] == [1, 2, 3]
    assert all(h["language"] != "python" for h in body["hits"])
    with Index(index_dir, create=False) as idx:
        _, want = search_files(idx, str(MATHLIB), k=3)
    assert [h["score"] for h in body["hits"]] == [round(h.score, 4) for h in want]

    by_text = client.post("/search/files", json={"code": MATHLIB.read_text(), "name": "mine.py", "k": 3})
    assert by_text.status_code == 200, by_text.text
    assert [h["file"] for h in by_text.json()["hits"]] == [h["file"] for h in body["hits"]]
    same = client.post("/search/files", json={"file": str(MATHLIB), "k": 10, "same_language": True}).json()
    assert any(h["file"].endswith("textutil.py") for h in same["hits"])
    java = client.post("/search/files", json={"file": str(MATHLIB), "result_language": "java"}).json()
    assert {h["language"] for h in java["hits"]} == {"java"}


@pytest.mark.parametrize("body, status, message", [
    ({"k": 3}, 422, "give either code"),
    ({"code": "def f(): pass", "file": "x.py"}, 422, "give either code"),
    ({"file": "nowhere.py"}, 404, "not a file of the served index"),
    ({"code": "def f(): pass"}, 422, "query_language: needed"),
    ({"code": "   \n", "query_language": "python"}, 422, "no code in the file"),
    ({"file": str(MATHLIB), "k": 0}, 422, "k: must be between"),
    ({"file": str(MATHLIB), "result_language": "klingon"}, 422, "unknown language"),
    ({"file": str(MATHLIB), "path": "/etc/passwd"}, 422, "path"),
])
def test_search_files_bad_input_is_a_one_line_4xx(client, body, status, message):
    r = client.post("/search/files", json=body)
    assert r.status_code == status, r.text
    assert message in str(r.json()["detail"])


def test_clones_files_pages_file_classes(client):
    r = client.get("/clones/files", params={"threshold": "0.5", "cross_language_only": True, "limit": 1,
                                            "include_code": True})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["total"] >= 1 and len(body["classes"]) == 1 and body["threshold"] == 0.5
    members = body["classes"][0]["members"]
    assert all(m["kind"] == "file" and m["code"] for m in members) and len({m["language"] for m in members}) >= 2
    assert client.get("/clones/files", params={"threshold": "1.5"}).status_code == 422
    assert client.get("/clones/files", params={"limit": 10_000}).status_code == 422


def test_client_search_files(index_dir):
    from conba import Client
    from conba.client import ServerError
    from conba.serve import create_app
    from conba.serve.server import BackgroundServer

    with BackgroundServer(create_app(index_dir, reload_interval=0)) as url, Client(url) as c:
        out = c.search_files(MATHLIB.read_text(), name="mathlib.py", k=2)
        assert len(out["hits"]) == 2 and out["query"]["language"] == "python"
        assert c.search_files(file=str(MATHLIB), k=2)["hits"] == out["hits"]
        with pytest.raises(ServerError, match="404.*not a file of the served index"):
            c.search_files(file="nowhere.py")
        page = c.file_clones(threshold=0.5, cross_language_only=True)
        assert page["total"] == len(page["classes"]) >= 1
        assert {m["kind"] for cls in page["classes"] for m in cls["members"]} == {"file"}
