"""Real code in conba's IVF structure (:mod:`conba.index.vectors.ivf`): how recall on real embeddings moves with
the number of vectors and the lists probed, and the 1M index padded with the synthetic draw, without SQLite.

* ``realscale``: the real vectors of ``--real`` (chunk-*.npy of ``conba bench ivf-encode``), 250 held out as
  queries; for growing subsets n of the rest (and as many mixture draws, :class:`conba_research.bench.ivf_data.Mixture`)
  an IVF-SQ8 + re-rank index with conba's list rule (:func:`nlist_for`) and with 4·√n lists (the rule
  before the training-size cap, what 1M gets), probing an absolute number of lists: recall@10 vs exact.
* ``padded``: the vectors of ``conba bench ivf --phase data`` (all real ones first, then the synthetic pad),
  the structure built by :func:`conba.index.vectors.ivf.build` (the production build, vectors from the array
  instead of SQLite), an nprobe sweep: recall@10 split into held-out real and perturbed queries, and for the
  real queries the recall of their real true neighbours alone; single-query latency on one thread.

Example (dev machine)::

    nice -n 19 conba bench ivf-real --phase realscale --real runs/wd/real --out runs/wd/bench
    nice -n 19 conba bench ivf --phase data --real runs/wd/real --out runs/wd/bench
    nice -n 19 conba bench ivf-real --phase padded --out runs/wd/bench --nprobe 32 64 128 256
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from conba.utils.io import write_text_atomic
from conba_research.bench.ivf_data import K, Mixture, calibrate, nn_cos


def real_vectors(folder: str | Path, seed: int) -> np.ndarray:
    """The distinct real embeddings (m, d) of ``folder``'s chunks, shuffled by ``seed`` (as ``ivf --phase data``)."""
    files = sorted(Path(folder).glob("chunk-*.npy"))
    if not files:
        raise SystemExit(f"{folder}: no chunk-*.npy (run `conba bench ivf-encode` first)")
    real = np.concatenate([np.load(f) for f in files]).astype(np.float32)
    real = real[np.unique(real.round(5), axis=0, return_index=True)[1]]
    return real[np.random.default_rng(seed).permutation(len(real))]


def recall(found: np.ndarray, truth: np.ndarray) -> float:
    return round(float(np.mean([len(set(f) & set(t)) / K for f, t in zip(found, truth)])), 4)


def _index(base: np.ndarray, nlist: int, folder: Path):
    from conba.index.vectors import ivf as ann_ivf

    ann = ann_ivf.build(folder, lambda: iter([(np.arange(len(base)), base)]), len(base), base.shape[1], 0, nlist=nlist)
    return ann_ivf.load(folder, ann, base.shape[1])


def _single_queries(searcher, queries: np.ndarray) -> tuple[np.ndarray, list[float]]:
    """Each query alone (one thread, as a server worker searches): found ids (b, K) and seconds per query."""
    found, times = [], []
    for q in queries:
        t = time.perf_counter()
        found.append(searcher.search(q[None], K)[1][0])
        times.append(time.perf_counter() - t)
    return np.array(found), times


def realscale(args: argparse.Namespace) -> dict:
    import faiss

    from conba.index.vectors.ivf import nlist_for

    faiss.omp_set_num_threads(1)
    real = real_vectors(args.real, args.seed)
    queries, pool = real[:250], real[250:]
    mix = Mixture(pool, args.components, args.seed)
    calibrate(mix, pool[:20_000])
    synth = mix.draw(np.random.default_rng(3), len(pool) + 250)
    sizes = sorted({min(len(pool), max(args.min_size, len(pool) >> s)) for s in range(4)})
    out: dict = {"real_vectors": int(len(real)), "queries": 250, "alpha": mix.alpha, "rows": []}
    for name, q, data in (("real", queries, pool), ("synthetic", synth[:250], synth[250:])):
        for n in sizes:
            base = np.ascontiguousarray(data[:n])
            truth = np.argsort(-(q @ base.T), axis=1)[:, :K]
            for rule, nlist in (("conba", nlist_for(n)), ("4*sqrt(n)", 2 ** round(math.log2(4 * math.sqrt(n))))):
                with tempfile.TemporaryDirectory() as tmp:
                    searcher = _index(base, nlist, Path(tmp))
                    for nprobe in args.nprobe:
                        if nprobe > nlist:
                            continue
                        searcher.ivf.nprobe = nprobe
                        found, times = _single_queries(searcher, q)
                        row = {"vectors": name, "n": n, "lists": rule, "nlist": nlist, "nprobe": nprobe,
                               "share": round(nprobe / nlist, 4), "recall@10": recall(found, truth),
                               "p50_ms": round(float(np.percentile(times, 50)) * 1e3, 3),
                               "p95_ms": round(float(np.percentile(times, 95)) * 1e3, 3)}
                        out["rows"].append(row)
                        print(row, flush=True)
        out[f"{name}_nn_cos_median"] = round(nn_cos(data[: sizes[-1]]), 4)
    out["extrapolated"] = extrapolate(out["rows"])
    return out


def extrapolate(rows: list[dict], at: int = 1_000_000) -> dict:
    """Recall at ``at`` vectors for each share of 4·√n lists probed (1/64: conba's nprobe 64 of 4,096 at
    1M; 1/32: nprobe 128), from a least-squares line of log(1 - recall) against log(n) over the sizes
    measured (the missed share shrinks as a power of n). Only shares measured at two sizes or more."""
    out: dict = {}
    for name in sorted({r["vectors"] for r in rows}):
        for share in (1 / 64, 1 / 32, 1 / 16):
            pts = [(r["n"], r["recall@10"]) for r in rows if r["vectors"] == name and r["lists"] == "4*sqrt(n)"
                   and abs(r["share"] - round(share, 4)) < 1e-9]
            if len({n for n, _ in pts}) < 2:
                continue
            x = np.log([n for n, _ in pts])
            y = np.log([max(1 - rec, 1e-4) for _, rec in pts])
            slope, icpt = np.polyfit(x, y, 1)
            out[f"{name}_share_1/{round(1 / share)}"] = {
                "measured": pts, "slope": round(float(slope), 3),
                f"recall_at_{at}": round(float(1 - math.exp(icpt + slope * math.log(at))), 3)}
    return out


def padded(args: argparse.Namespace) -> dict:
    """The data phase's vectors in the production structure: recall split by query kind, and real-to-real."""
    import faiss

    from conba.index.vectors import ivf as ann_ivf
    from conba_research.bench.ivf import rss_mb

    results = json.loads((args.out / "results.json").read_text(encoding="utf-8"))
    n_real = int(results["data"]["real"])
    base = np.load(args.out / "base.npy", mmap_mode="r")
    queries, truth = np.load(args.out / "queries.npy"), np.load(args.out / "truth.npy")
    half = len(queries) // 2
    folder = args.out / f"padded{args.tag}"
    folder.mkdir(exist_ok=True)
    faiss.omp_set_num_threads(2)
    t0 = time.perf_counter()
    step = 100_000
    ann = ann_ivf.build(folder, lambda: ((np.arange(s, min(len(base), s + step)), np.asarray(base[s:s + step]))
                                         for s in range(0, len(base), step)), len(base), base.shape[1], 0,
                          nlist=args.nlist)
    build_s = time.perf_counter() - t0
    before = rss_mb()
    searcher = ann_ivf.load(folder, ann, base.shape[1])
    faiss.omp_set_num_threads(1)
    real_truth = [set(t[t < n_real]) for t in truth[:half]]
    rows = []
    for nprobe in args.nprobe:
        searcher.ivf.nprobe, searcher.rerank = nprobe, args.rerank
        for q in queries[:5]:
            searcher.search(q[None], K)
        times, cpu, found = [], [], []
        for q in queries:
            t, c = time.perf_counter(), time.thread_time()
            found.append(searcher.search(q[None], K)[1][0])
            cpu.append(time.thread_time() - c)
            times.append(time.perf_counter() - t)
        found = np.array(found)
        hit_real = sum(len(set(f) & r) for f, r in zip(found[:half], real_truth))
        row = {"nprobe": nprobe, "rerank": args.rerank, "recall@10": recall(found, truth),
               "recall_held_out_real": recall(found[:half], truth[:half]),
               "recall_perturbed": recall(found[half:], truth[half:]),
               "recall_real_queries_real_neighbours": round(hit_real / max(1, sum(map(len, real_truth))), 4),
               "p50_ms": round(float(np.percentile(times, 50)) * 1e3, 2),
               "p95_ms": round(float(np.percentile(times, 95)) * 1e3, 2),
               "cpu_p50_ms": round(float(np.percentile(cpu, 50)) * 1e3, 2),
               "cpu_p95_ms": round(float(np.percentile(cpu, 95)) * 1e3, 2)}
        print(row, flush=True)
        rows.append(row)
    return {"n": int(len(base)), "real": n_real, "synthetic": int(len(base) - n_real), "nlist": ann["nlist"],
            "build_seconds": round(build_s, 1), "build_parts": ann["build_seconds"], "rss_loaded_mb": rss_mb() - before,
            "real_share_of_real_queries_truth": round(sum(map(len, real_truth)) / (half * K), 4), "rows": rows}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--phase", choices=["realscale", "padded"], required=True)
    p.add_argument("--real", default="runs/wd/real", help="folder of chunk-*.npy real embeddings")
    p.add_argument("--out", type=Path, default=Path("runs/wd/bench"))
    p.add_argument("--components", type=int, default=256)
    p.add_argument("--nprobe", type=int, nargs="+", default=[8, 16, 32, 64, 128])
    p.add_argument("--rerank", type=int, default=32)
    p.add_argument("--nlist", type=int, help="padded: lists (default conba's rule, 4,096 at 1M)")
    p.add_argument("--tag", default="", help="padded: results file padded{TAG}.json")
    p.add_argument("--min-size", type=int, default=2_000, help="realscale: the smallest subset (n, n/2, n/4, n/8)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    result = realscale(args) if args.phase == "realscale" else padded(args)
    path = args.out / f"{args.phase}{args.tag}.json"
    result.update(date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                  loadavg=[round(v, 1) for v in os.getloadavg()])
    write_text_atomic(path, json.dumps(result, indent=1))
    print(f"wrote {path}", flush=True)


if __name__ == "__main__":
    main()
