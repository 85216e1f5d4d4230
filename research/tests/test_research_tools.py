"""The developer tools that used to be scripts are modules of the research suite behind ``conba bench NAME`` /
``conba experiment NAME`` (entry points of research/pyproject.toml): each imports, every conba name it
imports (at the top or inside a function, where most import lazily) exists, and ``-h`` reaches its argparse
help; every declared command loads."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba.cli.plugins import load_command
from conba_research.bench.tools_cmd import TOOLS as BENCH_TOOLS
from conba_research.tool_commands import TOOLS as RESEARCH_TOOLS
from helpers import research_entry_points
from helpers.imports import check_conba_names

TOOLS = [("bench", n, m) for n, (m, _) in BENCH_TOOLS.items()] + [
    ("experiment", n, m) for n, (m, _) in RESEARCH_TOOLS.items()]


@pytest.mark.parametrize(("group", "name", "module"), TOOLS, ids=[f"{g}-{n}" for g, n, _ in TOOLS])
def test_tool_imports_and_shows_its_help(group: str, name: str, module: str):
    found = importlib.import_module(module)
    assert callable(found.main)
    check_conba_names(Path(found.__file__))
    res = CliRunner().invoke(cli, [group, name, "-h"])
    assert res.exit_code == 0, res.output
    assert f"usage: conba {group} {name}" in res.output


def test_every_declared_command_loads_under_its_name():
    points = research_entry_points()
    assert {p.name for p in points} >= {"experiment", "bench.gpu", "bench.results", "bench.ivf"}
    for point in points:
        assert load_command(point).name == point.name.rpartition(".")[2], point
