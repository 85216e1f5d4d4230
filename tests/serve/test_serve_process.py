"""A real `conba serve` process (uvicorn on a free 127.0.0.1 port) driven by `conba.Client`: every
call, the token, and searches while a `conba index` process re-indexes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow  # a module fixture trains / starts servers for every test here


pytest.importorskip("fastapi", reason="conba serve needs FastAPI: pip install 'conba[serve]'")
pytest.importorskip("httpx", reason="conba.Client needs httpx: pip install 'conba[serve]'")

ROOT = Path(__file__).resolve().parents[2]
QUERY = "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n"
NEW_CODE = "".join(f"def brand_new_{i}(xs):\n    return [x * {i} for x in xs if x > {i}]\n\n" for i in range(8))
TOKEN = "t0ken"


def _wait_up(client, proc, log: Path, timeout: float = 90) -> dict:
    import httpx

    deadline = time.monotonic() + timeout
    while True:
        assert proc.poll() is None, log.read_text()[-3000:]
        assert time.monotonic() < deadline, "server did not come up: " + log.read_text()[-3000:]
        try:
            health = client.health()
            if health["status"] != "loading":  # conba serve listens at once and loads behind
                return health
        except httpx.TransportError:
            pass
        time.sleep(0.2)


@pytest.fixture(scope="module")
def server(tmp_path_factory, tiny_model):
    import conba
    from conba.index import Index
    from conba.serve.server import free_port

    tmp = tmp_path_factory.mktemp("served")
    proj, folder = tmp / "proj", tmp / "idx"
    shutil.copytree(ROOT / "examples" / "polyglot", proj)
    with Index(folder, model=tiny_model) as idx:
        idx.add([proj])
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), CONBA_TOKEN=TOKEN, TOKENIZERS_PARALLELISM="false")
    log = tmp / "server.log"
    cmd = [sys.executable, "-m", "conba.cli.main", "serve", "--index", str(folder), "--port", str(port),
           "--reload-interval", "0.2", "--log-level", "warning"]
    with log.open("w") as fh:
        proc = subprocess.Popen(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT)
    client = conba.Client(f"http://127.0.0.1:{port}", token=TOKEN)
    try:
        _wait_up(client, proc, log)
        yield client, proj, folder, env
    finally:
        client.close()
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_client_calls_every_endpoint(server, tiny_model):
    from conba.model import load_model

    client, *_ = server
    health = client.health()
    model = load_model(tiny_model)
    assert health["model"]["fingerprint"] == model.embedding_fingerprint() and health["index"]["functions"] == 51
    hits = client.search(QUERY, k=4, result_language="go", include_code=True)
    assert len(hits) == 4 and {h["language"] for h in hits} == {"go"} and all(h["code"] for h in hits)
    result = client.compare(QUERY, "func gcd(a, b int) int { return a }", language_b="go", threshold=0.1)
    assert set(result) == {"score", "threshold", "clone", "languages"} and result["threshold"] == 0.1
    vectors = client.encode([QUERY, "int f() { return 1; }"], languages=["python", "java"])
    np.testing.assert_allclose(vectors, model.encode([QUERY, "int f() { return 1; }"], languages=["python", "java"]),
                               atol=1e-5)
    assert client.encode(QUERY).shape == (model.dim,)
    page = client.clones(threshold=0.5, limit=1)
    every = list(client.iter_clones(threshold=0.5, page_size=1))
    assert len(every) == page["total"] >= 1
    assert "<html" in client.report(threshold=0.5)


def test_client_errors(server):
    import conba
    from conba.client import ServerError

    client, *_ = server
    with pytest.raises(ServerError) as err:
        client.search(QUERY, result_language="klingon")
    assert err.value.status == 422 and "unknown language" in err.value.detail
    with conba.Client(client.url, token="wrong") as bad, pytest.raises(ServerError) as err:
        bad.health()
    assert err.value.status == 401


def test_search_during_reindex_then_reload(server):
    from conba.index.storage.lock import holder

    client, proj, folder, env = server
    before = client.search(QUERY, k=51)
    generation = client.health()["index"]["generation"]
    victim = sorted(proj.rglob("*.py"))[0]
    victim.write_text(NEW_CODE)
    writer_env = dict(env, CONBA_INDEX_COMMIT_EVERY="2", CONBA_INDEX_TEST_DELAY="0.3")
    writer = subprocess.Popen([sys.executable, "-m", "conba.cli.main", "index", str(proj), "--index", str(folder)],
                              env=writer_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    during = 0
    try:
        while writer.poll() is None:
            if holder(folder) is not None:  # the writer holds the lock and is rewriting the index
                hits = client.search(QUERY, k=51)
                if holder(folder) is not None:  # still held after the answer: no reload could happen
                    assert hits == before
                    during += 1
            time.sleep(0.05)
    finally:
        if writer.poll() is None:
            writer.kill()
        _, err = writer.communicate()
    assert writer.returncode == 0, err.decode()[-2000:]
    assert during >= 1
    deadline = time.monotonic() + 30
    while client.health()["index"]["generation"] == generation:
        assert time.monotonic() < deadline, "the re-indexed index was never loaded"
        time.sleep(0.1)
    names = {h["name"] for h in client.search(NEW_CODE.split("\n\n")[3], k=5)}
    assert any(n.startswith("brand_new_") for n in names)


def test_import_conba_stays_light():
    code = ("import sys, conba; conba.Client; "
            "print(sorted(m for m in ('torch', 'numpy', 'fastapi', 'httpx') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(ROOT / "src")),
                         capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr


def test_serve_help_names_the_token_env():
    from click.testing import CliRunner

    from conba.cli.main import cli

    out = CliRunner().invoke(cli, ["serve", "--help"])
    assert out.exit_code == 0 and "CONBA_TOKEN" in out.output and "127.0.0.1" in out.output


def test_serve_on_a_busy_port_is_a_one_line_error_before_the_model_loads(tmp_path):
    import socket

    from click.testing import CliRunner

    from conba.cli.main import cli

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = str(taken.getsockname()[1])
        res = CliRunner().invoke(cli, ["serve", "--port", port, "-i", str(tmp_path / "no-index"),
                                       "-m", str(tmp_path / "no-model")])  # neither is looked at
    assert res.exit_code == 1 and "Traceback" not in res.output, res.output
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use; is another server there?" in res.output


def test_health_answers_loading_while_the_app_builds_and_requests_wait_for_it():
    """conba serve listens before its model is loaded (conba.serve.starting): /health says "loading", any
    other request waits and is answered by the app once built; a failed build is a 503 and stops the server."""
    import threading

    import httpx
    from fastapi import FastAPI

    from conba.serve.server import BackgroundServer
    from conba.serve.starting import StartingApp

    release, seen = threading.Event(), []

    def build():
        release.wait(30)
        app = FastAPI()
        app.get("/health")(lambda: {"status": "ok"})
        app.get("/search")(lambda: {"hits": []})
        return app

    front = StartingApp(build, loading="loading the model of idx", on_ready=lambda app, s: seen.append(s),
                        token="s3cret")
    with BackgroundServer(front) as url:
        assert httpx.get(f"{url}/health").status_code == 401  # the token is asked for while loading too
        auth = {"Authorization": "Bearer s3cret"}
        loading = httpx.get(f"{url}/health", headers=auth).json()
        assert loading["status"] == "loading" and loading["detail"] == "loading the model of idx"
        threading.Timer(0.3, release.set).start()
        assert httpx.get(f"{url}/search", timeout=30).json() == {"hits": []}  # waited for the app
        assert httpx.get(f"{url}/health").json() == {"status": "ok"} and len(seen) == 1

    stopped = []

    def broken():
        raise OSError("idx: no such index")

    failing = StartingApp(broken, loading="x", stop=lambda: stopped.append(True))
    with BackgroundServer(failing) as url:
        for _ in range(100):
            if failing.error is not None:
                break
            time.sleep(0.02)
        answer = httpx.get(f"{url}/search")
        assert answer.status_code == 503 and "no such index" in answer.json()["detail"] and stopped == [True]


@pytest.mark.slow
def test_conba_serve_answers_health_within_3_s_of_start(tmp_path, tiny_model):
    """The address at once, /health within 3 s of the process start (the model loads behind it)."""
    import httpx

    from conba.index import Index
    from conba.serve.server import free_port

    with Index(tmp_path / "idx", model=tiny_model) as idx:
        idx.add([ROOT / "examples" / "polyglot" / "python"])
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), TOKENIZERS_PARALLELISM="false")
    log = tmp_path / "server.log"
    cmd = [sys.executable, "-m", "conba.cli.main", "serve", "--index", str(tmp_path / "idx"), "--port", str(port),
           "--log-level", "warning"]
    start = time.monotonic()
    with log.open("w") as fh:
        proc = subprocess.Popen(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT)
    try:
        first = None
        while first is None and time.monotonic() - start < 60:
            try:
                first = httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).json()
            except httpx.TransportError:
                time.sleep(0.05)
        took = time.monotonic() - start
        assert first is not None and first["status"] in ("loading", "ok"), log.read_text()
        assert took < 3.0, f"/health answered after {took:.1f} s"
        assert f"http://127.0.0.1:{port}" in log.read_text().splitlines()[0]  # the address, first
    finally:
        proc.terminate()
        proc.wait(timeout=30)
