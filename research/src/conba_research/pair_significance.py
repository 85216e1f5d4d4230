"""Per language pair: is a method's MAP@R different from a baseline's by more than the queries' chance?

Reads the JSON that ``conba eval-repo ... -j FILE`` writes (its ``per_query`` lists every query of every
method) and prints, per ordered pair and over all queries, the mean difference of the queries' AP@R
(method − baseline), its paired-bootstrap 95% interval (:mod:`conba_research.significance`), and the
queries each side wins.

    conba experiment significance runs/r/alg.json --method conba --baseline zero-shot
    conba experiment significance runs/r/alg-fast.json --baseline conba --baseline-from runs/r/alg.json

(``--baseline-from``: the baseline's scores come from another run's JSON over the same groups, e.g. a
student against its teacher.)
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
    ap.add_argument("--baseline-from", type=Path, help="eval-repo JSON holding the baseline (default: RESULT)")
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    sources = {"method": (args.result, args.method), "baseline": (args.baseline_from or args.result, args.baseline)}
    score = {}
    for side, (path, name) in sources.items():
        per_query = json.loads(path.read_text())["per_query"]
        if name not in per_query:
            raise SystemExit(f"{path}: no per-query scores of '{name}' (has: {', '.join(per_query)})")
        score[side] = {(q["pair"], q["file"]): q["map_at_r"] for q in per_query[name]}
    args.method, args.baseline = "method", "baseline"
    print(f"method: {sources['method'][1]} of {sources['method'][0]}; baseline: {sources['baseline'][1]} of "
          f"{sources['baseline'][0]}")
    keys = sorted(set(score[args.method]) & set(score[args.baseline]))
    pairs = sorted({p for p, _ in keys})
    print("method - baseline, AP@R per query, paired bootstrap "
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
