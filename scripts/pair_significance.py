"""Per language pair: is a method's MAP@R different from a baseline's by more than the queries' chance?

Reads the JSON that ``conba eval-repo ... -j FILE`` writes (its ``per_query`` lists every query of every
method) and prints, per ordered pair and over all queries, the mean difference of the queries' AP@R
(method − baseline), its paired-bootstrap 95% interval (:mod:`conba_research.significance`), and the
queries each side wins.

    python scripts/pair_significance.py /tmp/r/alg.json --method conba --baseline zero-shot
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from conba_research.significance import paired_bootstrap


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("result", type=Path, help="JSON written by `conba eval-repo -j`")
    ap.add_argument("--method", default="conba")
    ap.add_argument("--baseline", default="zero-shot")
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    per_query = json.loads(args.result.read_text())["per_query"]
    for name in (args.method, args.baseline):
        if name not in per_query:
            raise SystemExit(f"{args.result}: no per-query scores of '{name}' (has: {', '.join(per_query)})")
    score = {m: {(q["pair"], q["file"]): q["map_at_r"] for q in per_query[m]} for m in (args.method, args.baseline)}
    keys = sorted(set(score[args.method]) & set(score[args.baseline]))
    pairs = sorted({p for p, _ in keys})
    print(f"{args.result}: {args.method} - {args.baseline}, AP@R per query, paired bootstrap "
          f"({args.samples} resamples, seed {args.seed})")
    print(f"{'pair':22s} {'queries':>7s} {'diff':>7s}  {'95% interval':>17s}  wins/losses  beyond chance")
    for pair in [*pairs, "all"]:
        chosen = [k for k in keys if pair in ("all", k[0])]
        r = paired_bootstrap([score[args.method][k] for k in chosen], [score[args.baseline][k] for k in chosen],
                             args.samples, args.seed)
        print(f"{pair:22s} {r.n:7d} {r.mean:+7.3f}  [{r.low:+.3f}, {r.high:+.3f}]  {r.wins:4d}/{r.losses:<6d}  "
              f"{'yes' if r.significant else 'no'}")


if __name__ == "__main__":
    main()
