"""The files of a conba model folder, without loading it: which folder ``load_model(name)`` reads and a
listing of its files (name, size, modification time), for stamps that say "these are the files whose
fingerprint was checked" (:mod:`conba.index.model.lazy`, the query encoder cache of
:mod:`conba.engine.query_encoder`)."""

from __future__ import annotations

import os
from pathlib import Path

import conba
from conba.constants import MODEL_CONFIG_NAME, SHIPPED_MODEL_DIRS

__all__ = ["CONFIG_NAME", "SHIPPED_DIRS", "folder_files", "model_folder"]
CONFIG_NAME = MODEL_CONFIG_NAME
SHIPPED_DIRS = SHIPPED_MODEL_DIRS


def model_folder(name: str) -> Path | None:
    """The one conba model folder ``load_model(name)`` reads, or None (a hub name, ``zero-shot``,
    ``default-sdtp`` or anything else that is not one folder)."""
    if name in SHIPPED_DIRS:
        folder = Path(conba.__file__).parent / SHIPPED_DIRS[name]
    else:
        folder = Path(name)
    return folder.resolve() if (folder / CONFIG_NAME).is_file() else None


def folder_files(folder: Path) -> list[tuple[str, int, int]]:
    """(relative path, size, mtime in ns) of every file under ``folder``, sorted."""
    out = []
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for n in sorted(names):
            st = os.stat(os.path.join(root, n))
            out.append((os.path.relpath(os.path.join(root, n), folder), st.st_size, st.st_mtime_ns))
    return out
