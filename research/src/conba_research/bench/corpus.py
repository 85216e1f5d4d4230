"""The corpus of ``conba bench index-scale --phase build``: grouped JSONL records, Python standard library
files and (``--real``) real source trees, copied to ``OUT/tree`` until about ``--target`` functions.

Every record of the grouped JSONL data becomes a source file with its language's extension; standard
library files and real source files are copied as they are, shuffled with ``--seed``; functions are
counted as ``conba index`` cuts them. The settings are stamped in ``tree/BUILD.json``, so a second
build with the same settings reuses the tree.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
from pathlib import Path

DATA_FILES = ("mbxp_train.jsonl", "mbxp_dev.jsonl", "atcoder_train.jsonl", "atcoder_dev.jsonl")
STDLIB_SKIP_DIRS = {"test", "tests", "idle_test", "site-packages", "dist-packages", "__pycache__"}


def build(args: argparse.Namespace) -> dict:
    from conba.data.location import data_files
    from conba.errors import ConfigError
    from conba.source.extract import extract_units
    from conba.syntax.languages import EXTENSIONS
    from conba.utils.io import write_text_atomic

    if args.data is None:
        try:
            args.data = data_files(DATA_FILES, what="--data folder")[0].parent
        except ConfigError as e:
            raise SystemExit(str(e)) from None
    tree = args.out / "tree"
    settings = {"target": args.target, "stdlib_share": args.stdlib_share, "seed": args.seed,
                "data": str(args.data), "stdlib": args.stdlib}
    if args.real:
        settings.update(real=[str(r) for r in args.real], real_share=args.real_share)
    stamp = tree / "BUILD.json"
    if stamp.exists() and json.loads(stamp.read_text(encoding="utf-8")).get("settings") == settings:
        print(f"tree exists: {tree} (delete it to rebuild)")
        return json.loads(stamp.read_text(encoding="utf-8"))
    if tree.exists():
        shutil.rmtree(tree)
    # runs/ is gitignored by the repository; an (empty) .git folder makes the tree its own root,
    # so the walker reads no .gitignore from above it
    (tree / ".git").mkdir(parents=True)
    ext = {}
    for e, lang in EXTENSIONS.items():
        ext.setdefault(lang, e)
    rng = random.Random(args.seed)

    std_root = Path(args.stdlib)
    std_files = []
    for d, dirs, files in os.walk(std_root):
        dirs[:] = sorted(x for x in dirs if x not in STDLIB_SKIP_DIRS and not x.startswith("."))
        std_files += [Path(d) / f for f in sorted(files) if f.endswith(".py")]
    rng.shuffle(std_files)
    std_target = int(args.target * args.stdlib_share)
    std_funcs = std_count = 0
    for src in std_files:
        if std_funcs >= std_target:
            break
        try:
            text = src.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        dst = tree / "stdlib" / src.relative_to(std_root)
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(text, encoding="utf-8")
        std_funcs += len(extract_units(str(dst), text, "python"))
        std_count += 1

    real_funcs, real_count, real_by_language = _copy_real(args, tree, rng)

    records = []
    for name in DATA_FILES:
        with open(args.data / name, encoding="utf-8") as fh:
            records += [json.loads(line) for line in fh if line.strip()]
    rng.shuffle(records)
    data_funcs = data_count = 0
    per_language: dict[str, int] = {}
    for rec in records:
        if std_funcs + real_funcs + data_funcs >= args.target:
            break
        lang = rec["language"]
        safe = rec["id"].replace("/", "_").replace(os.sep, "_")
        dst = tree / "data" / rec.get("source", "data") / lang / f"{safe}{ext[lang]}"
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(rec["code"], encoding="utf-8")
        n = len(extract_units(str(dst), rec["code"], lang))
        data_funcs += n
        data_count += 1
        per_language[lang] = per_language.get(lang, 0) + n
    per_language["python (stdlib)"] = std_funcs
    for lang, n in real_by_language.items():
        per_language[f"{lang} (real)"] = n
    result = {"settings": settings, "tree": str(tree), "stdlib_files": std_count, "stdlib_functions": std_funcs,
              "real_files": real_count, "real_functions": real_funcs,
              "data_files": data_count, "data_functions": data_funcs, "functions_by_language": per_language}
    write_text_atomic(stamp, json.dumps(result, indent=2) + "\n")  # last: the tree is complete
    print(f"wrote {std_count} stdlib files ({std_funcs} functions), {real_count} files of real code "
          f"({real_funcs} functions) and {data_count} data files "
          f"({data_funcs} functions) to {tree}")
    return result


def _copy_real(args: argparse.Namespace, tree: Path, rng: random.Random) -> tuple[int, int, dict[str, int]]:
    """Copy source files of the ``--real`` folders (taken in turn, files shuffled) to ``tree/real`` until
    ``--real-share`` of the target's functions; returns (functions, files, functions by language)."""
    from conba.source.extract import extract_units
    from conba.syntax.languages import detect_language

    if not args.real:
        return 0, 0, {}
    queues = []
    for root in args.real:
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = sorted(x for x in dirs if x not in STDLIB_SKIP_DIRS and not x.startswith("."))
            files += [Path(d) / n for n in sorted(names)
                      if detect_language(n) and not n.endswith(".min.js") and (Path(d) / n).stat().st_size < 2**18]
        rng.shuffle(files)
        queues.append((Path(root), files))
    goal = int(args.target * args.real_share)
    funcs = count = 0
    by_language: dict[str, int] = {}
    while funcs < goal and any(q for _, q in queues):
        for k, (root, files) in enumerate(queues):
            if not files or funcs >= goal:
                continue
            src = files.pop()
            try:
                text = src.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            lang = detect_language(src.name)
            dst = tree / "real" / f"{k}-{root.name}" / src.relative_to(root)
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_text(text, encoding="utf-8")
            n = len(extract_units(str(dst), text, lang))
            funcs += n
            count += 1
            by_language[lang] = by_language.get(lang, 0) + n
    return funcs, count, by_language
