"""The end of every writing run (``Index.add``, ``rebuild_vectors``, the long-input upgrade): the vector store
and the lexical file brought up to date with the database, then the manifest written atomically.

The order is what keeps a killed run safe: unused embeddings dropped, the vector structure written beside the old
one (:func:`conba.index.vectors.structure.write`), the lexical file updated, the manifest that names them written,
the database marked ``ready``, and only then the old structure's files removed.
"""

from __future__ import annotations

from typing import Any

from conba.index.model.identity import FORMAT_VERSION
from conba.index.ranking import lexical_file
from conba.index.vectors import structure
from conba.index.vectors.store import VectorStore
from conba.utils.io import write_json_atomic

MANIFEST_NAME, LEXICAL_NAME = "manifest.json", "lexical.npz"


def finish_run(idx: Any, rebuild: str | None = None) -> VectorStore:
    """Finish a run on the :class:`~conba.index.Index` ``idx`` (its writer lock held); ``rebuild``: why to
    rebuild an IVF structure instead of updating it. Returns the new vector store."""
    store, folder = idx.store, idx.path
    idx.db_call(store.drop_orphan_vectors)
    dim = int(idx.db_call(store.get_meta, "dim"))
    vectors, fields = idx.db_call(structure.write, folder, store, dim, hnsw_above=idx.hnsw_above,
                                  ivf_above=idx.ivf_above, rebuild=rebuild)  # updates the last manifest's
    ids, hashes = idx.db_call(store.unit_hashes)
    lexical = lexical_file.update(folder / LEXICAL_NAME, ids, hashes, store.codes_of)
    manifest = {
        "format": "conba-index", "format_version": FORMAT_VERSION,
        "model": idx.db_call(store.get_meta, "model"),
        "fingerprint": idx.db_call(store.get_meta, "fingerprint"),
        "view": idx.db_call(store.get_meta, "view") or "raw", "engine": idx.engine, "dim": dim,
        "threshold": idx.threshold, **fields, "lexical_weight": idx.lexical_weight, "lexical": lexical,
    }
    write_json_atomic(folder / MANIFEST_NAME, manifest)
    idx.db_call(store.set_meta, state="ready", failure=None)
    structure.remove_unused(folder, manifest)
    return vectors
