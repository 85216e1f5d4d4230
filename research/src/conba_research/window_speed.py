"""Encode throughput of a model with truncation (``max_windows`` 1) against its windows' read-out.

``python -m conba_research.window_speed DATA.jsonl [--limit 300] [--repeats 2] [--windows 8]``
encodes the same seeded sample of snippets with both settings, alternating (A B A B ...), so a load
that changes during the run hits both alike; prints snippets/s of each (best of the repeats) and the ratio.
"""

from __future__ import annotations

import argparse
import random
import time


def main(argv: list[str] | None = None) -> None:
    from conba.data.records import load_records
    from conba.model import load_model

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("data")
    ap.add_argument("--model", default="default")
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--windows", "--fragments", dest="windows", type=int, default=8)  # --fragments: old name
    args = ap.parse_args(argv)
    records = load_records(args.data, on_unknown="ignore")
    sample = random.Random(0).sample(records, min(args.limit, len(records)))
    codes, langs = [r.code for r in sample], [r.language for r in sample]
    model = load_model(args.model)
    model.encode(codes[:8], langs[:8])  # warm-up
    best = {1: float("inf"), args.windows: float("inf")}
    for _ in range(args.repeats):
        for windows in best:
            t0 = time.perf_counter()
            model.encode(codes, langs, max_windows=windows)
            best[windows] = min(best[windows], time.perf_counter() - t0)
    rate = {k: len(codes) / v for k, v in best.items()}
    print(f"{len(codes)} snippets of {args.data}: truncation {rate[1]:.2f}/s, {args.windows} windows "
          f"{rate[args.windows]:.2f}/s, ratio {rate[args.windows] / rate[1]:.3f}")


if __name__ == "__main__":
    main()
