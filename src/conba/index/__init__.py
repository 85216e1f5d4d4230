"""Index a codebase and find cross-language clones.

>>> from conba.index import Index
>>> idx = Index(".conba-index", model="default")
>>> idx.add(["src/"])                       # incremental, resumable
>>> idx.search(code, k=10, language="go")   # -> [Hit(score, unit)]
>>> idx.clones(cross_language_only=True)     # -> [CloneClass]
"""

from __future__ import annotations

from conba.index.compare import CompareResult, compare, compare_files
from conba.index.errors import CodeIndexError, CorruptIndexError, IncompleteIndexError, ModelMismatchError, SourceError
from conba.index.index import DEFAULT_INDEX_DIR, INDEX_ENV, Index, default_index_dir
from conba.index.records import AddReport, CloneClass, ClonePair, Hit, Unit
from conba.index.threshold import DEFAULT_THRESHOLD, resolve_threshold

__all__ = [
    "AddReport", "CloneClass", "ClonePair", "CodeIndexError", "CompareResult", "CorruptIndexError",
    "DEFAULT_INDEX_DIR", "DEFAULT_THRESHOLD", "Hit", "INDEX_ENV", "IncompleteIndexError", "Index",
    "ModelMismatchError", "SourceError", "Unit", "compare", "compare_files", "default_index_dir",
    "resolve_threshold",
]
