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
