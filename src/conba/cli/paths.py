"""Where a command writes: checked when its options are read, before the work (``-o FILE``, ``-j FILE``)."""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["check_output_file"]


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
    nearest = next(p for p in path.absolute().parents if p.exists())  # the root always exists
    if not nearest.is_dir():
        raise click.ClickException(f"{output}: folder {_shown(nearest, path)} is a file, not a folder")
    if nearest != path.absolute().parent:
        raise click.ClickException(f"{output}: folder {path.parent} does not exist")


def _shown(folder: Path, path: Path) -> Path:
    """``folder`` (an ancestor of ``path``) as the user wrote it: relative when ``path`` was."""
    return folder if path.is_absolute() else folder.relative_to(Path.cwd())
