"""Find the source files under some paths, respecting ``.gitignore`` and skipping vendored directories.

Content checks (binary, UTF-8, generated) happen later, when a file is read; the walker only
looks at names, sizes and links so that unchanged files are never opened.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conba.errors import SourceError
from conba.source.filters import (
    DEFAULT_MAX_FILE_SIZE,
    Skip,
    check_regular,
    check_size,
    index_error_message,
    is_excluded_dir,
    is_license_name,
    os_error_skip,
)
from conba.syntax.languages import detect_language


@dataclass
class Candidate:
    path: str          # absolute; a given path's own symlinks resolved, links inside a tree kept as met
    language: str
    size: int
    mtime_ns: int
    explicit: bool = False  # named on the command line (problems are errors, not skips)


@dataclass
class Discovery:
    files: list[Candidate] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    roots: list[str] = field(default_factory=list)                 # absolute dirs walked


class _Ignores:
    """The stack of ``.gitignore`` specs that apply to a directory (deepest wins)."""

    def __init__(self, specs: tuple[tuple[Path, Any], ...] = ()):
        self.specs = specs

    def enter(self, directory: Path) -> _Ignores:
        """Raises OSError when ``directory`` cannot be searched (the walker then skips it)."""
        gi = directory / ".gitignore"
        try:
            os.stat(gi)
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM):
                raise  # the folder itself cannot be searched
            return self  # no .gitignore (or a broken / looping link to one)
        if not gi.is_file():
            return self
        try:
            import pathspec

            lines = gi.read_text(encoding="utf-8", errors="replace").splitlines()
            spec = pathspec.GitIgnoreSpec.from_lines(lines)
        except (OSError, ValueError):
            return self
        return _Ignores((*self.specs, (directory, spec)))

    def ignored(self, path: Path, is_dir: bool) -> bool:
        for base, spec in reversed(self.specs):
            try:
                rel = path.relative_to(base).as_posix()
            except ValueError:
                continue
            result = spec.check_file(rel + "/" if is_dir else rel)
            if result.include is not None:
                return bool(result.include)
        return False


def _parent_ignores(root: Path) -> _Ignores:
    """``.gitignore`` files of the enclosing git repository, from its top down to ``root``'s parent."""
    chain: list[Path] = []
    d = root.parent
    while True:
        chain.append(d)
        if (d / ".git").exists() or d.parent == d:
            break
        d = d.parent
    if not (chain[-1] / ".git").exists():
        return _Ignores()
    ignores = _Ignores()
    for d in reversed(chain):
        ignores = ignores.enter(d)
    return ignores


def _candidate(path: Path, explicit: bool, max_size: int) -> Candidate:
    language = detect_language(path)
    if language is None:
        raise Skip(path, "unsupported language",
                   f"unsupported language (extension '{path.suffix or '(none)'}')")
    try:
        st = os.stat(path)
    except OSError as exc:
        raise os_error_skip(path, exc) from None
    check_size(path, st.st_size, max_size)
    return Candidate(str(path), language, st.st_size, st.st_mtime_ns, explicit)


def discover(paths: Iterable[str | os.PathLike], max_size: int = DEFAULT_MAX_FILE_SIZE,
             exclude: Iterable[str | os.PathLike] = ()) -> Discovery:
    """Walk ``paths`` (files or directories). Raises :class:`SourceError` for a bad explicit path."""
    out = Discovery()
    excluded = {os.path.realpath(p) for p in exclude}
    seen: set[str] = set()
    paths = list(paths)
    reals = [os.path.realpath(p) for p in paths]  # symlinks resolved once: a tree reached twice is one tree
    for raw in paths:
        path = Path(os.path.abspath(raw))
        if not os.path.lexists(path):
            raise SourceError(f"{raw}: no such file or directory")
        try:
            mode = os.stat(path).st_mode  # Path.is_dir() would say False for a symlink loop
        except OSError as exc:
            reasons: dict[int | None, str | None] = {errno.ELOOP: "symlink loop", errno.ENOENT: "broken symlink"}
            why = reasons.get(exc.errno, exc.strerror)
            raise SourceError(f"{raw}: {why}") from None
        real = Path(os.path.realpath(path))
        if stat.S_ISDIR(mode):
            out.roots.extend(dict.fromkeys([str(real), str(path)]))  # rows of a run through the link are replaced
            others = tuple(r for r in reals if r != str(real) and not _inside(str(real), r))
            _walk(real, _parent_ignores(real), out, max_size, excluded, seen, others)
            continue
        try:
            check_regular(raw, mode)  # a FIFO would hang the read, a device would be read as code
            cand = _candidate(path, True, max_size)
        except Skip as exc:
            raise SourceError(index_error_message(exc)) from None
        cand.path = str(real)  # its language comes from the name given
        if _first_time(cand, seen):
            out.files.append(cand)
    return out


def top_level(root: Path) -> tuple[list[Path], list[Path]]:
    """(folders, files) directly in ``root`` that a walk of ``root`` would enter or read: not vendored, hidden,
    gitignored or dotfiles, files only in a language conba reads (size and content are checked when read)."""
    ignores = _parent_ignores(root).enter(root)
    folders: list[Path] = []
    files: list[Path] = []
    for path in sorted(root.iterdir()):
        if path.is_dir():
            if not is_excluded_dir(path) and not ignores.ignored(path, True):
                folders.append(path)
        elif path.is_file() and not path.name.startswith(".") and not ignores.ignored(path, False) \
                and detect_language(path) is not None:
            files.append(path)
    return folders, files


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _linked_into(path: Path, others: tuple[str, ...]) -> str | None:
    """The other given path (a real path) that ``path`` reaches through a symlink, if any: it is indexed
    there, once, under its own name."""
    if not others:
        return None
    real = os.path.realpath(path)
    return next((r for r in others if _inside(real, r)), None) if real != str(path) else None


def _first_time(cand: Candidate, seen: set[str]) -> bool:
    """Files reachable twice (through symlinks) are indexed once."""
    real = os.path.realpath(cand.path)
    if real in seen:
        return False
    seen.add(real)
    return True


def _walk(root: Path, ignores: _Ignores, out: Discovery, max_size: int, excluded: set[str],
          seen: set[str], others: tuple[str, ...] = ()) -> None:
    # iterative DFS; each entry carries the real paths of its ancestors to detect symlink loops
    stack: list[tuple[Path, _Ignores, frozenset[str]]] = [(root, ignores, frozenset())]
    while stack:
        directory, ign, ancestors = stack.pop()
        real = os.path.realpath(directory)
        if real in ancestors:
            out.skipped.append((str(directory), "symlink loop"))
            continue
        if real in excluded:
            continue
        try:  # an unreadable directory (no r or x permission...) is skipped and counted, like a file
            ign = ign.enter(directory)
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            out.skipped.append((str(directory), "symlink loop" if exc.errno == errno.ELOOP else "unreadable"))
            continue
        subdirs: list[Path] = []
        for entry in entries:
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir()
                is_file = entry.is_file()
            except OSError:
                is_dir = is_file = False
            if is_dir:
                if is_excluded_dir(path):
                    if not path.name.startswith("."):
                        out.skipped.append((str(path), "vendored directory"))
                elif ign.ignored(path, True):
                    out.skipped.append((str(path), "gitignored"))
                elif entry.is_symlink() and (into := _linked_into(path, others)):
                    out.skipped.append((str(path), f"symlink into {into}"))
                else:
                    subdirs.append(path)
                continue
            if not is_file:
                if entry.is_symlink():
                    try:
                        os.stat(path)
                        reason = "not a regular file"
                    except OSError as exc:
                        reason = "symlink loop" if exc.errno == errno.ELOOP else "broken symlink"
                    out.skipped.append((str(path), reason))
                continue
            if entry.name.startswith("."):
                continue  # dotfiles (.gitignore, .eslintrc.js...) are configuration, not code
            if ign.ignored(path, False):
                out.skipped.append((str(path), "gitignored"))
                continue
            if is_license_name(path) and detect_language(path) is not None:
                out.skipped.append((str(path), "license text"))  # named on the command line: indexed as asked
                continue
            if entry.is_symlink() and (into := _linked_into(path, others)):
                out.skipped.append((str(path), f"symlink into {into}"))
                continue
            try:
                cand = _candidate(path, False, max_size)
            except Skip as exc:
                out.skipped.append((exc.path, exc.reason))
                continue
            if _first_time(cand, seen):
                out.files.append(cand)
        stack.extend((d, ign, ancestors | {real}) for d in reversed(subdirs))
