"""Paths from the command line, checked when the options are read, before any work.

Where a command writes (``-o FILE``, ``-j FILE``: :func:`check_output_file`), and what it reads: every
input path is a regular file or a folder (:class:`InputPath`, :func:`check_input_path`); a FIFO, a
device or a socket is a one-line error instead of a read that hangs or a device read as code.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

import click

__all__ = ["check_output_file", "check_input_path", "InputPath"]


def check_input_path(path: str | os.PathLike, dir_okay: bool = True, file_okay: bool = True) -> None:
    """Raise a one-line :class:`click.ClickException` when ``path`` exists and is not a regular file or
    a folder (a FIFO, device, socket), or is a symlink loop. A missing path passes:
    whether it must exist is the command's to say."""
    from conba.utils.io import file_kind

    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise click.ClickException(f"{os.fsdecode(path)}: symlink loop") from None
        return
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return
    wanted = " or ".join(w for w, ok in (("a file", file_okay), ("a folder", dir_okay)) if ok)
    raise click.ClickException(f"{os.fsdecode(path)}: is {file_kind(mode)}, not {wanted}; give {wanted}")


class InputPath(click.Path):
    """A :class:`click.Path` that a command reads: a regular file or a folder, never a FIFO, device
    or socket (:func:`check_input_path`)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        out = super().convert(value, param, ctx)
        if str(value) != "-" or not self.allow_dash:
            check_input_path(os.fsdecode(value) if isinstance(value, bytes) else str(value), self.dir_okay,
                             self.file_okay)
        return out


def check_output_file(output: str, index_dir: str | None = None, example: str = "clones.html") -> None:
    """Fail before the work when ``output`` cannot be a file (empty, a directory, in a folder that is
    missing or is a file), or would be inside the index folder ``index_dir`` (writing there could
    overwrite the index's own database). ``-`` (stdout) always passes."""
    if output == "-":
        return
    if not str(output).strip():
        raise click.ClickException(f"output file name is empty; give a file name, e.g. {example}, or - for stdout")
    path = Path(output)
    target = path.resolve()
    if index_dir is not None:
        folder = Path(index_dir).resolve()
        if target == folder or folder in target.parents:
            raise click.ClickException(f"{output}: is inside the index folder {index_dir}; write the report "
                                       "elsewhere")
    if path.is_dir():
        raise click.ClickException(f"{output}: is a directory; give a file name, e.g. {path / example}")
    from conba.errors import UsageError
    from conba.utils.io import output_kind

    try:
        output_kind(path)  # a FIFO or a device is written into, never replaced; a socket is refused
    except UsageError as exc:
        raise click.ClickException(str(exc)) from None
    nearest = next(p for p in path.absolute().parents if p.exists())  # the root always exists
    if not nearest.is_dir():
        raise click.ClickException(f"{output}: folder {_shown(nearest, path)} is a file, not a folder")
    if nearest != path.absolute().parent:
        raise click.ClickException(f"{output}: folder {path.parent} does not exist")


def _shown(folder: Path, path: Path) -> Path:
    """``folder`` (an ancestor of ``path``) as the user wrote it: relative when ``path`` was."""
    return folder if path.is_absolute() else folder.relative_to(Path.cwd())
