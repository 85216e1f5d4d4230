"""Issue 49 rows 7 and 10: the per-request work cap of `conba serve` holds on every endpoint that encodes or maps
(a file of 3,000 functions to /search/files is a 413 before anything is encoded; /map past its pairs is a 413),
and CONBA_IVF_NLIST / CONBA_IVF_NPROBE are bounded and refused in one line everywhere (serve included)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("fastapi", reason="conba serve needs FastAPI: pip install 'conba[serve]'")
from fastapi.testclient import TestClient  # noqa: E402

from conba.cli.main import cli  # noqa: E402
from conba.errors import ConfigError  # noqa: E402
from conba.index.vectors.ivf import ENV_MAX, check_env, nlist_setting, nprobe_for  # noqa: E402
from conba.serve.limits import Limits  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "polyglot"


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory, tiny_model) -> Path:
    from conba.index import Index

    folder = tmp_path_factory.mktemp("serve-work") / "idx"
    with Index(folder, model=tiny_model) as idx:
        idx.add([EXAMPLE])
    return folder


@pytest.fixture(scope="module")
def client(index_dir):
    from conba.serve import create_app

    with TestClient(create_app(index_dir, reload_interval=0, limits=Limits(max_map_pairs=50))) as c:
        yield c


def test_a_file_of_many_functions_is_refused_before_it_is_encoded(client, monkeypatch):
    state = client.app.state.conba
    encoded: list[int] = []
    real = state.batcher.encode

    async def counting(codes, *args, **kwargs):
        encoded.append(len(codes))
        return await real(codes, *args, **kwargs)

    monkeypatch.setattr(state.batcher, "encode", counting)
    many = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(3000))  # 90 KB: under the body limit
    r = client.post("/search/files", json={"code": many, "query_language": "python"})
    assert r.status_code == 413, r.text
    assert "3000 functions to encode, the limit is 64 per request" in r.json()["detail"] and encoded == []
    huge = "def f(x):\n    return x + " + "1 + " * 6000 + "1\n"  # one function over max_chars
    r = client.post("/search/files", json={"code": huge, "query_language": "python"})
    assert r.status_code == 413 and "the limit is 20000 per function" in r.json()["detail"] and encoded == []
    few = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(64))  # at the cap: answered
    r = client.post("/search/files", json={"code": few, "query_language": "python", "k": 2})
    assert r.status_code == 200 and encoded == [64], r.text


def test_map_past_its_pairs_is_a_413(client):
    r = client.post("/map", json={"source_language": "python", "target_language": "java"})
    assert r.status_code == 413, r.text
    assert "target functions to score, the limit is 50 pairs per request" in r.json()["detail"]
    assert client.get("/health").json()["limits"]["max_map_pairs"] == 50


@pytest.mark.parametrize("value", [str(2 ** 63), str(ENV_MAX + 1), "abc", "0", "-3", "1e3", "6\n4"])
def test_ivf_settings_are_bounded_and_one_line(monkeypatch, value):
    monkeypatch.setenv("CONBA_IVF_NPROBE", value)
    with pytest.raises(ConfigError, match="CONBA_IVF_NPROBE=.*: not a positive whole number up to") as err:
        nprobe_for({"nprobe": 64})
    assert "\n" not in str(err.value)
    with pytest.raises(ConfigError):
        check_env()
    monkeypatch.delenv("CONBA_IVF_NPROBE")
    monkeypatch.setenv("CONBA_IVF_NLIST", value)
    with pytest.raises(ConfigError, match="CONBA_IVF_NLIST=.*: not a positive whole number up to"):
        nlist_setting(10 ** 6)


def test_ivf_settings_at_the_bound_are_taken(monkeypatch):
    monkeypatch.setenv("CONBA_IVF_NPROBE", str(ENV_MAX))
    assert nprobe_for({"nprobe": 64}) == ENV_MAX
    check_env()


@pytest.mark.parametrize("value", ["abc", str(2 ** 63)])
def test_serve_refuses_a_bad_ivf_setting_at_start_in_one_line(index_dir, tiny_model, monkeypatch, value):
    import conba.serve.server

    monkeypatch.setattr(conba.serve.server, "run", lambda *a, **k: print("started"))  # never serve forever here
    monkeypatch.setattr(conba.serve.server, "run_starting", lambda *a, **k: print("started"))
    monkeypatch.setenv("CONBA_IVF_NPROBE", value)
    res = CliRunner().invoke(cli, ["serve", "--index", str(index_dir), "--port", "0"])
    assert res.exit_code == 1 and "Traceback" not in res.output, res.output
    assert res.output.strip().splitlines() == [f"Error: CONBA_IVF_NPROBE={value}: not a positive whole number "
                                               f"up to {ENV_MAX}"]
