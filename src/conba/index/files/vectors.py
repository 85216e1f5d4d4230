"""File vectors: one vector per indexed file, from its functions' vectors, kept with the index.

Glossary: f functions (units) of one file, F files, d embedding width.

A file's vector is the mean of its units' (L2-normalised) vectors weighted by their token counts, normalised
again (:func:`aggregate`; chosen by measurement: on algorithms_dev 0.592 MAP@R against 0.543 for the plain
mean, docs/BENCHMARKS.md "Files as results"). It is the first stage of file search and file clones
(:mod:`conba.index.files.search`), which re-rank their candidates by the functions themselves. They live
in the ``file_vectors`` table of ``index.sqlite`` and are written by :func:`refresh` inside the transaction
that swaps a run's staged files in (:func:`conba.index.storage.staging.commit`): only the files that run changed
are recomputed, a removed file loses its vector with its units, and a run killed before that commit
leaves the last good file vectors. An index written before file vectors existed gets them all on its next
``conba index`` run (meta ``file_vectors`` records the aggregation; a different one recomputes all).
"""

from __future__ import annotations

import re
import sqlite3
import zlib
from dataclasses import dataclass

import numpy as np

from conba.index.errors import CodeIndexError, CorruptIndexError

__all__ = ["AGGREGATION", "FileVectors", "aggregate", "load", "refresh", "token_counts"]

AGGREGATION = "tokens-1"  # meta "file_vectors": the aggregation the stored vectors were made with
SCHEMA = ("CREATE TABLE IF NOT EXISTS file_vectors (path TEXT PRIMARY KEY, vector BLOB NOT NULL, "
          "crc INTEGER NOT NULL, units INTEGER NOT NULL)")
_TOKEN = re.compile(r"\w+|[^\w\s]")


def token_counts(codes: list[str]) -> np.ndarray:
    """(u,) float32 rough token counts (words and punctuation) of unit sources, at least 1."""
    return np.array([max(1, len(_TOKEN.findall(c))) for c in codes], dtype=np.float32)


def aggregate(vectors: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """One unit-length (d,) float32 vector from a file's unit vectors (f, d): their (weighted) mean."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if not len(vectors):
        raise ValueError("a file vector needs at least one unit vector")
    v = vectors.mean(axis=0) if weights is None else (weights[:, None] * vectors).sum(axis=0) / weights.sum()
    norm = float(np.linalg.norm(v))
    return (v / norm if norm > 1e-12 else vectors[0]).astype(np.float32)


def refresh(db: sqlite3.Connection) -> None:
    """Recompute the vectors of the staged files (all files, when the stored ones were made otherwise or
    never) and drop those of files that are gone. Runs inside the commit's transaction (``db``)."""
    db.execute(SCHEMA)
    row = db.execute("SELECT value FROM meta WHERE key = 'file_vectors'").fetchone()
    if row is not None and row[0] == AGGREGATION:
        paths = [p for (p,) in db.execute("SELECT path FROM staged_files")]
    else:
        db.execute("DELETE FROM file_vectors")
        paths = [p for (p,) in db.execute("SELECT path FROM files")]
    for start in range(0, len(paths), 500):
        chunk = paths[start:start + 500]
        marks = ",".join("?" * len(chunk))
        db.execute(f"DELETE FROM file_vectors WHERE path IN ({marks})", chunk)
        rows = db.execute(f"SELECT u.file, v.vector, u.code FROM units u JOIN vectors v ON u.hash = v.hash "
                          f"WHERE u.file IN ({marks}) ORDER BY u.file, u.id", chunk).fetchall()
        by_file: dict[str, tuple[list[np.ndarray], list[str]]] = {}
        for path, blob, code in rows:
            vecs, codes = by_file.setdefault(path, ([], []))
            vecs.append(np.frombuffer(blob, dtype=np.float32))
            codes.append(code)
        out = []
        for path, (vecs, codes) in by_file.items():
            blob = aggregate(np.stack(vecs), token_counts(codes)).tobytes()
            out.append((path, blob, zlib.crc32(blob), len(vecs)))
        db.executemany("INSERT INTO file_vectors(path, vector, crc, units) VALUES (?, ?, ?, ?)", out)
    db.execute("DELETE FROM file_vectors WHERE path NOT IN (SELECT path FROM files)")
    db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('file_vectors', ?)", (AGGREGATION,))


@dataclass
class FileVectors:
    """The stored file vectors of an index: ``paths`` (F,) as stored, ``languages`` (F,), ``units`` (F,)
    function counts and ``vectors`` (F, d) float32, unit-length, in path order."""
    paths: list[str]
    languages: list[str]
    units: np.ndarray
    vectors: np.ndarray

    def row_of(self) -> dict[str, int]:
        return {p: k for k, p in enumerate(self.paths)}


def load(store, dim: int) -> FileVectors:
    """The file vectors of a completed index (``store``: :class:`conba.index.storage.store.Store`). Raises a
    one-line :class:`CodeIndexError` when the index was written before file vectors existed."""
    db = store.db
    made = db.execute("SELECT value FROM meta WHERE key = 'file_vectors'").fetchone()
    if made is None or made[0] != AGGREGATION:
        raise CodeIndexError(f"{store.path.parent}: the index has no file vectors (written by an older conba); "
                             "run `conba index` on the same paths once to add them (nothing is re-encoded)")
    rows = db.execute("SELECT f.path, f.language, fv.units, fv.vector, fv.crc FROM file_vectors fv "
                      "JOIN files f ON f.path = fv.path ORDER BY f.path").fetchall()
    vectors = np.empty((len(rows), dim), dtype=np.float32)
    for k, (path, _, _, blob, crc) in enumerate(rows):
        v = np.frombuffer(blob, dtype=np.float32)
        if zlib.crc32(blob) != crc or v.shape[0] != dim:
            raise CorruptIndexError(f"{store.path}: the file vector of {path} is damaged; "
                                    "rebuild the index with `conba index --rebuild`")
        vectors[k] = v
    return FileVectors([r[0] for r in rows], [r[1] for r in rows], np.array([r[2] for r in rows], np.int64),
                       vectors)
