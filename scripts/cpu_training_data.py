"""The training files of the CPU recipe (docs/BENCHMARKS.md, "CPU training on real code").

From the functions mined from real code (``scripts/mine_real_code.py``: groups of a function's body, its
doc as a comment and a renamed copy) and the curated training files it writes into ``-o DIR``:

* ``mined_train.jsonl``: ``--per-language`` groups of every language (seeded);
* ``mined_keep.jsonl``: the body of ``--keep-per-language`` *other* groups per language, the real code on
  which ``conba train --keep`` keeps the untuned similarities;
* ``mbxp_train_renamed.jsonl``: mbxp_train with a renamed copy of every record (``scripts/augment_data.py``);
* ``atcoder_train_cap1.jsonl``: atcoder_train with one submission per (task, language).

    python scripts/cpu_training_data.py /work/mined/mined.jsonl --data ../shared/data -o /work/train-data
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from conba.utils.io import write_text_atomic


def split_mined(path: Path, per_language: int, keep_per_language: int, seed: int) -> tuple[list[str], list[str]]:
    by_lang: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            by_lang[r["language"]][r["group"]].append(line)
    rng = random.Random(seed)
    train, keep = [], []
    for lang in sorted(by_lang):
        names = sorted(by_lang[lang])
        rng.shuffle(names)
        for g in names[:per_language]:
            train += by_lang[lang][g]
        for g in names[per_language:per_language + keep_per_language]:
            keep += [ln for ln in by_lang[lang][g] if json.loads(ln)["id"].endswith("/body")][:1]
    return train, keep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mined", type=Path)
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("-o", "--output", type=Path, required=True, metavar="DIR")
    ap.add_argument("--per-language", type=int, default=200)
    ap.add_argument("--keep-per-language", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    from conba.data import cap_records, load_records

    args.output.mkdir(parents=True, exist_ok=True)
    train, keep = split_mined(args.mined, args.per_language, args.keep_per_language, args.seed)
    write_text_atomic(args.output / "mined_train.jsonl", "".join(train))
    write_text_atomic(args.output / "mined_keep.jsonl", "".join(keep))
    atcoder = cap_records(load_records(args.data / "atcoder_train.jsonl"), 1, args.seed)
    write_text_atomic(args.output / "atcoder_train_cap1.jsonl", "".join(
        json.dumps({"id": r.id, "group": r.group, "language": r.language, "source": r.source, "code": r.code}) + "\n"
        for r in atcoder))
    subprocess.run([sys.executable, str(Path(__file__).with_name("augment_data.py")),
                    str(args.data / "mbxp_train.jsonl"), "-o", str(args.output / "mbxp_train_renamed.jsonl"),
                    "--seed", str(args.seed)], check=True)
    print(json.dumps({"mined_train": len(train), "mined_keep": len(keep), "atcoder_train_cap1": len(atcoder),
                      "output": str(args.output)}))


if __name__ == "__main__":
    main()
