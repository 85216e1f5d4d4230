"""`conba serve` through FastAPI's TestClient: every endpoint, the limits, the token, bad input."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="conba serve needs FastAPI: pip install 'conba[serve]'")
from fastapi.testclient import TestClient  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "polyglot"
GCD = "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n"
JAVA = "static int twice(int x) {\n    return 2 * x;\n}\n"


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory, tiny_model) -> Path:
    from conba.index import Index

    folder = tmp_path_factory.mktemp("serve") / "idx"
    with Index(folder, model=tiny_model) as idx:
        idx.add([EXAMPLE])
    return folder


@pytest.fixture(scope="module")
def client(index_dir):
    from conba.serve import create_app

    with TestClient(create_app(index_dir, reload_interval=0)) as c:
        yield c


@pytest.fixture(scope="module")
def strict(index_dir):
    """A server with a token and small limits."""
    from conba.serve import create_app
    from conba.serve.limits import Limits

    limits = Limits(max_body_bytes=2000, max_snippets=3, max_chars=200, max_k=5, max_page=2)
    with TestClient(create_app(index_dir, token="s3cret", limits=limits, reload_interval=0)) as c:
        yield c


AUTH = {"Authorization": "Bearer s3cret"}


def test_search_returns_ranked_hits_with_locations(client):
    r = client.post("/search", json={"code": GCD, "query_language": "python", "k": 5, "include_code": True})
    assert r.status_code == 200, r.text
    hits = r.json()["hits"]
    assert [h["rank"] for h in hits] == [1, 2, 3, 4, 5]
    assert all(a["score"] >= b["score"] for a, b in zip(hits, hits[1:]))
    assert hits[0]["file"].endswith((".py", ".java", ".go", ".js", ".cpp")) and hits[0]["start_line"] >= 1
    assert hits[0]["code"] and "html" not in hits[0]


def test_search_language_filter_and_aliases(client):
    r = client.post("/search", json={"code": GCD, "result_language": "js", "k": 4})
    assert r.status_code == 200
    assert {h["language"] for h in r.json()["hits"]} == {"javascript"}


def test_search_highlight(client):
    body = client.post("/search", json={"code": GCD, "k": 2, "highlight": True, "query_language": "py"}).json()
    assert '<div class="hl">' in body["query_html"] and all('class="hl"' in h["html"] for h in body["hits"])


def test_search_matches_the_index_api(client, index_dir, tiny_model):
    from conba.index import Index

    with Index(index_dir, model=tiny_model) as idx:
        expected = [(h.unit.id, round(h.score, 4)) for h in idx.search(GCD, k=5)]
    hits = client.post("/search", json={"code": GCD, "k": 5}).json()["hits"]
    assert [(h["id"], h["score"]) for h in hits] == expected


def test_compare(client, tiny_model):
    from conba.clones.compare import compare

    r = client.post("/compare", json={"a": GCD, "b": JAVA, "language_a": "python", "language_b": "java",
                                      "threshold": 0.5})
    assert r.status_code == 200, r.text
    body = r.json()
    local = compare(GCD, JAVA, model=tiny_model, languages=("python", "java"), threshold=0.5)
    assert body["score"] == pytest.approx(local.score, abs=1e-4)
    assert body["clone"] == (body["score"] >= 0.5) and body["languages"] == ["python", "java"]
    assert client.post("/compare", json={"a": GCD, "b": JAVA, "threshold": 2}).status_code == 422


def test_encode_equals_model_encode(client, tiny_model):
    from conba.model import load_model

    r = client.post("/encode", json={"snippets": [GCD, JAVA], "languages": ["python", "java"]})
    assert r.status_code == 200, r.text
    body = r.json()
    want = load_model(tiny_model).encode([GCD, JAVA], languages=["python", "java"])
    assert body["dim"] == want.shape[1]
    np.testing.assert_allclose(np.array(body["vectors"]), want, atol=1e-5)
    assert client.post("/encode", json={"snippets": [GCD], "languages": ["python", "java"]}).status_code == 422


def test_clones_paged(client):
    full = client.get("/clones", params={"threshold": 0.5}).json()
    assert full["total"] >= 1
    page = client.get("/clones", params={"threshold": 0.5, "limit": 1, "offset": 0}).json()
    assert len(page["classes"]) == 1 and page["classes"][0]["class"] == full["classes"][0]["class"]
    member = page["classes"][0]["members"][0]
    assert {"file", "name", "language", "start_line"} <= set(member) and "code" not in member
    beyond = client.get("/clones", params={"threshold": 0.5, "offset": full["total"]}).json()
    assert beyond["classes"] == []
    cross = client.get("/clones", params={"threshold": 0.5, "cross_language_only": True}).json()
    assert all(len(c["languages"]) > 1 for c in cross["classes"]) and cross["cross_language_only"]


def test_report_and_page(client):
    r = client.get("/report", params={"threshold": 0.5})
    assert r.status_code == 200 and "<section class=\"cls\"" in r.text
    page = client.get("/")
    assert page.status_code == 200 and 'id="code"' in page.text and "static/page.js" in page.text
    assert page.text.count('<option value="python">python</option>') == 2 and ".hl .k {" in page.text
    assert client.get("/static/page.js").status_code == 200
    assert client.get("/static/page.css").status_code == 200


def test_health(client, tiny_model):
    from conba.model import load_model

    body = client.get("/health").json()
    model = load_model(tiny_model)
    assert body["status"] == "ok" and body["model"]["view"] == getattr(model, "view", "raw")
    assert body["model"]["fingerprint"] == model.embedding_fingerprint()
    assert body["index"]["functions"] == 51 and body["index"]["vectors"] == 51
    assert body["index"]["generation"] >= 1 and body["workers"] >= 1


def test_openapi_lists_every_endpoint(client):
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/search", "/compare", "/encode", "/clones", "/health", "/report"} <= set(paths)


@pytest.mark.parametrize("body, status, words", [
    (b"{not json", 400, "invalid JSON"),
    (b"[1, 2]", 422, "JSON object"),
    (b'{"k": 3}', 422, "code: Field required"),
    (b'{"code": "x", "path": "/etc/passwd"}', 422, "path: Extra inputs"),
    (b'{"code": "x", "result_language": "klingon"}', 422, "unknown language 'klingon'"),
    (b'{"code": "x", "query_language": "elvish"}', 422, "unknown language 'elvish'"),
    (b'{"code": "   "}', 422, "empty"),
    (b'{"code": "x", "k": 0}', 422, "k: must be between 1 and 100"),
])
def test_bad_requests_get_one_line_4xx(client, body, status, words):
    r = client.post("/search", content=body, headers={"content-type": "application/json"})
    assert r.status_code == status, r.text
    assert words in r.json()["detail"] and "\n" not in r.json()["detail"]


def test_a_path_is_only_ever_code(client, tmp_path):
    secret = tmp_path / "secret.py"
    secret.write_text("def leaked():\n    return 'TOP-SECRET'\n")
    body = client.post("/search", json={"code": str(secret), "k": 42, "include_code": True}).json()
    assert all("TOP-SECRET" not in h["code"] for h in body["hits"])
    assert client.post("/compare", json={"a": str(secret), "b": str(secret), "path": str(secret)}).status_code == 422


def test_token_required(strict):
    r = strict.post("/search", json={"code": GCD})
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    wrong = strict.post("/search", json={"code": GCD}, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    assert strict.get("/health").status_code == 401
    assert strict.get("/clones").status_code == 401
    assert strict.post("/search", json={"code": GCD, "k": 3}, headers=AUTH).status_code == 200
    assert strict.get("/").status_code == 200  # the page itself holds no data


def test_limits(strict):
    too_many = strict.post("/encode", json={"snippets": ["a", "b", "c", "d"]}, headers=AUTH)
    assert too_many.status_code == 413 and "limit is 3" in too_many.json()["detail"]
    too_long = strict.post("/compare", json={"a": "x" * 201, "b": "y"}, headers=AUTH)
    assert too_long.status_code == 413 and too_long.json()["detail"].startswith("a: 201 characters")
    big = strict.post("/search", content=b'{"code": "' + b"x" * 3000 + b'"}', headers=AUTH)
    assert big.status_code == 413 and "2000 bytes" in big.json()["detail"]

    def chunks():
        yield b'{"code": "'
        for _ in range(30):
            yield b"x" * 100
        yield b'"}'

    streamed = strict.post("/search", content=chunks(), headers={**AUTH, "content-type": "application/json"})
    assert streamed.status_code == 413
    assert strict.post("/search", json={"code": GCD, "k": 6}, headers=AUTH).status_code == 422
    assert strict.get("/clones", params={"limit": 3}, headers=AUTH).status_code == 422


def test_no_index_yet_then_picked_up(tmp_path, tiny_model, index_dir):
    from conba.serve import create_app

    folder = tmp_path / "later"
    with TestClient(create_app(folder, model=tiny_model, reload_interval=0)) as c:
        r = c.post("/search", json={"code": GCD})
        assert r.status_code == 503 and "no index here yet" in r.json()["detail"]
        assert c.post("/compare", json={"a": GCD, "b": JAVA}).status_code == 200  # no index needed
        assert "no index" in c.get("/health").json()["index"]["error"]
        shutil.copytree(index_dir, folder)
        assert c.post("/search", json={"code": GCD}).status_code == 200


def test_serving_an_index_built_with_another_view_uses_that_view(tmp_path, tiny_model):
    from conba.index import Index
    from conba.model import load_model
    from conba.serve import create_app

    assert getattr(load_model(tiny_model), "view", "raw") != "code"
    with Index(tmp_path / "idx", model=tiny_model, view="code") as idx:
        idx.add([EXAMPLE / "python"] if (EXAMPLE / "python").is_dir() else [EXAMPLE])
    with TestClient(create_app(tmp_path / "idx", reload_interval=0)) as c:
        health = c.get("/health").json()
        assert health["model"]["view"] == "code"
        hits = c.post("/search", json={"code": GCD, "k": 3}).json()
    assert len(hits["hits"]) == 3


def test_the_module_docstring_lists_every_endpoint(client):
    """The endpoint list in conba.serve.app's docstring is the app's own (a new route is listed or fails)."""
    import conba.serve.app as app_module

    schema = client.get("/openapi.json").json()
    routes = {f"{method.upper()} {path}" for path, ops in schema["paths"].items() for method in ops}
    doc = " ".join(app_module.__doc__.split())
    missing = sorted(r for r in routes if f"``{r}``" not in doc)
    assert not missing, f"conba/serve/app.py docstring does not list {missing}"
