"""`conba mcp` as a real subprocess over stdio, driven by the MCP SDK's client: every tool with a tiny model, a
path outside the roots refused without being opened (a FIFO that would block), `--watch` seen by the next call,
and the real answers of the shipped default model on examples/polyglot. Slow: each start imports torch."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="conba mcp needs the MCP SDK: pip install 'conba[mcp]'")

from helpers import mcp_calls  # noqa: E402

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def _params(*args: str, cwd: Path):
    from mcp import StdioServerParameters

    env = {"PYTHONPATH": str(ROOT / "src"), "TOKENIZERS_PARALLELISM": "false",
           "CONBA_CACHE": os.environ.get("CONBA_CACHE", str(cwd / "cache"))}
    return StdioServerParameters(command=sys.executable, args=["-m", "conba.cli.main", "mcp", *args], env=env,
                                 cwd=str(cwd))


@pytest.fixture(scope="module")
def project(tmp_path_factory, tiny_model):
    from conba.index import Index

    tmp = tmp_path_factory.mktemp("mcp-proc")
    proj = tmp / "proj"
    shutil.copytree(ROOT / "examples" / "polyglot", proj)
    with Index(tmp / "idx", model=tiny_model) as idx:
        idx.add([proj])
    return tmp, proj


def test_the_server_lists_and_answers_every_tool_over_stdio(project):
    tmp, proj = project
    fifo = tmp / "outside.py"
    os.mkfifo(fifo)  # opening it to read would block: a refused path must never be opened
    calls = [("tools/list", {}), ("index_status", {}),
             ("search_code", {"code": "def gcd(a, b):\n    return a\n", "k": 2, "language": "java"}),
             ("find_counterpart", {"file": "proj/java/MathUtils.java", "function": "gcd", "target_language": "python"}),
             ("port_status", {"source_path": "proj/java", "target_path": "proj/python", "only": "all"}),
             ("clones_of", {"file": "proj/python/mathlib.py:5", "threshold": "0.5"}),
             ("compare", {"a": "def f(x):\n    return x + 1\n", "b": "int f(int x) { return x + 1; }",
                          "language_b": "java"}),
             ("search_code", {"file": str(fifo)}), ("search_code", {"code": "x", "k": 0})]
    t0 = time.perf_counter()
    results = mcp_calls(_params("-i", "idx", "proj", cwd=tmp), calls, timeout=60)
    assert time.perf_counter() - t0 < 120
    for error, text in results[1:-2]:
        assert not error, text
    tools = {t["name"] for t in json.loads(results[0][1])}
    assert tools == {"search_code", "find_counterpart", "port_status", "clones_of", "compare", "index_status"}
    status, search, counterpart, port, clones, cmp = [json.loads(t) for _, t in results[1:-2]]
    assert status["functions"] > 0 and status["roots"] == ["proj"]
    assert [h["lang"] for h in search["hits"]] == ["java", "java"] and search["hits"][0]["at"].startswith("proj/")
    assert counterpart["function"]["name"] == "MathUtils.gcd"
    assert port["total"] == port["summary"]["functions"] and clones["function"]["name"] == "gcd"
    assert isinstance(cmp["clone"], bool)
    (outside_error, outside), (k_error, k_text) = results[-2:]
    assert outside_error and "outside the indexed roots" in outside and "\n" not in outside
    assert k_error and "k must be between 1 and 100, got 0" in k_text


def test_watch_in_the_server_shows_a_new_file_at_the_next_calls(project):
    import asyncio

    from mcp import Client

    tmp, proj = project
    new = proj / "js" / "added_by_test.js"
    code = "function addedByTest(xs) {\n  return xs.map(x => x * 11).filter(x => x > 5);\n}\n"

    async def run() -> tuple[float, dict]:
        async with Client(_params("-i", "idx", "proj", "--watch", cwd=tmp), read_timeout_seconds=60) as client:
            await client.call_tool("index_status", {})
            new.write_text(code, encoding="utf-8")
            t0 = time.perf_counter()
            while True:
                result = await client.call_tool("search_code", {"code": code, "k": 1})
                top = json.loads(result.content[0].text)["hits"][0]["name"]
                if top == "addedByTest" or time.perf_counter() - t0 > 10:
                    break
                await asyncio.sleep(0.1)
            status = json.loads((await client.call_tool("index_status", {})).content[0].text)
            return time.perf_counter() - t0, {"top": top, **status}

    try:
        seconds, seen = asyncio.run(run())
    finally:
        new.unlink()
    assert seen["top"] == "addedByTest" and seconds < 3, (seconds, seen)
    assert seen["watching"]["updates"] >= 1 and seen["stale_files"] == 0


def test_the_shipped_default_answers_what_is_ported_and_what_is_not(tmp_path):
    proj = tmp_path / "proj"
    shutil.copytree(ROOT / "examples" / "polyglot", proj)
    calls = [("find_counterpart", {"file": "proj/java/MathUtils.java", "function": "gcd", "target_language": "python"}),
             ("port_status", {"source_path": "proj/java", "target_path": "proj/python", "keep_trivial": True}),
             ("compare", {"file_a": "proj/java/MathUtils.java", "function_a": "gcd", "file_b": "proj/python/mathlib.py",
                          "function_b": "gcd"}),
             ("clones_of", {"file": "proj/java/Strings.java", "function": "reverse"}),
             ("search_code", {"code": "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n",
                              "language": "go", "k": 1}), ("index_status", {})]
    results = mcp_calls(_params("-i", "idx", "proj", cwd=tmp_path), calls, timeout=300)
    for error, text in results:
        assert not error, text
    counterpart, port, cmp, clones, search, status = [json.loads(t) for _, t in results]
    assert status["model"] == "default" and status["stale_files"] == 0
    assert abs(status["threshold"] - port["summary"]["threshold"]) < 1e-3
    assert status["threshold"] == counterpart["threshold"]
    assert counterpart["status"] == "matched" and counterpart["counterpart"]["name"] == "gcd"
    assert counterpart["counterpart"]["at"].startswith("proj/python/mathlib.py:") and counterpart["lines"]
    missing = {f["name"] for f in port["functions"]}
    assert {"MathUtils.average", "Search.maxIndex"} <= missing  # the example leaves them unported
    assert not missing & {"MathUtils.gcd", "MathUtils.isPrime", "Search.binarySearch", "Strings.reverse"}
    assert cmp["clone"] and cmp["score"] >= cmp["threshold"]
    assert "reverse_string" in {c["name"] for c in clones["clones"]}
    assert search["hits"][0]["name"] == "Gcd"
