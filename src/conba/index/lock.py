"""One writer per index folder: an exclusive ``fcntl.flock`` on ``index.lock`` in the folder.

``conba index`` (``Index.add``, ``--rebuild``) holds the lock while it writes; a second writer
either fails at once with :class:`IndexBusyError` naming the holder's pid, or waits for it
(``wait=True``). The lock belongs to the open file, so the kernel releases it when the holder
exits, even after ``kill -9``: a stale lock file never blocks anyone. Readers do not take the
lock; they only ask :func:`holder` to explain why an index is not ready.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import IO

from conba.index.errors import IndexBusyError

LOCK_NAME = "index.lock"

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no locking
    fcntl = None  # type: ignore[assignment]


def _read_pid(fh: IO[str]) -> str:
    try:
        fh.seek(0)
        return fh.read().strip() or "?"
    except OSError:
        return "?"


class IndexLock:
    """Exclusive writer lock of an index folder. Re-entrant within one object (nested use is counted)."""

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(folder)
        self.path = self.folder / LOCK_NAME
        self._fh: IO[str] | None = None
        self._depth = 0

    def acquire(self, wait: bool = False, on_wait: Callable[[str], None] | None = None) -> None:
        """Take the lock. Busy: raise :class:`IndexBusyError`, or with ``wait`` block until it is free
        (calling ``on_wait(pid of the holder)`` once first)."""
        if self._depth:
            self._depth += 1
            return
        if fcntl is None:  # pragma: no cover
            self._depth = 1
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        fh = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held until release()
        try:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pid = _read_pid(fh)
                if not wait:
                    raise IndexBusyError(
                        f"{self.folder}: another `conba index` (pid {pid}) is writing this index; wait for it "
                        "to finish, pass --wait, or use another --index folder") from None
                if on_wait is not None:
                    on_wait(pid)
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            fh.seek(0)
            fh.truncate()
            fh.write(f"{os.getpid()}\n")
            fh.flush()
        except BaseException:
            fh.close()
            raise
        self._fh = fh
        self._depth = 1

    def release(self) -> None:
        if self._depth == 0:
            return
        self._depth -= 1
        if self._depth or self._fh is None:
            return
        try:
            self._fh.truncate(0)
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
        finally:
            self._fh.close()
            self._fh = None

    @property
    def held(self) -> bool:
        return self._depth > 0

    def __enter__(self) -> IndexLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def holder(folder: str | os.PathLike) -> str | None:
    """The pid (as text) of the process writing ``folder`` right now, or None when nobody is."""
    path = Path(folder) / LOCK_NAME
    if fcntl is None or not path.exists():
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return _read_pid(fh)
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
    except OSError:
        return None
    return None

