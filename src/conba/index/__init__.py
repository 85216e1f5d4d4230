"""Index a codebase and find cross-language clones.

>>> from conba.index import Index
>>> idx = Index(".conba-index", model="default")
>>> idx.add(["src/"])                       # incremental, resumable
>>> idx.search(code, k=10, language="go")   # -> [Hit(score, unit)]
>>> idx.clones(cross_language_only=True)     # -> [CloneClass]
>>> search_files(idx, "Sort.java", k=5)     # whole files as results -> (query, [FileHit]); clone_files(idx, t)

``Index`` is imported lazily, so light modules (``conba.index.defaults``) load without numpy or FAISS.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from conba.clones.compare import CompareResult, compare, compare_files
from conba.clones.threshold import DEFAULT_THRESHOLD, resolve_threshold
from conba.index.defaults import DEFAULT_INDEX_DIR, INDEX_ENV, default_index_dir
from conba.index.errors import (
    CodeIndexError,
    CorruptIndexError,
    EngineMismatchError,
    IncompleteIndexError,
    IndexBusyError,
    ModelMismatchError,
    SourceError,
)
from conba.source.records import AddReport, CloneClass, ClonePair, Hit, Unit

if TYPE_CHECKING:
    from conba.index.index import Index

__all__ = [
    "DEFAULT_INDEX_DIR", "DEFAULT_THRESHOLD", "INDEX_ENV", "AddReport", "CloneClass", "ClonePair", "CodeIndexError",
    "CompareResult", "CorruptIndexError", "EngineMismatchError", "Hit", "IncompleteIndexError", "Index",
    "IndexBusyError", "ModelMismatchError", "SourceError", "Unit", "compare", "compare_files", "default_index_dir",
    "resolve_threshold", "search_files", "clone_files",
]


def __getattr__(name: str) -> Any:
    if name == "Index":
        from conba.index.index import Index

        return Index
    if name in ("search_files", "clone_files"):  # conba.index.file_search / file_clones
        from conba.index import file_clones, file_search

        return getattr(file_search if name == "search_files" else file_clones, name)
    raise AttributeError(f"module 'conba.index' has no attribute {name!r}")
