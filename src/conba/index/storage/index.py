"""``Index``: a code index on disk — add a codebase, search it with a snippet, find its clones.

A folder (default ``.conba-index``, env ``CONBA_INDEX``) holds::

    index.sqlite     files, functions (file, qualified name, lines, language, hash, code), embeddings
    vectors.faiss    exact FAISS index over the embeddings, rebuilt after each add (ann/ above 200k: IVF, updated)
    lexical.npz      identifier term frequencies of every unit (the lexical channel;
                     :mod:`conba.index.ranking.lexical_file`)
    manifest.json    model name + fingerprint, input view, engine, lexical weight, dimension, clone threshold, counts,
                     checksums
    index.lock       held (flock) by the one process writing the index; see :mod:`conba.index.storage.lock`

>>> idx = Index(".conba-index", model="default")   # engine="onnx": int8 ONNX Runtime, faster on CPU
>>> idx.add(["src/"])
>>> idx.search("def gcd(a, b): ...", k=5, language="java")
>>> idx.clones(cross_language_only=True)
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from conba.clones.find import CloneReport, find_clones
from conba.clones.threshold import resolve_threshold
from conba.data.records import DataError
from conba.errors import ConfigError
from conba.index.defaults import DEFAULT_INDEX_DIR, INDEX_ENV, default_index_dir, missing_index
from conba.index.errors import CodeIndexError, CorruptIndexError, IncompleteIndexError
from conba.index.model import identity, upgrade
from conba.index.model.identity import DEFAULT_ENGINE, model_label
from conba.index.model.placement import Placement
from conba.index.model.query import after_add, query_model
from conba.index.model.state import ModelState
from conba.index.ranking import lexical_file
from conba.index.ranking.search import filtered_search, fused_search, unit_scores
from conba.index.storage import builder
from conba.index.storage import rebuild as swap
from conba.index.storage.finalize import finish_run
from conba.index.storage.lock import IndexLock
from conba.index.storage.manifest import read_manifest, record_failure
from conba.index.storage.store import Store
from conba.index.vectors import structure
from conba.index.vectors.exact import HNSW_ABOVE
from conba.index.vectors.ivf import IVF_ABOVE
from conba.index.vectors.store import VectorStore
from conba.source.filters import DEFAULT_MAX_FILE_SIZE
from conba.source.records import AddReport, CloneClass, Hit, Unit

__all__ = ["DEFAULT_INDEX_DIR", "INDEX_ENV", "Index", "default_index_dir"]
DB_NAME, VECTORS_NAME, MANIFEST_NAME, LEXICAL_NAME = "index.sqlite", "vectors.faiss", "manifest.json", "lexical.npz"


class Index:
    """A code index in a folder. ``model`` is a name/path (loaded lazily) or a ``ConbaModel``;
    when omitted, the model the index was built with is used (``default`` for a new index).
    ``view`` overrides the model's input view (:mod:`conba.syntax.view`); it is part of the
    model's embedding fingerprint, so an index refuses a model with another view.
    ``engine`` (torch, onnx, onnx-fp32; :mod:`conba.engine`) encodes units and queries; it is recorded
    with a new index (default torch), and an index refuses another engine's vectors
    (:class:`EngineMismatchError`); when omitted, the engine the index was built with is used.
    ``model_options``: load_model's pooling / trust_remote_code for a bare model (:mod:`conba.index.model.load`).
    ``lexical_weight`` (0..1) is the lexical share of the fused score that search, clones and scores use
    (:mod:`conba.lexical`); when omitted, the weight the index records (the model's at indexing time).

    Writing (``add``, ``rebuild``) takes the folder's lock: while another process writes the same
    index this raises :class:`IndexBusyError`, or with ``wait=True`` waits for it (calling
    ``on_wait(pid)`` first). ``rebuild`` builds a new index beside this one, swapped in when ``add`` completes
    (:mod:`conba.index.storage.rebuild`); its lock is held from the start until :meth:`close`.

    Other modules use only its internal interface (never its private state; tests/index/test_index_private_state.py):
    :attr:`models` (:class:`~conba.index.model.state.ModelState`), :meth:`db_call`, :meth:`check_model`,
    :meth:`encoding_model`, :meth:`write_lock`, :meth:`finalize`, :meth:`vector_store`, and the public attributes."""

    placement: Placement = (None, None)  # --device, --dtype of the model (conba.index.model.placement)

    def __init__(self, path: str | os.PathLike | None = None, model: Any = None, *, create: bool = True,
                 rebuild: bool = False, hnsw_above: int = HNSW_ABOVE, ivf_above: int = IVF_ABOVE,
                 wait: bool = False, on_wait: Callable[[str], None] | None = None, view: str | None = None,
                 engine: str | None = None, lexical_weight: float | None = None, model_options: dict | None = None):
        from conba.lexical.fusion import check_weight

        self._lexical_weight = None if lexical_weight is None else check_weight(lexical_weight)
        self._lexical: Any = None
        self.path = swap.recover(Path(default_index_dir(path)), DB_NAME)  # a half-done replace_dir swap
        self.hnsw_above, self.ivf_above = hnsw_above, ivf_above  # vector structure: conba.index.vectors.structure
        if self.path.exists() and not self.path.is_dir():
            raise CodeIndexError(f"{self.path}: not an index folder (it is a file)")
        self._lock = IndexLock(self.path)
        self._wait, self._on_wait = wait, on_wait
        self._target: Path | None = None  # rebuilding: the index that self.path (PATH.rebuild) replaces at the end
        if rebuild:
            self._lock.acquire(wait=wait, on_wait=on_wait)
            self._target, self.path = self.path, swap.begin(self.path, model, view, engine, model_options)
        self._created = False  # this object made the folder: a first run that fails removes it again
        self._failed = False
        if not (self.path / DB_NAME).exists():
            if (why := missing_index(self.path, create)) is not None:  # nothing here, or a sharded index
                raise CodeIndexError(why)
            self._created = not self.path.exists()
            self.path.mkdir(parents=True, exist_ok=True)
        self.store = Store(self.path / DB_NAME)
        self._engine = None if engine is None else identity.check_engine(engine)
        given = None if isinstance(model, (str, os.PathLike)) or model is None else model
        if given is not None and view is not None:
            given.view = view
        # options: load_model's pooling / trust_remote_code for a bare model
        self.models = ModelState(model_label(model), dict(model_options or {}), view, given)
        self._vectors: VectorStore | None = None
        try:
            if self._engine is not None:
                self.db_call(identity.check_engine_matches, self.path, self.store, self._engine)
            if given is not None:
                upgrade.first_check(self, given)  # an index to upgrade keeps it aside (conba.index.model.upgrade)
            elif model is not None:
                upgrade.first_load(self)  # load now, so a mismatch is reported before any work
        except BaseException as exc:
            swap.on_error(self.path, self._target, exc)
            self._remove_if_new()
            raise

    # ------------------------------------------------------------------ lifecycle
    def _remove_if_new(self) -> None:
        """Remove the folder again when this object created it and no run has completed in it."""
        try:
            new = self._created and self.store.get_meta("state") != "ready"
        except sqlite3.Error:
            new = self._created
        self._created = False
        self._close()
        if new:
            shutil.rmtree(self.path, ignore_errors=True)

    def _close(self) -> None:
        self.store.close()
        while self._lock.held:
            self._lock.release()

    def close(self) -> None:
        if self._failed:
            self._remove_if_new()
        else:
            self._close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __len__(self) -> int:
        return self.db_call(self.store.count_units)

    def __repr__(self) -> str:
        return f"Index({str(self.path)!r})"

    def db_call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)``; a damaged database raises :class:`CorruptIndexError` (one line, the fix)."""
        try:
            return fn(*args, **kwargs)
        except sqlite3.DatabaseError as exc:
            raise CorruptIndexError(f"{self.path / DB_NAME}: index database is corrupted ({exc}); "
                                    "rebuild it with `conba index --rebuild`") from None

    # ------------------------------------------------------------------ model
    @property
    def model_name(self) -> str | None:
        return self.models.name or self.db_call(self.store.get_meta, "model")

    @property
    def model(self) -> Any:
        if self.models.loaded is None:
            self.models.loaded = upgrade.load_model(self)  # load_index_model, or the one kept aside to upgrade
        return self.models.loaded

    def check_model(self, model: Any) -> None:
        """Refuse a model whose vectors are not the index's (a new index records the model's identity)."""
        upgrade.check_model(self, model)  # identity.check_model; add() upgrades an index to a long-input read-out

    @property
    def engine(self) -> str:
        """The engine that encodes units and queries: the one given, else the index's, else torch."""
        return self._engine or self.db_call(identity.stored_engine, self.store) or DEFAULT_ENGINE

    def encoding_model(self) -> Any:
        """The model, checked to run on :attr:`engine` (onnxruntime installed, no prefix codes)."""
        model = self.model  # checks the fingerprint before touching anything
        identity.require_engine(model, self.engine)
        return model

    @property
    def threshold(self) -> float | None:
        """The clone threshold of the model the index was built with: its calibrated ``clone_threshold``,
        else (also for indexes made before it existed) its F1 ``threshold``; None if it has neither."""
        value = self.db_call(self.store.get_meta, "clone_threshold") or self.db_call(self.store.get_meta, "threshold")
        return float(value) if value is not None else None

    @property
    def lexical_weight(self) -> float:
        """The lexical share of the fused score: the one given, else the index's, else 0 (dense only)."""
        if self._lexical_weight is not None:
            return self._lexical_weight
        value = self.db_call(self.store.get_meta, "lexical_weight")
        return float(value) if value is not None else 0.0

    # ------------------------------------------------------------------ indexing
    def add(self, paths: str | os.PathLike | Iterable[str | os.PathLike], *,
            max_file_size: int = DEFAULT_MAX_FILE_SIZE, batch_size: int | None = None, commit_every: int | None = None,
            show_progress: bool = False, encoder: Callable | None = None, exclude: Iterable = ()) -> AddReport:
        """Index files/directories (incrementally) and rewrite the vector file (``exclude``: folders left out).

        ``encoder`` replaces the local encoding step (:func:`builder.encode_missing`, same signature):
        e.g. :class:`conba.index.scale.ray_encode.RayEncoder` encodes on a Ray cluster while this process
        stays the single writer."""
        paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
        t0 = time.perf_counter()
        model = upgrade.add_model(self)  # conba.index.model.lazy (loaded only to encode), after an upgrade
        self._lock.acquire(wait=self._wait, on_wait=self._on_wait)
        try:
            report = self._add(paths, model, max_file_size, batch_size, commit_every, show_progress, encoder, exclude)
            self._swap_rebuild_in()
            after_add(self)  # the model loaded to encode: exported for torch-free queries
        except Exception as exc:
            record_failure(self.store, exc)  # readers say what to fix
            self._failed = True  # close() removes a new folder in which no run has completed
            raise
        finally:
            self._lock.release()
        report.seconds = time.perf_counter() - t0
        return report

    def _add(self, paths: list, model: Any, max_file_size: int, batch_size: int | None, commit_every: int | None,
             show_progress: bool, encoder: Callable[..., None] | None = None, exclude: Iterable = ()) -> AddReport:
        report = AddReport(engine=self.engine, view=getattr(model, "view", None) or "raw")
        # scan stages the changes (conba.index.storage.staging): until commit the index stays readable as it was
        changed = self.db_call(builder.scan, self.store, paths, report, max_file_size=max_file_size,
                           exclude=[*swap.excluded(self.path, self._target), *exclude])
        report.vectors_repaired = self.db_call(self.store.drop_corrupt_vectors)  # re-encoded just below
        self.db_call(encoder or builder.encode_missing, self.store, model, report, batch_size=batch_size,
                 commit_every=commit_every, show_progress=show_progress, engine=self.engine)
        report.units_reused = max(0, changed - report.units_encoded)
        self.db_call(builder.commit, self.store)  # the staged changes replace the index's rows: "building" now
        if self._lexical_weight is not None or self.db_call(self.store.get_meta, "lexical_weight") is None:
            weight = self._lexical_weight if self._lexical_weight is not None else getattr(model, "lexical_weight", 0.0)
            self.db_call(self.store.set_meta, lexical_weight=float(weight or 0.0))
        self.finalize("vectors were repaired" if report.vectors_repaired else None)
        report.units_total = len(self)
        return report

    def _swap_rebuild_in(self) -> None:
        """A rebuild: the new index replaces the old one now (:func:`conba.index.storage.rebuild.finish`)."""
        if self._target is not None:
            self._lock, self.store = swap.finish(self.path, self._target, self._lock, self.store, DB_NAME)
            self.path, self._target = self._target, None
            self._vectors = self._lexical = None  # read again from the folder now in place

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """Hold the index's writer lock (re-entrant; waits when the Index was opened with ``wait=True``)."""
        self._lock.acquire(wait=self._wait, on_wait=self._on_wait)
        try:
            yield
        finally:
            self._lock.release()

    def finalize(self, rebuild: str | None = None) -> None:
        """The end of a writing run (under :meth:`write_lock`): drop unused embeddings, update the vector
        structure (rebuilt when ``rebuild`` says why) and write the manifest atomically."""
        self._vectors = finish_run(self, rebuild)  # conba.index.storage.finalize
        self._lexical = None

    def rebuild_vectors(self) -> dict[str, Any]:
        """Rebuild the vector structure from the stored vectors (no encoding) beside the old one; the new manifest."""
        with self.write_lock():
            self.manifest()  # only a completed index
            self.finalize("asked (rebuild_vectors)")
        return self.manifest()

    # ------------------------------------------------------------------ reading
    def manifest(self) -> dict[str, Any]:
        """The manifest of a completed run, checked against the database (:func:`manifest.read_manifest`)."""
        upgrade.refuse_deferred(self)  # a model kept aside to upgrade the index is not yet its model
        return self.db_call(read_manifest, self.path, self.path / MANIFEST_NAME, self.store, self._lock.held)

    def vector_store(self) -> VectorStore:
        """The vector store the manifest names (:mod:`conba.index.vectors.store`), read and verified once."""
        if self._vectors is None:
            self._vectors = structure.read(self.path, self.manifest())
        return self._vectors

    def load_vectors(self) -> int:
        """Read and verify the vector file now (it is otherwise read on first search); returns its size."""
        return int(self.vector_store().ntotal)

    def lexical_index(self) -> lexical_file.LexicalIndex:
        """The units' lexical vectors (:class:`conba.index.ranking.lexical_file.LexicalIndex`), read once."""
        if self._lexical is None:
            recorded = self.manifest().get("lexical")
            self._lexical = self.db_call(lexical_file.load, self.path / LEXICAL_NAME, recorded, self.store.unit_hashes,
                                     self.store.codes_of)
            lang_of = dict(zip(*self.db_call(self.store.unit_languages)))
            self._unit_languages = np.array([lang_of.get(int(i), "") for i in self._lexical.ids], dtype=object)
        return self._lexical

    def score_matrix(self, ids_a: np.ndarray, ids_b: np.ndarray) -> np.ndarray:
        """(len(ids_a), len(ids_b)) float32 scores between units by id: the fused score at
        :attr:`lexical_weight` (the dense cosine alone at 0)."""
        weight = self.lexical_weight
        return self.db_call(unit_scores, self.store, self.lexical_index() if weight else None, weight, ids_a, ids_b)

    def search(self, code: str, k: int = 10, language: str | None = None,
               query_language: str | None = None) -> list[Hit]:
        """The ``k`` units most similar to ``code`` (optionally only those in ``language``)."""
        from conba.data.records import normalize_language

        if k < 1:
            raise ConfigError("k must be >= 1")
        if not code.strip():
            raise DataError("the query is empty")
        if self.vector_store().ntotal == 0:
            return []
        qlang = normalize_language(query_language) if query_language else ""
        encoder = query_model(self)  # the ONNX query encoder when it can (conba.index.model.query)
        query = encoder.encode_query([code], languages=[qlang], show_progress_bar=False, engine=self.engine)
        return self.search_vectors(query, k=k, language=language, codes=[code])[0]

    def search_vectors(self, queries: np.ndarray, k: int = 10, language: str | None = None,
                       codes: list[str] | None = None) -> list[list[Hit]]:
        """Search with query embeddings, float32 (b, d), L2-normalised: the ``k`` best hits per query
        (optionally only units in ``language``). ``conba serve`` batches the encoding of queries itself.
        With the queries' ``codes`` and a lexical weight > 0 the hits are ranked by the fused score."""
        from conba.data.records import normalize_language

        if k < 1:
            raise ConfigError("k must be >= 1")
        queries = np.atleast_2d(np.asarray(queries, dtype=np.float32))
        language = normalize_language(language) if language else None
        lookup = lambda ids: self.db_call(self.store.units, ids)  # noqa: E731
        if codes is None or not self.lexical_weight:
            return filtered_search(self.vector_store(), queries, k, language, lookup)
        if len(codes) != len(queries):
            raise ConfigError(f"{len(codes)} query codes for {len(queries)} query vectors")
        lex = self.lexical_index()
        return fused_search(self.vector_store(), queries, lex.encode(codes), k, language, self.lexical_weight, lex,
                            self._unit_languages, lookup, lambda ids: self.db_call(self.store.vectors_of, ids))

    def clones(self, threshold: str | float | None = "auto", *, cross_language_only: bool = False,
               min_lines: int = 1, neighbors: int = 10, keep_trivial: bool = False,
               grouping: str = "communities") -> list[CloneClass]:
        """Clone classes: communities of the kNN graph's pairs with score >= threshold whose members are
        similar to each other (see :meth:`clone_report`)."""
        return self.clone_report(threshold, cross_language_only=cross_language_only, min_lines=min_lines,
                                 neighbors=neighbors, keep_trivial=keep_trivial, grouping=grouping).classes

    def clone_report(self, threshold: str | float | None = "auto", *, cross_language_only: bool = False,
                     min_lines: int = 1, neighbors: int = 10, keep_trivial: bool = False,
                     grouping: str = "communities") -> CloneReport:
        """Clone classes and their statistics. Trivial units (empty bodies, one-line accessors, tests;
        :mod:`conba.clones.trivial`) are skipped unless ``keep_trivial``; ``grouping="components"`` gives
        the old connected components (which chain) instead of cohesive communities
        (:mod:`conba.clones.grouping`)."""
        t = resolve_threshold(threshold, self.threshold)
        if neighbors < 1:
            raise ConfigError("neighbors must be >= 1")
        index = self.vector_store()
        dim = int(self.manifest()["dim"])
        ids, embeddings = self.db_call(self.store.all_vectors, dim)
        units = self.db_call(self.store.all_units)
        if len(units) != len(ids) or any(u.id != i for u, i in zip(units, ids.tolist())):
            raise IncompleteIndexError(f"{self.path}: some functions have no embedding; re-run `conba index`")
        weight = self.lexical_weight
        return find_clones(units, ids, embeddings, index, t, cross_language_only=cross_language_only,
                           min_lines=min_lines, neighbors=neighbors, keep_trivial=keep_trivial,
                           grouping=grouping, hnsw_above=self.hnsw_above, lexical_weight=weight,
                           lexical=self.lexical_index() if weight else None)

    def units(self) -> list[Unit]:
        """Every indexed unit (function, method, file or window), in id order."""
        return self.db_call(self.store.all_units)

    def stats(self) -> dict[str, Any]:
        return {"path": str(self.path), "files": self.db_call(self.store.count_files), "functions": len(self),
                "languages": self.db_call(self.store.languages), "model": self.model_name,
                "view": self.db_call(self.store.get_meta, "view") or "raw", "engine": self.engine,
                "fingerprint": self.db_call(self.store.get_meta, "fingerprint"), "threshold": self.threshold}

    def delete(self) -> None:
        """Remove the index folder."""
        self.close()
        shutil.rmtree(self.path, ignore_errors=True)
