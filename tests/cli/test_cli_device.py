"""Every command that runs a model takes --device (and, for inference, --dtype), reading CONBA_DEVICE /
CONBA_DTYPE (issue 36); an index built in one precision is used in another."""

from __future__ import annotations

import json
from collections.abc import Iterator

import click
import numpy as np
import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba.cli.options import DEVICE_ENV, DTYPE_ENV, DTYPES, DeviceType

# Commands that run a model for inference: --device and --dtype.
INFERENCE = {"conba encode", "conba index", "conba search", "conba clones", "conba map", "conba serve", "conba mcp",
             "conba compare", "conba eval", "conba eval-repo", "conba calibrate", "conba bench speed",
             "conba bench gpu", "conba experiment noise"}
# Commands that train: --device only (weights train in float32; train uses bf16 autocast on CUDA).
TRAINING = {"conba train", "conba pretrain", "conba distill", "conba prune train", "conba experiment ablation",
            "conba experiment all", "conba experiment classifiers", "conba experiment fair",
            "conba experiment figures", "conba experiment temperature", "conba experiment windows"}
# Commands with -m/--model that run no model, and why.
NO_MODEL_RUN: dict[str, str] = {}


def _commands(group: click.Command = cli, path: str = "conba") -> Iterator[tuple[str, click.Command]]:
    if isinstance(group, click.Group):
        ctx = click.Context(group)
        for name in group.list_commands(ctx):
            yield from _commands(group.get_command(ctx, name), f"{path} {name}")
    else:
        yield path, group


def _flags(command: click.Command) -> set[str]:
    return {o for p in command.params if isinstance(p, click.Option) for o in p.opts}


def _help(path: str) -> str:
    result = CliRunner().invoke(cli, [*path.split()[1:], "--help"], terminal_width=200)
    assert result.exit_code == 0, f"{path} --help: {result.output}"
    return result.output


def test_every_model_command_takes_device_and_dtype():
    commands = dict(_commands())
    missing = sorted((INFERENCE | TRAINING) - set(commands))
    research = {p for p in missing if p.startswith("conba experiment")}  # listed only with conba_research
    assert set(missing) <= research, f"declared commands that do not exist: {missing}"
    loads_model = {p for p, c in commands.items() if "--model" in _flags(c)}
    undeclared = sorted(loads_model - INFERENCE - TRAINING - set(NO_MODEL_RUN))
    assert not undeclared, (f"commands with -m/--model that are not declared in {__file__} (INFERENCE needs "
                            f"--device and --dtype: conba.cli.options.placement_options): {undeclared}")
    problems = []
    for path in sorted((INFERENCE | TRAINING) & set(commands)):
        text, flags = _help(path), _flags(commands[path])
        problems += [f"{path}: no --device" for _ in [0] if "--device" not in flags or "--device" not in text]
        if path in INFERENCE and not flags & {"--dtype", "--dtypes"}:  # bench gpu times several: --dtypes
            problems.append(f"{path}: no --dtype")
        if path in INFERENCE:
            problems += [f"{path}: --help does not name {env}" for env in (DEVICE_ENV, DTYPE_ENV) if env not in text]
    assert not problems, "\n".join(problems)


def test_device_and_dtype_are_the_shared_options():
    for path, command in _commands():
        for p in command.params:
            if p.name == "device":
                assert isinstance(p.type, DeviceType) and p.envvar == DEVICE_ENV, path
            if p.name == "dtype" and path != "conba merge":  # merge: the storage precision of its output
                assert tuple(p.type.choices) == DTYPES and p.envvar == DTYPE_ENV, path


def _tree(tmp_path):
    from helpers import TASKS, write_tree

    files = {f"src/{task}.py": code["python"] for task, code in TASKS.items()}
    files.update({f"src/{task.capitalize()}.java": f"class {task.capitalize()} {{\n{code['java']}}}\n"
                  for task, code in TASKS.items()})
    return write_tree(tmp_path / "repo", files)


def test_index_in_bfloat16_then_search_in_float32(tiny_model, tmp_path, monkeypatch):
    """The same CLI path a GPU takes (placement, half precision, the fingerprint check), on the CPU."""
    runner = CliRunner()
    idx = str(tmp_path / "idx")
    monkeypatch.setenv(DTYPE_ENV, "bfloat16")  # the variable, as a user would set it
    result = runner.invoke(cli, ["index", str(_tree(tmp_path)), "-i", idx, "-m", tiny_model, "--device", "cpu",
                                 "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.strip().splitlines()[-1])
    assert report["units_encoded"] >= 8 and (report["device"], report["dtype"]) == ("cpu", "bfloat16")
    monkeypatch.delenv(DTYPE_ENV)
    query = ["search", "--code", "def add(a, b):\n    return a + b\n", "--query-language", "python", "-i", idx,
             "-k", "3"]
    full = runner.invoke(cli, [*query, "--dtype", "float32"])
    assert full.exit_code == 0, full.output  # no "built with another model": the fingerprint is the same
    half = runner.invoke(cli, [*query, "--dtype", "bfloat16"])
    assert half.exit_code == 0, half.output
    top = [json.loads(line) for line in full.output.strip().splitlines()]
    assert top and top[0]["name"] == "add"
    scores = [json.loads(line)["score"] for line in half.output.strip().splitlines()]
    np.testing.assert_allclose(scores, [h["score"] for h in top], atol=0.02)


def test_encode_dtype_and_a_bad_device_in_the_environment(tiny_model, tmp_path, monkeypatch):
    runner = CliRunner()
    code = tmp_path / "a.py"
    code.write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    out = {}
    for dtype in ("float32", "bfloat16"):
        result = runner.invoke(cli, ["encode", str(code), "-m", tiny_model, "--dtype", dtype])
        assert result.exit_code == 0, result.output
        out[dtype] = np.array(json.loads(result.output)["embedding"])
    assert float(out["float32"] @ out["bfloat16"]) > 0.99
    monkeypatch.setenv(DEVICE_ENV, "tpu")
    result = runner.invoke(cli, ["encode", str(code), "-m", tiny_model])
    assert result.exit_code == 2 and "tpu" in result.output and "--device" in result.output
    monkeypatch.setenv(DEVICE_ENV, "cpu")
    result = runner.invoke(cli, ["encode", str(code), "-m", tiny_model, "--engine", "onnx", "--dtype", "float16"])
    assert result.exit_code == 1 and "runs in float32" in result.output


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_without_a_gpu_is_one_line(tiny_model, tmp_path):
    code = tmp_path / "a.py"
    code.write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["encode", str(code), "-m", tiny_model, "--device", "cuda"])
    assert result.exit_code == 1 and "CUDA is not available" in result.output
    assert "Traceback" not in result.output


def test_an_environment_default_gives_way_to_the_onnx_engine(tiny_model, tmp_path, monkeypatch):
    """$CONBA_DEVICE=cuda / $CONBA_DTYPE=float16 are defaults for every command: an ONNX index or --engine
    onnx runs on the CPU in float32 with a warning; the same on the command line is an error."""
    pytest.importorskip("onnxruntime")
    code = tmp_path / "a.py"
    code.write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    monkeypatch.setenv(DTYPE_ENV, "float16")
    monkeypatch.setenv(DEVICE_ENV, "cuda" if not __import__("torch").cuda.is_available() else "cpu")
    runner = CliRunner()
    result = runner.invoke(cli, ["encode", str(code), "-m", tiny_model, "--engine", "onnx-fp32"])
    assert result.exit_code == 0, result.output
    assert "Warning: engine 'onnx-fp32' runs on the CPU in float32: $CONBA_DTYPE=float16 does not apply" \
        in result.output
    result = runner.invoke(cli, ["encode", str(code), "-m", tiny_model, "--engine", "onnx-fp32", "--dtype", "float16"])
    assert result.exit_code == 1 and "runs in float32" in result.output
