"""SQLite storage of the index: files, code units, their embeddings (keyed by content hash), metadata.

Every change is a transaction, so a process killed at any point leaves a consistent database:
a file's units are replaced all at once, embeddings are committed batch by batch, and each
embedding is stored once per content hash (``INSERT OR IGNORE``), so re-runs never duplicate.
"""

from __future__ import annotations

import os
import re
import sqlite3
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from conba.index.errors import CorruptIndexError
from conba.source.records import Unit

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, language TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS units (
    id INTEGER PRIMARY KEY AUTOINCREMENT, file TEXT NOT NULL, qualname TEXT NOT NULL,
    language TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
    kind TEXT NOT NULL, hash TEXT NOT NULL, code TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS units_file ON units(file);
CREATE INDEX IF NOT EXISTS units_hash ON units(hash);
CREATE TABLE IF NOT EXISTS vectors (hash TEXT PRIMARY KEY, vector BLOB NOT NULL, crc INTEGER);
CREATE TABLE IF NOT EXISTS staged_files (
    path TEXT PRIMARY KEY, language TEXT, size INTEGER, mtime_ns INTEGER, removed INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS staged_units (
    file TEXT NOT NULL, qualname TEXT NOT NULL, language TEXT NOT NULL, start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL, kind TEXT NOT NULL, hash TEXT NOT NULL, code TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS staged_units_file ON staged_units(file);
"""
UNIT_COLUMNS = "id, file, qualname, language, start_line, end_line, kind, code"
PATH_FORMAT = "2"  # meta "path_format": 2 = lossless names (backslashes escaped too); none = the old escape
_LEGACY_BYTE = re.compile(rb"\\x([89a-fA-F][0-9a-fA-F])")
_ESCAPE = re.compile(rb"\\(\\|x[0-9a-fA-F]{2})")


def db_path(path: str) -> str:
    """A file path as stored: unchanged when it is valid UTF-8 without a backslash; else escaped one
    to one: a backslash as ``\\\\`` and each byte that is not UTF-8 (Python keeps those as lone
    surrogates, which SQLite refuses) as ``\\xNN``. So ``b'bad\\xffname.py'`` and a file literally
    named ``bad\\xffname.py`` are stored apart. :func:`fs_path` undoes it, :func:`shown_path` shows it."""
    if "\\" not in path or os.sep == "\\":
        try:
            path.encode("utf-8")
            return path
        except UnicodeEncodeError:
            if os.sep == "\\":  # Windows: no undecodable bytes; keep any lone surrogate visible
                return path.encode("utf-8", "backslashreplace").decode("ascii")
    return os.fsencode(path).replace(b"\\", b"\\\\").decode("utf-8", "backslashreplace")


def fs_path(stored: str) -> str:
    """The file system path of a stored path (the inverse of :func:`db_path`)."""
    if "\\" not in stored or os.sep == "\\":
        return stored
    raw = _ESCAPE.sub(lambda m: b"\\" if m.group(1) == b"\\" else bytes([int(m.group(1)[1:], 16)]),
                      stored.encode("utf-8"))
    return os.fsdecode(raw)


def shown_path(stored: str) -> str:
    """How a stored path is shown: the file's name with only its non-UTF-8 bytes written ``\\xNN``; where
    that would be ambiguous (a name with a literal backslash that reads as an escape, or with both a backslash
    and such bytes) the stored form, with the literal backslashes doubled. So two files are never shown alike
    (``x\\xe9.py`` with a literal backslash, ``x<0xe9>.py``), and a map or a report keeps them apart."""
    if "\\" not in stored:
        return stored
    path = fs_path(stored)
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return stored if "\\" in path else os.fsencode(path).decode("utf-8", "backslashreplace")
    return stored if _ESCAPE.search(path.encode("utf-8")) else path


def legacy_fs_path(stored: str) -> str:
    """The file system path of a path stored by conba before ``path_format`` 2 (only non-UTF-8 bytes
    escaped, so a stored ``\\xNN`` that undoes to valid UTF-8 was a literal name)."""
    if "\\x" not in stored:
        return stored
    raw = _LEGACY_BYTE.sub(lambda m: bytes([int(m.group(1), 16)]), stored.encode("utf-8"))
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return os.fsdecode(raw)
    return stored


def _crc(blob: bytes) -> int:
    """The checksum stored with each vector (CRC-32: catches overwritten or truncated bytes)."""
    return zlib.crc32(blob)


def _plausible(blob: bytes) -> bool:
    v = np.frombuffer(blob, dtype=np.float32) if len(blob) % 4 == 0 else np.empty(0, np.float32)
    return bool(v.size) and bool(np.isfinite(v).all()) and abs(float(np.linalg.norm(v.astype(np.float64))) - 1.0) < 1e-3


def _unit(row: tuple) -> Unit:
    uid, file, qualname, language, start, end, kind, code = row
    return Unit(shown_path(file), qualname, language, start, end, code, kind=kind, id=uid)


class Store:
    """One SQLite database (``index.sqlite`` in the index folder)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self.db = sqlite3.connect(str(self.path), isolation_level=None, timeout=30)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.create_function("conba_crc32", 1, _crc, deterministic=True)
            self.db.executescript(SCHEMA)
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise CorruptIndexError(
                f"{self.path}: index database is corrupted ({exc}); rebuild it with `conba index --rebuild`"
            ) from None

    def _migrate(self) -> None:
        self._migrate_crc()
        self._migrate_paths()

    def _migrate_paths(self) -> None:
        """Indexes written before ``path_format`` 2 escaped only non-UTF-8 bytes, so two names could
        share one stored path: store each again losslessly. Where two old names were one, the row is
        dropped and the next ``conba index`` reads both files again."""
        if self.get_meta("path_format") == PATH_FORMAT:
            return
        try:
            self._store_paths_again()
        except sqlite3.OperationalError as exc:
            if "readonly" not in str(exc) and "read-only" not in str(exc):
                raise  # a read-only index stays as it is: its old names still read back

    def _store_paths_again(self) -> None:
        with self.transaction() as db:
            if db.execute("SELECT value FROM meta WHERE key = 'path_format'").fetchone() is None:
                rows = db.execute("SELECT path FROM files WHERE instr(path, '\\') > 0").fetchall()
                taken = {p for (p,) in db.execute("SELECT path FROM files")}
                for (old,) in rows:
                    new = db_path(legacy_fs_path(old))
                    if new == old:
                        continue
                    if new in taken:
                        db.execute("DELETE FROM units WHERE file = ?", (old,))
                        db.execute("DELETE FROM files WHERE path = ?", (old,))
                        continue
                    db.execute("UPDATE files SET path = ? WHERE path = ?", (new, old))
                    db.execute("UPDATE units SET file = ? WHERE file = ?", (new, old))
                    taken.add(new)
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('path_format', ?)", (PATH_FORMAT,))

    def _migrate_crc(self) -> None:
        """Indexes written before vector checksums have no ``crc`` column: add it and fill it from the
        vectors as stored now, keeping the old index usable. Damage done before this point cannot be
        told from a checksum, so a vector that is not finite and unit-length (every stored vector is
        L2-normalised) gets none, counts as corrupt, and the next ``conba index`` re-encodes it."""
        if "crc" in {row[1] for row in self.db.execute("PRAGMA table_info(vectors)")}:
            return
        with self.transaction() as db:
            db.execute("ALTER TABLE vectors ADD COLUMN crc INTEGER")
            rows = db.execute("SELECT hash, vector FROM vectors").fetchall()
            db.executemany("UPDATE vectors SET crc = ? WHERE hash = ?",
                           [(_crc(blob) if _plausible(blob) else None, h) for h, blob in rows])

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # ------------------------------------------------------------------ metadata
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, **values: str | None) -> None:
        with self.transaction() as db:
            for key, value in values.items():
                if value is None:
                    db.execute("DELETE FROM meta WHERE key = ?", (key,))
                else:
                    db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, str(value)))

    # ------------------------------------------------------------------ files and units
    def file_states(self) -> dict[str, tuple[int, int]]:
        return {p: (s, m) for p, s, m in self.db.execute("SELECT path, size, mtime_ns FROM files")}

    def replace_files(self, items: list[tuple[str, str, int, int, list[Unit]]]) -> None:
        """Atomically replace everything stored for some files: (path, language, size, mtime_ns, units).
        Paths are stored as :func:`db_path` gives them (``file_states`` returns them so)."""
        with self.transaction() as db:
            for path, language, size, mtime_ns, units in items:
                path = db_path(path)
                db.execute("DELETE FROM units WHERE file = ?", (path,))
                db.execute("INSERT OR REPLACE INTO files(path, language, size, mtime_ns) VALUES (?, ?, ?, ?)",
                           (path, language, size, mtime_ns))
                db.executemany(
                    "INSERT INTO units(file, qualname, language, start_line, end_line, kind, hash, code) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [(path, u.qualname, u.language, u.start_line, u.end_line, u.kind, u.hash, u.code)
                     for u in units])

    def remove_files(self, paths: Iterable[str]) -> int:
        paths = list(paths)
        with self.transaction() as db:
            for p in paths:
                db.execute("DELETE FROM units WHERE file = ?", (p,))
                db.execute("DELETE FROM files WHERE path = ?", (p,))
        return len(paths)

    def count_units(self) -> int:
        return self.db.execute("SELECT count(*) FROM units").fetchone()[0]

    def count_files(self) -> int:
        return self.db.execute("SELECT count(*) FROM files").fetchone()[0]

    def units(self, ids: Iterable[int]) -> dict[int, Unit]:
        ids = [int(i) for i in ids]
        out: dict[int, Unit] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for row in self.db.execute(f"SELECT {UNIT_COLUMNS} FROM units WHERE id IN ({marks})", chunk):
                out[row[0]] = _unit(row)
        return out

    def all_units(self) -> list[Unit]:
        return [_unit(r) for r in self.db.execute(f"SELECT {UNIT_COLUMNS} FROM units ORDER BY id")]

    def unit_hashes(self) -> tuple[np.ndarray, list[str]]:
        """(ids int64, content hashes) of every unit, by id."""
        rows = self.db.execute("SELECT id, hash FROM units ORDER BY id").fetchall()
        return np.array([r[0] for r in rows], dtype=np.int64), [r[1] for r in rows]

    def codes_of(self, hashes: Iterable[str]) -> dict[str, str]:
        """{content hash: code} of the given unit contents (those the index holds)."""
        hashes = list(hashes)
        out: dict[str, str] = {}
        for start in range(0, len(hashes), 500):
            chunk = hashes[start:start + 500]
            marks = ",".join("?" * len(chunk))
            out.update(self.db.execute(f"SELECT hash, min(code) FROM units WHERE hash IN ({marks}) GROUP BY hash",
                                       chunk).fetchall())
        return out

    def unit_languages(self) -> tuple[np.ndarray, list[str]]:
        """(ids int64, languages) of every unit, by id."""
        rows = self.db.execute("SELECT id, language FROM units ORDER BY id").fetchall()
        return np.array([r[0] for r in rows], dtype=np.int64), [r[1] for r in rows]

    def vectors_of(self, ids: Iterable[int]) -> dict[int, np.ndarray]:
        """{unit id: stored vector (float32)} of the units ``ids`` that have one."""
        ids = [int(i) for i in ids]
        out: dict[int, np.ndarray] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for uid, blob in self.db.execute(
                    f"SELECT u.id, v.vector FROM units u JOIN vectors v ON u.hash = v.hash WHERE u.id IN ({marks})",
                    chunk):
                out[uid] = np.frombuffer(blob, dtype=np.float32)
        return out

    def languages(self) -> dict[str, int]:
        rows = self.db.execute("SELECT language, count(*) FROM units GROUP BY language ORDER BY 2 DESC")
        return dict(rows.fetchall())

    # ------------------------------------------------------------------ vectors
    def missing_vectors(self) -> list[tuple[str, str, str]]:
        """(hash, language, code) of every distinct unit content, indexed or staged by the run in progress
        (:mod:`conba.index.storage.staging`), that has no embedding yet."""
        return self.db.execute(
            "SELECT u.hash, min(u.language), min(u.code) FROM (SELECT hash, language, code, id AS n FROM units "
            "UNION ALL SELECT hash, language, code, rowid + (SELECT count(*) FROM units) FROM staged_units) u "
            "LEFT JOIN vectors v ON u.hash = v.hash WHERE v.hash IS NULL GROUP BY u.hash ORDER BY min(u.n)").fetchall()

    def add_vectors(self, hashes: list[str], vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        with self.transaction() as db:
            db.executemany("INSERT OR IGNORE INTO vectors(hash, vector, crc) VALUES (?, ?, ?)",
                           [(h, v.tobytes(), _crc(v.tobytes())) for h, v in zip(hashes, vectors)])

    def drop_corrupt_vectors(self) -> int:
        """Delete the vectors that fail their checksum (so they are encoded again). Returns how many."""
        with self.transaction() as db:
            cur = db.execute("DELETE FROM vectors WHERE crc IS NULL OR crc != conba_crc32(vector)")
            return cur.rowcount

    def drop_orphan_vectors(self) -> int:
        with self.transaction() as db:
            cur = db.execute("DELETE FROM vectors WHERE hash NOT IN (SELECT hash FROM units)")
            return cur.rowcount

    def all_vectors(self, dim: int) -> tuple[np.ndarray, np.ndarray]:
        """(unit ids int64 (n,), vectors float32 (n, dim)) of every unit that has an embedding."""
        rows = self.db.execute(
            "SELECT u.id, v.vector, v.crc FROM units u JOIN vectors v ON u.hash = v.hash ORDER BY u.id").fetchall()
        bad = sum(crc is None or _crc(blob) != crc for _, blob, crc in rows)
        if bad:
            raise CorruptIndexError(
                f"{self.path}: {bad} stored vector(s) fail their checksum (the database file was damaged); "
                "run `conba index` on the same paths again to re-encode them, or `conba index --rebuild`")
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        vecs = np.empty((len(rows), dim), dtype=np.float32)
        for i, (_, blob, _) in enumerate(rows):
            v = np.frombuffer(blob, dtype=np.float32)
            if v.shape[0] != dim:
                raise CorruptIndexError(f"{self.path}: stored vector of size {v.shape[0]} != {dim}; "
                                        "rebuild the index with `conba index --rebuild`")
            vecs[i] = v
        return ids, vecs
