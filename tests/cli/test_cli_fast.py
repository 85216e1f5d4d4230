"""``--fast`` (``conba index``, ``serve``, ``encode``): shorthand for ``-m default-fast --engine onnx``,
refusing an explicit ``-m`` / ``--engine`` that says otherwise (tiny model; the real student is not loaded)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

from conba.cli import options
from conba.cli.main import cli

SOURCES = {
    "mathlib.py": "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n",
    "Util.java": "class Util {\n  static int gcd(int a, int b) {\n    return b == 0 ? a : gcd(b, a % b);\n  }\n}\n",
}


def run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, list(args), env=env)


class Stop(Exception):
    """Raised by the spies once they have seen the arguments: nothing is loaded or encoded."""


@pytest.fixture()
def index_args(monkeypatch) -> dict[str, Any]:
    """The arguments `conba index` opens its Index with."""
    seen: dict[str, Any] = {}

    def spy(folder, **kwargs):
        seen.update(kwargs, folder=folder)
        raise Stop

    monkeypatch.setattr("conba.index.Index", spy)
    return seen


@pytest.fixture()
def serve_args(monkeypatch) -> dict[str, Any]:
    """The arguments `conba serve` builds its app with (no server is started)."""
    pytest.importorskip("fastapi")
    seen: dict[str, Any] = {}

    def app(folder, model, **kwargs):
        seen.update(kwargs, folder=folder, model=model)
        state = SimpleNamespace(model_name=str(model), batcher=SimpleNamespace(workers=1),
                                model=SimpleNamespace(device="cpu"), engine=kwargs.get("engine") or "torch")
        return SimpleNamespace(state=SimpleNamespace(conba=state))

    monkeypatch.setattr("conba.serve.app.create_app", app)
    monkeypatch.setattr("conba.serve.server.run_starting", lambda build, **k: build())  # builds, serves nothing
    return seen


def test_help_says_what_fast_expands_to():
    for cmd in ("index", "serve", "encode"):
        out = CliRunner().invoke(cli, [cmd, "--help"], terminal_width=400).output
        assert "--fast" in out and "shorthand for -m default-fast --engine onnx" in out, cmd
    assert (options.FAST_MODEL, options.FAST_ENGINE) == ("default-fast", "onnx")


@pytest.mark.parametrize("extra", [[], ["-m", "default-fast"], ["--engine", "onnx"],
                                   ["-m", "default-fast", "--engine", "onnx"]])
def test_index_fast_expands(tmp_path, index_args, extra):
    result = run("index", str(tmp_path), "--index", str(tmp_path / "idx"), "--fast", *extra)
    assert isinstance(result.exception, Stop), result.output
    assert index_args["model"] == "default-fast" and index_args["engine"] == "onnx"


def test_fast_overrides_the_model_environment_variable(tmp_path, index_args):
    result = run("index", str(tmp_path), "--index", str(tmp_path / "idx"), "--fast", env={"CONBA_MODEL": "default"})
    assert isinstance(result.exception, Stop), result.output
    assert index_args["model"] == "default-fast" and index_args["engine"] == "onnx"


def test_without_fast_nothing_changes(tmp_path, index_args):
    run("index", str(tmp_path), "--index", str(tmp_path / "idx"))
    assert index_args["model"] is None and index_args["engine"] is None


@pytest.mark.parametrize("cmd", ["index", "serve", "encode"])
@pytest.mark.parametrize("extra,flag", [(["-m", "default"], "-m/--model default"),
                                        (["--engine", "torch"], "--engine torch"),
                                        (["--model", "default-fast", "--engine", "onnx-fp32"], "--engine onnx-fp32")])
def test_fast_conflicts_with_an_explicit_model_or_engine(tmp_path, cmd, extra, flag, index_args):
    args = {"index": [str(tmp_path), "--index", str(tmp_path / "idx")], "serve": ["--index", str(tmp_path / "idx")],
            "encode": ["-"]}[cmd]
    result = run(cmd, *args, *extra, "--fast")
    assert result.exit_code == 2, result.output
    error = result.output.strip().splitlines()[-1]
    assert error == f"Error: --fast means -m default-fast --engine onnx: it conflicts with {flag}"
    assert not index_args and not (tmp_path / "idx").exists()


def test_serve_fast_and_engine_parsing(serve_args, tmp_path):
    folder = str(tmp_path / "idx")
    assert run("serve", "--index", folder, "--fast").exit_code == 0
    assert serve_args["model"] == "default-fast" and serve_args["engine"] == "onnx"
    assert run("serve", "--index", folder).exit_code == 0
    assert serve_args["model"] is None and serve_args["engine"] is None  # the index's model and engine
    assert run("serve", "--index", folder, "--engine", "onnx-fp32").exit_code == 0
    assert serve_args["engine"] == "onnx-fp32"
    bad = run("serve", "--index", folder, "--engine", "tensorrt")
    assert bad.exit_code == 2 and "Invalid value for '--engine'" in bad.output


def test_encode_fast_loads_the_student_and_runs_onnx(monkeypatch):
    seen: dict[str, Any] = {}

    class Model:
        def encode(self, codes, languages, batch_size, engine):
            seen["engine"] = engine
            import numpy as np

            return np.ones((len(codes), 4), dtype="float32")

    def load(model, view, *placement, **kwargs):  # placement: --device, --dtype, the engine
        seen["model"] = model
        return Model()

    monkeypatch.setattr("conba.cli.encode_cmd.load", load)
    result = CliRunner().invoke(cli, ["encode", "-", "-l", "python", "--fast"], input="def f(): return 1\n")
    assert result.exit_code == 0, result.output
    assert seen == {"model": "default-fast", "engine": "onnx"}
    assert len(json.loads(result.output)["embedding"]) == 4


@pytest.fixture()
def project(tmp_path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    for name, text in SOURCES.items():
        (root / name).write_text(text)
    return root


def test_a_fast_index_records_the_student_and_onnx(project, tiny_model, tmp_path, monkeypatch):
    """End to end with the tiny model standing in for the student: the index records the model and the
    int8 engine, search uses them without flags, and the existing mismatch errors hold."""
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    monkeypatch.setattr(options, "FAST_MODEL", tiny_model)
    folder = str(tmp_path / "idx")
    result = run("index", str(project), "--index", folder, "--fast")
    assert result.exit_code == 0, result.output
    assert "(engine onnx)" in result.output
    manifest = json.loads((Path(folder) / "manifest.json").read_text())
    assert manifest["engine"] == "onnx" and manifest["model"] == tiny_model

    from conba.model import ConbaModel

    engines: list[str] = []
    encode = ConbaModel.encode

    def spy(self, *args, engine: str = "torch", **kwargs):
        engines.append(engine)
        return encode(self, *args, engine=engine, **kwargs)

    monkeypatch.setattr(ConbaModel, "encode", spy)
    found = run("search", "--code", "def gcd(x, y):\n    return x if not y else gcd(y, x % y)\n",
                "--query-language", "python", "--index", folder)
    assert found.exit_code == 0, found.output
    assert engines == ["onnx"] and json.loads(found.output.splitlines()[0])["name"]

    other = run("index", str(project), "--index", folder, "--model", tiny_model, "--engine", "torch")
    assert other.exit_code == 1 and "built with engine onnx, not torch" in other.output
    torch_folder = str(tmp_path / "torch-idx")
    assert run("index", str(project), "--index", torch_folder, "--model", tiny_model).exit_code == 0
    fast_on_torch = run("index", str(project), "--index", torch_folder, "--fast")
    assert fast_on_torch.exit_code == 1 and "built with engine torch, not onnx" in fast_on_torch.output

    pytest.importorskip("fastapi")
    from conba.serve.app import create_app

    state = create_app(torch_folder, tiny_model, engine="onnx", reload_interval=0).state.conba
    assert state.engine == "onnx" and not state.holder.refresh()
    assert "built with engine torch, not onnx" in state.holder.error
