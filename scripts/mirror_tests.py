"""Move the product's tests into folders that mirror the package (issue 46): ``tests/<pkg>/`` holds the tests of
``src/conba/<pkg>/``, ``tests/project/`` the repository-wide checks (layering, project files, README, docs,
wheel, scripts), and the top of ``tests/`` only the tests of conba's top-level modules (``test_text.py`` for
``src/conba/text.py``). tests/project/test_tests_mirror.py keeps it so.

Where a top-level ``tests/test_*.py`` goes, first rule that answers:
  1. ``OVERRIDES``: the file's name, for files whose name and imports disagree with what they test;
  2. the file's name: ``test_<word>_...`` where <word> (or ``ALIASES[<word>]``) is a sub-package of src/conba,
     or a top-level module (the file stays at the top);
  3. its imports: the sub-package of ``conba.<pkg>`` it imports most (``conba.cli`` counts only when it is the
     only one: every command test imports it); a tie goes to the one imported first;
  4. otherwise the top (conba's own top-level modules, ``from conba import ...``).

What it does, with ``git mv`` (history follows): moves each file, moves the data folders in ``DATA_MOVES``,
adds one to ``Path(__file__)...parents[N]`` in each moved file (one folder deeper), and rewrites
``tests/test_x.py`` (and moved data paths) in every tracked text file, except the dated history
(``HISTORY``), and ``tests.test_x`` / ``from test_x import`` (a test importing another's helper) in Python.
Deterministic and idempotent: a second run finds nothing to move. A moved file that reaches for its own folder
another way, or a line the longer path pushes over ruff's limit, is named in a warning, to fix by hand.

    python scripts/mirror_tests.py             # move and rewrite
    python scripts/mirror_tests.py --dry-run   # print the plan only
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = "project"  # the repository-wide checks
TOP = "."  # the tests of conba's top-level modules (src/conba/*.py)
OVERRIDES = {
    "test_architecture.py": PROJECT, "test_project_files.py": PROJECT, "test_readme.py": PROJECT,
    "test_readme_links.py": PROJECT, "test_docs_build.py": PROJECT, "test_env_docs.py": PROJECT,
    "test_scripts_import.py": PROJECT, "test_wheel_contents.py": PROJECT, "test_tests_mirror.py": PROJECT,
    "test_long_input_word.py": PROJECT,  # the word for long inputs, in every file
    "test_calibrate.py": "eval",  # the threshold for a precision, conba.eval.precision
    "test_features_key.py": "train",  # train.features.backbone_key
    "test_golden.py": "model", "test_robustness_default.py": "model", "test_st_export.py": "model",
    "test_reliability_map.py": "mapping",  # conba map -g and its trees
    "test_reliability_writes.py": "utils", "test_replace_dir.py": "utils",  # conba.utils.io
    "test_reliability_map_git.py": "mapping",  # conba map on git trees
    "test_trivial.py": "clones",  # conba.clones.trivial
    "test_view_model.py": "syntax",  # the input view through model, index, training and CLI
}
ALIASES = {"map": "mapping", "extract": "source", "clone": "clones", "trainer": "train", "shards": "index"}
DATA_MOVES = {"tests/data": "tests/mapping/data"}  # data folders read next to their tests (Path(__file__).parent)
LINE_LENGTH = 120  # [tool.ruff] line-length
HISTORY = ("docs/BENCHMARKS.md", "docs/experiments/")  # dated pages: their wording stays
DEPTH = re.compile(r"(Path\(__file__\)(?:\.resolve\(\))?\.parents\[)(\d+)\]")
OWN_FOLDER = re.compile(r"(?<![\w.])Path\(__file__\)(?:\.resolve\(\))?\.parent\b(?!s)|os\.path\.dirname\(.*__file__")


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def subpackages() -> set[str]:
    return {p.name for p in (ROOT / "src" / "conba").iterdir() if (p / "__init__.py").is_file()}


def top_modules() -> set[str]:
    return {p.stem for p in (ROOT / "src" / "conba").glob("*.py") if p.stem != "__init__"}


def imported(path: Path, names: set[str]) -> list[str]:
    """The sub-packages of conba that ``path`` imports, once per import statement, in the file's order."""
    found: list[tuple[int, int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        mods: list[str] = []
        if isinstance(node, ast.Import):
            mods = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            mods = [node.module] if node.module != "conba" else [f"conba.{a.name}" for a in node.names]
        for mod in mods:
            parts = mod.split(".")
            if parts[0] == "conba" and len(parts) > 1 and parts[1] in names:
                found.append((node.lineno, node.col_offset, parts[1]))
    return [name for *_, name in sorted(found)]


def folder_for(path: Path, pkgs: set[str], mods: set[str]) -> str:
    """The folder under tests/ for the top-level test file ``path`` (rules in the module docstring)."""
    if path.name in OVERRIDES and (OVERRIDES[path.name] in pkgs or OVERRIDES[path.name] in (PROJECT, TOP)):
        return OVERRIDES[path.name]
    word = path.stem.removeprefix("test_").split("_")[0]
    word = ALIASES.get(word, word)
    if word in pkgs:
        return word
    if word in mods:
        return TOP
    used = imported(path, pkgs)
    counts = Counter(name for name in used if name != "cli") or Counter(used)
    if not counts:
        return TOP
    most = max(counts.values())
    return next(name for name in used if counts.get(name) == most)


def plan() -> dict[str, str]:
    """Old path -> new path (relative to the repository) of every file to move, tests and data."""
    pkgs, mods = subpackages(), top_modules()
    moves: dict[str, str] = {}
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        folder = folder_for(path, pkgs, mods)
        if folder != TOP:
            moves[f"tests/{path.name}"] = f"tests/{folder}/{path.name}"
    for old, new in DATA_MOVES.items():
        for name in git("ls-files", "--", old).splitlines():
            if not Path(name).name.startswith("test_") and Path(name).suffix != ".py":
                moves[name] = new + name.removeprefix(old)
    return moves


def module_moves(moves: dict[str, str]) -> dict[str, str]:
    """Test module -> its dotted name from the repository root (``test_x`` -> ``tests.index.test_x``)."""
    return {Path(old).stem: new.removesuffix(".py").replace("/", ".") for old, new in moves.items()
            if old.endswith(".py")}


def rewrite_imports(text: str, modules: dict[str, str]) -> str:
    """``tests.test_x`` and a bare ``from test_x import`` (a test importing another test's helper) name the
    moved module by its new dotted name."""
    if not modules:
        return text
    names = "|".join(map(re.escape, sorted(modules, key=len, reverse=True)))
    text = re.sub(r"(?<![\w.])tests\.(" + names + r")\b", lambda m: modules[m.group(1)], text)
    return re.sub(r"^(\s*from\s+)(" + names + r")\b", lambda m: m.group(1) + modules[m.group(2)], text,
                  flags=re.M)


def rewrite_refs(moves: dict[str, str]) -> list[str]:
    """Rewrite the moved paths in every tracked text file but the history, and the moved test modules in every
    tracked Python file; the files changed."""
    olds = sorted(moves, key=len, reverse=True)
    pattern = re.compile(r"(?:(?<=\.\./)|(?<![\w./-]))(" + "|".join(map(re.escape, olds)) + r")(?![\w/-])")
    modules = module_moves(moves)
    changed = []
    for name in git("ls-files").splitlines():
        path = ROOT / name
        if name.startswith(HISTORY) or name == "scripts/mirror_tests.py" or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        new = pattern.sub(lambda m: moves[m.group(1)], text)
        if name.endswith(".py"):
            new = rewrite_imports(new, modules)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(name)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="print the plan, move nothing")
    args = parser.parse_args(argv)
    moves = plan()
    for old, new in moves.items():
        print(f"{old} -> {new}")
    if args.dry_run or not moves:
        print(f"{len(moves)} to move" + (" (dry run)" if args.dry_run else ""))
        return 0
    for old, new in moves.items():
        (ROOT / new).parent.mkdir(parents=True, exist_ok=True)
        git("mv", old, new)
    warnings = []
    for new in moves.values():
        if not new.endswith(".py"):
            continue
        path = ROOT / new
        text = path.read_text(encoding="utf-8")
        text = DEPTH.sub(lambda m: f"{m.group(1)}{int(m.group(2)) + 1}]", text)
        path.write_text(text, encoding="utf-8")
        for n, line in enumerate(text.splitlines(), 1):
            if OWN_FOLDER.search(line) and '/ "data"' not in line:
                warnings.append(f"{new}:{n}: reaches for its own folder, check it after the move: {line.strip()}")
    changed = rewrite_refs(moves)
    print(f"moved {len(moves)}; references rewritten in {len(changed)} files: {' '.join(changed)}")
    for name in changed:  # a longer path can push a line over ruff's limit
        for n, line in enumerate((ROOT / name).read_text(encoding="utf-8").splitlines(), 1):
            if name.endswith(".py") and len(line) > LINE_LENGTH:
                warnings.append(f"{name}:{n}: {len(line)} characters after the rewrite (ruff: {LINE_LENGTH})")
    for warning in warnings:
        print("warning:", warning, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
