"""The groups file of a repository-level evaluation: which indexed files implement the same thing.

One JSON object per line, ``{"group": "bubblesort", "files": ["cpp/sorting/bubble_sort.cpp", ...]}``;
relative paths are relative to the groups file's folder. A malformed line fails with
``file:line: reason``; a listed file that the index does not hold is reported (with why) and skipped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from conba.data.records import DataError, iter_json_lines

__all__ = ["Group", "MissingFile", "load_groups", "resolve_groups", "display_file"]


@dataclass(frozen=True)
class Group:
    name: str
    files: tuple[str, ...]  # absolute, normalised paths
    line: int


@dataclass(frozen=True)
class MissingFile:
    group: str
    file: str  # as written in the groups file
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"group": self.group, "file": self.file, "reason": self.reason}


def _abs(path: str, base: Path) -> str:
    return os.path.normpath(path if os.path.isabs(path) else os.path.join(os.path.abspath(base), path))


def load_groups(path: str | os.PathLike) -> list[Group]:
    """Every group of the file, in file order. Raises :class:`DataError` naming ``file:line``."""
    path = Path(path)
    base = path.parent
    groups: list[Group] = []
    first_line: dict[str, int] = {}
    owner: dict[str, tuple[str, int]] = {}
    for lineno, obj in iter_json_lines(path):
        where = f"{path}:{lineno}"
        name = obj.get("group")
        if not isinstance(name, str) or not name.strip():
            raise DataError(f"{where}: field 'group' must be a non-empty string")
        if name in first_line:
            raise DataError(f"{where}: group {name!r} is already defined on line {first_line[name]}")
        files = obj.get("files")
        if not isinstance(files, list) or not files:
            raise DataError(f"{where}: field 'files' must be a non-empty list of paths")
        resolved: list[str] = []
        for k, rel in enumerate(files):
            if not isinstance(rel, str) or not rel.strip():
                raise DataError(f"{where}: files[{k}] must be a non-empty string, got {rel!r}")
            full = _abs(rel, base)
            if full in owner:
                other, other_line = owner[full]
                raise DataError(f"{where}: {rel} is already in group {other!r} (line {other_line})")
            owner[full] = (name, lineno)
            resolved.append(full)
        first_line[name] = lineno
        groups.append(Group(name, tuple(resolved), lineno))
    if not groups:
        raise DataError(f"{path}: no groups (expected JSON lines like "
                        '{"group": "bubblesort", "files": ["a/bubble_sort.cpp", "b/BubbleSort.js"]})')
    return groups


def display_file(path: str, base: str | os.PathLike) -> str:
    """``path`` relative to ``base`` (the groups file's folder) when it lies below it, else as is."""
    rel = os.path.relpath(path, os.path.abspath(base))
    return path if rel.startswith("..") else rel


def resolve_groups(groups: list[Group], units_of: dict[str, int], indexed: set[str],
                   base: str | os.PathLike) -> tuple[dict[str, str], list[MissingFile]]:
    """Map each grouped file to the index's own path for it.

    ``units_of``: index path -> number of units; ``indexed``: every file the index holds (also those
    without a unit). Paths match as written (absolute, normalised) or, failing that, through symlinks
    (``realpath``). Returns ``({index path: group}, missing files)``.
    """
    real = {os.path.realpath(p): p for p in indexed}
    found: dict[str, str] = {}
    missing: list[MissingFile] = []
    for group in groups:
        for full in group.files:
            shown = display_file(full, base)
            hit = full if full in indexed else real.get(os.path.realpath(full))
            if hit is None:
                reason = ("not in the index (skipped when indexing, or outside the indexed folders)"
                          if os.path.exists(full) else "file not found")
                missing.append(MissingFile(group.name, shown, reason))
            elif units_of.get(hit, 0) == 0:
                missing.append(MissingFile(group.name, shown, "indexed, but no function was extracted"))
            else:
                found[hit] = group.name
    return found, missing
