"""What the input view does to real data: mean characters per snippet raw vs viewed, fallbacks to raw,
helpers / macros dropped, per-language means, and view throughput (snippets per second of wall time
and of CPU time, one process, parsing included; CPU time is what a core of its own would take).

Inputs: grouped JSONL files (language from each record) and folders of source files (whole files,
language from the extension; files without a known extension are skipped). CPU only, no model.

    conba bench view-stats ../shared/data/atcoder_dev.jsonl ../shared/data/mbxp_dev.jsonl \\
        ../shared/data/algorithms_dev --views code,code+docs --repeats 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict
from pathlib import Path


def load(path: Path) -> tuple[list[str], list[str]]:
    from conba.syntax.languages import detect_language

    if path.is_dir():
        codes, langs = [], []
        for file in sorted(p for p in path.rglob("*") if p.is_file()):
            lang = detect_language(file)
            if lang is not None:
                codes.append(file.read_text(encoding="utf-8", errors="replace"))
                langs.append(lang)
        return codes, langs
    from conba.data import load_records

    records = load_records(path)
    return [r.code for r in records], [r.language for r in records]


def measure(codes: list[str], langs: list[str], view: str, repeats: int) -> dict:
    from conba.syntax import apply_views

    wall, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        out, stats = apply_views(codes, langs, view)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    n = max(stats.snippets, 1)
    by_lang: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for code, viewed, lang in zip(codes, out, langs):
        by_lang[lang][0] += 1
        by_lang[lang][1] += len(code)
        by_lang[lang][2] += len(viewed)
    return {"view": view, "snippets": stats.snippets,
            "chars_raw": round(stats.chars_before / n, 1), "chars_view": round(stats.chars_after / n, 1),
            "kept": round(stats.chars_after / max(stats.chars_before, 1), 3),
            "fallback_pct": round(100 * stats.fallbacks / n, 2), "fallback_reasons": stats.fallback_reasons,
            "helpers_dropped": stats.helpers_dropped, "macros_dropped": stats.macros_dropped,
            "snippets_per_s": round(stats.snippets / statistics.median(wall), 1),
            "snippets_per_cpu_s": round(stats.snippets / statistics.median(cpu), 1),
            "by_language": {lang: {"n": v[0], "chars_raw": round(v[1] / v[0]), "chars_view": round(v[2] / v[0])}
                            for lang, v in sorted(by_lang.items())}}


def _errors(code: str, language: str) -> int | None:
    """ERROR / MISSING nodes in the tree-sitter parse (None: not parsed); for Python, 0/1 from compile()."""
    if language == "python":
        import warnings

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compile(code, "<view>", "exec")
            return 0
        except (SyntaxError, ValueError):
            return 1
    from conba.syntax.parse import captures, parse

    parsed = parse(code, language)
    if isinstance(parsed, str):
        return None
    root = parsed.root
    return len(captures(root, "(ERROR) @e (MISSING) @m", parsed.language)) if root.has_error else 0


def check(codes: list[str], langs: list[str], view: str) -> dict:
    """Snippets whose viewed text parses worse than the raw text (Python: compiles no longer)."""
    from conba.syntax import apply_views

    out, _ = apply_views(codes, langs, view)
    worse: dict[str, int] = defaultdict(int)
    for code, viewed, lang in zip(codes, out, langs):
        before = _errors(code, lang)
        if before is not None and viewed != code and (_errors(viewed, lang) or 0) > before:
            worse[lang] += 1
    return {"view": view, "parses_worse": dict(worse)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="+", type=Path, help="grouped JSONL files and/or source folders")
    ap.add_argument("--views", default="code", help="comma-separated views (code, code+docs)")
    ap.add_argument("--repeats", type=int, default=3, help="timed passes; the median is reported")
    ap.add_argument("--markdown", action="store_true", help="also print a markdown table")
    ap.add_argument("--check", action="store_true",
                    help="also count snippets whose view parses worse than the raw text (Python: compile())")
    args = ap.parse_args()

    rows = []
    for path in args.inputs:
        codes, langs = load(path)
        for view in args.views.split(","):
            row = {"data": path.name, **measure(codes, langs, view, args.repeats)}
            rows.append(row)
            print(json.dumps(row), flush=True)
            if args.check:
                print(json.dumps({"data": path.name, **check(codes, langs, view)}), flush=True)
    if args.markdown:
        print("\n| data | view | snippets | mean chars raw | mean chars view | kept | fallback % "
              "| helpers dropped | macros dropped | snippets/s (wall) | snippets/CPU-s |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['data']} | {r['view']} | {r['snippets']} | {r['chars_raw']:.0f} | {r['chars_view']:.0f} "
                  f"| {100 * r['kept']:.0f}% | {r['fallback_pct']:.2f} | {r['helpers_dropped']} "
                  f"| {r['macros_dropped']} | {r['snippets_per_s']:.0f} | {r['snippets_per_cpu_s']:.0f} |")


if __name__ == "__main__":
    main()
