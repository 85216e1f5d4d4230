"""Atomic file writes: a crash mid-write never leaves a half-written file behind; folders are
replaced so that a crash at any moment leaves the old or the new one loadable (:func:`replace_dir`).

Every result a command writes goes through :func:`atomic_write` (or :func:`open_output`, its stream form):
a regular file (or a path not there yet) is written to a temporary file that is renamed over it, so a
crash leaves the old file or the new one; a FIFO or a character device (``/dev/null``, a terminal) is
written into directly, never replaced; anything else (a folder, a socket, a block device) is refused
with a one-line :class:`~conba.errors.UsageError` (:func:`output_kind`). A symlink to a regular file
keeps the link: its target is replaced.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from conba.errors import FormatError, UsageError

STREAM = "stream"    # a FIFO or a character device: written into, never renamed over
REGULAR = "regular"  # a regular file or a new path: the crash-safe rename


def file_kind(mode: int) -> str:
    """What a ``st_mode`` is, in words (``a FIFO``, ``a socket``, ...)."""
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISREG, "a file")):
        if test(mode):
            return name
    return "not a regular file"


def output_kind(path: str | Path) -> str:
    """:data:`REGULAR` (a regular file, or nothing there yet) or :data:`STREAM` (a FIFO or character
    device); a folder, socket or block device raises a one-line :class:`UsageError`."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return REGULAR
    if stat.S_ISREG(mode):
        return REGULAR
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        return STREAM
    raise UsageError(f"{path}: is {file_kind(mode)}; give a file name to write to")


def _final(path: Path) -> Path:
    """Where a regular write lands: the target of a symlink (the link is kept), else ``path``."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _temp_beside(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    return Path(tmp)


def _commit(tmp: Path, path: Path) -> None:
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600 files; give the usual permissions
    os.replace(tmp, path)


def atomic_write(path: str | os.PathLike[str], write: Callable[[Path], object]) -> None:
    """Call ``write(tmp_path)`` then rename the temporary file over ``path`` atomically; a FIFO or
    character device at ``path`` is written into directly (``write(path)``) instead (:func:`output_kind`)."""
    path = Path(path)
    if output_kind(path) == STREAM:
        write(path)
        return
    path = _final(path)
    tmp = _temp_beside(path)
    try:
        write(tmp)
        _commit(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def open_output(path: str | Path, encoding: str = "utf-8") -> Iterator[TextIO]:
    """A text stream for a command's result: ``-`` is stdout (a one-line error when it is closed); a
    regular file is written to a temporary file renamed over it when the block ends without an error
    (as :func:`atomic_write`); a FIFO or character device is written into directly."""
    if str(path) == "-":
        if sys.stdout is None or getattr(sys.stdout, "closed", False):
            raise UsageError("standard output is closed; write the result to a file with -o FILE")
        yield sys.stdout
        sys.stdout.flush()
        return
    path = Path(path)
    if output_kind(path) == STREAM:
        with open(path, "w", encoding=encoding) as fh:
            yield fh
        return
    path = _final(path)
    tmp = _temp_beside(path)
    try:
        with open(tmp, "w", encoding=encoding) as fh:
            yield fh
        _commit(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | Path, text: str) -> None:
    atomic_write(path, lambda p: p.write_text(text, encoding="utf-8"))


def write_json_atomic(path: str | Path, obj: Any) -> None:
    write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=False) + "\n")


def write_npy_atomic(path: str | Path, array: Any) -> None:
    """``numpy.save`` through :func:`atomic_write` (through an open file: no ``.npy`` appended to the name)."""
    import numpy as np

    def save(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            np.save(fh, array, allow_pickle=False)

    atomic_write(path, save)


def read_json(path: str | Path) -> Any:
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: file not found") from None
    except json.JSONDecodeError as exc:
        raise FormatError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None


def sibling(path: str | Path, suffix: str) -> Path:
    """``NAME`` -> ``NAME<suffix>`` in the same folder (``best`` -> ``best.old``)."""
    path = Path(path)
    return path.with_name(path.name + suffix)


def replace_dir(src: str | Path, dst: str | Path) -> None:
    """Put the complete folder ``src`` in the place of ``dst``: ``dst`` is first renamed to
    ``dst.old``, ``src`` renamed to ``dst``, then ``dst.old`` removed. A crash at any moment leaves
    ``dst`` or ``dst.old`` complete, and :func:`existing_dir` finds it. When ``dst`` is missing but a
    ``dst.old`` is there (an earlier crash), that ``.old`` is kept until ``dst`` is in place."""
    src, dst = Path(src), Path(dst)
    old = sibling(dst, ".old")
    if dst.exists():
        # dst is complete (it only ever appears by a rename of a complete folder), so a dst.old beside it is
        # stale (a crash after the swap): a crash mid-rmtree leaves dst whole, and existing_dir prefers dst
        shutil.rmtree(old, ignore_errors=True)
        os.replace(dst, old)
    os.replace(src, dst)
    shutil.rmtree(old, ignore_errors=True)


def existing_dir(path: str | Path) -> Path:
    """``path``, or ``path.old`` when ``path`` is missing and a crash in :func:`replace_dir` left the
    previous folder there; ``path`` itself when neither exists (the caller's error names it)."""
    path = Path(path)
    if path.exists():
        return path
    old = sibling(path, ".old")
    return old if old.is_dir() else path
