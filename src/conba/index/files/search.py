"""Files as results: score whole files against each other, and rank an index's files for a file.

Glossary: F files, t candidate files, uq the query file's units, ut the candidates' units, d width.

Two stages (measured against the alternatives in docs/BENCHMARKS.md "Files as results"):

1. the file vectors (:mod:`conba.index.files.vectors`: the token-weighted mean of a file's function
   vectors) give every file a cosine with the query, and the :data:`RERANK` best are kept;
2. those are scored by their functions: the symmetric mean of each side's best match
   (``(mean_i max_j S_ij + mean_j max_i S_ij) / 2`` over the unit scores S, the index's fused score), so a
   file matches when most of its functions have a counterpart in the other file and the other way round.

The file score is that mean of best matches (in [-1, 1], like a function score): a pair of files at the
clone threshold has, on average, a clone of every function on each side.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from conba.errors import ConfigError
from conba.index.files import vectors as fvec
from conba.index.storage.store import db_path, shown_path
from conba.source.records import Unit

__all__ = ["RERANK", "FileHit", "FileQuery", "FileScorer", "code_units", "make_query", "rank_files", "search_files"]

RERANK = 50  # first-stage candidates re-scored by their functions (algorithms_dev: as good as all, table)


@dataclass
class FileHit:
    """A file found for a query file: ``score`` the file score, ``vector_score`` its first-stage cosine."""
    score: float
    vector_score: float
    file: Unit  # kind "file": the file as one unit (name = its base name, lines = its functions' span)
    functions: int

    def to_dict(self, rank: int | None = None, code: bool = False) -> dict[str, Any]:
        """``code``: with the file's functions' code (:meth:`FileScorer.file_code` sets it)."""
        from conba.clones.display import display_path

        d: dict[str, Any] = {"rank": rank} if rank is not None else {}
        d.update({"score": round(self.score, 4), "vector_score": round(self.vector_score, 4),
                  "file": display_path(self.file.file), "language": self.file.language,
                  "functions": self.functions})
        if code:
            d["code"] = self.file.code
        return d


@dataclass
class FileQuery:
    """A query file: its unit vectors (uq, d), lexical rows (uq, V) or None, its file vector (d,)."""
    path: str
    language: str
    vectors: np.ndarray
    lexical: Any
    vector: np.ndarray
    stored: str | None  # the index's path when the index holds the file
    note: str | None = None  # why an indexed file was encoded afresh (changed on disk, --query-language)


class FileScorer:
    """The file vectors and function ids of a completed index, and the file score between files."""

    def __init__(self, index: Any):
        self.index = index
        self.dim = int(index.manifest()["dim"])  # a completed index (readable errors otherwise)
        self.files = index.db_call(fvec.load, index.store, self.dim)
        self.row_of = self.files.row_of()
        ids: dict[str, list[int]] = {}
        last: dict[str, int] = {}
        for path, uid, end in index.db_call(index.store.db.execute,
                                        "SELECT file, id, end_line FROM units ORDER BY file, id"):
            ids.setdefault(path, []).append(uid)
            last[path] = max(last.get(path, 1), end)
        self.unit_ids = [np.array(ids.get(p, []), dtype=np.int64) for p in self.files.paths]
        self.end_line = [last.get(p, 1) for p in self.files.paths]
        self.weight = index.lexical_weight
        self.lexical = index.lexical_index() if self.weight else None
        self._all: tuple[dict[int, int], np.ndarray] | None = None

    def preload(self) -> None:
        """Read every unit vector once (file clones score every file)."""
        ids, vecs = self.index.db_call(self.index.store.all_vectors, self.dim)
        self._all = ({int(i): r for r, i in enumerate(ids)}, vecs)

    def unit_vectors(self, ids: np.ndarray) -> np.ndarray:
        """(len(ids), d) the stored vectors of units ``ids``."""
        if self._all is not None:
            row, vecs = self._all
            return vecs[[row[int(i)] for i in ids]]
        stored = self.index.db_call(self.index.store.vectors_of, ids.tolist())
        lost = [int(i) for i in ids if int(i) not in stored]
        if lost:
            from conba.index.errors import IncompleteIndexError

            raise IncompleteIndexError(f"{self.index.path}: unit {lost[0]} has no embedding; re-run `conba index`")
        return np.stack([stored[int(i)] for i in ids]) if len(ids) else np.zeros((0, self.dim), np.float32)

    def unit(self, k: int) -> Unit:
        """File ``k`` as one unit (id ``k``, no code; name: its base name, lines: its functions' span)."""
        path = self.files.paths[k]
        return Unit(shown_path(path), os.path.basename(shown_path(path)), self.files.languages[k], 1,
                    self.end_line[k], "", kind="file", id=k)

    def file_code(self, k: int) -> str:
        """The code of file ``k``'s functions, as the index holds them, in order."""
        stored = self.index.db_call(self.index.store.units, self.unit_ids[k].tolist())
        return "\n".join(stored[j].code for j in sorted(stored))

    def query_of(self, k: int) -> FileQuery:
        """The indexed file ``k`` as a query."""
        ids = self.unit_ids[k]
        lex = self.lexical.rows(ids) if self.lexical is not None else None
        return FileQuery(self.files.paths[k], self.files.languages[k], self.unit_vectors(ids), lex,
                         self.files.vectors[k], self.files.paths[k])

    def mean_best(self, query: FileQuery, targets: list[int]) -> np.ndarray:
        """(t,) file scores of ``query`` against files ``targets``: the symmetric mean of best matches."""
        if not targets:
            return np.zeros(0, np.float32)
        counts = np.array([len(self.unit_ids[k]) for k in targets], dtype=np.int64)
        ids = np.concatenate([self.unit_ids[k] for k in targets])
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        sim = query.vectors @ self.unit_vectors(ids).T                   # (uq, ut)
        if self.lexical is not None and query.lexical is not None:
            from conba.lexical import fuse

            lex = (query.lexical @ self.lexical.rows(ids).T).toarray()   # sparse x sparse: (uq, ut), small
            sim = fuse(sim, np.asarray(lex, dtype=np.float32), self.weight)
        q_side = np.maximum.reduceat(sim, starts, axis=1).mean(axis=0)   # (t,)
        t_side = np.add.reduceat(sim.max(axis=0), starts) / counts       # (t,)
        return ((q_side + t_side) / 2).astype(np.float32)


def resolve_file(scorer: FileScorer, path: str) -> int | None:
    """The index's row of the file ``path`` (as given, absolute, or through symlinks), None if not held."""
    for cand in (path, os.path.abspath(path), os.path.realpath(path)):
        k = scorer.row_of.get(db_path(os.path.normpath(cand)))
        if k is not None:
            return k
    real = os.path.realpath(path)
    return next((k for k, p in enumerate(scorer.files.paths) if os.path.realpath(shown_path(p)) == real), None)


def code_units(text: str, language: str, name: str) -> list[Unit]:
    """The units of a whole file's ``text`` as the index extracts them (a file without functions: itself)."""
    from conba.errors import SourceError
    from conba.source.extract import extract_units, fallback_units

    units = extract_units(name, text, language) or fallback_units(name, text, language)
    if not units:
        raise SourceError(f"{name}: no code in the file")
    return units


def make_query(scorer: FileScorer, name: str, language: str, units: list[Unit], vectors: np.ndarray) -> FileQuery:
    """A query file from its units and their vectors (uq, d), encoded as the index encodes units."""
    raw = [u.code for u in units]
    vectors = np.asarray(vectors, dtype=np.float32)
    lex = scorer.lexical.encode(raw) if scorer.lexical is not None else None
    return FileQuery(name, language, vectors, lex, fvec.aggregate(vectors, fvec.token_counts(raw)), None)


def encode_file(index: Any, scorer: FileScorer, path: str, language: str | None = None) -> FileQuery:
    """A file the index does not hold, as a query: its functions extracted and encoded as the index's are."""
    from conba.clones.compare import read_code_file

    text, lang = read_code_file(path, language=language, language_option="--query-language")
    assert lang is not None  # read_code_file detects it or fails naming --query-language
    units = code_units(text, lang, path)
    codes, langs = [u.code for u in units], [u.language for u in units]
    from conba.index.model.query import query_model

    model = query_model(index)  # the ONNX query encoder when it can (no torch)
    view = getattr(model, "view", "raw") or "raw"
    if view != "raw":
        from conba.syntax.view import apply_views

        codes, _ = apply_views(codes, langs, view)
    vecs = model.encode(codes, languages=langs, show_progress_bar=False, normalize=True, view="raw",
                        engine=index.engine)
    return make_query(scorer, path, lang, units, vecs)


def rank_files(scorer: FileScorer, query: FileQuery, k: int = 10, *, same_language: bool = False,
               language: str | None = None, rerank: int = RERANK) -> list[FileHit]:
    """The ``k`` best files for ``query``: files in its language are left out unless ``same_language`` (the
    query itself always is); ``language`` keeps only files in that language."""
    if k < 1 or rerank < 1:
        raise ConfigError("k and rerank must be >= 1")
    langs = np.array(scorer.files.languages, dtype=object)
    keep = np.ones(len(langs), dtype=bool)
    if language is not None:
        keep &= langs == language
    elif not same_language:
        keep &= langs != query.language
    if query.stored is not None:
        keep[scorer.row_of[query.stored]] = False
    first = scorer.files.vectors @ query.vector                          # (F,)
    cand = np.flatnonzero(keep)
    cand = cand[np.argsort(-first[cand], kind="stable")[:max(rerank, k)]].tolist()
    scores = scorer.mean_best(query, cand)
    order = sorted(range(len(cand)), key=lambda j: (-scores[j], scorer.files.paths[cand[j]]))[:k]
    return [FileHit(float(scores[j]), float(first[cand[j]]), scorer.unit(cand[j]), len(scorer.unit_ids[cand[j]]))
            for j in order]


def search_files(index: Any, path: str, k: int = 10, *, same_language: bool = False,
                 language: str | None = None, rerank: int = RERANK, query_language: str | None = None,
                 scorer: FileScorer | None = None) -> tuple[FileQuery, list[FileHit]]:
    """The ``k`` files of the index most similar to the file ``path`` (indexed or not; one not indexed is
    encoded with the index's model); see :func:`rank_files`."""
    if k < 1 or rerank < 1:
        raise ConfigError("k and rerank must be >= 1")
    scorer = scorer or FileScorer(index)
    row = resolve_file(scorer, path)
    why = None if row is None else _fresh_reason(index, scorer, row, query_language)
    if row is not None and why is None:
        query = scorer.query_of(row)
    else:
        query = encode_file(index, scorer, path, query_language)
        if row is not None:  # an indexed file read afresh: still never its own hit
            query.stored, query.note = scorer.files.paths[row], f"{path}: {why}"
    return query, rank_files(scorer, query, k, same_language=same_language, language=language, rerank=rerank)


def _fresh_reason(index: Any, scorer: FileScorer, row: int, query_language: str | None) -> str | None:
    """Why the indexed file ``row`` is encoded from disk rather than from its stored vectors (None: it is not):
    its size or modification time differs from the index's (changed since it was indexed), or it is asked in
    another language than the index read it in."""
    from conba.index.storage.store import fs_path

    stored = scorer.files.paths[row]
    if query_language is not None and query_language != scorer.files.languages[row]:
        return f"indexed as {scorer.files.languages[row]}; encoded as {query_language} (--query-language)"
    state = index.db_call(index.store.db.execute, "SELECT size, mtime_ns FROM files WHERE path = ?",
                          (stored,)).fetchone()
    try:
        st = os.stat(fs_path(stored))
    except OSError:
        return None  # gone from disk: the indexed version is all there is
    if state is not None and (st.st_size, st.st_mtime_ns) != tuple(state):
        return "changed since it was indexed; searched with its current content (`conba index` updates the index)"
    return None
