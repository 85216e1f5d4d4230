"""Scale measurement of ``conba index`` / ``search`` / ``clones`` on a ~20k-function corpus.

The corpus is built from the grouped JSONL data (``{mbxp,atcoder}_{train,dev}.jsonl``: every record
becomes a source file with its language's extension) plus files of the local Python standard
library, written to a scratch tree (default ``runs/scale/tree``; never into the repository).

Phases (each a separate invocation, so each has its own peak memory; ``all`` runs them in turn):

* ``build``     write the tree (skipped when it already exists with the same settings);
* ``index``     ``Index.add`` over the tree with the model (= ``conba index``) and ``--engine``
                (torch, onnx, onnx-fp32); resumable: re-running continues an interrupted run and the
                encoding rate is summed over the runs. The index folder is ``OUT/index`` or, with a tag
                (``--tag``, default the engine when not torch), ``OUT/index-TAG``; results key likewise;
* ``query``     ``clones`` over every function (all pairs, then cross-language only), search latency
                p50 / p95 over sampled queries (end to end, and split into encoding vs FAISS);
* ``synthetic`` FAISS flat vs HNSW on N random unit vectors, or with ``--vectors-from`` on the real
                embeddings of an index (build rate, single-query latency, kNN-graph throughput,
                HNSW recall@10, bytes per vector): the inputs of the 1M estimate;
* ``ann1m``     FAISS IVF-Flat / IVF-SQ8 / HNSW at ``--ann-vectors`` (1M) unit vectors drawn from a
                Gaussian fitted to the embeddings of ``--vectors-from INDEX_DIR``: latency p50 / p95,
                recall@10 vs exact search, build time, bytes per vector (:mod:`conba_research.bench.ann`).

Results are merged into ``OUT/results.json`` (one key per phase) and printed.

Examples::

    conba bench index-scale --phase build
    flock -x runs/conba-cpu.lock timeout 3000 conba bench index-scale --phase index
    flock -x runs/conba-cpu.lock timeout 900 conba bench index-scale --phase query
    flock -x runs/conba-cpu.lock timeout 900 conba bench index-scale --phase synthetic
    flock -x runs/conba-cpu.lock timeout 3000 conba bench index-scale --phase index --engine onnx
    nice -n 19 conba bench index-scale --phase ann1m --vectors-from runs/none-idx
    conba bench index-scale --phase report
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import sysconfig
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from conba.bench.probes import cpu_model, peak_rss_mb
from conba_research.bench.ann import add_arguments, ann, flat_vs_hnsw


# ---------------------------------------------------------------------- helpers
def machine() -> dict:
    cpu = cpu_model()
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = "?"
    import torch

    return {"cpu": cpu, "cores": os.cpu_count(), "torch_threads": torch.get_num_threads(),
            "python": platform.python_version(), "torch": torch.__version__, "commit": commit,
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "loadavg_start": os.getloadavg()}


def percentile_ms(seconds: list[float], q: float) -> float:
    return round(float(np.percentile(np.array(seconds) * 1000, q)), 2)


def save_phase(out: Path, phase: str, result: dict) -> None:
    from conba.utils.io import read_json, write_json_atomic

    path = out / "results.json"
    results = read_json(path) if path.exists() else {}
    results[phase] = result
    write_json_atomic(path, results)


def index_dir(args: argparse.Namespace) -> Path:
    return args.out / (f"index-{args.tag}" if args.tag else "index")


def phase_key(args: argparse.Namespace, phase: str) -> str:
    if phase == "synthetic" and args.vectors_from:
        return "synthetic_real"
    return f"{phase}-{args.tag}" if args.tag and phase in ("index", "query") else phase


def model_info(model) -> dict:
    return {"fingerprint": model.fingerprint(), "dim": model.dim,
            "threshold": model.threshold}


# ---------------------------------------------------------------------- index
def index(args: argparse.Namespace) -> dict:
    from conba.index import Index
    from conba.utils.io import read_json

    tree = args.out / "tree"
    if not (tree / "BUILD.json").exists():
        raise SystemExit(f"{tree}: no tree; run --phase build first")
    info = machine()
    folder = index_dir(args)
    t0 = time.perf_counter()
    idx = Index(folder, model=args.model, engine=args.engine)
    from conba.index.model.placement import place_index_model

    place_index_model(idx, args.device, args.dtype)  # --device / --dtype, as every command that runs a model
    load_s = time.perf_counter() - t0
    parts = [str(tree / p) for p in ("data", "stdlib", "real") if (tree / p).is_dir()]
    report = idx.add(parts, batch_size=args.batch_size, show_progress=True)
    stats = idx.stats()
    idx.close()
    results = read_json(args.out / "results.json") if (args.out / "results.json").exists() else {}
    prev = results.get(phase_key(args, "index"), {})
    same = (prev.get("fingerprint"), prev.get("engine", "torch")) == (stats["fingerprint"], stats["engine"])
    runs = prev.get("runs", []) if same else []
    runs.append({"encoded": report.units_encoded, "seconds": round(report.seconds, 1), "date": info["date"],
                 "loadavg_start": info["loadavg_start"], "loadavg_end": os.getloadavg()})
    encoded = sum(r["encoded"] for r in runs)
    seconds = sum(r["seconds"] for r in runs)
    reasons: dict[str, int] = {}
    for _, reason in report.skipped:
        reasons[reason] = reasons.get(reason, 0) + 1
    manifest = read_json(folder / "manifest.json")
    return {
        "command": f"Index({folder}, model={args.model!r}, engine={stats['engine']!r}).add({parts})"
                   f"  (= conba index {' '.join(parts)} --index {folder} --model {args.model} "
                   f"--engine {stats['engine']})",
        "machine": info, "model": stats["model"], "engine": stats["engine"], "fingerprint": stats["fingerprint"],
        "threshold": stats["threshold"], "model_load_s": round(load_s, 1),
        "files": report.files_seen, "functions": report.units_total, "languages": stats["languages"],
        "skipped": len(report.skipped), "skipped_by_reason": reasons,
        "distinct_functions_encoded": encoded, "index_seconds": round(seconds, 1),
        "functions_per_s": round(encoded / seconds, 2) if seconds else None, "runs": runs,
        "vector_kind": manifest["kind"], "sqlite_mb": round((folder / "index.sqlite").stat().st_size / 2**20, 1),
        "faiss_mb": round((folder / "vectors.faiss").stat().st_size / 2**20, 1),
        "peak_rss_mb_this_run": round(peak_rss_mb()),
    }


# ---------------------------------------------------------------------- query
def query(args: argparse.Namespace) -> dict:
    from conba.index import Index
    from conba.index.vectors import exact as vec

    info = machine()
    folder = index_dir(args)
    t0 = time.perf_counter()
    idx = Index(folder, create=False, engine=args.engine)
    n = len(idx)
    model = idx.model
    load_s = time.perf_counter() - t0
    out: dict = {"machine": info, "model": idx.model_name, "engine": idx.engine, **model_info(model), "functions": n,
                 "model_load_s": round(load_s, 1)}

    from conba.clones.threshold import resolve_threshold

    auto = resolve_threshold("auto", idx.threshold)
    out["clones"] = []
    for t in (auto, *args.thresholds):
        for cross in (False, True):
            t0 = time.perf_counter()
            classes = idx.clones(t, cross_language_only=cross)
            sizes = sorted((len(c.units) for c in classes), reverse=True)
            row = {"threshold": round(t, 4), "auto": t == auto, "cross_language_only": cross,
                   "seconds": round(time.perf_counter() - t0, 2), "classes": len(classes),
                   "pairs": sum(len(c.pairs) for c in classes), "largest_classes": sizes[:3],
                   "functions_in_classes": sum(sizes),
                   "command": f"conba clones --index {folder} -t {t:.4f}{' -x' if cross else ''} -o /dev/null"}
            out["clones"].append(row)
            print(f"clones: {row}", flush=True)

    units = idx.units()
    rng = random.Random(args.seed + 1)
    sample = rng.sample(units, min(args.queries, len(units)))
    faiss_index = idx.vector_store()
    for u in sample[:3]:  # warm-up
        idx.search(u.code, k=10, query_language=u.language)
    total, enc, knn, fetch, self_top = [], [], [], [], 0
    for u in sample:  # end to end, then the same query step by step (interleaved: same load)
        t0 = time.perf_counter()
        hits = idx.search(u.code, k=10, query_language=u.language)
        total.append(time.perf_counter() - t0)
        self_top += bool(hits) and hits[0].unit.hash == u.hash
        t0 = time.perf_counter()
        q = model.encode([u.code], languages=[u.language], show_progress_bar=False, engine=idx.engine)
        t1 = time.perf_counter()
        _, ids = vec.search(faiss_index, q, 10)
        t2 = time.perf_counter()
        idx.store.units([int(i) for i in ids[0] if i >= 0])
        t3 = time.perf_counter()
        enc.append(t1 - t0)
        knn.append(t2 - t1)
        fetch.append(t3 - t2)
    tokens = model.backbone.token_lengths([u.code for u in sample])
    out["search"] = {
        "queries": len(sample), "k": 10, "query_source": "random indexed functions (own code and language)",
        "p50_ms": percentile_ms(total, 50), "p95_ms": percentile_ms(total, 95),
        "mean_ms": round(float(np.mean(total)) * 1000, 2),
        "encode_p50_ms": percentile_ms(enc, 50), "encode_p95_ms": percentile_ms(enc, 95),
        "faiss_p50_ms": percentile_ms(knn, 50), "faiss_p95_ms": percentile_ms(knn, 95),
        "sqlite_p50_ms": percentile_ms(fetch, 50), "sqlite_p95_ms": percentile_ms(fetch, 95),
        "query_tokens_p50": int(np.median(tokens)), "query_tokens_p95": int(np.percentile(tokens, 95)),
        "self_at_rank_1": round(self_top / len(sample), 3),
        "command": f"conba search FILE --index {folder} -k 10",
    }
    out["peak_rss_mb"] = round(peak_rss_mb())
    out["loadavg_end"] = os.getloadavg()
    idx.close()
    return out


# ---------------------------------------------------------------------- build, synthetic, ann1m
def build(args: argparse.Namespace) -> dict:
    from conba_research.bench.corpus import build as build_corpus

    return build_corpus(args)


def synthetic(args: argparse.Namespace) -> dict:
    return {"machine": machine(), **flat_vs_hnsw(args)}


def ann1m(args: argparse.Namespace) -> dict:
    return {"machine": machine(), **ann(args)}


# ---------------------------------------------------------------------- main
def report(out: Path) -> None:
    path = out / "results.json"
    if not path.exists():
        raise SystemExit(f"{path}: no results yet")
    print(json.dumps(json.loads(path.read_text(encoding="utf-8")), indent=2))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("Examples::")[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--phase", choices=["build", "index", "query", "synthetic", "ann1m", "report", "all"],
                   default="all", help="all = build, index, query, synthetic")
    p.add_argument("--out", type=Path, default=Path("runs") / "scale",
                   help="scratch folder (tree, index, results; default runs/scale under the current folder)")
    p.add_argument("--data", type=Path, help="folder with the grouped JSONL files (default $CONBA_DATA)")
    p.add_argument("--stdlib", default=sysconfig.get_paths()["stdlib"], help="Python standard library folder")
    p.add_argument("--target", type=int, default=20_000, help="functions in the corpus (approximate)")
    p.add_argument("--stdlib-share", type=float, default=0.3, help="share of the functions from the stdlib")
    p.add_argument("--real", type=Path, action="append", default=[], metavar="DIR",
                   help="folder of real source code (repeatable; e.g. Go's std, the JDK's src.zip, node_modules)")
    p.add_argument("--real-share", type=float, default=0.5, help="share of the functions from the --real folders")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-m", "--model", default="default",
                   help="model for a new index: a name or any conba model folder (an existing index keeps its own)")
    p.add_argument("--engine", choices=["torch", "onnx", "onnx-fp32"],
                   help="encoding engine for a new index (default torch; an existing one keeps its own)")
    p.add_argument("--tag", help="index folder OUT/index-TAG and results keys index-TAG, query-TAG "
                                 "(default: the engine when not torch); pass the same to --phase query")
    p.add_argument("--device", help="where the torch engine encodes (auto, cpu, cuda[:N], mps; default: auto)")
    p.add_argument("--dtype", help="the torch engine's precision (auto, float32, float16, bfloat16; default: auto)")
    p.add_argument("-b", "--batch-size", type=int, default=32)
    p.add_argument("-q", "--queries", type=int, default=150, help="search queries to time")
    p.add_argument("-t", "--thresholds", type=float, nargs="*", default=[0.8, 0.9, 0.95],
                   help="clone thresholds to time besides the model's (auto)")
    p.add_argument("--synthetic", type=int, default=200_000, help="random vectors for the FAISS flat/HNSW phase")
    p.add_argument("--dim", type=int, default=384, help="vector width for the synthetic phase")
    p.add_argument("--vectors-from", metavar="INDEX_DIR",
                   help="synthetic phase on the real embeddings of this index instead of random vectors "
                        "(results saved as 'synthetic_real'); ann1m fits its Gaussian to them")
    add_arguments(p)
    args = p.parse_args(argv)
    if args.tag is None and args.engine not in (None, "torch"):
        args.tag = args.engine
    args.out = args.out.resolve()
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    phases = ["build", "index", "query", "synthetic"] if args.phase == "all" else [args.phase]
    for phase in phases:
        if phase == "report":
            report(args.out)
            continue
        print(f"== {phase} ({datetime.now().strftime('%H:%M:%S')})", flush=True)
        result = {"build": build, "index": index, "query": query, "synthetic": synthetic, "ann1m": ann1m}[phase](args)
        result["argv"] = " ".join([Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])])
        save_phase(args.out, phase_key(args, phase), result)
        print(json.dumps({k: v for k, v in result.items() if k != "machine"}, indent=2), flush=True)


if __name__ == "__main__":
    main()
