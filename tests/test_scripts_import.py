"""Every script in scripts/ imports, and every conba name it imports (at the top or inside a
function, where most scripts import lazily) exists: a renamed or deleted module breaks this test,
not the next benchmark run."""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

import pytest

SCRIPTS = sorted((Path(__file__).resolve().parents[1] / "scripts").glob("*.py"))


def conba_imports(path: Path) -> list[tuple[str, str | None]]:
    """(module, name) of every ``from conba... import name`` and (module, None) of every ``import conba...``."""
    out: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "conba":
            out += [(node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(a.name, None) for a in node.names if a.name.split(".")[0] == "conba"]
    return out


def test_the_scripts_are_found():
    assert len(SCRIPTS) >= 10 and all(p.suffix == ".py" for p in SCRIPTS)


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_script_imports(path: Path):
    spec = importlib.util.spec_from_file_location(f"conba_script_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # the top level only: main() is behind `if __name__ == "__main__"`
    for name, attr in conba_imports(path):
        found = importlib.import_module(name)
        if attr is not None:
            assert hasattr(found, attr) or importlib.util.find_spec(f"{name}.{attr}") is not None, (
                f"{path.name}: from {name} import {attr}: no such name")


def test_a_dead_import_is_caught(tmp_path):
    script = tmp_path / "dead.py"
    script.write_text("def main():\n    from conba.settings import no_such_function\n")
    ((name, attr),) = conba_imports(script)
    assert not hasattr(importlib.import_module(name), attr)
