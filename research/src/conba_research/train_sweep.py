"""Run several ``conba train`` configurations side by side (e.g. on one GPU), then ``conba eval`` each.

A sweep file has one run per line, ``name: conba-train-options`` (``#`` starts a comment); ``{DATA}``
is replaced by ``--data``. Each run trains into ``RUNS/name`` and is then evaluated on every
``--eval`` file; a summary (JSON + markdown table with the exact commands) is written to ``RUNS``.

Example (the GPU sweeps behind docs/BENCHMARKS.md):

    conba experiment train-sweep scripts/sweeps/gpu1.txt --data runs/data --runs runs/runs \\
        --parallel 5 --eval atcoder_dev.jsonl --eval mbxp_dev.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from conba.utils.io import write_text_atomic

CONBA = [sys.executable, "-m", "conba.cli.main"]


def parse_sweep(path: Path, data: str) -> list[tuple[str, list[str]]]:
    runs = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if ":" not in line:
            raise SystemExit(f"{path}:{n}: expected 'name: options'")
        name, opts = line.split(":", 1)
        runs.append((name.strip(), shlex.split(opts.replace("{DATA}", data))))
    return runs


def run_one(name: str, opts: list[str], args: argparse.Namespace) -> dict:
    out = Path(args.runs) / name
    log = open(Path(args.runs) / f"{name}.log", "a")
    t0 = time.time()
    cmd = CONBA + ["train"] + opts + ["-o", str(out), "--no-progress"]
    log.write("$ " + shlex.join(cmd) + "\n")
    log.flush()
    rc = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT)
    result = {"name": name, "train_command": "conba train " + shlex.join(opts) + f" -o runs/{name}",
              "train_rc": rc, "train_seconds": round(time.time() - t0, 1)}
    if (out / "training" / "result.json").exists():
        result.update(json.loads((out / "training" / "result.json").read_text()))
    hist = out / "training" / "history.json"
    if hist.exists():
        result["epochs_run"] = len(json.loads(hist.read_text()).get("epochs", [])) - 1
    if rc == 0:
        for ev in args.eval:
            stem = Path(ev).stem
            js = out / f"eval_{stem}.json"
            ecmd = CONBA + ["eval", str(Path(args.data) / ev), "-m", str(out), "-j", str(js),
                            "--device", args.device, "-b", "64", "--no-progress"] + (["--no-tfidf"] if args.no_tfidf
                                                                                     else [])
            log.write("$ " + shlex.join(ecmd) + "\n")
            log.flush()
            if subprocess.call(ecmd, stdout=log, stderr=subprocess.STDOUT) == 0:
                r = json.loads(js.read_text())
                result[stem] = {"map_at_r": r["retrieval"]["conba"]["mean"]["map_at_r"],
                                "f1": r["classification"].get("f1"), "auc": r["classification"].get("roc_auc"),
                                "snippets_per_second": r.get("snippets_per_second")}
    log.close()
    write_text_atomic(Path(args.runs) / f"{name}.result.json", json.dumps(result, indent=2))
    print(json.dumps(result), flush=True)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sweep", type=Path)
    ap.add_argument("--data", default=os.environ.get("CONBA_DATA"), required="CONBA_DATA" not in os.environ,
                    help="Folder with the JSONL files ({DATA}; default: $CONBA_DATA).")
    ap.add_argument("--runs", default="runs/sweep", help="Output folder (one subfolder per run).")
    ap.add_argument("--parallel", type=int, default=1, help="Runs at the same time.")
    ap.add_argument("--eval", action="append", default=[], help="Dev file name(s) in --data to evaluate on.")
    ap.add_argument("--device", default="auto", help="Device for the evaluation runs.")
    ap.add_argument("--no-tfidf", action="store_true", help="Skip the TF-IDF baseline in evaluations.")
    ap.add_argument("--only", default="", help="Comma-separated run names to run (default: all).")
    args = ap.parse_args()
    runs = parse_sweep(args.sweep, args.data)
    if args.only:
        keep = set(args.only.split(","))
        runs = [r for r in runs if r[0] in keep]
    Path(args.runs).mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 2) // max(1, args.parallel))))
    with ThreadPoolExecutor(max_workers=args.parallel) as pool:
        results = list(pool.map(lambda r: run_one(r[0], r[1], args), runs))
    write_text_atomic(Path(args.runs) / "summary.json", json.dumps(results, indent=2))
    header = " | ".join(f"{Path(e).stem} MAP@R | F1 | AUC" for e in args.eval)
    lines = [f"| run | dev MAP@R (early stop) | best epoch | {header} | command |",
             "|---" * (4 + 3 * len(args.eval)) + "|"]
    for r in results:
        cells = [r["name"], f"{r.get('dev_map_at_r', float('nan')):.3f}", str(r.get("best_epoch", "-"))]
        for e in args.eval:
            m = r.get(Path(e).stem, {})
            cells += [f"{m.get('map_at_r', float('nan')):.3f}", f"{m.get('f1') or float('nan'):.3f}",
                      f"{m.get('auc') or float('nan'):.3f}"]
        cells.append(f"`{r['train_command']}`")
        lines.append("| " + " | ".join(cells) + " |")
    write_text_atomic(Path(args.runs) / "summary.md", "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
