"""Which vector store an index gets (:func:`kind_for`, the rule in :mod:`conba.index.vectors`), and persisting
(:func:`write`) and loading (:func:`read`) it (the manifest's ``kind``).

* ``flat``  exact ``IndexFlatIP`` in ``vectors.faiss``, rebuilt from SQLite after each run: up to
  ``ivf_above`` vectors (default :data:`conba.index.vectors.ivf.IVF_ABOVE`), where it is fast enough;
* ``hnsw``  FAISS HNSW in ``vectors.faiss`` (only when an ``hnsw_above`` below ``ivf_above`` is asked for);
* ``ivf``   IVF-SQ8 with exact re-ranking in ``ann/`` (:mod:`conba.index.vectors.ivf`), updated in place
  (:mod:`conba.index.vectors.ivf_update`) and rebuilt beside the old one when it has degraded. An index that
  is ``ivf`` stays so until it shrinks below half of ``ivf_above``.

The manifest's ``ann`` entry records the IVF structure, its parameters and its update history.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conba.index.errors import CorruptIndexError
from conba.index.vectors import exact as vec
from conba.index.vectors import ivf as ann_ivf
from conba.index.vectors import ivf_update as ann_update
from conba.index.vectors.store import ExactStore, VectorStore
from conba.utils.fault_injection import kill_point

if TYPE_CHECKING:  # the store is passed in: the vector stores never import storage/
    from conba.index.storage.store import Store

VECTORS_NAME, MANIFEST_NAME = "vectors.faiss", "manifest.json"


def count_vectors(store: Store) -> int:
    return store.db.execute("SELECT count(*) FROM units u JOIN vectors v ON u.hash = v.hash").fetchone()[0]


def kind_for(n: int, hnsw_above: int = vec.HNSW_ABOVE, ivf_above: int = ann_ivf.IVF_ABOVE,
             was_ivf: bool = False) -> str:
    """The store for ``n`` vectors (``was_ivf``: the last manifest's is an IVF store of the same width): ``ivf``
    above ``ivf_above`` (and while an IVF index has not shrunk to half of it), else ``hnsw`` above ``hnsw_above``,
    else ``flat``."""
    if n > ivf_above or (was_ivf and n > ivf_above // 2):
        return "ivf"
    return "hnsw" if n > hnsw_above else "flat"


def write(folder: Path, store: Store, dim: int, previous: dict | None = None, *, hnsw_above: int = vec.HNSW_ABOVE,
          ivf_above: int = ann_ivf.IVF_ABOVE, rebuild: str | None = None,
          progress: Callable[[str], None] | None = None) -> tuple[Any, dict]:
    """Write the vector structure for the units of ``store`` that have a vector; returns (searchable
    index, manifest fields: kind, count, vectors, sha256 and for ``ivf`` ann + ann_run). ``previous``:
    the last good manifest (default: ``folder/manifest.json`` when it is this database's; its IVF
    generation is updated in place); ``rebuild``: why to rebuild an IVF
    structure instead (e.g. repaired vectors). Call :func:`remove_unused` once the manifest is written."""
    t0 = time.perf_counter()
    if previous is None:
        previous = previous_manifest(folder / MANIFEST_NAME, store.get_meta("fingerprint"))
    n = count_vectors(store)
    prev = previous.get("ann") if previous and previous.get("kind") == "ivf" and previous.get("dim") == dim else None
    if kind_for(n, hnsw_above, ivf_above, was_ivf=prev is not None) != "ivf":
        ids, embeddings = store.all_vectors(dim)
        index, kind = vec.build(ids, embeddings, hnsw_above=hnsw_above)
        return ExactStore(index, kind), {"kind": kind, "count": int(len(ids)), "vectors": VECTORS_NAME,
                                         "sha256": vec.write(index, folder / VECTORS_NAME)}
    generation = 0
    run: dict[str, Any] = {}
    if prev is not None:
        generation = int(prev["generation"]) + 2  # + 1 may hold a degraded update's files
        if rebuild is None:
            try:
                ann, searcher, run = ann_update.update(folder, store, prev, dim)
            except CorruptIndexError as exc:
                rebuild = str(exc)
            else:
                rebuild = ann_update.degraded(ann)
                if rebuild is None:
                    run.update(mode="update", seconds=round(time.perf_counter() - t0, 3))
                    return searcher, _fields(ann, run)
    ann = ann_ivf.build(folder, lambda: ann_update.vector_chunks(store, dim), n, dim, generation, progress=progress)
    ann["rebuilt_because"] = rebuild or ("first build" if prev is None else None)
    run = {"mode": "build", "seconds": round(time.perf_counter() - t0, 3), "added": n, "removed": 0}
    return ann_ivf.load(folder, ann, dim), _fields(ann, run)


def _fields(ann: dict, run: dict) -> dict:
    return {"kind": "ivf", "count": int(ann["live"]), "vectors": f"{ann_ivf.ANN_DIR}/ivf-{ann['generation']}.faiss",
            "sha256": ann["ivf_sha256"], "ann": ann,
            "ann_run": {k: round(v, 3) if isinstance(v, float) else v for k, v in run.items()}}


def remove_unused(folder: Path, manifest: dict) -> None:
    """Delete the vector files the written ``manifest`` no longer names (the old structure)."""
    kill_point("ivf-cleanup")
    if manifest.get("kind") == "ivf":
        (folder / VECTORS_NAME).unlink(missing_ok=True)
        ann_ivf.remove_unused(folder, manifest["ann"])
    else:
        ann_ivf.remove_unused(folder, None)


def read(folder: Path, manifest: dict) -> VectorStore:
    """The searchable index the manifest names, verified (:class:`CorruptIndexError` if damaged)."""
    if manifest.get("kind") == "ivf":
        return ann_ivf.load(folder, manifest["ann"], int(manifest["dim"]))
    index = vec.read(folder / VECTORS_NAME, manifest.get("sha256"), manifest.get("count"))
    return ExactStore(index, manifest.get("kind") or "flat")


def previous_manifest(path: Path, fingerprint: str | None) -> dict | None:
    """The last completed run's manifest (read while this run marks the index "building"), or None when
    there is none or it is not this database's (its vector files are then rebuilt)."""
    from conba.utils.io import read_json

    try:
        manifest = read_json(path)
    except (OSError, ValueError):
        return None
    ok = isinstance(manifest, dict) and manifest.get("format") == "conba-index"
    return manifest if ok and manifest.get("fingerprint") == fingerprint else None
