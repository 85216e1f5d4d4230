"""ConbaError: expected errors are one line (exit 1), bugs keep their traceback, CONBA_DEBUG shows all;
`conba encode` reads files with the index's checks."""

from __future__ import annotations

import errno
import json
import os

import click
import pytest
from click.testing import CliRunner

from conba.cli.common import friendly_errors
from conba.cli.main import cli
from conba.errors import ConbaError, ConfigError


def _command(exc: BaseException) -> click.Command:
    @click.command()
    @friendly_errors
    def fails() -> None:
        raise exc

    return fails


def test_error_classes_share_one_base():
    from conba.data import DataError
    from conba.encoder.backbone import BackboneError
    from conba.engine.onnx_export import OnnxUnavailable
    from conba.index.errors import CodeIndexError, CorruptIndexError, SourceError
    from conba.model import ModelError

    for cls in (DataError, ModelError, BackboneError, OnnxUnavailable, CodeIndexError, CorruptIndexError,
                SourceError, ConfigError):
        assert issubclass(cls, ConbaError), cls
    assert issubclass(DataError, ValueError) and issubclass(ModelError, RuntimeError)  # old handlers still work


def test_expected_errors_are_one_line(monkeypatch):
    monkeypatch.delenv("CONBA_DEBUG", raising=False)
    result = CliRunner().invoke(_command(ConfigError("k must be >= 1")))
    assert result.exit_code == 1 and result.output == "Error: k must be >= 1\n"
    missing = FileNotFoundError(errno.ENOENT, "No such file or directory", "data/x.jsonl")
    result = CliRunner().invoke(_command(missing))
    assert result.exit_code == 1 and result.output == "Error: data/x.jsonl: No such file or directory\n"


@pytest.mark.parametrize("bug", [KeyError("oops"), ValueError("a bug, not bad input"), RuntimeError("bug"),
                                 OSError(errno.EIO, "Input/output error")])
def test_bugs_keep_their_traceback(bug, monkeypatch):
    monkeypatch.delenv("CONBA_DEBUG", raising=False)
    result = CliRunner().invoke(_command(bug))
    assert result.exit_code == 1 and result.exception is bug and "Error:" not in result.output


def test_conba_debug_shows_every_traceback(monkeypatch):
    monkeypatch.setenv("CONBA_DEBUG", "1")
    error = ConfigError("k must be >= 1")
    assert CliRunner().invoke(_command(error)).exception is error
    result = CliRunner().invoke(cli, ["--help"])
    assert "CONBA_DEBUG" in result.output


def test_user_validation_stays_one_line(tmp_path, tiny_model):
    from conba.train.config import TrainConfig

    with pytest.raises(ConfigError, match="temperature"):
        TrainConfig(train=["x"], temperature=0).validate()
    result = CliRunner().invoke(cli, ["compare", "--snippets", "def f(): pass", "def g(): pass", "-m", tiny_model,
                                      "-t", "7"])
    assert result.exit_code == 1 and "Traceback" not in result.output and "threshold" in result.output


def test_encode_applies_the_index_checks(tmp_path, tiny_model, monkeypatch):
    runner = CliRunner()
    binary = tmp_path / "blob.py"
    binary.write_bytes(b"def f():\0\1\2 return 1\n")
    result = runner.invoke(cli, ["encode", str(binary), "-m", tiny_model])
    assert result.exit_code == 1 and "blob.py: binary file" in result.output
    result = runner.invoke(cli, ["encode", str(tmp_path), "-m", tiny_model])
    assert result.exit_code == 1 and "is a directory" in result.output
    result = runner.invoke(cli, ["encode", str(tmp_path / "gone.py"), "-m", tiny_model])
    assert result.exit_code == 1 and "gone.py: no such file" in result.output
    secret = tmp_path / "secret.py"
    secret.write_text("def f():\n    return 1\n")
    real_os_open = os.open

    def deny(path, *args, **kwargs):  # chmod 000 does not stop root: fail the read itself (read_source: os.open)
        if os.fspath(path) == str(secret):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_os_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny)
    result = runner.invoke(cli, ["encode", str(secret), "-m", tiny_model])
    assert result.exit_code == 1 and "secret.py: unreadable (permission denied)" in result.output
    monkeypatch.undo()
    result = runner.invoke(cli, ["encode", str(secret), "-m", tiny_model])
    assert result.exit_code == 0, result.output
    row = json.loads(result.output)
    assert row["language"] == "python" and len(row["embedding"]) == 32
