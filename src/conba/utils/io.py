"""Atomic file writes: a crash mid-write never leaves a half-written file behind; folders are
replaced so that a crash at any moment leaves the old or the new one loadable (:func:`replace_dir`)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conba.errors import FormatError


def atomic_write(path: str | Path, write: Callable[[Path], None]) -> None:
    """Call ``write(tmp_path)`` then rename the temporary file over ``path`` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600 files; give the usual permissions
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_text_atomic(path: str | Path, text: str) -> None:
    atomic_write(path, lambda p: p.write_text(text, encoding="utf-8"))


def write_json_atomic(path: str | Path, obj: Any) -> None:
    write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=False) + "\n")


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
