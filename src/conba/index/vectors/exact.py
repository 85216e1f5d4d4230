"""The exact / HNSW store's file ``vectors.faiss``: built from SQLite at the end of indexing, written atomically,
checksummed; :class:`conba.index.vectors.store.ExactStore` wraps what :func:`read` returns.

Exact inner-product search (``IndexFlatIP``), or HNSW when the rule of :mod:`conba.index.vectors` says so (an
index gets HNSW only when an ``hnsw_above`` below ``ivf_above`` is asked for). Vectors are L2-normalised, so
inner product = cosine similarity. Ids are the SQLite unit ids.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from conba.index.errors import CorruptIndexError
from conba.utils.ann import HNSW_ABOVE, HNSW_EF_SEARCH, build, faiss_module, search
from conba.utils.io import atomic_write

__all__ = ["HNSW_ABOVE", "build", "file_sha256", "read", "search", "write"]


def file_sha256(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write(index: Any, path: str | Path) -> str:
    """Write atomically; return the file's sha256."""
    faiss = faiss_module()
    atomic_write(path, lambda tmp: faiss.write_index(index, str(tmp)))
    return file_sha256(path)


def read(path: str | Path, sha256: str | None, count: int | None) -> Any:
    """Load and verify the vector file (checksum and size) or raise :class:`CorruptIndexError`."""
    path = Path(path)
    hint = "re-run `conba index` to rebuild it"
    if not path.exists():
        raise CorruptIndexError(f"{path}: vector file is missing; {hint}")
    if sha256 and file_sha256(path) != sha256:
        raise CorruptIndexError(f"{path}: vector file is corrupted or truncated (checksum mismatch); {hint}")
    faiss = faiss_module()
    try:
        index = faiss.read_index(str(path))
    except RuntimeError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "unreadable"
        raise CorruptIndexError(f"{path}: vector file is corrupted ({first}); {hint}") from None
    if count is not None and index.ntotal != count:
        raise CorruptIndexError(f"{path}: vector file holds {index.ntotal} vectors, expected {count}; {hint}")
    inner = faiss.downcast_index(index.index) if hasattr(index, "index") else index
    if hasattr(inner, "hnsw"):
        inner.hnsw.efSearch = HNSW_EF_SEARCH
    return index
