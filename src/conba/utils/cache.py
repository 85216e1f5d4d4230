"""Cache keys and the chunked array cache, in one place.

* :func:`cache_key`: a short stable hash of JSON-able parts (a run's settings, a model fingerprint).
* :func:`sequence_key`: a short stable hash of a long sequence of texts (a data set's snippets).
* :class:`ChunkedArrays`: an array computed in chunks of rows, each chunk stored as ``.npy`` with an
  atomic write, so an interrupted pass resumes at the first chunk it had not written.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from conba.utils.io import atomic_write


def cache_key(*parts: Any, length: int = 16) -> str:
    """The first ``length`` hex digits of the sha256 of ``parts`` as JSON with sorted keys.

    One part hashes as itself (``cache_key(settings)`` is the hash of ``json.dumps(settings,
    sort_keys=True)``), several as the list of them. Raises TypeError for parts JSON cannot write."""
    value = parts[0] if len(parts) == 1 else list(parts)
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:length]


def sequence_key(items: Iterable[str], prefix: str = "", length: int = 16) -> str:
    """The first ``length`` hex digits of a hash chained over ``items`` in order (each item's sha256
    fed to one sha256 started with ``prefix``): any change, addition or reordering changes it."""
    h = hashlib.sha256(prefix.encode())
    for item in items:
        h.update(hashlib.sha256(item.encode()).digest())
    return h.hexdigest()[:length]


class ChunkedArrays:
    """Rows of an array cached in chunks of ``chunk`` rows as ``folder/{name}-{start}.npy``.

    ``folder=None`` caches nothing (every chunk is computed). Each chunk is written atomically (a
    temporary file renamed into place), so a chunk on disk is always whole."""

    def __init__(self, folder: str | Path | None, name: str, chunk: int, dtype: Any = np.float32):
        if chunk < 1:
            raise ValueError(f"chunk must be >= 1, got {chunk}")
        self.folder = Path(folder) if folder is not None else None
        self.name, self.chunk, self.dtype = name, chunk, np.dtype(dtype)

    def path(self, start: int) -> Path | None:
        """The file of the chunk starting at row ``start`` (None without a folder)."""
        return self.folder / f"{self.name}-{start}.npy" if self.folder is not None else None

    def load(self, start: int) -> np.ndarray | None:
        """The stored chunk starting at ``start``, or None when it is not stored."""
        path = self.path(start)
        return np.load(path) if path is not None and path.exists() else None

    def save(self, start: int, array: np.ndarray) -> np.ndarray:
        """Store the chunk starting at ``start`` (atomically, as ``dtype``); returns what was stored."""
        array = np.ascontiguousarray(array, dtype=self.dtype)
        path = self.path(start)
        if path is not None:

            def write(tmp: Path) -> None:
                with open(tmp, "wb") as fh:
                    np.save(fh, array)

            atomic_write(path, write)
        return array

    def starts(self, n: int) -> range:
        """The first row of every chunk of ``n`` rows."""
        return range(0, n, self.chunk)

    def missing(self, n: int) -> int:
        """How many of the chunks of ``n`` rows are not stored yet."""
        return sum(p is None or not p.exists() for p in map(self.path, self.starts(n)))

    def rows(self, n: int, compute: Callable[[int, int], np.ndarray],
             done: Callable[[int, int, bool], None] | None = None) -> tuple[np.ndarray, bool]:
        """All ``n`` rows: stored chunks loaded, the others ``compute(start, end)``-d and stored.

        ``done(start, end, from_cache)`` is called after each chunk. Returns (rows, True when every
        chunk came from the cache). With ``n == 0``: an empty (0, 0) array."""
        parts, cached = [], True
        for start in self.starts(n):
            end = min(start + self.chunk, n)
            part = self.load(start)
            hit = part is not None
            if part is None:
                cached = False
                part = self.save(start, compute(start, end))
            parts.append(part)
            if done is not None:
                done(start, end, hit)
        return (np.concatenate(parts) if parts else np.zeros((0, 0), self.dtype)), cached
