"""The tests mirror the package (issue 46): ``tests/<pkg>/`` holds the tests of ``src/conba/<pkg>/``,
``tests/project/`` the repository-wide checks, and the top of ``tests/`` only the tests of conba's top-level
modules (``test_text.py`` for ``src/conba/text.py``). scripts/mirror_tests.py puts a new top-level test file in
its place (by its name, else by what it imports) and rewrites the paths that name it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
PACKAGES = {p.name for p in (ROOT / "src" / "conba").iterdir() if (p / "__init__.py").is_file()}
MODULES = {p.stem for p in (ROOT / "src" / "conba").glob("*.py") if p.stem != "__init__"}
PROJECT = "project"  # the repository-wide checks: layering, project files, README, docs, wheel, scripts


def test_every_test_file_lives_in_the_folder_of_a_package():
    misplaced = []
    for path in sorted(TESTS.rglob("test_*.py")):
        rel = path.relative_to(TESTS)
        if len(rel.parts) == 1:
            if path.stem.removeprefix("test_").split("_")[0] not in MODULES:
                misplaced.append(f"{rel.as_posix()}: at the top, named after no top-level module of src/conba")
        elif len(rel.parts) != 2 or rel.parts[0] not in PACKAGES | {PROJECT}:
            misplaced.append(f"{rel.as_posix()}: {rel.parts[0]} is no package of src/conba (nor {PROJECT}/)")
    assert not misplaced, "run python scripts/mirror_tests.py, or move by hand:\n" + "\n".join(misplaced)


def test_every_test_folder_is_a_package_or_the_project():
    """No folder of tests/ outlives its package (a data folder sits inside its tests' folder)."""
    files = [p.relative_to(TESTS) for p in TESTS.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    folders = {rel.parts[0] for rel in files if len(rel.parts) > 1}
    assert sorted(folders - PACKAGES - {PROJECT, "helpers"}) == []


def test_test_file_names_are_unique():
    """pytest imports each test file by its name (the default import mode, no __init__.py in the folders), so
    two test files of one name anywhere in tests/ or research/tests/ clash."""
    names = Counter(p.name for base in (TESTS, ROOT / "research" / "tests") for p in base.rglob("test_*.py"))
    assert sorted(name for name, n in names.items() if n > 1) == []
