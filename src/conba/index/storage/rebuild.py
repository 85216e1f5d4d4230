"""``conba index --rebuild`` beside the old index, swapped in at the end: the old one stays readable meanwhile.

A rebuild (``Index(..., rebuild=True)``) writes a complete new index into the sibling folder
``PATH.rebuild`` while holding ``PATH``'s writer lock; ``PATH`` is not touched, so search, clones, map and
serve keep answering from it. When the new index is complete (its manifest written, state ``ready``),
:func:`finish` exchanges the two folders in one step and deletes the old one:

- on Linux with ``renameat2(RENAME_EXCHANGE)``: ``PATH`` is the old index until the exchange and the new
  one after it, never missing; the new folder's lock file is taken before the exchange, so a writer
  waiting on ``PATH/index.lock`` keeps waiting across it;
- elsewhere with :func:`conba.utils.io.replace_dir` (two renames; a kill between them leaves the old
  index at ``PATH.old``, ``PATH`` missing and the new one in ``PATH.rebuild``: :func:`recover`, which
  every :class:`conba.index.Index` runs on opening, finishes that swap before anything reads or writes).

A rebuild killed before the exchange leaves ``PATH`` as it was and its work in ``PATH.rebuild``, marked by
``rebuild.json`` with what was asked (model, view, engine, options): the same ``--rebuild`` again resumes it
(the vectors it committed are reused); another request, or a folder without the mark (e.g. the old index a
kill left there after the exchange), is removed first. ``CONBA_REBUILD_TEST_KILL`` (crash tests) kills the
process at a named step: ``encoded`` (new index complete, not yet swapped: the re-run encodes nothing),
``swapped`` (after the exchange, before the old folder is removed).
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from conba.index.errors import IndexBusyError, ModelMismatchError
from conba.index.model.identity import model_label
from conba.index.storage.lock import LOCK_NAME, IndexLock
from conba.index.storage.store import Store
from conba.utils.fault_injection import kill_point
from conba.utils.io import read_json, replace_dir, sibling, write_json_atomic

__all__ = ["MARK", "SUFFIX", "begin", "exchange_dirs", "excluded", "finish", "on_error", "recover", "work_dir"]
SUFFIX = ".rebuild"
MARK = "rebuild.json"  # in PATH.rebuild while it holds a rebuild in progress
_AT_FDCWD, _RENAME_EXCHANGE = -100, 2
RECOVER_WAIT_S = 60.0  # how long opening an index waits for a live writer in the middle of replace_dir


def work_dir(path: str | os.PathLike) -> Path:
    """Where a rebuild of the index at ``path`` is written: ``PATH.rebuild``."""
    return sibling(Path(path), SUFFIX)


def begin(target: Path, model: Any, view: str | None, engine: str | None, options: dict | None) -> Path:
    """The folder a rebuild of ``target`` writes into (the caller holds ``target``'s lock). A killed rebuild
    asked with the same model (name or path), view, engine and options is resumed there; anything else
    there is removed. A model given as an object is never resumed."""
    work = work_dir(target)
    request = None if not (model is None or isinstance(model, (str, os.PathLike))) else \
        {"model": model_label(model), "view": view, "engine": engine, "options": dict(options or {})}
    try:
        resumable = request is not None and read_json(work / MARK) == request
    except (OSError, ValueError):
        resumable = False
    if not resumable and work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    write_json_atomic(work / MARK, request)
    return work


def excluded(path: Path, target: Path | None) -> list[Path]:
    """The folders a scan of a run into ``path`` skips: the index being written, and the old index (``target``,
    when ``path`` is its rebuild) or the rebuild."""
    return [Path(path), Path(target) if target is not None else work_dir(path)]


def on_error(path: Path, target: Path | None, exc: BaseException) -> None:
    """A rebuild (``path``, of ``target``) whose resumed folder refuses the model (its files changed since):
    forget that folder."""
    if target is not None and isinstance(exc, ModelMismatchError):
        shutil.rmtree(path, ignore_errors=True)


def exchange_dirs(a: Path, b: Path) -> bool:
    """Exchange the folders ``a`` and ``b`` in one step (Linux ``renameat2``); True when done. Where the
    kernel or file system cannot, ``a`` replaces ``b`` with :func:`replace_dir` instead (False; ``a`` is gone)."""
    fn = None
    if sys.platform.startswith("linux"):
        try:
            fn = ctypes.CDLL(None, use_errno=True).renameat2
        except (OSError, AttributeError):
            fn = None
    if fn is not None:
        if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
            return True
        err = ctypes.get_errno()
        if err not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise OSError(err, f"cannot swap the rebuilt index in: {os.strerror(err)}", str(a), None, str(b))
    replace_dir(a, b)
    return False


def finish(path: Path, target: Path, old_lock: IndexLock, store: Store, db_name: str) -> tuple[IndexLock, Store]:
    """Swap the completed rebuild ``path`` in for ``target``; the old index is deleted. ``old_lock`` (the
    target's, held) and ``store`` (the rebuild's, closed here) are the Index's: it continues with the returned
    lock (the same depth, now on the new folder's lock file) and store (the database now at ``target``)."""
    work, target = Path(path), Path(target)
    kill_point("rebuild-encoded")
    store.close()
    new_lock = IndexLock(work)
    new_lock.acquire()  # nobody else can hold it: only the holder of target's lock writes PATH.rebuild
    (work / MARK).unlink()  # the new index is no rebuild in progress; after the exchange, the old one is none either
    exchange_dirs(work, target)
    kill_point("rebuild-swapped")
    new_lock.folder, new_lock.path = target, target / LOCK_NAME
    new_lock._depth = old_lock._depth
    old_lock.folder, old_lock.path = work, work / LOCK_NAME  # its file: the old index's (gone after replace_dir)
    while old_lock.held:
        old_lock.release()
    new_store = Store(target / db_name)
    shutil.rmtree(work, ignore_errors=True)  # the old index (after an exchange)
    return new_lock, new_store


def _complete(folder: Path, db_name: str) -> bool:
    """Whether ``folder`` holds a finished rebuild: no mark, a manifest, and its database says ``ready``."""
    if (folder / MARK).exists() or not (folder / "manifest.json").is_file() or not (folder / db_name).is_file():
        return False
    try:
        db = sqlite3.connect(f"file:{folder / db_name}?mode=ro", uri=True)
        try:
            row = db.execute("SELECT value FROM meta WHERE key = 'state'").fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return False
    return bool(row) and row[0] == "ready"


def recover(path: Path, db_name: str = "index.sqlite") -> Path:
    """``path``, after finishing a swap that :func:`conba.utils.io.replace_dir` left half done (systems
    without ``renameat2``: a rebuild killed between its two renames leaves ``PATH`` missing, the old
    index at ``PATH.old`` and the complete new one in ``PATH.rebuild``). The new index is moved in when
    it is complete, else the old one is moved back; nothing is done while the rebuild's writer is
    still alive (it holds the old index's lock file, which moved with it to ``PATH.old``: this waits up
    to ``RECOVER_WAIT_S`` for it, then raises :class:`IndexBusyError`)."""
    path = Path(path)
    old = sibling(path, ".old")
    if path.exists() or not old.is_dir():
        return path
    lock = FileLock(str(old / LOCK_NAME), thread_local=False)
    try:
        lock.acquire(timeout=RECOVER_WAIT_S)
    except Timeout:
        raise IndexBusyError(f"{path}: missing while a rebuild (pid {_pid(old)}) swaps it in from {old}; "
                             "try again when it has finished") from None
    except OSError:  # PATH.old went away meanwhile: the writer finished the swap
        return path
    try:
        if path.exists() or not old.is_dir():  # another process recovered it meanwhile
            return path
        new = work_dir(path)
        if new.is_dir() and _complete(new, db_name):
            os.replace(new, path)  # finish the swap: the rebuilt index, as the killed run would have
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(old, path)  # no complete rebuild: the old index goes back in place
    finally:
        lock.release()
    return path


def _pid(folder: Path) -> str:
    try:
        return (folder / LOCK_NAME).read_text(encoding="utf-8").strip() or "?"
    except OSError:
        return "?"
