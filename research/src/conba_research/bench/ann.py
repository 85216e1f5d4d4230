"""The FAISS phases of ``conba bench index-scale`` (:mod:`conba_research.bench.index_scale`): ``synthetic``
(conba's flat vs HNSW on random vectors or real embeddings) and ``ann1m`` (FAISS search at 1M vectors
drawn like real ones).

The real embeddings of an index (``--vectors-from INDEX_DIR``: its SQLite ``vectors`` table, one row
per distinct content) fit a Gaussian (mean + full covariance); N unit vectors are drawn from it and
L2-normalised (inner product = cosine). Chunk ``c`` is drawn from its own seeded generator, so every
pass regenerates the same vectors and no pass holds more than one chunk besides the indexes.

Measured: IVF-Flat and IVF-SQ8 (one spherical k-means quantizer, trained on a sample, shared) with
``nprobe`` swept, HNSW with conba's production parameters (:mod:`conba.index.vectors.exact`) with
``efSearch`` swept; single-query latency p50 / p95 on one FAISS thread (what a server worker sees)
and on two, recall@10 against exact search (``IndexFlatIP`` over all N, merged chunk by chunk),
build / train time, bytes per vector (the serialised size), RSS. Queries: half held-out draws, half
perturbed copies of indexed vectors (cosine ~``--perturb-cos`` to their source, like a near clone).

A single Gaussian has no clusters: nearest-neighbour cosines are lower than between real embeddings
(real code has near duplicates), which makes held-out queries a hard case for ANN search.
"""

from __future__ import annotations

import argparse
import math
import resource
import time
from pathlib import Path
from typing import Any

import numpy as np

from conba.bench.probes import peak_rss_mb, rss_mb

K = 10


# ---------------------------------------------------------------------- data
def real_vectors(index_dir: str | Path) -> np.ndarray:
    """The distinct embeddings (n, d) float32 of an index, read from its SQLite ``vectors`` table."""
    import sqlite3

    path = Path(index_dir) / "index.sqlite"
    if not path.exists():
        raise SystemExit(f"{path}: no index database (--vectors-from must name a conba index folder)")
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = [np.frombuffer(b, dtype=np.float32) for (b,) in db.execute("SELECT vector FROM vectors")]
    finally:
        db.close()
    if len(rows) < 2:
        raise SystemExit(f"{path}: fewer than 2 vectors to fit a distribution to")
    return np.stack(rows)


class GaussianDraw:
    """Unit vectors drawn from N(mean, cov) fitted to real embeddings ``x`` (n, d), then normalised."""

    def __init__(self, x: np.ndarray, seed: int, chunk: int):
        self.dim = int(x.shape[1])
        self.mean = x.mean(0).astype(np.float32)
        w, v = np.linalg.eigh(np.cov(x.astype(np.float64), rowvar=False))
        self.factor = (v * np.sqrt(np.clip(w, 0, None))).astype(np.float32)  # cov = factor @ factor.T
        self.seed, self.chunk = seed, chunk

    def noise(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Centred draws (n, d), not normalised."""
        return rng.standard_normal((n, self.dim), dtype=np.float32) @ self.factor.T

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        x = self.mean + self.noise(rng, n)
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    def chunks(self, n: int, upto: int | None = None):
        """(start, vectors) for the indexed vectors 0..min(n, upto), chunk by chunk, always the same."""
        end = n if upto is None else min(n, upto)
        for start in range(0, end, self.chunk):
            rng = np.random.default_rng([self.seed, start // self.chunk])
            yield start, self.draw(rng, min(self.chunk, n - start))[: end - start]


def make_queries(gen: GaussianDraw, n: int, nq: int, perturb_cos: float) -> tuple[np.ndarray, float]:
    """Queries (nq, d): the first half held-out draws, the second perturbed copies of random indexed
    vectors (noise shaped like the data, scaled so the mean cosine to the source is ~perturb_cos);
    and the measured mean cosine of the perturbed ones to their sources."""
    rng = np.random.default_rng([gen.seed, 1 << 30])
    held = gen.draw(rng, nq - nq // 2)
    sources = np.sort(rng.choice(n, nq // 2, replace=False))
    picked = []
    for start, x in gen.chunks(n):
        rows = sources[(sources >= start) & (sources < start + len(x))] - start
        picked.append(x[rows])
    base = np.concatenate(picked)
    noise = gen.noise(rng, len(base))
    scale = math.sqrt(1 / perturb_cos**2 - 1) / math.sqrt(float(np.mean(np.sum(noise**2, axis=1))))
    pert = base + scale * noise
    pert /= np.linalg.norm(pert, axis=1, keepdims=True)
    cos = float(np.mean(np.sum(pert * base, axis=1)))
    return np.concatenate([held, pert]).astype(np.float32), cos


def exact_knn(gen: GaussianDraw, n: int, queries: np.ndarray, upto: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-K (scores, ids), each (nq, K), over indexed vectors 0..upto (IndexFlatIP per chunk, merged)."""
    import faiss

    heap = faiss.ResultHeap(len(queries), K, keep_max=True)
    for start, x in gen.chunks(n, upto):
        flat = faiss.IndexFlatIP(gen.dim)
        flat.add(x)
        scores, ids = flat.search(queries, min(K, len(x)))
        if ids.shape[1] < K:  # pad a tiny last chunk
            pad = K - ids.shape[1]
            scores = np.pad(scores, ((0, 0), (0, pad)), constant_values=-np.inf)
            ids = np.pad(ids, ((0, 0), (0, pad)), constant_values=-1)
        heap.add_result(scores, np.where(ids >= 0, ids + start, -1))
    heap.finalize()
    return heap.D, heap.I


# ---------------------------------------------------------------------- measuring
def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return round(r.ru_utime + r.ru_stime, 1)


def serialized_bytes(index: Any) -> int:
    """The size of the index file, counted while FAISS writes it (no copy held)."""
    import faiss

    total = 0

    def count(chunk: bytes) -> int:
        nonlocal total
        total += len(chunk)
        return len(chunk)

    faiss.write_index(index, faiss.PyCallbackIOWriter(count))
    return total


def pct(seconds: list[float], q: float) -> float:
    return round(float(np.percentile(np.array(seconds) * 1000, q)), 3)


def recall(found: np.ndarray, truth: np.ndarray) -> float:
    return round(float(np.mean([len(set(a) & set(b)) / K for a, b in zip(found, truth)])), 4)


def measure(index: Any, queries: np.ndarray, truth: np.ndarray, two_thread_queries: int) -> dict:
    """Single-query latency on 1 thread (all queries) and 2 threads (the first few), recall@10 overall
    and per query half (held-out / perturbed), batch throughput on 2 threads."""
    import faiss

    out: dict = {}
    for threads, qs in ((1, queries), (2, queries[:two_thread_queries])):
        faiss.omp_set_num_threads(threads)
        for q in qs[:5]:  # warm-up
            index.search(q[None], K)
        lat, found = [], []
        for q in qs:
            t0 = time.perf_counter()
            _, ids = index.search(q[None], K)
            lat.append(time.perf_counter() - t0)
            found.append(ids[0])
        out[f"p50_ms_{threads}t"], out[f"p95_ms_{threads}t"] = pct(lat, 50), pct(lat, 95)
        if threads == 1:
            half = len(queries) - len(queries) // 2
            found_arr = np.stack(found)
            out["recall_at_10"] = recall(found_arr, truth)
            out["recall_heldout"] = recall(found_arr[:half], truth[:half])
            out["recall_perturbed"] = recall(found_arr[half:], truth[half:])
    t0 = time.perf_counter()
    index.search(queries, K)
    out["batch_qps_2t"] = round(len(queries) / (time.perf_counter() - t0), 1)
    return out


# ---------------------------------------------------------------------- the synthetic phase
def flat_vs_hnsw(args: argparse.Namespace) -> dict:
    """FAISS flat vs HNSW (conba's own ``vectors.build``) on random unit vectors or real embeddings."""
    import faiss

    from conba.utils import ann as vec

    rng = np.random.default_rng(args.seed)
    if args.vectors_from:  # the real embeddings of an index (distinct contents)
        x = real_vectors(args.vectors_from)
        data = f"real embeddings from {args.vectors_from}"
    else:
        x = rng.standard_normal((args.synthetic, args.dim), dtype=np.float32)
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        data = "random unit vectors (no structure: worst case for HNSW)"
    n, d = x.shape
    nq = min(1000, n)
    queries = x[rng.choice(n, nq, replace=False)]
    ids = np.arange(n, dtype=np.int64)
    out: dict = {"vectors": n, "dim": d, "data": data,
                 "hnsw_params": {"M": vec.HNSW_M, "efConstruction": vec.HNSW_EF_CONSTRUCTION,
                                 "efSearch": vec.HNSW_EF_SEARCH}}
    exact = None
    for kind, above in (("flat", n + 1), ("hnsw", 0)):
        t0 = time.perf_counter()
        index, built = vec.build(ids, x, hnsw_above=above)
        build_s = time.perf_counter() - t0
        lat = []
        for q in queries[:200]:
            t0 = time.perf_counter()
            vec.search(index, q[None], 10)
            lat.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        _, nbrs = vec.search(index, queries, 11)  # the clones kNN graph: 10 neighbours + itself
        knn_qps = nq / (time.perf_counter() - t0)
        if exact is None:
            exact = nbrs
            recall = 1.0
        else:
            recall = float(np.mean([len(set(a[:10]) & set(b[:10])) / 10 for a, b in zip(nbrs, exact)]))
        size = len(faiss.serialize_index(index))
        out[kind] = {"kind": built, "build_s": round(build_s, 2), "build_vectors_per_s": round(n / build_s),
                     "query_p50_ms": pct(lat, 50), "query_p95_ms": pct(lat, 95),
                     "knn_graph_queries_per_s": round(knn_qps, 1), "recall_at_10_vs_flat": round(recall, 4),
                     "bytes_per_vector": round(size / n, 1)}
        print(f"{kind}: {out[kind]}", flush=True)
        del index
    out["peak_rss_mb"] = peak_rss_mb()
    return out


# ---------------------------------------------------------------------- the ann1m phase
def ann(args: argparse.Namespace) -> dict:
    import faiss
    from faiss.contrib.ivf_tools import add_preassigned

    from conba.utils import ann as vec

    if not args.vectors_from:
        raise SystemExit("--phase ann1m needs --vectors-from INDEX_DIR (the real embeddings to fit)")
    n, cpu0, wall0 = args.ann_vectors, cpu_s(), time.perf_counter()
    real = real_vectors(args.vectors_from)
    gen = GaussianDraw(real, args.seed, args.chunk)
    d = gen.dim
    faiss.omp_set_num_threads(args.build_threads)
    out: dict = {"vectors": n, "dim": d, "fitted_on": {"index": str(args.vectors_from), "vectors": len(real)},
                 "data": "Gaussian (mean + full covariance) fitted to real embeddings, L2-normalised",
                 "build_threads": args.build_threads, "k": K}

    t0 = time.perf_counter()
    queries, cos_src = make_queries(gen, n, args.ann_queries, args.perturb_cos)
    top, truth = exact_knn(gen, n, queries)
    half = len(queries) - len(queries) // 2
    sample = real[np.random.default_rng(args.seed).choice(len(real), min(500, len(real)), replace=False)]
    nn_real = np.sort(sample @ real.T, axis=1)[:, -2]  # the row itself is the top
    out["queries"] = {"n": len(queries), "heldout": half, "perturbed": len(queries) - half,
                      "perturbed_cos_to_source_mean": round(cos_src, 3),
                      "heldout_top1_cos_p50": round(float(np.median(top[:half, 0])), 3),
                      "heldout_top10_cos_p50": round(float(np.median(top[:half, -1])), 3),
                      "real_nn_cos_p50": round(float(np.median(nn_real)), 3),
                      "ground_truth": "exact IndexFlatIP over all vectors",
                      "seconds": round(time.perf_counter() - t0, 1)}
    print(f"queries + ground truth: {out['queries']}", flush=True)

    # IVF: one spherical k-means quantizer on the first `train` draws, shared by IVF-Flat and IVF-SQ8
    train = np.concatenate([x for _, x in gen.chunks(n, args.train)])
    quantizer = faiss.IndexFlatIP(d)
    ivf_flat = faiss.IndexIVFFlat(quantizer, d, args.nlist, faiss.METRIC_INNER_PRODUCT)
    ivf_flat.cp.spherical, ivf_flat.cp.niter = True, args.kmeans_iter
    t0 = time.perf_counter()
    ivf_flat.train(train)
    train_s = time.perf_counter() - t0
    ivf_sq = faiss.IndexIVFScalarQuantizer(quantizer, d, args.nlist, faiss.ScalarQuantizer.QT_8bit,
                                           faiss.METRIC_INNER_PRODUCT)
    t0 = time.perf_counter()
    ivf_sq.train(train)  # the quantizer is trained: only the 8-bit ranges (on residuals)
    sq_train_s = time.perf_counter() - t0
    del train
    hnsw = faiss.IndexHNSWFlat(d, vec.HNSW_M, faiss.METRIC_INNER_PRODUCT)
    hnsw.hnsw.efConstruction = vec.HNSW_EF_CONSTRUCTION
    timing = {"assign": 0.0, "ivf_flat": 0.0, "ivf_sq8": 0.0, "hnsw": 0.0}
    hnsw_cpu = 0.0
    hnsw_note, hnsw_on, probed = "built over all vectors", True, False
    for start, x in gen.chunks(n):
        t0 = time.perf_counter()
        _, assign = quantizer.search(x, 1)
        timing["assign"] += time.perf_counter() - t0
        ids = np.arange(start, start + len(x), dtype=np.int64)
        for name, index in (("ivf_flat", ivf_flat), ("ivf_sq8", ivf_sq)):
            t0 = time.perf_counter()
            add_preassigned(index, x, assign.ravel(), ids)
            timing[name] += time.perf_counter() - t0
        if hnsw_on:
            t0, c0 = time.perf_counter(), cpu_s()
            hnsw.add(x)
            timing["hnsw"] += time.perf_counter() - t0
            hnsw_cpu += cpu_s() - c0
            m = hnsw.ntotal
            if m >= args.hnsw_probe and m < n and not probed:
                probed, grow = True, (n / m) * (math.log(n) / math.log(m))
                out["hnsw_build_estimate"] = {"at": m, "wall_s": round(timing["hnsw"] * grow),
                                              "cpu_s": round(hnsw_cpu * grow), "rule": "x n/m x log n/log m"}
                if hnsw_cpu * grow >= args.hnsw_max_build_cpu_s:  # 0: always stop at the probe
                    hnsw_on = False
                    hnsw_note = (f"stopped at {m} vectors: {hnsw_cpu:.0f} CPU s so far extrapolate to "
                                 f"~{hnsw_cpu * grow:.0f} for {n} >= {args.hnsw_max_build_cpu_s}")
                    print(hnsw_note, flush=True)
        print(f"  built {start + len(x)}/{n}  {({k: round(v) for k, v in timing.items()})}  rss {rss_mb()} MB",
              flush=True)
    out["rss_mb_all_built"] = rss_mb()

    rows = []
    for name, index, build_s in ((f"IVF{args.nlist},Flat", ivf_flat, train_s + timing["assign"] + timing["ivf_flat"]),
                                 (f"IVF{args.nlist},SQ8", ivf_sq, train_s + sq_train_s + timing["assign"]
                                  + timing["ivf_sq8"])):
        size = serialized_bytes(index)
        for nprobe in args.nprobe:
            index.nprobe = nprobe
            row = {"index": name, "param": f"nprobe={nprobe}", "vectors": n, **measure(index, queries, truth,
                   args.two_thread_queries), "build_s": round(build_s, 1), "bytes_per_vector": round(size / n, 1)}
            rows.append(row)
            print(row, flush=True)
    del ivf_flat, ivf_sq
    m = hnsw.ntotal
    hnsw_truth = truth if m == n else exact_knn(gen, n, queries, upto=m)[1]
    size = serialized_bytes(hnsw)
    for ef in args.ef_search:
        hnsw.hnsw.efSearch = ef
        row = {"index": f"HNSW{vec.HNSW_M},efC={vec.HNSW_EF_CONSTRUCTION}", "param": f"efSearch={ef}"
               + (" (production)" if ef == vec.HNSW_EF_SEARCH else ""), "vectors": m,
               **measure(hnsw, queries, hnsw_truth, args.two_thread_queries), "build_s": round(timing["hnsw"], 1),
               "bytes_per_vector": round(size / m, 1)}
        rows.append(row)
        print(row, flush=True)
    out.update({"ivf": {"nlist": args.nlist, "train_vectors": args.train, "kmeans_iter": args.kmeans_iter,
                        "kmeans_train_s": round(train_s, 1), "sq8_train_s": round(sq_train_s, 1),
                        "assign_s": round(timing["assign"], 1)},
                "hnsw": {"M": vec.HNSW_M, "efConstruction": vec.HNSW_EF_CONSTRUCTION, "vectors": m,
                         "build_s": round(timing["hnsw"], 1), "build_cpu_s": round(hnsw_cpu, 1),
                         "note": hnsw_note},
                "rows": rows, "target_p50_ms": args.target_ms,
                "meets_target_1t": [f"{r['index']} {r['param']}: p50 {r['p50_ms_1t']} ms, recall@10 "
                                    f"{r['recall_at_10']}" for r in rows if r["p50_ms_1t"] <= args.target_ms],
                "peak_rss_mb": peak_rss_mb(),
                "cpu_s": round(cpu_s() - cpu0, 1), "wall_s": round(time.perf_counter() - wall0, 1)})
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("ann1m phase (FAISS at scale on vectors drawn like --vectors-from's)")
    g.add_argument("--ann-vectors", type=int, default=1_000_000, help="vectors to index")
    g.add_argument("--ann-queries", type=int, default=500, help="queries (half held-out, half perturbed copies)")
    g.add_argument("--two-thread-queries", type=int, default=100, help="of them, timed again on 2 threads")
    g.add_argument("--perturb-cos", type=float, default=0.9, help="mean cosine of a perturbed query to its source")
    g.add_argument("--chunk", type=int, default=50_000, help="vectors drawn (and added) at a time")
    g.add_argument("--nlist", type=int, default=4096, help="IVF lists")
    g.add_argument("--train", type=int, default=150_000, help="k-means training vectors")
    g.add_argument("--kmeans-iter", type=int, default=10)
    g.add_argument("--nprobe", type=int, nargs="+", default=[8, 16, 32, 64, 128])
    g.add_argument("--ef-search", type=int, nargs="+", default=[32, 64, 128, 256])
    g.add_argument("--hnsw-probe", type=int, default=100_000,
                   help="HNSW vectors after which its full build time is extrapolated")
    g.add_argument("--hnsw-max-build-cpu-s", type=float, default=900,
                   help="stop HNSW at the probe size when its extrapolated build takes more CPU seconds (then "
                        "its rows are measured at that size)")
    g.add_argument("--build-threads", type=int, default=2, help="FAISS threads for training and building")
    g.add_argument("--target-ms", type=float, default=10.0, help="p50 single-query target")
