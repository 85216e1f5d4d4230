"""End-to-end time and peak memory of ``conba plagiarism`` on large classes.

Lays out N submissions (one file each, ``s00000.<ext>``) drawn with ``random.Random(seed)`` from a grouped
JSONL (atcoder_train: Java, C#, C, Python and C++ solutions of many problems), runs ``conba plagiarism FOLDER
-f jsonl -o OUT`` (``--top``) as a child process once per N, and prints the wall time, the child's peak
resident memory (``getrusage``) and the pairs reported. CPU only; no model.

    conba bench plagiarism-scale ../shared/data/atcoder_train.jsonl --n 500 --n 5000 [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

from conba_research.bench.plagiarism_eval import EXT


def run_one(records: list[dict], n: int, seed: int, top: int | None, tmp: str) -> dict:
    chosen = random.Random(seed).sample(records, n)
    folder = os.path.join(tmp, f"class-{n}")
    os.makedirs(folder)
    for i, r in enumerate(chosen):
        with open(os.path.join(folder, f"s{i:05d}.{EXT.get(r['language'], 'txt')}"), "w", encoding="utf-8") as fh:
            fh.write(r["code"])
    out = os.path.join(tmp, f"class-{n}.jsonl")
    cmd = [sys.executable, "-m", "conba.cli.main", "plagiarism", folder, "-f", "jsonl", "-o", out]
    if top is not None:
        cmd += ["--top", str(top)]
    # a fresh child per run: RUSAGE_CHILDREN's peak is the largest child so far, so runs go smallest first
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"conba plagiarism failed on {n} submissions: {proc.stderr.strip()[-500:]}")
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with open(out, encoding="utf-8") as fh:
        pairs = sum(1 for line in fh if line.startswith('{"a"'))
    return {"submissions": n, "seconds": round(seconds, 1), "peak_rss_mib": round(peak_kib / 1024, 1),
            "pairs": pairs, "top": top, "stderr": proc.stderr.strip().splitlines()[-1:]}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="conba bench plagiarism-scale", description=__doc__.split("\n\n")[0])
    ap.add_argument("data", help="grouped JSONL of solutions (id, group, language, code)")
    ap.add_argument("--n", type=int, action="append", help="class sizes (repeatable; default 500)")
    ap.add_argument("--top", type=int, default=None, help="--top of the command (default: its own)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None, help="write the measurements here")
    a = ap.parse_args(argv)
    with open(a.data, encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sorted(a.n or [500]):
            row = run_one(records, n, a.seed, a.top, tmp)
            rows.append(row)
            print(f"{n} submissions: {row['seconds']} s, peak {row['peak_rss_mib']} MiB, {row['pairs']} pairs "
                  f"(cpus {os.cpu_count()})", flush=True)
    if a.json:
        from conba.utils.io import write_json_atomic

        write_json_atomic(a.json, rows)


if __name__ == "__main__":
    main()
