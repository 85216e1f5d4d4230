"""The vector structure of large indexes: FAISS IVF with 8-bit scalar codes, re-ranked exactly.

Above ``IVF_ABOVE`` units (:mod:`conba.index.vectors.structure` decides) the index keeps, in ``ann/``::

    rows-B.f16     float16 (r, d): the vector of every row ever added since build B, append-only
    ivf-G.faiss    FAISS ``IndexIVFScalarQuantizer`` (spherical k-means lists, SQ8 codes); its ids are rows
    ids-G.npy      int64 (r,): the unit id of each row, -1 for a removed one

A search takes the ``rerank`` best rows by their SQ8 codes in the ``nprobe`` nearest lists, then ranks
them by the exact inner product of their float16 rows (read through a memory map) and returns unit
ids. An update (:mod:`conba.index.vectors.ivf_update`) appends rows and writes generation G+1 beside G; the
manifest names the generation, so a kill at any point leaves the last good one. Why IVF-SQ8 and these
parameters: docs/BENCHMARKS.md "Search at 1M vectors".

Glossary: n units, r rows (live and removed), d width, b queries, k neighbours, c candidates.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from conba.errors import ConfigError
from conba.index.errors import CorruptIndexError
from conba.index.vectors.exact import file_sha256
from conba.utils.ann import faiss_module
from conba.utils.fault_injection import kill_point
from conba.utils.io import atomic_write, write_npy_atomic

IVF_ABOVE = 200_000  # exact IndexFlatIP up to here (≈ 10 ms a query at 200k on one core)
NPROBE = 64  # the fewest lists a query probes
PROBE_SHARE = 32  # and at least 1/PROBE_SHARE of them: 64 of 2,048 lists (200k-700k vectors), 128 of 4,096 (1M)
RERANK = 64
CODES = "SQ8"  # FAISS factory code of the IVF lists' vectors
TRAIN_PER_LIST = 40  # k-means sample = TRAIN_PER_LIST * nlist vectors (FAISS warns below 39)
KMEANS_ITER = 10
ADD_CHUNK = 65_536
ANN_DIR = "ann"
_HINT = "re-run `conba index` to rebuild it"


def nlist_for(n: int) -> int:
    """Inverted lists for ``n`` vectors: the power of two nearest 4 * sqrt(n), halved until each list
    has TRAIN_PER_LIST training points (a tiny index gets one list). 1M -> 4096, 200k -> 2048."""
    nlist = 2 ** round(math.log2(max(4 * math.sqrt(max(n, 1)), 1)))
    while nlist > 1 and nlist * TRAIN_PER_LIST > n:
        nlist //= 2
    return nlist


def nlist_setting(n: int) -> int:
    """The lists a build of ``n`` vectors makes: ``CONBA_IVF_NLIST`` when set (at most n / TRAIN_PER_LIST),
    else :func:`nlist_for`. 8,192 at 1M (twice the rule) with the probes of :func:`nprobe_rule` (256) found
    more of real code's neighbours in 4.3 ms a query, for a build 3x as long (docs/BENCHMARKS.md)."""
    value = os.environ.get("CONBA_IVF_NLIST")
    if not value:
        return nlist_for(n)
    return min(_positive_env("CONBA_IVF_NLIST", value), max(1, n // TRAIN_PER_LIST))


ENV_MAX = 1 << 24  # CONBA_IVF_NLIST / CONBA_IVF_NPROBE: past any index's lists (faiss takes them as C integers)


def _positive_env(name: str, value: str) -> int:
    """The environment variable ``name``'s ``value`` as a whole number 1..ENV_MAX (a one-line error otherwise)."""
    try:
        number = int(value)
    except ValueError:
        number = 0
    if not 1 <= number <= ENV_MAX:
        shown = value if len(value) <= 40 else value[:40] + "..."
        shown = shown if shown.isprintable() else repr(shown)  # a newline would break the one line
        raise ConfigError(f"{name}={shown}: not a positive whole number up to {ENV_MAX}")
    return number


def check_env() -> None:
    """Refuse a bad ``CONBA_IVF_NLIST`` / ``CONBA_IVF_NPROBE`` now (one line), not at the first IVF search:
    ``conba serve`` calls it before it starts."""
    for name in ("CONBA_IVF_NLIST", "CONBA_IVF_NPROBE"):
        if os.environ.get(name):
            _positive_env(name, os.environ[name])


def nprobe_rule(nlist: int) -> int:
    """The lists a query probes in an index of ``nlist`` lists: max(NPROBE, nlist / PROBE_SHARE). Chosen on
    real code (docs/BENCHMARKS.md "Real code at 1M"): at 1M (114k real vectors in the synthetic pad) 64 of
    4,096 lists found 0.946 of the true top 10 (held-out real queries 0.908), 128 found 0.966 (0.941) in
    3.8 ms, within the 5 ms budget; more lists probed cost time in proportion."""
    return max(NPROBE, nlist // PROBE_SHARE)


def paths(folder: Path, generation: int, base: int) -> dict[str, Path]:
    """The files of generation ``generation`` whose rows were started by build ``base``."""
    ann = folder / ANN_DIR
    return {"rows": ann / f"rows-{base}.f16", "ivf": ann / f"ivf-{generation}.faiss",
            "ids": ann / f"ids-{generation}.npy"}


class IVFSearcher:
    """The IVF vector store (:class:`conba.index.vectors.store.VectorStore`): ``search(queries (b, d), k) ->
    (scores (b, k), unit ids (b, k))``, -1 where fewer than k; ``ntotal`` live vectors; ``add`` / ``remove`` in
    memory (an index's update on disk is :func:`conba.index.vectors.ivf_update.update`, which writes a new
    generation). Duck-types the FAISS index for :func:`conba.utils.ann.search`."""

    def __init__(self, ivf: Any, rows: np.ndarray, ids: np.ndarray, nprobe: int = NPROBE, rerank: int = RERANK):
        self.ivf, self.rows, self.ids = ivf, rows, ids
        self.rerank = int(rerank)
        self.ivf.nprobe = int(nprobe)

    @property
    def ntotal(self) -> int:
        return int(self.ivf.ntotal)

    @property
    def nprobe(self) -> int:
        return int(self.ivf.nprobe)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        b, k = len(queries), int(k)
        scores = np.full((b, k), -np.inf, dtype=np.float32)
        found = np.full((b, k), -1, dtype=np.int64)
        if b == 0 or self.ntotal == 0:
            return scores, found
        c = min(max(k, self.rerank), self.ntotal)
        _, cand = self.ivf.search(queries, c)  # (b, c) rows, -1 padded
        step = max(1, (64 << 20) // (c * self.rows.shape[1] * 4))  # at most ~64 MB of float32 rows at once
        for s in range(0, b, step):
            rows = cand[s:s + step]
            valid = rows >= 0
            vecs = np.asarray(self.rows[np.where(valid, rows, 0).ravel()], dtype=np.float32)
            exact = np.einsum("bcd,bd->bc", vecs.reshape(len(rows), c, -1), queries[s:s + step])
            exact[~valid] = -np.inf
            top = np.argsort(-exact, axis=1, kind="stable")[:, :k]
            kk = top.shape[1]
            scores[s:s + step, :kk] = np.take_along_axis(exact, top, 1)
            picked = np.take_along_axis(rows, top, 1)
            found[s:s + step, :kk] = np.where(picked >= 0, self.ids[np.maximum(picked, 0)], -1)
        found[~np.isfinite(scores)] = -1
        return scores, found

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Append ``vectors`` (m, d) as new rows of the units ``ids`` (m,) and add them to the IVF lists."""
        ids = np.asarray(ids, dtype=np.int64)
        start = len(self.ids)
        self.rows = np.concatenate([np.asarray(self.rows), np.asarray(vectors, dtype=np.float16)])
        self.ivf.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32),
                              np.arange(start, start + len(ids), dtype=np.int64))
        self.ids = np.concatenate([self.ids, ids])

    def remove(self, ids: np.ndarray) -> int:
        """Remove the live rows of the units ``ids`` from the IVF lists (their rows stay, marked -1); how many."""
        rows = np.flatnonzero((self.ids >= 0) & np.isin(self.ids, np.asarray(ids, dtype=np.int64)))
        if len(rows):
            self.ivf.remove_ids(faiss_module().IDSelectorBatch(rows.astype(np.int64)))
            self.ids = self.ids.copy()
            self.ids[rows] = -1
        return int(len(rows))


# ---------------------------------------------------------------------- files
def write_ivf(ivf: Any, path: Path) -> str:
    faiss = faiss_module()
    atomic_write(path, lambda tmp: faiss.write_index(ivf, str(tmp)))
    return file_sha256(path)


def write_ids(ids: np.ndarray, path: Path) -> str:
    write_npy_atomic(path, np.ascontiguousarray(ids, dtype=np.int64))
    return file_sha256(path)


def append_rows(path: Path, keep_rows: int, vectors: np.ndarray, dim: int) -> int:
    """Cut ``path`` to its first ``keep_rows`` rows (what a killed run appended goes), append
    ``vectors`` (m, d) as float16 and flush them to disk. Returns the new row count."""
    row_bytes = dim * 2
    with open(path, "r+b" if path.exists() else "w+b") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size < keep_rows * row_bytes:
            raise CorruptIndexError(f"{path}: holds {size // row_bytes} rows, expected {keep_rows}; {_HINT}")
        fh.truncate(keep_rows * row_bytes)
        fh.seek(keep_rows * row_bytes)
        fh.write(np.ascontiguousarray(vectors, dtype=np.float16).tobytes())
        fh.flush()
        os.fsync(fh.fileno())
    return keep_rows + len(vectors)


def open_rows(path: Path, count: int, dim: int) -> np.ndarray:
    """The first ``count`` rows of ``path``, memory-mapped read-only (float16 (r, d))."""
    if not path.exists():
        raise CorruptIndexError(f"{path}: vector rows file is missing; {_HINT}")
    if path.stat().st_size < count * dim * 2:
        raise CorruptIndexError(f"{path}: vector rows file is truncated; {_HINT}")
    if count == 0:
        return np.zeros((0, dim), dtype=np.float16)
    return np.memmap(path, dtype=np.float16, mode="r", shape=(count, dim))


def _checked(path: Path, sha256: str | None, what: str) -> Path:
    if not path.exists():
        raise CorruptIndexError(f"{path}: {what} is missing; {_HINT}")
    if sha256 and file_sha256(path) != sha256:
        raise CorruptIndexError(f"{path}: {what} is corrupted or truncated (checksum mismatch); {_HINT}")
    return path


def load_parts(folder: Path, ann: dict, dim: int) -> tuple[Any, np.ndarray, np.ndarray]:
    """(IVF index, float16 rows memmap, ids) of the generation the manifest entry ``ann`` names, verified."""
    faiss = faiss_module()
    p = paths(folder, int(ann["generation"]), int(ann["base"]))
    try:
        ivf = faiss.read_index(str(_checked(p["ivf"], ann.get("ivf_sha256"), "IVF vector file")))
        ids = np.load(_checked(p["ids"], ann.get("ids_sha256"), "row id file"), allow_pickle=False)
    except (RuntimeError, ValueError, OSError) as exc:
        first = (str(exc).strip().splitlines() or ["unreadable"])[0]
        raise CorruptIndexError(f"{folder / ANN_DIR}: vector files are damaged ({first}); {_HINT}") from None
    rows = open_rows(p["rows"], int(ann["rows"]), dim)
    if len(ids) != int(ann["rows"]) or ivf.ntotal != int(ann["live"]):
        raise CorruptIndexError(f"{folder / ANN_DIR}: vector files disagree with the manifest; {_HINT}")
    return ivf, rows, ids


def load(folder: Path, ann: dict, dim: int) -> IVFSearcher:
    """The searcher of the generation ``ann`` names, with its nprobe (``CONBA_IVF_NPROBE`` overrides it:
    more lists probed, higher recall, linearly slower)."""
    ivf, rows, ids = load_parts(folder, ann, dim)
    return IVFSearcher(ivf, rows, ids, nprobe=nprobe_for(ann), rerank=int(ann.get("rerank", RERANK)))


def nprobe_for(ann: dict) -> int:
    """The lists a query probes: ``CONBA_IVF_NPROBE`` when set, else the generation's recorded nprobe."""
    value = os.environ.get("CONBA_IVF_NPROBE")
    return _positive_env("CONBA_IVF_NPROBE", value) if value else int(ann.get("nprobe", NPROBE))


# ---------------------------------------------------------------------- build
def train(sample: np.ndarray, dim: int, nlist: int, codes: str = CODES, iters: int = KMEANS_ITER,
          seed: int = 1234, quantizer: Any = None) -> Any:
    """An empty IVF index (inner product) with ``codes`` (a FAISS factory code: SQ8, PQ96x4fs...) trained
    on ``sample`` (m, d): spherical k-means lists, or the lists of ``quantizer`` (a trained coarse
    quantizer, copied) when given."""
    faiss = faiss_module()
    made = faiss.index_factory(dim, f"IVF{nlist},{codes}", faiss.METRIC_INNER_PRODUCT)
    made.this.disown()
    ivf = faiss.downcast_index(made)  # the IVF index itself: owned by this proxy from here
    ivf.this.acquire()
    if quantizer is not None:
        ivf.quantizer = faiss.clone_index(quantizer)
        ivf.quantizer.this.disown()
        ivf.own_fields = True
    ivf.cp.spherical = True
    ivf.cp.niter = iters
    ivf.cp.seed = seed
    ivf.cp.max_points_per_centroid = max(TRAIN_PER_LIST, len(sample) // max(nlist, 1) + 1)
    ivf.train(np.ascontiguousarray(sample, dtype=np.float32))
    return ivf


def build(folder: Path, chunks: Callable[[], Iterator[tuple[np.ndarray, np.ndarray]]], count: int, dim: int,
          generation: int, seed: int = 0, nlist: int | None = None, codes: str = CODES,
          progress: Callable[[str], None] | None = None) -> dict:
    """A fresh generation from every (unit ids (m,), vectors (m, d)) chunk of ``chunks()`` (read twice:
    rows + training sample, then adding); returns the manifest's ``ann`` entry. Nothing the current
    manifest names is touched: the new rows file is ``rows-{generation}``."""
    say = progress or (lambda _msg: None)
    t0 = time.perf_counter()
    p = paths(folder, generation, generation)
    p["rows"].parent.mkdir(parents=True, exist_ok=True)
    nlist = nlist or nlist_setting(count)
    rng = np.random.default_rng(seed)
    pick = np.sort(rng.choice(count, size=min(count, TRAIN_PER_LIST * nlist), replace=False))
    sample: list[np.ndarray] = []
    ids: list[np.ndarray] = []
    rows = 0
    p["rows"].unlink(missing_ok=True)
    for chunk_ids, vecs in chunks():
        lo, hi = np.searchsorted(pick, [rows, rows + len(chunk_ids)])
        sample.append(np.asarray(vecs[pick[lo:hi] - rows], dtype=np.float32))
        rows = append_rows(p["rows"], rows, vecs, dim)
        ids.append(np.asarray(chunk_ids, dtype=np.int64))
    if rows != count:
        raise CorruptIndexError(f"{folder}: read {rows} vectors, expected {count}; {_HINT}")
    kill_point("ivf-build-rows")
    t1 = time.perf_counter()
    say(f"training {nlist} lists on {len(pick):,} vectors")
    ivf = train(np.concatenate(sample) if sample else np.zeros((0, dim), np.float32), dim, nlist, codes, seed=seed + 1)
    del sample
    t2 = time.perf_counter()
    say(f"adding {count:,} vectors")
    mapped = open_rows(p["rows"], rows, dim)
    for s in range(0, rows, ADD_CHUNK):
        block = np.asarray(mapped[s:s + ADD_CHUNK], dtype=np.float32)
        ivf.add_with_ids(block, np.arange(s, s + len(block), dtype=np.int64))
    all_ids = np.concatenate(ids) if ids else np.zeros(0, np.int64)
    t3 = time.perf_counter()
    return {"structure": f"IVF-{codes} + exact float16 re-rank", "generation": generation, "base": generation,
            "nlist": nlist, "nprobe": nprobe_rule(nlist), "nprobe_rule": f"max({NPROBE}, nlist/{PROBE_SHARE})",
            "rerank": RERANK, "codes": codes, "kmeans": "spherical",
            "trained_on": int(len(pick)), "built_with": count, "added_since_build": 0,
            "removed_since_build": 0, "rows": rows, "live": int(ivf.ntotal),
            "imbalance_at_build": round(float(ivf.invlists.imbalance_factor()), 4),
            "build_seconds": {"read_rows": round(t1 - t0, 1), "train": round(t2 - t1, 1), "add": round(t3 - t2, 1)},
            "ivf_sha256": write_ivf(ivf, p["ivf"]), "ids_sha256": write_ids(all_ids, p["ids"])}


def remove_unused(folder: Path, ann: dict | None) -> None:
    """Delete the files in ``ann/`` that the manifest entry ``ann`` does not name (older generations,
    a killed run's leftovers); the whole folder when ``ann`` is None."""
    root = folder / ANN_DIR
    if not root.is_dir():
        return
    keep = set() if ann is None else {q.name for q in paths(folder, int(ann["generation"]), int(ann["base"])).values()}
    for f in root.iterdir():
        if f.name not in keep:
            f.unlink(missing_ok=True)
    if ann is None:
        root.rmdir()
