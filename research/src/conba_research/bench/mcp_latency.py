"""Latency of ``conba mcp`` as an agent sees it: a real server process over stdio, driven by the MCP SDK's client.

Measures (wall clock, one client, calls one after another):

* ``start_to_first_answer``: from spawning ``conba mcp -i INDEX SOURCE TARGET`` (the index already up to date:
  a first, untimed start builds it) to the first ``search_code`` answer: imports, model load, warm-up, handshake;
* per tool, the first call and the median of ``--repeats`` calls: ``search_code`` (a source function's code),
  ``find_counterpart`` and ``port_status`` (SOURCE onto TARGET; the first call computes the port map, later ones
  read it from the snapshot's cache), ``clones_of``, ``compare`` (two indexed functions; two snippets), and
  ``index_status``.

    conba bench mcp-latency examples/polyglot/java examples/polyglot/python --index poly-idx
    conba bench mcp-latency ../shared/data/ports_dev/diff-match-patch/java \\
        ../shared/data/ports_dev/diff-match-patch/python --index dmp-idx --repeats 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any


def _params(index: Path, source: Path, target: Path, model: str | None) -> Any:
    from mcp import StdioServerParameters

    args = ["-m", "conba.cli.main", "mcp", "-i", str(index), str(source), str(target)]
    args += ["-m", model] if model else []
    env = {k: os.environ[k] for k in ("PYTHONPATH", "CONBA_CACHE", "CONBA_THREADS", "HF_HOME") if k in os.environ}
    return StdioServerParameters(command=sys.executable, args=args, env={**env, "TOKENIZERS_PARALLELISM": "false"})


def _pick(index: Path, source: Path, target: Path) -> tuple[Any, Any]:
    """A source function with at least 3 lines and a target function (the first of each, in file order)."""
    from conba.index import Index

    src, tgt = os.path.realpath(source), os.path.realpath(target)
    with Index(index, create=False) as idx:
        units = [u for u in idx.units() if u.lines >= 3]
    first = next(u for u in units if u.file.startswith(src))
    second = next(u for u in units if u.file.startswith(tgt))
    return first, second


async def _session(params: Any, calls: list[tuple[str, dict]], repeats: int) -> dict[str, Any]:
    from mcp import Client

    t0 = time.perf_counter()
    out: dict[str, Any] = {}
    async with Client(params, read_timeout_seconds=600) as client:
        result = await client.call_tool(*calls[0])
        out["start_to_first_answer_s"] = round(time.perf_counter() - t0, 3)
        if result.is_error:
            raise SystemExit(f"search_code failed: {result.content[0].text}")
        for name, args in calls:
            times = []
            for _ in range(repeats + 1):
                t = time.perf_counter()
                result = await client.call_tool(name, args)
                times.append(time.perf_counter() - t)
                if result.is_error:
                    raise SystemExit(f"{name} failed: {result.content[0].text}")
            key = name if name not in out else f"{name} ({', '.join(args)})"
            out[key] = {"first_ms": round(1000 * times[0], 1),
                        "median_ms": round(1000 * statistics.median(times[1:] or times), 1),
                        "answer_chars": len(result.content[0].text)}
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="conba bench mcp-latency", description=__doc__.split("\n\n")[0])
    p.add_argument("source", type=Path, help="Source tree (e.g. a Java port's folder).")
    p.add_argument("target", type=Path, help="Target tree (e.g. the Python port's folder).")
    p.add_argument("--index", "-i", type=Path, required=True, help="Index folder (built on the first start).")
    p.add_argument("--model", "-m", default=None, help="Model for a new index (default: the shipped default).")
    p.add_argument("--repeats", type=int, default=5, help="Timed calls per tool after the first (median).")
    p.add_argument("--json", dest="json_out", type=Path, default=None, help="Also write the results here.")
    a = p.parse_args(argv)
    params = _params(a.index, a.source, a.target, a.model)
    t0 = time.perf_counter()
    asyncio.run(_session(params, [("index_status", {})], 0))  # indexes what the index lacks (untimed for the rest)
    build_s = time.perf_counter() - t0
    fn, other = _pick(a.index, a.source, a.target)
    first = {"file": fn.file, "line": fn.start_line}
    calls = [("search_code", {"code": fn.code, "k": 10}),
             ("find_counterpart", {**first, "target_path": str(a.target)}),
             ("port_status", {"source_path": str(a.source), "target_path": str(a.target)}),
             ("clones_of", first),
             ("compare", {"file_a": fn.file, "line_a": fn.start_line, "file_b": other.file,
                          "line_b": other.start_line}),
             ("compare", {"a": fn.code, "b": other.code}),
             ("index_status", {})]
    results = {"source": str(a.source), "target": str(a.target), "first_start_s": round(build_s, 1),
               "query_function": f"{fn.qualname} ({os.path.basename(fn.file)}:{fn.start_line})",
               **asyncio.run(_session(params, calls, a.repeats))}
    print(json.dumps(results, indent=1))
    if a.json_out is not None:
        from conba.utils.io import write_text_atomic

        write_text_atomic(a.json_out, json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
