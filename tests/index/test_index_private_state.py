"""No module reaches into an :class:`~conba.index.Index`'s private state: the sub-packages of ``conba.index``, the
CLI and the research suite use its small internal interface instead (``models``, ``db_call``, ``check_model``,
``encoding_model``, ``write_lock``, ``finalize``, ``vector_store``; see the Index class docstring).

Every module of src/, research/src and the tests is read. The private names are collected with ``ast`` from the
Index class itself (``self._x`` it reads or writes, its ``_methods``); any module other than the Index's own that
touches one of them on something other than ``self`` / ``cls`` (``idx._lock``, ``self.index._vectors()``,
``getattr(idx, "_target")``) is reported with its line.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
INDEX_MODULE = REPO / "src" / "conba" / "index" / "storage" / "index.py"
ROOTS = (REPO / "src", REPO / "research" / "src", REPO / "tests", REPO / "research" / "tests")  # tests too
ATTR_FUNCTIONS = ("getattr", "setattr", "hasattr", "delattr")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def index_private_names(text: str, class_name: str = "Index") -> set[str]:
    """The private attribute and method names the class ``class_name`` in ``text`` defines or uses on itself."""
    cls = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.ClassDef) and n.name == class_name)
    names = {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and _private(n.name)}
    names |= {n.attr for n in ast.walk(cls) if isinstance(n, ast.Attribute) and _is_self(n.value) and _private(n.attr)}
    return names


def private_reaches(text: str, names: set[str]) -> list[tuple[int, str]]:
    """(line, expression) of every use of one of ``names`` on something other than ``self`` / ``cls`` in ``text``."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Attribute) and node.attr in names and not _is_self(node.value):
            found.append((node.lineno, ast.unparse(node)))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ATTR_FUNCTIONS
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value in names
              and not _is_self(node.args[0])):
            found.append((node.lineno, ast.unparse(node)))
    return sorted(found)


def test_the_checker_finds_a_planted_reach_and_spares_self():
    index_text = ("class Index:\n    def __init__(self):\n        self._model = None\n        self._lock = 1\n"
                  "    def _db(self, fn):\n        return fn()\n    def __len__(self):\n        return 0\n")
    names = index_private_names(index_text)
    assert names == {"_model", "_lock", "_db"}
    planted = ("def f(idx, other):\n    m = idx._model\n    idx._db(print)\n    other.index._lock.acquire()\n"
               "    getattr(idx, '_model', None)\n    return len(idx)\n\n"
               "class Lazy:\n    def __init__(self):\n        self._model = 1\n")
    assert [line for line, _ in private_reaches(planted, names)] == [2, 3, 4, 5]
    assert private_reaches("def g(self):\n    return self._model, idx.models.loaded\n", names) == []


def test_the_index_class_has_private_state_to_protect():
    names = index_private_names(INDEX_MODULE.read_text(encoding="utf-8"))
    assert {"_lock", "_target", "_vectors"} <= names


def test_no_module_reaches_into_index_private_state():
    names = index_private_names(INDEX_MODULE.read_text(encoding="utf-8"))
    found = [f"{path.relative_to(REPO)}:{line}: {expr}" for root in ROOTS for path in sorted(root.rglob("*.py"))
             if path != INDEX_MODULE
             for line, expr in private_reaches(path.read_text(encoding="utf-8"), names)]
    assert not found, "reaches into Index private state (use its internal interface):\n" + "\n".join(found)
