"""Where the project's data sets live when a tool is not given a file: the ``CONBA_DATA`` folder.

Shipped code has no default data path: a command that needs a data set takes it as an argument, or
reads it from ``$CONBA_DATA`` (the folder holding ``atcoder_dev.jsonl``, ``algorithms_dev/`` ...).
"""

from __future__ import annotations

import os
from pathlib import Path

from conba.errors import ConfigError

DATA_ENV = "CONBA_DATA"


def data_path(*parts: str, what: str = "") -> Path:
    """``$CONBA_DATA/parts...``; without the variable, a one-line error naming what to pass instead."""
    root = os.environ.get(DATA_ENV, "").strip()
    if not root:
        name = "/".join(parts)
        raise ConfigError(f"no {what or name} given: pass it, or set {DATA_ENV} to the folder holding {name}")
    return Path(root).joinpath(*parts)


def data_files(names: tuple[str, ...] | list[str], what: str) -> list[Path]:
    """The files ``names`` of ``$CONBA_DATA`` that exist (a command's default data); without the variable, or
    with none of them there, a one-line error naming ``what`` to pass instead."""
    paths = [data_path(name, what=what) for name in names]
    found = [p for p in paths if p.is_file()]
    if not found:
        raise ConfigError(f"no {what} given and none of {', '.join(names)} in ${DATA_ENV} ({paths[0].parent})")
    return found
