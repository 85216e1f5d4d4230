"""One way to run a tool: the product's tools are click commands (no argparse module, no ``python -m`` tool in
src/conba); the developer tools that used to be scripts live in the research suite (research/tests checks
that each imports and shows its help). What is left in scripts/ parses and names only existing conba code,
and nothing loads a file of scripts/ by path."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
from pathlib import Path

from helpers.imports import check_conba_names, conba_imports
from helpers.source import parse

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((ROOT / "scripts").glob("*.py"))
# Loading a script by path, kept for now (each with its reason).
PATH_LOADS_KEPT: set[str] = set()  # none left


def test_the_product_runs_no_argparse_tool():
    """No argparse ``main`` and no ``python -m`` entry in the product: its tools are click commands."""
    found = []
    for path in sorted((ROOT / "src" / "conba").rglob("*.py")):
        tree = parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                if "argparse" in names:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: import argparse")
            elif isinstance(node, ast.Compare) and ast.unparse(node) == "__name__ == '__main__'" and \
                    path.name != "main.py":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: __main__")
    assert not found, found


def test_what_is_left_in_scripts_parses_and_its_conba_names_exist():
    """Checked from the source (parsed, never executed or loaded by path); scripts/ holds a few stand-alone
    tools (scripts/mirror_tests.py), and this guards what is added there later."""
    for path in SCRIPTS:
        compile(path.read_text(encoding="utf-8"), str(path), "exec")
        check_conba_names(path)


def test_nothing_loads_a_script_by_path():
    files = [*ROOT.joinpath("tests").rglob("*.py"), *SCRIPTS, *ROOT.joinpath("src").rglob("*.py"),
             *ROOT.joinpath("research").rglob("*.py")]
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
