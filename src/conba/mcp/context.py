"""What a tool body sees: the served snapshot of the index, the roots it may read, and per-snapshot caches.

A :class:`ToolContext` is made for each call on the index reader's thread (:mod:`conba.mcp.state`); what it
caches (the units by file, port maps, clone classes) lives as long as the snapshot, so a re-indexed tree is
never answered from an old map.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from conba.errors import ConfigError
from conba.mcp.locate import check_inside, pick_unit, roots_of_files, split_location, stored_name
from conba.source.languages import check_language
from conba.source.records import Unit

T = TypeVar("T")
MAX_CACHED = 16  # port maps / clone reports kept per snapshot


@dataclass
class ToolContext:
    index: Any                      # conba.index.Index, reading one snapshot
    cache: dict[Any, Any]           # the snapshot's cache (conba.serve.reload.Snapshot.cache)
    generation: int
    given_roots: list[str] | None   # resolved PATHS of `conba mcp PATHS`; None: the index's own folders
    loaded_at: float = field(default_factory=time.time)
    watcher: Any = None             # conba.index.storage.watch.Watcher of `conba mcp --watch`, or None

    # ------------------------------------------------------------------ cached per snapshot
    def cached(self, key: Any, make: Callable[[], T]) -> T:
        if key not in self.cache:
            if len(self.cache) >= MAX_CACHED:
                for old in [k for k in self.cache if k[0] != "units"][:MAX_CACHED // 2]:
                    del self.cache[old]
            self.cache[key] = make()
        return self.cache[key]

    def units(self) -> list[Unit]:
        return self.cached(("units",), self.index.units)

    def units_by_file(self) -> dict[str, list[Unit]]:
        def group() -> dict[str, list[Unit]]:
            out: dict[str, list[Unit]] = {}
            for u in self.units():
                out.setdefault(u.file, []).append(u)
            return out
        return self.cached(("units", "by-file"), group)

    @property
    def roots(self) -> list[str]:
        if self.given_roots is not None:
            return self.given_roots
        return self.cached(("units", "roots"), lambda: roots_of_files(self.units_by_file()))

    # ------------------------------------------------------------------ arguments
    def inside(self, path: str, what: str = "file") -> str:
        """``path`` resolved, refused (never read) outside the roots."""
        return check_inside(path, self.roots, what)

    def unit(self, file: str, function: str | None = None, line: int | None = None, what: str = "file") -> Unit:
        """The indexed function ``function`` (or at ``line``) of ``file`` (``FILE:LINE`` accepted)."""
        file, line = split_location(file, line)
        resolved = self.inside(file, what)
        return pick_unit(self.units_by_file().get(stored_name(resolved), []), file, function, line)

    def units_below(self, path: str, what: str) -> list[Unit]:
        """The indexed units of a file or folder inside the roots."""
        from conba.mapping import select_units

        resolved = self.inside(path, what)
        found = select_units(self.units(), [resolved])
        if not found:
            raise ConfigError(f"{what}: {path} holds no indexed function")
        return found


def language(name: str | None, what: str) -> str | None:
    """A normalised language name or None; an unknown one is an error naming ``what`` and the known names."""
    return check_language(name, what)


def check_range(value: int, low: int, high: int, what: str) -> int:
    if not low <= value <= high:
        raise ConfigError(f"{what} must be between {low} and {high}, got {value}")
    return value
