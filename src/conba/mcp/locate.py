"""What a tool argument points at: a path inside the served roots (anything else is refused before it is read),
and an indexed function given as a file and a name, or as ``file:line``.

The roots are the folders and files ``conba mcp PATHS`` was given; without PATHS, the folders that hold the
index's files (so a new file beside indexed ones may be searched, nothing elsewhere). A path is resolved
(``~``, relative to the server's working folder, symlinks followed) with :func:`os.path.realpath`, which
reads no file's contents, and then checked against the roots: a symlink inside a root that points outside
is refused too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

from conba.clones.display import display_path
from conba.errors import ConfigError
from conba.index.storage.store import db_path, shown_path
from conba.source.records import Unit

_LINE_SUFFIX = re.compile(r"^(.*\S):(\d+)$")


class OutsideRoots(ConfigError):
    """A path outside the served roots: refused, never read."""


def real(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


def under(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def roots_of_files(files: Iterable[str]) -> list[str]:
    """The outermost folders holding ``files`` (shown paths of the index): the roots of an index served alone."""
    folders = sorted({os.path.dirname(real(f)) for f in files})
    out: list[str] = []
    for folder in folders:  # sorted: a parent comes before its children
        if not under(folder, out):
            out.append(folder)
    return out


def check_inside(path: str, roots: Sequence[str], what: str = "file") -> str:
    """The resolved ``path``, or :class:`OutsideRoots` when it lies outside every root."""
    if not path or not path.strip():
        raise ConfigError(f"{what}: empty path")
    resolved = real(path)
    if not under(resolved, roots):
        shown = ", ".join(display_path(r) for r in roots[:5]) or "none"
        raise OutsideRoots(f"{path}: outside the indexed roots ({shown}); conba reads only what it serves")
    return resolved


def split_location(file: str, line: int | None) -> tuple[str, int | None]:
    """``("a.py:12", None)`` -> ``("a.py", 12)``; a name that really ends in ``:N`` stays whole when it exists."""
    match = _LINE_SUFFIX.match(file)
    if match and line is None and not os.path.lexists(file):
        return match.group(1), int(match.group(2))
    return file, line


def stored_name(resolved: str) -> str:
    """A resolved path as the index shows its files (:func:`conba.index.storage.store.shown_path`)."""
    return shown_path(db_path(resolved))


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def pick_unit(units: Sequence[Unit], where: str, function: str | None, line: int | None) -> Unit:
    """The unit of one file named ``function`` (a qualified name, or its last part) or spanning ``line``
    (the innermost one); :class:`ConfigError` with what the file holds when there is none or several."""
    if not units:
        raise ConfigError(f"{where}: not a file of the index (index it, or check the path)")
    listing = ", ".join(f"{u.qualname}:{u.start_line}" for u in units[:12]) + (" ..." if len(units) > 12 else "")
    if function:
        exact = [u for u in units if u.qualname == function]
        found = exact or [u for u in units if _short(u.qualname) == _short(function)]
        if line is not None and len(found) > 1:
            found = [u for u in found if u.start_line <= line <= u.end_line] or found
        if not found:
            raise ConfigError(f"{where}: no function {function!r} (it has {listing})")
        if len(found) > 1:
            lines = ", ".join(str(u.start_line) for u in found)
            raise ConfigError(f"{where}: {len(found)} functions named {function!r} (lines {lines}); give line too")
        return found[0]
    if line is None:
        raise ConfigError(f"{where}: give function (a name) or line, or file as FILE:LINE")
    spanning = [u for u in units if u.start_line <= line <= u.end_line]
    if not spanning:
        raise ConfigError(f"{where}:{line}: no indexed function there (it has {listing})")
    return min(spanning, key=lambda u: (u.end_line - u.start_line, u.start_line))
