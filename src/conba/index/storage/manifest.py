"""Reading an index's ``manifest.json``: only a completed run's, and only when it matches the database; recording
why a run failed (:func:`record_failure`), which a reader then says.

A reader that finds the index being written, interrupted or failed says so in one line (who writes
it, or why the last run failed), instead of reading half-written vectors.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from conba.index.errors import CodeIndexError, CorruptIndexError, IncompleteIndexError, IndexBusyError
from conba.index.model.identity import DEFAULT_ENGINE, failure_reason
from conba.index.storage.lock import holder
from conba.index.storage.staging import staged_count
from conba.index.storage.store import Store
from conba.utils.io import read_json

__all__ = ["read_manifest", "record_failure"]


def read_manifest(folder: Path, path: Path, store: Store, lock_held: bool) -> dict[str, Any]:
    """The manifest at ``path`` of the index in ``folder``; ``lock_held``: this process writes the index."""
    state = store.get_meta("state")
    if state is None and not staged_count(store):
        raise CodeIndexError(f"{folder}: the index is empty; add code with `conba index PATH`")
    if state != "ready":  # being written, or a first run (its changes staged) that did not complete
        pid = None if lock_held else holder(folder)
        if pid is not None:
            raise IndexBusyError(f"{folder}: `conba index` (pid {pid}) is writing this index right now; "
                                 "try again when it has finished")
        failure = store.get_meta("failure")
        if failure:
            raise IncompleteIndexError(f"{folder}: the last `conba index` run failed: {failure}; fix "
                                       "that, then run `conba index` again")
        raise IncompleteIndexError(f"{folder}: indexing was interrupted; re-run `conba index` to finish it")
    try:
        manifest = read_json(path)
    except (FileNotFoundError, ValueError) as exc:
        raise CorruptIndexError(f"{exc}; re-run `conba index` to rebuild it") from None
    if not isinstance(manifest, dict) or manifest.get("format") != "conba-index":
        raise CorruptIndexError(f"{path}: not a conba index manifest; re-run `conba index` to rebuild it")
    if manifest.get("fingerprint") != store.get_meta("fingerprint"):
        raise CorruptIndexError(f"{path}: manifest does not match the database; re-run `conba index` to rebuild it")
    manifest.setdefault("engine", DEFAULT_ENGINE)  # written before the engine was recorded
    return manifest


def record_failure(store: Store, exc: Exception) -> None:
    """Note why a run failed, so readers say what to fix instead of "re-run `conba index`"."""
    try:
        if store.get_meta("state") != "ready":  # building, or a first run whose changes are staged
            store.set_meta(failure=failure_reason(exc))
    except sqlite3.Error:
        pass  # the database itself is failing (disk full...): readers fall back to "interrupted"
