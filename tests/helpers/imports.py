"""The conba names a source file imports, read from its syntax tree (never executed), and the check that
they exist: for what is left in scripts/ and for the research suite's tools."""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

from helpers.source import parse


def conba_imports(path: Path) -> list[tuple[str, str | None]]:
    """(module, name) of every ``from conba[_research]... import name`` and (module, None) of every
    ``import conba...``."""
    ours = ("conba", "conba_research")
    out: list[tuple[str, str | None]] = []
    for node in ast.walk(parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in ours:
            out += [(node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(a.name, None) for a in node.names if a.name.split(".")[0] in ours]
    return out


def check_conba_names(path: Path) -> None:
    """Every conba name ``path`` imports exists (an AssertionError naming the first that does not)."""
    for name, attr in conba_imports(path):
        found = importlib.import_module(name)
        if attr is not None:
            assert hasattr(found, attr) or importlib.util.find_spec(f"{name}.{attr}") is not None, (
                f"{path.name}: from {name} import {attr}: no such name")
