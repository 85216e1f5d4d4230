"""The tools that used to be scripts are package modules behind ``conba bench NAME`` / ``conba experiment
NAME``: each imports, every conba name it imports (at the top or inside a function, where most import
lazily) exists, and ``-h`` reaches its argparse help. What is left in scripts/ parses and names only existing
conba code, and nothing loads a file of scripts/ by path."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from conba.cli.bench_tools_cmd import TOOLS as BENCH_TOOLS
from conba.cli.main import cli
from conba_research.tool_commands import TOOLS as RESEARCH_TOOLS

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "scripts").glob("*.py"))
TOOLS = [("bench", n, m) for n, (m, _) in BENCH_TOOLS.items()] + [
    ("experiment", n, m) for n, (m, _) in RESEARCH_TOOLS.items()]
# Loading a script by path, kept for now (each with its reason).
PATH_LOADS_KEPT: set[str] = set()  # none left


def conba_imports(path: Path) -> list[tuple[str, str | None]]:
    """(module, name) of every ``from conba[_research]... import name`` and (module, None) of every
    ``import conba...``."""
    ours = ("conba", "conba_research")
    out: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in ours:
            out += [(node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(a.name, None) for a in node.names if a.name.split(".")[0] in ours]
    return out


def _check_names(path: Path) -> None:
    for name, attr in conba_imports(path):
        found = importlib.import_module(name)
        if attr is not None:
            assert hasattr(found, attr) or importlib.util.find_spec(f"{name}.{attr}") is not None, (
                f"{path.name}: from {name} import {attr}: no such name")


@pytest.mark.parametrize(("group", "name", "module"), TOOLS, ids=[f"{g}-{n}" for g, n, _ in TOOLS])
def test_tool_imports_and_shows_its_help(group: str, name: str, module: str):
    found = importlib.import_module(module)
    assert callable(found.main)
    _check_names(Path(found.__file__))
    res = CliRunner().invoke(cli, [group, name, "-h"])
    assert res.exit_code == 0, res.output
    assert f"usage: conba {group} {name}" in res.output


def test_what_is_left_in_scripts_parses_and_its_conba_names_exist():
    """Checked from the source (parsed, never executed or loaded by path); today scripts/ holds no Python,
    so this guards what is added there later."""
    for path in SCRIPTS:
        compile(path.read_text(encoding="utf-8"), str(path), "exec")
        _check_names(path)


def test_nothing_loads_a_script_by_path():
    files = [*ROOT.joinpath("tests").glob("*.py"), *SCRIPTS, *ROOT.joinpath("src").rglob("*.py")]
    loader = re.compile(r"spec_from_file_location|run_path|SourceFileLoader")
    bad = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        if path.name != Path(__file__).name and loader.search(text) and "scripts" in text:
            bad.append(path.relative_to(ROOT).as_posix())
    assert sorted(set(bad) - PATH_LOADS_KEPT) == []


def test_a_dead_import_is_caught(tmp_path):
    script = tmp_path / "dead.py"
    script.write_text("def main():\n    from conba.settings import no_such_function\n")
    ((name, attr),) = conba_imports(script)
    assert not hasattr(importlib.import_module(name), attr)
