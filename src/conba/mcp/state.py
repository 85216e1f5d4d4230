"""What ``conba mcp`` holds while it serves: the model (loaded once, kept warm), the served snapshot of the
index, the roots it may read, and with ``--watch`` the watcher thread that keeps the index following the tree.

Every tool body runs on the snapshot holder's one reader thread (:class:`conba.serve.reload.IndexHolder`: an
SQLite read transaction and the vectors of the same moment, swapped for a newer snapshot when the manifest
changes, never while a writer holds the index lock), so an answer never mixes two versions of the index. The
snapshot is refreshed before each call: a ``conba index`` run or a watcher update is seen by the next call.
The model is shared by the tools and the watcher's encoding; :attr:`ServerState.model_lock` keeps them from
running it at once (a tokenizer is not safe to share between threads).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conba.mcp.context import ToolContext
from conba.serve.reload import IndexHolder, NoIndex

WARM_UP = "def warm_up(values):\n    return [v + 1 for v in values]\n"


class ServerState:
    """The served index at ``folder`` read with ``model`` on ``engine``; ``roots``: the resolved PATHS the
    server was given (None: the folders of the index's files); ``watch_paths``: follow them (``--watch``)."""

    def __init__(self, folder: str | os.PathLike, model: Any, engine: str, roots: list[str] | None = None,
                 watch_paths: list[str] | None = None):
        self.folder = Path(folder)
        self.model = model
        self.engine = engine
        self.roots = roots
        self.holder = IndexHolder(self.folder, model, engine)
        self.model_lock = threading.Lock()
        self.watch_paths = watch_paths
        self.watcher: Any = None
        self._watch_thread: threading.Thread | None = None

    # ------------------------------------------------------------------ on the reader thread
    def _context(self) -> ToolContext:
        self.holder.refresh()
        snap = self.holder.snapshot
        if snap is None:
            raise NoIndex(self.holder.error or f"{self.folder}: no index")
        return ToolContext(snap.index, snap.cache, snap.generation, self.roots, snap.loaded_at, self.watcher)

    def run_sync(self, fn: Callable[..., str], kwargs: dict[str, Any]) -> str:
        with self.model_lock:
            return fn(self._context(), **kwargs)

    def warm_up(self) -> None:
        """Load the snapshot and run one query through the search path, so the first call pays for neither."""
        with self.model_lock:
            ctx = self._context()
            if len(ctx.index):
                ctx.index.search(WARM_UP, k=1, query_language="python")

    # ------------------------------------------------------------------ from the event loop
    def start(self) -> None:
        self.holder.start()

    @staticmethod
    def preload_in_background() -> None:
        """Import what the first clones_of would (igraph: 3 s on a busy 2-core machine) in a daemon thread, once
        the server answers: the first call of the other tools does not wait for it."""
        import importlib

        threading.Thread(target=importlib.import_module, args=("conba.clones.grouping",), daemon=True,
                         name="conba-preload").start()

    async def call(self, fn: Callable[..., str], **kwargs: Any) -> str:
        return await self.holder.call(self.run_sync, fn, kwargs)

    async def close(self) -> None:
        self.stop_watching()
        await self.holder.close()

    # ------------------------------------------------------------------ --watch
    def _encode_locked(self, *args: Any, **kwargs: Any) -> None:
        from conba.index.storage.builder import encode_missing

        with self.model_lock:
            encode_missing(*args, **kwargs)

    def start_watching(self, on_update: Callable[[Any, str | None], None] | None = None) -> None:
        """Follow ``watch_paths`` in a thread of its own (:class:`conba.index.storage.watch.Watcher`)."""
        from conba.index import Index
        from conba.index.storage.watch import Watcher, watch_paths_exist

        if not self.watch_paths:
            return
        def open_writer() -> Any:  # in the watcher's thread, which its SQLite connection belongs to
            return Index(self.folder, model=self.model, engine=self.engine, wait=True)

        self.watcher = Watcher(open_writer, watch_paths_exist(self.watch_paths), encoder=self._encode_locked,
                               on_update=on_update)
        self._watch_thread = threading.Thread(target=self.watcher.run, name="conba-watch", daemon=True)
        self._watch_thread.start()
        self.watcher.ready.wait(10)  # events from now on are seen

    def stop_watching(self) -> None:
        """Stop the watcher; an update in progress is finished first, so the index is left complete."""
        if self.watcher is not None:
            self.watcher.stop()
        if self._watch_thread is not None:
            self._watch_thread.join()
            self._watch_thread = None
