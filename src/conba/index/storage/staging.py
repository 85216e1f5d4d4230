"""A run's changes wait beside the index until their vectors are there, then replace it in one transaction.

``conba index`` walks the paths, extracts the units of the changed files and encodes what has no vector yet;
that takes minutes to hours. Written straight into the ``files`` / ``units`` tables, a run killed halfway
would leave an index that no longer matches its vector file, unusable until a run completes. Instead the
changed files and their units go to ``staged_files`` / ``staged_units``, which readers never look at; vectors
are committed batch by batch as before (keyed by content hash, so a killed run's work is reused by the next);
and :func:`commit` replaces the staged files' rows and drops the removed files in one transaction, just
before the vector file and manifest are rewritten. A run killed before that leaves the index as the last
completed run left it: search, clones and map keep working on it. The window left is the commit and the
rewrite of the vector file at the end of the run.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable

from conba.index.storage.store import Store, db_path
from conba.source.records import Unit

__all__ = ["clear", "stage_files", "stage_removals", "staged_count", "commit"]


def clear(store: Store) -> None:
    """Forget what an earlier run staged and never committed (its vectors stay, for reuse)."""
    with store.transaction() as db:
        db.execute("DELETE FROM staged_units")
        db.execute("DELETE FROM staged_files")


def stage_files(store: Store, items: list[tuple[str, str, int, int, list[Unit]]]) -> None:
    """Stage new contents of files: (path, language, size, mtime_ns, units), as ``Store.replace_files``."""
    with store.transaction() as db:
        for path, language, size, mtime_ns, units in items:
            path = db_path(path)
            db.execute("DELETE FROM staged_units WHERE file = ?", (path,))
            db.execute("INSERT OR REPLACE INTO staged_files(path, language, size, mtime_ns, removed) "
                       "VALUES (?, ?, ?, ?, 0)", (path, language, size, mtime_ns))
            db.executemany(
                "INSERT INTO staged_units(file, qualname, language, start_line, end_line, kind, hash, code) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(path, u.qualname, u.language, u.start_line, u.end_line, u.kind, u.hash, u.code) for u in units])


def stage_removals(store: Store, stored_paths: Iterable[str]) -> int:
    """Stage the removal of files (paths as stored). Returns how many."""
    paths = list(stored_paths)
    with store.transaction() as db:
        db.executemany("INSERT OR REPLACE INTO staged_files(path, removed) VALUES (?, 1)", [(p,) for p in paths])
    return len(paths)


def staged_count(store: Store) -> int:
    """Files staged by a run that has not committed them (a run in progress, or one that was killed)."""
    return store.db.execute("SELECT count(*) FROM staged_files").fetchone()[0]


def commit(store: Store, then: Callable[[sqlite3.Connection], None] | None = None, **meta: str | None) -> None:
    """Replace the staged files' rows by the staged ones, drop the removed files and set ``meta``, in one
    transaction; the staging tables are empty afterwards. ``then(db)`` runs in that transaction once the
    rows are swapped, while the staging tables still name the changed files (the file vectors,
    :func:`conba.index.files.vectors.refresh`)."""
    with store.transaction() as db:
        db.execute("DELETE FROM units WHERE file IN (SELECT path FROM staged_files)")
        db.execute("DELETE FROM files WHERE path IN (SELECT path FROM staged_files WHERE removed = 1)")
        db.execute("INSERT OR REPLACE INTO files(path, language, size, mtime_ns) "
                   "SELECT path, language, size, mtime_ns FROM staged_files WHERE removed = 0 ORDER BY rowid")
        db.execute("INSERT INTO units(file, qualname, language, start_line, end_line, kind, hash, code) "
                   "SELECT file, qualname, language, start_line, end_line, kind, hash, code FROM staged_units "
                   "ORDER BY rowid")
        if then is not None:
            then(db)
        db.execute("DELETE FROM staged_units")
        db.execute("DELETE FROM staged_files")
        for key, value in meta.items():
            if value is None:
                db.execute("DELETE FROM meta WHERE key = ?", (key,))
            else:
                db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, str(value)))
