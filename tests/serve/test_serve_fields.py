"""One meaning per HTTP field, the CLI's: ``query_language`` is the query's, ``result_language`` filters the hits.

The old name ``language`` still works and is answered as deprecated (a ``warnings`` entry, a ``Deprecation``
header, a server log line); ``conba.Client`` sends the new names; every request field of the API has a
description and an example; ``conba serve --help`` lists every route of the app.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="conba serve needs FastAPI: pip install 'conba[serve]'")
from click.testing import CliRunner  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "polyglot"
GCD = "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n"


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory, tiny_model) -> Path:
    from conba.index import Index

    folder = tmp_path_factory.mktemp("serve-fields") / "idx"
    with Index(folder, model=tiny_model) as idx:
        idx.add([EXAMPLE])
    return folder


@pytest.fixture(scope="module")
def app(index_dir):
    from conba.serve import create_app

    return create_app(index_dir, reload_interval=0)


@pytest.fixture(scope="module")
def client(app):
    with TestClient(app) as c:
        yield c


def _languages(body: dict) -> set[str]:
    return {h["language"] for h in body["hits"]}


@pytest.mark.slow
def test_query_language_reads_the_query_and_result_language_filters_the_hits(client):
    mixed = client.post("/search", json={"code": GCD, "query_language": "python", "k": 20})
    java = client.post("/search", json={"code": GCD, "query_language": "python", "result_language": "java"})
    assert mixed.status_code == java.status_code == 200, mixed.text + java.text
    assert len(_languages(mixed.json())) >= 3  # the query's language filters nothing
    assert _languages(java.json()) == {"java"} and "warnings" not in java.json()
    assert "deprecation" not in {k.lower() for k in java.headers}


@pytest.mark.slow
def test_the_old_name_still_filters_and_is_answered_as_deprecated(client, caplog):
    new = client.post("/search", json={"code": GCD, "result_language": "go", "k": 3}).json()
    with caplog.at_level(logging.WARNING, logger="uvicorn.error"):
        old = client.post("/search", json={"code": GCD, "language": "go", "k": 3})
    assert old.status_code == 200 and old.json()["hits"] == new["hits"]
    assert old.headers["Deprecation"] == "true"
    (message,) = old.json()["warnings"]
    assert "'language' is deprecated" in message and "result_language" in message and "query_language" in message
    assert any("POST /search" in r.getMessage() and "'language' is deprecated" in r.getMessage()
               for r in caplog.records)
    same = client.post("/search", json={"code": GCD, "language": "go", "result_language": "go", "k": 3})
    assert same.status_code == 200 and same.json()["warnings"]
    clash = client.post("/search", json={"code": GCD, "language": "go", "result_language": "java"})
    assert clash.status_code == 422 and "send result_language only" in clash.json()["detail"]


@pytest.mark.slow
def test_file_search_has_the_same_names(client):
    query = str(EXAMPLE / "python" / "roman.py")
    new = client.post("/search/files", json={"file": query, "result_language": "java"})
    old = client.post("/search/files", json={"file": query, "language": "java"})
    assert new.status_code == old.status_code == 200, new.text
    assert _languages(new.json()) == {"java"} and "warnings" not in new.json()
    assert old.json()["hits"] == new.json()["hits"] and old.headers["Deprecation"] == "true"
    assert "'language' is deprecated" in old.json()["warnings"][0]


@pytest.mark.slow
def test_the_client_sends_the_new_names_and_warns_on_the_old(client, monkeypatch):
    import conba

    c = conba.Client("http://testserver")
    monkeypatch.setattr(c, "_http", client)  # the client's calls through the in-process app
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning with the new names
        hits = c.search(GCD, k=3, query_language="python", result_language="java")
        files = c.search_files(file=str(EXAMPLE / "python" / "roman.py"), result_language="go")
    assert {h["language"] for h in hits} == {"java"} and _languages(files) == {"go"}
    with pytest.warns(DeprecationWarning, match="result_language"):
        old = c.search(GCD, k=3, language="java")
    assert old == hits
    with pytest.raises(ValueError, match="result_language only"):
        c.search(GCD, language="java", result_language="go")


def _request_fields(schema: dict) -> list[tuple[str, dict]]:
    """(where, field schema) of every request body property and query parameter in an OpenAPI schema."""
    comps = schema["components"]["schemas"]
    out = []
    for path, ops in schema["paths"].items():
        for method, op in ops.items():
            for param in op.get("parameters", []):
                out.append((f"{method.upper()} {path} ?{param['name']}", {**param.get("schema", {}), **param}))
            ref = (op.get("requestBody", {}).get("content", {}).get("application/json", {})
                   .get("schema", {}).get("$ref"))
            if ref:
                model = comps[ref.rsplit("/", 1)[-1]]
                out += [(f"{method.upper()} {path} {name}", prop) for name, prop in model["properties"].items()]
    return out


def test_every_request_field_has_a_description_and_an_example():
    from conba.serve.describe import schema_app

    fields = _request_fields(schema_app().openapi())
    assert len(fields) >= 30  # the bodies of search, compare, encode, map, file search and the GET parameters
    bare = [where for where, f in fields if not f.get("description") or not (f.get("examples") or "example" in f)]
    assert not bare, f"request fields without a description or an example: {bare}"


def test_the_finder_sees_a_field_without_an_example():
    schema = {"components": {"schemas": {"B": {"properties": {"x": {"description": "an x"}}}}},
              "paths": {"/p": {"post": {"requestBody": {"content": {"application/json": {
                  "schema": {"$ref": "#/components/schemas/B"}}}}}}}}
    assert _request_fields(schema) == [("POST /p x", {"description": "an x"})]


@pytest.mark.slow
def test_the_described_app_has_the_served_apps_routes(client):
    from conba.serve.describe import schema_app

    served = client.get("/openapi.json").json()
    assert served["paths"] == schema_app().openapi()["paths"]


def test_serve_help_lists_every_route_of_the_app():
    from conba.cli.main import cli
    from conba.serve.describe import schema_app

    out = CliRunner().invoke(cli, ["serve", "--help"], terminal_width=200)
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())
    routes = [f"{m.upper()} {p}" for p, ops in schema_app().openapi()["paths"].items() for m in ops]
    assert len(routes) >= 9 and {"POST /map", "POST /search/files", "GET /clones/files"} <= set(routes)
    missing = [r for r in [*routes, "GET /", "GET /docs"] if f" {r} " not in text]
    assert not missing, f"conba serve --help does not list {missing}"
