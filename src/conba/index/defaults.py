"""Where an index lives unless told otherwise: the one definition used by the API and the CLI.

Kept free of heavy imports so the CLI can build its ``--index`` option without loading the index.
"""

from __future__ import annotations

import os

DEFAULT_INDEX_DIR = ".conba-index"
INDEX_ENV = "CONBA_INDEX"
COMMIT_EVERY = 256  # vectors written per transaction while encoding (builder, upgrade, Ray)
COMMIT_EVERY_ENV = "CONBA_INDEX_COMMIT_EVERY"


def default_index_dir(value: str | os.PathLike | None = None) -> str:
    """``value`` when given, else ``$CONBA_INDEX``, else ``.conba-index`` (in the current directory)."""
    if value:
        return os.fspath(value)
    return os.environ.get(INDEX_ENV) or DEFAULT_INDEX_DIR


def commit_every(value: int | None = None) -> int:
    """Vectors per transaction while an index encodes: ``value`` when given, else ``$CONBA_INDEX_COMMIT_EVERY``,
    else 256 (ConfigError in one line for a value that is not a positive integer)."""
    if value:
        return value
    raw = os.environ.get(COMMIT_EVERY_ENV, "").strip()
    if not raw:
        return COMMIT_EVERY
    if not raw.isdigit() or int(raw) < 1:
        from conba.errors import ConfigError

        raise ConfigError(f"{COMMIT_EVERY_ENV}={raw!r}: give a positive whole number of vectors per transaction")
    return int(raw)


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
