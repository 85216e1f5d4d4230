"""Serve one consistent snapshot of an index, and swap in a new one when ``conba index`` rewrites it.

A snapshot is an :class:`~conba.index.Index` whose SQLite connection holds an open read
transaction (WAL mode gives it a fixed view of the database), plus the FAISS vectors read from
the files of the same moment. ``conba index`` can rewrite the database meanwhile: the snapshot
keeps reading the old rows, so a search never mixes old vectors with new rows (no torn reads).

:meth:`IndexHolder.refresh` (polled every ``interval`` seconds) loads a new snapshot when the
manifest file changed, no writer holds the index lock, and the database says ``ready``; it checks
that the manifest did not change while it read, so the rows and the vectors belong together.
Every read runs on the holder's single thread, since an SQLite connection is bound to its thread.
While a snapshot is open, SQLite cannot checkpoint the write-ahead log past it, so ``index.sqlite-wal``
grows during a re-index and shrinks again after the swap.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from conba.index.errors import CodeIndexError
from conba.index.storage.lock import holder

T = TypeVar("T")
MANIFEST_NAME = "manifest.json"
DB_NAME = "index.sqlite"


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """Identity of the manifest file: (inode, mtime_ns, size); it is replaced atomically on every write."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


@dataclass
class Snapshot:
    index: Any                      # conba.index.Index, reading inside one read transaction
    manifest: dict[str, Any]
    stamp: tuple[int, int, int]
    generation: int
    loaded_at: float = field(default_factory=time.time)
    facts: dict[str, Any] = field(default_factory=dict)
    cache: dict[Any, Any] = field(default_factory=dict)  # per-snapshot results (clone classes)

    def close(self) -> None:
        try:
            self.index.store.db.execute("ROLLBACK")
        except Exception:  # the connection may already be broken; closing is all that is left
            pass
        self.index.close()


class IndexHolder:
    """The current snapshot of the index at ``path``, for a server that encodes with ``model`` on
    ``engine``: an index re-built with another model or engine is refused (``/health`` says why)."""

    def __init__(self, path: str | os.PathLike, model: Any, engine: str | None = None):
        self.path = Path(path)
        self.model = model
        self.engine = engine
        self.snapshot: Snapshot | None = None
        self.error: str | None = None       # why there is no (newer) snapshot, for /health
        self.generation = 0
        self._thread: ThreadPoolExecutor | None = None

    def start(self) -> None:
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="conba-index")

    # ------------------------------------------------------------------ on the reader thread
    def refresh(self) -> bool:
        """Load a newer snapshot if there is a complete one; True when it swapped. Reader thread only."""
        stamp = _stamp(self.path / MANIFEST_NAME)
        if stamp is None:
            if self.snapshot is None:
                self.error = (f"{self.path}: no index here yet; build one with "
                              f"`conba index PATH --index {self.path}`")
            return False
        if self.snapshot is not None and stamp == self.snapshot.stamp:
            return False
        pid = holder(self.path)
        if pid is not None:  # a writer is busy: keep serving the old snapshot
            self.error = f"{self.path}: `conba index` (pid {pid}) is updating the index; serving the previous one"
            return False
        try:
            fresh = self._open(stamp)
        except CodeIndexError as exc:
            self.error = str(exc)
            return False
        if fresh is None:
            return False
        old, self.snapshot, self.error = self.snapshot, fresh, None
        if old is not None:
            old.close()
        return True

    def _open(self, stamp: tuple[int, int, int]) -> Snapshot | None:
        from conba.index import Index

        idx = Index(self.path, model=self.model, create=False, engine=self.engine)
        try:
            idx.store.db.execute("BEGIN")  # deferred: the first read below fixes the view of the database
            manifest = idx.manifest()      # raises unless the database says "ready"
            idx.load_vectors()
            if _stamp(self.path / MANIFEST_NAME) != stamp:  # rewritten while we read: try again later
                raise _Changed
            facts = idx.stats()
        except BaseException as exc:
            try:
                idx.store.db.execute("ROLLBACK")
            finally:
                idx.close()
            if isinstance(exc, _Changed):
                return None
            raise
        self.generation += 1
        return Snapshot(idx, manifest, stamp, self.generation, facts=facts)

    def close_now(self) -> None:
        if self.snapshot is not None:
            self.snapshot.close()
            self.snapshot = None

    # ------------------------------------------------------------------ from the event loop
    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on the reader thread."""
        if self._thread is None:
            raise RuntimeError("IndexHolder.start() was not called")
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn, *args)

    async def with_snapshot(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(snapshot, *args)`` on the reader thread; :class:`NoIndex` when there is no snapshot."""
        def run() -> T:
            if self.snapshot is None:
                self.refresh()
            if self.snapshot is None:
                raise NoIndex(self.error or f"{self.path}: no index")
            return fn(self.snapshot, *args)

        return await self.call(run)

    async def poll(self, interval: float) -> None:
        """Refresh every ``interval`` seconds until cancelled."""
        while True:
            await asyncio.sleep(interval)
            await self.call(self.refresh)

    async def close(self) -> None:
        if self._thread is not None:
            await self.call(self.close_now)
            self._thread.shutdown(wait=True)
            self._thread = None


class NoIndex(Exception):
    """No snapshot to serve (no index yet, or it could not be read); the message says why."""


class _Changed(Exception):
    pass
