"""The training files of the CPU recipe (docs/BENCHMARKS.md, "CPU training on real code").

From the functions mined from real code (``conba experiment mine-real-code``: groups of a function's body, its
doc as a comment and a renamed copy) and the curated training files it writes into ``-o DIR``:

* ``mined_train.jsonl``: ``--per-language`` groups of every language (seeded);
* ``mined_keep.jsonl``: the body of ``--keep-per-language`` *other* groups per language, the real code on
  which ``conba train --keep`` keeps the untuned similarities;
* ``mbxp_train_renamed.jsonl``: mbxp_train with a renamed copy of every record (``conba experiment augment-data``);
* ``atcoder_train_cap1.jsonl``: atcoder_train with one submission per (task, language);
* ``distill_mix.jsonl`` (``conba distill``'s data; ``--distill-contest N``): every mined function, one
  record each: its body as ``conba index`` cut it, under its doc as the miner cleaned it (rewritten as a
  comment of the language; a Python docstring moves above the ``def``), and N records
  sampled (seeded) from atcoder_train + mbxp_train, so the student also keeps up on contest code.

    conba experiment cpu-training-data runs/mined/mined.jsonl --data ../shared/data -o runs/train-data
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


def mined_units(path: Path) -> list[str]:
    """One record per mined function, ``ID/unit``: its cleaned doc comment (``ID/doc``, when it has one) above
    its body (``ID/body``)."""
    parts: dict[str, dict[str, dict]] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            parts.setdefault(r["group"], {})[r["id"].rsplit("/", 1)[1]] = r
    out = []
    for group, p in parts.items():
        if "body" not in p:
            continue
        body = p["body"]
        code = (p["doc"]["code"] if "doc" in p else "") + body["code"]
        out.append(json.dumps({"id": f"{group}/unit", "group": group, "language": body["language"],
                               "source": body["source"], "code": code}) + "\n")
    return out


def contest_sample(data: Path, n: int, seed: int) -> list[str]:
    """``n`` records drawn (seeded) from atcoder_train + mbxp_train, as JSON lines."""
    from conba.data import load_records

    records = load_records(data / "atcoder_train.jsonl") + load_records(data / "mbxp_train.jsonl")
    by_id = {r.id: r for r in records}
    ids = random.Random(seed).sample([r.id for r in records], min(n, len(records)))
    return [json.dumps({"id": i, "group": by_id[i].group, "language": by_id[i].language, "source": by_id[i].source,
                        "code": by_id[i].code}) + "\n" for i in ids]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mined", type=Path)
    ap.add_argument("--data", type=Path, help="folder of the curated training files (default: $CONBA_DATA)")
    ap.add_argument("-o", "--output", type=Path, required=True, metavar="DIR")
    ap.add_argument("--per-language", type=int, default=200)
    ap.add_argument("--keep-per-language", type=int, default=300)
    ap.add_argument("--distill-contest", type=int, default=4000, metavar="N",
                    help="contest records sampled into distill_mix.jsonl beside the mined functions")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    from conba.data import cap_records, load_records
    from conba.data.location import data_path

    args.data = args.data or data_path(what="--data folder")

    args.output.mkdir(parents=True, exist_ok=True)
    train, keep = split_mined(args.mined, args.per_language, args.keep_per_language, args.seed)
    write_text_atomic(args.output / "mined_train.jsonl", "".join(train))
    write_text_atomic(args.output / "mined_keep.jsonl", "".join(keep))
    atcoder = cap_records(load_records(args.data / "atcoder_train.jsonl"), 1, args.seed)
    write_text_atomic(args.output / "atcoder_train_cap1.jsonl", "".join(
        json.dumps({"id": r.id, "group": r.group, "language": r.language, "source": r.source, "code": r.code}) + "\n"
        for r in atcoder))
    subprocess.run([sys.executable, "-m", "conba_research.builders.augment_data",
                    str(args.data / "mbxp_train.jsonl"), "-o", str(args.output / "mbxp_train_renamed.jsonl"),
                    "--seed", str(args.seed)], check=True)
    units, contest = mined_units(args.mined), contest_sample(args.data, args.distill_contest, args.seed)
    write_text_atomic(args.output / "distill_mix.jsonl", "".join(units + contest))
    print(json.dumps({"mined_train": len(train), "mined_keep": len(keep), "atcoder_train_cap1": len(atcoder),
                      "distill_mix": len(units) + len(contest), "output": str(args.output)}))


if __name__ == "__main__":
    main()
