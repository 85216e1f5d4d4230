"""``conba clones --files``: pairs and classes of whole files (:mod:`conba.index.files.clones`)."""

from __future__ import annotations

from typing import Any


def file_clone_report(idx: Any, threshold: str | float | None, *, cross_language_only: bool, min_lines: int,
                      neighbors: int, fmt: str) -> Any:
    """The file clone report of an open index at ``threshold`` (``auto``: the index's clone threshold, read
    as a file score: each function of either file has, on average, a clone in the other)."""
    from conba.index.files.clones import clone_files

    return clone_files(idx, threshold, cross_language_only=cross_language_only,
                       neighbors=neighbors, min_lines=min_lines, code=fmt == "html")
