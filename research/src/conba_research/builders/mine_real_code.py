"""Mine unlabelled real code into grouped JSONL: function <-> its doc comment <-> a renamed copy.

    conba experiment mine-real-code ROOT [ROOT ...] -o runs/mined/mined.jsonl \
        [--manifest runs/mined/manifest.json] [--languages python,go] [--per-package 150] \
        [--per-language 1500] [--max-chars 4000] [--min-body-lines 3] [--seed 0]

A ROOT is a folder of package sources, ``PATH`` or ``LABEL=PATH``; a package is ``LABEL/<first folder
under the root>`` (``LABEL`` defaults to the folder's name). See :mod:`conba.train.mining` for what is
kept. Writes the JSONL atomically, a manifest (packages per language with counts, exclusions hit,
the command), and prints a per-language table.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from tqdm import tqdm

from conba.data.records import LANGUAGES
from conba.errors import ConbaError
from conba.train.mining import Miner, mine_roots
from conba.utils.io import write_text_atomic


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("roots", nargs="+", help="source folders: PATH or LABEL=PATH")
    ap.add_argument("-o", "--output", required=True, type=Path)
    ap.add_argument("--manifest", type=Path, help="default: manifest.json beside the output")
    ap.add_argument("--languages", default=",".join(LANGUAGES), help="comma-separated (default: all)")
    ap.add_argument("--per-package", type=int, default=150, help="functions kept per package")
    ap.add_argument("--per-language", type=int, default=1500, help="functions kept per language")
    ap.add_argument("--max-chars", type=int, default=4000, help="longest function kept (characters)")
    ap.add_argument("--min-body-lines", type=int, default=3, help="fewest code lines in a body")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    languages = [lang.strip() for lang in args.languages.split(",") if lang.strip()]
    unknown = sorted(set(languages) - set(LANGUAGES))
    if unknown:
        ap.error(f"unknown language(s) {', '.join(unknown)} (known: {', '.join(LANGUAGES)})")
    miner = Miner(per_package=args.per_package, per_language=args.per_language, max_chars=args.max_chars,
                  min_body_lines=args.min_body_lines, seed=args.seed)
    bar = tqdm(total=args.per_language * len(languages), unit="fn", desc="mining", file=sys.stderr)
    try:
        rows, stats = mine_roots(args.roots, languages, miner, progress=bar.update)
    except ConbaError as exc:
        bar.close()
        print(f"error: {exc}", file=sys.stderr)
        return 2
    bar.close()
    if not rows:
        print("error: no function with a meaningful doc was found", file=sys.stderr)
        return 1
    write_text_atomic(args.output, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    manifest = {
        "command": "PYTHONPATH=src python " + shlex.join(["conba experiment mine-real-code", *sys.argv[1:]]),
        "output": str(args.output), "records": len(rows), "groups": sum(stats.kept.values()),
        "per_language": dict(sorted(stats.kept.items())),
        "packages": {lang: dict(c.most_common()) for lang, c in sorted(stats.packages.items())},
        "exclusions_hit": dict(stats.excluded), "files_seen": stats.files_seen, "files_read": stats.files_read,
        "functions_seen": stats.functions, "rejected": dict(stats.rejected), "files_skipped": dict(stats.skipped),
        "renamed_member": dict(stats.renamed),
        "options": {k: v for k, v in vars(args).items() if k not in ("roots", "output", "manifest")},
        "roots": args.roots,
    }
    manifest_path = args.manifest or args.output.with_name("manifest.json")
    write_text_atomic(manifest_path, json.dumps(manifest, indent=2, default=str) + "\n")
    print(f"{'language':<12}{'groups':>8}{'records':>9}{'packages':>10}")
    per_records: dict[str, int] = {}
    for r in rows:
        per_records[r["language"]] = per_records.get(r["language"], 0) + 1
    for lang in sorted(stats.kept):
        print(f"{lang:<12}{stats.kept[lang]:>8}{per_records.get(lang, 0):>9}{len(stats.packages[lang]):>10}")
    print(f"{'total':<12}{sum(stats.kept.values()):>8}{len(rows):>9}")
    print(f"files: {stats.files_seen} found, {stats.files_read} read; functions seen: {stats.functions}; "
          f"rejected: {dict(stats.rejected)}; renamed member: {dict(stats.renamed)}")
    print(f"exclusions hit: {dict(stats.excluded) or 'none'}; skipped files: {dict(stats.skipped) or 'none'}")
    print(f"wrote {args.output} and {manifest_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
