"""Functions changed, added or removed in a git working tree since a revision (``conba map --since REV``).

Git is run as the ``git`` command (``subprocess``, no shell): the files that differ between ``REV`` and the
working tree (``git diff --name-status -M REV``, uncommitted edits included) plus the untracked files that are
not ignored. For each such file in a language conba extracts, the functions of the old version (``git show
REV:path``) and of the current one are compared by qualified name (overloads in order): a function whose code
differs beyond whitespace is *changed*, one only in the current file *new*, one only in the old file
*removed*. A renamed file keeps its functions (compared with the old path's version).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from conba.data.records import DataError
from conba.source.extract import extract_units
from conba.source.records import Unit
from conba.syntax.languages import detect_language

CHANGED, NEW, REMOVED = "changed", "new", "removed"


@dataclass(frozen=True)
class FunctionChange:
    """One function that differs since the revision: ``unit`` is the current function (changed / new) or the
    old one (removed: ``file`` is the path it had, made absolute in the working tree)."""

    change: str
    unit: Unit


# conba only reads the repository: nothing its config names is run for it (core.fsmonitor is a command git would
# start for status-like calls; textconv and external diff drivers are turned off where diffs are read)
GIT = ["git", "-c", "core.fsmonitor=false"]
COMMIT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run([*GIT, *args], cwd=cwd, capture_output=True, text=True, encoding="utf-8",
                              errors="replace", check=False)
    except FileNotFoundError:
        raise DataError("git: not found on PATH (--since needs the git command)") from None


def repo_root(path: str | os.PathLike, option: str = "--since") -> Path:
    """The top folder of the git working tree holding ``path`` (a folder or file); a :class:`DataError` naming
    ``path`` when there is none."""
    p = Path(path).resolve()
    where = p if p.is_dir() else p.parent
    if not where.exists():
        raise DataError(f"{path}: no such file or folder")
    out = _git(["rev-parse", "--show-toplevel"], where)
    if out.returncode != 0:
        raise DataError(f"{path}: not in a git working tree ({option} compares it with a git revision)")
    return Path(out.stdout.strip()).resolve()


def resolve_revision(root: Path, rev: str, option: str = "--since") -> str:
    """The commit id of ``rev`` in the repository at ``root``; a :class:`DataError` naming ``option`` when it is
    not one commit (unknown, a range or a negation such as ``^v1``, an option)."""
    shown = rev if rev.isprintable() else repr(rev)
    if not rev.strip() or rev.startswith(("-", "^")) or not rev.isprintable():
        raise DataError(f"{option} {shown}: not a revision (give one commit: a tag, branch or commit id)")
    out = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"], root)
    commit = out.stdout.strip()
    if out.returncode != 0:
        raise DataError(f"{option} {shown}: unknown revision in the git repository {root}")
    if not COMMIT_ID.fullmatch(commit):  # git resolved it to something else than one commit id
        raise DataError(f"{option} {shown}: not a single commit (give one commit: a tag, branch or commit id)")
    return commit


def changed_files(root: Path, commit: str, under: Path) -> list[tuple[str, str | None]]:
    """(current path, old path or None) of the files below ``under`` that differ from ``commit`` (paths
    relative to ``root``, '/'-separated); a deleted file has current path "" and its old path."""
    rel = os.path.relpath(under.resolve(), root)
    spec = ["--", "." if rel == "." else rel]
    diff = _git(["diff", "--no-textconv", "--no-ext-diff", "--name-status", "-z", "-M", commit, *spec], root)
    if diff.returncode != 0:
        raise DataError(f"{under}: git diff against {commit[:12]} failed ({diff.stderr.strip()[:200]})")
    fields = diff.stdout.split("\0")
    out: list[tuple[str, str | None]] = []
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i]
        if status[:1] in ("R", "C"):
            out.append((fields[i + 2], fields[i + 1] if status[0] == "R" else None))
            i += 3
            continue
        path = fields[i + 1]
        out.append(("", path) if status[0] == "D" else (path, None if status[0] == "A" else path))
        i += 2
    untracked = _git(["ls-files", "--others", "--exclude-standard", "-z", *spec], root)
    out += [(p, None) for p in untracked.stdout.split("\0") if p]
    return out


def _old_text(root: Path, commit: str, path: str) -> str:
    out = _git(["show", "--no-textconv", f"{commit}:{path}"], root)
    return out.stdout if out.returncode == 0 else ""


def _normal(code: str) -> str:
    return " ".join(code.split())


def _by_name(units: list[Unit]) -> dict[tuple[str, int], Unit]:
    """(qualified name, occurrence) -> unit: overloads of one name keep their order."""
    seen: dict[str, int] = defaultdict(int)
    out = {}
    for u in units:
        out[(u.qualname, seen[u.qualname])] = u
        seen[u.qualname] += 1
    return out


def file_changes(root: Path, commit: str, current: str, old: str | None) -> list[FunctionChange]:
    """The function changes of one file (paths relative to ``root``)."""
    path = str(root / (current or old or ""))
    language = detect_language(path)
    if language is None:
        return []
    now: list[Unit] = []
    if current:
        try:
            now = extract_units(path, Path(path).read_text(encoding="utf-8"), language)
        except (OSError, UnicodeDecodeError):
            now = []
    before = extract_units(path, _old_text(root, commit, old), language) if old else []
    new_by, old_by = _by_name([u for u in now if u.kind == "function"]), _by_name(
        [u for u in before if u.kind == "function"])
    out = [FunctionChange(NEW if key not in old_by else CHANGED, u) for key, u in new_by.items()
           if key not in old_by or _normal(old_by[key].code) != _normal(u.code)]
    out += [FunctionChange(REMOVED, u) for key, u in old_by.items() if key not in new_by]
    return out


def function_changes(tree: str | os.PathLike, rev: str, option: str = "--since") -> tuple[str, list[FunctionChange]]:
    """(commit id of ``rev``, the functions below ``tree`` changed, new or removed since then). A
    :class:`DataError` (naming ``option``) when ``tree`` is not in a git working tree or ``rev`` is not a
    commit of it."""
    root = repo_root(tree, option)
    commit = resolve_revision(root, rev, option)
    out: list[FunctionChange] = []
    for current, old in changed_files(root, commit, Path(tree)):
        out += file_changes(root, commit, current, old)
    return commit, out
