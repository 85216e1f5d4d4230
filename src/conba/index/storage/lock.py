"""One writer per index folder: an exclusive lock on ``index.lock`` in the folder (``filelock``).

``conba index`` (``Index.add``, ``--rebuild``) holds the lock while it writes; a second writer
either fails at once with :class:`IndexBusyError` naming the holder's pid, or waits for it
(``wait=True``). ``filelock`` takes an OS lock (``flock`` on POSIX, ``LockFileEx`` on Windows) that
the kernel releases when the holder exits, even after ``kill -9``: a stale lock file never blocks
anyone. The holder writes its pid into the lock file so that others can name it. Readers do not
take the lock; they only ask :func:`holder` to explain why an index is not ready.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock, Timeout

from conba.index.errors import IndexBusyError

LOCK_NAME = "index.lock"
WAIT_POLL_S = 0.5  # a waiting writer retries this often


def _read_pid(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip() or "?"
    except (OSError, UnicodeDecodeError):
        return "?"


def _write_pid(path: Path, pid: str) -> None:
    # written through a second descriptor: filelock keeps its own, and the OS lock is advisory
    with open(path, "r+", encoding="utf-8") as fh:
        fh.truncate(0)
        fh.write(pid)
        fh.flush()


def _new_lock(path: Path) -> FileLock:
    # thread_local=False: a lock taken by one thread may be released by another (as the tests do)
    return FileLock(str(path), thread_local=False)


class IndexLock:
    """Exclusive writer lock of an index folder. Re-entrant within one object (nested use is counted)."""

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(folder)
        self.path = self.folder / LOCK_NAME
        self._lock: FileLock | None = None
        self._depth = 0

    def acquire(self, wait: bool = False, on_wait: Callable[[str], None] | None = None) -> None:
        """Take the lock. Busy: raise :class:`IndexBusyError`, or with ``wait`` block until it is free
        (calling ``on_wait(pid of the holder)`` once first)."""
        if self._depth:
            self._depth += 1
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        lock = _new_lock(self.path)
        try:
            lock.acquire(blocking=False)
        except Timeout:
            pid = _read_pid(self.path)
            if not wait:
                raise IndexBusyError(
                    f"{self.folder}: another `conba index` (pid {pid}) is writing this index; wait for it "
                    "to finish (`conba index --wait` waits for it), or use another index folder") from None
            if on_wait is not None:
                on_wait(pid)
            # finite timeouts in a loop: filelock refuses an endless wait on a path that another lock
            # object of this thread holds (its deadlock guard), which is what a test's holder is
            while True:
                try:
                    lock.acquire(timeout=WAIT_POLL_S)
                    break
                except Timeout:
                    continue
        try:
            _write_pid(self.path, str(os.getpid()))
        except BaseException:
            lock.release()
            raise
        self._lock = lock
        self._depth = 1

    def release(self) -> None:
        if self._depth == 0:
            return
        self._depth -= 1
        if self._depth or self._lock is None:
            return
        try:
            _write_pid(self.path, "")
        except OSError:
            pass  # the pid is only a hint for others
        finally:
            self._lock.release()
            self._lock = None

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
    if not path.exists():
        return None
    lock = _new_lock(path)
    try:
        lock.acquire(blocking=False)
    except Timeout:
        return _read_pid(path)
    except OSError:  # e.g. a read-only index folder: nobody can be writing it through this path
        return None
    lock.release()
    return None
