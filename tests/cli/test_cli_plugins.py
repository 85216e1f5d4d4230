"""Commands other distributions plug in through the ``conba.commands`` entry points (conba.cli.plugins):
without the research suite, ``conba --help`` lists no ``experiment`` and ``conba bench`` only ``speed``; a
plugged-in command is listed and runs, top level or under ``bench``; it cannot replace a product command."""

from __future__ import annotations

import importlib.metadata

import click
import pytest
from click.testing import CliRunner

import conba.cli.plugins as plugins
from conba.cli.main import COMMANDS, cli
from conba.cli.plugins import ENTRY_POINT_GROUP


@click.command("hello")
def hello() -> None:
    """Say hello (a plug-in)."""
    click.echo("hello from a plug-in")


NOT_A_COMMAND = 42


def _points(**named: str) -> list[importlib.metadata.EntryPoint]:
    return [importlib.metadata.EntryPoint(name, value, ENTRY_POINT_GROUP) for name, value in named.items()]


def _commands(output: str) -> list[str]:
    section = output.split("Commands:")[1]
    return [line.split()[0] for line in section.splitlines() if line.startswith("  ") and line[2] != " "]


def test_without_the_research_suite_there_is_no_experiment(monkeypatch):
    monkeypatch.setattr(plugins, "entry_points", lambda: [])
    out = CliRunner().invoke(cli, ["--help"])
    assert out.exit_code == 0 and sorted(_commands(out.output)) == sorted(COMMANDS)
    assert "experiment" not in _commands(out.output)
    bench = CliRunner().invoke(cli, ["bench", "--help"])
    assert _commands(bench.output) == ["speed"]
    missing = CliRunner().invoke(cli, ["experiment", "ablation"])
    assert missing.exit_code == 2 and "No such command 'experiment'" in missing.output


def test_a_plugged_in_command_is_listed_and_runs(monkeypatch):
    monkeypatch.setattr(plugins, "entry_points", lambda: _points(**{
        "hello": f"{__name__}:hello", "bench.hello": f"{__name__}:hello", "train": f"{__name__}:hello"}))
    out = CliRunner().invoke(cli, ["--help"])
    assert "hello" in _commands(out.output) and "Say hello (a plug-in)." in out.output
    assert CliRunner().invoke(cli, ["hello"]).output == "hello from a plug-in\n"
    assert _commands(CliRunner().invoke(cli, ["bench", "--help"]).output) == ["hello", "speed"]
    assert CliRunner().invoke(cli, ["bench", "hello"]).output == "hello from a plug-in\n"
    assert "Usage: cli train" in CliRunner().invoke(cli, ["train", "--help"]).output  # the product's train


def test_an_entry_point_that_is_no_command_fails_in_one_line(monkeypatch):
    monkeypatch.setattr(plugins, "entry_points", lambda: _points(broken=f"{__name__}:NOT_A_COMMAND"))
    with pytest.raises(Exception, match=r"^entry point broken = .*NOT_A_COMMAND \(group conba.commands\) is not a "
                                        r"click command$"):
        plugins.load_command(plugins.plugin_commands()["broken"])
