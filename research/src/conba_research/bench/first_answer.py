"""Time to first answer: cold ``conba`` commands side by side with ``python -c "import torch"``.

Every command runs in a fresh process (a cold start: imports, model, index; the OS file cache is warm, as it
is for a user running the second command of a session), ``--runs`` times, interleaved round by round so that
a busy machine slows every command alike; the minimum (and median) wall time of each is reported, with the
exact command. Before timing, the index is built when missing and one search runs, so that the model's ONNX
query encoder is exported (docs/speed.md); ``search (torch)`` is the same search with
``CONBA_QUERY_ENGINE=torch``, the path every query took before. ``serve`` is the time from the process start
until ``/health`` answers (any status), and until it says ``ok``.

``--agreement N`` also checks that the answers did not change: N of the index's functions (seeded sample,
each with its language) as queries, top 10 through the ONNX query encoder and through torch: the share with
identical ids in the same order and the largest score difference.

    conba bench first-answer examples/polyglot -i poly-idx --runs 5 -j docs/speed/first-answer.json
    conba bench first-answer ../shared/data/ports_dev -i ports-idx --runs 0 --agreement 400
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

SNIPPET = "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n"


def _conba(*args: str) -> list[str]:
    return [sys.executable, "-m", "conba.cli.main", *args]


def commands(source: Path, index: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    """name -> (argv, extra environment) of every timed command."""
    files = sorted(p for p in source.rglob("*") if p.is_file() and p.suffix in (".py", ".go", ".java", ".js", ".cpp"))
    a, b = (str(files[0]), str(files[-1])) if files else ("", "")
    folders = sorted(p for p in source.iterdir() if p.is_dir())
    map_args = [str(folders[0]), str(folders[-1])] if len(folders) > 1 else [str(source), str(source)]
    return {
        "python -c 'import torch'": ([sys.executable, "-c", "import torch"], {}),
        "search": (_conba("search", "--code", SNIPPET, "-i", str(index)), {}),
        "search (torch)": (_conba("search", "--code", SNIPPET, "-i", str(index)), {"CONBA_QUERY_ENGINE": "torch"}),
        "index (up to date)": (_conba("index", str(source), "-i", str(index)), {}),
        "compare": (_conba("compare", a, b), {}),
        "map (up to date)": (_conba("map", *map_args, "-i", str(index)), {}),
    }


def _shown(argv: list[str]) -> str:
    """The command as a person types it (``conba ...``, ``python -c ...``)."""
    import shlex

    if argv[1:3] == ["-m", "conba.cli.main"]:
        return "conba " + shlex.join(argv[3:])
    return "python " + shlex.join(argv[1:])


def run_once(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    out = subprocess.run(argv, env={**os.environ, **env}, capture_output=True, text=True, timeout=900)
    took = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({out.returncode}): {out.stderr.strip()[-500:]}")
    return took


def serve_once(index: Path) -> tuple[float, float]:
    """(seconds until /health answers, seconds until it says ok) for one ``conba serve`` process."""
    import socket

    import httpx

    with socket.socket() as sock:  # a free port (bench sits below serve: no import of conba.serve)
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    t0 = time.perf_counter()
    proc = subprocess.Popen(_conba("serve", "-i", str(index), "--port", str(port), "--log-level", "warning"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    first = ok = None
    try:
        while ok is None and time.perf_counter() - t0 < 300:
            if proc.poll() is not None:
                raise SystemExit(f"conba serve exited ({proc.returncode})")
            try:
                status = httpx.get(f"http://127.0.0.1:{port}/health", timeout=10).json().get("status")
            except httpx.TransportError:
                time.sleep(0.05)
                continue
            now = time.perf_counter() - t0
            first = first if first is not None else now
            ok = now if status == "ok" else None
            time.sleep(0.05)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return first or float("nan"), ok or float("nan")


def measure(source: Path, index: Path, runs: int, serve: bool) -> dict:
    if not (index / "index.sqlite").exists():
        run_once(_conba("index", str(source), "-i", str(index)), {})
    run_once(_conba("search", "--code", SNIPPET, "-i", str(index)), {})  # exports the query encoder once
    cmds = commands(source, index)
    times: dict[str, list[float]] = {name: [] for name in cmds}
    if serve:
        times["serve: /health answers"], times["serve: /health ok"] = [], []
    for r in range(runs):
        for name, (argv, env) in cmds.items():
            times[name].append(run_once(argv, env))
        if serve:
            first, ok = serve_once(index)
            times["serve: /health answers"].append(first)
            times["serve: /health ok"].append(ok)
        print(f"round {r + 1}/{runs} done", file=sys.stderr)
    shown = {name: _shown(argv) for name, (argv, _) in cmds.items()}
    shown.update({k: f"conba serve -i {index}" for k in times if k.startswith("serve")})
    rows = {name: {"min_s": round(min(t), 3), "median_s": round(statistics.median(t), 3),
                   "runs": [round(x, 3) for x in t], "command": shown[name],
                   "env": cmds[name][1] if name in cmds else {}} for name, t in times.items() if t}
    return {"runs": runs, "source": str(source), "index": str(index), "machine": {
        "cpus": os.cpu_count(), "load_average_1m": round(os.getloadavg()[0], 2), "python": platform.python_version()},
        "results": rows}


def agreement(index: Path, n: int, seed: int = 0, k: int = 10) -> dict:
    """Top ``k`` of ``n`` sampled indexed functions as queries, ONNX query encoder vs torch (in this process)."""
    import random

    from conba.engine.query_encoder import ENGINE_ENV, QueryEncoder
    from conba.index import Index
    from conba.index.model import query as query_model

    with Index(index, create=False) as idx:
        units = idx.units()
        picked = random.Random(seed).sample(units, min(n, len(units)))
        if not isinstance(query_model.query_model(idx), QueryEncoder):
            raise SystemExit(f"{index}: its model has no ONNX query encoder (docs/speed.md)")
        fast = [idx.search(u.code, k=k, query_language=u.language) for u in picked]
    old = os.environ.get(ENGINE_ENV)
    os.environ[ENGINE_ENV] = "torch"
    try:
        with Index(index, create=False) as idx:
            slow = [idx.search(u.code, k=k, query_language=u.language) for u in picked]
    finally:
        if old is None:
            os.environ.pop(ENGINE_ENV)
        else:
            os.environ[ENGINE_ENV] = old
    same = sum([h.unit.id for h in f] == [h.unit.id for h in t] for f, t in zip(fast, slow))
    diff = max((abs(a.score - b.score) for f, t in zip(fast, slow) for a, b in zip(f, t)), default=0.0)
    return {"queries": len(picked), "functions": len(units), "k": k, "seed": seed,
            "identical_top_k": same, "max_score_difference": float(f"{diff:.3g}")}


def table(result: dict) -> str:
    lines = [f"| command | min of {result['runs']} (s) | median (s) |", "|---|---|---|"]
    for name, row in result["results"].items():
        lines.append(f"| {name} | {row['min_s']:.2f} | {row['median_s']:.2f} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source", type=Path, help="the code to index (e.g. examples/polyglot)")
    ap.add_argument("-i", "--index", type=Path, required=True, help="index folder (built when missing)")
    ap.add_argument("--runs", type=int, default=5, help="timed runs of every command (min and median reported)")
    ap.add_argument("--no-serve", action="store_true", help="do not time conba serve")
    ap.add_argument("--agreement", type=int, default=0, metavar="N",
                    help="also compare the top 10 of N sampled functions as queries, ONNX vs torch")
    ap.add_argument("-j", "--json-out", type=Path, default=None, help="also write the results to this JSON file")
    args = ap.parse_args()
    if args.runs < 0 or args.agreement < 0:
        ap.error("--runs and --agreement must be >= 0")
    if not args.source.is_dir():
        ap.error(f"{args.source}: not a folder")
    result = measure(args.source, args.index, args.runs, not args.no_serve)
    if args.agreement:
        result["agreement"] = agreement(args.index, args.agreement)
        print(f"agreement: {json.dumps(result['agreement'])}")
    if args.runs:
        print(table(result))
    for name, row in result["results"].items():
        print(f"  {name}: {row['command']}" + (f" ({' '.join(f'{k}={v}' for k, v in row['env'].items())})"
                                              if row["env"] else ""))
    if args.json_out is not None:
        from conba.utils.io import write_json_atomic

        write_json_atomic(args.json_out, result)


if __name__ == "__main__":
    main()
