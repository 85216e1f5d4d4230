"""Encoding throughput of the default model per padded-token budget and engine, vs sentence-transformers.

Same seeded sample of atcoder_dev, all variants alternating (the starting one rotates every repeat);
prints one JSON line per repeat and the medians. Run it alone on the machine. Thread count:
CONBA_THREADS (default: torch's, i.e. the physical cores).

    python scripts/bench_batch_settings.py --limit 128 --budgets 0,2048,4096,8192 --repeats 3
    CONBA_THREADS=1 python scripts/bench_batch_settings.py --engines torch --budgets 4096
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="../shared/data/atcoder_dev.jsonl")
    ap.add_argument("--limit", type=int, default=128)
    ap.add_argument("--budgets", default="0,2048,4096,8192", help="padded tokens per batch (0 = no budget)")
    ap.add_argument("--engines", default="torch,onnx")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--model", default="default")
    args = ap.parse_args()

    from conba.bench.variants import sentence_transformer
    from conba.data import load_records
    from conba.model import load_model
    from conba.settings import apply_threads

    threads = apply_threads()
    records = load_records(args.data)
    sample = random.Random(0).sample(records, min(args.limit, len(records)))
    codes, langs = [r.code for r in sample], [r.language for r in sample]
    model = load_model(args.model)
    bs = args.batch_size
    fns = {}
    try:
        st = sentence_transformer(model, Path(tempfile.mkdtemp(prefix="conba-st-")))
        fns["st"] = lambda: st.encode(codes, batch_size=bs)
    except ImportError:
        print("sentence-transformers not installed: no peer row")
    for budget in (int(x) for x in args.budgets.split(",")):
        for engine in args.engines.split(","):
            fns[f"{engine} budget {budget or 'none'}"] = (
                lambda b=budget, e=engine: model.encode(codes, languages=langs, batch_size=bs, engine=e,
                                                        max_batch_tokens=b or None, show_progress_bar=False))
    for fn in fns.values():  # warm-up: ONNX export, lazy inits
        fn()
    rates: dict[str, list[float]] = {k: [] for k in fns}
    names = list(fns)
    for rep in range(args.repeats):
        for name in names[rep % len(names):] + names[: rep % len(names)]:
            t = time.perf_counter()
            fns[name]()
            rates[name].append(len(codes) / (time.perf_counter() - t))
        print(json.dumps({"repeat": rep + 1, **{k: round(v[-1], 2) for k, v in rates.items()}}), flush=True)
    print(f"\n{len(codes)} snippets of {args.data}, batch size {bs}, {threads} threads, model {args.model}")
    print("| variant | snippets/s (median) | all repeats |\n|---|---|---|")
    for name, v in rates.items():
        print(f"| {name} | {statistics.median(v):.2f} | {', '.join(f'{x:.2f}' for x in v)} |")


if __name__ == "__main__":
    main()
