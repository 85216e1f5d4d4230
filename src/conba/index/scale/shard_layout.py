"""The layout of a sharded index (``shards.json``, :mod:`conba.index.scale.shards`): made, read and checked here.

A layout names the indexed tree (``root``), the number of shards, which shard owns each top-level folder
(``prefixes``: a plain folder name, never a path, so no shard reaches outside the root) and which shards the last
run indexed (``in_use``: a search needs every one of them; a missing or damaged one is an error, never a
silent partial answer). Everything read from the file is checked before it is used: a malformed layout is one
error line naming the file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from conba.index.errors import CodeIndexError
from conba.utils.io import read_json

SHARDS_FILE = "shards.json"
# A shard is an ordinary index and, at search time, a process of its own: past a thousand the processes, not the
# vectors, are the cost, and a tree has rarely that many top-level folders (a shard without one stays empty).
MAX_SHARDS = 1024


def check_count(shards: int, where: str | os.PathLike) -> int:
    """``shards`` when it is a usable number of shards, else a one-line error naming ``where``."""
    if isinstance(shards, bool) or not isinstance(shards, int) or not 1 <= shards <= MAX_SHARDS:
        raise CodeIndexError(f"{where}: the number of shards must be 1..{MAX_SHARDS}, not {shards!r}")
    return shards


def new_layout(shards: int, folder: str | os.PathLike) -> dict[str, Any]:
    return {"format": "conba-shards", "shards": check_count(shards, folder), "by": "top-level folder",
            "root": None, "prefixes": {}, "in_use": []}


def plain_name(name: Any) -> bool:
    """True for a folder name that stays inside the folder it is joined to (no separator, not '.' or '..')."""
    return (isinstance(name, str) and name not in ("", ".", "..") and "\0" not in name and "\n" not in name
            and not any(sep and sep in name for sep in (os.sep, os.altsep, "/")))


def read_layout(path: Path) -> dict[str, Any]:
    """The checked layout in ``path``; :class:`CodeIndexError` naming the file when it is not one."""
    try:
        layout = read_json(path)
    except (OSError, ValueError) as exc:
        raise CodeIndexError(f"{path}: not a shard layout ({exc})") from None
    problem = _problem(layout)
    if problem:
        raise CodeIndexError(f"{path}: not a shard layout ({problem}); rebuild the sharded index in a new folder")
    return layout


def _problem(layout: Any) -> str | None:
    """Why ``layout`` (parsed JSON) is not a usable layout, or None."""
    if not isinstance(layout, dict):
        return f"a JSON object expected, not {type(layout).__name__}"
    count = layout.get("shards")
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_SHARDS:
        return f"'shards' must be a number 1..{MAX_SHARDS}, not {count!r}"[:200]
    root = layout.get("root")
    if root is not None and not (isinstance(root, str) and os.path.isabs(root)):
        return f"'root' must be an absolute folder, not {root!r}"[:200]
    prefixes = layout.get("prefixes", {})
    if not isinstance(prefixes, dict):
        return "'prefixes' must map top-level folder names to shard numbers"
    for name, shard in prefixes.items():
        if not plain_name(name):
            return f"prefix {name!r} is not a top-level folder name (shards stay inside the indexed root)"[:200]
        if isinstance(shard, bool) or not isinstance(shard, int) or not 0 <= shard < count:
            return f"prefix {name!r}: shard {shard!r} is not 0..{count - 1}"[:200]
    used = layout.get("in_use", [])
    if not isinstance(used, list) or any(isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < count
                                         for s in used):
        return f"'in_use' must list shard numbers 0..{count - 1}"
    layout.setdefault("prefixes", {})
    return None


def shards_in_use(layout: dict[str, Any], folder: Path) -> list[int]:
    """The shards a search needs: those the last `conba index` run indexed (or is indexing). A layout written
    before ``in_use`` was recorded: the shards whose folder exists or that own a folder of the tree."""
    if "in_use" in layout:
        return sorted(set(layout["in_use"]))
    root = Path(layout["root"]) if layout.get("root") else None
    owned = {s for name, s in layout["prefixes"].items() if root is None or (root / name).is_dir()}
    return sorted(owned | {i for i in range(layout["shards"]) if (folder / f"shard-{i}").exists()})
