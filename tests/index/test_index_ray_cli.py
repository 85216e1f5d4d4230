"""`conba index --ray` on the command line, without a cluster: the option's parsing and its errors."""

from __future__ import annotations

import sys
from pathlib import Path

from click.testing import CliRunner

from conba.cli.main import cli

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "polyglot")


def test_ray_before_paths_is_explained(tmp_path):
    out = CliRunner().invoke(cli, ["index", "--index", str(tmp_path / "idx"), "--ray", EXAMPLE])
    assert out.exit_code == 2
    assert "--ray took" in out.output and "put PATHS before --ray" in out.output


def test_missing_paths_without_ray(tmp_path):
    out = CliRunner().invoke(cli, ["index", "--index", str(tmp_path / "idx")])
    assert out.exit_code == 2 and "Missing argument 'PATHS...'" in out.output


def test_without_ray_installed_one_line_error_and_index_untouched(tmp_path, tiny_model, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # makes `import ray` fail
    folder = tmp_path / "idx"
    out = CliRunner().invoke(cli, ["index", EXAMPLE, "--index", str(folder), "--model", tiny_model, "--ray"])
    assert out.exit_code == 1
    assert out.output.strip().endswith("--ray needs Ray Data: pip install 'conba[ray]'")
    assert not folder.exists()
