"""conba's large-index vector structure (IVF-SQ8 + exact re-rank, :mod:`conba.index.vectors.ivf`) at 1M,
through the production code path: a real conba index folder (SQLite units + vectors) of N functions.

Vectors: the real embeddings in ``--real DIR`` (``chunk-*.npy``: default-fast + ONNX encodings of
functions from installed packages) plus a synthetic pad drawn from a Gaussian mixture fitted to them
(k-means centres, one tied residual covariance scaled per component), L2-normalised. Queries: half
held-out real vectors (never indexed), half perturbed copies of indexed vectors (cosine ~0.9 to their
source). Truth: exact top-10 by ``IndexFlatIP`` over all N.

Phases (separate processes: each its own peak memory; results merged into OUT/results.json):

* ``data``    vectors (OUT/base.f32, memmap), queries, truth;
* ``db``      the index folder: N units in SQLite (50 per file), their vectors; no FAISS file yet;
* ``build``   ``Index.finalize`` = what the end of ``conba index`` runs: the IVF build from SQLite;
* ``query``   load the index like ``conba search`` does, then nprobe x rerank sweep: single-query latency
              on one thread (p50 / p95), recall@10, RSS;
* ``update``  200 files change (10k functions: new units, new vectors; stored the way ``scan`` and the
              encoder store them), then ``Index.finalize`` again (in place); recall after.

Example (dev machine)::

    nice -n 15 conba bench ivf --phase all --real runs/w6/real --out runs/w6/bench
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from conba.utils.io import write_npy_atomic, write_text_atomic
from conba_research.bench.ivf_data import K, data, exact, realcheck

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
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    data[key] = dict(result, loadavg=os.getloadavg(), date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                     machine="dev machine, 2 cores SHARED with 6 other workers' jobs (load average 8-15)")
    write_text_atomic(path, json.dumps(data, indent=1))
    print(key, json.dumps(result, indent=1), flush=True)


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
    from conba.index.storage.store import Store

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
    with idx.write_lock():
        t0 = time.perf_counter()
        idx.finalize()
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
    next_id = len(order) + 1
    for changed in _changed_files(args.out):  # each update round re-inserted its rows in this order
        rows = np.load(changed)
        uid[rows] = next_id + np.arange(len(rows))
        next_id += len(rows)
    return uid[truth_rows]


def _changed_files(out: Path) -> list[Path]:
    rounds = sorted(out.glob("changed-*.npy"), key=lambda p: int(p.stem.split("-")[1]))
    return [p for p in [out / "changed.npy", *rounds] if p.exists()]


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
            times, cpu, found = [], [], []
            for q in queries:
                t, c = time.perf_counter(), time.thread_time()
                _, ids = vec.search(searcher, q[None], K)
                cpu.append(time.thread_time() - c)
                times.append(time.perf_counter() - t)
                found.append(ids[0])
            found = np.array(found)
            write_npy_atomic(args.out / f"latency-{args.phase}-{args.tag}-{nprobe}-{rerank}.npy", np.array(times))
            write_npy_atomic(args.out / f"cpu-{args.phase}-{args.tag}-{nprobe}-{rerank}.npy", np.array(cpu))
            rec = np.array([len(set(f) & set(t)) / K for f, t in zip(found, truth)])
            row = {"nprobe": nprobe, "rerank": rerank, "p50_ms": round(float(np.percentile(times, 50)) * 1e3, 2),
                   "p95_ms": round(float(np.percentile(times, 95)) * 1e3, 2),
                   "cpu_p50_ms": round(float(np.percentile(cpu, 50)) * 1e3, 2),
                   "cpu_p95_ms": round(float(np.percentile(cpu, 95)) * 1e3, 2),
                   "recall@10": round(float(rec.mean()), 4),
                   "recall_held_out_real": round(float(rec[:half].mean()), 4),
                   "recall_perturbed": round(float(rec[half:].mean()), 4)}
            print(row, flush=True)
            rows.append(row)
    return rows


def query(args: argparse.Namespace, tag: str = "query") -> dict:
    import faiss  # noqa: F401  (imported before the RSS baseline)

    from conba.index import Index

    queries = np.load(args.out / "queries.npy")
    truth_file = args.out / ("truth-updated.npy" if (args.out / "changed.npy").exists() else "truth.npy")  # the index's
    truth = _truth_ids(args, np.load(truth_file))
    before = rss_mb()
    idx = Index(args.out / "index")
    t0 = time.perf_counter()
    searcher = idx.vector_store()
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

    from conba.index.vectors import ivf as ann_ivf

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
    rng = np.random.default_rng(args.seed + 6 + args.round)  # round 1: seed + 7
    picked = np.sort(rng.choice(files, args.changed_files, replace=False))
    store = _open_store(args.out / "index")
    store.set_meta(state="building")
    t0 = time.perf_counter()
    items = []
    for f in picked:
        items += _file_items(order, range(f, f + 1), args.round)
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
    name = "changed.npy" if args.round == 1 else f"changed-{args.round}.npy"
    write_npy_atomic(args.out / name, np.concatenate([order[f * PER_FILE:(f + 1) * PER_FILE] for f in picked]))
    manifest, seconds = _finalize(args.out / "index", args.ivf_above)
    truth = exact(np.load(args.out / "base.npy", mmap_mode="r"), np.load(args.out / "queries.npy"))
    write_npy_atomic(args.out / "truth-updated.npy", truth)
    return {"changed_files": int(len(picked)), "changed_functions": len(items) * PER_FILE,
            "store_units_s": round(t1 - t0, 2), "store_vectors_s": round(t2 - t1, 2),
            "finalize_s": round(seconds, 2), "total_s_excluding_encoding": round(t2 - t0 + seconds, 2),
            "ann_run": manifest.get("ann_run"), "generation": manifest["ann"]["generation"], "peak_rss_mb": peak_mb()}


def _without_phase(argv: list[str]) -> list[str]:
    """The arguments besides ``--phase all`` (``--phase=all`` too), handed to each phase's process."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--phase":
            skip = True
        elif not a.startswith("--phase="):
            out.append(a)
    return out


PHASES = {"data": data, "db": db, "build": build, "query": query, "update": update, "variant": variant,
          "realcheck": realcheck}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--phase", choices=[*PHASES, "all"], required=True)
    p.add_argument("--real", default="runs/w6/real", help="folder of chunk-*.npy real embeddings")
    p.add_argument("--out", type=Path, default=Path("runs/w6/bench"))
    p.add_argument("-n", type=int, default=1_000_000)
    p.add_argument("--queries", type=int, default=500)
    p.add_argument("--components", type=int, default=256)
    p.add_argument("--changed-files", type=int, default=200)
    p.add_argument("--round", type=int, default=1, help="update: the how-manyth update of the index (other files)")
    p.add_argument("--nprobe", type=int, nargs="+", default=[16, 32, 64, 128])
    p.add_argument("--rerank", type=int, nargs="+", default=[32, 64, 128])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ivf-above", type=int, default=200_000, help="Index(ivf_above=...): smaller for a smoke test")
    p.add_argument("--nlists", type=int, nargs="*", default=[512, 1024], help="realcheck: list counts besides conba's")
    p.add_argument("--codes", default="PQ96x4fs", help="variant phase: FAISS factory code of the list vectors")
    p.add_argument("--tag", default="query", help="results key of the query phase")
    argv = sys.argv[1:]
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.phase == "all":
        import subprocess

        rest = _without_phase(argv)
        for phase in ["data", "db", "build", "query", "update", "query-after-update"]:
            name = "query" if phase == "query-after-update" else phase
            cmd = [sys.executable, "-m", "conba_research.bench.ivf", "--phase", name, *rest]
            if phase == "query-after-update":
                cmd += ["--tag", phase]
            subprocess.run(cmd, check=True)
        return
    result = PHASES[args.phase](args) if args.phase != "query" else query(args, args.tag)
    key = {"query": args.tag, "variant": f"variant-{args.codes}",
           "update": "update" if args.round == 1 else f"update-{args.round}"}.get(args.phase, args.phase)
    save(args.out, key, dict(result, n=args.n))


if __name__ == "__main__":
    main()
