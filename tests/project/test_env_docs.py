"""Every environment variable conba reads has a row in the user guide's docs/environment.md (test-only hooks
excepted).

The variables are found with ``ast``: every string literal in src/conba that is exactly a
``CONBA_...`` name (``os.environ.get("CONBA_X")``, ``envvar=...`` through a constant such as
``CACHE_ENV = "CONBA_CACHE"``); a name inside a longer string (a docstring, a message) is not a read.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from helpers.source import parse

ROOT = Path(__file__).resolve().parents[2]
NAME = re.compile(r"CONBA_[A-Z][A-Z0-9_]*")
# the crash tests' hooks, all read by conba.utils.fault_injection (and nowhere else)
TEST_HOOKS = {"CONBA_INDEX_TEST_DELAY",  # sleeps after each index commit
              "CONBA_TEST_KILL"}  # SIGKILLs the process at a named point (IVF update, index --rebuild)


def env_names(text: str) -> set[str]:
    return {n.value for n in ast.walk(parse(text))
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and NAME.fullmatch(n.value)}


def package_env_names() -> dict[str, str]:
    """{variable: first file that reads it} over src/conba."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "src" / "conba").rglob("*.py")):
        for name in env_names(path.read_text(encoding="utf-8")):
            found.setdefault(name, str(path.relative_to(ROOT)))
    return found


def test_the_finder_sees_literals_and_constants_but_not_prose():
    text = ('"""Set CONBA_IN_DOCSTRING."""\nimport os\nX_ENV = "CONBA_X"\n'
            'y = os.environ.get("CONBA_Y", "1")\nmsg = "see CONBA_IN_PROSE"\n')
    assert env_names(text) == {"CONBA_X", "CONBA_Y"}
    assert {"CONBA_CACHE", "CONBA_MODEL", "CONBA_TOKEN", "CONBA_INDEX_TEST_DELAY"} <= set(package_env_names())


def test_the_guide_names_every_environment_variable():
    page = (ROOT / "docs" / "environment.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `(CONBA_[A-Z0-9_]+)` \|", page, flags=re.M))
    missing = [f"{name} (read in {where})" for name, where in sorted(package_env_names().items())
               if name not in TEST_HOOKS and name not in rows]
    assert not missing, "docs/environment.md has no row for these environment variables:\n" + "\n".join(missing)
    assert not rows - set(package_env_names()), f"docs/environment.md names variables conba no longer reads: " \
        f"{sorted(rows - set(package_env_names()))}"


def test_test_hooks_are_still_read_and_named_as_tests():
    assert TEST_HOOKS <= set(package_env_names()), "a test hook in TEST_HOOKS is no longer read: drop it"
    assert all("TEST" in name for name in TEST_HOOKS)


def test_the_test_hooks_are_read_in_one_module():
    """Every fault-injection hook is read by conba.utils.fault_injection only (one kill mechanism)."""
    readers = {}
    for path in sorted((ROOT / "src" / "conba").rglob("*.py")):
        for name in env_names(path.read_text(encoding="utf-8")) & TEST_HOOKS:
            readers.setdefault(name, set()).add(path.relative_to(ROOT / "src").as_posix())
    assert readers == {name: {"conba/utils/fault_injection.py"} for name in TEST_HOOKS}
    from conba.utils.fault_injection import kill_point

    with pytest.raises(ValueError, match="unknown kill point 'nowhere'"):
        kill_point("nowhere")
