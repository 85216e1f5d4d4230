"""`conba index --engine`: the index records the engine of its vectors, encodes units and queries with
it, and refuses another engine's vectors (tiny model; ONNX tests skip without onnxruntime)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba.errors import ConfigError
from conba.index import EngineMismatchError, Index, ModelMismatchError
from conba.model import ConbaModel

SOURCES = {
    "mathlib.py": "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n\n"
                  "def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n",
    "Util.java": "class Util {\n  static int gcd(int a, int b) {\n    return b == 0 ? a : gcd(b, a % b);\n  }\n}\n",
    "sum.go": "package m\n\nfunc Total(xs []int) int {\n\ts := 0\n\tfor _, x := range xs {\n\t\ts += x\n\t}\n"
              "\treturn s\n}\n",
}


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("proj")
    for name, text in SOURCES.items():
        (root / name).write_text(text)
    return root


@pytest.fixture(scope="module")
def onnx_index(project, tiny_model, tmp_path_factory) -> str:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    folder = str(tmp_path_factory.mktemp("fp32") / "idx")
    result = run("index", str(project), "--index", folder, "--model", tiny_model, "--engine", "onnx-fp32")
    assert result.exit_code == 0, result.output
    assert "(engine onnx-fp32)" in result.output
    return folder


@pytest.fixture(scope="module")
def torch_index(project, tiny_model, tmp_path_factory) -> str:
    folder = str(tmp_path_factory.mktemp("torch") / "idx")
    result = run("index", str(project), "--index", folder, "--model", tiny_model)
    assert result.exit_code == 0, result.output
    return folder


def _vectors(folder: str) -> dict[str, np.ndarray]:
    with Index(folder, create=False) as idx:
        rows = idx.store.db.execute("SELECT hash, vector FROM vectors").fetchall()
    return {h: np.frombuffer(blob, dtype=np.float32) for h, blob in rows}


@pytest.fixture()
def engines_used(monkeypatch) -> list[str]:
    """The engine of every ConbaModel.encode call made during the test."""
    used: list[str] = []
    encode = ConbaModel.encode

    def spy(self, *args, engine: str = "torch", **kwargs):
        used.append(engine)
        return encode(self, *args, engine=engine, **kwargs)

    monkeypatch.setattr(ConbaModel, "encode", spy)
    return used


def test_the_manifest_and_stats_record_the_engine(onnx_index, torch_index):
    assert json.loads((Path(onnx_index) / "manifest.json").read_text())["engine"] == "onnx-fp32"
    assert json.loads((Path(torch_index) / "manifest.json").read_text())["engine"] == "torch"
    with Index(onnx_index, create=False) as idx:
        assert idx.engine == "onnx-fp32" and idx.stats()["engine"] == "onnx-fp32"


def test_onnx_fp32_vectors_are_torch_vectors_but_the_engines_differ(onnx_index, torch_index):
    onnx, exact = _vectors(onnx_index), _vectors(torch_index)
    assert set(onnx) == set(exact) and len(onnx) >= 4
    cos = np.array([float(onnx[h] @ exact[h]) for h in exact])
    assert cos.min() > 0.999
    with Index(onnx_index, create=False) as a, Index(torch_index, create=False) as b:
        assert a.manifest()["fingerprint"] == b.manifest()["fingerprint"]  # same model, other engine
        assert a.engine != b.engine


def test_search_encodes_the_query_with_the_index_engine(onnx_index, engines_used):
    result = run("search", "--code", "def gcd(x, y):\n    return x if not y else gcd(y, x % y)\n",
                 "--query-language", "python", "--index", onnx_index, "-k", "2")
    assert result.exit_code == 0, result.output
    hits = [json.loads(line) for line in result.output.splitlines()]
    assert len(hits) == 2 and all(h["name"] for h in hits)
    assert engines_used == ["onnx-fp32"]


def test_rerun_without_engine_keeps_the_index_engine(onnx_index, project, engines_used, tmp_path):
    extra = tmp_path / "more.py"
    extra.write_text("def double(x):\n    return 2 * x\n")
    result = run("index", str(project), str(extra), "--index", onnx_index, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["engine"] == "onnx-fp32" and report["units_encoded"] == 1
    assert set(engines_used) == {"onnx-fp32"}


def test_adding_with_another_engine_fails_in_one_line(onnx_index, project, tiny_model):
    before = (Path(onnx_index) / "manifest.json").read_bytes()
    result = run("index", str(project), "--index", onnx_index, "--model", tiny_model, "--engine", "torch")
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert "built with engine onnx-fp32, not torch" in lines[0]
    assert "--engine onnx-fp32" in lines[0] and "new folder" in lines[0]
    assert (Path(onnx_index) / "manifest.json").read_bytes() == before
    with pytest.raises(EngineMismatchError, match="engine onnx-fp32, not onnx") as err:
        Index(onnx_index, engine="onnx")
    assert isinstance(err.value, ModelMismatchError)  # callers handling model mismatches handle this too


@pytest.mark.slow
def test_an_old_index_without_the_field_reads_as_torch(project, tiny_model, tmp_path):
    folder = tmp_path / "old"
    with Index(folder, model=tiny_model) as idx:
        idx.add([project])
    manifest = json.loads((folder / "manifest.json").read_text())
    del manifest["engine"]  # as written before engines were recorded
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with Index(folder, create=False) as idx:
        idx.store.set_meta(engine=None)
        assert idx.engine == "torch" and idx.manifest()["engine"] == "torch"
        assert len(idx.search("def gcd(a, b): return a", k=1)) == 1
    with Index(folder, create=False, engine="torch") as idx:
        assert idx.engine == "torch"
    result = run("index", str(project), "--index", str(folder), "--engine", "onnx-fp32")
    assert result.exit_code == 1 and "built with engine torch, not onnx-fp32" in result.output
    pytest.importorskip("onnxruntime")
    result = run("index", str(project), "--index", str(folder), "--engine", "onnx-fp32", "--rebuild")
    assert result.exit_code == 0, result.output
    assert json.loads((folder / "manifest.json").read_text())["engine"] == "onnx-fp32"


def test_bad_engine_choice(project, tmp_path):
    result = run("index", str(project), "--index", str(tmp_path / "x"), "--engine", "tensorrt")
    assert result.exit_code == 2 and "Invalid value for '--engine'" in result.output
    assert not (tmp_path / "x").exists()
    with pytest.raises(ConfigError, match="unknown engine 'tensorrt'"):
        Index(tmp_path / "y", engine="tensorrt")


def test_cli_engine_names_are_the_engines():
    from conba.cli.options import ENGINE_NAMES
    from conba.engine import ENGINES

    assert ENGINE_NAMES == ENGINES


def test_ray_actor_encodes_with_the_engine(tiny_model, project):
    """The --ray path without a cluster: the actor encodes with the engine it is given, and ONNX
    engines get CPU actors even on a cluster with GPUs."""
    pytest.importorskip("onnxruntime")
    import torch

    from conba.index.scale.ray_encode import EncodeActor, RayEncoder, model_source
    from conba.model import load_model

    model = load_model(tiny_model)
    codes = np.array([SOURCES["mathlib.py"], SOURCES["Util.java"]], dtype=object)
    batch = {"hash": np.array(["a", "b"]), "language": np.array(["python", "java"]), "code": codes}
    threads = torch.get_num_threads()
    try:
        actor = EncodeActor(model_source(tiny_model, model.embedding_fingerprint()), 8, 1, engine="onnx-fp32")
    finally:
        torch.set_num_threads(threads)
    out = actor(batch)
    assert actor.engine == "onnx-fp32" and ("onnx-fp32", False) in actor.model._engines
    exact = model.encode(list(codes), languages=["python", "java"])
    assert (out["vector"] * exact).sum(1).min() > 0.999

    class Cluster:
        @staticmethod
        def cluster_resources() -> dict[str, float]:
            return {"CPU": 4.0, "GPU": 2.0}

    pool = RayEncoder.__new__(RayEncoder)
    pool.cpus_per_actor, pool.max_actors = 1, None
    assert pool._pool(Cluster, 10, "torch") == (2, {"num_gpus": 1, "num_cpus": 1}, 1)
    assert pool._pool(Cluster, 10, "onnx") == (4, {"num_cpus": 1}, 1)


def test_serve_encodes_with_the_index_engine(onnx_index):
    pytest.importorskip("fastapi")
    from conba.serve.app import create_app

    state = create_app(onnx_index, reload_interval=0).state.conba
    assert state.engine == "onnx-fp32" and state.holder.engine == "onnx-fp32"
