"""Where an index lives unless told otherwise: the one definition used by the API and the CLI.

Kept free of heavy imports so the CLI can build its ``--index`` option without loading the index.
"""

from __future__ import annotations

import os

DEFAULT_INDEX_DIR = ".conba-index"
INDEX_ENV = "CONBA_INDEX"


def default_index_dir(value: str | os.PathLike | None = None) -> str:
    """``value`` when given, else ``$CONBA_INDEX``, else ``.conba-index`` (in the current directory)."""
    if value:
        return os.fspath(value)
    return os.environ.get(INDEX_ENV) or DEFAULT_INDEX_DIR


def missing_index(path: str | os.PathLike, create: bool) -> str | None:
    """Why no index can be opened at ``path``, a folder without an index database: it holds a sharded index
    (``shards.json``, :mod:`conba.index.scale.shards`: never a single index inside it), or nothing while ``create``
    is False. None when a new index may be made there."""
    if os.path.isfile(os.path.join(path, "shards.json")):
        return (f"{path}: a sharded index (`conba index --shards`): `conba index` and `conba search` (without "
                "--files) read it whole; clones, map, serve and search --files read one index: give them one shard "
                f"(--index {os.path.join(path, 'shard-0')} ...)")
    if not create:
        return f"{path}: no index here; build one with `conba index PATH --index {path}`"
    return None
