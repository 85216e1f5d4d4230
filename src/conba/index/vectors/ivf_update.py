"""Keeping the IVF vector structure of a large index up to date in place (:mod:`conba.index.vectors.ivf`).

The SQLite database is the truth; the ``ann/`` files are derived from it. An update compares the row
ids of the last good generation with the units that have a vector now: units gone are removed from
the IVF lists, units new (a changed function is a new unit: ids are never reused) are appended as
rows and added to the lists, and generation G+1 is written beside G. Nothing G needs is overwritten
(rows are only appended past the count G's manifest records), so a kill at any point leaves G whole,
and the next run cuts what the killed one appended and redoes the update.

The structure is rebuilt (a new generation from all vectors, written beside the old one, swapped by
the manifest) when it has degraded: more vectors added since the k-means lists were trained than were
trained with (``GROWTH``), more removed rows than live ones (``DEAD``), or lists grown uneven
(FAISS imbalance factor above ``IMBALANCE`` times the one at build time).

Glossary: n units, m changed units, d width.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from conba.index.errors import CorruptIndexError
from conba.index.vectors import ivf as ann_ivf
from conba.utils.fault_injection import kill_point

if TYPE_CHECKING:  # the store is passed in: the vector stores never import storage/
    from conba.index.storage.store import Store

GROWTH = 1.0  # rebuild once added_since_build > GROWTH * built_with
DEAD = 1.0  # rebuild once removed rows > DEAD * live rows
IMBALANCE = 1.5  # rebuild once imbalance factor > IMBALANCE * imbalance_at_build
READ_CHUNK = 50_000


def vector_ids(store: Store) -> np.ndarray:
    """The ids (n,) int64, ascending, of the units that have a vector."""
    rows = store.db.execute("SELECT u.id FROM units u JOIN vectors v ON u.hash = v.hash ORDER BY u.id")
    return np.fromiter((r[0] for r in rows), dtype=np.int64)


def vector_chunks(store: Store, dim: int, chunk: int = READ_CHUNK) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(unit ids (m,), vectors (m, d) float32) of every unit with a vector, in id order, ``chunk`` at a
    time (1M vectors never sit in memory as Python bytes at once); checksums verified."""
    cur = store.db.execute(
        "SELECT u.id, v.vector, v.crc FROM units u JOIN vectors v ON u.hash = v.hash ORDER BY u.id")
    while rows := cur.fetchmany(chunk):
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        vecs = np.empty((len(rows), dim), dtype=np.float32)
        for i, (_, blob, crc) in enumerate(rows):
            if crc is None or zlib.crc32(blob) != crc or len(blob) != dim * 4:
                raise CorruptIndexError(f"{store.path}: a stored vector fails its checksum or size (the database "
                                        "file was damaged); run `conba index --rebuild`")
            vecs[i] = np.frombuffer(blob, dtype=np.float32)
        yield ids, vecs


def new_vectors(store: Store, ids: np.ndarray, dim: int) -> np.ndarray:
    """The stored vectors (m, d) float32 of the units ``ids``, in that order."""
    found = store.vectors_of(ids.tolist())
    if len(found) != len(ids):
        raise CorruptIndexError(f"{store.path}: {len(ids) - len(found)} unit(s) lost their vector during the run; "
                                "re-run `conba index`")
    return np.stack([found[int(i)] for i in ids]).astype(np.float32) if len(ids) else np.zeros((0, dim), np.float32)


def degraded(ann: dict) -> str | None:
    """Why the structure described by the manifest entry ``ann`` should be rebuilt, or None."""
    if ann["added_since_build"] > GROWTH * max(ann["built_with"], 1):
        return f"{ann['added_since_build']:,} vectors added since the lists were trained on {ann['built_with']:,}"
    dead = ann["rows"] - ann["live"]
    if dead > DEAD * max(ann["live"], 1):
        return f"{dead:,} removed rows, more than the {ann['live']:,} live ones"
    if ann.get("imbalance", 0) > IMBALANCE * ann["imbalance_at_build"]:
        return f"lists uneven (imbalance {ann['imbalance']:.2f}, {ann['imbalance_at_build']:.2f} when built)"
    return None


def update(folder: Path, store: Store, ann: dict, dim: int) -> tuple[dict, Any, dict]:
    """Apply the units added and removed since generation ``ann`` (a manifest entry) in place: returns
    (the new ``ann`` entry, the searcher, timings). Raises :class:`CorruptIndexError` when the old
    generation cannot be read (the caller rebuilds)."""
    t0 = time.perf_counter()
    ivf, _, row_ids = ann_ivf.load_parts(folder, ann, dim)
    current = vector_ids(store)
    live = row_ids >= 0
    gone_rows = np.flatnonzero(live & ~np.isin(row_ids, current))
    added = np.setdiff1d(current, row_ids[live], assume_unique=True)
    t1 = time.perf_counter()
    if not len(added) and not len(gone_rows):  # nothing changed: the generation stays
        rows_map = ann_ivf.open_rows(ann_ivf.paths(folder, int(ann["generation"]), int(ann["base"]))["rows"],
                                     int(ann["rows"]), dim)
        searcher = ann_ivf.IVFSearcher(ivf, rows_map, row_ids, nprobe=ann_ivf.nprobe_for(ann),
                                       rerank=int(ann["rerank"]))
        return dict(ann), searcher, {"diff_s": t1 - t0, "added": 0, "removed": 0}
    vecs = new_vectors(store, added, dim)
    t2 = time.perf_counter()
    base, generation = int(ann["base"]), int(ann["generation"]) + 1
    p = ann_ivf.paths(folder, generation, base)
    rows = ann_ivf.append_rows(p["rows"], int(ann["rows"]), vecs, dim)
    kill_point("ivf-appended")
    if len(gone_rows):
        ivf.remove_ids(ann_ivf.faiss_module().IDSelectorBatch(gone_rows.astype(np.int64)))
    if len(added):
        ivf.add_with_ids(vecs, np.arange(int(ann["rows"]), rows, dtype=np.int64))
    row_ids = row_ids.copy()
    row_ids[gone_rows] = -1
    row_ids = np.concatenate([row_ids, added])
    t3 = time.perf_counter()
    new = dict(ann, generation=generation, rows=rows, live=int(ivf.ntotal),
               nprobe=ann_ivf.nprobe_rule(int(ann["nlist"])),  # an older build's too: today's rule
               nprobe_rule=f"max({ann_ivf.NPROBE}, nlist/{ann_ivf.PROBE_SHARE})",
               added_since_build=int(ann["added_since_build"]) + len(added),
               removed_since_build=int(ann["removed_since_build"]) + len(gone_rows),
               imbalance=round(float(ivf.invlists.imbalance_factor()), 4),
               ivf_sha256=ann_ivf.write_ivf(ivf, p["ivf"]))
    kill_point("ivf-written")
    new["ids_sha256"] = ann_ivf.write_ids(row_ids, p["ids"])
    kill_point("ivf-files-written")
    t4 = time.perf_counter()
    searcher = ann_ivf.IVFSearcher(ivf, ann_ivf.open_rows(p["rows"], rows, dim), row_ids,
                                   nprobe=ann_ivf.nprobe_for(new), rerank=int(new["rerank"]))
    timings = {"diff_s": t1 - t0, "read_vectors_s": t2 - t1, "apply_s": t3 - t2, "write_s": t4 - t3,
               "added": int(len(added)), "removed": int(len(gone_rows))}
    return new, searcher, timings
