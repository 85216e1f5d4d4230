"""Index a codebase and find cross-language clones.

>>> from conba.index import Index
>>> idx = Index(".conba-index", model="default")
>>> idx.add(["src/"])                       # incremental, resumable
>>> idx.search(code, k=10, language="go")   # -> [Hit(score, unit)]
>>> idx.clones(cross_language_only=True)     # -> [CloneClass]
>>> search_files(idx, "Sort.java", k=5)     # whole files as results -> (query, [FileHit]); clone_files(idx, t)

``Index`` is imported lazily, so light modules (``conba.index.defaults``) load without numpy or FAISS.

The package by concern (docs/development.md lists it; every sub-package's docstring says what it holds)::

    storage/   the Index class, its SQLite store, lock, staging, manifest, rebuild, watch: the index on disk
    vectors/   the vector store interface and its structures: exact (flat / HNSW) and IVF, and which one an index gets
    ranking/   above the vector store: the lexical channel and the fused score
    model/     the index's model: identity, lazy loading, the query encoder, placement, the long-input upgrade
    files/     whole files as results (file vectors, file search, file clones)
    scale/     shards and encoding on a Ray cluster
    errors.py, defaults.py   shared by all of them (defaults loads without numpy)
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
    from conba.index.storage.index import Index

__all__ = [
    "DEFAULT_INDEX_DIR", "DEFAULT_THRESHOLD", "INDEX_ENV", "AddReport", "CloneClass", "ClonePair", "CodeIndexError",
    "CompareResult", "CorruptIndexError", "EngineMismatchError", "Hit", "IncompleteIndexError", "Index",
    "IndexBusyError", "ModelMismatchError", "SourceError", "Unit", "compare", "compare_files", "default_index_dir",
    "resolve_threshold", "search_files", "clone_files",
]


def __getattr__(name: str) -> Any:
    if name == "Index":
        from conba.index.storage.index import Index

        return Index
    if name == "search_files":
        from conba.index.files.search import search_files

        return search_files
    if name == "clone_files":
        from conba.index.files.clones import clone_files

        return clone_files
    raise AttributeError(f"module 'conba.index' has no attribute {name!r}")
