"""`conba mcp`'s tools in process (the SDK's client on an in-process MCPServer), tiny model, examples/polyglot:
every tool's answer shape, one-line tool errors for bad arguments, paths outside the roots refused unopened,
the token budget, paging, and a re-indexed tree seen by the next call. The subprocess and real-model tests
are in test_mcp_process.py (slow)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="conba mcp needs the MCP SDK: pip install 'conba[mcp]'")

from helpers import mcp_calls  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TOOLS = {"search_code", "find_counterpart", "port_status", "clones_of", "compare", "index_status"}


@pytest.fixture(scope="module")
def served(tmp_path_factory, tiny_model):
    """(state factory, project copy, index folder, the index's units) over a copy of examples/polyglot."""
    from conba.index import Index

    tmp = tmp_path_factory.mktemp("mcp")
    proj, folder = tmp / "proj", tmp / "idx"
    shutil.copytree(ROOT / "examples" / "polyglot", proj)
    with Index(folder, model=tiny_model) as idx:
        idx.add([proj])
        model, engine, units = idx.model, idx.engine, idx.units()
    return model, engine, proj, folder, units


def _server(served, roots=True):
    from conba.mcp.server import build_server
    from conba.mcp.state import ServerState

    model, engine, proj, folder, _ = served
    return build_server(ServerState(folder, model, engine, [str(proj.resolve())] if roots else None))


def _ok(result):
    error, text = result
    assert not error, text
    return json.loads(text)


def test_the_six_tools_are_listed_with_descriptions_and_typed_parameters(served):
    (_, listed), = mcp_calls(_server(served), [("tools/list", {})])
    tools = {t["name"]: t for t in json.loads(listed)}
    assert set(tools) == TOOLS
    for t in tools.values():
        assert len(t["description"]) > 80 and "max_tokens" in t["description"] or t["name"] == "index_status"
    props = tools["search_code"]["inputSchema"]["properties"]
    assert props["k"]["type"] == "integer" and "description" in props["k"]
    assert tools["find_counterpart"]["inputSchema"]["required"] == ["file"]


def test_every_tool_answers_on_polyglot(served):
    _, _, proj, _, units = served
    java, python = proj / "java", proj / "python"
    gcd = str(java / "MathUtils.java")
    calls = [("index_status", {}), ("search_code", {"code": "def gcd(a, b):\n    return a\n", "k": 3}),
             ("search_code", {"file": gcd, "function": "gcd", "k": 4, "language": "python"}),
             ("search_code", {"file": str(python / "mathlib.py"), "k": 2}),
             ("find_counterpart", {"file": gcd, "function": "gcd", "target_language": "python"}),
             ("find_counterpart", {"file": gcd + ":8", "target_path": str(python)}),
             ("port_status", {"source_path": str(java), "target_path": str(python)}),
             ("port_status", {"source_language": "java", "target_language": "go", "only": "all"}),
             ("clones_of", {"file": gcd, "function": "MathUtils.gcd", "threshold": "0.5"}),
             ("clones_of", {"file": gcd, "files": True, "threshold": "0.5"}),
             ("compare", {"a": "def f(x):\n    return x * 2\n", "b": "int f(int x) { return 2 * x; }",
                          "language_a": "python", "language_b": "java"}),
             ("compare", {"file_a": gcd, "function_a": "gcd", "file_b": str(python / "mathlib.py"),
                          "function_b": "gcd"})]
    status, snippet, by_fn, by_file, cp_lang, cp_path, port, port_go, clones, file_clones, cmp, cmp_idx = \
        [_ok(r) for r in mcp_calls(_server(served), calls)]
    assert status["functions"] == len(units) and status["languages"]["java"] == sum(u.language == "java" for u in units)
    assert status["stale_files"] == 0 and status["watching"] is False
    assert 0 < len(snippet["hits"]) <= 3 and all({"at", "name", "lang", "score"} <= set(h) for h in snippet["hits"])
    assert by_fn["query"]["name"] == "MathUtils.gcd" and all(h["lang"] == "python" for h in by_fn["hits"])
    assert by_file["query"]["lang"] == "python" and len(by_file["hits"]) == 2
    for answer in (cp_lang, cp_path):
        assert answer["function"]["name"] == "MathUtils.gcd" and answer["status"] in ("matched", "ambiguous", "missing")
        best = answer.get("counterpart") or answer["best"]
        assert best["lang"] == "python" and best["at"].split(":")[0].endswith("mathlib.py") or "textutil" in best["at"]
        assert ("lines" in answer) == (answer["status"] != "missing")
    java_fns = {u.qualname for u in units if u.language == "java"}
    summary = port["summary"]
    assert summary["functions"] + summary["skipped_trivial"] == len(java_fns)
    assert port["total"] == summary["missing"] and all(f["status"] == "missing" for f in port["functions"])
    assert {f["name"] for f in port_go["functions"]} <= java_fns and port_go["total"] == port_go["summary"]["functions"]
    assert clones["function"]["name"] == "MathUtils.gcd" and isinstance(clones["clones"], list)
    assert file_clones["file"].endswith("MathUtils.java")
    assert set(cmp) >= {"score", "threshold", "clone", "lines"} and cmp["scored"] == "encoded"
    assert cmp_idx["scored"] == "index" and cmp_idx["a"]["name"] == "MathUtils.gcd"


BAD = [
    ("search_code", {"code": "x = 1", "k": 0}, "k must be between 1 and 100, got 0"),
    ("search_code", {"code": "x = 1", "k": 10**6}, "k must be between 1 and 100"),
    ("search_code", {"code": "x = 1", "language": "klingon"}, "unknown language 'klingon'"),
    ("search_code", {}, "give either code"),
    ("search_code", {"code": "x = 1", "max_tokens": 10}, "max_tokens must be between"),
    ("search_code", {"code": "x = 1", "k": "many"}, "search_code"),  # the schema's validation, still one line
    ("find_counterpart", {"file": "{proj}/java/Nope.java", "function": "gcd", "target_language": "python"},
     "not a file of the index"),
    ("find_counterpart", {"file": "{proj}/java/MathUtils.java", "function": "nope", "target_language": "python"},
     "no function 'nope'"),
    ("find_counterpart", {"file": "{proj}/java/MathUtils.java", "function": "gcd"}, "give target_language"),
    ("find_counterpart", {"file": "{proj}/java/MathUtils.java", "line": 1, "target_language": "python"},
     "no indexed function there"),
    ("port_status", {"source_language": "java", "target_language": "python", "only": "nope"}, "only must be"),
    ("port_status", {"source_language": "java"}, "give the two sides"),
    ("port_status", {"source_language": "java", "target_language": "rust"}, "no functions in the target"),
    ("port_status", {"source_language": "java", "target_language": "python", "limit": 0}, "limit must be"),
    ("clones_of", {"file": "{proj}/java/MathUtils.java", "function": "gcd", "threshold": "high"}, "threshold"),
    ("compare", {"a": "x = 1"}, "give either b"),
    ("compare", {"a": " ", "b": "y = 2"}, "the snippet is empty"),
]


@pytest.mark.parametrize("tool,args,message", BAD, ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(BAD)])
def test_bad_arguments_are_one_line_tool_errors(served, tool, args, message):
    proj = served[2]
    args = {k: v.format(proj=proj) if isinstance(v, str) else v for k, v in args.items()}
    (error, text), = mcp_calls(_server(served), [(tool, args)])
    assert error and message in text, text
    assert "\n" not in text and "Traceback" not in text


def test_a_path_outside_the_roots_is_refused_and_never_opened(served, tmp_path):
    proj = served[2]
    outside = tmp_path / "outside"
    outside.mkdir()
    sentinel = outside / "secret.py"
    sentinel.write_text("def secret():\n    return 42\n", encoding="utf-8")
    link = proj / "python" / "link_to_secret.py"
    link.symlink_to(sentinel)  # inside a root by name, outside once resolved
    opened: list[str] = []

    def audit(event, args):
        if event == "open" and args and isinstance(args[0], (str, bytes, Path)) and "secret" in str(args[0]):
            opened.append(str(args[0]))

    sys.addaudithook(audit)  # audit hooks stay for the process: this one only records
    try:
        calls = [("search_code", {"file": str(sentinel)}), ("search_code", {"file": str(link)}),
                 ("search_code", {"file": f"{proj}/../{outside.name}/secret.py"}),
                 ("clones_of", {"file": str(sentinel), "files": True}),
                 ("find_counterpart", {"file": str(sentinel), "function": "secret", "target_language": "java"}),
                 ("port_status", {"source_path": str(outside), "target_language": "java"}),
                 ("compare", {"file_a": str(sentinel), "line_a": 1, "b": "x"})]
        results = mcp_calls(_server(served), calls)
    finally:
        link.unlink()
    for error, text in results:
        assert error and "outside the indexed roots" in text, text
    assert opened == []


def test_without_paths_the_roots_are_the_folders_of_the_indexed_files(served, tmp_path):
    proj = served[2]
    (error, text), (error2, text2) = mcp_calls(_server(served, roots=False), [
        ("index_status", {}), ("search_code", {"file": str(tmp_path / "x.py")})])
    assert not error and sorted(json.loads(text)["roots"]) == sorted(
        str(p.resolve()) for p in proj.iterdir() if p.is_dir())
    assert error2 and "outside the indexed roots" in text2


def test_the_answer_fits_the_budget_and_says_what_was_cut(served):
    (error, text), = mcp_calls(_server(served), [("search_code", {"code": "def f(x):\n    return x\n", "k": 30,
                                                                  "code_lines": 40, "max_tokens": 200})])
    body = json.loads(text)
    assert not error and len(text) <= 200 * 4 and "left out" in body["cut"] and 1 <= len(body["hits"]) < 30


def test_port_status_pages(served):
    args = {"source_language": "java", "target_language": "python", "only": "all", "limit": 2}
    first, second = [_ok(r) for r in mcp_calls(_server(served), [
        ("port_status", args), ("port_status", {**args, "offset": 2})])]
    assert first["total"] > 2 and first["next_offset"] == 2 and len(first["functions"]) == 2
    assert second["offset"] == 2 and {f["at"] for f in first["functions"]}.isdisjoint(
        f["at"] for f in second["functions"])


def test_a_reindexed_tree_is_seen_by_the_next_call(served, tiny_model):
    """Another writer (`conba index`) updates the index between two calls: the second call answers from it."""
    from conba.index import Index

    _, _, proj, folder, _ = served
    new = proj / "python" / "extra_mcp.py"
    code = "def brand_new_helper(xs):\n    return [x * 3 for x in xs if x > 3]\n"

    def add_and_search():
        new.write_text(code, encoding="utf-8")
        with Index(folder, model=tiny_model) as idx:
            idx.add([proj])

    server = _server(served)
    try:
        import asyncio

        from mcp import Client

        async def run():
            async with Client(server) as client:
                before = json.loads((await client.call_tool("index_status", {})).content[0].text)
                await asyncio.to_thread(add_and_search)
                hits = json.loads((await client.call_tool("search_code", {"code": code, "k": 1})).content[0].text)
                after = json.loads((await client.call_tool("index_status", {})).content[0].text)
                return before, hits, after

        before, hits, after = asyncio.run(run())
    finally:
        new.unlink()
        with Index(folder, model=tiny_model) as idx:
            idx.add([proj])
    assert hits["hits"][0]["name"] == "brand_new_helper"
    assert after["functions"] == before["functions"] + 1 and after["generation"] > before["generation"]


def test_drift_since_a_revision_and_stale_files(served, tiny_model, tmp_path):
    """port_status with since lists the Java functions changed since the commit; index_status counts the indexed
    files edited on disk since the last update."""
    import subprocess

    from conba.index import Index

    _, _, proj, folder, _ = served
    java = proj / "java" / "MathUtils.java"
    original = java.read_text(encoding="utf-8")
    git = ["git", "-C", str(proj), "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "sync"], check=True)
    try:
        assert "b = a % b;" in original
        java.write_text(original.replace("b = a % b;", "b = (a % b) + 0;"), encoding="utf-8")
        (stale,), = [mcp_calls(_server(served), [("index_status", {})])]
        with Index(folder, model=tiny_model) as idx:
            idx.add([proj])
        drift, = mcp_calls(_server(served), [("port_status", {"source_path": str(proj / "java"),
                                                               "target_path": str(proj / "python"), "since": "HEAD"})])
    finally:
        java.write_text(original, encoding="utf-8")
        shutil.rmtree(proj / ".git")
        with Index(folder, model=tiny_model) as idx:
            idx.add([proj])
    assert json.loads(stale[1])["stale_files"] == 1
    body = _ok(drift)
    assert body["drift"]["since"] == "HEAD" and [c["function"]["name"] for c in body["changes"]] == ["MathUtils.gcd"]
    assert body["changes"][0]["change"] == "changed"


def test_the_mcp_command_refuses_bad_input_in_one_line(tmp_path):
    from click.testing import CliRunner

    from conba.cli.main import cli

    run = CliRunner().invoke
    watch = run(cli, ["mcp", "--watch", "-i", str(tmp_path / "idx")])
    assert watch.exit_code == 2 and "--watch needs PATHS" in watch.output
    missing = run(cli, ["mcp", "-i", str(tmp_path / "none")])
    assert missing.exit_code == 1 and "Traceback" not in missing.output and str(tmp_path / "none") in missing.output
    no_path = run(cli, ["mcp", str(tmp_path / "nowhere"), "-i", str(tmp_path / "idx")])
    assert no_path.exit_code == 1 and "nowhere: no such file" in no_path.output and not (tmp_path / "idx").exists()
