"""Augment grouped JSONL training data with renamed copies (the real-code issue's augmentation lever).

    conba experiment augment-data ../shared/data/mbxp_train.jsonl -o runs/mbxp_train_aug.jsonl \
        [--rename 1.0] [--copies 1] [--limit-groups N] [--seed 0]

Every record is written as it is, followed by ``--copies`` copies in the same group whose declared
identifiers are consistently renamed (``conba.augment``, kind ``synonym`` at level
``--rename``: a fraction of the renameable names, each at every occurrence, checked to still parse).
A contrastive loss then treats the copy as a positive of the original, which teaches the model that a
function keeps its meaning under renaming. Copies that the renamer could not change are not written.
The output is written atomically; the input files are never modified. Prints what it did as JSON.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

from conba.augment import perturb
from conba.data import load_records
from conba.utils.io import write_text_atomic


def augment(paths: list[str], rename: float, copies: int, limit_groups: int, seed: int) -> tuple[list[dict], Counter]:
    records = [r for p in paths for r in load_records(p)]
    if limit_groups:
        groups = sorted({r.group for r in records})
        keep = set(random.Random(seed).sample(groups, min(limit_groups, len(groups))))
        records = [r for r in records if r.group in keep]
    out: list[dict] = []
    status: Counter = Counter()
    for i, r in enumerate(records):
        out.append({"id": r.id, "group": r.group, "language": r.language, "code": r.code})
        for c in range(copies):
            res = perturb(r.code, r.language, "synonym", rename, seed=seed + c)
            status[res.status] += 1
            if res.status == "ok":
                out.append({"id": f"{r.id}#renamed{c}", "group": r.group, "language": r.language, "code": res.code})
        if (i + 1) % 2000 == 0:
            print(f"{i + 1}/{len(records)} records", file=sys.stderr, flush=True)
    return out, status


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="grouped JSONL files (id, group, language, code)")
    ap.add_argument("-o", "--output", required=True, type=Path)
    ap.add_argument("--rename", type=float, default=1.0, help="fraction of renameable names renamed (0..1)")
    ap.add_argument("--copies", type=int, default=1, help="renamed copies per record")
    ap.add_argument("--limit-groups", type=int, default=0, help="keep only N random groups (0 = all)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not 0 < args.rename <= 1 or args.copies < 1:
        ap.error("--rename must be in (0, 1] and --copies >= 1")
    rows, status = augment(args.files, args.rename, args.copies, args.limit_groups, args.seed)
    write_text_atomic(args.output, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(json.dumps({"inputs": args.files, "output": str(args.output), "records_written": len(rows),
                      "renamed_copies": status.get("ok", 0), "renamer_status": dict(status)}))


if __name__ == "__main__":
    main()
