"""The lexical vectors of an index (``lexical.npz``), beside the dense ones (``vectors.faiss``).

The file holds, for every unit in id order, its content hash and its sublinear term frequencies over
hashed identifier terms (:class:`conba.lexical.LexicalVectorizer`), as one CSR matrix
(``ids``, ``hashes``, ``indptr``, ``indices``, ``data``; plain arrays, read with
``allow_pickle=False``). It is rewritten atomically at the end of every ``conba index`` run; rows
of contents seen before are reused by hash, so a run tokenizes only new code. Readers weigh the rows
with the document frequencies of the whole index (:class:`LexicalIndex`).

Glossary: n units, b queries, V hashed columns.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from scipy import sparse

from conba.index.errors import CorruptIndexError
from conba.utils.io import atomic_write

__all__ = ["LexicalIndex", "build_rows", "write_rows", "read_rows"]

_KEYS = ("ids", "hashes", "indptr", "indices", "data")


def read_rows(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray, sparse.csr_matrix] | None:
    """(ids (n,), hashes (n,), term frequencies (n, V)) from ``path``; None when there is no file."""
    from conba.lexical.vectorizer import N_FEATURES

    path = Path(path)
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in _KEYS}
        tf = sparse.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]),
                               shape=(len(arrays["ids"]), N_FEATURES))
    except (OSError, ValueError, KeyError) as exc:
        raise CorruptIndexError(f"{path}: lexical vector file is damaged ({exc}); re-run `conba index` "
                                "to rebuild it") from None
    return arrays["ids"].astype(np.int64), arrays["hashes"], tf


def build_rows(ids: np.ndarray, hashes: np.ndarray, codes_of: Callable[[list[str]], dict[str, str]],
               previous: tuple | None) -> tuple[np.ndarray, np.ndarray, sparse.csr_matrix]:
    """(ids, hashes, term frequencies) of the units ``ids`` (id order) with content ``hashes``; rows of
    ``previous`` are reused by hash, and only the code of new contents is fetched (``codes_of``) and
    tokenized."""
    from conba.lexical import LexicalVectorizer

    ids = np.asarray(ids, dtype=np.int64)
    hashes = np.asarray(hashes, dtype="U64")
    known: dict[str, int] = {} if previous is None else {str(h): r for r, h in enumerate(previous[1])}
    new = sorted({h for h in hashes.tolist() if h not in known})
    code = codes_of(new) if new else {}
    fresh = LexicalVectorizer().term_frequencies([code[h] for h in new])
    # one matrix of every row on offer (previous rows, then fresh ones) and one fancy index into it
    pool = fresh if previous is None else sparse.vstack([previous[2], fresh], format="csr")
    offset = 0 if previous is None else previous[2].shape[0]
    row_of = {**known, **{h: offset + r for r, h in enumerate(new)}}
    rows = np.array([row_of[h] for h in hashes.tolist()], dtype=np.int64)
    return ids, hashes, sparse.csr_matrix(pool[rows], dtype=np.float32)


def write_rows(path: str | os.PathLike, ids: np.ndarray, hashes: np.ndarray, tf: sparse.csr_matrix) -> None:
    """Write the lexical file atomically."""
    def save(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            np.savez(fh, ids=ids, hashes=hashes, indptr=tf.indptr, indices=tf.indices, data=tf.data)

    atomic_write(path, save)


class LexicalIndex:
    """The index's lexical vectors, weighed with its document frequencies: score queries against them."""

    def __init__(self, ids: np.ndarray, tf: sparse.csr_matrix):
        from conba.lexical.vectorizer import IdfTable, LexicalVectorizer

        self.ids = np.asarray(ids, dtype=np.int64)
        self.idf = IdfTable.fit(tf).weights()
        self._vectorizer = LexicalVectorizer()
        self.vectors = self._vectorizer.weigh(tf, self.idf)          # (n, V) unit length
        self.row_of = {int(i): r for r, i in enumerate(self.ids)}

    def encode(self, codes: Sequence[str]) -> sparse.csr_matrix:
        """(b, V) unit-length lexical vectors of ``codes``, weighed like the index's units."""
        return self._vectorizer.weigh(self._vectorizer.term_frequencies(codes), self.idf)

    def rows(self, ids: Sequence[int]) -> sparse.csr_matrix:
        """(len(ids), V) the vectors of the units ``ids``."""
        return self.vectors[[self.row_of[int(i)] for i in ids]]

    def scores(self, queries: sparse.csr_matrix, ids: Sequence[int] | None = None) -> np.ndarray:
        """(b, n) float32 lexical cosines of ``queries`` with every unit (or with ``ids``)."""
        target = self.vectors if ids is None else self.rows(ids)
        queries = sparse.csr_matrix(queries)
        out = np.empty((queries.shape[0], target.shape[0]), dtype=np.float32)
        # sparse (n, V) times dense (V, few queries): one pass over the units' nonzeros. The sparse
        # product (b, V) @ (V, n) turned the unit matrix around on every call (44 of a search's 87 ms
        # on 100k functions); a dense block of 16 queries over 2**20 terms is 64 MB at most
        for start in range(0, queries.shape[0], 16):
            block = queries[start:start + 16].T.toarray()
            out[start:start + 16] = (target @ block).T
        return out

    def pair_scores(self, ids_a: Sequence[int], ids_b: Sequence[int]) -> np.ndarray:
        """(m,) lexical cosines of the unit pairs ``(ids_a[k], ids_b[k])``."""
        from conba.lexical.vectorizer import row_pair_cosines

        return row_pair_cosines(self.vectors, [self.row_of[int(i)] for i in ids_a],
                                [self.row_of[int(i)] for i in ids_b])


def update(path: str | os.PathLike, ids: np.ndarray, hashes: np.ndarray,
           codes_of: Callable[[list[str]], dict[str, str]]) -> dict:
    """Rewrite the lexical file for the units ``ids`` (id order, content ``hashes``), reusing the rows
    it held by content hash; returns what the manifest records (file name, unit count, sha256)."""
    from conba.index.vectors.exact import file_sha256

    try:
        previous = read_rows(path)
    except CorruptIndexError:
        previous = None  # rebuilt from the units below
    rows = build_rows(ids, hashes, codes_of, previous)
    write_rows(path, *rows)
    return {"file": Path(path).name, "count": int(len(rows[0])), "sha256": file_sha256(path)}


def load(path: str | os.PathLike, recorded: dict | None, units: Callable[[], tuple],
         codes_of: Callable[[list[str]], dict[str, str]]) -> LexicalIndex:
    """The :class:`LexicalIndex` of an index: from its file when the manifest ``recorded`` one (checked
    against its sha256), else (an index written before the lexical channel) computed in memory from
    ``units()`` (ids, hashes) and ``codes_of``."""
    from conba.index.vectors.exact import file_sha256

    path = Path(path)
    if recorded:
        if not path.exists():
            raise CorruptIndexError(f"{path}: lexical vector file is missing; re-run `conba index` to rebuild it")
        if recorded.get("sha256") and file_sha256(path) != recorded["sha256"]:
            raise CorruptIndexError(f"{path}: lexical vector file is corrupted or truncated (checksum "
                                    "mismatch); re-run `conba index` to rebuild it")
        rows = read_rows(path)
        assert rows is not None
        ids, _, tf = rows
    else:
        unit_ids, hashes = units()
        ids, _, tf = build_rows(unit_ids, hashes, codes_of, None)
    return LexicalIndex(ids, tf)
