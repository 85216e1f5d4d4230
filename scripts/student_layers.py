"""Which teacher layers a distilled student should keep: the dev score of students cut from a model by
layer dropping (``conba.train.distill.make_student``), before any training.

Each spec is a comma-separated list of teacher layers; the score is the mean cross-language MAP@R on the
dev subsets ``conba distill`` itself scores (``--dev-limit`` records of whole groups per file, seed 0).

    python scripts/student_layers.py 0,2,5 0,3,5 0,2,4,5 -m default \\
        -D ../shared/data/atcoder_dev.jsonl -D ../shared/data/mbxp_dev.jsonl --dev-limit 600 -j layers.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("layers", nargs="+", help="teacher layers to keep, e.g. 0,2,5 (one student per argument)")
    ap.add_argument("-m", "--model", default="default", help="teacher (name or folder)")
    ap.add_argument("-D", "--dev", action="append", type=Path,
                    help="dev file with clone groups (repeatable; default atcoder_dev and mbxp_dev)")
    ap.add_argument("--dev-limit", type=int, default=600, help="records per dev file (whole groups; 0: all)")
    ap.add_argument("-j", "--json-out", type=Path)
    args = ap.parse_args()
    from conba.data import load_records, subset_groups
    from conba.model import load_model
    from conba.train.distill import dev_score, make_student

    files = args.dev or [DATA / "atcoder_dev.jsonl", DATA / "mbxp_dev.jsonl"]
    dev = [subset_groups(load_records(f), args.dev_limit, 0) for f in files]
    teacher = load_model(args.model, prune=False)
    out: dict = {"command": "python scripts/student_layers.py " + " ".join(args.layers), "model": args.model,
                 "dev": [str(f) for f in files], "dev_limit": args.dev_limit, "students": {}}
    for spec in args.layers:
        layers = [int(x) for x in spec.split(",")]
        t0 = time.time()
        scores = dev_score(make_student(teacher, layers), dev)
        out["students"][spec] = scores
        print(f"{spec:>12}  " + "  ".join(f"{k} {v:.4f}" for k, v in scores.items()) + f"  ({time.time() - t0:.0f} s)",
              flush=True)
    if args.json_out:
        args.json_out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
