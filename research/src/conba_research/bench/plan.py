"""The 100M-function plan, simulated from measurements (docs/SCALE.md).

Inputs measured on this machine:

* one 1M-vector shard (``conba bench ivf`` results in ``--bench``): index RAM, build seconds
  (read / train / add), the per-query latencies at the chosen nprobe x rerank (``latency-*.npy``);
* the fan-out cost of :class:`conba.index.scale.shards.ShardSearcher` (a process per shard, queries over
  pipes, merge by score): ``--fanout`` shard folders (built here, ``--fanout-n`` vectors each, from the
  same vectors as the benchmark) searched through the searcher vs in-process.

The simulation: a query to F shards waits for the slowest, so its latency is the maximum of F draws
from the measured single-shard latency distribution (resampled, ``--trials`` queries), plus the
measured cost of one pipe round trip and the coordinator's CPU per shard (send, receive, merge) times F. Build:
shards are independent, so wall time = one shard's build x ceil(shards / parallel builders). Memory:
linear in the vectors per shard (the structure's bytes per vector are measured, not assumed).

    nice -n 15 conba bench plan-100m --bench runs/w6/bench --nprobe 128 --rerank 96
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np


def fanout(args: argparse.Namespace) -> dict:
    """Per-query seconds: searching S shard folders through ShardSearcher vs one folder in-process."""
    from conba.index import Index
    from conba.index.scale.shards import ShardSearcher
    from conba_research.bench import ivf as bench

    base = np.load(args.bench / "base.npy", mmap_mode="r")
    queries = np.load(args.bench / "queries.npy")[: args.queries]
    folders = []
    for s in range(args.fanout):
        folder = args.out / f"shard-{s}"
        folders.append(folder)
        if (folder / "manifest.json").exists():
            continue
        folder.mkdir(parents=True, exist_ok=True)
        order = np.arange(s * args.fanout_n, (s + 1) * args.fanout_n)
        store = bench._open_store(folder)
        store.set_meta(dim=str(base.shape[1]), fingerprint="plan", model="plan", view="raw", engine="onnx",
                       lexical_weight="0", state="building")
        for f in range(0, len(order) // bench.PER_FILE, 200):
            items = bench._file_items(order, range(f, min(len(order) // bench.PER_FILE, f + 200)), 0)
            store.replace_files(items)
            rows = np.array([int(u.qualname[1:]) for it in items for u in it[4]])
            store.add_vectors([u.hash for it in items for u in it[4]], np.asarray(base[rows]))
        store.close()
        bench._finalize(folder, 1000)
    with Index(folders[0]) as idx:
        idx.load_vectors()
        local, _ = _time(lambda q: idx.search_vectors(q[None], k=10), queries)
    with ShardSearcher(folders[:1]) as searcher:
        one, _ = _time(lambda q: searcher.search_vectors(q[None], k=10), queries)
    with ShardSearcher(folders) as searcher:
        many, coord = _time(lambda q: searcher.search_vectors(q[None], k=10), queries)
    return {"shards": args.fanout, "vectors_per_shard": args.fanout_n, "local_p50_ms": _ms(local, 50),
            "one_shard_process_p50_ms": _ms(one, 50), "fanout_p50_ms": _ms(many, 50), "fanout_p95_ms": _ms(many, 95),
            "round_trip_ms": round(float(np.median(one) - np.median(local)) * 1e3, 3),
            "coordinator_cpu_per_shard_ms": round(float(np.median(coord)) / args.fanout * 1e3, 3)}


def _time(fn, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(wall seconds, this thread's CPU seconds) per query."""
    for q in queries[:5]:
        fn(q)
    out, cpu = [], []
    for q in queries:
        t, c = time.perf_counter(), time.thread_time()
        fn(q)
        cpu.append(time.thread_time() - c)
        out.append(time.perf_counter() - t)
    return np.array(out), np.array(cpu)


def _ms(x: np.ndarray, q: float) -> float:
    return round(float(np.percentile(x, q)) * 1e3, 2)


def plan(args: argparse.Namespace, fan: dict) -> dict:
    results = json.loads((args.bench / "results.json").read_text(encoding="utf-8"))
    tag = "query-after-update"
    lat = np.load(args.bench / f"cpu-query-{tag}-{args.nprobe}-{args.rerank}.npy")  # one core per shard
    row = next(r for r in results[tag]["rows"] if r["nprobe"] == args.nprobe and r["rerank"] == args.rerank)
    build = results["build"]
    shard_n = results["build"]["n"]
    ram_mb = results[tag]["index_ram_mb"]
    rng = np.random.default_rng(0)
    rows = []
    for total in (10_000_000, 100_000_000):
        shards = math.ceil(total / shard_n)
        worst = lat[rng.integers(0, len(lat), size=(args.trials, shards))].max(1)
        over = (fan["round_trip_ms"] + fan["coordinator_cpu_per_shard_ms"] * shards) / 1e3
        rows.append({
            "functions": total, "shards": shards, "vectors_per_shard": shard_n, "ram_per_shard_mb": ram_mb,
            "ram_total_gb": round(ram_mb * shards / 1024, 1),
            "machines_16_cores_64gb": math.ceil(shards / min(14, int(64 * 1024 * 0.75 // max(ram_mb, 1)))),
            "query_p50_ms": round(float(np.percentile(worst, 50) + over) * 1e3, 2),
            "query_p95_ms": round(float(np.percentile(worst, 95) + over) * 1e3, 2),
            "recall@10_per_shard": row["recall@10"],
            "build_wall_s_16_builders": round(build["ann_run"]["seconds"] * math.ceil(shards / 16)),
            "incremental_s_per_touched_shard": results.get("update", {}).get("finalize_s"),
        })
    return {"model": "a core per shard: query = max of F resampled single-shard CPU times per query + one measured "
                     "pipe round trip + F x the coordinator's measured CPU per shard (send, receive, merge); "
                     "build = one shard's build x ceil(shards / 16 parallel builders); RAM linear in shards",
            "single_shard": {"n": shard_n, "cpu_p50_ms": row["cpu_p50_ms"], "cpu_p95_ms": row["cpu_p95_ms"],
                             "recall@10": row["recall@10"], "build_s": build["ann_run"]["seconds"],
                             "ram_mb": ram_mb},
            "fanout_measured": fan, "plan": rows}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bench", type=Path, default=Path("runs/w6/bench"))
    p.add_argument("--out", type=Path, default=Path("runs/w6/plan"))
    p.add_argument("--nprobe", type=int, required=True)
    p.add_argument("--rerank", type=int, required=True)
    p.add_argument("--fanout", type=int, default=4)
    p.add_argument("--fanout-n", type=int, default=20_000)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--trials", type=int, default=2000)
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    result = plan(args, fanout(args))
    from conba.utils.io import write_text_atomic

    write_text_atomic(args.out / "plan.json", json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
