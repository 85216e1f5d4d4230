"""`conba serve` under bad input: invalid Unicode, strict types, the token before the body, one
threshold for the server and the CLI."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("fastapi", reason="conba serve needs FastAPI: pip install 'conba[serve]'")
from fastapi.testclient import TestClient  # noqa: E402

GCD = "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n"
SURROGATE = b'{"code": "x = \\"\\udcff\\""}'
JSON = {"content-type": "application/json"}


@pytest.fixture(scope="module")
def calibrated(tiny_model, tmp_path_factory) -> str:
    """The tiny model with an F1 threshold (0.2) and a calibrated clone threshold (0.9) that differ."""
    from conba.model import load_model

    m = load_model(tiny_model)
    m.threshold, m.clone_threshold = 0.2, {"value": 0.9, "precision": 0.95}
    return str(m.save(tmp_path_factory.mktemp("calibrated")))


@pytest.fixture(scope="module")
def client(calibrated, tmp_path_factory):
    from conba.serve import create_app

    app = create_app(tmp_path_factory.mktemp("empty") / "idx", model=calibrated, token="s3cret", reload_interval=0)
    with TestClient(app, headers={"Authorization": "Bearer s3cret"}) as c:
        yield c


@pytest.mark.parametrize("path, body", [
    ("/search", SURROGATE),
    ("/compare", b'{"a": "ok", "b": "\\ud800 bad"}'),
    ("/encode", b'{"snippets": ["fine", "\\udcff"]}'),
    ("/search", b'{"code": "x", "result_language": "\\udcff"}'),
])
def test_lone_surrogates_get_422_with_the_reason(client, path, body):
    r = client.post(path, content=body, headers=JSON)
    assert r.status_code == 422, r.text
    assert "lone surrogate" in r.json()["detail"] and "line 1" in r.json()["detail"]


def test_a_byte_order_mark_is_dropped(client):
    plain = client.post("/encode", json={"snippets": [GCD]}).json()["vectors"]
    bom = client.post("/encode", json={"snippets": ["\ufeff" + GCD]}).json()["vectors"]
    assert plain == bom


def test_bad_requests_mixed_with_good_ones_fail_alone(client):
    def send(i: int) -> tuple[bool, int]:
        bad = i % 5 == 0
        if bad:
            r = client.post("/encode", content=SURROGATE.replace(b'"code": "', b'"snippets": ["')
                            .replace(b'"}', b'"]}'), headers=JSON)
        else:
            r = client.post("/encode", json={"snippets": [f"def f{i}(x):\n    return x + {i}\n"]})
        return bad, r.status_code

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(send, range(40)))
    assert [s for bad, s in results if not bad] == [200] * 32
    assert [s for bad, s in results if bad] == [422] * 8


@pytest.mark.parametrize("body, words", [
    (b'{"code": "x", "k": "5"}', "k: Input should be a valid integer"),
    (b'{"code": "x", "k": true}', "k: Input should be a valid integer"),
    (b'{"code": "x", "k": 2.0}', "k: Input should be a valid integer"),
    (b'{"code": "x", "include_code": "yes"}', "include_code: Input should be a valid boolean"),
])
def test_types_are_strict(client, body, words):
    r = client.post("/search", content=body, headers=JSON)
    assert r.status_code == 422 and words in r.json()["detail"], r.text


def test_a_bad_token_is_answered_before_a_bad_body(client):
    for body in (b"{not json", b'{"code": 1}', SURROGATE):
        r = client.post("/search", content=body, headers={**JSON, "Authorization": "Bearer nope"})
        assert r.status_code == 401, (body, r.text)
        r = client.post("/search", content=body, headers={"content-type": "application/json",
                                                             "Authorization": ""})
        assert r.status_code == 401, (body, r.text)
    assert client.post("/search", content=b"{not json", headers=JSON).status_code == 400


def test_server_and_cli_agree_on_auto_threshold(client, calibrated):
    from click.testing import CliRunner

    from conba.cli.main import cli

    a, b = GCD, "int gcd(int a, int b) { return b == 0 ? a : gcd(b, a % b); }"
    served = client.post("/compare", json={"a": a, "b": b, "threshold": "auto"}).json()
    run = CliRunner().invoke(cli, ["compare", "--snippets", a, b, "-m", calibrated, "--json"])
    assert run.exit_code == 0, run.output
    local = json.loads(run.output)
    assert served["threshold"] == local["threshold"] == 0.9
    assert served["clone"] == local["clone"] and served["score"] == pytest.approx(local["score"], abs=1e-3)
    explicit = client.post("/compare", json={"a": a, "b": b, "threshold": 0.5}).json()
    assert explicit["threshold"] == 0.5
