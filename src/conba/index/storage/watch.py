"""An index that follows the working tree: ``conba index PATH --watch`` and ``conba mcp --watch``.

The `watchfiles` library (Rust ``notify``: inotify, FSEvents, ReadDirectoryChangesW) reports file events;
they are grouped until the tree is quiet for :data:`QUIET_MS` (at most :data:`GROUP_MS`), so a burst of saves,
a formatter run or a branch switch is one update, not one per file. Each update is an ordinary incremental
``Index.add`` of the watched PATHS: unchanged files are only stat'ed, changed ones re-extracted, and only
functions whose content hash is new are encoded; a deleted or renamed file is dropped because the walk no
longer finds it (re-walking the PATHS instead of applying the events one by one is what makes renames, folder
moves and branch switches come out right, whatever order the events arrive in). Events that arrive during an
update are kept by the watcher and start the next one.

Updates take the index's writer lock as ``conba index`` does (waiting for another writer), stage their
changes (:mod:`conba.index.storage.staging`) and swap them in at the end, so readers (``conba mcp``, ``conba serve``,
``conba search``) see the index before or after an update, never half of one. Ctrl-C while idle stops at
once; during an update the update is finished first (a second Ctrl-C abandons it: the staged changes are
dropped and the index stays as the last completed update left it).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from conba.errors import ConbaError

QUIET_MS = 300    # an update starts once no event came for this long...
GROUP_MS = 2000   # ...or this long after the first event of a burst, whichever comes first
READY_MS = 250    # the watch is known to be in place after its first quiet period this long


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class SourceFilter:
    """Which events can change the index: files conba indexes (by extension), ``.gitignore`` files, and
    folders (a moved or deleted folder); never the index folder itself, version-control or vendored folders."""

    def __init__(self, index_dir: str | os.PathLike):
        from watchfiles import DefaultFilter

        from conba.source.filters import EXCLUDED_DIRS

        self.index_dir = os.path.realpath(index_dir)
        self._default = DefaultFilter(ignore_dirs=tuple(set(DefaultFilter.ignore_dirs) | set(EXCLUDED_DIRS)))

    def __call__(self, change: Any, path: str) -> bool:
        from conba.syntax.languages import detect_language

        if _under(path, self.index_dir) or not self._default(change, path):
            return False
        name = os.path.basename(path)
        return (name == ".gitignore" or detect_language(path) is not None or "." not in name
                or os.path.isdir(path))


@dataclass
class WatchStatus:
    """What the watcher has done: for ``conba mcp``'s ``index_status`` and the tests."""

    paths: list[str]
    updates: int = 0
    last_update: float | None = None     # time.time() at the end of the last update
    last_seconds: float | None = None
    last_error: str | None = None
    events: int = 0
    running: bool = False
    history: list[dict[str, Any]] = field(default_factory=list)  # the last few updates' reports

    def to_dict(self) -> dict[str, Any]:
        return {"paths": self.paths, "updates": self.updates, "events": self.events, "running": self.running,
                "last_update_age_s": None if self.last_update is None else round(time.time() - self.last_update, 1),
                "last_seconds": None if self.last_seconds is None else round(self.last_seconds, 2),
                **({"last_error": self.last_error} if self.last_error else {})}


class Watcher:
    """Re-index ``paths`` into ``index`` whenever they change: an open :class:`conba.index.Index`, or a function
    that opens one, called (and the index closed again) in the thread that runs :meth:`run`, since an index's
    SQLite connection belongs to the thread that opened it.

    ``encoder``: handed to ``Index.add`` (``conba mcp`` wraps the encoding in its model lock). ``on_update``
    is called with each update's report (or the error message of a failed one: the watcher goes on)."""

    def __init__(self, index: Any, paths: Sequence[str | os.PathLike], *, max_file_size: int | None = None,
                 encoder: Callable[..., None] | None = None,
                 on_update: Callable[[Any, str | None], None] | None = None,
                 quiet_ms: int = QUIET_MS, group_ms: int = GROUP_MS):
        self.index = index
        self.paths = [os.path.realpath(p) for p in paths]
        self.max_file_size = max_file_size
        self.encoder = encoder
        self.on_update = on_update
        self.quiet_ms, self.group_ms = quiet_ms, group_ms
        self.state = WatchStatus([str(p) for p in paths])
        self.stop_event = threading.Event()
        self.ready = threading.Event()  # set once the OS watch is in place
        self._stop_after_update = False

    def status(self) -> dict[str, Any]:
        return self.state.to_dict()

    def update(self) -> Any:
        """One incremental update of the index; returns its report (raises what ``Index.add`` raises)."""
        kwargs: dict[str, Any] = {"encoder": self.encoder}
        if self.max_file_size is not None:
            kwargs["max_file_size"] = self.max_file_size
        self.state.running = True
        t0 = time.perf_counter()
        try:
            return self.index.add(self.paths, **kwargs)
        finally:
            self.state.running = False
            self.state.last_seconds = time.perf_counter() - t0
            self.state.last_update = time.time()
            self.state.updates += 1

    def _update_and_report(self) -> None:
        try:
            report, error = self.update(), None
        except ConbaError as exc:  # e.g. every file deleted: say so and keep watching
            report, error = None, str(exc)
        self.state.last_error = error
        if self.on_update is not None:
            self.on_update(report, error)

    def _update_finishing_on_ctrl_c(self) -> None:
        """In the main thread, the first Ctrl-C during an update lets it finish (then stops); a second abandons it."""
        if threading.current_thread() is not threading.main_thread():
            return self._update_and_report()
        asked: list[int] = []

        def handler(signum: int, frame: Any) -> None:
            if asked:
                raise KeyboardInterrupt
            asked.append(signum)
            import sys

            print("stopping after this update (Ctrl-C again to abandon it)", file=sys.stderr, flush=True)

        previous = signal.signal(signal.SIGINT, handler)
        try:
            self._update_and_report()
        finally:
            signal.signal(signal.SIGINT, previous)
        if asked:
            self._stop_after_update = True

    def run(self, changed: Callable[[set], None] | None = None, on_ready: Callable[[], None] | None = None) -> None:
        """Watch until :meth:`stop` (or Ctrl-C in the main thread); each group of events is one update.
        ``on_ready`` is called once the watch is in place (events from then on are seen); ``changed`` with each
        group of events, before its update."""
        from watchfiles import watch

        opened = not hasattr(self.index, "add")
        if opened:
            self.index = self.index()
        try:
            self._watch(watch, changed, on_ready)
        finally:
            if opened:
                self.index.close()

    def _watch(self, watch: Callable[..., Any], changed: Callable[[set], None] | None,
               on_ready: Callable[[], None] | None) -> None:
        for changes in watch(*self.paths, watch_filter=SourceFilter(self.index.path), debounce=self.group_ms,
                             step=self.quiet_ms, stop_event=self.stop_event, raise_interrupt=False,
                             rust_timeout=READY_MS, yield_on_timeout=True):
            if not self.ready.is_set():  # the first timeout: the OS watch exists
                self.ready.set()
                if on_ready is not None:
                    on_ready()
            if not changes:
                if self.stop_event.is_set():
                    break
                continue
            self.state.events += len(changes)
            if changed is not None:
                changed(changes)
            self._update_finishing_on_ctrl_c()
            if self._stop_after_update or self.stop_event.is_set():
                break

    def stop(self) -> None:
        self.stop_event.set()


def describe(report: Any) -> str:
    """One line for people about an update's report."""
    parts = [f"{report.files_changed} files changed", f"{report.units_encoded} functions encoded"]
    if report.files_removed:
        parts.append(f"{report.files_removed} files removed")
    return (time.strftime("%H:%M:%S ") + "updated: " + ", ".join(parts)
            + f" -> {report.units_total} functions ({report.seconds:.1f} s)")


def watch_paths_exist(paths: Iterable[str | os.PathLike]) -> list[str]:
    """The PATHS to watch, each of which must exist (watching a missing path is an error of the OS layer)."""
    from conba.index.errors import SourceError

    out = []
    for p in paths:
        if not os.path.exists(p):
            raise SourceError(f"{p}: no such file or folder to watch")
        out.append(str(p))
    return out
