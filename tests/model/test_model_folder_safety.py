"""Model folders conba refuses in one line: custom code without --trust-remote-code (whatever stdin holds),
no tokenizer files, pickled weights, a malformed config.json, weights or a tokenizer that do not fit
config.json; and devices this machine does not have."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba.errors import ConbaError

CODE = "def add(a, b):\n    return a + b\n"
CUSTOM_PY = """from pathlib import Path
Path({sentinel!r}).write_text("the folder's code ran")
from transformers import BertConfig, BertModel


class CustomConfig(BertConfig):
    model_type = "conba-test-custom"


class CustomModel(BertModel):
    config_class = CustomConfig
"""


def _copy(tiny_backbone: Path, to: Path, **config) -> Path:
    shutil.copytree(tiny_backbone, to)
    data = json.loads((to / "config.json").read_text())
    data.update(config)
    (to / "config.json").write_text(json.dumps(data))
    return to


@pytest.fixture()
def custom_code_folder(tiny_backbone, tmp_path, monkeypatch) -> tuple[Path, Path]:
    """A model folder whose config names its own code (auto_map + custom.py); the code, if it ever runs,
    writes the sentinel file."""
    monkeypatch.setenv("HF_MODULES_CACHE", str(tmp_path / "hf-modules"))
    sentinel = tmp_path / "SENTINEL"
    folder = _copy(tiny_backbone, tmp_path / "custom", model_type="conba-test-custom",
                   auto_map={"AutoConfig": "custom.CustomConfig", "AutoModel": "custom.CustomModel"})
    (folder / "custom.py").write_text(CUSTOM_PY.format(sentinel=str(sentinel)))
    return folder, sentinel


@pytest.mark.parametrize("answer", ["y\n", "yes\n", "1\n", ""])
def test_custom_code_never_runs_without_the_flag_whatever_stdin_holds(custom_code_folder, tmp_path, answer):
    folder, sentinel = custom_code_folder
    query = tmp_path / "q.py"
    query.write_text(CODE)
    for args in (["encode", str(query), "-m", str(folder)],
                 ["compare", str(query), str(query), "-m", str(folder)]):
        res = CliRunner().invoke(cli, args, input=answer)
        assert res.exit_code == 1 and "--trust-remote-code" in res.output, res.output
        assert "Traceback" not in res.output and "[y/N]" not in res.output
        assert not sentinel.exists(), f"{args[0]}: the folder's code ran"


def test_custom_code_never_runs_from_the_python_api(custom_code_folder, monkeypatch):
    import io

    import conba

    folder, sentinel = custom_code_folder
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n" * 4))
    with pytest.raises(ConbaError, match="--trust-remote-code"):
        conba.load_model(folder)
    assert not sentinel.exists()


def test_the_flag_is_the_way_in(custom_code_folder):
    import conba

    folder, sentinel = custom_code_folder
    model = conba.load_model(folder, trust_remote_code=True)
    assert sentinel.exists() and model.encode([CODE]).shape[0] == 1


def _one_line_error(args: list[str], *names: str) -> str:
    res = CliRunner().invoke(cli, args, input=CODE)
    assert res.exit_code == 1 and "Traceback" not in res.output, res.output
    line = res.output.strip()
    assert line.startswith("Error: ") and "\n" not in line, res.output
    for name in names:
        assert name in line, line
    return line


def test_a_folder_without_tokenizer_files_is_refused(tiny_backbone, tmp_path):
    folder = _copy(tiny_backbone, tmp_path / "no-tokenizer")
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        (folder / name).unlink(missing_ok=True)
    line = _one_line_error(["encode", "-", "-m", str(folder)], str(folder), "no tokenizer files")
    assert "[UNK]" in line


def test_pickled_weights_are_refused_before_they_are_read(tiny_backbone, tmp_path, monkeypatch):
    import torch
    from safetensors.torch import load_file

    folder = _copy(tiny_backbone, tmp_path / "pickled")
    state = load_file(str(folder / "model.safetensors"))
    (folder / "model.safetensors").unlink()
    torch.save(state, folder / "pytorch_model.bin")

    def never(*args, **kwargs):
        raise AssertionError("torch.load was called on a pickle")

    monkeypatch.setattr(torch, "load", never)
    _one_line_error(["encode", "-", "-m", str(folder)], str(folder / "pytorch_model.bin"), "pickled")


@pytest.mark.parametrize("change", [{"hidden_size": "32"}, {"num_hidden_layers": [2]}, {"vocab_size": 10},
                                    {"hidden_size": 64}, "not json {"])
def test_a_malformed_config_is_one_line_naming_the_file(tiny_backbone, tmp_path, change):
    folder = _copy(tiny_backbone, tmp_path / "bad")
    if isinstance(change, str):
        (folder / "config.json").write_text(change)
        names = [str(folder / "config.json")]
    elif "vocab_size" in change or change.get("hidden_size") == 64:  # weights no longer fit the config
        (folder / "config.json").write_text(json.dumps({**json.loads((folder / "config.json").read_text()),
                                                        **change}))
        names = ["model.safetensors", "config.json", str(folder)]
    else:
        (folder / "config.json").write_text(json.dumps({**json.loads((folder / "config.json").read_text()),
                                                        **change}))
        names = [str(folder / "config.json"), next(iter(change))]
    _one_line_error(["encode", "-", "-m", str(folder)], *names)


def test_a_tokenizer_bigger_than_the_embedding_table_is_refused(tiny_backbone, tmp_path):
    folder = _copy(tiny_backbone, tmp_path / "big-vocab")
    vocab = (folder / "vocab.txt").read_text().splitlines() + [f"extra{i}" for i in range(40)]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    (folder / "tokenizer.json").unlink()  # rebuilt from vocab.txt, now larger than the weights' table
    _one_line_error(["encode", "-", "-m", str(folder)], str(folder), "embedding table")


def test_a_device_this_machine_lacks_is_one_line(tiny_backbone, monkeypatch):
    import torch

    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    _one_line_error(["encode", "-", "-m", str(tiny_backbone), "--device", "mps"], "mps", "not available")
    from conba.errors import UsageError
    from conba.settings import resolve_device

    with pytest.raises(UsageError, match="unknown device"):
        resolve_device("gpu0")
