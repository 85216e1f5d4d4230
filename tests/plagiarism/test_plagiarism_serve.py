"""`POST /plagiarism` of `conba serve` and `conba.check_plagiarism`: the command's records, the caps."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="conba serve needs FastAPI: pip install 'conba[serve]'")
from fastapi.testclient import TestClient  # noqa: E402

pytestmark = pytest.mark.slow  # a served index (model load); the check itself is tested in test_plagiarism.py

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "assignment"


def _body() -> dict:
    subs = []
    for entry in sorted((EXAMPLE / "submissions").iterdir()):
        files = [entry] if entry.is_file() else sorted(entry.iterdir())
        subs.append({"name": entry.name, "files": [{"path": f.name, "code": f.read_text()} for f in files]})
    starter = EXAMPLE / "starter" / "grades.py"
    return {"submissions": subs, "base": {"name": "starter", "files": [{"path": "grades.py",
                                                                        "code": starter.read_text()}]}}


@pytest.fixture(scope="module")
def client(tmp_path_factory, tiny_model):
    from conba.index import Index
    from conba.serve import create_app

    folder = tmp_path_factory.mktemp("serve-plagiarism") / "idx"
    with Index(folder, model=tiny_model) as idx:
        idx.add([EXAMPLE / "starter"])
    with TestClient(create_app(folder, reload_interval=0)) as c:
        yield c


def test_plagiarism_endpoint_agrees_with_the_api(client):
    import conba

    r = client.post("/plagiarism", json=_body())
    assert r.status_code == 200, r.text
    body = r.json()
    local = conba.check_plagiarism(EXAMPLE / "submissions", base=EXAMPLE / "starter")
    assert [(p["a"], p["b"]) for p in body["pairs"]] == [(p.a, p.b) for p in local.pairs]
    assert [p["score"] for p in body["pairs"]] == [round(p.score, 6) for p in local.pairs]
    assert body["clusters"] == local.clusters and body["summary"]["submissions"] == 6


def test_plagiarism_endpoint_caps_and_errors(client, monkeypatch):
    from conba.serve import plagiarism_routes

    one = _body()
    one["submissions"] = one["submissions"][:1]
    r = client.post("/plagiarism", json=one)
    assert r.status_code == 422 and "at least 2" in r.json()["detail"]
    bad = _body()
    bad["submissions"][0]["files"][0]["path"] = "notes.txt"
    r = client.post("/plagiarism", json=bad | {"base": None})
    assert r.status_code == 200 and r.json()["skipped"] == [{"name": "alice.py/notes.txt",
                                                            "reason": "unsupported language"}]
    monkeypatch.setattr(plagiarism_routes, "MAX_SUBMISSIONS", 3)
    r = client.post("/plagiarism", json=_body())
    assert r.status_code == 413 and "limit is 3" in r.json()["detail"]
