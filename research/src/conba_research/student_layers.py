"""Which teacher layers a distilled student should keep, and how wide: the dev score of students cut from a
model by layer dropping and feed-forward narrowing (``conba.train.distill.cut_student``), before any training.

Each spec is a comma-separated list of teacher layers, optionally followed by ``:F``, the feed-forward
neurons kept per layer (ranked, as ``conba distill --ffn-size F`` ranks them, on a seeded sample of the
``--data`` snippets); the score is the mean cross-language MAP@R on the dev subsets ``conba distill`` itself
scores (``--dev-limit`` records of whole groups per file, seed 0).

    conba experiment student-layers 0,2,5 0,3,5 0,2,4,5 0,2,4,5:512 -m default \\
        -D ../shared/data/atcoder_dev.jsonl -D ../shared/data/mbxp_dev.jsonl --dev-limit 600 \\
        -d runs/distill_mix.jsonl -j layers.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from conba.utils.io import write_text_atomic


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("layers", nargs="+", help="teacher layers to keep, e.g. 0,2,5 (one student per argument)")
    ap.add_argument("-m", "--model", default="default", help="teacher (name or folder)")
    ap.add_argument("-D", "--dev", action="append", type=Path,
                    help="dev file with clone groups (repeatable; default $CONBA_DATA/{atcoder,mbxp}_dev.jsonl)")
    ap.add_argument("--dev-limit", type=int, default=600, help="records per dev file (whole groups; 0: all)")
    ap.add_argument("-d", "--data", action="append", type=Path,
                    help="training JSONL whose code ranks the neurons of a ':F' spec (repeatable; default "
                         "$CONBA_DATA/{atcoder,mbxp}_train.jsonl)")
    ap.add_argument("--init", help="start from this student (name or folder) instead of cutting the teacher, "
                    "as `conba distill --init` does; a ':F' spec narrows it")
    ap.add_argument("-j", "--json-out", type=Path)
    args = ap.parse_args()
    from conba.data import load_records, subset_groups
    from conba.data.location import data_path
    from conba.model import load_model
    from conba.train.distill import DistillConfig, dev_score, start_student
    from conba.train.distill_data import collect_snippets

    files = args.dev or [data_path("atcoder_dev.jsonl"), data_path("mbxp_dev.jsonl")]
    dev = [subset_groups(load_records(f), args.dev_limit, 0) for f in files]
    teacher = load_model(args.model, prune=False)
    out: dict = {"command": "conba experiment student-layers " + " ".join(args.layers), "model": args.model,
                 "init": args.init,
                 "dev": [str(f) for f in files], "dev_limit": args.dev_limit, "students": {}}
    data = [str(p) for p in (args.data or [data_path("atcoder_train.jsonl"), data_path("mbxp_train.jsonl")])]
    codes: list[str] | None = None
    for spec in args.layers:
        layer_spec, _, width = spec.partition(":")
        cfg = DistillConfig(data=data, layers=[int(x) for x in layer_spec.split(",")], ffn_size=int(width or 0),
                            init=args.init)
        if cfg.ffn_size and codes is None:
            codes = collect_snippets(cfg.data, [], teacher.view, 0, 0, cfg.seed).codes
        t0 = time.time()
        scores = dev_score(start_student(cfg, teacher, codes or []), dev)
        out["students"][spec] = scores
        print(f"{spec:>12}  " + "  ".join(f"{k} {v:.4f}" for k, v in scores.items()) + f"  ({time.time() - t0:.0f} s)",
              flush=True)
    if args.json_out:
        write_text_atomic(args.json_out, json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
