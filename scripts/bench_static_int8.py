"""Static (calibrated) vs dynamic int8 vs fp32 ONNX exports of one model: speed, cosine, MAP@R.

Exports the model (no SDTP pruning) as ONNX fp32, dynamic int8 (the ``onnx`` engine) and every static
variant asked for (:mod:`conba.engine.static_quant`, calibrated on ``--calib-n`` snippets of
``--calib-data``, by default atcoder_train next to ``--data``), then, in one process:

* times them alternating (the starting variant rotates every repeat) on the same seeded sample of
  ``--data`` through ``model.encode`` (median snippets/s of ``--repeats``);
* the cosine of each variant's vectors to the fp32 export's on that sample (mean / min);
* mean cross-language MAP@R on a whole-group subset of ``--data`` (about ``--map-limit`` snippets).

Prints the command, the load average and a markdown table; ``--json-out`` writes the report.
Threads: CONBA_THREADS (default: one per physical core). Exports are kept in ``--workdir`` and reused.

    python scripts/bench_static_int8.py --data ../shared/data/atcoder_dev.jsonl --json-out static.json
    python scripts/bench_static_int8.py --static qdq-minmax,qdq-percentile,qoperator-minmax,qdq-minmax-unfused
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import statistics
import sys
from pathlib import Path

import numpy as np

DEFAULT_STATIC = "qdq-minmax,qdq-percentile,qoperator-minmax,qdq-minmax-unfused,qdq-minmax-qout"


def parse_static(spec: str) -> list[dict]:
    """'qdq-minmax,qoperator-percentile-unfused,qdq-minmax-qout' -> StaticQuant keyword dicts."""
    out = []
    for item in filter(None, (s.strip() for s in spec.split(","))):
        parts = item.split("-")
        flags = set(parts[2:])
        if len(parts) < 2 or not flags <= {"unfused", "qout"} or len(flags) != len(parts) - 2:
            raise SystemExit(f"--static: bad variant {item!r} (FORMAT-METHOD[-unfused][-qout], e.g. qdq-minmax)")
        out.append({"format": parts[0], "method": parts[1], "fuse_attention": "unfused" not in flags,
                    "float_outputs": "qout" not in flags})
    return out


def onnx_encoder_fn(model, enc, batch_size: int):
    """model.encode through the given OnnxEncoder (installed as the model's cached ``onnx`` engine)."""
    def encode(codes: list[str], languages: list[str]) -> np.ndarray:
        model._engines[("onnx", False)] = enc  # the bench swaps exports under one engine name
        return model.encode(codes, languages=languages, batch_size=batch_size, engine="onnx",
                            show_progress_bar=False)
    return encode


def build(model, args, log) -> tuple[dict, dict]:
    """{variant: encode fn}, {variant: error} for the exports that failed."""
    from conba.bench.speed import sample_records
    from conba.data import load_records
    from conba.engine.onnx_export import MANIFEST, export_onnx
    from conba.engine.onnx_runtime import OnnxEncoder
    from conba.engine.static_quant import StaticQuant, calibration_batches

    work = Path(args.workdir)
    calib = sample_records(load_records(args.calib_data), args.calib_n, args.seed + 1)
    batches = calibration_batches(model, [r.code for r in calib], [r.language for r in calib])
    plan: dict[str, dict] = {"fp32": {"quantize": False}, "dynamic": {"quantize": True}}
    for kwargs in parse_static(args.static):
        sq = StaticQuant(batches, **kwargs)
        plan[sq.name] = {"static": sq}
    fns, errors = {}, {}
    for name, kwargs in plan.items():
        folder = work / f"{model.fingerprint()}-{name}"
        try:
            if not (folder / MANIFEST).exists():
                log(f"export {name} ...")
                export_onnx(model, folder, prune=False, **kwargs)
            fns[name] = onnx_encoder_fn(model, OnnxEncoder(folder), args.batch_size)
        except Exception as exc:  # noqa: BLE001 - a variant ONNX Runtime cannot build is reported, not fatal
            errors[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"
            log(f"{name} failed: {errors[name]}")
    return fns, errors


def main() -> None:
    from conba.bench.speed import DEFAULT_DATA

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="default")
    ap.add_argument("--data", default=DEFAULT_DATA, help="timed sample and MAP@R subset (grouped JSONL)")
    ap.add_argument("--calib-data", default="",
                    help="calibration snippets (default: atcoder_train.jsonl next to --data)")
    ap.add_argument("--calib-n", type=int, default=128)
    ap.add_argument("--static", default=DEFAULT_STATIC,
                    help="FORMAT-METHOD[-unfused][-qout],... (qdq|qoperator, minmax|percentile)")
    ap.add_argument("-n", "--limit", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--map-limit", type=int, default=300, help="about this many snippets, whole groups (0 = no MAP@R)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", default="runs/static-int8")
    ap.add_argument("--json-out", default="")
    args = ap.parse_args()
    args.calib_data = args.calib_data or str(Path(args.data).with_name("atcoder_train.jsonl"))

    from conba.bench.report import machine_info
    from conba.bench.speed import group_subset, sample_records, time_variants
    from conba.data import load_records
    from conba.eval.metrics import cross_language_retrieval, embedding_similarity
    from conba.model import load_model
    from conba.settings import apply_threads

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    command = "python " + shlex.join(sys.argv)
    threads = apply_threads()
    model = load_model(args.model)
    model.eval()
    with contextlib.redirect_stdout(sys.stderr):  # ONNX Runtime's Percentile calibrator prints progress
        fns, errors = build(model, args, log)
    records = load_records(args.data)
    sample = sample_records(records, args.limit, args.seed)
    codes, langs = [r.code for r in sample], [r.language for r in sample]
    load_before = list(os.getloadavg())
    runs, vecs = time_variants(fns, codes, langs, args.repeats, log)
    load_after = list(os.getloadavg())
    rows: dict[str, dict] = {}
    for name in fns:
        rates = [len(codes) / w for w in runs[name]["wall"]]
        cos = np.sum(vecs[name] * vecs["fp32"], axis=1)
        rows[name] = {"snippets_per_s": round(statistics.median(rates), 2), "rates": [round(r, 2) for r in rates],
                      "cpu_ms_per_snippet": round(1000 * statistics.median(runs[name]["cpu"]) / len(codes), 1),
                      "cos_mean": round(float(cos.mean()), 5), "cos_min": round(float(cos.min()), 5)}
    base = rows.get("dynamic", {}).get("snippets_per_s")
    for row in rows.values():
        row["x_dynamic"] = round(row["snippets_per_s"] / base, 3) if base else None
    subset = group_subset(records, args.map_limit, args.seed) if args.map_limit else []
    for name, fn in fns.items() if subset else ():
        emb = fn([r.code for r in subset], [r.language for r in subset])
        res = cross_language_retrieval(embedding_similarity(emb), [r.group for r in subset],
                                       [r.language for r in subset])
        rows[name]["map_at_r"] = round(float(res["mean"]["map_at_r"]), 4)
        log(f"MAP@R {name}: {rows[name]['map_at_r']}")
    report = {"command": command, "machine": machine_info(threads), "load_before": load_before,
              "load_after": load_after, "model": args.model, "fingerprint": model.fingerprint(),
              "timed_snippets": len(codes), "calibration": {"file": args.calib_data, "snippets": args.calib_n},
              "map_subset": {"records": len(subset), "groups": len({r.group for r in subset})},
              "variants": rows, "failed": errors}
    print(f"command: {command}\nload average before {load_before}, after {load_after}; {threads} threads")
    print(f"{len(codes)} snippets, median of {args.repeats} alternating repeats; MAP@R on {len(subset)} snippets\n")
    print("| variant | snippets/s | × dynamic | CPU ms/snippet | cos to fp32 mean / min | MAP@R |")
    print("|---|---|---|---|---|---|")
    for name, r in rows.items():
        print(f"| {name} | {r['snippets_per_s']} | {r['x_dynamic']} | {r['cpu_ms_per_snippet']} | "
              f"{r['cos_mean']:.4f} / {r['cos_min']:.4f} | {r.get('map_at_r', '—')} |")
    for name, err in errors.items():
        print(f"| {name} | failed: {err} | | | | |")
    if args.json_out:
        from conba.utils.io import write_json_atomic

        write_json_atomic(Path(args.json_out), report)


if __name__ == "__main__":
    main()
