"""``--progress/--no-progress``: one option with one meaning on every command that runs long work."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from conba.cli.common import show_progress
from conba.cli.main import cli

LONG_COMMANDS = ["index", "calibrate", "map", "eval", "eval-repo", "distill", "train"]


@pytest.mark.parametrize("command", LONG_COMMANDS)
def test_long_commands_take_the_progress_flag(command):
    res = CliRunner().invoke(cli, [command, "--help"])
    assert res.exit_code == 0 and "--progress / --no-progress" in res.output, command


def test_show_progress_follows_the_flag_else_the_terminal():
    assert show_progress(True) is True and show_progress(False) is False
    assert show_progress() is False  # pytest's stderr is no terminal


@pytest.mark.parametrize(("flag", "bar"), [("--progress", True), ("--no-progress", False), (None, False)])
def test_index_shows_a_bar_only_when_asked_off_a_terminal(tiny_model, tmp_path, flag, bar):
    project = tmp_path / "p"
    project.mkdir()
    (project / "a.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    args = ["index", str(project), "-i", str(tmp_path / "idx"), "-m", tiny_model] + ([flag] if flag else [])
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert ("%|" in res.stderr) is bar, res.stderr
