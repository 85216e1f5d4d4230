"""conba's large-index vector structure (IVF-SQ8 + exact re-rank, :mod:`conba.index.ann_ivf`) at 1M,
through the production code path: a real conba index folder (SQLite units + vectors) of N functions.

Vectors: the real embeddings in ``--real DIR`` (``chunk-*.npy``: default-fast + ONNX encodings of
functions from installed packages) plus a synthetic pad drawn from a Gaussian mixture fitted to them
(k-means centres, one tied residual covariance scaled per component), L2-normalised. Queries: half
held-out real vectors (never indexed), half perturbed copies of indexed vectors (cosine ~0.9 to their
source). Truth: exact top-10 by ``IndexFlatIP`` over all N.

Phases (separate processes: each its own peak memory; results merged into OUT/results.json):

* ``data``    vectors (OUT/base.f32, memmap), queries, truth;
* ``db``      the index folder: N units in SQLite (50 per file), their vectors; no FAISS file yet;
* ``build``   ``Index._finalize`` = what the end of ``conba index`` runs: the IVF build from SQLite;
* ``query``   load the index like ``conba search`` does, then nprobe x rerank sweep: single-query latency
              on one thread (p50 / p95), recall@10, RSS;
* ``update``  200 files change (10k functions: new units, new vectors; stored the way ``scan`` and the
              encoder store them), then ``Index._finalize`` again (in place); recall after.

Example (dev machine)::

    nice -n 15 python scripts/bench_ivf.py --phase all --real /tmp/w6/real --out /tmp/w6/bench
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

K = 10
PER_FILE = 50


def rss_mb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024)
    return -1


def peak_mb() -> int:
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def save(out: Path, key: str, result: dict) -> None:
    path = out / "results.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data[key] = dict(result, loadavg=os.getloadavg(), date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                     machine="dev machine, 2 cores SHARED with 6 other workers' jobs (load average 8-15)")
    path.write_text(json.dumps(data, indent=1))
    print(key, json.dumps(result, indent=1), flush=True)


# ---------------------------------------------------------------------- data
class Mixture:
    """Unit vectors from a Gaussian mixture fitted to real ones ``x`` (m, d): k-means centres, one tied
    residual covariance, each component's noise scaled by its own residual spread."""

    def __init__(self, x: np.ndarray, components: int, seed: int):
        import faiss

        km = faiss.Kmeans(x.shape[1], components, niter=20, seed=seed, spherical=False)
        km.train(x)
        _, assign = km.index.search(x, 1)
        assign = assign[:, 0]
        resid = x - km.centroids[assign]
        self.centres = km.centroids.astype(np.float32)
        sizes = np.bincount(assign, minlength=components).astype(np.float64)
        self.prob = sizes / sizes.sum()
        spread = np.array([np.mean(np.sum(resid[assign == c] ** 2, 1)) if sizes[c] > 1 else 0.0
                           for c in range(components)])
        pooled = float(np.mean(np.sum(resid**2, 1)))
        self.scale = np.sqrt(np.where(spread > 0, spread, pooled) / pooled).astype(np.float32)
        w, v = np.linalg.eigh(np.cov(resid.astype(np.float64), rowvar=False))
        self.factor = (v * np.sqrt(np.clip(w, 0, None))).astype(np.float32)
        self.dim = x.shape[1]

    alpha = 1.0  # noise multiplier, calibrated by :meth:`calibrate`

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        c = rng.choice(len(self.centres), size=n, p=self.prob)
        noise = rng.standard_normal((n, self.dim), dtype=np.float32) @ self.factor.T
        y = self.centres[c] + self.alpha * self.scale[c, None] * noise
        return y / np.linalg.norm(y, axis=1, keepdims=True)


def calibrate(mix: Mixture, real: np.ndarray) -> list[tuple[float, float]]:
    """Set ``mix.alpha`` so that as many draws as there are real vectors have the real vectors' median
    nearest-neighbour cosine (a fitted mixture's noise blurs the clusters; this undoes it). Returns the
    (alpha, median) tried."""
    target, m = nn_cos(real), min(len(real), 20_000)
    tried = []
    for alpha in (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4):
        mix.alpha = alpha
        tried.append((alpha, round(nn_cos(mix.draw(np.random.default_rng(5), m)), 4)))
    mix.alpha = min(tried, key=lambda t: abs(t[1] - target))[0]
    return tried


def nn_cos(x: np.ndarray, sample: int = 2000) -> float:
    """Median cosine of a vector to its nearest other vector (first ``sample`` vectors vs all)."""
    s = x[:sample] @ x.T
    np.fill_diagonal(s[:, :sample], -1)
    return float(np.median(s.max(1)))


def data(args: argparse.Namespace) -> dict:
    import faiss

    files = sorted(Path(args.real).glob("chunk-*.npy"))
    real = np.concatenate([np.load(f) for f in files]).astype(np.float32)
    real = real[np.unique(real.round(5), axis=0, return_index=True)[1]]  # distinct contents only
    rng = np.random.default_rng(args.seed)
    real = real[rng.permutation(len(real))]
    held, real = real[: args.queries // 2], real[args.queries // 2:]
    mix = Mixture(real, args.components, args.seed)
    tried = calibrate(mix, real[:20_000])
    n = args.n
    base = np.lib.format.open_memmap(args.out / "base.npy", mode="w+", dtype=np.float32, shape=(n, real.shape[1]))
    base[: len(real)] = real
    for s in range(len(real), n, 100_000):
        e = min(n, s + 100_000)
        base[s:e] = mix.draw(np.random.default_rng([args.seed, s]), e - s)
    base.flush()
    order = np.random.default_rng(args.seed + 1).permutation(n)  # real and synthetic interleaved in the files
    np.save(args.out / "order.npy", order)
    src = rng.choice(n, args.queries - len(held), replace=False)
    noise = rng.standard_normal((len(src), real.shape[1]), dtype=np.float32) @ mix.factor.T
    noise *= np.sqrt(1 / 0.9**2 - 1) / np.sqrt(np.mean(np.sum(noise**2, 1)))
    pert = base[np.sort(src)] + noise
    queries = np.concatenate([held, pert / np.linalg.norm(pert, axis=1, keepdims=True)]).astype(np.float32)
    np.save(args.out / "queries.npy", queries)
    truth = exact(base, queries)
    np.save(args.out / "truth.npy", truth)
    synth = mix.draw(np.random.default_rng(99), min(len(real), 20_000))
    faiss.omp_set_num_threads(2)
    return {"n": n, "real": int(len(real)), "synthetic": int(n - len(real)), "held_out_real_queries": len(held),
            "perturbed_queries": int(len(src)), "components": args.components,
            "nn_cos_median_real": round(nn_cos(real[:20_000]), 4), "alpha": mix.alpha, "alpha_tried": tried,
            "nn_cos_median_synthetic_same_count": round(nn_cos(synth), 4), "real_files": len(files)}


def exact(base: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Exact top-K rows (nq, K) over ``base`` (n, d), chunk by chunk."""
    import faiss

    heap = faiss.ResultHeap(len(queries), K, keep_max=True)
    for s in range(0, len(base), 200_000):
        flat = faiss.IndexFlatIP(base.shape[1])
        flat.add(np.ascontiguousarray(base[s:s + 200_000]))
        d, i = flat.search(queries, K)
        heap.add_result(d, i + s)
    heap.finalize()
    return heap.I


# ---------------------------------------------------------------------- index folder
def _units(rows: np.ndarray, version: int):
    from conba.source.records import Unit

    for r in rows.tolist():
        code = f"def f{r}(x):\n    return x * {r} + {version}\n"
        yield Unit(file="", qualname=f"f{r}", language="python", start_line=1, end_line=2, code=code)


def _file_items(order: np.ndarray, files: range, version: int) -> list:
    items = []
    for f in files:
        rows = order[f * PER_FILE:(f + 1) * PER_FILE]
        units = list(_units(rows, version))
        for u in units:
            u.file = f"/bench/pkg/m{f}.py"
        items.append((f"/bench/pkg/m{f}.py", "python", 1000 + version, version, units))
    return items


def _open_store(folder: Path):
    from conba.index.store import Store

    return Store(folder / "index.sqlite")


def db(args: argparse.Namespace) -> dict:
    base = np.load(args.out / "base.npy", mmap_mode="r")
    order = np.load(args.out / "order.npy")
    folder = args.out / "index"
    if folder.exists():
        raise SystemExit(f"{folder}: exists; remove it to rebuild the database")
    folder.mkdir()
    store = _open_store(folder)
    store.set_meta(dim=str(base.shape[1]), fingerprint="bench-ivf", model="bench (vectors given)", view="raw",
                   engine="onnx", lexical_weight="0", state="building")
    t0 = time.perf_counter()
    files = len(order) // PER_FILE
    for s in range(0, files, 200):
        items = _file_items(order, range(s, min(files, s + 200)), 0)
        store.replace_files(items)
        rows = np.concatenate([order[f * PER_FILE:(f + 1) * PER_FILE] for f in range(s, min(files, s + 200))])
        store.add_vectors([u.hash for it in items for u in it[4]], base[np.sort(rows)][np.argsort(np.argsort(rows))])
    store.close()
    return {"units": int(files * PER_FILE), "files": files, "seconds": round(time.perf_counter() - t0, 1),
            "sqlite_mb": round((folder / "index.sqlite").stat().st_size / 2**20)}


def _finalize(folder: Path, ivf_above: int) -> tuple[dict, float]:
    from conba.index import Index

    idx = Index(folder, ivf_above=ivf_above)
    idx._lock.acquire()
    t0 = time.perf_counter()
    idx._finalize()
    seconds = time.perf_counter() - t0
    manifest = idx.manifest()
    idx.close()
    return manifest, seconds


def build(args: argparse.Namespace) -> dict:
    manifest, seconds = _finalize(args.out / "index", args.ivf_above)
    return {"finalize_seconds": round(seconds, 1), "ann": manifest.get("ann"), "ann_run": manifest.get("ann_run"),
            "kind": manifest["kind"], "peak_rss_mb": peak_mb(),
            "files_mb": {p.name: round(p.stat().st_size / 2**20) for p in (args.out / "index" / "ann").iterdir()}}


def _truth_ids(args: argparse.Namespace, truth_rows: np.ndarray) -> np.ndarray:
    """Unit ids of base rows: unit id = position in ``order`` + 1 (AUTOINCREMENT, inserted in order);
    rows changed by ``update`` were re-inserted after all others."""
    order = np.load(args.out / "order.npy")
    uid = np.empty(len(order), dtype=np.int64)
    uid[order] = np.arange(1, len(order) + 1)
    changed = args.out / "changed.npy"
    if changed.exists():
        rows = np.load(changed)
        uid[rows] = len(order) + 1 + np.arange(len(rows))
    return uid[truth_rows]


def sweep(searcher, queries: np.ndarray, truth: np.ndarray, args: argparse.Namespace) -> list[dict]:
    """nprobe x rerank: single-query latency on one thread (p50 / p95) and recall@10 vs ``truth`` ids."""
    import faiss

    from conba.utils import ann as vec

    faiss.omp_set_num_threads(1)
    half = len(queries) // 2
    rows = []
    for nprobe in args.nprobe:
        for rerank in args.rerank:
            searcher.ivf.nprobe, searcher.rerank = nprobe, rerank
            for q in queries[:5]:
                vec.search(searcher, q[None], K)
            times, found = [], []
            for q in queries:
                t = time.perf_counter()
                _, ids = vec.search(searcher, q[None], K)
                times.append(time.perf_counter() - t)
                found.append(ids[0])
            found = np.array(found)
            rec = np.array([len(set(f) & set(t)) / K for f, t in zip(found, truth)])
            row = {"nprobe": nprobe, "rerank": rerank, "p50_ms": round(float(np.percentile(times, 50)) * 1e3, 2),
                   "p95_ms": round(float(np.percentile(times, 95)) * 1e3, 2), "recall@10": round(float(rec.mean()), 4),
                   "recall_held_out_real": round(float(rec[:half].mean()), 4),
                   "recall_perturbed": round(float(rec[half:].mean()), 4)}
            print(row, flush=True)
            rows.append(row)
    return rows


def query(args: argparse.Namespace, tag: str = "query") -> dict:
    import faiss  # noqa: F401  (imported before the RSS baseline)

    from conba.index import Index

    queries = np.load(args.out / "queries.npy")
    truth_file = args.out / ("truth-updated.npy" if tag == "query-after-update" else "truth.npy")
    truth = _truth_ids(args, np.load(truth_file))
    before = rss_mb()
    idx = Index(args.out / "index")
    t0 = time.perf_counter()
    searcher = idx._vectors()
    load_s = time.perf_counter() - t0
    loaded = rss_mb()
    rows = sweep(searcher, queries, truth, args)
    idx.close()
    return {"rows": rows, "load_seconds": round(load_s, 2), "rss_before_load_mb": before, "rss_loaded_mb": loaded,
            "rss_after_queries_mb": rss_mb(), "index_ram_mb": rss_mb() - before, "queries": len(queries)}


def variant(args: argparse.Namespace) -> dict:
    """Other codes (``--codes``, e.g. PQ96x4fs) in the same lists (the production structure's coarse
    quantizer), over the same float16 rows: the structure choice."""
    import json as _json

    from conba.index import ann_ivf

    folder = args.out / "index"
    manifest = _json.loads((folder / "manifest.json").read_text())
    ann = manifest["ann"]
    prod, rows, ids = ann_ivf.load_parts(folder, ann, int(manifest["dim"]))
    t0 = time.perf_counter()
    pick = np.sort(np.random.default_rng(0).choice(len(rows), min(len(rows), ann["trained_on"]), replace=False))
    ivf = ann_ivf.train(np.asarray(rows[pick], dtype=np.float32), rows.shape[1], ann["nlist"], args.codes,
                        quantizer=prod.quantizer)
    t1 = time.perf_counter()
    for s in range(0, len(rows), ann_ivf.ADD_CHUNK):
        block = np.asarray(rows[s:s + ann_ivf.ADD_CHUNK], dtype=np.float32)
        keep = ids[s:s + len(block)] >= 0
        ivf.add_with_ids(block[keep], np.arange(s, s + len(block), dtype=np.int64)[keep])
    t2 = time.perf_counter()
    del prod
    searcher = ann_ivf.IVFSearcher(ivf, rows, ids)
    tag = "query-after-update" if (args.out / "changed.npy").exists() else "query"
    truth = _truth_ids(args, np.load(args.out / ("truth-updated.npy" if tag != "query" else "truth.npy")))
    return {"codes": args.codes, "train_s": round(t1 - t0, 1), "add_s": round(t2 - t1, 1),
            "ivf_mb": round(ann_ivf.faiss_module().serialize_index(ivf).nbytes / 2**20),
            "rows": sweep(searcher, np.load(args.out / "queries.npy"), truth, args)}


def update(args: argparse.Namespace) -> dict:
    """200 files change: their 10k functions get new code (new units) and new vectors."""
    base = np.load(args.out / "base.npy", mmap_mode="r+")
    order = np.load(args.out / "order.npy")
    files = len(order) // PER_FILE
    rng = np.random.default_rng(args.seed + 7)
    picked = np.sort(rng.choice(files, args.changed_files, replace=False))
    store = _open_store(args.out / "index")
    store.set_meta(state="building")
    t0 = time.perf_counter()
    items = []
    for f in picked:
        items += _file_items(order, range(f, f + 1), 1)
    store.replace_files(items)  # what scan writes for the changed files
    t1 = time.perf_counter()
    rows = np.concatenate([order[f * PER_FILE:(f + 1) * PER_FILE] for f in picked])
    # a changed function: its old vector moved a little (cosine ~0.95), like an edit
    old = np.asarray(base[np.sort(rows)])
    noise = rng.standard_normal(old.shape, dtype=np.float32)
    noise *= np.sqrt(1 / 0.95**2 - 1) / np.sqrt(old.shape[1])
    new = old + noise
    new /= np.linalg.norm(new, axis=1, keepdims=True)
    base[np.sort(rows)] = new
    base.flush()
    by_row = {int(r): i for i, r in enumerate(np.sort(rows))}
    store.add_vectors([u.hash for it in items for u in it[4]],
                      np.stack([new[by_row[int(r)]] for f in picked for r in order[f * PER_FILE:(f + 1) * PER_FILE]]))
    t2 = time.perf_counter()
    store.close()
    np.save(args.out / "changed.npy", np.concatenate([order[f * PER_FILE:(f + 1) * PER_FILE] for f in picked]))
    manifest, seconds = _finalize(args.out / "index", args.ivf_above)
    truth = exact(np.load(args.out / "base.npy", mmap_mode="r"), np.load(args.out / "queries.npy"))
    np.save(args.out / "truth-updated.npy", truth)
    return {"changed_files": int(len(picked)), "changed_functions": len(items) * PER_FILE,
            "store_units_s": round(t1 - t0, 2), "store_vectors_s": round(t2 - t1, 2),
            "finalize_s": round(seconds, 2), "total_s_excluding_encoding": round(t2 - t0 + seconds, 2),
            "ann_run": manifest.get("ann_run"), "generation": manifest["ann"]["generation"], "peak_rss_mb": peak_mb()}


PHASES = {"data": data, "db": db, "build": build, "query": query, "update": update, "variant": variant}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--phase", choices=[*PHASES, "all"], required=True)
    p.add_argument("--real", default="/tmp/w6/real", help="folder of chunk-*.npy real embeddings")
    p.add_argument("--out", type=Path, default=Path("/tmp/w6/bench"))
    p.add_argument("-n", type=int, default=1_000_000)
    p.add_argument("--queries", type=int, default=500)
    p.add_argument("--components", type=int, default=256)
    p.add_argument("--changed-files", type=int, default=200)
    p.add_argument("--nprobe", type=int, nargs="+", default=[16, 32, 64, 128])
    p.add_argument("--rerank", type=int, nargs="+", default=[32, 64, 128])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ivf-above", type=int, default=200_000, help="Index(ivf_above=...): smaller for a smoke test")
    p.add_argument("--codes", default="PQ96x4fs", help="variant phase: FAISS factory code of the list vectors")
    p.add_argument("--tag", default="query", help="results key of the query phase")
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.phase == "all":
        import subprocess
        import sys

        for phase in ["data", "db", "build", "query", "update", "query-after-update"]:
            name = "query" if phase == "query-after-update" else phase
            cmd = [sys.executable, __file__, "--phase", name, *sys.argv[3:]]
            if phase == "query-after-update":
                cmd += ["--tag", phase]
            subprocess.run(cmd, check=True)
        return
    result = PHASES[args.phase](args) if args.phase != "query" else query(args, args.tag)
    key = {"query": args.tag, "variant": f"variant-{args.codes}"}.get(args.phase, args.phase)
    save(args.out, key, dict(result, n=args.n))


if __name__ == "__main__":
    main()
